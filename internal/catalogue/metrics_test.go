package catalogue

import (
	"context"
	"math"
	"reflect"
	"slices"
	"strings"
	"testing"
	"time"

	"github.com/airside/airside/internal/apperr"
)

var now = time.Date(2026, 11, 30, 12, 0, 30, 0, time.UTC)

func minute(ago int) time.Time {
	return now.Truncate(time.Minute).Add(-time.Duration(ago) * time.Minute)
}

func TestMinuteWeights(t *testing.T) {
	for age, want := range map[int]int64{-1: 0, 0: 10, 1: 3, 4: 3, 5: 1, 59: 1, 60: 0, 600: 0} {
		if got := MinuteWeight(age); got != want {
			t.Errorf("MinuteWeight(%d) = %d, want %d", age, got, want)
		}
	}
}

// TestDecayedWindowByHand: a bad last minute shows at once.
func TestDecayedWindowByHand(t *testing.T) {
	buckets := []Bucket{
		// this minute: 10 requests, 5 errors, 1 client error (weight 10)
		{Minute: minute(0), Counts: Counts{Requests: 10, Errors: 5, ClientErrors: 1, TTFTMsSum: 4 * 500, OutputTokens: 400, DurationMs: 8000}},
		// 3 minutes ago: 20 requests, all good (weight 3)
		{Minute: minute(3), Counts: Counts{Requests: 20, TTFTMsSum: 20 * 300, OutputTokens: 2000, DurationMs: 20000}},
		// 30 minutes ago: 100 requests, 1 error (weight 1)
		{Minute: minute(30), Counts: Counts{Requests: 100, Errors: 1, TTFTMsSum: 99 * 400, OutputTokens: 9900, DurationMs: 99000}},
		// 61 minutes ago: outside the window
		{Minute: minute(61), Counts: Counts{Requests: 1000, Errors: 1000}},
	}
	w := WindowOf(buckets, now)
	// Requests (less client errors): 10*9 + 3*20 + 1*100 = 250; successes: 10*4 + 3*20 + 1*99 = 199.
	if w.Requests != 250 || w.Successes != 199 {
		t.Fatalf("sums %+v", w)
	}
	h := HealthFrom(w, DaySums{})
	if want := 100 * 199.0 / 250; math.Abs(*h.UptimePct-want) > 1e-12 {
		t.Errorf("uptime %v, want %v", *h.UptimePct, want)
	}
	// TTFT: (10*2000 + 3*6000 + 39600) / 199
	if want := (10*2000.0 + 3*6000 + 39600) / 199; math.Abs(*h.LatencyMs-want) > 1e-9 {
		t.Errorf("latency %v, want %v", *h.LatencyMs, want)
	}
	// Throughput: (10*400 + 3*2000 + 9900) / ((10*8000 + 3*20000 + 99000)/1000)
	if want := (10*400.0 + 3*2000 + 9900) / ((10*8000.0 + 3*20000 + 99000) / 1000); math.Abs(*h.ThroughputTPS-want) > 1e-9 {
		t.Errorf("throughput %v, want %v", *h.ThroughputTPS, want)
	}
	if h.CacheHitRate != nil || h.OutputRatio != nil {
		t.Error("observed rates without a day of data")
	}
	if empty := HealthFrom(WindowOf(nil, now), DaySums{}); empty.UptimePct != nil || empty.LatencyMs != nil || empty.ThroughputTPS != nil {
		t.Error("health without traffic is not missing")
	}
}

func TestDayGates(t *testing.T) {
	for _, test := range []struct {
		name string
		day  DaySums
		pass bool
	}{
		{"both met", DaySums{Successes: 20, InputTokens: 20000, CachedInputTokens: 5000, OutputTokens: 1000}, true},
		{"19 requests", DaySums{Successes: 19, InputTokens: 50000}, false},
		{"19,999 tokens", DaySums{Successes: 100, InputTokens: 19999}, false},
	} {
		h := HealthFrom(WindowSums{}, test.day)
		if (h.CacheHitRate != nil) != test.pass {
			t.Errorf("%s: observed=%v, want %v", test.name, h.CacheHitRate != nil, test.pass)
		}
		if test.pass && (*h.CacheHitRate != 0.25 || *h.OutputRatio != 0.05) {
			t.Errorf("%s: hit rate %v, output ratio %v", test.name, *h.CacheHitRate, *h.OutputRatio)
		}
	}
	// Only the last 24 hours count.
	buckets := []Bucket{
		{Minute: minute(10), Counts: Counts{Requests: 15, InputTokens: 15000}},
		{Minute: minute(23 * 60), Counts: Counts{Requests: 5, InputTokens: 5000}},
		{Minute: minute(25 * 60), Counts: Counts{Requests: 500, InputTokens: 500000}},
	}
	if d := DayOf(buckets, now); d.Successes != 20 || d.InputTokens != 20000 || !PassesGates(d) {
		t.Errorf("day %+v", d)
	}
}

