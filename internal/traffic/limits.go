package traffic

import (
	"fmt"
	"sync"
	"time"

	"github.com/airside/airside/internal/election"
)

// The limits every routing policy applies, from the gateway's own tries
// (election.md sec. 8).
const (
	// A 429 burst: this many 429s within the window start a backoff of
	// BackoffFirst (or the carrier's Retry-After), doubling to BackoffMax
	// while the first try after one ends is a 429 again.
	BackoffBurst       = 3
	BackoffBurstWindow = 30 * time.Second
	BackoffFirst       = 10 * time.Second
	BackoffMax         = 120 * time.Second
	// The latency backoff: a mean time to first token over SlowWindow (at
	// least SlowMinTries answers) at least SlowFactor times the hour
	// before's and SlowMargin more; it lasts SlowHold after the last slow
	// answer.
	SlowWindow   = 2 * time.Minute
	SlowMinTries = 5
	SlowFactor   = 2
	SlowMargin   = time.Second
	SlowHold     = 60 * time.Second
	// The breaker: over BreakerWindow with at least BreakerMinTries tries, a
	// counted error rate at least BreakerFactor times the median of the
	// model's other listings and BreakerMargin above it, or a 429 rate above
	// BreakerLimitedShare, opens it for BreakerFirst (doubling to BreakerMax
	// on each reopening); half-open, 1 request in BreakerProbeEvery of its
	// shapes probes it and BreakerCloseAfter successes in a row close it.
	BreakerWindow       = 5 * time.Minute
	BreakerMinTries     = 20
	BreakerFactor       = 3
	BreakerMargin       = 0.10
	BreakerLimitedShare = 0.5
	BreakerFirst        = 30 * time.Second
	BreakerMax          = 10 * time.Minute
	BreakerProbeEvery   = 20
	BreakerCloseAfter   = 10
)

// Try is one try of a listing as the gateway saw it.
type Try struct {
	Listing, Model string
	Class          Class
	// RetryAfter is the carrier's Retry-After on a 429 (0: none given).
	RetryAfter time.Duration
	// TTFT is a served try's time to first token (0: not measured).
	TTFT time.Duration
	// ToolCalls and MalformedToolCalls are a served try's tool calls and
	// those whose arguments were not JSON.
	ToolCalls, MalformedToolCalls int64
	At                            time.Time
}

// Limit names a limit.
type Limit string

// The limits that report when they act.
const (
	LimitBackoff Limit = "backoff"
	LimitBreaker Limit = "breaker"
	LimitSlow    Limit = "slow"
)

// Event is a limit acting on a listing: opened (the listing held back) or
// closed, and why, in a sentence for the carrier.
type Event struct {
	Listing string
	Limit   Limit
	Opened  bool
	At      time.Time
	// Until is when an opened limit ends at the earliest.
	Until  time.Time
	Detail string
}

// Limits keeps every listing's backoff, latency backoff and breaker. Safe
// for concurrent use; time comes from the tries and the callers.
type Limits struct {
	mu sync.Mutex
	by map[string]*limited
}

// ringSeconds covers BreakerWindow a second at a time; ringMinutes the
// hour before SlowWindow a minute at a time.
const (
	ringSeconds = int(BreakerWindow / time.Second)
	ringMinutes = 64
)

type second struct {
	at                      int64 // unix second the slot holds
	tries, counted, limited int64
	ttftSum                 time.Duration
	ttftN                   int64
	toolCalls, malformed    int64
}

type minuteTTFT struct {
	at  int64 // unix minute
	sum time.Duration
	n   int64
}

type limited struct {
	model   string
	seconds [ringSeconds]second
	minutes [ringMinutes]minuteTTFT

	backoffUntil   time.Time
	backoffWait    time.Duration
	awaitingFirst  bool // a backoff ended and no try has followed yet
	slowUntil      time.Time
	breaker        election.Breaker
	breakerUntil   time.Time
	breakerWait    time.Duration
	probeSuccesses int
	probeCount     int
}

func (l *Limits) of(listing, model string) *limited {
	if l.by == nil {
		l.by = map[string]*limited{}
	}
	s := l.by[listing]
	if s == nil {
		s = &limited{model: model}
		l.by[listing] = s
	}
	return s
}

// State is what the limits say of a listing at now (a breaker whose wait
// is over is half-open from then on).
func (l *Limits) State(listing string, now time.Time) election.State {
	l.mu.Lock()
	defer l.mu.Unlock()
	s := l.by[listing]
	if s == nil {
		return election.State{}
	}
	s.tick(now)
	return election.State{Backoff: now.Before(s.backoffUntil), Slow: now.Before(s.slowUntil), Breaker: s.breaker}
}

