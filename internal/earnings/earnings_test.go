package earnings

import (
	"bytes"
	"strings"
	"testing"
	"time"

	"github.com/airside/airside/internal/catalogue"
	"github.com/airside/airside/internal/fare"
	"github.com/airside/airside/internal/money"
)

func price(t *testing.T, s string) money.Micros {
	t.Helper()
	m, err := money.ParsePrice(s)
	if err != nil {
		t.Fatal(err)
	}
	return m
}

func at(s string) time.Time {
	t, err := time.Parse(time.RFC3339, s)
	if err != nil {
		panic(err)
	}
	return t
}

// TestStatementAcrossAFareChangeAndAPeakWindow checks a month against a
// figure computed by hand, to the micro-dollar.
func TestStatementAcrossAFareChangeAndAPeakWindow(t *testing.T) {
	cached, peakInput := price(t, "0.10"), price(t, "0.80")
	fareA := &fare.Fare{Input: price(t, "0.50"), Output: price(t, "2.00"), CachedInput: &cached, Discount: 1000, LandingFee: 2000,
		TimeBased: &fare.TimeBased{PeakHours: []fare.PeakWindow{{Start: 8, End: 20}}, Peak: fare.Prices{Input: &peakInput}}}
	fareB := &fare.Fare{Input: price(t, "0.40"), Output: price(t, "1.60"), Discount: 0, LandingFee: 3000}
	history := map[int64][]FareSpan{7: {{From: at("2026-01-01T00:00:00Z"), Fare: fareA}, {From: at("2026-01-15T12:00:00Z"), Fare: fareB}}}
	hours := map[int64][]catalogue.HourlyPoint{7: {
		// Off-peak under A: 800k uncached x 0.50 + 200k x 0.10 + 500k x 2.00 = $1.42
		{Hour: at("2026-01-10T03:00:00Z"), Counts: catalogue.Counts{Requests: 100, InputTokens: 1_000_000, CachedInputTokens: 200_000, OutputTokens: 500_000}},
		// Peak under A: 2M x 0.80 + 100k x 2.00 = $1.80
		{Hour: at("2026-01-10T09:00:00Z"), Counts: catalogue.Counts{Requests: 50, InputTokens: 2_000_000, OutputTokens: 100_000}},
		// Under B (no cached price: the cached share bills at input): 3M x 0.40 + 1M x 1.60 = $2.80
		{Hour: at("2026-01-20T10:00:00Z"), Counts: catalogue.Counts{Requests: 70, Errors: 7, InputTokens: 3_000_000, CachedInputTokens: 1_000_000, OutputTokens: 1_000_000}},
	}}
	listings := []Listing{{ID: 7, Carrier: "nebula", Model: "kimi-k2.5"}}
	st := BuildStatement("nebula", at("2026-01-17T00:00:00Z"), at("2026-02-03T00:00:00Z"), listings, hours, history)
	// A: paid (1.42 + 1.80) x 0.9 = 2.898, kept 2.898 x 0.8 = 2.3184; B: paid 2.80, kept 2.80 x 0.7 = 1.96.
	want := Money{Filed: 6_020_000, Discount: 322_000, LandingFee: 1_419_600, Kept: 4_278_400}
	if st.Total.Money != want {
		t.Errorf("total %+v, want %+v", st.Total.Money, want)
	}
	if !st.Closed || st.Month != at("2026-01-01T00:00:00Z") || st.Total.Requests != 220 {
		t.Errorf("statement header: closed %v month %v requests %d", st.Closed, st.Month, st.Total.Requests)
	}
	var a, b bytes.Buffer
	if err := st.WriteCSV(&a); err != nil {
		t.Fatal(err)
	}
	again := BuildStatement("nebula", at("2026-01-01T00:00:00Z"), at("2026-03-01T00:00:00Z"), listings, hours, history)
	if err := again.WriteCSV(&b); err != nil {
		t.Fatal(err)
	}
	if a.String() != b.String() {
		t.Errorf("the same month gave two statements:\n%s\n%s", a.String(), b.String())
	}
	if !strings.Contains(a.String(), "2026-01,nebula,kimi-k2.5,7,220,6000000,1200000,1600000,6.020000,0.322000,1.419600,4.278400") {
		t.Errorf("CSV line:\n%s", a.String())
	}
	open := BuildStatement("nebula", at("2026-01-01T00:00:00Z"), at("2026-01-31T23:00:00Z"), listings, hours, history)
	if open.Closed {
		t.Error("a month not over is closed")
	}
}

