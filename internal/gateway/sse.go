package gateway

import (
	"bufio"
	"bytes"
	"errors"
	"io"
	"sync"
)

// sseReader reads a carrier's server-sent events one at a time, keeping
// only each event's data (the relay looks at nothing else). Written here
// rather than through the OpenAI client's ssestream decoder, which the
// relay used before: that one copies every event into a fresh buffer and
// splits lines with a Scanner, a tenth of the relay's cost per chunk; this
// one reuses one buffer for the stream. It reads the format as the decoder
// did: lines end in "\n" or "\r\n", a blank line ends an event, "data:"
// lines are joined with "\n", other fields and ":" comments are skipped,
// and an event the stream ends in the middle of is dropped.
type sseReader struct {
	br   *bufio.Reader
	data []byte // the current event's data, valid until the next call
	line []byte // a line longer than br's buffer, gathered
	err  error
}

func newSSEReader(r io.Reader) *sseReader {
	return &sseReader{br: bufio.NewReaderSize(r, sseBuffer)}
}

// sseBuffer is the reader's buffer: a few chunks' worth (a longer line is
// gathered in sseReader.line).
const sseBuffer = 4 << 10

// streamReaders are a stream's two readers, kept between streams: their
// buffers were most of what a stream allocated.
type streamReaders struct {
	events *sseReader
	chunks *chunkReader
}

var streamReaderPool = sync.Pool{New: func() any {
	return &streamReaders{events: newSSEReader(nil), chunks: newChunkReader()}
}}

// getStreamReaders gives readers for a stream read from body; put them
// back with putStreamReaders once the stream is done with.
func getStreamReaders(body io.Reader) *streamReaders {
	r := streamReaderPool.Get().(*streamReaders)
	r.events.br.Reset(body)
	r.events.err = nil
	return r
}

func putStreamReaders(r *streamReaders) {
	r.events.br.Reset(nil)
	if cap(r.events.line) > sseBuffer || cap(r.events.data) > sseBuffer {
		r.events.line, r.events.data = nil, nil // not kept: one long event
	}
	r.chunks.rd.Reset(nil)
	streamReaderPool.Put(r)
}

// next reads the next event with data, reporting false at the stream's end
// or on an error (then Err says which).
func (s *sseReader) next() bool {
	s.data = s.data[:0]
	have := false
	for s.err == nil {
		line, err := s.br.ReadSlice('\n')
		if errors.Is(err, bufio.ErrBufferFull) {
			s.line = append(s.line[:0], line...)
			for errors.Is(err, bufio.ErrBufferFull) {
				line, err = s.br.ReadSlice('\n')
				s.line = append(s.line, line...)
			}
			line = s.line
		}
		if err != nil {
			s.err = err
			if len(line) == 0 {
				break
			}
		}
		line = bytes.TrimSuffix(bytes.TrimSuffix(line, []byte("\n")), []byte("\r"))
		if len(line) == 0 {
			if have {
				return true
			}
			continue
		}
		name, value, _ := bytes.Cut(line, []byte(":"))
		if string(name) != "data" {
			continue // a comment, or a field the relay does not read
		}
		value = bytes.TrimPrefix(value, []byte(" "))
		s.data = append(append(s.data, value...), '\n')
		have = true
	}
	return false
}

// Err is what ended the stream early: nil at its end.
func (s *sseReader) Err() error {
	if errors.Is(s.err, io.EOF) {
		return nil
	}
	return s.err
}
