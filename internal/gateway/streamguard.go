package gateway

import (
	"errors"
	"fmt"
	"io"
	"time"
)

// StreamLimits bound what one carrier's streamed answer can make the
// gateway hold or wait for. A carrier is not trusted to end its stream, to
// send its first token soon, or to keep a tool call's arguments small: a
// carrier that sent role-only events for 50 s, or endless tool-call deltas,
// once took the gateway to gigabytes from a single request. A stream that
// breaks a limit is ended and counted as the carrier's failure (before its
// first token the request falls back to the next listing; after it, the
// caller gets the tokens so far and an error event).
//
// With the defaults one stream holds at most about 4 MiB however hostile
// its carrier: HeldBytes before the first token, one event of EventBytes
// being read (and the decoder's buffer for it), and ToolArgsTotal of
// tool-call arguments kept to check they are JSON.
type StreamLimits struct {
	// HeldEvents and HeldBytes bound the events held back before the first
	// token (role chunks, empty deltas): 64 events, 256 KiB.
	HeldEvents int
	HeldBytes  int
	// EventBytes bounds the bytes read for one event, comments and data
	// lines included: 1 MiB.
	EventBytes int64
	// ToolCalls, ToolArgsBytes and ToolArgsTotal bound the tool calls of one
	// answer and their arguments, per call and in all: 64 calls, 1 MiB,
	// 2 MiB.
	ToolCalls     int
	ToolArgsBytes int
	ToolArgsTotal int
	// Deadline bounds the whole stream, first byte to last: 10 minutes.
	Deadline time.Duration
	// MaxGap is the minimum rate: after the first token, an event carrying a
	// token (content, reasoning, a tool call, a finish or usage) must come
	// at least this often: 60 s. Comments, keep-alives and empty deltas do
	// not count.
	MaxGap time.Duration
}

// DefaultStreamLimits are the limits a gateway uses when it sets none.
var DefaultStreamLimits = StreamLimits{HeldEvents: 64, HeldBytes: 256 << 10, EventBytes: 1 << 20,
	ToolCalls: 64, ToolArgsBytes: 1 << 20, ToolArgsTotal: 2 << 20, Deadline: 10 * time.Minute, MaxGap: time.Minute}

// withDefaults fills each unset limit from DefaultStreamLimits.
func (l StreamLimits) withDefaults() StreamLimits {
	d := DefaultStreamLimits
	return StreamLimits{HeldEvents: positiveOr(l.HeldEvents, d.HeldEvents), HeldBytes: positiveOr(l.HeldBytes, d.HeldBytes),
		EventBytes: positiveOr(l.EventBytes, d.EventBytes), ToolCalls: positiveOr(l.ToolCalls, d.ToolCalls),
		ToolArgsBytes: positiveOr(l.ToolArgsBytes, d.ToolArgsBytes), ToolArgsTotal: positiveOr(l.ToolArgsTotal, d.ToolArgsTotal),
		Deadline: positiveOr(l.Deadline, d.Deadline), MaxGap: positiveOr(l.MaxGap, d.MaxGap)}
}

// positiveOr is v when it is set (positive), else def: the gateway's
// limits and timeouts leave zero to mean "the default".
func positiveOr[T int | int64 | time.Duration](v, def T) T {
	if v > 0 {
		return v
	}
	return def
}

// streamBreach is a limit a carrier's stream broke; its message is what the
// caller and the log read.
type streamBreach struct{ message string }

func (b *streamBreach) Error() string { return b.message }

func breach(format string, args ...any) *streamBreach {
	return &streamBreach{message: fmt.Sprintf(format, args...)}
}

// The time limits, as the causes the request's context is cancelled with.
var (
	errFirstByte      = errors.New("no first token in time")
	errStreamDeadline = errors.New("the stream outlasted its deadline")
	errStreamGap      = errors.New("the stream stalled")
)

// eventBoundedBody is a carrier's stream body that refuses to be read past
// limit bytes between two events: the SSE decoder reads until a blank line,
// so without it one endless event (data lines or comments with no blank
// line) would be buffered whole. eventSeen starts the count again.
type eventBoundedBody struct {
	io.ReadCloser
	limit, read int64
	breach      *streamBreach
	// beforeRead, when set, runs before each read of the carrier's body:
	// the relay flushes what it wrote then, once per batch of events the
	// carrier sent together, as a reverse proxy flushes before it waits.
	beforeRead func()
}

func (b *eventBoundedBody) Read(p []byte) (int, error) {
	if b.beforeRead != nil {
		b.beforeRead()
	}
	if b.read >= b.limit {
		if b.breach == nil {
			b.breach = breach("sent an event of more than %d bytes", b.limit)
		}
		return 0, b.breach
	}
	if room := b.limit - b.read; int64(len(p)) > room {
		p = p[:room]
	}
	n, err := b.ReadCloser.Read(p)
	b.read += int64(n)
	return n, err
}

func (b *eventBoundedBody) eventSeen() { b.read = 0 }

// toolArgs gathers streamed tool-call arguments within the limits, to check
// each call's arguments are JSON once the stream ends.
type toolArgs struct {
	limits StreamLimits
	byCall map[int][]byte
	total  int
}

func (t *toolArgs) add(index int, fragment string) *streamBreach {
	b, known := t.byCall[index]
	switch {
	case !known && len(t.byCall) >= t.limits.ToolCalls:
		return breach("sent more than %d tool calls", t.limits.ToolCalls)
	case len(b)+len(fragment) > t.limits.ToolArgsBytes:
		return breach("sent a tool call's arguments past %d bytes", t.limits.ToolArgsBytes)
	case t.total+len(fragment) > t.limits.ToolArgsTotal:
		return breach("sent tool-call arguments past %d bytes in all", t.limits.ToolArgsTotal)
	}
	t.byCall[index] = append(b, fragment...)
	t.total += len(fragment)
	return nil
}
