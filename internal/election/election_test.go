package election_test

import (
	"cmp"
	"fmt"
	"math"
	"math/rand/v2"
	"slices"
	"testing"
	"time"

	"github.com/airside/airside/internal/election"
)

func f(v float64) *float64 { return &v }
func n(v int64) *int64     { return &v }

func cand(id string, input, output float64) election.Candidate {
	return election.Candidate{ID: id, Fare: election.Fare{Input: input, Output: output}}
}

func TestResolvePrices(t *testing.T) {
	// A Wednesday, 2026-12-02, in UTC.
	wed := func(hour int) time.Time { return time.Date(2026, 12, 2, hour, 0, 0, 0, time.UTC) }
	timeBased := &election.TimeBased{
		PeakHours: []election.PeakWindow{{Start: 1, End: 4}, {Start: 6, End: 10}},
		Peak:      election.PriceBlock{Input: f(0.66), Output: f(2.64), CachedInput: f(0.36)},
		OffPeak:   election.PriceBlock{Input: f(0.33), Output: f(1.32)}, // no cached price in this block
	}
	tiers := []election.Tier{
		{AboveTokens: 32768, PriceBlock: election.PriceBlock{Input: f(1.10), Output: f(4.40)}},
		{AboveTokens: 128000, PriceBlock: election.PriceBlock{Input: f(2.20)}},
	}
	for _, test := range []struct {
		name   string
		fare   election.Fare
		at     time.Time
		prompt int64
		want   election.Prices
	}{
		{"base prices", election.Fare{Input: 0.55, Output: 2.2, CachedInput: f(0.3)}, wed(0), 100,
			election.Prices{Input: 0.55, Output: 2.2, CachedInput: 0.3, HasCachedInput: true}},
		{"no cached price", election.Fare{Input: 0.55, Output: 2.2}, wed(0), 100,
			election.Prices{Input: 0.55, Output: 2.2}},
		{"tier edge exactly at aboveTokens stays in the lower tier", election.Fare{Input: 0.55, Output: 2.2, Tiers: tiers}, wed(0), 32768,
			election.Prices{Input: 0.55, Output: 2.2}},
		{"one token above the edge takes the tier", election.Fare{Input: 0.55, Output: 2.2, Tiers: tiers}, wed(0), 32769,
			election.Prices{Input: 1.10, Output: 4.40}},
		{"largest applicable tier wins and overrides only its fields", election.Fare{Input: 0.55, Output: 2.2, Tiers: []election.Tier{tiers[1], tiers[0]}}, wed(0), 200000,
			election.Prices{Input: 2.20, Output: 2.2}},
		{"peak window start is inside", election.Fare{Input: 0.55, Output: 2.2, TimeBased: timeBased}, wed(1), 100,
			election.Prices{Input: 0.66, Output: 2.64, CachedInput: 0.36, HasCachedInput: true}},
		{"peak window end is exclusive", election.Fare{Input: 0.55, Output: 2.2, TimeBased: timeBased}, wed(4), 100,
			election.Prices{Input: 0.33, Output: 1.32}},
		{"second peak window", election.Fare{Input: 0.55, Output: 2.2, TimeBased: timeBased}, wed(9), 100,
			election.Prices{Input: 0.66, Output: 2.64, CachedInput: 0.36, HasCachedInput: true}},
		{"off-peak block keeps the base cached price it does not set", election.Fare{Input: 0.55, Output: 2.2, CachedInput: f(0.3), TimeBased: timeBased}, wed(12), 100,
			election.Prices{Input: 0.33, Output: 1.32, CachedInput: 0.3, HasCachedInput: true}},
		{"tier overrides the time block", election.Fare{Input: 0.55, Output: 2.2, TimeBased: timeBased, Tiers: tiers}, wed(2), 40000,
			election.Prices{Input: 1.10, Output: 4.40, CachedInput: 0.36, HasCachedInput: true}},
		{"before the effective date the block does not apply", election.Fare{Input: 0.55, Output: 2.2, TimeBased: withEffective(timeBased, wed(2).Add(time.Minute))}, wed(2), 100,
			election.Prices{Input: 0.55, Output: 2.2}},
		{"at the effective date the block applies", election.Fare{Input: 0.55, Output: 2.2, TimeBased: withEffective(timeBased, wed(2))}, wed(2), 100,
			election.Prices{Input: 0.66, Output: 2.64, CachedInput: 0.36, HasCachedInput: true}},
		{"unknown time applies no block", election.Fare{Input: 0.55, Output: 2.2, TimeBased: timeBased}, time.Time{}, 100,
			election.Prices{Input: 0.55, Output: 2.2}},
		// Saturday 23:00 UTC is Sunday 07:00 at UTC+8: an off-peak day there,
		// although hour... is not a peak hour anyway; use a peak hour instead.
		{"off-peak day across the UTC offset (Sat 18:00 UTC = Sun 02:00 at +8)", election.Fare{Input: 0.55, Output: 2.2, TimeBased: withDays(timeBased, []time.Weekday{0}, 480, [][2]int{{18, 20}})},
			time.Date(2026, 12, 5, 18, 0, 0, 0, time.UTC), 100,
			election.Prices{Input: 0.33, Output: 1.32}},
		{"same hour without the offset is peak (Saturday is not off-peak)", election.Fare{Input: 0.55, Output: 2.2, TimeBased: withDays(timeBased, []time.Weekday{0}, 0, [][2]int{{18, 20}})},
			time.Date(2026, 12, 5, 18, 0, 0, 0, time.UTC), 100,
			election.Prices{Input: 0.66, Output: 2.64, CachedInput: 0.36, HasCachedInput: true}},
		{"negative offset moves Monday 03:00 UTC back to Sunday", election.Fare{Input: 0.55, Output: 2.2, TimeBased: withDays(timeBased, []time.Weekday{0}, -300, [][2]int{{1, 4}})},
			time.Date(2026, 12, 7, 3, 0, 0, 0, time.UTC), 100,
			election.Prices{Input: 0.33, Output: 1.32}},
	} {
		t.Run(test.name, func(t *testing.T) {
			got := election.ResolvePrices(&test.fare, test.at, test.prompt)
			if got != test.want {
				t.Errorf("ResolvePrices mismatch:\n want %+v\n  got %+v", test.want, got)
			}
		})
	}
}