func TestBucketValidation(t *testing.T) {
	for _, test := range []struct {
		name  string
		b     Bucket
		field string
	}{
		{"negative", Bucket{Minute: minute(1), Counts: Counts{Requests: -1}}, "requests"},
		{"more errors than requests", Bucket{Minute: minute(1), Counts: Counts{Requests: 2, Errors: 2, ClientErrors: 1}}, "errors"},
		{"cached above input", Bucket{Minute: minute(1), Counts: Counts{InputTokens: 5, CachedInputTokens: 6}}, "cachedInputTokens"},
		{"seconds", Bucket{Minute: minute(1).Add(time.Second)}, "minute"},
		{"future", Bucket{Minute: minute(-5)}, "minute"},
		{"missing minute", Bucket{}, "minute"},
		{"too large", Bucket{Minute: minute(1), Counts: Counts{InputTokens: MaxBucketValue + 1}}, "inputTokens"},
	} {
		if errs := test.b.Validate(now); errs[test.field] == "" {
			t.Errorf("%s: no error on %s (%v)", test.name, test.field, errs)
		}
	}
	ok := Bucket{Minute: minute(1), Counts: Counts{Requests: 3, Errors: 1, ClientErrors: 1, InputTokens: 10, CachedInputTokens: 10}}
	if errs := ok.Validate(now); len(errs) > 0 {
		t.Errorf("valid bucket refused: %v", errs)
	}
}

type ingestStore struct {
	recorded [][]Bucket
	replay   []int
}

func (s *ingestStore) ListingIDsBySlug(context.Context) (map[string]int64, error) {
	return map[string]int64{"nebula/kimi": 7}, nil
}
func (s *ingestStore) RecordBatch(_ context.Context, b []Bucket, _ []Demand) error {
	if s.replay != nil {
		return &ReplayError{Indexes: s.replay}
	}
	s.recorded = append(s.recorded, b)
	return nil
}
func (s *ingestStore) DeleteBucketsBefore(context.Context, time.Time) (int64, error) { return 0, nil }
func (s *ingestStore) DeleteHourlyBefore(context.Context, time.Time) (int64, error)  { return 0, nil }
func (s *ingestStore) DeleteDemandBefore(context.Context, time.Time) (int64, error)  { return 0, nil }

