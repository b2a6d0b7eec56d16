package gateway

import (
	"bytes"
	"iter"
)

// readCommonChunk reads the facts of a chunk in the common shape, a
// content, reasoning or finish delta, with one pass over its bytes: the
// jsontext decoder's scan was the relay's largest cost per chunk. It reports
// false, having read nothing for certain, on anything else it meets (tool
// calls, usage, a provider, a name escaped or in another case, broken
// JSON), which chunkReader then reads: a chunk the scan accepts reads as
// chunkReader would read it (TestTheChunkReaderReadsWhatADecodeReads holds
// both to a full decode).
func readCommonChunk(data []byte, f *chunkFacts) bool {
	*f = chunkFacts{ToolCalls: f.ToolCalls[:0], NoChoices: true}
	s := byteScan{b: data}
	ok := true
	for name := range s.members(&ok) {
		switch {
		case string(name) == "choices":
			ok = s.choices(f)
		case string(name) == "usage":
			ok = s.null()
		case foldsTo(name, "choices", "usage", "provider"):
			return false
		default:
			ok = s.skip(0)
		}
	}
	s.space()
	return ok && s.i == len(s.b)
}

// choices reads a chunk's choices: their finish reasons and deltas.
func (s *byteScan) choices(f *chunkFacts) bool {
	ok := true
	for range s.elements(&ok) {
		f.NoChoices = false
		for name := range s.members(&ok) {
			switch {
			case string(name) == "finish_reason":
				var reason []byte
				reason, ok = s.text()
				f.Token = f.Token || reason != nil
			case string(name) == "delta":
				ok = s.delta(f)
			case foldsTo(name, "finish_reason", "delta"):
				return false
			default:
				ok = s.skip(0)
			}
		}
	}
	return ok
}

// delta reads a choice's delta: content and reasoning (tool calls are the
// decoder's to read).
func (s *byteScan) delta(f *chunkFacts) bool {
	ok := true
	for name := range s.members(&ok) {
		switch {
		case string(name) == "content" || string(name) == "reasoning" || string(name) == "reasoning_content":
			var text []byte
			text, ok = s.text()
			f.Token = f.Token || len(text) > len(`""`)
		case string(name) == "tool_calls":
			ok = s.null()
		case foldsTo(name, "content", "reasoning", "reasoning_content", "tool_calls"):
			return false
		default:
			ok = s.skip(0)
		}
	}
	return ok
}

// foldsTo reports a name that is one of names in any case.
func foldsTo(name []byte, names ...string) bool {
	for _, n := range names {
		if is(name, n) {
			return true
		}
	}
	return false
}

// byteScan walks JSON text byte by byte, checking its syntax as it goes.
// Its methods report false on anything they do not accept; the caller then
// gives up on the scan.
type byteScan struct {
	b []byte
	i int
}

// maxScanDepth is how deep skip goes before giving up (the decoder then
// reads the chunk).
const maxScanDepth = 32

func (s *byteScan) space() {
	for s.i < len(s.b) {
		switch s.b[s.i] {
		case ' ', '\t', '\n', '\r':
			s.i++
		default:
			return
		}
	}
}

// peek is the next byte after white space (0 at the end).
func (s *byteScan) peek() byte {
	s.space()
	if s.i < len(s.b) {
		return s.b[s.i]
	}
	return 0
}

// members yields the names of the members of the object at s.i (a null in
// its place has none), each after its colon, the loop's body reading the
// value; it stops at the object's end, or once *ok is false, set by the
// body or by a read of its own. A name with an escape in it is not
// accepted.
func (s *byteScan) members(ok *bool) iter.Seq[[]byte] {
	return func(yield func([]byte) bool) {
		for in := s.open('{', '}', ok); in && *ok; in = s.more('}', ok) {
			name, named := s.name()
			if !named {
				*ok = false
				return
			}
			if !yield(name) || !*ok {
				return
			}
		}
	}
}

// elements yields once for each element of the array at s.i (a null in
// its place has none), the loop's body reading it; it stops at the array's
// end, or once *ok is false.
func (s *byteScan) elements(ok *bool) iter.Seq[int] {
	return func(yield func(int) bool) {
		i := 0
		for in := s.open('[', ']', ok); in && *ok; in = s.more(']', ok) {
			if !yield(i) || !*ok {
				return
			}
			i++
		}
	}
}

