package fare

import (
	"strings"
	"testing"
	"time"

	"github.com/airside/airside/internal/election"
)

func TestMarketFieldsParse(t *testing.T) {
	now := time.Date(2026, 12, 4, 12, 0, 0, 0, time.UTC)
	for _, test := range []struct {
		name    string
		market  MarketForm
		wantErr map[string]string // field -> a word of its message
	}{
		{"all declared", MarketForm{ContextLength: "131,072", MaxOutputTokens: "16384", Quantization: "FP8", RetentionDays: "0",
			TrainsOnPrompts: "no", Regions: "de us,DE", RequestPrice: "$0.0005", ImagePrice: "0.002"}, nil},
		{"none declared", MarketForm{}, nil},
		{"context not a number", MarketForm{ContextLength: "128k"}, map[string]string{"context_length": "whole number"}},
		{"output beyond the context", MarketForm{ContextLength: "8192", MaxOutputTokens: "16384"}, map[string]string{"max_output_tokens": "whole context"}},
		{"unknown quantization", MarketForm{Quantization: "q4_k_m"}, map[string]string{"quantization": "fp8"}},
		{"negative retention", MarketForm{RetentionDays: "-1"}, map[string]string{"retention_days": "0 (not kept)"}},
		{"training neither yes nor no", MarketForm{TrainsOnPrompts: "maybe"}, map[string]string{"trains_on_prompts": "yes, no"}},
		{"malformed region", MarketForm{Regions: "DE, Germany"}, map[string]string{"regions": "GERMANY"}},
		{"negative fee", MarketForm{RequestPrice: "-0.001"}, map[string]string{"request_price": "per request"}},
		{"fee with a comma", MarketForm{ImagePrice: "0,002"}, map[string]string{"image_price": "per image"}},
	} {
		t.Run(test.name, func(t *testing.T) {
			form := validForm()
			form.Market = test.market
			parsed, errs := form.Parse(now)
			for field, word := range test.wantErr {
				if !strings.Contains(errs[field], word) {
					t.Errorf("%s: message %q, want one with %q", field, errs[field], word)
				}
			}
			if len(errs) != len(test.wantErr) {
				t.Errorf("errors %v, want only %v", errs, test.wantErr)
			}
			if errs != nil {
				return
			}
			// What parses prefills the form as typed, normalised.
			typed := FormOf(parsed.Fare)
			again, errs := typed.Parse(now)
			if errs != nil || len(Diff(parsed.Fare, again.Fare)) != 0 {
				t.Errorf("round trip through the form: %v %v", errs, Diff(parsed.Fare, again.Fare))
			}
		})
	}
	form := validForm()
	form.Market = MarketForm{ContextLength: "131,072", Quantization: "FP8", Regions: "us de,DE", RetentionDays: "0", TrainsOnPrompts: "no"}
	parsed, _ := form.Parse(now)
	m := parsed.Fare.Market
	if *m.ContextLength != 131072 || m.Quantization != "fp8" || strings.Join(m.Regions, ",") != "DE,US" || !m.ZDR() {
		t.Errorf("parsed %+v", m)
	}
	ef := parsed.Fare.ForElection()
	if !ef.DataPolicy.ZDR() || ef.Quantization.String() != "fp8" || *ef.ContextLength != 131072 {
		t.Errorf("the engine sees %+v", ef)
	}
}