func TestTenthsOfACentDoNotDrift(t *testing.T) {
	// 0.1 + 0.2 is not 0.3 in floats; here a thousand hours at $0.10 per
	// million tokens come to exactly $100.
	f := &fare.Fare{Input: price(t, "0.10"), Output: price(t, "0.20"), LandingFee: 2000}
	var s Sum
	for i := range 1000 {
		s.Add(catalogue.HourlyPoint{Hour: at("2026-01-01T00:00:00Z").Add(time.Duration(i) * time.Hour), Counts: catalogue.Counts{InputTokens: 1_000_000,
			OutputTokens: 0}}, f)
	}
	if got := s.Money(); got.Filed != 100_000_000 || got.Kept != 80_000_000 {
		t.Errorf("a thousand hours of 1M tokens at $0.10: %+v, want filed $0.10 x 1000 = $100 exactly", got)
	}
}

func TestFareAtAndPricesAt(t *testing.T) {
	f1, f2 := &fare.Fare{Input: 1}, &fare.Fare{Input: 2}
	h := []FareSpan{{From: at("2026-01-01T00:00:00Z"), Fare: f1}, {From: at("2026-01-02T00:00:00Z"), Fare: f2}}
	for _, tc := range []struct {
		t    string
		want *fare.Fare
	}{{"2025-12-31T23:00:00Z", nil}, {"2026-01-01T00:00:00Z", f1}, {"2026-01-01T23:00:00Z", f1}, {"2026-01-02T00:00:00Z", f2}} {
		if got := FareAt(h, at(tc.t)); got != tc.want {
			t.Errorf("FareAt(%s) = %v, want %v", tc.t, got, tc.want)
		}
	}
	offInput := price(t, "0.25")
	night := &fare.Fare{Input: price(t, "0.50"), Output: price(t, "1.00"),
		TimeBased: &fare.TimeBased{PeakHours: []fare.PeakWindow{{Start: 9, End: 17}}, OffPeak: fare.Prices{Input: &offInput}}}
	if p := night.PricesAt(at("2026-01-05T03:00:00Z"), 1000); p.Input != offInput || p.CachedInput != offInput || p.Output != night.Output {
		t.Errorf("off-peak prices %+v", p)
	}
	if p := night.PricesAt(at("2026-01-05T10:00:00Z"), 1000); p.Input != night.Input {
		t.Errorf("peak prices %+v", p)
	}
	// A tier over the time block: the upper edge belongs to the lower tier.
	long, longOut := price(t, "1.10"), price(t, "4.40")
	night.Tiers = []fare.Tier{{AboveTokens: 32768, Prices: fare.Prices{Input: &long, Output: &longOut}}}
	if p := night.PricesAt(at("2026-01-05T03:00:00Z"), 32768); p.Input != offInput {
		t.Errorf("at exactly the threshold: %+v, want the lower tier", p)
	}
	if p := night.PricesAt(at("2026-01-05T03:00:00Z"), 40000); p.Input != long || p.Output != longOut || p.CachedInput != long {
		t.Errorf("above the threshold: %+v, want the tier's prices", p)
	}
}

