package catalogue

import (
	"testing"
	"time"
)

// TestLimitSpellsPairTheReportedMinutes: a breaker spell runs from its
// opening minute to the end of the minute it closed in (a reopening within
// it counted), one not closed yet has no end, one closed whose opening is
// older than the minutes read starts at its closing; backoffs a minute
// apart are one spell, further apart two.
func TestLimitSpellsPairTheReportedMinutes(t *testing.T) {
	m := func(i int) time.Time { return time.Date(2026, 12, 4, 14, i, 0, 0, time.UTC) }
	b := func(i int, g GatewayCounts) Bucket { return Bucket{Minute: m(i), Counts: Counts{GatewayCounts: g}} }
	end := func(i int) *time.Time { t := m(i); return &t }
	tests := []struct {
		name    string
		minutes []Bucket
		want    []LimitSpell
	}{
		{"opened and closed", []Bucket{b(2, GatewayCounts{BreakerOpenings: 1}), b(4, GatewayCounts{BreakerOpenings: 1}), b(9, GatewayCounts{BreakerClosings: 1})},
			[]LimitSpell{{Limit: "breaker", From: m(2), Until: end(10), Openings: 2}}},
		{"still open", []Bucket{b(2, GatewayCounts{BreakerOpenings: 1})},
			[]LimitSpell{{Limit: "breaker", From: m(2), Openings: 1}}},
		{"closed, opened before", []Bucket{b(3, GatewayCounts{BreakerClosings: 1})},
			[]LimitSpell{{Limit: "breaker", From: m(3), Until: end(4)}}},
		{"backoffs a minute apart, then later", []Bucket{b(1, GatewayCounts{Backoffs: 1}), b(2, GatewayCounts{Backoffs: 2}), b(7, GatewayCounts{Backoffs: 1})},
			[]LimitSpell{{Limit: "backoff", From: m(1), Until: end(3), Backoffs: 3}, {Limit: "backoff", From: m(7), Until: end(8), Backoffs: 1}}},
		{"both in one minute", []Bucket{b(5, GatewayCounts{Backoffs: 1, BreakerOpenings: 1, BreakerClosings: 1})},
			[]LimitSpell{{Limit: "breaker", From: m(5), Until: end(6), Openings: 1}, {Limit: "backoff", From: m(5), Until: end(6), Backoffs: 1}}},
		{"a breaker closing after a backoff moved the spells", []Bucket{b(2, GatewayCounts{BreakerOpenings: 1}), b(3, GatewayCounts{Backoffs: 1}),
			b(4, GatewayCounts{SlowBackoffs: 1}), b(9, GatewayCounts{BreakerClosings: 1})},
			[]LimitSpell{{Limit: "breaker", From: m(2), Until: end(10), Openings: 1}, {Limit: "backoff", From: m(3), Until: end(4), Backoffs: 1},
				{Limit: "slow", From: m(4), Until: end(5), Backoffs: 1}}},
		{"latency backoffs a minute apart, beside a 429 backoff", []Bucket{b(1, GatewayCounts{SlowBackoffs: 1}), b(2, GatewayCounts{SlowBackoffs: 1, Backoffs: 1}), b(6, GatewayCounts{SlowBackoffs: 2})},
			[]LimitSpell{{Limit: "slow", From: m(1), Until: end(3), Backoffs: 2}, {Limit: "backoff", From: m(2), Until: end(3), Backoffs: 1},
				{Limit: "slow", From: m(6), Until: end(7), Backoffs: 2}}},
		{"nothing", nil, nil},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			got := LimitSpells(tt.minutes)
			if len(got) != len(tt.want) {
				t.Fatalf("spells %+v, want %+v", got, tt.want)
			}
			for i := range got {
				g, w := got[i], tt.want[i]
				if g.Limit != w.Limit || !g.From.Equal(w.From) || (g.Until == nil) != (w.Until == nil) ||
					g.Until != nil && !g.Until.Equal(*w.Until) || g.Backoffs != w.Backoffs || g.Openings != w.Openings {
					t.Errorf("spell %d: %+v, want %+v", i, g, w)
				}
			}
		})
	}
}

// TestThePeersMedianLeavesTheListingOut: the median is over the model's
// other listings with tries, 429s counted as tries.
func TestThePeersMedianLeavesTheListingOut(t *testing.T) {
	sums := map[int64]Counts{
		1: {Requests: 60, Errors: 24, GatewayCounts: GatewayCounts{RateLimited: 0}}, // the listing: 40 %
		2: {Requests: 98, Errors: 2, GatewayCounts: GatewayCounts{RateLimited: 2}},  // 2 %
		3: {Requests: 50, Errors: 1},                                                // 2 %
		4: {Requests: 100, Errors: 10},                                              // 10 %
		5: {},                                                                       // no tries
	}
	if got := sums[1].FailureShareOfTries(); got != 0.4 {
		t.Errorf("the listing's failures: %v", got)
	}
	if med, ok := PeerMedianFailure(sums, 1); !ok || med != 0.02 {
		t.Errorf("median %v %v, want 2 %%", med, ok)
	}
	if _, ok := PeerMedianFailure(map[int64]Counts{1: sums[1]}, 1); ok {
		t.Error("a median with no peers")
	}
}