// Probe reports whether this request, one of a half-open listing's shapes',
// is the one in BreakerProbeEvery that probes it (the first after it turned
// half-open, then every BreakerProbeEvery-th).
func (l *Limits) Probe(listing string, now time.Time) bool {
	l.mu.Lock()
	defer l.mu.Unlock()
	s := l.by[listing]
	if s == nil {
		return false
	}
	s.tick(now)
	if s.breaker != election.BreakerHalfOpen {
		return false
	}
	s.probeCount++
	return s.probeCount%BreakerProbeEvery == 1
}

// tick moves an open breaker whose wait is over to half-open.
func (s *limited) tick(now time.Time) {
	if s.breaker == election.BreakerOpen && !now.Before(s.breakerUntil) {
		s.breaker, s.probeSuccesses, s.probeCount = election.BreakerHalfOpen, 0, 0
	}
}

// Record takes one try into its listing's limits and returns what acted.
func (l *Limits) Record(t Try) []Event {
	l.mu.Lock()
	defer l.mu.Unlock()
	s := l.of(t.Listing, t.Model)
	s.tick(t.At)
	s.add(t)
	var events []Event
	if e, ok := s.backoff(t); ok {
		events = append(events, e)
	}
	if e, ok := s.slow(t); ok {
		events = append(events, e)
	}
	if e, ok := l.breaker(s, t); ok {
		events = append(events, e)
	}
	return events
}

func (s *limited) add(t Try) {
	sec := t.At.Unix()
	slot := &s.seconds[int(sec%int64(ringSeconds))]
	if slot.at != sec {
		*slot = second{at: sec}
	}
	if t.Class != NotCounted {
		slot.tries++
	}
	switch t.Class {
	case Counted:
		slot.counted++
	case RateLimited:
		slot.limited++
	case Served:
		slot.toolCalls += t.ToolCalls
		slot.malformed += t.MalformedToolCalls
		if t.TTFT > 0 {
			slot.ttftSum += t.TTFT
			slot.ttftN++
			min := sec / 60
			m := &s.minutes[int(min%ringMinutes)]
			if m.at != min {
				*m = minuteTTFT{at: min}
			}
			m.sum += t.TTFT
			m.n++
		}
	}
}

// window sums the seconds within d before at (at's own second included).
func (s *limited) window(at time.Time, d time.Duration) second {
	var out second
	now := at.Unix()
	// Only the window's own seconds are looked at (a window is at most
	// the ring: no two of its seconds share a slot), each in its slot if
	// the slot still holds it: a try reads several windows of several
	// listings.
	from := now - int64(min(int(d/time.Second), ringSeconds)) + 1
	for sec := from; sec <= now; sec++ {
		if x := &s.seconds[int(sec%int64(ringSeconds))]; x.at == sec {
			out.tries += x.tries
			out.counted += x.counted
			out.limited += x.limited
			out.ttftSum += x.ttftSum
			out.ttftN += x.ttftN
			out.toolCalls += x.toolCalls
			out.malformed += x.malformed
		}
	}
	return out
}

// backoff applies a 429: a burst, a Retry-After, or a 429 on the first try
// after a backoff starts one; the first good try after it resets the wait.
func (s *limited) backoff(t Try) (Event, bool) {
	first := s.awaitingFirst && !t.At.Before(s.backoffUntil)
	if first {
		s.awaitingFirst = false
	}
	if t.Class != RateLimited {
		if first {
			s.backoffWait = 0
			return Event{Listing: t.Listing, Limit: LimitBackoff, At: t.At, Detail: "answered again after its backoff"}, true
		}
		return Event{}, false
	}
	if t.At.Before(s.backoffUntil) {
		return Event{}, false // a try in the backoff (a pinned request): it runs its course
	}
	var wait time.Duration
	var why string
	switch {
	case first:
		wait, why = min(2*s.backoffWait, BackoffMax), "answered 429 again on the first try after its backoff"
	case t.RetryAfter > 0:
		wait, why = min(t.RetryAfter, BackoffMax), fmt.Sprintf("answered 429 with Retry-After %s", t.RetryAfter)
	case s.window(t.At, BackoffBurstWindow).limited >= BackoffBurst:
		wait, why = BackoffFirst, fmt.Sprintf("answered 429 %d times within %s", BackoffBurst, BackoffBurstWindow)
	default:
		return Event{}, false
	}
	s.backoffUntil, s.backoffWait, s.awaitingFirst = t.At.Add(wait), wait, true
	return Event{Listing: t.Listing, Limit: LimitBackoff, Opened: true, At: t.At, Until: s.backoffUntil,
		Detail: fmt.Sprintf("%s: held back for %s", why, wait)}, true
}

