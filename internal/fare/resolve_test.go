package fare

import (
	"testing"
	"time"

	"github.com/airside/airside/internal/money"
)

func micros(s string) money.Micros {
	m, err := money.ParsePrice(s)
	if err != nil {
		panic(err)
	}
	return m
}

func TestRaisesPricesAndChangeRatio(t *testing.T) {
	from := time.Date(2026, 12, 1, 0, 0, 0, 0, time.UTC)
	base := &Fare{Input: micros("0.50"), Output: micros("2.00"), Discount: 1000}
	with := func(edit func(f *Fare)) *Fare {
		f := *base
		edit(&f)
		return &f
	}
	peak := micros("0.80")
	cheapTier := micros("0.40")
	cases := []struct {
		name   string
		next   *Fare
		raises bool
		ratio  float64
	}{
		{"same", with(func(*Fare) {}), false, 1},
		{"input down", with(func(f *Fare) { f.Input = micros("0.40") }), false, 1.25},
		{"output up", with(func(f *Fare) { f.Output = micros("2.20") }), true, 1.1},
		{"discount cut", with(func(f *Fare) { f.Discount = 500 }), true, 1},
		{"landing fee only", with(func(f *Fare) { f.LandingFee = 3000 }), false, 1},
		{"a dearer peak block", with(func(f *Fare) {
			f.TimeBased = &TimeBased{PeakHours: []PeakWindow{{Start: 8, End: 18}}, Peak: Prices{Input: &peak}}
		}), true, 1.6},
		{"a cheaper long-context tier", with(func(f *Fare) { f.Tiers = []Tier{{AboveTokens: 32768, Prices: Prices{Input: &cheapTier}}} }), false, 1.25},
		{"tripled", with(func(f *Fare) { f.Output = micros("6.00") }), true, 3},
		{"a third", with(func(f *Fare) { f.Input = micros("0.16") }), false, 3.125},
	}
	for _, tc := range cases {
		if got := RaisesPrices(base, tc.next, from); got != tc.raises {
			t.Errorf("%s: raises %v, want %v", tc.name, got, tc.raises)
		}
		if got := ChangeRatio(base, tc.next, from); got < tc.ratio-1e-9 || got > tc.ratio+1e-9 {
			t.Errorf("%s: ratio %v, want %v", tc.name, got, tc.ratio)
		}
	}
	if RaisesPrices(nil, base, from) || ChangeRatio(nil, base, from) != 1 {
		t.Error("a first fare raises nothing")
	}
}

func TestFieldLabelsAndProblems(t *testing.T) {
	for key, want := range map[string]string{"tier.0.input": "Tier 1 input price", "peak_window.1.start": "Peak window 2 start hour",
		"landing_fee": "Landing fee", "effective_at": "Effective date"} {
		if got := FieldLabel(key); got != want {
			t.Errorf("FieldLabel(%q) = %q, want %q", key, got, want)
		}
	}
	ps := Problems(FieldErrors{"justification": "x", "tier.0.input": "y", "input": "z"})
	if len(ps) != 3 || ps[0].Key != "input" || ps[1].ID != "tier-0-input" || ps[2].Key != "justification" {
		t.Errorf("problems out of form order: %+v", ps)
	}
}