// open reads the start of an object or an array (opening and closing are
// its brackets), reporting whether it has a member or element to read; a
// null in its place has none. Anything else sets *ok false.
func (s *byteScan) open(opening, closing byte, ok *bool) bool {
	switch s.peek() {
	case 'n':
		*ok = s.null()
		return false
	case opening:
		s.i++
		if s.peek() == closing {
			s.i++
			return false
		}
		return true
	}
	*ok = false
	return false
}

// more reads what follows a member or an element: a comma (another
// follows: true) or the closing bracket; anything else sets *ok false.
func (s *byteScan) more(closing byte, ok *bool) bool {
	switch s.peek() {
	case ',':
		s.i++
		return true
	case closing:
		s.i++
		return false
	}
	*ok = false
	return false
}

// name reads a member's name and its colon. A name with an escape in it
// is not accepted.
func (s *byteScan) name() ([]byte, bool) {
	if s.peek() != '"' {
		return nil, false
	}
	raw, ok := s.str()
	if !ok || bytes.IndexByte(raw, '\\') >= 0 || s.peek() != ':' {
		return nil, false
	}
	s.i++
	return raw[1 : len(raw)-1], true
}

// text reads a string, returned quoted, or null (nil).
func (s *byteScan) text() ([]byte, bool) {
	switch s.peek() {
	case 'n':
		return nil, s.null()
	case '"':
		return s.str()
	}
	return nil, false
}

func (s *byteScan) null() bool { return s.literal("null") }

func (s *byteScan) literal(word string) bool {
	s.space()
	if !bytes.HasPrefix(s.b[s.i:], []byte(word)) {
		return false
	}
	s.i += len(word)
	return true
}

// str reads a string at s.i, returning it quoted. Bytes that are not UTF-8
// pass, as the decoder is told to let them.
func (s *byteScan) str() ([]byte, bool) {
	start := s.i
	s.i++
	for s.i < len(s.b) {
		c := s.b[s.i]
		if plainInString[c] {
			s.i++
			continue
		}
		switch {
		case c == '"':
			s.i++
			return s.b[start:s.i], true
		case c < 0x20:
			return nil, false
		case c == '\\':
			if s.i+1 >= len(s.b) {
				return nil, false
			}
			switch s.b[s.i+1] {
			case '"', '\\', '/', 'b', 'f', 'n', 'r', 't':
				s.i += 2
			case 'u':
				// Any \uXXXX: a lone surrogate is the decoder's to judge.
				return nil, false
			default:
				return nil, false
			}
		default:
			s.i++
		}
	}
	return nil, false
}

// plainInString are the bytes a string holds as they are: not a quote, a
// backslash or a control character.
var plainInString = func() (plain [256]bool) {
	for c := range plain {
		plain[c] = c >= 0x20 && c != '"' && c != '\\'
	}
	return plain
}()

// number reads a number by JSON's grammar.
func (s *byteScan) number() bool {
	b, i := s.b, s.i
	digits := func() int {
		n := 0
		for i < len(b) && b[i] >= '0' && b[i] <= '9' {
			i++
			n++
		}
		return n
	}
	if i < len(b) && b[i] == '-' {
		i++
	}
	switch {
	case i < len(b) && b[i] == '0':
		i++
	case digits() == 0:
		return false
	}
	if i < len(b) && b[i] == '.' {
		i++
		if digits() == 0 {
			return false
		}
	}
	if i < len(b) && (b[i] == 'e' || b[i] == 'E') {
		i++
		if i < len(b) && (b[i] == '+' || b[i] == '-') {
			i++
		}
		if digits() == 0 {
			return false
		}
	}
	s.i = i
	return true
}

// skip passes over any value.
func (s *byteScan) skip(depth int) bool {
	if depth > maxScanDepth {
		return false
	}
	ok := true
	switch c := s.peek(); {
	case c == '{':
		for range s.members(&ok) {
			ok = s.skip(depth + 1)
		}
		return ok
	case c == '[':
		for range s.elements(&ok) {
			ok = s.skip(depth + 1)
		}
		return ok
	case c == '"':
		_, ok := s.str()
		return ok
	case c == 't':
		return s.literal("true")
	case c == 'f':
		return s.literal("false")
	case c == 'n':
		return s.null()
	case c == '-' || (c >= '0' && c <= '9'):
		return s.number()
	}
	return false
}
