package alerting

import (
	"context"
	"strings"
	"testing"
	"time"
)

func TestJudge(t *testing.T) {
	opened := time.Date(2026, 12, 4, 14, 2, 0, 0, time.UTC)
	closed := opened.Add(5 * time.Minute)
	cases := []struct {
		name string
		s    Signals
		want map[Kind]bool // kinds judged, and whether they hold
	}{
		{"healthy", Signals{Requests: 1000, Failures: 10, ShareNow: 0.3, ShareBefore: 0.3},
			map[Kind]bool{UptimePenalty: false, UptimeSwitch: false, AtCap: false, BreakerPaused: false, ShareDown: false}},
		{"under 95", Signals{Requests: 1000, Failures: 80, ShareNow: -1},
			map[Kind]bool{UptimePenalty: true, UptimeSwitch: false, AtCap: false, BreakerPaused: false}},
		{"under 85", Signals{Requests: 1000, Failures: 200, ShareNow: -1},
			map[Kind]bool{UptimePenalty: true, UptimeSwitch: true, AtCap: false, BreakerPaused: false}},
		{"too quiet to judge uptime", Signals{Requests: 10, Failures: 10, ShareNow: -1}, map[Kind]bool{AtCap: false, BreakerPaused: false}},
		{"at the cap", Signals{CappedMinutes: 20, ShareNow: -1}, map[Kind]bool{AtCap: true, BreakerPaused: false}},
		{"share halved", Signals{ShareNow: 0.1, ShareBefore: 0.2}, map[Kind]bool{AtCap: false, BreakerPaused: false, ShareDown: true}},
		{"share dipped a little", Signals{ShareNow: 0.18, ShareBefore: 0.2}, map[Kind]bool{AtCap: false, BreakerPaused: false, ShareDown: false}},
		{"the gateway's breaker open", Signals{ShareNow: -1, BreakerOpened: &opened}, map[Kind]bool{AtCap: false, BreakerPaused: true}},
		{"opened, then closed", Signals{ShareNow: -1, BreakerOpened: &opened, BreakerClosed: &closed}, map[Kind]bool{AtCap: false, BreakerPaused: false}},
		{"closed, then opened again", Signals{ShareNow: -1, BreakerOpened: &closed, BreakerClosed: &opened}, map[Kind]bool{AtCap: false, BreakerPaused: true}},
	}
	for _, tc := range cases {
		v := Judge(Rules{}, tc.s)
		if len(v) != len(tc.want) {
			t.Errorf("%s: judged %v, want %v", tc.name, v, tc.want)
		}
		for k, holds := range tc.want {
			if f, ok := v[k]; !ok || f.Holds != holds || f.Detail == "" {
				t.Errorf("%s: %s = %+v, want holds=%v with words", tc.name, k, f, holds)
			}
		}
	}
}

func TestSignatureVerifies(t *testing.T) {
	at := time.Date(2026, 12, 1, 10, 0, 0, 0, time.UTC)
	body := []byte(`{"event":"alert.opened"}`)
	h := Signature("whsec_abc", at, body)
	if err := Verify("whsec_abc", h, body, at.Add(time.Minute), 5*time.Minute); err != nil {
		t.Fatal(err)
	}
	if Verify("whsec_other", h, body, at, 5*time.Minute) == nil {
		t.Error("a wrong secret verified")
	}
	if Verify("whsec_abc", h, []byte(`{"event":"x"}`), at, 5*time.Minute) == nil {
		t.Error("a changed body verified")
	}
	if Verify("whsec_abc", h, body, at.Add(time.Hour), 5*time.Minute) == nil {
		t.Error("a replay an hour later verified")
	}
}

func TestBackoff(t *testing.T) {
	if Backoff(1) != time.Minute || Backoff(5) != 6*time.Hour || Backoff(6) != 0 {
		t.Errorf("backoff: %v %v %v", Backoff(1), Backoff(5), Backoff(6))
	}
}

// fakeStore keeps alerts and ranks in memory.
type fakeStore struct {
	listings []Listing
	signals  map[int64]Signals
	alerts   []Alert
	messages []string
	ranks    map[int64]map[string][2]int64
}