func TestIncidentsAndCapAdvice(t *testing.T) {
	base := at("2026-01-05T00:00:00Z")
	hour := func(i int, req, errs, capped int64) catalogue.HourlyPoint {
		return catalogue.HourlyPoint{Hour: base.Add(time.Duration(i) * time.Hour), Counts: catalogue.Counts{Requests: req, Errors: errs, Capped: capped}}
	}
	hours := []catalogue.HourlyPoint{
		hour(0, 1000, 1, 0),
		hour(1, 1000, 100, 0), // 90 %
		hour(2, 1000, 300, 0), // 70 %, worst
		hour(3, 1000, 10, 0),  // recovered
		hour(4, 10, 5, 0),     // too few requests to call
		hour(6, 1000, 60, 0),  // 94 %, a second incident
		hour(7, 1200, 0, 600),
	}
	inc := Incidents(hours)
	if len(inc) != 2 {
		t.Fatalf("incidents %+v, want 2", inc)
	}
	if !inc[0].Start.Equal(base.Add(time.Hour)) || !inc[0].End.Equal(base.Add(3*time.Hour)) || inc[0].Worst != 0.7 || inc[0].Failed != 400 {
		t.Errorf("first incident %+v", inc[0])
	}
	capped, rpm := CapAdvice(hours)
	if capped != 600 || rpm != 30 { // (1200 + 600) / 60 = 30 per minute
		t.Errorf("cap advice %d, %d", capped, rpm)
	}
}

func TestSeriesGroupsAndShares(t *testing.T) {
	f := &fare.Fare{Input: price(t, "1.00"), Output: price(t, "1.00"), LandingFee: 2000}
	history := []FareSpan{{From: at("2026-01-01T00:00:00Z"), Fare: f}}
	hours := []catalogue.HourlyPoint{
		{Hour: at("2026-01-05T10:00:00Z"), Counts: catalogue.Counts{Requests: 10, InputTokens: 1_000_000}},
		{Hour: at("2026-01-05T11:00:00Z"), Counts: catalogue.Counts{Requests: 30, InputTokens: 1_000_000}},
		{Hour: at("2026-01-06T11:00:00Z"), Counts: catalogue.Counts{Requests: 5}},
	}
	model := map[time.Time]int64{at("2026-01-05T10:00:00Z"): 50, at("2026-01-05T11:00:00Z"): 30, at("2026-01-06T11:00:00Z"): 20}
	since, until := ByDay.UTC().Window(at("2026-01-06T15:00:00Z"))
	pts := Series(ByDay.UTC(), since, until, hours, history, model)
	if len(pts) != 30 {
		t.Fatalf("%d days, want 30", len(pts))
	}
	d5, d6 := pts[28], pts[29]
	if !d5.Start.Equal(at("2026-01-05T00:00:00Z")) || d5.Requests != 40 || d5.Share() != 0.5 || d5.Filed != 2_000_000 {
		t.Errorf("5 January: %+v share %v", d5, d5.Share())
	}
	if d6.Share() != 0.25 || pts[0].Share() != -1 {
		t.Errorf("6 January share %v, an empty day %v", d6.Share(), pts[0].Share())
	}
	if d5.Unpriced != 0 {
		t.Errorf("5 January: %d unpriced under a fare in force", d5.Unpriced)
	}
	// Before the first fare the requests are served and earn nothing.
	early := Series(ByDay.UTC(), at("2025-12-31T00:00:00Z"), at("2026-01-01T00:00:00Z"),
		[]catalogue.HourlyPoint{{Hour: at("2025-12-31T10:00:00Z"), Counts: catalogue.Counts{Requests: 7, InputTokens: 1_000_000}}}, history, nil)
	if len(early) != 1 || early[0].Requests != 7 || early[0].Unpriced != 7 || early[0].Filed != 0 {
		t.Errorf("a day before the first fare: %+v", early)
	}
}

func TestShareAroundAFareChange(t *testing.T) {
	change := at("2026-01-10T00:00:00Z")
	hours := []catalogue.HourlyPoint{
		{Hour: change.Add(-48 * time.Hour), Counts: catalogue.Counts{Requests: 10}},
		{Hour: change.Add(-8 * 24 * time.Hour), Counts: catalogue.Counts{Requests: 1000}}, // before the week: left out
		{Hour: change.Add(2 * time.Hour), Counts: catalogue.Counts{Requests: 30}},
	}
	model := map[time.Time]int64{change.Add(-48 * time.Hour): 100, change.Add(-8 * 24 * time.Hour): 1000, change.Add(2 * time.Hour): 60}
	before, after := ShareAround(hours, model, change, 7*24*time.Hour)
	if before != 0.1 || after != 0.5 {
		t.Errorf("share %v before, %v after; want 0.1 and 0.5", before, after)
	}
}