func withEffective(tb *election.TimeBased, at time.Time) *election.TimeBased {
	c := *tb
	c.EffectiveAt = at
	return &c
}

func withDays(tb *election.TimeBased, days []time.Weekday, offset int, peaks [][2]int) *election.TimeBased {
	c := *tb
	o := &election.OffPeakDays{UTCOffsetMinutes: offset}
	for _, d := range days {
		o.Days |= 1 << uint(d)
	}
	c.OffPeakDays = o
	c.PeakHours = nil
	for _, p := range peaks {
		c.PeakHours = append(c.PeakHours, election.PeakWindow{Start: p[0], End: p[1]})
	}
	return &c
}

func TestCacheRelevanceAndRates(t *testing.T) {
	for _, test := range []struct {
		name         string
		req          election.Request
		metrics      election.Metrics
		wantRelevant bool
		wantH, wantR float64
	}{
		{"small prompt is not cache-relevant", election.Request{PromptTokens: 4999}, election.Metrics{}, false, 0, 1},
		{"5000 tokens is cache-relevant with general defaults", election.Request{PromptTokens: 5000}, election.Metrics{}, true, 0.1, 0.2},
		{"session opener is cache-relevant whatever its size", election.Request{PromptTokens: 10, SessionOpening: true, Workload: election.WorkloadChat}, election.Metrics{}, true, 0.5, 0.1},
		{"coding defaults", election.Request{PromptTokens: 40000, Workload: election.WorkloadCoding}, election.Metrics{}, true, 0.9, 0.02},
		{"project observation beats the default", election.Request{PromptTokens: 9000, ObservedHitRate: f(0.4), ObservedOutputRatio: f(0.05)}, election.Metrics{}, true, 0.4, 0.05},
		{"candidate observation beats the project's", election.Request{PromptTokens: 9000, ObservedHitRate: f(0.4)}, election.Metrics{CacheHitRate: f(0.6)}, true, 0.6, 0.2},
		{"explicit override beats every observation", election.Request{PromptTokens: 9000, CacheHitRate: f(0.7), CacheOutputRatio: f(0.3), ObservedHitRate: f(0.4), ObservedOutputRatio: f(0.05)}, election.Metrics{CacheHitRate: f(0.6)}, true, 0.7, 0.3},
		{"h clamped to 1 and r to 0", election.Request{PromptTokens: 9000, CacheHitRate: f(1.5), CacheOutputRatio: f(-2)}, election.Metrics{}, true, 1, 0},
		{"h clamped to 0", election.Request{PromptTokens: 9000, CacheHitRate: f(-0.5)}, election.Metrics{}, true, 0, 0.2},
		{"overrides do not apply to small prompts", election.Request{PromptTokens: 100, CacheHitRate: f(0.7)}, election.Metrics{}, false, 0, 1},
	} {
		t.Run(test.name, func(t *testing.T) {
			c := cand("a", 0.5, 2)
			c.Metrics = test.metrics
			res := election.Elect(&election.Ballot{Request: test.req, Candidates: []election.Candidate{c}})
			o := res.Candidates[0]
			if res.CacheRelevant != test.wantRelevant || o.HitRate != test.wantH || o.OutputRatio != test.wantR {
				t.Errorf("got relevant=%v h=%v r=%v, want %v %v %v", res.CacheRelevant, o.HitRate, o.OutputRatio, test.wantRelevant, test.wantH, test.wantR)
			}
			// token price follows the formula with the full input price for the cached share
			wantToken := (0.5*test.wantH + 0.5*(1-test.wantH) + 2*test.wantR) / 2
			if !approx(o.TokenPrice, wantToken) {
				t.Errorf("token price %v, want %v", o.TokenPrice, wantToken)
			}
		})
	}
}

