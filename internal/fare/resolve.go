package fare

import (
	"time"

	"github.com/airside/airside/internal/election"
	"github.com/airside/airside/internal/money"
)

// Resolved are the per-million prices a request is billed at.
type Resolved struct {
	Input, Output, CachedInput money.Micros
	// CacheRead and CacheWrite bill explicit cache reads and writes: the
	// filed cache-read and cache-write prices, or, where the fare files
	// none, a read as an implicit hit (CachedInput) and a write as plain
	// input.
	CacheRead, CacheWrite money.Micros
	// Request and Image are the fees per request and per image part (USD,
	// not per million), 0 when none is filed.
	Request, Image money.Micros
}

// PricesAt resolves the fare's prices at t for prompts of promptTokens, in
// the engine's order (election.md section 2): the base prices, then the
// peak or off-peak block where the fare files one (election.BlockAt decides
// which), then the context tier with the largest threshold below the
// prompt. The cached share is billed at the cached price, or at the input
// price when none is filed anywhere; explicit cache reads and writes at
// their own prices (see Resolved).
func (f *Fare) PricesAt(t time.Time, promptTokens int64) Resolved {
	p := f.resolve(t, promptTokens)
	p.CacheRead, p.CacheWrite = p.CachedInput, p.Input
	if f.CacheRead != nil {
		p.CacheRead = *f.CacheRead
	}
	if f.CacheWrite != nil {
		p.CacheWrite = *f.CacheWrite
	}
	return p
}

// all are every resolved price, for comparing two fares on each.
func (p Resolved) all() [7]money.Micros {
	return [7]money.Micros{p.Input, p.Output, p.CachedInput, p.CacheRead, p.CacheWrite, p.Request, p.Image}
}

func (f *Fare) resolve(t time.Time, promptTokens int64) Resolved {
	p := Resolved{Input: f.Input, Output: f.Output, CachedInput: f.Input}
	if f.CachedInput != nil {
		p.CachedInput = *f.CachedInput
	}
	if f.RequestPrice != nil {
		p.Request = *f.RequestPrice
	}
	if f.ImagePrice != nil {
		p.Image = *f.ImagePrice
	}
	cachedFiled := f.CachedInput != nil
	overlay := func(block Prices) {
		if block.Input != nil {
			p.Input = *block.Input
			if !cachedFiled {
				p.CachedInput = p.Input
			}
		}
		if block.Output != nil {
			p.Output = *block.Output
		}
		if block.CachedInput != nil {
			p.CachedInput, cachedFiled = *block.CachedInput, true
		}
		if block.Request != nil {
			p.Request = *block.Request
		}
		if block.Image != nil {
			p.Image = *block.Image
		}
	}
	if f.TimeBased != nil {
		ef := f.ForElection()
		switch election.BlockAt(&ef, t) {
		case election.BlockPeak:
			overlay(f.TimeBased.Peak)
		case election.BlockOffPeak:
			overlay(f.TimeBased.OffPeak)
		}
	}
	for i := len(f.Tiers) - 1; i >= 0; i-- {
		if f.Tiers[i].AboveTokens < promptTokens {
			overlay(f.Tiers[i].Prices)
			break
		}
	}
	return p
}

// samples are the (time, prompt) points two fares are compared at: every
// hour of a week (every peak and off-peak block), at a short prompt and
// just above every tier threshold of either fare.
func samples(a, b *Fare, from time.Time) (times []time.Time, prompts []int64) {
	start := from.UTC().Truncate(time.Hour)
	for h := range 7 * 24 {
		times = append(times, start.Add(time.Duration(h)*time.Hour))
	}
	prompts = []int64{1}
	for _, f := range []*Fare{a, b} {
		for _, t := range f.Tiers {
			prompts = append(prompts, t.AboveTokens+1)
		}
	}
	return times, prompts
}

// RaisesPrices reports whether any request would cost a developer more
// under next than under prev: any resolved price (cache reads and writes,
// fees per request and image included) higher at any hour of the week and
// prompt size, or a smaller discount; or when next serves them less
// (NarrowsService: a shorter context, prompts kept longer). A first fare
// (prev nil) raises nothing.
func RaisesPrices(prev, next *Fare, from time.Time) bool {
	if prev == nil || next == nil {
		return false
	}
	if next.Discount < prev.Discount || NarrowsService(&prev.Market, &next.Market) {
		return true
	}
	times, prompts := samples(prev, next, from)
	for _, t := range times {
		for _, n := range prompts {
			a, b := prev.PricesAt(t, n).all(), next.PricesAt(t, n).all()
			for i := range a {
				if b[i] > a[i] {
					return true
				}
			}
		}
	}
	return false
}

// ChangeRatio is the largest factor by which any resolved price (cache reads
// and writes and fees included; a new fee is beyond any factor) moves from
// prev to next, up or down (2 means doubled or halved), or a declared
// context or output limit shrinks; 1 for a first fare.
func ChangeRatio(prev, next *Fare, from time.Time) float64 {
	if prev == nil || next == nil {
		return 1
	}
	worst := contextRatio(&prev.Market, &next.Market)
	ratio := func(a, b money.Micros) {
		if a <= 0 || b <= 0 {
			if a != b {
				worst = max(worst, 1e9) // from or to nothing: beyond any threshold
			}
			return
		}
		r := float64(b) / float64(a)
		if r < 1 {
			r = 1 / r
		}
		worst = max(worst, r)
	}
	times, prompts := samples(prev, next, from)
	for _, t := range times {
		for _, n := range prompts {
			a, b := prev.PricesAt(t, n).all(), next.PricesAt(t, n).all()
			for i := range a {
				ratio(a[i], b[i])
			}
		}
	}
	return worst
}

// BlockPrices are the prices of a short prompt in the fare's peak and
// off-peak hours, as developers pay them once the time-of-day block is in
// force (from from, or from the block's start when later): the first hour
// of each in the week that follows. nil for a block that never occurs, and
// both nil for a fare without a schedule. A carrier reads these, not the
// base prices, for the hours the schedule covers.
func (f *Fare) BlockPrices(from time.Time) (peak, offPeak *Resolved) {
	if f.TimeBased == nil {
		return nil, nil
	}
	start := from.UTC().Truncate(time.Hour)
	if at := f.TimeBased.EffectiveAt; at != nil && at.After(start) {
		start = at.UTC().Truncate(time.Hour).Add(time.Hour)
	}
	ef := f.ForElection()
	for h := range 8 * 24 {
		t := start.Add(time.Duration(h) * time.Hour)
		switch election.BlockAt(&ef, t) {
		case election.BlockPeak:
			if peak == nil {
				p := f.PricesAt(t, 1)
				peak = &p
			}
		case election.BlockOffPeak:
			if offPeak == nil {
				p := f.PricesAt(t, 1)
				offPeak = &p
			}
		}
		if peak != nil && offPeak != nil {
			break
		}
	}
	return peak, offPeak
}