func (f *fakeStore) AlertSignals(context.Context, time.Time, time.Duration) ([]Listing, map[int64]Signals, error) {
	return f.listings, f.signals, nil
}
func (f *fakeStore) OpenAlerts(context.Context) ([]Alert, error) {
	var out []Alert
	for _, a := range f.alerts {
		if a.ResolvedAt == nil {
			out = append(out, a)
		}
	}
	return out, nil
}
func (f *fakeStore) OpenAlert(_ context.Context, a Alert, msg string) (bool, error) {
	a.ID = int64(len(f.alerts) + 1)
	f.alerts = append(f.alerts, a)
	f.messages = append(f.messages, msg)
	return true, nil
}
func (f *fakeStore) ResolveAlert(_ context.Context, a Alert, msg, _ string) (bool, error) {
	now := time.Now()
	f.alerts[a.ID-1].ResolvedAt = &now
	if msg != "" {
		f.messages = append(f.messages, msg)
	}
	return true, nil
}
func (f *fakeStore) ListingRanks(context.Context) (map[int64]map[string][2]int64, error) {
	return f.ranks, nil
}
func (f *fakeStore) SaveListingRanks(_ context.Context, r map[int64]map[string][2]int64) error {
	f.ranks = r
	return nil
}

func TestRankMovedByACompetitor(t *testing.T) {
	st := &fakeStore{listings: []Listing{{ID: 1, CarrierID: 9, Name: "nebula/kimi-k2.5"}}, signals: map[int64]Signals{1: {ShareNow: -1}}}
	ranks := Ranks{Rank: map[int64]map[string]int64{1: {"coding-auto": 1}}, Revision: map[int64]int64{1: 5}, Names: map[string]string{"coding-auto": "Coding (auto)"}}
	e := &Evaluator{Store: st, Now: time.Now, Ranks: func(context.Context, time.Time) (Ranks, error) { return ranks, nil }}
	run := func() {
		t.Helper()
		if err := e.Once(context.Background()); err != nil {
			t.Fatal(err)
		}
	}
	run() // first sight: nothing to compare
	ranks.Rank[1]["coding-auto"] = 2
	run() // a competitor moved it: the listing's revision is the same
	if len(st.alerts) != 1 || st.alerts[0].Kind != RankMoved || !strings.Contains(st.messages[0], "rank 2, was 1") {
		t.Fatalf("alerts %+v, messages %q", st.alerts, st.messages)
	}
	run() // no new move: the event closes silently
	if st.alerts[0].ResolvedAt == nil || len(st.messages) != 1 {
		t.Errorf("the rank alert did not close quietly: %+v %q", st.alerts[0], st.messages)
	}
	ranks.Rank[1]["coding-auto"], ranks.Revision[1] = 3, 6 // its own fare change: not a competitor's doing
	run()
	if len(st.alerts) != 1 {
		t.Errorf("the carrier's own change raised a rank alert: %+v", st.alerts)
	}
}

func TestBreakerBackoffAndFirstTokenJump(t *testing.T) {
	base := Signals{ShareNow: -1, ShareBefore: -1}
	for _, test := range []struct {
		name  string
		s     Signals
		kind  Kind
		holds bool
		known bool
	}{
		{"failing far more than peers", Signals{Requests: 100, Failures: 20, PeerRequests: 400, PeerFailures: 8}, FailureBreaker, true, true},
		{"failing like the peers", Signals{Requests: 100, Failures: 20, PeerRequests: 400, PeerFailures: 60}, FailureBreaker, false, true},
		{"three times the peers but a small gap", Signals{Requests: 100, Failures: 3, PeerRequests: 400, PeerFailures: 4}, FailureBreaker, false, true},
		{"too few peer requests to judge", Signals{Requests: 100, Failures: 20, PeerRequests: 10}, FailureBreaker, false, false},
		{"429s far above peers", Signals{Requests: 80, RateLimited: 20, PeerRequests: 400, PeerRateLimited: 4}, RateLimitBackoff, true, true},
		{"429s like the peers", Signals{Requests: 80, RateLimited: 20, PeerRequests: 300, PeerRateLimited: 100}, RateLimitBackoff, false, true},
		{"first token twice as slow as the hour before", Signals{Successes: 60, TTFTMsSum: 60 * 900, PrevSuccesses: 60, PrevTTFTMsSum: 60 * 400}, TTFTJump, true, true},
		{"first token a little slower", Signals{Successes: 60, TTFTMsSum: 60 * 500, PrevSuccesses: 60, PrevTTFTMsSum: 60 * 400}, TTFTJump, false, true},
		{"no first-token measurement before", Signals{Successes: 60, TTFTMsSum: 60 * 900}, TTFTJump, false, false},
	} {
		s := test.s
		s.ShareNow, s.ShareBefore = base.ShareNow, base.ShareBefore
		f, known := Judge(Rules{}, s)[test.kind]
		if known != test.known || f.Holds != test.holds {
			t.Errorf("%s: holds %v (judged %v), want %v (%v): %s", test.name, f.Holds, known, test.holds, test.known, f.Detail)
		}
		if known && f.Detail == "" {
			t.Errorf("%s: no words for the finding", test.name)
		}
	}
}