func TestIngestBounds(t *testing.T) {
	now := time.Date(2026, 12, 1, 12, 0, 30, 0, time.UTC)
	minute := now.Truncate(time.Minute)
	for _, test := range []struct {
		name      string
		b         Bucket
		wantField string
	}{
		{"a good bucket", Bucket{Minute: minute, Counts: Counts{Requests: 10, Errors: 1, TTFTMsSum: 9 * 500, DurationMs: 9 * 4000}}, ""},
		{"two minutes ahead is fine", Bucket{Minute: minute.Add(2 * time.Minute), Counts: Counts{Requests: 1}}, ""},
		{"three minutes ahead is not", Bucket{Minute: minute.Add(3 * time.Minute), Counts: Counts{Requests: 1}}, "buckets[0].minute"},
		{"25 hours back is not", Bucket{Minute: minute.Add(-25*time.Hour - time.Minute), Counts: Counts{Requests: 1}}, "buckets[0].minute"},
		{"a latency of years is not", Bucket{Minute: minute, Counts: Counts{Requests: 1, TTFTMsSum: 3_260_000_000_000}}, "buckets[0].ttftMsSum"},
		{"a first token after 10 minutes is not", Bucket{Minute: minute, Counts: Counts{Requests: 2, TTFTMsSum: 2*MaxTTFTMs + 1}}, "buckets[0].ttftMsSum"},
		{"no success, no time", Bucket{Minute: minute, Counts: Counts{Requests: 3, Errors: 3, DurationMs: 5}}, "buckets[0].durationMs"},
		{"how requests came, within the successes", Bucket{Minute: minute, Counts: Counts{Requests: 10, Errors: 2,
			GatewayCounts: GatewayCounts{Routed: 5, Pinned: 1, Exploration: 1, Fallback: 1, RateLimited: 4, ToolCalls: 3, MalformedToolCalls: 1}}}, ""},
		{"more served than succeeded", Bucket{Minute: minute, Counts: Counts{Requests: 10, Errors: 2,
			GatewayCounts: GatewayCounts{Routed: 8, Fallback: 1}}}, "buckets[0].routed"},
		{"more malformed tool calls than tool calls", Bucket{Minute: minute, Counts: Counts{Requests: 1,
			GatewayCounts: GatewayCounts{ToolCalls: 1, MalformedToolCalls: 2}}}, "buckets[0].malformedToolCalls"},
		{"a negative 429 count", Bucket{Minute: minute, Counts: Counts{Requests: 1, GatewayCounts: GatewayCounts{RateLimited: -1}}}, "buckets[0].rateLimited"},
		{"cache reads and writes within the input", Bucket{Minute: minute, Counts: Counts{Requests: 1, InputTokens: 1000, CachedInputTokens: 300,
			GatewayCounts: GatewayCounts{CacheReadTokens: 400, CacheWriteTokens: 300}}}, ""},
		{"more cached, read and written than input", Bucket{Minute: minute, Counts: Counts{Requests: 1, InputTokens: 1000, CachedInputTokens: 300,
			GatewayCounts: GatewayCounts{CacheReadTokens: 400, CacheWriteTokens: 301}}}, "buckets[0].cacheReadTokens"},
	} {
		st := &ingestStore{}
		in := &Ingest{Store: st, Now: func() time.Time { return now }}
		_, err := in.Record(context.Background(), []PostedBucket{posted("nebula/kimi", test.b)})
		fields := apperr.FieldErrors(err)
		switch {
		case test.wantField == "" && err != nil:
			t.Errorf("%s: %v", test.name, err)
		case test.wantField != "" && fields[test.wantField] == "":
			t.Errorf("%s: fields %v, want %s", test.name, fields, test.wantField)
		}
	}
	st := &ingestStore{replay: []int{1}}
	in := &Ingest{Store: st, Now: func() time.Time { return now }}
	_, err := in.Record(context.Background(), []PostedBucket{posted("nebula/kimi", Bucket{Minute: minute, Counts: Counts{Requests: 1}}),
		posted("nebula/kimi", Bucket{Minute: minute.Add(-time.Minute), Counts: Counts{Requests: 2}})})
	if apperr.Code(err) != apperr.ECONFLICT || apperr.FieldErrors(err)["buckets[1]"] == "" {
		t.Errorf("a replay with other figures: %v %v", err, apperr.FieldErrors(err))
	}
}