func approx(a, b float64) bool {
	return math.Abs(a-b) <= 1e-12*math.Max(1, math.Max(math.Abs(a), math.Abs(b)))
}

func TestExclusionAndFallOpen(t *testing.T) {
	tools := election.CapabilitySet(election.CapTools)
	toolsVision := election.CapabilitySet(election.CapTools, election.CapVision)
	capped := func(id string, rpm, usage int64) election.Candidate {
		c := cand(id, 0.5, 0.5)
		c.Capabilities = toolsVision
		c.Fare.MaxRPM = n(rpm)
		c.Usage.RPM = usage
		return c
	}
	for _, test := range []struct {
		name         string
		requires     election.Capabilities
		candidates   []election.Candidate
		wantWinner   string
		wantFellOpen bool
		wantReasons  map[string][]string
	}{
		{
			name:     "missing capability excludes, in flag order",
			requires: election.CapabilitySet(election.CapVision, election.CapTools),
			candidates: []election.Candidate{
				cand("none", 0.1, 0.1),
				func() election.Candidate { c := cand("tools-only", 0.2, 0.2); c.Capabilities = tools; return c }(),
				func() election.Candidate { c := cand("both", 0.9, 0.9); c.Capabilities = toolsVision; return c }(),
			},
			wantWinner:  "both",
			wantReasons: map[string][]string{"none": {"capability:tools", "capability:vision"}, "tools-only": {"capability:vision"}, "both": {}},
		},
		{
			name: "priority zero or below excludes",
			candidates: []election.Candidate{
				func() election.Candidate { c := cand("p0", 0.1, 0.1); c.Priority = f(0); return c }(),
				func() election.Candidate { c := cand("pneg", 0.1, 0.1); c.Priority = f(-1); return c }(),
				cand("ok", 0.9, 0.9),
			},
			wantWinner:  "ok",
			wantReasons: map[string][]string{"p0": {"priority"}, "pneg": {"priority"}, "ok": {}},
		},
		{
			name: "usage at the cap excludes, below does not",
			candidates: []election.Candidate{
				capped("at-cap", 10, 10),
				capped("below", 10, 9),
			},
			wantWinner:  "below",
			wantReasons: map[string][]string{"at-cap": {"rate_cap:rpm"}, "below": {}},
		},
		{
			name: "daily cap",
			candidates: []election.Candidate{
				func() election.Candidate {
					c := cand("day", 0.1, 0.1)
					c.Fare.MaxRPD = n(100)
					c.Usage.RPD = 150
					return c
				}(),
				cand("free-to-serve", 0.9, 0.9),
			},
			wantWinner:  "free-to-serve",
			wantReasons: map[string][]string{"day": {"rate_cap:rpd"}, "free-to-serve": {}},
		},
		{
			name:         "all capped falls open to the capped ones",
			candidates:   []election.Candidate{capped("a", 10, 10), capped("b", 5, 7)},
			wantWinner:   "a",
			wantFellOpen: true,
			wantReasons:  map[string][]string{"a": {}, "b": {}},
		},
		{
			name:     "fall-open never readmits a capability exclusion",
			requires: tools,
			candidates: []election.Candidate{
				func() election.Candidate { c := capped("capped-no-tools", 10, 10); c.Capabilities = 0; return c }(),
				capped("capped-tools", 10, 10),
			},
			wantWinner:   "capped-tools",
			wantFellOpen: true,
			wantReasons:  map[string][]string{"capped-no-tools": {"capability:tools", "rate_cap:rpm"}, "capped-tools": {}},
		},
		{
			name: "the gateway's limits exclude: backoff, an open breaker, a half-open one but for its probe",
			candidates: []election.Candidate{
				func() election.Candidate { c := cand("backoff", 0.1, 0.1); c.State.Backoff = true; return c }(),
				func() election.Candidate {
					c := cand("open", 0.1, 0.1)
					c.State.Breaker = election.BreakerOpen
					return c
				}(),
				func() election.Candidate {
					c := cand("half", 0.1, 0.1)
					c.State.Breaker = election.BreakerHalfOpen
					return c
				}(),
				func() election.Candidate { c := cand("slow", 0.2, 0.2); c.State.Slow = true; return c }(),
				cand("dear", 0.9, 0.9),
			},
			wantWinner: "slow",
			wantReasons: map[string][]string{"backoff": {"backoff"}, "open": {"breaker"}, "half": {"breaker"},
				"slow": {}, "dear": {}},
		},
		{
			name: "a half-open probe is eligible",
			candidates: []election.Candidate{
				func() election.Candidate {
					c := cand("probe", 0.1, 0.1)
					c.State.Breaker, c.State.Probe = election.BreakerHalfOpen, true
					return c
				}(),
				cand("dear", 0.9, 0.9),
			},
			wantWinner:  "probe",
			wantReasons: map[string][]string{"probe": {}, "dear": {}},
		},
		{
			name: "limits never fall open, and come before caps",
			candidates: []election.Candidate{
				func() election.Candidate { c := capped("capped-backoff", 10, 10); c.State.Backoff = true; return c }(),
				capped("capped", 10, 10),
			},
			wantWinner:   "capped",
			wantFellOpen: true,
			wantReasons:  map[string][]string{"capped-backoff": {"backoff", "rate_cap:rpm"}, "capped": {}},
		},
		{
			name:        "all excluded elects no one",
			requires:    tools,
			candidates:  []election.Candidate{cand("a", 1, 1), cand("b", 2, 2)},
			wantWinner:  "",
			wantReasons: map[string][]string{"a": {"capability:tools"}, "b": {"capability:tools"}},
		},
		{
			name:        "no candidates elects no one",
			wantWinner:  "",
			wantReasons: map[string][]string{},
		},
	} {
		t.Run(test.name, func(t *testing.T) {
			res := election.Elect(&election.Ballot{
				Request:    election.Request{Requires: test.requires},
				Candidates: test.candidates,
			})
			if got := res.WinnerID(); got != test.wantWinner {
				t.Errorf("winner %q, want %q", got, test.wantWinner)
			}
			if res.FellOpen != test.wantFellOpen {
				t.Errorf("fellOpen %v, want %v", res.FellOpen, test.wantFellOpen)
			}
			for _, o := range res.Candidates {
				reasons := o.Excluded.Reasons()
				want := test.wantReasons[o.ID]
				if len(reasons) != len(want) {
					t.Errorf("%s: reasons %v, want %v", o.ID, reasons, want)
					continue
				}
				for i := range want {
					if reasons[i] != want[i] {
						t.Errorf("%s: reasons %v, want %v", o.ID, reasons, want)
					}
				}
				if o.Eligible != (len(want) == 0) {
					t.Errorf("%s: eligible %v with reasons %v", o.ID, o.Eligible, reasons)
				}
			}
		})
	}
}

