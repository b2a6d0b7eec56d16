package gateway

import (
	"testing"
	"time"
)

// TestA429BurstMovesTrafficAwayAndBack: a listing answering 429 is tried
// first (and moved on from) until its third 429 within 30 s; then the
// requests go straight to the next listing, without waiting for a refusal,
// until its 10 s backoff ends; the first try after it is the listing's
// again and, answered, brings its traffic back. The backoff is counted in
// the minute's metrics.
func TestA429BurstMovesTrafficAwayAndBack(t *testing.T) {
	h := newHarness(t, threeCarriers()...)
	h.carriers["a"].SetStatus(429)
	for range 3 {
		if res := h.chat(hello); res.status != 200 {
			t.Fatalf("a request that fell back: %d %s", res.status, res.body)
		}
		h.advance(2 * time.Second)
	}
	if got := h.chats(); got["a"] != 3 || got["b"] != 3 {
		t.Fatalf("before the backoff: %v, want a tried and b serving 3 each", got)
	}
	for range 5 {
		h.chat(hello)
		h.advance(time.Second)
	}
	if got := h.chats(); got["a"] != 3 || got["b"] != 8 {
		t.Fatalf("during the backoff: %v, want a left alone", got)
	}
	if got := h.gw.Recorder.Totals()[1].Backoffs; got != 1 {
		t.Errorf("backoffs counted: %d, want 1", got)
	}
	// The five requests elected while it was held back are counted on
	// it (what the portal's replay takes it off the ballot for), and
	// on no listing the backoff did not hold.
	if got := h.gw.Recorder.Totals(); got[1].HeldBack != 5 || got[2].HeldBack != 0 {
		t.Errorf("requests held back from a: %d (b: %d), want 5 (0)", got[1].HeldBack, got[2].HeldBack)
	}
	h.carriers["a"].SetStatus(0)
	h.advance(10 * time.Second)
	for range 3 {
		h.chat(hello)
	}
	if got := h.chats(); got["a"] != 6 || got["b"] != 8 {
		t.Errorf("after the backoff: %v, want a serving again", got)
	}
	if got := h.gw.Recorder.Totals()[1].HeldBack; got != 5 {
		t.Errorf("requests held back from a after its backoff: %d, want still 5", got)
	}
	// a held the shape throughout: b served while a was held back, which
	// the report counts as heldBack, never as b taking the shape (the
	// portal's replay would then count those requests twice).
	held := h.gw.Recorder.TakeClosedHolders(h.clock().Add(time.Hour))
	if len(held) == 0 {
		t.Fatal("no holder reported")
	}
	for _, r := range held {
		if r.ListingID != 1 {
			t.Errorf("holder reported at %s+%ds: listing %d, want a (1) throughout", r.Minute.Format(time.TimeOnly), r.Second, r.ListingID)
		}
	}
}

// TestTheBreakerPausesAFailingListingAndProbesItBack: a listing failing
// half its tries while its peer fails none opens after 20 tries; its
// requests then go to the peer, but for 1 in 20 that probes it once it is
// half-open (30 s on); 10 good probes in a row close it and it wins its
// traffic back. Opening and closing are counted.
func TestTheBreakerPausesAFailingListingAndProbesItBack(t *testing.T) {
	h := newHarness(t, threeCarriers()...)
	for i := range 20 {
		status := 0
		if i%2 == 0 {
			status = 500
		}
		h.carriers["a"].SetStatus(status)
		h.chat(hello)
		h.advance(time.Second)
	}
	if got := h.gw.Recorder.Totals()[1].BreakerOpenings; got != 1 {
		t.Fatalf("breaker openings after 20 tries at 50 %%: %d, want 1", got)
	}
	h.carriers["a"].SetStatus(0)
	before := h.chats()["a"]
	for range 10 {
		h.chat(hello)
	}
	if got := h.chats()["a"]; got != before {
		t.Fatalf("the open breaker let %d requests through", got-before)
	}
	h.advance(30 * time.Second)
	requests := 0
	for h.gw.Recorder.Totals()[1].BreakerClosings == 0 && requests < 400 {
		h.chat(hello)
		requests++
	}
	// Probes are the first request after it turned half-open, then every
	// 20th: the tenth is request 181.
	if got := h.chats()["a"] - before; got != 10 || requests != 181 {
		t.Fatalf("half-open: %d probes in %d requests, want it closed by the 10th in 181", got, requests)
	}
	for range 5 {
		h.chat(hello)
	}
	if got := h.chats()["a"] - before; got != 15 {
		t.Errorf("closed again: a served %d of the next 5, want all", got-10)
	}
}