func TestDemandChecks(t *testing.T) {
	now := time.Date(2026, 12, 1, 12, 0, 30, 0, time.UTC)
	minute := now.Truncate(time.Minute)
	in := &Ingest{Store: &ingestStore{}, Now: func() time.Time { return now }}
	yes, no := true, false
	for _, test := range []struct {
		name      string
		d         []Demand
		wantField string
	}{
		{"good rows", []Demand{{Model: "m", Workload: "coding", Minute: minute, Requests: 3, PromptTokens: 9000},
			{Model: "m", Workload: "general", Minute: minute, Requests: 1}}, ""},
		{"an unknown workload", []Demand{{Model: "m", Workload: "agentic", Minute: minute}}, "demand[0].workload"},
		{"no model", []Demand{{Workload: "chat", Minute: minute}}, "demand[0].model"},
		{"a minute not on the minute", []Demand{{Model: "m", Workload: "chat", Minute: minute.Add(time.Second)}}, "demand[0].minute"},
		{"the same row twice", []Demand{{Model: "m", Workload: "chat", Minute: minute}, {Model: "m", Workload: "chat", Minute: minute}}, "demand[1].minute"},
		{"negative requests", []Demand{{Model: "m", Workload: "chat", Minute: minute, Requests: -1}}, "demand[0].requests"},
		{"a split minute", []Demand{{Model: "m", Workload: "general", Minute: minute, Requests: 3, PromptTokens: 9000,
			LargeRequests: count(1), LargePromptTokens: count(6000)}}, ""},
		{"more large requests than requests", []Demand{{Model: "m", Workload: "general", Minute: minute, Requests: 3, PromptTokens: 9000,
			LargeRequests: count(4), LargePromptTokens: count(6000)}}, "demand[0].largeRequests"},
		{"more large prompt tokens than prompt tokens", []Demand{{Model: "m", Workload: "general", Minute: minute, Requests: 3, PromptTokens: 9000,
			LargeRequests: count(1), LargePromptTokens: count(9001)}}, "demand[0].largePromptTokens"},
		{"a split without its tokens", []Demand{{Model: "m", Workload: "general", Minute: minute, Requests: 3, PromptTokens: 9000,
			LargeRequests: count(1)}}, "demand[0].largeRequests"},
		{"a minute split by kind", []Demand{{Model: "m", Workload: "general", Minute: minute, Requests: 3, Streaming: &yes},
			{Model: "m", Workload: "general", Minute: minute, Requests: 2, Streaming: &no},
			{Model: "m", Workload: "general", Minute: minute, Requests: 1, Streaming: &no, Requires: []string{"vision", "json_output"}},
			{Model: "m", Workload: "general", Minute: minute, Requests: 4}}, ""},
		{"one kind twice, its capabilities in another order", []Demand{
			{Model: "m", Workload: "general", Minute: minute, Requests: 1, Streaming: &no, Requires: []string{"vision", "json_output"}},
			{Model: "m", Workload: "general", Minute: minute, Requests: 1, Streaming: &no, Requires: []string{"json_output", "vision"}}}, "demand[1].minute"},
		{"a capability that is not one", []Demand{{Model: "m", Workload: "chat", Minute: minute, Streaming: &yes, Requires: []string{"telepathy"}}},
			"demand[0].requires"},
		{"requires without streaming", []Demand{{Model: "m", Workload: "chat", Minute: minute, Requires: []string{"vision"}}}, "demand[0].requires"},
	} {
		err := in.CheckDemand(test.d)
		fields := apperr.FieldErrors(err)
		switch {
		case test.wantField == "" && err != nil:
			t.Errorf("%s: %v", test.name, err)
		case test.wantField != "" && fields[test.wantField] == "":
			t.Errorf("%s: fields %v, want %s", test.name, fields, test.wantField)
		}
	}
}

// TestZeroLatencyIsNoMeasurement: a window whose successful requests report
// no time to first token has no latency, not the best one.
func TestZeroLatencyIsNoMeasurement(t *testing.T) {
	h := HealthFrom(WindowSums{Requests: 10, Successes: 10, TTFTMsSum: 0, OutputTokens: 100, DurationMs: 1000}, DaySums{})
	if h.LatencyMs != nil {
		t.Errorf("latency %v from no measurement", *h.LatencyMs)
	}
	h = HealthFrom(WindowSums{Requests: 10, Successes: 10, TTFTMsSum: 4000}, DaySums{})
	if h.LatencyMs == nil || *h.LatencyMs != 400 {
		t.Errorf("latency %v, want 400", h.LatencyMs)
	}
}