func TestFactorsAndScore(t *testing.T) {
	for _, test := range []struct {
		name       string
		req        election.Request
		candidates []election.Candidate
		check      func(t *testing.T, res election.Result)
	}{
		{
			name: "free candidate: paid ones score price over the cheapest paid",
			candidates: []election.Candidate{
				cand("free", 0, 0), cand("paid1", 1, 1), cand("paid2", 2, 2),
			},
			check: func(t *testing.T, res election.Result) {
				wantFactors(t, res, "price", map[string]float64{"free": 0, "paid1": 1, "paid2": 2})
			},
		},
		{
			name:       "all free score zero on price",
			candidates: []election.Candidate{cand("a", 0, 0), cand("b", 0, 0)},
			check: func(t *testing.T, res election.Result) {
				wantFactors(t, res, "price", map[string]float64{"a": 0, "b": 0})
			},
		},
		{
			name: "zero throughput scores 3, large gaps are capped at 3, missing counts as 50",
			candidates: []election.Candidate{
				withMetrics(cand("zero", 1, 1), election.Metrics{Throughput: f(0)}),
				withMetrics(cand("slow", 1, 1), election.Metrics{Throughput: f(10)}),
				withMetrics(cand("fast", 1, 1), election.Metrics{Throughput: f(100)}),
				cand("missing", 1, 1),
			},
			check: func(t *testing.T, res election.Result) {
				wantFactors(t, res, "throughput", map[string]float64{"zero": 3, "slow": 3, "fast": 0, "missing": 1})
			},
		},
		{
			name: "uptime ratio, zero uptime scores 1, missing counts as 100",
			candidates: []election.Candidate{
				withMetrics(cand("down", 1, 1), election.Metrics{Uptime: f(0)}),
				withMetrics(cand("half", 1, 1), election.Metrics{Uptime: f(50)}),
				cand("missing", 1, 1),
			},
			check: func(t *testing.T, res election.Result) {
				wantFactors(t, res, "uptime", map[string]float64{"down": 1, "half": 1, "missing": 0})
			},
		},
		{
			name: "latency weight applies when streaming; missing counts as 1000",
			req:  election.Request{Streaming: true},
			candidates: []election.Candidate{
				withMetrics(cand("fast", 1, 1), election.Metrics{LatencyMs: f(250)}),
				cand("missing", 1, 1),
			},
			check: func(t *testing.T, res election.Result) {
				wantFactors(t, res, "latency", map[string]float64{"fast": 0, "missing": 3})
				if res.Weights.Latency == 0 {
					t.Error("streaming request has no latency weight")
				}
				if s := res.Candidates[1].Score; !approx(s, 3*0.025/1.175) {
					t.Errorf("score %v, want %v", s, 3*0.025/1.175)
				}
			},
		},
		{
			name: "non-streaming drops the latency weight and renormalises",
			candidates: []election.Candidate{
				withMetrics(cand("fast", 1, 1), election.Metrics{LatencyMs: f(250)}),
				cand("missing", 1, 1),
			},
			check: func(t *testing.T, res election.Result) {
				if res.Weights.Latency != 0 {
					t.Errorf("latency weight %v on a non-streaming request", res.Weights.Latency)
				}
				if !approx(res.Weights.Price, 0.6/1.15) {
					t.Errorf("price weight %v, want %v", res.Weights.Price, 0.6/1.15)
				}
				if res.Candidates[1].Score != 0 {
					t.Errorf("latency moved a non-streaming score: %v", res.Candidates[1].Score)
				}
				// The factor itself is 0 for a non-streaming request (section 3).
				wantFactors(t, res, "latency", map[string]float64{"fast": 0, "missing": 0})
			},
		},
		{
			name: "a best latency of 0 ms gives every candidate a latency factor of 0",
			req:  election.Request{Streaming: true},
			candidates: []election.Candidate{
				withMetrics(cand("zero", 1, 1), election.Metrics{LatencyMs: f(0)}),
				withMetrics(cand("slow", 1, 1), election.Metrics{LatencyMs: f(900)}),
				cand("missing", 1, 1),
			},
			check: func(t *testing.T, res election.Result) {
				wantFactors(t, res, "latency", map[string]float64{"zero": 0, "slow": 0, "missing": 0})
				if res.Candidates[0].Score != res.Candidates[1].Score {
					t.Errorf("a 0 ms latency won on latency: scores %v and %v", res.Candidates[0].Score, res.Candidates[1].Score)
				}
			},
		},
		{
			name: "priority term: 1 - priority is added to the score",
			candidates: []election.Candidate{
				withPriority(cand("low", 1, 1), 0.5),
				withPriority(cand("high", 1.1, 1.1), 1.2),
			},
			check: func(t *testing.T, res election.Result) {
				if res.WinnerID() != "high" {
					t.Errorf("winner %s, want high", res.WinnerID())
				}
				if p := res.Candidates[0].PriorityPenalty; p != 0.5 {
					t.Errorf("priority penalty %v, want 0.5", p)
				}
			},
		},
		{
			name:       "ties go to the candidate listed first",
			candidates: []election.Candidate{cand("first", 1, 1), cand("second", 1, 1), cand("third", 1, 1)},
			check: func(t *testing.T, res election.Result) {
				for i, want := range []int{1, 2, 3} {
					if res.Candidates[i].Rank != want {
						t.Errorf("%s rank %d, want %d", res.Candidates[i].ID, res.Candidates[i].Rank, want)
					}
				}
			},
		},
		{
			name: "cache factor counts a cached price anywhere in the fare",
			req:  election.Request{PromptTokens: 10000},
			candidates: []election.Candidate{
				cand("none", 1, 1),
				func() election.Candidate {
					c := cand("tier", 1, 1)
					c.Fare.Tiers = []election.Tier{{AboveTokens: 1 << 20, PriceBlock: election.PriceBlock{CachedInput: f(0.1)}}}
					return c
				}(),
				func() election.Candidate {
					c := cand("peak", 1, 1)
					c.Fare.TimeBased = &election.TimeBased{Peak: election.PriceBlock{CachedInput: f(0.1)}}
					return c
				}(),
			},
			check: func(t *testing.T, res election.Result) {
				wantFactors(t, res, "cache", map[string]float64{"none": 1, "tier": 0, "peak": 0})
			},
		},
		{
			name: "routing modes pick their weights",
			req:  election.Request{Routing: election.ModeThroughput},
			candidates: []election.Candidate{
				withMetrics(cand("cheap-slow", 0.1, 0.1), election.Metrics{Throughput: f(20)}),
				withMetrics(cand("dear-fast", 5, 5), election.Metrics{Throughput: f(200)}),
			},
			check: func(t *testing.T, res election.Result) {
				if res.WinnerID() != "dear-fast" {
					t.Errorf("throughput mode elected %s", res.WinnerID())
				}
				if res.Weights.Price != 0 || !approx(res.Weights.Throughput, 0.9) {
					t.Errorf("weights %+v", res.Weights)
				}
			},
		},
	} {
		t.Run(test.name, func(t *testing.T) {
			res := election.Elect(&election.Ballot{Request: test.req, Candidates: test.candidates})
			test.check(t, res)
		})
	}
}

