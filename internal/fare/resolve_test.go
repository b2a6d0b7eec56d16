package fare

import (
	"fmt"
	"reflect"
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

// TestEveryPriceCountsForNoticeAndQuarantine: every price a fare files (found
// by walking the Fare type, so a price field added later is covered without
// touching this test), raised threefold, counts as a raise (the notice
// period) and a threefold change (the quarantine); lowered to a third, a
// threefold change that raises nothing. Filing a cache price where none was
// is a change too: from the price it stood in for.
func TestEveryPriceCountsForNoticeAndQuarantine(t *testing.T) {
	from := time.Date(2026, 12, 1, 0, 0, 0, 0, time.UTC)
	p := func(s string) *money.Micros { m := micros(s); return &m }
	// The time-of-day block starts three days in, so the base prices bill
	// before it (with peak and off-peak filing every price, they bill at no
	// hour after).
	starts := from.Add(72 * time.Hour)
	full := func() *Fare {
		return &Fare{Input: micros("0.50"), Output: micros("2.00"), CachedInput: p("0.10"), CacheRead: p("0.05"), CacheWrite: p("0.625"),
			Tiers: []Tier{{AboveTokens: 32768, Prices: Prices{Input: p("1.00"), Output: p("4.00"), CachedInput: p("0.20")}}},
			TimeBased: &TimeBased{EffectiveAt: &starts, PeakHours: []PeakWindow{{Start: 8, End: 18}},
				Peak:    Prices{Input: p("0.70"), Output: p("2.80"), CachedInput: p("0.14")},
				OffPeak: Prices{Input: p("0.30"), Output: p("1.20"), CachedInput: p("0.06")}}}
	}
	names := priceFields(full())
	if len(names) != 14 {
		t.Fatalf("found %d prices in a fare (%v), want 14: check the walk", len(names), names)
	}
	for name := range names {
		for _, move := range []struct {
			by     func(money.Micros) money.Micros
			raises bool
		}{{func(m money.Micros) money.Micros { return 3 * m }, true}, {func(m money.Micros) money.Micros { return m / 3 }, false}} {
			next := full()
			field := priceFields(next)[name]
			*field = move.by(*field)
			if got := RaisesPrices(full(), next, from); got != move.raises {
				t.Errorf("%s moved to %s: raises %v, want %v", name, field, got, move.raises)
			}
			if got := ChangeRatio(full(), next, from); got < 2.99 {
				t.Errorf("%s moved to %s: change ratio %v, want about 3 (quarantined)", name, field, got)
			}
		}
	}
	// F3: cache write from none to $99,999 is a raise and beyond any
	// quarantine factor; so is cache read.
	for _, edit := range []func(*Fare){func(f *Fare) { f.CacheWrite = p("99999") }, func(f *Fare) { f.CacheRead = p("99999") }} {
		prev := &Fare{Input: micros("0.50"), Output: micros("2.00")}
		next := *prev
		edit(&next)
		if !RaisesPrices(prev, &next, from) || ChangeRatio(prev, &next, from) < 1e5 {
			t.Errorf("a cache price filed at $99,999 where none was: raises %v, ratio %v", RaisesPrices(prev, &next, from), ChangeRatio(prev, &next, from))
		}
	}
}

// priceFields are the prices a fare files, by their path in the Fare type.
func priceFields(f *Fare) map[string]*money.Micros {
	out := map[string]*money.Micros{}
	micros := reflect.TypeFor[money.Micros]()
	var walk func(v reflect.Value, path string)
	walk = func(v reflect.Value, path string) {
		switch {
		case v.Type() == micros:
			out[path] = v.Addr().Interface().(*money.Micros)
		case v.Kind() == reflect.Pointer && !v.IsNil():
			walk(v.Elem(), path)
		case v.Kind() == reflect.Slice:
			for i := range v.Len() {
				walk(v.Index(i), fmt.Sprintf("%s[%d]", path, i))
			}
		case v.Kind() == reflect.Struct && v.Type().PkgPath() == reflect.TypeFor[Fare]().PkgPath():
			for i := range v.NumField() {
				walk(v.Field(i), path+"."+v.Type().Field(i).Name)
			}
		}
	}
	walk(reflect.ValueOf(f).Elem(), "fare")
	return out
}

// TestBlockPricesAreWhatDevelopersPay: a fare with a schedule is paid at its
// peak and off-peak prices (each over the base where it files one), never at
// the base alone once the schedule is in force.
func TestBlockPricesAreWhatDevelopersPay(t *testing.T) {
	from := time.Date(2026, 12, 1, 0, 0, 0, 0, time.UTC)
	p := func(s string) *money.Micros { m := micros(s); return &m }
	f := &Fare{Input: micros("0.17"), Output: micros("1.00"), CachedInput: p("0.05"),
		TimeBased: &TimeBased{PeakHours: []PeakWindow{{Start: 8, End: 18}}, Peak: Prices{Input: p("0.19")}, OffPeak: Prices{Input: p("0.14"), Output: p("0.80")}}}
	peak, off := f.BlockPrices(from)
	if peak == nil || off == nil {
		t.Fatalf("peak %v, off-peak %v", peak, off)
	}
	if peak.Input != micros("0.19") || peak.Output != micros("1.00") || peak.CachedInput != micros("0.05") {
		t.Errorf("peak %+v, want input 0.19 over the base output 1.00 and cached 0.05", peak)
	}
	if off.Input != micros("0.14") || off.Output != micros("0.80") {
		t.Errorf("off-peak %+v, want input 0.14, output 0.80", off)
	}
	if a, b := (&Fare{Input: 1}).BlockPrices(from); a != nil || b != nil {
		t.Error("a fare without a schedule has block prices")
	}
	// Peak all day: there are no off-peak hours.
	allDay := *f
	allDay.TimeBased = &TimeBased{PeakHours: []PeakWindow{{Start: 0, End: 24}}, Peak: Prices{Input: p("0.19")}}
	if peak, off := allDay.BlockPrices(from); peak == nil || off != nil {
		t.Errorf("peak all day: peak %v, off-peak %v", peak, off)
	}
}