// TestHealthAtReadsTheHourAndTheDayBefore: a past hour's health is the hour
// before it (uptime, first token, speed) and the day before it (the cache
// rate, past its gates), from the rollups; nothing at or after the hour
// counts, and with nothing before it the stored health stands.
func TestHealthAtReadsTheHourAndTheDayBefore(t *testing.T) {
	at := time.Date(2026, 12, 2, 15, 0, 0, 0, time.UTC)
	hours := []HourlyPoint{
		{Hour: at.Add(-25 * time.Hour), Counts: Counts{Requests: 1000, Errors: 1000, InputTokens: 1e6, CachedInputTokens: 1e6}}, // a day and more before
		{Hour: at.Add(-5 * time.Hour), Counts: Counts{Requests: 40, Errors: 10, InputTokens: 30000, CachedInputTokens: 3000}},
		{Hour: at.Add(-time.Hour), Counts: Counts{Requests: 110, Errors: 5, ClientErrors: 10, TTFTMsSum: 95 * 400, OutputTokens: 9000, DurationMs: 90000,
			InputTokens: 20000, CachedInputTokens: 12000}},
		{Hour: at, Counts: Counts{Requests: 500, Errors: 500}}, // the hour itself: not yet known at its start
	}
	h, ok := HealthAt(hours, at)
	if !ok {
		t.Fatal("no health from an hour of requests")
	}
	// The last hour: 95 of 100 counted requests succeeded, 400 ms each,
	// 9,000 tokens in 90 s. The day: 12,000 + 3,000 cached of 50,000.
	for name, c := range map[string]struct {
		got  *float64
		want float64
	}{
		"uptime": {h.UptimePct, 95}, "first token": {h.LatencyMs, 400}, "speed": {h.ThroughputTPS, 100}, "cache hit rate": {h.CacheHitRate, 0.3},
	} {
		if c.got == nil || math.Abs(*c.got-c.want) > 1e-9 {
			t.Errorf("%s: %v, want %v", name, c.got, c.want)
		}
	}
	// 23 hours before: the hour before it is quiet, and the day before it
	// holds only failures (short of the gates).
	if h, ok := HealthAt(hours, at.Add(-23*time.Hour)); ok {
		t.Errorf("health %+v with nothing to measure", h)
	}
	if h, ok := HealthAt(hours[:2], at); !ok || h.UptimePct != nil || h.CacheHitRate == nil {
		t.Errorf("a quiet last hour with the day past its gates: %+v %v, want only the day's rates", h, ok)
	}
}

func count(v int64) *int64 { return &v }

// TestHealthCarriesTheRequestsItRestsOn: n of the peer blend is the
// window's weighted requests over the last minute's weight, so a request
// this minute counts one and one ten minutes old a tenth.
func TestHealthCarriesTheRequestsItRestsOn(t *testing.T) {
	now := time.Date(2026, 12, 2, 12, 30, 0, 0, time.UTC)
	buckets := []Bucket{{Minute: now, Counts: Counts{Requests: 2, Errors: 1}}, {Minute: now.Add(-10 * time.Minute), Counts: Counts{Requests: 5}}}
	h := HealthFrom(WindowOf(buckets, now), DaySums{})
	if h.Requests == nil || *h.Requests != 2.5 {
		t.Fatalf("requests %v, want 2 + 5/10 = 2.5", h.Requests)
	}
	if none := HealthFrom(WindowSums{}, DaySums{}); none.Requests == nil || *none.Requests != 0 {
		t.Errorf("no traffic: requests %v, want 0 (measured, and nothing)", none.Requests)
	}
}

// TestDerivedFiguresHaveOneRule: the figures health, earnings, alerts and
// pages derive from a metric's sums, each -1 when nothing was measured.
func TestDerivedFiguresHaveOneRule(t *testing.T) {
	for _, test := range []struct {
		name                          string
		h                             HourlyPoint
		ttft, speed, failure, limited float64
	}{
		{"nothing", HourlyPoint{}, -1, -1, -1, -1},
		{"a measured hour", HourlyPoint{Counts: Counts{Requests: 50, Errors: 2, ClientErrors: 3, TTFTMsSum: 19980, OutputTokens: 5000, DurationMs: 90000,
			GatewayCounts: GatewayCounts{RateLimited: 6}}}, 444, 5000 / 90.0, 2 / 47.0, 6 / 56.0},
		{"no TTFT reported is no measurement", HourlyPoint{Counts: Counts{Requests: 10, OutputTokens: 100, DurationMs: 1000}}, -1, 100, 0, 0},
		{"every request the caller's fault", HourlyPoint{Counts: Counts{Requests: 4, ClientErrors: 4, TTFTMsSum: 100}}, -1, -1, -1, 0},
	} {
		if got := test.h.TTFTPerSuccess(); got != test.ttft {
			t.Errorf("%s: TTFT %v, want %v", test.name, got, test.ttft)
		}
		if got := test.h.Speed(); got != test.speed {
			t.Errorf("%s: speed %v, want %v", test.name, got, test.speed)
		}
		if got := test.h.FailureRate(); got != test.failure {
			t.Errorf("%s: failure rate %v, want %v", test.name, got, test.failure)
		}
		if got := test.h.LimitRate(); got != test.limited {
			t.Errorf("%s: 429 rate %v, want %v", test.name, got, test.limited)
		}
	}
	// Health reads the same rule: a window of the measured hour's figures.
	h := HealthFrom(WindowSums{Requests: 47, Successes: 45, TTFTMsSum: 19980, OutputTokens: 5000, DurationMs: 90000}, DaySums{})
	if h.LatencyMs == nil || *h.LatencyMs != 444 || h.ThroughputTPS == nil || *h.ThroughputTPS != 5000/90.0 {
		t.Errorf("health %+v", h)
	}
}