func TestAutoWeightsOverride(t *testing.T) {
	candidates := []election.Candidate{cand("none", 1, 1), func() election.Candidate {
		c := cand("cached", 1.05, 1.05)
		c.Fare.CachedInput = f(1.05)
		return c
	}()}
	override := &election.Weights{Price: 1, Cache: 1}
	for _, test := range []struct {
		name       string
		routing    election.Mode
		prompt     int64
		wantWinner string
		wantCacheW float64
	}{
		{"auto override enables the cache weight on cache-relevant requests", election.ModeAuto, 10000, "cached", 0.5},
		{"cache weight stays off below the cache threshold", election.ModeAuto, 100, "none", 0},
		{"other modes ignore the override", election.ModePrice, 10000, "none", 0},
	} {
		t.Run(test.name, func(t *testing.T) {
			res := election.Elect(&election.Ballot{
				Request:     election.Request{PromptTokens: test.prompt, Routing: test.routing},
				Candidates:  candidates,
				AutoWeights: override,
			})
			if res.WinnerID() != test.wantWinner || res.Weights.Cache != test.wantCacheW {
				t.Errorf("winner %s cache weight %v, want %s %v", res.WinnerID(), res.Weights.Cache, test.wantWinner, test.wantCacheW)
			}
		})
	}
}

