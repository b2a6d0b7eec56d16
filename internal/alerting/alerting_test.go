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
		v := Judge(Rules{}, nil, tc.s)
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

// fakeStore keeps alerts, conditions and ranks in memory, on the test's
// clock.
type fakeStore struct {
	now        func() time.Time
	listings   []Listing
	signals    map[int64]Signals
	alerts     []Alert
	messages   []string
	ranks      map[int64]map[string]RankState
	conditions map[condKey]Condition
	rules      map[int64]CarrierRules
	mutes      []Mute
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
func (f *fakeStore) ResolvedSince(_ context.Context, since time.Time) ([]Alert, error) {
	var out []Alert
	for _, a := range f.alerts {
		if a.ResolvedAt != nil && !a.ResolvedAt.Before(since) {
			out = append(out, a)
		}
	}
	return out, nil
}
func (f *fakeStore) OpenAlert(_ context.Context, a Alert, msg string) (bool, error) {
	a.ID, a.OpenedAt = int64(len(f.alerts)+1), f.now()
	f.alerts = append(f.alerts, a)
	if msg != "" {
		f.messages = append(f.messages, msg)
	}
	return true, nil
}
func (f *fakeStore) ReopenAlert(_ context.Context, a Alert, detail, msg string) (bool, error) {
	now := f.now()
	stored := &f.alerts[a.ID-1]
	stored.ResolvedAt, stored.Flaps, stored.ReopenedAt, stored.Detail = nil, stored.Flaps+1, &now, detail
	if msg != "" {
		f.messages = append(f.messages, msg)
	}
	return true, nil
}
func (f *fakeStore) ResolveAlert(_ context.Context, a Alert, msg, _ string) (bool, error) {
	now := f.now()
	f.alerts[a.ID-1].ResolvedAt = &now
	if msg != "" {
		f.messages = append(f.messages, msg)
	}
	return true, nil
}
func (f *fakeStore) AlertConditions(context.Context) ([]Condition, error) {
	var out []Condition
	for _, c := range f.conditions {
		out = append(out, c)
	}
	return out, nil
}
func (f *fakeStore) SaveAlertConditions(_ context.Context, changed []Condition) error {
	if f.conditions == nil {
		f.conditions = map[condKey]Condition{}
	}
	for _, c := range changed {
		f.conditions[condKey{c.ListingID, c.Kind}] = c
	}
	return nil
}
func (f *fakeStore) AlertRules(context.Context) (map[int64]CarrierRules, error) { return f.rules, nil }
func (f *fakeStore) ActiveMutes(_ context.Context, now time.Time) ([]Mute, error) {
	var out []Mute
	for _, m := range f.mutes {
		if now.Before(m.Until) {
			out = append(out, m)
		}
	}
	return out, nil
}
func (f *fakeStore) ListingRanks(context.Context) (map[int64]map[string]RankState, error) {
	return f.ranks, nil
}
func (f *fakeStore) SaveListingRanks(_ context.Context, r map[int64]map[string]RankState) error {
	f.ranks = r
	return nil
}

// clock is a test's time, moved by hand.
type clock struct{ t time.Time }

func (c *clock) now() time.Time          { return c.t }
func (c *clock) advance(d time.Duration) { c.t = c.t.Add(d) }

func TestRankMovedNamesWhatMovedIt(t *testing.T) {
	c := &clock{time.Date(2026, 12, 4, 14, 0, 0, 0, time.UTC)}
	st := &fakeStore{now: c.now, listings: []Listing{{ID: 1, CarrierID: 9, Name: "nebula/kimi-k2.5"}}, signals: map[int64]Signals{1: {ShareNow: -1}}}
	ranks := Ranks{Rank: map[int64]map[string]int64{1: {"coding-auto": 1}, 2: {"coding-auto": 2}}, Revision: map[int64]int64{1: 5, 2: 7},
		Names: map[string]string{"coding-auto": "Coding (auto)"}, Model: map[int64]string{1: "kimi-k2.5", 2: "kimi-k2.5"},
		Listing: map[int64]string{1: "nebula/kimi-k2.5", 2: "orbit/kimi-k2.5"}, Catalogue: 7}
	e := &Evaluator{Store: st, Now: c.now, Ranks: func(context.Context, time.Time) (Ranks, error) { return ranks, nil }}
	run := func(after time.Duration) {
		t.Helper()
		c.advance(after)
		if err := e.Once(context.Background()); err != nil {
			t.Fatal(err)
		}
	}
	run(0) // first sight: the baseline
	// orbit publishes a cheaper fare and takes rank 1.
	ranks.Rank[1]["coding-auto"], ranks.Rank[2]["coding-auto"], ranks.Revision[2], ranks.Catalogue = 2, 1, 8, 8
	run(time.Minute)
	if len(st.alerts) != 0 {
		t.Fatalf("the rank alert opened before its condition held for its time: %+v", st.alerts)
	}
	run(DefaultSetting(RankMoved).OpenAfter)
	if len(st.alerts) != 1 || st.alerts[0].Kind != RankMoved || !strings.Contains(st.messages[0], "rank 2, was 1") ||
		!strings.Contains(st.messages[0], "orbit/kimi-k2.5 (catalogue revision 8)") {
		t.Fatalf("alerts %+v, messages %q: want one naming the move and orbit's publication", st.alerts, st.messages)
	}
	run(time.Hour) // the rank stays lower: the alert stays open, and silent
	if st.alerts[0].ResolvedAt != nil || len(st.messages) != 1 {
		t.Fatalf("a lasting move closed or spoke again: %+v %q", st.alerts[0], st.messages)
	}
	ranks.Rank[1]["coding-auto"], ranks.Rank[2]["coding-auto"], ranks.Revision[2], ranks.Catalogue = 1, 2, 9, 9 // orbit withdraws it
	run(time.Minute)
	run(DefaultSetting(RankMoved).CloseAfter)
	if st.alerts[0].ResolvedAt == nil || len(st.messages) != 2 || !strings.HasPrefix(st.messages[1], "Recovered:") {
		t.Fatalf("the rank back did not resolve the alert once: %+v %q", st.alerts[0], st.messages)
	}
	ranks.Rank[1]["coding-auto"], ranks.Revision[1], ranks.Catalogue = 3, 10, 10 // its own fare change: not a competitor's doing
	run(time.Hour)
	if len(st.alerts) != 1 || st.alerts[0].ResolvedAt == nil {
		t.Errorf("the carrier's own change raised a rank alert: %+v", st.alerts)
	}
	// No publication since the baseline: the cause is health, its own
	// when its own figures say so.
	ranks.Rank[1]["coding-auto"] = 4
	st.signals[1] = Signals{ShareNow: -1, Requests: 100, Failures: 12}
	run(time.Minute)
	run(DefaultSetting(RankMoved).OpenAfter)
	var rank []Alert
	for _, a := range st.alerts {
		if a.Kind == RankMoved {
			rank = append(rank, a)
		}
	}
	if len(rank) != 2 || !strings.Contains(rank[1].Detail, "rank 4, was 3 (no competitor published a change; its own health moved it: its uptime is 88.0 %") {
		t.Errorf("a health move named %+v", rank)
	}
}

// TestAlertsHoldClearAndFold drives one uptime rule through an outage that
// wobbles: the alert opens once the condition held for its time, resolves
// once clear for its time, folds a return within the hour into the same
// alert (the carrier hears of the flapping once), and stays quiet for a
// muted listing and a rule turned off.
func TestAlertsHoldClearAndFold(t *testing.T) {
	c := &clock{time.Date(2026, 12, 4, 14, 0, 0, 0, time.UTC)}
	down := Signals{ShareNow: -1, Requests: 1000, Failures: 100} // 90 %: under the penalty line only
	up := Signals{ShareNow: -1, Requests: 1000}
	st := &fakeStore{now: c.now, listings: []Listing{{ID: 1, CarrierID: 9, Name: "nebula/kimi-k2.5"}}, signals: map[int64]Signals{1: up}}
	e := &Evaluator{Store: st, Now: c.now}
	set := DefaultSetting(UptimePenalty)
	pass := func(s Signals, after time.Duration) {
		t.Helper()
		c.advance(after)
		st.signals[1] = s
		if err := e.Once(context.Background()); err != nil {
			t.Fatal(err)
		}
	}
	alertsOf := func() []Alert {
		var out []Alert
		for _, a := range st.alerts {
			if a.Kind == UptimePenalty {
				out = append(out, a)
			}
		}
		return out
	}
	pass(up, 0)
	pass(down, time.Minute)
	pass(up, time.Minute) // a one-minute blip
	pass(down, time.Minute)
	pass(down, set.OpenAfter-time.Second)
	if n := len(alertsOf()); n != 0 {
		t.Fatalf("%d alerts before the condition held %s", n, set.OpenAfter)
	}
	pass(down, time.Second)
	if a := alertsOf(); len(a) != 1 || len(st.messages) != 1 || !strings.HasPrefix(st.messages[0], "Alert: ") {
		t.Fatalf("after holding %s: alerts %+v, messages %q", set.OpenAfter, a, st.messages)
	}
	pass(up, time.Minute)
	pass(down, time.Minute) // cleared for a minute only: still the same open alert
	pass(up, time.Minute)
	pass(up, set.CloseAfter)
	if a := alertsOf(); a[0].ResolvedAt == nil || len(st.messages) != 2 || !strings.HasPrefix(st.messages[1], "Recovered: ") {
		t.Fatalf("after clearing %s: %+v, %q", set.CloseAfter, a, st.messages)
	}
	// It comes back within the hour: folded, told once.
	for range 3 {
		pass(down, time.Minute)
		pass(down, set.OpenAfter)
		pass(up, time.Minute)
		pass(up, set.CloseAfter)
	}
	a := alertsOf()
	if len(a) != 1 || a[0].Flaps != 1 || len(st.messages) != 3 || !strings.HasPrefix(st.messages[2], "Flapping: ") {
		t.Fatalf("a flapping condition: alerts %+v, messages %q; want one alert, told of the flapping once", a, st.messages)
	}
	// A flapping alert resolves once clear for FoldWindow.
	pass(up, FoldWindow)
	if a := alertsOf(); a[0].ResolvedAt == nil || len(st.messages) != 4 || !strings.HasPrefix(st.messages[3], "Recovered: ") {
		t.Fatalf("after an hour clear: %+v, %q", a, st.messages)
	}
	// Muted: the alert opens and resolves, and tells no one.
	st.mutes = []Mute{{ListingID: 1, Kind: UptimePenalty, Until: c.t.Add(24 * time.Hour)}}
	pass(up, 2*FoldWindow)
	pass(down, time.Minute)
	pass(down, set.OpenAfter)
	if a := alertsOf(); len(a) != 2 || a[1].ResolvedAt != nil || len(st.messages) != 4 {
		t.Fatalf("muted: alerts %+v, messages %q; want a second alert open and no message", a, st.messages)
	}
	// The rule turned off: the open alert resolves quietly, none opens.
	st.rules = map[int64]CarrierRules{9: {UptimePenalty: Setting{On: false, OpenAfter: set.OpenAfter, CloseAfter: set.CloseAfter}}}
	st.mutes = nil
	pass(down, time.Minute)
	pass(down, time.Hour)
	if a := alertsOf(); len(a) != 2 || a[1].ResolvedAt == nil || len(st.messages) != 4 {
		t.Errorf("a rule turned off: alerts %+v, messages %q", a, st.messages)
	}
}

func TestStep(t *testing.T) {
	now := time.Date(2026, 12, 4, 14, 0, 0, 0, time.UTC)
	ago := func(d time.Duration) time.Time { return now.Add(-d) }
	resolvedAgo := func(d time.Duration) *Alert { r := ago(d); return &Alert{ResolvedAt: &r} }
	def := Setting{On: true, OpenAfter: 5 * time.Minute, CloseAfter: 15 * time.Minute}
	for _, test := range []struct {
		name     string
		set      Setting
		cond     Condition
		open     *Alert
		resolved *Alert
		want     Action
	}{
		{"holds, not yet long enough", def, Condition{Holds: true, Since: ago(4 * time.Minute)}, nil, nil, Nothing},
		{"holds long enough", def, Condition{Holds: true, Since: ago(5 * time.Minute)}, nil, nil, Open},
		{"holds, already open", def, Condition{Holds: true, Since: ago(time.Hour)}, &Alert{}, nil, Nothing},
		{"back within the hour of resolving", def, Condition{Holds: true, Since: ago(5 * time.Minute)}, nil, resolvedAgo(30 * time.Minute), Fold},
		{"back after the hour", def, Condition{Holds: true, Since: ago(5 * time.Minute)}, nil, resolvedAgo(61 * time.Minute), Open},
		{"clear, not yet long enough", def, Condition{Since: ago(14 * time.Minute)}, &Alert{}, nil, Nothing},
		{"clear long enough", def, Condition{Since: ago(15 * time.Minute)}, &Alert{}, nil, Resolve},
		{"flapping, clear 15 minutes", def, Condition{Since: ago(15 * time.Minute)}, &Alert{Flaps: 2}, nil, Nothing},
		{"flapping, clear an hour", def, Condition{Since: ago(time.Hour)}, &Alert{Flaps: 2}, nil, Resolve},
		{"clear, nothing open", def, Condition{Since: ago(time.Hour)}, nil, nil, Nothing},
		{"opens at once", Setting{On: true}, Condition{Holds: true, Since: now}, nil, nil, Open},
		{"off, open", Setting{}, Condition{Holds: true, Since: ago(time.Hour)}, &Alert{}, nil, Retire},
		{"off, nothing open", Setting{}, Condition{Holds: true, Since: ago(time.Hour)}, nil, nil, Nothing},
	} {
		if got := Step(test.set, test.cond, test.open, test.resolved, now); got != test.want {
			t.Errorf("%s: %v, want %v", test.name, got, test.want)
		}
	}
}

func TestParseSetting(t *testing.T) {
	for _, test := range []struct {
		kind                       Kind
		on, open, close, threshold string
		want                       Setting
		bad                        []string
	}{
		{AtCap, "on", "5", "30", "20", Setting{On: true, OpenAfter: 5 * time.Minute, CloseAfter: 30 * time.Minute, Threshold: 20}, nil},
		{AtCap, "", "0", "0", "20 min", Setting{Threshold: 20}, nil},
		{FailureBreaker, "on", "5", "15", "2.5", Setting{On: true, OpenAfter: 5 * time.Minute, CloseAfter: 15 * time.Minute, Threshold: 2.5}, nil},
		{UptimePenalty, "on", "10", "10", "", Setting{On: true, OpenAfter: 10 * time.Minute, CloseAfter: 10 * time.Minute}, nil},
		{AtCap, "on", "five", "-1", "61", Setting{}, []string{"at_cap-open", "at_cap-close", "at_cap-threshold"}},
		{ShareDown, "on", "60", "360", "12.5", Setting{}, []string{"share_down-threshold"}},
		{RankMoved, "on", "10", "15", "", Setting{}, []string{"rank_moved-threshold"}},
	} {
		got, errs := ParseSetting(test.kind, test.on, test.open, test.close, test.threshold)
		if len(errs) != len(test.bad) {
			t.Errorf("%s %v: errors %v, want on %v", test.kind, test, errs, test.bad)
			continue
		}
		for _, f := range test.bad {
			if errs[f] == "" {
				t.Errorf("%s: no message for %s: %v", test.kind, f, errs)
			}
		}
		if len(test.bad) == 0 && got != test.want {
			t.Errorf("%s: %+v, want %+v", test.kind, got, test.want)
		}
	}
}

func TestDigestEmail(t *testing.T) {
	from := time.Date(2026, 12, 3, 7, 0, 0, 0, time.UTC)
	opened, resolved := from.Add(3*time.Hour), from.Add(4*time.Hour)
	subject, body := DigestEmail([]Alert{
		{Listing: "nebula/kimi-k2.5", Kind: UptimePenalty, Detail: "uptime 90.0 % over the last 10 minutes", OpenedAt: opened, Flaps: 2},
		{Listing: "nebula/glm-5", Kind: AtCap, Detail: "requests turned away at the cap in 20 of the last 60 minutes", OpenedAt: opened, ResolvedAt: &resolved},
	}, from, from.Add(24*time.Hour))
	if subject != "Airside daily digest: 1 open, 1 resolved" {
		t.Errorf("subject %q", subject)
	}
	for _, want := range []string{"from 3 Dec 07:00 to 4 Dec 07:00 UTC", "Open now (1):\n- nebula/kimi-k2.5 is uptime under 95 %", "came back twice",
		"Resolved (1):\n- nebula/glm-5 is at its rate cap", "resolved 3 Dec 11:00 UTC"} {
		if !strings.Contains(body, want) {
			t.Errorf("the digest does not say %q:\n%s", want, body)
		}
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
		f, known := Judge(Rules{}, nil, s)[test.kind]
		if known != test.known || f.Holds != test.holds {
			t.Errorf("%s: holds %v (judged %v), want %v (%v): %s", test.name, f.Holds, known, test.holds, test.known, f.Detail)
		}
		if known && f.Detail == "" {
			t.Errorf("%s: no words for the finding", test.name)
		}
	}
}