// TestCountersNameEveryCountOnce: Counters, which the store's
// columns, the metrics inbox, validation and adding all loop over, holds
// every counter of Counts exactly once, under the name the contract's JSON
// gives it; so a counter added to Counts without its row fails here.
func TestCountersNameEveryCountOnce(t *testing.T) {
	var fields []reflect.StructField
	var walk func(reflect.Type)
	walk = func(typ reflect.Type) {
		for i := range typ.NumField() {
			f := typ.Field(i)
			if f.Anonymous {
				outer := f.Index
				n := len(fields)
				walk(f.Type)
				for j := n; j < len(fields); j++ {
					fields[j].Index = append(slices.Clone(outer), fields[j].Index...)
				}
				continue
			}
			if f.Type.Kind() != reflect.Int64 {
				t.Errorf("Counts.%s is a %s: a counter is an int64", f.Name, f.Type)
			}
			fields = append(fields, f)
		}
	}
	walk(reflect.TypeFor[Counts]())
	if len(fields) != len(Counters) {
		t.Errorf("Counts has %d counters, Counters lists %d", len(fields), len(Counters))
	}
	seen := map[string]bool{}
	for i, k := range Counters {
		if seen[k.Name] {
			t.Errorf("%s is listed twice", k.Name)
		}
		seen[k.Name] = true
		var c Counts
		*k.Of(&c) = int64(i + 1)
		v := reflect.ValueOf(c)
		for _, f := range fields {
			got := v.FieldByIndex(f.Index).Int() // promoted fields by their own index path
			name, _, _ := strings.Cut(f.Tag.Get("json"), ",")
			if name == "-" { // requests: decoded by PostedBucket, where it is required
				name = strings.ToLower(f.Name[:1]) + f.Name[1:]
			}
			if (got != 0) != (name == k.Name) {
				t.Errorf("Counters[%d] (%s) sets Counts.%s (JSON %q)", i, k.Name, f.Name, name)
			}
		}
	}
	posted, ok := reflect.TypeFor[PostedBucket]().FieldByName("Requests")
	if !ok || posted.Tag.Get("json") != "requests" {
		t.Errorf("PostedBucket decodes requests as %q", posted.Tag.Get("json"))
	}
}

// TestCountsAddEveryCounter: adding counts adds each counter to its own.
func TestCountsAddEveryCounter(t *testing.T) {
	var a, b, want Counts
	for i, k := range Counters {
		*k.Of(&a) = int64(i + 1)
		*k.Of(&b) = int64(100 * (i + 1))
		*k.Of(&want) = int64(101 * (i + 1))
	}
	a.Add(b)
	if a != want {
		t.Errorf("added: %+v, want %+v", a, want)
	}
	g := a.GatewayCounts
	g.Add(b.GatewayCounts)
	if want := a.GatewayCounts.Routed + b.Routed; g.Routed != want {
		t.Errorf("gateway counts added: routed %d, want %d", g.Routed, want)
	}
}

// posted is b as a gateway posts it for listing, its requests sent.
func posted(listing string, b Bucket) PostedBucket {
	return PostedBucket{Listing: listing, Requests: &b.Requests, Bucket: b}
}

// TestABucketWithoutRequestsIsRefused: the contract requires requests (0 is
// a report of an idle minute, a bucket without the member a mistake).
func TestABucketWithoutRequestsIsRefused(t *testing.T) {
	in := &Ingest{Store: &ingestStore{}, Now: func() time.Time { return now }}
	zero := int64(0)
	_, err := in.Record(context.Background(), []PostedBucket{
		{Listing: "nebula/kimi", Requests: &zero, Bucket: Bucket{Minute: minute(1)}},
		{Listing: "nebula/kimi", Bucket: Bucket{Minute: minute(2)}},
	})
	fields := apperr.FieldErrors(err)
	if fields["buckets[1].requests"] == "" || fields["buckets[0].requests"] != "" {
		t.Errorf("fields %v, want buckets[1].requests alone", fields)
	}
}
