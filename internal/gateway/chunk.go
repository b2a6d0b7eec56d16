package gateway

import (
	"bytes"
	"errors"
	"io"
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
	rd   bytes.Reader
	dec  *jsontext.Decoder
	name []byte // an escaped name, unquoted
}

func newChunkReader() *chunkReader {
	r := &chunkReader{}
	r.dec = jsontext.NewDecoder(&r.rd)
	return r
}

var errNotAChunk = errors.New("not a chat chunk")

// read fills f from data, reusing f's slices. Written as loops over the
// decoder rather than with callbacks, which cost an allocation a level.
func (r *chunkReader) read(data []byte, f *chunkFacts) error {
	if readCommonChunk(data, f) {
		return nil
	}
	*f = chunkFacts{ToolCalls: f.ToolCalls[:0], NoChoices: true}
	r.rd.Reset(data)
	r.dec.Reset(&r.rd, jsontext.AllowDuplicateNames(true), jsontext.AllowInvalidUTF8(true))
	in, err := r.open('{')
	for in && err == nil {
		var name []byte
		if name, in, err = r.member(); !in || err != nil {
			break
		}
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
	in, err := r.open('[')
	for in && err == nil {
		if in, err = r.element(); !in || err != nil {
			break
		}
		f.NoChoices = false
		if in, err = r.open('{'); !in {
			in = err == nil // a null choice: on to the next
			continue
		}
		for in && err == nil {
			var name []byte
			if name, in, err = r.member(); !in || err != nil {
				break
			}
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
		in = err == nil
	}
	return err
}

// delta reads a choice's delta: its content, reasoning and tool calls.
func (r *chunkReader) delta(f *chunkFacts) error {
	in, err := r.open('{')
	for in && err == nil {
		var name []byte
		if name, in, err = r.member(); !in || err != nil {
			break
		}
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
	in, err := r.open('[')
	for in && err == nil {
		if in, err = r.element(); !in || err != nil {
			break
		}
		f.Token = true
		var piece toolFragment
		in, err = r.open('{')
		for in && err == nil {
			var name []byte
			if name, in, err = r.member(); !in || err != nil {
				break
			}
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
		in = err == nil
	}
	return err
}

// arguments reads a tool call's function object for its arguments.
func (r *chunkReader) arguments(args *string) error {
	in, err := r.open('{')
	for in && err == nil {
		var name []byte
		if name, in, err = r.member(); !in || err != nil {
			break
		}
		if !is(name, "arguments") {
			err = r.dec.SkipValue()
			continue
		}
		var text jsontext.Value
		if text, err = r.text(); err == nil && text != nil {
			var unquoted []byte
			unquoted, err = jsontext.AppendUnquote(nil, text)
			*args = string(unquoted)
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

// open reads the start of an object or an array (kind '{' or '['),
// reporting false for a null in its place; any other kind is not a chunk.
func (r *chunkReader) open(kind jsontext.Kind) (bool, error) {
	switch r.dec.PeekKind() {
	case 'n':
		return false, r.dec.SkipValue()
	case kind:
		_, err := r.dec.ReadToken()
		return err == nil, err
	}
	return false, errNotAChunk
}

// member reads the name of the open object's next member, unquoted, or
// its end (reporting false). The name is valid until the next read.
func (r *chunkReader) member() ([]byte, bool, error) {
	if r.dec.PeekKind() != '"' {
		_, err := r.dec.ReadToken() // '}', or the error
		return nil, false, err
	}
	raw, err := r.dec.ReadValue()
	if err != nil {
		return nil, false, err
	}
	if bytes.IndexByte(raw, '\\') < 0 {
		return raw[1 : len(raw)-1], true, nil
	}
	name, err := jsontext.AppendUnquote(r.name[:0], raw) // an escaped name
	r.name = name
	return name, err == nil, err
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

// element reports whether the open array has another element, reading its
// end when not.
func (r *chunkReader) element() (bool, error) {
	if k := r.dec.PeekKind(); k != ']' && k != 0 {
		return true, nil
	}
	_, err := r.dec.ReadToken() // ']', or the error
	return false, err
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
