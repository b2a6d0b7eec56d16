package traffic_test

import (
	"slices"
	"strings"
	"testing"
	"time"

	"github.com/airside/airside/internal/election"
	"github.com/airside/airside/internal/traffic"
)

var limitsStart = time.Date(2026, 12, 4, 14, 0, 0, 0, time.UTC)

func at(d time.Duration) time.Time { return limitsStart.Add(d) }

func try(listing string, class traffic.Class, when time.Duration) traffic.Try {
	return traffic.Try{Listing: listing, Model: "kimi", Class: class, At: at(when)}
}

// TestA429BurstBacksOffAndDoubles: three 429s within 30 s hold the listing
// back 10 s; a 429 on the first try after doubles the wait; a good first
// try ends it and resets the wait; a Retry-After sets the wait itself.
func TestA429BurstBacksOffAndDoubles(t *testing.T) {
	var l traffic.Limits
	for i, d := range []time.Duration{0, 5 * time.Second} {
		if ev := l.Record(try("a", traffic.RateLimited, d)); len(ev) != 0 {
			t.Fatalf("429 number %d opened %+v", i+1, ev)
		}
	}
	ev := l.Record(try("a", traffic.RateLimited, 9*time.Second))
	if len(ev) != 1 || !ev[0].Opened || ev[0].Limit != traffic.LimitBackoff || !ev[0].Until.Equal(at(19*time.Second)) {
		t.Fatalf("the third 429 within 30 s: %+v, want a backoff until 14:00:19", ev)
	}
	if !l.State("a", at(18*time.Second)).Backoff || l.State("a", at(19*time.Second)).Backoff {
		t.Error("the backoff does not last exactly 10 s")
	}
	if l.State("b", at(10*time.Second)).Backoff {
		t.Error("another listing is held back")
	}
	ev = l.Record(try("a", traffic.RateLimited, 20*time.Second)) // the first try after: 429 again
	if len(ev) != 1 || !ev[0].Until.Equal(at(40*time.Second)) {
		t.Fatalf("a 429 on the first try after the backoff: %+v, want 20 s", ev)
	}
	ev = l.Record(try("a", traffic.Served, 41*time.Second))
	if len(ev) != 1 || ev[0].Opened || ev[0].Limit != traffic.LimitBackoff {
		t.Fatalf("a good first try after the backoff: %+v, want it closed", ev)
	}
	retry := try("a", traffic.RateLimited, 50*time.Second)
	retry.RetryAfter = 4 * time.Second
	if ev := l.Record(retry); len(ev) != 1 || !ev[0].Until.Equal(at(54*time.Second)) {
		t.Fatalf("a 429 with Retry-After 4 s: %+v", ev)
	}
	// Doubling stops at the most.
	var m traffic.Limits
	var until time.Time
	for i := range traffic.BackoffBurst {
		for _, e := range m.Record(try("c", traffic.RateLimited, time.Duration(i)*time.Second)) {
			until = e.Until
		}
	}
	var waits []time.Duration
	for range 5 {
		ev := m.Record(traffic.Try{Listing: "c", Model: "kimi", Class: traffic.RateLimited, At: until})
		if len(ev) != 1 {
			t.Fatalf("a 429 on the first try after a backoff: %+v", ev)
		}
		waits, until = append(waits, ev[0].Until.Sub(ev[0].At)), ev[0].Until
	}
	if want := []time.Duration{20 * time.Second, 40 * time.Second, 80 * time.Second, 120 * time.Second, 120 * time.Second}; !slices.Equal(waits, want) {
		t.Errorf("waits %v, want %v", waits, want)
	}
}

