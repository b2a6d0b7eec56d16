package gateway

import (
	"errors"
	"io"
	"strings"
	"testing"
	"testing/iotest"
)

// TestTheSSEReaderReadsEventsAsTheDecoderDid holds sseReader to the framing
// the relay relied on: data lines joined, other fields and comments
// skipped, CRLF line ends, events that need more than one read or more
// than the buffer, and an event cut off by the stream's end dropped.
func TestTheSSEReaderReadsEventsAsTheDecoderDid(t *testing.T) {
	long := strings.Repeat("x", 40<<10) // past the reader's 16 KiB buffer
	for _, c := range []struct {
		name, stream string
		want         []string
	}{
		{"one event", "data: {\"a\":1}\n\n", []string{"{\"a\":1}\n"}},
		{"two events and [DONE]", "data: a\n\ndata: b\n\ndata: [DONE]\n\n", []string{"a\n", "b\n", "[DONE]\n"}},
		{"CRLF line ends", "data: a\r\n\r\ndata: b\r\n\r\n", []string{"a\n", "b\n"}},
		{"data lines joined", "data: a\ndata: b\n\n", []string{"a\nb\n"}},
		{"no space after the colon", "data:a\n\n", []string{"a\n"}},
		{"comments and other fields skipped", ": keep-alive\n\nevent: message\nid: 7\nretry: 10\ndata: a\n\n", []string{"a\n"}},
		{"blank lines between events", "\n\n\ndata: a\n\n\n\ndata: b\n\n", []string{"a\n", "b\n"}},
		{"a line past the buffer", "data: " + long + "\n\ndata: b\n\n", []string{long + "\n", "b\n"}},
		{"an event the stream cuts off is dropped", "data: a\n\ndata: b", []string{"a\n"}},
		{"an event with no blank line after it is dropped", "data: a\n\ndata: b\n", []string{"a\n"}},
		{"empty", "", nil},
	} {
		for _, oneByte := range []bool{false, true} {
			name := c.name
			var r io.Reader = strings.NewReader(c.stream)
			if oneByte {
				name += " (a byte a read)"
				r = iotest.OneByteReader(r)
			}
			t.Run(name, func(t *testing.T) {
				s := newSSEReader(r)
				var got []string
				for s.next() {
					got = append(got, string(s.data))
				}
				if s.Err() != nil {
					t.Fatalf("Err() = %v at the stream's end", s.Err())
				}
				if strings.Join(got, "|") != strings.Join(c.want, "|") || len(got) != len(c.want) {
					t.Errorf("events %q, want %q", got, c.want)
				}
			})
		}
	}
}

func TestTheSSEReaderReportsWhatCutTheStream(t *testing.T) {
	cut := errors.New("cut")
	s := newSSEReader(io.MultiReader(strings.NewReader("data: a\n\ndata: b"), iotest.ErrReader(cut)))
	if !s.next() || string(s.data) != "a\n" {
		t.Fatalf("first event %q", s.data)
	}
	if s.next() {
		t.Fatalf("an event after the cut: %q", s.data)
	}
	if !errors.Is(s.Err(), cut) {
		t.Errorf("Err() = %v, want the read's error", s.Err())
	}
}