// slow applies a served try's time to first token to the latency backoff.
func (s *limited) slow(t Try) (Event, bool) {
	if t.Class != Served || t.TTFT <= 0 {
		return Event{}, false
	}
	recent := s.window(t.At, SlowWindow)
	if recent.ttftN < SlowMinTries {
		return Event{}, false
	}
	// The hour before the window, a minute at a time.
	nowMin := t.At.Unix() / 60
	windowMins := int64(SlowWindow / time.Minute)
	var sum time.Duration
	var n int64
	for _, m := range s.minutes {
		if m.at < nowMin-windowMins && m.at >= nowMin-windowMins-60 {
			sum += m.sum
			n += m.n
		}
	}
	if n == 0 {
		return Event{}, false
	}
	mean, before := recent.ttftSum/time.Duration(recent.ttftN), sum/time.Duration(n)
	if mean < SlowFactor*before || mean < before+SlowMargin {
		return Event{}, false
	}
	was := t.At.Before(s.slowUntil)
	s.slowUntil = t.At.Add(SlowHold)
	if was {
		return Event{}, false
	}
	return Event{Listing: t.Listing, Limit: LimitSlow, Opened: true, At: t.At, Until: s.slowUntil,
		Detail: fmt.Sprintf("first tokens took %d ms on average over the last %s against %d ms the hour before",
			mean.Milliseconds(), SlowWindow, before.Milliseconds())}, true
}

// breaker applies a try to its listing's breaker, against the model's
// other listings.
func (l *Limits) breaker(s *limited, t Try) (Event, bool) {
	switch s.breaker {
	case election.BreakerOpen:
		return Event{}, false
	case election.BreakerHalfOpen:
		switch t.Class {
		case Served:
			s.probeSuccesses++
			if s.probeSuccesses < BreakerCloseAfter {
				return Event{}, false
			}
			// Closed with a clean window: the failures that opened it
			// are not held against it again.
			s.breaker, s.breakerWait, s.seconds = election.BreakerClosed, 0, [ringSeconds]second{}
			return Event{Listing: t.Listing, Limit: LimitBreaker, At: t.At,
				Detail: fmt.Sprintf("%d probes in a row succeeded", BreakerCloseAfter)}, true
		case Counted, RateLimited:
			return s.open(t, min(2*s.breakerWait, BreakerMax), "a probe failed"), true
		}
		return Event{}, false
	}
	w := s.window(t.At, BreakerWindow)
	if w.tries < BreakerMinTries {
		return Event{}, false
	}
	e, q := float64(w.counted)/float64(w.tries), float64(w.limited)/float64(w.tries)
	var peers []float64
	// The peers' median matters only to a failure rate of at least the
	// margin over it (so at least the margin): a healthy listing's try
	// reads no other listing's window.
	if e >= BreakerMargin {
		for id, p := range l.by {
			if p == s || p.model != s.model || id == t.Listing {
				continue
			}
			if pw := p.window(t.At, BreakerWindow); pw.tries > 0 {
				peers = append(peers, float64(pw.counted)/float64(pw.tries))
			}
		}
	}
	var med float64
	if len(peers) > 0 {
		med = median(peers)
	}
	switch {
	case len(peers) > 0 && e >= BreakerFactor*med && e >= med+BreakerMargin:
		return s.open(t, BreakerFirst, fmt.Sprintf("%.0f %% of tries failed against a median of %.0f %% of the model's other listings",
			100*e, 100*med)), true
	case q > BreakerLimitedShare:
		return s.open(t, BreakerFirst, fmt.Sprintf("%.0f %% of tries answered 429", 100*q)), true
	}
	return Event{}, false
}

func (s *limited) open(t Try, wait time.Duration, why string) Event {
	s.breaker, s.breakerWait, s.breakerUntil = election.BreakerOpen, wait, t.At.Add(wait)
	return Event{Listing: t.Listing, Limit: LimitBreaker, Opened: true, At: t.At, Until: s.breakerUntil,
		Detail: fmt.Sprintf("%s: paused for %s", why, wait)}
}

// Shares are the share of a listing's tries of the last BreakerWindow
// that answered 429 and the share of its tool calls whose arguments were
// not JSON (each nil with nothing to count): the q and m of the share
// policy's adjusted price.
func (l *Limits) Shares(listing string, now time.Time) (limited, malformed *float64) {
	l.mu.Lock()
	defer l.mu.Unlock()
	s := l.by[listing]
	if s == nil {
		return nil, nil
	}
	w := s.window(now, BreakerWindow)
	if w.tries > 0 {
		q := float64(w.limited) / float64(w.tries)
		limited = &q
	}
	if w.toolCalls > 0 {
		m := float64(w.malformed) / float64(w.toolCalls)
		malformed = &m
	}
	return limited, malformed
}