func TestUptimePenalty(t *testing.T) {
	for _, test := range []struct {
		uptime, want float64
	}{
		{100, 0}, {95, 0}, {94.999, math.Pow(0.001/95*5, 2)}, {90, 0.06925207756232686}, {80, 0.6232686980609419}, {0, 25},
	} {
		if got := election.UptimePenalty(test.uptime); !approx(got, test.want) {
			t.Errorf("UptimePenalty(%v) = %v, want %v", test.uptime, got, test.want)
		}
	}
}

// TestFareFactor: the engine's float view of the fare formula. The exact
// one, with what the carrier keeps, is internal/fare's (TestFareFormula).
func TestFareFactor(t *testing.T) {
	for _, test := range []struct {
		name                        string
		filed, discount, landingFee float64
		wantEffective               float64
	}{
		{"baseline", 0.50, 0, 0.20, 0.50},
		{"30% landing fee", 0.50, 0, 0.30, 0.45},
		{"30% landing fee and 10% discount", 0.50, 0.10, 0.30, 0.405},
		{"lowest landing fee", 1, 0, election.MinLandingFee, 1.15},
		{"highest landing fee and discount", 1, election.MaxDiscount, election.MaxLandingFee, 0.35},
	} {
		t.Run(test.name, func(t *testing.T) {
			if got := test.filed * election.FareFactor(test.discount, test.landingFee); !approx(got, test.wantEffective) {
				t.Errorf("effective %v, want %v", got, test.wantEffective)
			}
		})
	}
}

