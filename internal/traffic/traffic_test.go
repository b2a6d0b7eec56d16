package traffic_test

import (
	"math/rand/v2"
	"testing"
	"time"

	"github.com/airside/airside/internal/election"
	"github.com/airside/airside/internal/traffic"
)

func TestClassOfStatus(t *testing.T) {
	for _, test := range []struct {
		status int
		want   traffic.Class
	}{
		{200, traffic.Served}, {201, traffic.Served},
		{500, traffic.Counted}, {502, traffic.Counted}, {503, traffic.Counted}, {504, traffic.Counted},
		{401, traffic.Counted}, {402, traffic.Counted}, {404, traffic.Counted}, {405, traffic.Counted},
		{408, traffic.Counted}, {410, traffic.Counted}, {421, traffic.Counted}, {423, traffic.Counted},
		{424, traffic.Counted}, {426, traffic.Counted}, {498, traffic.Counted},
		{400, traffic.NotCounted}, {413, traffic.NotCounted}, {422, traffic.NotCounted}, {403, traffic.NotCounted},
		{451, traffic.NotCounted}, {499, traffic.NotCounted}, {418, traffic.NotCounted},
		{429, traffic.RateLimited},
		{302, traffic.Counted},
	} {
		if got := traffic.ClassOfStatus(test.status); got != test.want {
			t.Errorf("ClassOfStatus(%d) = %s, want %s", test.status, got, test.want)
		}
	}
	for c, want := range map[traffic.Class]bool{traffic.Served: false, traffic.Counted: true, traffic.NotCounted: false, traffic.RateLimited: true} {
		if c.FallsBack() != want {
			t.Errorf("%s.FallsBack() = %v, want %v", c, !want, want)
		}
	}
}

func f(v float64) *float64 { return &v }

// ballot is three candidates of one model, a, b and c, with the given input
// prices (output 1) and uptimes.
func ballot(mode election.Mode, prices [3]float64, uptimes [3]float64) *election.Ballot {
	b := &election.Ballot{Request: election.Request{Model: "m", Routing: mode, PromptTokens: 100}}
	for i, id := range []string{"a", "b", "c"} {
		b.Candidates = append(b.Candidates, election.Candidate{ID: id,
			Metrics: election.Metrics{Uptime: f(uptimes[i])},
			Fare:    election.Fare{Input: prices[i], Output: 1}})
	}
	return b
}

func TestHolderKeepsTheIncumbentInsideTheMargin(t *testing.T) {
	for _, test := range []struct {
		name      string
		prices    [3]float64
		uptimes   [3]float64
		incumbent string
		want      string
		kept      bool
	}{
		{"no incumbent: the winner", [3]float64{1, 2, 3}, [3]float64{100, 100, 100}, "", "a", false},
		{"the incumbent is the winner", [3]float64{1, 2, 3}, [3]float64{100, 100, 100}, "a", "a", true},
		{"a challenger slightly cheaper: the incumbent keeps it", [3]float64{1, 1.1, 3}, [3]float64{100, 100, 100}, "b", "b", true},
		{"a challenger far cheaper: it moves", [3]float64{1, 2, 3}, [3]float64{100, 100, 100}, "b", "a", false},
		{"the incumbent under 85 % uptime: it moves", [3]float64{1, 1.01, 3}, [3]float64{100, 84, 100}, "b", "a", false},
		{"the incumbent off the ballot: the winner", [3]float64{1, 2, 3}, [3]float64{100, 100, 100}, "gone", "a", false},
	} {
		t.Run(test.name, func(t *testing.T) {
			b := ballot(election.ModeAuto, test.prices, test.uptimes)
			res := election.Elect(b)
			i, kept := traffic.Holder(b, &res, test.incumbent)
			if res.Candidates[i].ID != test.want || kept != test.kept {
				t.Errorf("holder %s (kept %v), want %s (kept %v); scores %v %v %v", res.Candidates[i].ID, kept, test.want, test.kept,
					res.Candidates[0].Score, res.Candidates[1].Score, res.Candidates[2].Score)
			}
		})
	}
}

func TestIncumbentsFollowTheirShape(t *testing.T) {
	var in traffic.Incumbents
	b := ballot(election.ModeAuto, [3]float64{1, 1.1, 3}, [3]float64{100, 100, 100})
	shape := traffic.ShapeOf(&b.Request)
	res := election.Elect(b)
	if got := res.Candidates[in.Hold(shape, b, &res)].ID; got != "a" {
		t.Fatalf("first election held by %s, want the winner a", got)
	}
	// a is now slightly dearer than b: within the margin, a keeps the shape.
	b.Candidates[0].Fare.Input = 1.2
	res = election.Elect(b)
	if res.WinnerID() != "b" {
		t.Fatalf("b should win the election itself, won by %s", res.WinnerID())
	}
	if got := res.Candidates[in.Hold(shape, b, &res)].ID; got != "a" {
		t.Errorf("the incumbent a lost its shape inside the margin to %s", got)
	}
	// Another shape (a large prompt) has its own incumbent.
	big := *b
	big.Request.PromptTokens = 50000
	res = election.Elect(&big)
	if got := res.Candidates[in.Hold(traffic.ShapeOf(&big.Request), &big, &res)].ID; got != "b" {
		t.Errorf("a new shape is held by %s, want its own winner b", got)
	}
}