// TestTheBreakerOpensAgainstPeersAndClosesOnProbes: a listing failing 40 %
// of its tries while the model's other listings fail 2 % opens after 20
// tries; after 30 s it is half-open and probed by 1 request in 20; 10
// successful probes in a row close it, a failed probe reopens it for
// twice as long.
func TestTheBreakerOpensAgainstPeersAndClosesOnProbes(t *testing.T) {
	var l traffic.Limits
	for i := range 100 { // two peers at 2 %
		class := traffic.Served
		if i%50 == 0 {
			class = traffic.Counted
		}
		for _, peer := range []string{"b", "c"} {
			l.Record(try(peer, class, time.Duration(i)*time.Second))
		}
	}
	var opened []traffic.Event
	for i := range 50 {
		class := traffic.Served
		if i%5 < 2 {
			class = traffic.Counted
		}
		opened = append(opened, l.Record(try("a", class, 100*time.Second+time.Duration(i)*time.Second))...)
		if len(opened) > 0 {
			break
		}
	}
	if len(opened) != 1 || opened[0].Limit != traffic.LimitBreaker || !opened[0].Opened ||
		!strings.Contains(opened[0].Detail, "against a median of 2 %") {
		t.Fatalf("opened %+v", opened)
	}
	openedAt := opened[0].At
	if st := l.State("a", openedAt.Add(29*time.Second)); st.Breaker != election.BreakerOpen {
		t.Errorf("29 s after opening: %v", st.Breaker)
	}
	halfOpen := openedAt.Add(30 * time.Second)
	if st := l.State("a", halfOpen); st.Breaker != election.BreakerHalfOpen {
		t.Fatalf("30 s after opening: %v, want half_open", st.Breaker)
	}
	var probes int
	for range 3 * traffic.BreakerProbeEvery {
		if l.Probe("a", halfOpen) {
			probes++
		}
	}
	if probes != 3 {
		t.Errorf("%d probes in %d requests, want 3", probes, 3*traffic.BreakerProbeEvery)
	}
	for i := range traffic.BreakerCloseAfter - 1 {
		if ev := l.Record(traffic.Try{Listing: "a", Model: "kimi", Class: traffic.Served, At: halfOpen.Add(time.Duration(i) * time.Second)}); len(ev) != 0 {
			t.Fatalf("probe %d: %+v", i+1, ev)
		}
	}
	// A failed probe reopens it for 60 s.
	ev := l.Record(traffic.Try{Listing: "a", Model: "kimi", Class: traffic.Counted, At: halfOpen.Add(10 * time.Second)})
	if len(ev) != 1 || !ev[0].Opened || ev[0].Until.Sub(ev[0].At) != 2*traffic.BreakerFirst {
		t.Fatalf("a failed probe: %+v, want reopened for 60 s", ev)
	}
	again := ev[0].Until
	for i := range traffic.BreakerCloseAfter {
		ev = l.Record(traffic.Try{Listing: "a", Model: "kimi", Class: traffic.Served, At: again.Add(time.Duration(i) * time.Second)})
	}
	if len(ev) != 1 || ev[0].Opened || ev[0].Limit != traffic.LimitBreaker {
		t.Fatalf("the tenth good probe: %+v, want closed", ev)
	}
	if st := l.State("a", again.Add(20*time.Second)); st.Breaker != election.BreakerClosed {
		t.Errorf("after closing: %v", st.Breaker)
	}
	// Closed with a clean window: one more failure does not reopen it.
	if ev := l.Record(traffic.Try{Listing: "a", Model: "kimi", Class: traffic.Counted, At: again.Add(21 * time.Second)}); len(ev) != 0 {
		t.Errorf("a failure right after closing: %+v", ev)
	}
}

// TestMostly429sOpenTheBreaker: over half the tries 429 opens it, with no
// peers to compare.
func TestMostly429sOpenTheBreaker(t *testing.T) {
	var l traffic.Limits
	var ev []traffic.Event
	for i := range 40 {
		tr := try("a", traffic.Served, time.Duration(i)*5*time.Second)
		if i%3 != 0 {
			tr.Class, tr.RetryAfter = traffic.RateLimited, time.Second
		}
		for _, e := range l.Record(tr) {
			if e.Limit == traffic.LimitBreaker {
				ev = append(ev, e)
			}
		}
	}
	if len(ev) == 0 || !strings.Contains(ev[0].Detail, "answered 429") {
		t.Fatalf("breaker events %+v", ev)
	}
}

// TestASlowListingIsHeldBackAMinute: first tokens twice as slow as the hour
// before and a second more, over at least 5 answers in 2 minutes, mark it
// slow until a minute after the last slow answer.
func TestASlowListingIsHeldBackAMinute(t *testing.T) {
	var l traffic.Limits
	served := func(when time.Duration, ttft time.Duration) []traffic.Event {
		tr := try("a", traffic.Served, when)
		tr.TTFT = ttft
		return l.Record(tr)
	}
	for m := range 60 {
		served(time.Duration(m)*time.Minute, 500*time.Millisecond)
	}
	var ev []traffic.Event
	for i := range 5 {
		ev = append(ev, served(62*time.Minute+time.Duration(i)*time.Second, 1400*time.Millisecond)...)
	}
	if len(ev) != 0 {
		t.Fatalf("1.4 s against 0.5 s (under a second more): %+v", ev)
	}
	for i := range 5 {
		ev = append(ev, served(62*time.Minute+time.Duration(10+i)*time.Second, 3*time.Second)...)
	}
	if len(ev) != 1 || ev[0].Limit != traffic.LimitSlow {
		t.Fatalf("3 s first tokens: %+v, want slow", ev)
	}
	last := ev[0].At
	if !l.State("a", last.Add(59*time.Second)).Slow {
		t.Error("not slow within the minute")
	}
	if st := l.State("a", at(62*time.Minute+14*time.Second).Add(traffic.SlowHold)); st.Slow {
		t.Error("still slow a minute after the last slow answer")
	}
}

// TestTheSharePolicysFiguresFromTheTries: the 429 share of a listing's
// tries and the malformed share of its tool calls over the last five
// minutes, nil with nothing to count; older tries fall out.
func TestTheSharePolicysFiguresFromTheTries(t *testing.T) {
	var l traffic.Limits
	if q, m := l.Shares("a", at(0)); q != nil || m != nil {
		t.Fatalf("no tries: %v %v", q, m)
	}
	served := try("a", traffic.Served, 0)
	served.ToolCalls, served.MalformedToolCalls = 4, 1
	l.Record(served)
	l.Record(try("a", traffic.Served, time.Second))
	l.Record(try("a", traffic.RateLimited, 2*time.Second))
	l.Record(try("a", traffic.Counted, 3*time.Second))
	q, m := l.Shares("a", at(4*time.Second))
	if q == nil || *q != 0.25 || m == nil || *m != 0.25 {
		t.Errorf("429 share %v, malformed share %v; want 1 in 4 each", q, m)
	}
	if q, m := l.Shares("a", at(traffic.BreakerWindow+5*time.Second)); q != nil || m != nil {
		t.Errorf("five minutes on: %v %v, want nothing", q, m)
	}
}
