package election

import (
	"math/rand/v2"
	"testing"
	"time"
)

// TestCompiledFareResolvesAsResolvePrices: the compiled fare's table gives
// the prices ResolvePrices does, at every 7th minute of two weeks (offsets
// of whole and half hours, either side of UTC, an effective date inside the
// span, the zero time) and at prompts on and around each tier's threshold,
// with thresholds listed out of order and repeated.
func TestCompiledFareResolvesAsResolvePrices(t *testing.T) {
	rng := rand.New(rand.NewPCG(7, 8))
	price := func() *float64 {
		if rng.IntN(3) == 0 {
			return nil
		}
		v := float64(rng.IntN(500)) / 100
		return &v
	}
	start := time.Date(2026, 11, 29, 0, 0, 0, 0, time.UTC)
	for trial := range 200 {
		f := Fare{Input: 0.5, Output: 2, CachedInput: price()}
		for range rng.IntN(4) {
			f.Tiers = append(f.Tiers, Tier{AboveTokens: int64(rng.IntN(4)) * 32000, PriceBlock: PriceBlock{Input: price(), Output: price(), CachedInput: price()}})
		}
		if trial%4 != 0 {
			tb := &TimeBased{Peak: PriceBlock{Input: price(), CachedInput: price()}, OffPeak: PriceBlock{Output: price()}}
			for range 1 + rng.IntN(2) {
				s := rng.IntN(24)
				tb.PeakHours = append(tb.PeakHours, PeakWindow{Start: s, End: s + 1 + rng.IntN(24-s)})
			}
			if rng.IntN(3) > 0 {
				tb.OffPeakDays = &OffPeakDays{Days: uint8(rng.IntN(128)), UTCOffsetMinutes: (rng.IntN(53) - 24) * 30}
			}
			if rng.IntN(3) == 0 {
				tb.EffectiveAt = start.Add(time.Duration(rng.IntN(14*24*60)) * time.Minute)
			}
			f.TimeBased = tb
		}
		cf := compileFare(&f)
		prompts := []int64{0, 1}
		for _, tier := range f.Tiers {
			prompts = append(prompts, tier.AboveTokens-1, tier.AboveTokens, tier.AboveTokens+1)
		}
		moments := []time.Time{{}}
		for m := 0; m < 14*24*60; m += 7 {
			moments = append(moments, start.Add(time.Duration(m)*time.Minute+time.Duration(rng.IntN(60))*time.Second))
		}
		for _, at := range moments {
			now := momentOf(at)
			for _, prompt := range prompts {
				if got, want := *cf.resolve(&now, prompt), ResolvePrices(&f, at, prompt); got != want {
					t.Fatalf("fare %+v at %s, prompt %d: compiled %+v, ResolvePrices %+v", f, at, prompt, got, want)
				}
			}
		}
	}
}

func TestWeekdayAt(t *testing.T) {
	for _, at := range []time.Time{
		time.Date(1970, 1, 1, 0, 0, 0, 0, time.UTC), time.Date(1969, 12, 31, 23, 59, 59, 0, time.UTC),
		time.Date(1969, 12, 28, 12, 0, 0, 0, time.UTC), time.Date(2026, 12, 1, 23, 59, 59, 0, time.UTC),
		time.Date(2026, 12, 6, 0, 0, 0, 0, time.UTC),
	} {
		if got := weekdayAt(at.Unix()); got != uint(at.Weekday()) {
			t.Errorf("%s: weekday %d, want %d", at, got, at.Weekday())
		}
	}
}
