package gateway

import (
	"bytes"
	"errors"
	"io"
	"iter"
	"strconv"
	"unicode"
	"unicode/utf8"

	jsonv2 "github.com/go-json-experiment/json"
	"github.com/go-json-experiment/json/jsontext"
)

// chunkFacts is what the relay reads of one stream chunk: whether it carries
// a token, the tool-call fragments it brings, its usage, and whether it
// names a provider already. The rest of the chunk is passed on unread.
type chunkFacts struct {
	// Token: some choice carries content, reasoning, a tool call or a
	// finish reason, or the chunk carries usage.
	Token bool
	// NoChoices: the chunk's choices are absent, null or empty (a usage
	// chunk's shape).
	NoChoices bool
	Usage     *usageJSON
	Provider  bool
	ToolCalls []toolFragment
}

// toolFragment is one streamed piece of a tool call's arguments.
type toolFragment struct {
	Index     int
	Arguments string
}

// chunkReader reads chunkFacts token by token with one decoder kept for the
// whole stream: a chunk arrives a few dozen times a second per stream, and
// a decode into nested structs cost twice the scan, most of it for members
// the relay never looks at. Member names match as the decode matched them
// (any case, dashes and underscores ignored: is); a member of the wrong
// type makes the chunk "not a chat chunk", which the relay passes on as it
// came.
type chunkReader struct {
	rd      bytes.Reader
	dec     *jsontext.Decoder
	escaped []byte // an escaped name, unquoted
}

func newChunkReader() *chunkReader {
	r := &chunkReader{}
	r.dec = jsontext.NewDecoder(&r.rd)
	return r
}

var errNotAChunk = errors.New("not a chat chunk")

// read fills f from data, reusing f's slices.
func (r *chunkReader) read(data []byte, f *chunkFacts) error {
	if readCommonChunk(data, f) {
		return nil
	}
	*f = chunkFacts{ToolCalls: f.ToolCalls[:0], NoChoices: true}
	r.rd.Reset(data)
	r.dec.Reset(&r.rd, jsontext.AllowDuplicateNames(true), jsontext.AllowInvalidUTF8(true))
	var err error
	for name := range r.members(&err) {
		switch {
		case is(name, "choices"):
			err = r.choices(f)
		case is(name, "usage"):
			err = r.usage(f)
		case is(name, "provider"):
			f.Provider = true
			err = r.dec.SkipValue()
		default:
			err = r.dec.SkipValue()
		}
	}
	if err != nil {
		return err
	}
	if _, err := r.dec.ReadToken(); err != io.EOF {
		return errNotAChunk // something after the object
	}
	return nil
}

func (r *chunkReader) choices(f *chunkFacts) error {
	var err error
	for range r.elements(&err) {
		f.NoChoices = false
		for name := range r.members(&err) {
			switch {
			case is(name, "finish_reason"):
				var reason jsontext.Value
				reason, err = r.text()
				f.Token = f.Token || reason != nil
			case is(name, "delta"):
				err = r.delta(f)
			default:
				err = r.dec.SkipValue()
			}
		}
	}
	return err
}

// delta reads a choice's delta: its content, reasoning and tool calls.
func (r *chunkReader) delta(f *chunkFacts) error {
	var err error
	for name := range r.members(&err) {
		switch {
		case is(name, "content"), is(name, "reasoning"), is(name, "reasoning_content"):
			var text jsontext.Value
			text, err = r.text()
			f.Token = f.Token || len(text) > len(`""`)
		case is(name, "tool_calls"):
			err = r.toolCalls(f)
		default:
			err = r.dec.SkipValue()
		}
	}
	return err
}

func (r *chunkReader) toolCalls(f *chunkFacts) error {
	var err error
	for range r.elements(&err) {
		f.Token = true
		var piece toolFragment
		for name := range r.members(&err) {
			switch {
			case is(name, "index"):
				err = r.integer(&piece.Index)
			case is(name, "function"):
				err = r.arguments(&piece.Arguments)
			default:
				err = r.dec.SkipValue()
			}
		}
		f.ToolCalls = append(f.ToolCalls, piece)
	}
	return err
}

// arguments reads a tool call's function object for its arguments.
func (r *chunkReader) arguments(args *string) error {
	var err error
	for name := range r.members(&err) {
		if !is(name, "arguments") {
			err = r.dec.SkipValue()
			continue
		}
		var text jsontext.Value
		if text, err = r.text(); err == nil && text != nil {
			unquoted, invalid := jsontext.AppendUnquote(nil, text)
			*args = string(unquoted)
			if invalid != nil {
				// Invalid UTF-8 (the string's syntax was read already),
				// which AppendUnquote refuses: unquoted as the decode
				// does (lenientChunk), the bad bytes as U+FFFD.
				err = jsonv2.Unmarshal(text, args, lenientChunk)
			}
		}
	}
	return err
}