// TestTheLimitsAndTheIncumbent: an incumbent the 429 backoff holds back
// is served around for now and keeps its shape for when it is back (a
// short-term backoff is not a lost election); a slow one loses it.
func TestTheLimitsAndTheIncumbent(t *testing.T) {
	var in traffic.Incumbents
	b := ballot(election.ModeAuto, [3]float64{1, 1.1, 3}, [3]float64{100, 100, 100})
	shape := traffic.ShapeOf(&b.Request)
	res := election.Elect(b)
	in.Hold(shape, b, &res)
	b.Candidates[0].Fare.Input = 1.2 // b wins the election; a, the incumbent, within the margin
	b.Candidates[0].State.Backoff = true
	res = election.Elect(b)
	if got := res.Candidates[in.Hold(shape, b, &res)].ID; got != "b" {
		t.Fatalf("during a's backoff the shape went to %s, want b", got)
	}
	b.Candidates[0].State.Backoff = false
	res = election.Elect(b)
	if got := res.Candidates[in.Hold(shape, b, &res)].ID; got != "a" {
		t.Errorf("after its backoff the incumbent a did not have its shape back: %s", got)
	}
	b.Candidates[0].State.Slow = true
	res = election.Elect(b)
	if got := res.Candidates[in.Hold(shape, b, &res)].ID; got != "b" {
		t.Fatalf("a slow incumbent kept its shape: %s", got)
	}
	b.Candidates[0].State.Slow = false
	res = election.Elect(b)
	if got := res.Candidates[in.Hold(shape, b, &res)].ID; got != "b" {
		t.Errorf("the shape a lost while slow went back to %s, want b, the incumbent now", got)
	}
}

func TestExplorationIsAboutOnePercentAndNeverTheHolder(t *testing.T) {
	rng := rand.New(rand.NewPCG(1, 2))
	b := ballot(election.ModeAuto, [3]float64{1, 2, 3}, [3]float64{100, 100, 100})
	res := election.Elect(b)
	const n = 200000
	explored := map[string]int{}
	for range n {
		if i, ok := traffic.Explore(&b.Request, &res, 0, rng.Float64(), rng.Float64()); ok {
			explored[res.Candidates[i].ID]++
		}
	}
	total := explored["b"] + explored["c"]
	if explored["a"] != 0 {
		t.Errorf("the holder was explored %d times", explored["a"])
	}
	// 1 % of 200,000 is 2,000 with a standard deviation of about 44.
	if total < 1800 || total > 2200 {
		t.Errorf("explored %d of %d requests, want about 1 %%", total, n)
	}
	if explored["b"] < total/3 || explored["c"] < total/3 {
		t.Errorf("exploration is not uniform: %v", explored)
	}
	for _, mode := range []election.Mode{election.ModePrice, election.ModeThroughput, election.ModeLatency} {
		other := ballot(mode, [3]float64{1, 2, 3}, [3]float64{100, 100, 100})
		r := election.Elect(other)
		if _, ok := traffic.Explore(&other.Request, &r, 0, 0, 0.5); ok {
			t.Errorf("explored under %v routing", mode)
		}
	}
	// After a fall-open every candidate is capped: nothing is explored.
	capped := ballot(election.ModeAuto, [3]float64{1, 2, 3}, [3]float64{100, 100, 100})
	for i := range capped.Candidates {
		one := int64(1)
		capped.Candidates[i].Fare.MaxRPM = &one
		capped.Candidates[i].Usage.RPM = 1
	}
	r := election.Elect(capped)
	if !r.FellOpen {
		t.Fatal("the election should fall open")
	}
	if _, ok := traffic.Explore(&capped.Request, &r, 0, 0, 0.5); ok {
		t.Error("explored a capped candidate after a fall-open")
	}
}

func TestFallbackOrderIsFirstThenByRankAtMostThree(t *testing.T) {
	b := ballot(election.ModeAuto, [3]float64{1, 2, 3}, [3]float64{100, 100, 100})
	b.Candidates = append(b.Candidates, election.Candidate{ID: "d", Fare: election.Fare{Input: 4, Output: 1}})
	res := election.Elect(b)
	got := traffic.FallbackOrder(&res, 2)
	if len(got) != 3 || got[0] != 2 || got[1] != 0 || got[2] != 1 {
		t.Errorf("FallbackOrder from c = %v, want [2 0 1]", got)
	}
}