func TestMarketChangesNeedNoticeAndShowInTheDiff(t *testing.T) {
	from := time.Date(2026, 12, 1, 0, 0, 0, 0, time.UTC)
	ctx := func(v int64) *int64 { return &v }
	fee := micros("0.001")
	base := &Fare{Input: micros("0.50"), Output: micros("2.00"), Market: Market{ContextLength: ctx(131072), RetentionDays: ctx(0), TrainsOnPrompts: ptrBool(false)}}
	with := func(edit func(f *Fare)) *Fare {
		f := *base
		edit(&f)
		return &f
	}
	for _, test := range []struct {
		name       string
		next       *Fare
		raises     bool
		quarantine bool // ratio >= 3
		field      string
		direction  int
	}{
		{"a longer context", with(func(f *Fare) { f.ContextLength = ctx(262144) }), false, false, "context_length", 1},
		{"a shorter context", with(func(f *Fare) { f.ContextLength = ctx(65536) }), true, false, "context_length", -1},
		{"a context a quarter as long", with(func(f *Fare) { f.ContextLength = ctx(32768) }), true, true, "context_length", -1},
		{"a new per-request fee", with(func(f *Fare) { f.RequestPrice = &fee }), true, true, "request_price", 1},
		{"prompts kept 30 days: excluded from ZDR at once, no notice", with(func(f *Fare) { f.RetentionDays = ctx(30) }), false, false, "retention_days", 0},
		{"a first declared output limit", with(func(f *Fare) { f.MaxOutputTokens = ctx(8192) }), false, false, "max_output_tokens", -1},
		{"a region added", with(func(f *Fare) { f.Regions = []string{"DE"} }), false, false, "regions", 0},
	} {
		t.Run(test.name, func(t *testing.T) {
			if got := RaisesPrices(base, test.next, from); got != test.raises {
				t.Errorf("raises %v, want %v", got, test.raises)
			}
			if got := ChangeRatio(base, test.next, from) >= 3; got != test.quarantine {
				t.Errorf("quarantined %v (ratio %v), want %v", got, ChangeRatio(base, test.next, from), test.quarantine)
			}
			changes := Diff(base, test.next)
			if len(changes) != 1 || changes[0].Field != test.field || changes[0].Kind != KindMarket || changes[0].Direction != test.direction {
				t.Errorf("diff %+v, want one %s change of direction %d", changes, test.field, test.direction)
			}
		})
	}
}

// TestFeesInTiersAndBlocks: a tier and a time block set fees like prices:
// typed in the form (and the CSV's tiers cell), checked, kept through the
// form again, and resolved by the engine per request as the spec says.
func TestFeesInTiersAndBlocks(t *testing.T) {
	now := time.Date(2026, 12, 4, 12, 0, 0, 0, time.UTC)
	form := validForm()
	form.Market.RequestPrice = "0.0001"
	form.Tiers = []TierForm{{Above: "32768", Input: "1.10", Request: "0.0004"}}
	form.PeakWindows = []WindowForm{{Start: "8", End: "18"}}
	form.Peak = PricesForm{Image: "0.002"}
	form.OffPeak = PricesForm{Input: "0.40"}
	parsed, errs := form.Parse(now)
	if errs != nil {
		t.Fatal(errs)
	}
	ef := parsed.Fare.ForElection()
	for _, test := range []struct {
		at             time.Time
		prompt         int64
		request, image float64
	}{
		{time.Date(2026, 12, 4, 10, 0, 0, 0, time.UTC), 1000, 0.0001, 0.002}, // peak: its image fee
		{time.Date(2026, 12, 4, 20, 0, 0, 0, time.UTC), 1000, 0.0001, 0},     // off-peak: the base fees
		{time.Date(2026, 12, 4, 20, 0, 0, 0, time.UTC), 40000, 0.0004, 0},    // the tier's request fee
	} {
		got := election.ResolveFees(&ef, test.at, test.prompt)
		if got.Request != test.request || got.Image != test.image {
			t.Errorf("at %s, %d tokens: fees %+v, want %v / %v", test.at.Format("15:04"), test.prompt, got, test.request, test.image)
		}
	}
	again := FormOf(parsed.Fare)
	if again.Tiers[0].Request != "0.0004" || again.Peak.Image != "0.002" {
		t.Errorf("the form again: tier %+v, peak %+v", again.Tiers[0], again.Peak)
	}
	bad := validForm()
	bad.Tiers = []TierForm{{Above: "32768", Request: "-1"}}
	bad.Peak, bad.PeakWindows = PricesForm{Image: "lots"}, []WindowForm{{Start: "8", End: "18"}}
	_, errs = bad.Parse(now)
	if !strings.Contains(errs["tier.0.request"], "per request") || !strings.Contains(errs["peak_image"], "per image") {
		t.Errorf("bad fees: %v", errs)
	}
	var cell Form
	if err := readRowsCell(&cell, MustField("tiers").Rows, "32768:1.10/4.40/0.60/0.0004/;131072:2.20"); err != nil || cell.Tiers[0].Request != "0.0004" || cell.Tiers[1].Input != "2.20" {
		t.Errorf("a tiers cell with a fee: %+v, %v", cell.Tiers, err)
	}
}