func withMetrics(c election.Candidate, m election.Metrics) election.Candidate {
	c.Metrics = m
	return c
}
func withPriority(c election.Candidate, p float64) election.Candidate { c.Priority = f(p); return c }

func wantFactors(t *testing.T, res election.Result, factor string, want map[string]float64) {
	t.Helper()
	for _, o := range res.Candidates {
		w, ok := want[o.ID]
		if !ok {
			continue
		}
		got := map[string]float64{"price": o.Factors.Price, "uptime": o.Factors.Uptime, "throughput": o.Factors.Throughput,
			"latency": o.Factors.Latency, "cache": o.Factors.Cache}[factor]
		if !approx(got, w) {
			t.Errorf("%s %s factor %v, want %v", o.ID, factor, got, w)
		}
	}
}

// TestRankingLargeBallots: ranks on ballots large enough for the bucket sort
// follow score, and ties (many candidates with one fare) go to the one listed
// first.
func TestRankingLargeBallots(t *testing.T) {
	rng := rand.New(rand.NewPCG(5, 6))
	for _, test := range []struct {
		size   int
		random bool // prices drawn at random, clustered in a narrow band
	}{{8, false}, {24, false}, {25, false}, {255, false}, {256, false}, {300, false}, {5000, false},
		{9, true}, {24, true}, {25, true}, {257, true}, {4000, true}} {
		size := test.size
		b := benchBallotForTest(size)
		if test.random {
			for i := range b.Candidates {
				c := &b.Candidates[i]
				c.Fare.Input = 0.4 + rng.Float64()/1e6 // scores a hair apart
				if rng.IntN(4) == 0 {
					c.Fare.Input = 0.4 // and exact ties among them
				}
				c.Metrics.Uptime = f(95 + 5*rng.Float64())
			}
		}
		res := election.Elect(&b)
		type ranked struct {
			score float64
			index int
		}
		var want []ranked
		for i, o := range res.Candidates {
			if o.Eligible {
				want = append(want, ranked{o.Score, i})
			}
		}
		slices.SortFunc(want, func(a, b ranked) int {
			if a.score != b.score {
				return cmp.Compare(a.score, b.score)
			}
			return a.index - b.index
		})
		for rank, w := range want {
			if got := res.Candidates[w.index].Rank; got != rank+1 {
				t.Fatalf("%d candidates: %d has rank %d, want %d", size, w.index, got, rank+1)
			}
		}
		if res.Winner != want[0].index {
			t.Errorf("%d candidates: winner %d, want %d", size, res.Winner, want[0].index)
		}
	}
}

// benchBallotForTest is a ballot with many exact ties: 7 distinct fares.
func benchBallotForTest(n int) election.Ballot {
	b := election.Ballot{Request: election.Request{PromptTokens: 20000, Streaming: true}}
	for i := range n {
		c := cand(fmt.Sprintf("c%d", i), 0.4+float64(i%7)/10, 1.6)
		c.Metrics = election.Metrics{Uptime: f(99), LatencyMs: f(400), Throughput: f(60)}
		b.Candidates = append(b.Candidates, c)
	}
	return b
}