func TestCapsCountPerWindowAndOrganisation(t *testing.T) {
	var caps traffic.Caps
	now := time.Date(2026, 12, 2, 10, 59, 30, 0, time.UTC)
	for range 3 {
		caps.Take("a", "org1", true, now)
	}
	caps.Take("a", "org2", true, now)
	caps.Take("b", "org1", false, now)
	caps.Take("b", "org2", false, now)
	for _, test := range []struct {
		name   string
		id     string
		org    string
		perOrg bool
		at     time.Time
		want   election.Usage
	}{
		{"per org, its own count", "a", "org1", true, now, election.Usage{RPM: 3, RPD: 3}},
		{"per org, another org", "a", "org2", true, now, election.Usage{RPM: 1, RPD: 1}},
		{"global counts every org", "b", "org1", false, now, election.Usage{RPM: 2, RPD: 2}},
		{"a new minute, the same day", "a", "org1", true, now.Add(time.Minute), election.Usage{RPM: 0, RPD: 3}},
	} {
		if got := caps.Usage(test.id, test.org, test.perOrg, test.at); got != test.want {
			t.Errorf("%s: usage %+v, want %+v", test.name, got, test.want)
		}
	}
	if got := caps.Usage("a", "org1", true, now.Add(14*time.Hour)); got != (election.Usage{}) {
		t.Errorf("a new day: usage %+v, want zero", got)
	}
}

func TestSessionsForgetIdleOnes(t *testing.T) {
	var s traffic.Sessions
	now := time.Date(2026, 12, 2, 10, 0, 0, 0, time.UTC)
	k := traffic.SessionKey{Project: "p", Model: "m", ID: "s1"}
	s.Pin(k, traffic.SessionPin{Listing: "b", Region: "DE"}, now)
	if got, ok := s.Pinned(k, now.Add(30*time.Minute)); !ok || got != (traffic.SessionPin{Listing: "b", Region: "DE"}) {
		t.Errorf("pinned %+v %v half an hour later, want b in DE", got, ok)
	}
	if _, ok := s.Pinned(traffic.SessionKey{Project: "other", Model: "m", ID: "s1"}, now); ok {
		t.Error("another project's session of the same id is pinned")
	}
	if _, ok := s.Pinned(k, now.Add(traffic.SessionIdle+time.Second)); ok {
		t.Error("a session idle past SessionIdle is still pinned")
	}
}

func TestLearnGatesAndPrecedence(t *testing.T) {
	now := time.Date(2026, 12, 2, 10, 30, 0, 0, time.UTC)
	hour := func(ago int, id string, ok, in, cached, out, hits int64) traffic.Hour {
		return traffic.Hour{Start: now.Truncate(time.Hour).Add(-time.Duration(ago) * time.Hour), Candidate: id,
			Successes: ok, InputTokens: in, CachedInputTokens: cached, OutputTokens: out, ResponseCacheHits: hits}
	}
	for _, test := range []struct {
		name         string
		hours        []traffic.Hour
		wantOwn      map[string]float64
		wantCombined *float64
		wantRatio    *float64
	}{
		{"under the request gate", []traffic.Hour{hour(1, "a", 19, 100000, 50000, 1000, 0)}, map[string]float64{}, nil, nil},
		{"under the token gate", []traffic.Hour{hour(1, "a", 50, 19999, 10000, 1000, 0)}, map[string]float64{}, nil, nil},
		{"past both: own and combined", []traffic.Hour{hour(1, "a", 20, 20000, 10000, 2000, 0)},
			map[string]float64{"a": 0.5}, f(0.5), f(0.1)},
		{"two listings, one past the gates alone, both together", []traffic.Hour{
			hour(1, "a", 20, 20000, 16000, 400, 0), hour(2, "b", 10, 10000, 1000, 600, 0)},
			map[string]float64{"a": 0.8}, f(17000.0 / 30000), f(1000.0 / 30000)},
		{"an hour with response-cache hits is left out", []traffic.Hour{
			hour(1, "a", 20, 20000, 10000, 2000, 0), hour(2, "a", 100, 100000, 100000, 0, 3)},
			map[string]float64{"a": 0.5}, f(0.5), f(0.1)},
		{"older than a day is left out", []traffic.Hour{hour(25, "a", 20, 20000, 10000, 2000, 0)}, map[string]float64{}, nil, nil},
	} {
		t.Run(test.name, func(t *testing.T) {
			got := traffic.Learn(test.hours, now)
			if len(got.HitRate) != len(test.wantOwn) {
				t.Errorf("own rates %v, want %v", got.HitRate, test.wantOwn)
			}
			for id, want := range test.wantOwn {
				if !near(got.HitRate[id], want) {
					t.Errorf("own rate of %s = %v, want %v", id, got.HitRate[id], want)
				}
			}
			for _, p := range []struct {
				name      string
				got, want *float64
			}{{"combined", got.Combined, test.wantCombined}, {"output ratio", got.OutputRatio, test.wantRatio}} {
				if (p.got == nil) != (p.want == nil) || (p.got != nil && !near(*p.got, *p.want)) {
					t.Errorf("%s = %v, want %v", p.name, deref(p.got), deref(p.want))
				}
			}
		})
	}
}

func near(a, b float64) bool { return a-b < 1e-12 && b-a < 1e-12 }

func deref(p *float64) any {
	if p == nil {
		return nil
	}
	return *p
}