// usage reads the chunk's usage (null: none) as the decode does.
func (r *chunkReader) usage(f *chunkFacts) error {
	if r.dec.PeekKind() == 'n' {
		f.Usage = nil
		return r.dec.SkipValue()
	}
	if f.Usage == nil {
		f.Usage = new(usageJSON)
	}
	f.Token = true
	return jsonv2.UnmarshalDecode(r.dec, f.Usage, lenientChunk)
}

// members yields the names of the members of the object at the decoder
// (a null in its place has none), unquoted and valid until the next read;
// the loop's body reads each value. It stops at the object's end, or once
// *err is set, by the body or by a read of its own.
func (r *chunkReader) members(err *error) iter.Seq[[]byte] {
	return func(yield func([]byte) bool) {
		if *err != nil || !r.open('{', err) {
			return
		}
		for *err == nil {
			if r.dec.PeekKind() != '"' {
				_, *err = r.dec.ReadToken() // '}', or the error
				return
			}
			name, e := r.name()
			if e != nil {
				*err = e
				return
			}
			if !yield(name) {
				return
			}
		}
	}
}

// elements yields once for each element of the array at the decoder (a
// null in its place has none), the loop's body reading it; it stops at the
// array's end, or once *err is set.
func (r *chunkReader) elements(err *error) iter.Seq[int] {
	return func(yield func(int) bool) {
		if *err != nil || !r.open('[', err) {
			return
		}
		for i := 0; *err == nil; i++ {
			if k := r.dec.PeekKind(); k == ']' || k == 0 {
				_, *err = r.dec.ReadToken() // ']', or the error
				return
			}
			if !yield(i) {
				return
			}
		}
	}
}

// open reads the start of an object or an array (kind '{' or '['),
// reporting false for a null in its place; any other kind is not a chunk.
func (r *chunkReader) open(kind jsontext.Kind, err *error) bool {
	switch r.dec.PeekKind() {
	case 'n':
		*err = r.dec.SkipValue()
		return false
	case kind:
		_, *err = r.dec.ReadToken()
		return *err == nil
	}
	*err = errNotAChunk
	return false
}

// name reads a member's name, unquoted: a slice of the decoder's buffer,
// or of r.escaped for an escaped one.
func (r *chunkReader) name() ([]byte, error) {
	raw, err := r.dec.ReadValue()
	if err != nil {
		return nil, err
	}
	if bytes.IndexByte(raw, '\\') < 0 {
		return raw[1 : len(raw)-1], nil
	}
	r.escaped, err = jsontext.AppendUnquote(r.escaped[:0], raw)
	return r.escaped, err
}

// is matches a member's name as the decode the relay used before matched
// it (go-json-experiment's case-insensitive names): in any case, with
// dashes and underscores ignored. want is lower-case ASCII.
func is(name []byte, want string) bool {
	j := 0
	for i := 0; i < len(name); {
		r, n := rune(name[i]), 1
		if r >= utf8.RuneSelf {
			r, n = utf8.DecodeRune(name[i:])
			r = unicode.ToUpper(unicode.ToLower(r)) // as the decode folds: "ſ" is "s"
		}
		i += n
		if r == '_' || r == '-' {
			continue
		}
		for j < len(want) && (want[j] == '_' || want[j] == '-') {
			j++
		}
		if j == len(want) || unicode.ToUpper(r) != unicode.ToUpper(rune(want[j])) {
			return false
		}
		j++
	}
	for j < len(want) && (want[j] == '_' || want[j] == '-') {
		j++
	}
	return j == len(want)
}

// text reads a string as it came, quoted (nil for null).
func (r *chunkReader) text() (jsontext.Value, error) {
	switch r.dec.PeekKind() {
	case 'n':
		return nil, r.dec.SkipValue()
	case '"':
		return r.dec.ReadValue()
	}
	return nil, errNotAChunk
}

// integer reads a whole number or null into n.
func (r *chunkReader) integer(n *int) error {
	switch r.dec.PeekKind() {
	case 'n':
		return r.dec.SkipValue()
	case '0':
		raw, err := r.dec.ReadValue()
		if err != nil {
			return err
		}
		v, err := strconv.Atoi(string(raw))
		if err != nil {
			return errNotAChunk
		}
		*n = v
		return nil
	}
	return errNotAChunk
}