func TestDaysStartAtLocalMidnight(t *testing.T) {
	g := Grouping{Period: ByDay, Loc: Offset(-5 * 60)}
	// 03:00 UTC on the 6th is 22:00 on the 5th five hours west.
	if got := g.Start(at("2026-01-06T03:00:00Z")); !got.Equal(at("2026-01-05T05:00:00Z")) {
		t.Errorf("day start %v", got)
	}
	hours := []catalogue.HourlyPoint{{Hour: at("2026-01-06T03:00:00Z"), Counts: catalogue.Counts{Requests: 7}}, {Hour: at("2026-01-06T06:00:00Z"), Counts: catalogue.Counts{Requests: 3}}}
	since, until := g.Window(at("2026-01-06T12:00:00Z"))
	pts := Series(g, since, until, hours, nil, nil)
	if n := len(pts); pts[n-2].Requests != 7 || pts[n-1].Requests != 3 {
		t.Errorf("the last two local days: %d and %d requests, want 7 and 3", pts[n-2].Requests, pts[n-1].Requests)
	}
	if Offset(20*60).String() != "UTC+14:00" || Offset(0) != time.UTC || Offset(5*60+30).String() != "UTC+05:30" {
		t.Errorf("offsets are bounded: %v", Offset(20*60))
	}
}

// TestExplicitCacheReadsAndWritesBillAtTheirPrices checks hours with
// explicit cache reads and writes against figures computed by hand, to the
// micro-dollar: reads at the cache-read price, writes at the cache-write
// price, and, where the fare files neither, reads as implicit hits and
// writes as plain input.
func TestExplicitCacheReadsAndWritesBillAtTheirPrices(t *testing.T) {
	cached, read, write := price(t, "0.10"), price(t, "0.05"), price(t, "0.625")
	for _, test := range []struct {
		name string
		f    *fare.Fare
		want Money
	}{
		// 1M input: 100k implicit hits, 300k reads, 200k writes, 400k plain; 100k output.
		// 400k x 0.50 + 100k x 0.10 + 300k x 0.05 + 200k x 0.625 + 100k x 2.00
		// = 0.20 + 0.01 + 0.015 + 0.125 + 0.20 = $0.55; paid x 0.9 = 0.495; kept x 0.8 = 0.396.
		{"cache-read and cache-write prices filed",
			&fare.Fare{Input: price(t, "0.50"), Output: price(t, "2.00"), CachedInput: &cached, CacheRead: &read, CacheWrite: &write, Discount: 1000, LandingFee: 2000},
			Money{Filed: 550_000, Discount: 55_000, LandingFee: 99_000, Kept: 396_000}},
		// Without them: reads at the cached price, writes at input:
		// 400k x 0.50 + 100k x 0.10 + 300k x 0.10 + 200k x 0.50 + 100k x 2.00 = 0.20 + 0.01 + 0.03 + 0.10 + 0.20 = $0.54.
		{"neither filed",
			&fare.Fare{Input: price(t, "0.50"), Output: price(t, "2.00"), CachedInput: &cached, Discount: 1000, LandingFee: 2000},
			Money{Filed: 540_000, Discount: 54_000, LandingFee: 97_200, Kept: 388_800}},
	} {
		var s Sum
		h := catalogue.HourlyPoint{Hour: at("2026-02-03T10:00:00Z"), Counts: catalogue.Counts{Requests: 10, InputTokens: 1_000_000, CachedInputTokens: 100_000,
			OutputTokens: 100_000, GatewayCounts: catalogue.GatewayCounts{CacheReadTokens: 300_000, CacheWriteTokens: 200_000}}}
		s.Add(h, test.f)
		if got := s.Money(); got != test.want {
			t.Errorf("%s: %+v, want %+v", test.name, got, test.want)
		}
		if s.CacheReadTokens != 300_000 || s.CacheWriteTokens != 200_000 {
			t.Errorf("%s: the sum counts %d reads and %d writes", test.name, s.CacheReadTokens, s.CacheWriteTokens)
		}
	}
}
