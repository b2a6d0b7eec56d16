// Package earnings turns the traffic a listing served into money, exactly:
// per hour, the tokens times the prices of the fare published at that hour
// (peak or off-peak as filed), then the discount the developer got, the
// landing fee the gateway kept and what the carrier keeps. Sums are exact
// rationals (math/big) rounded once, to the micro-dollar, at the end of a
// period, so a statement is the same however often it is computed.
package earnings

import (
	"math/big"
	"sort"
	"time"

	"github.com/airside/airside/internal/catalogue"
	"github.com/airside/airside/internal/fare"
	"github.com/airside/airside/internal/money"
)

// FareSpan is a fare in force from From until the next span.
type FareSpan struct {
	From time.Time
	Fare *fare.Fare
}

// FareAt returns the fare in force at t (the last span starting at or
// before t), or nil before the first.
func FareAt(history []FareSpan, t time.Time) *fare.Fare {
	i := sort.Search(len(history), func(i int) bool { return history[i].From.After(t) })
	if i == 0 {
		return nil
	}
	return history[i-1].Fare
}

// Prices are the three per-million prices that bill an hour.
type Prices = fare.Resolved

// PricesAt resolves a fare's prices at t for prompts of promptTokens
// (fare.PricesAt: the engine's order, base, time block, tier).
func PricesAt(f *fare.Fare, t time.Time, promptTokens int64) Prices {
	return f.PricesAt(t, promptTokens)
}

// Money is what a period earned, in micro-USD: filed is tokens x filed
// prices; the developer paid filed - discount; the gateway's landing fee is
// taken from that; the carrier keeps the rest.
type Money struct {
	Filed, Discount, LandingFee, Kept money.Micros
}

// Traffic is what a period served. InputTokens holds every prompt token:
// implicit cache hits (CachedInputTokens) and explicit cache reads and
// writes are counted within it.
type Traffic struct {
	Requests, Errors, ClientErrors, Capped       int64
	InputTokens, CachedInputTokens, OutputTokens int64
	CacheReadTokens, CacheWriteTokens            int64
}

// Sum accumulates hours exactly.
type Sum struct {
	Traffic
	// Unpriced counts requests in hours with no fare in force (before the
	// first publication): served, but not billed here.
	Unpriced int64
	// filed is in micro-USD x 1e6 (tokens x micro-USD per million tokens);
	// paid adds a factor of 1e4 (basis points), kept another 1e4.
	filed, paid, kept big.Int
}

var (
	perMillion = big.NewInt(1_000_000)
	unit       = big.NewInt(fare.Unit)
)

// add counts one hour's traffic.
func (t *Traffic) add(h catalogue.HourlyPoint) {
	t.Requests += h.Requests
	t.Errors += h.Errors
	t.ClientErrors += h.ClientErrors
	t.Capped += h.Capped
	t.InputTokens += h.InputTokens
	t.CachedInputTokens += h.CachedInputTokens
	t.OutputTokens += h.OutputTokens
	t.CacheReadTokens += h.CacheReadTokens
	t.CacheWriteTokens += h.CacheWriteTokens
}

// TrafficOf sums hours' traffic (no money).
func TrafficOf(hours []catalogue.HourlyPoint) Traffic {
	var t Traffic
	for _, h := range hours {
		t.add(h)
	}
	return t
}

// Add adds one hour served under fare f (nil: no fare in force).
func (s *Sum) Add(h catalogue.HourlyPoint, f *fare.Fare) {
	s.Traffic.add(h)
	if f == nil {
		s.Unpriced += h.Requests
		return
	}
	// An hour's rollup does not say how long each prompt was: the tier is
	// the one of the hour's average prompt.
	var prompt int64
	if h.Requests > 0 {
		prompt = h.InputTokens / h.Requests
	}
	// Explicit cache reads and writes bill at their own prices
	// (fare.Resolved says what stands in where the fare files none).
	p := f.PricesAt(h.Hour, prompt)
	readPrice, writePrice := p.CacheRead, p.CacheWrite
	uncached := max(h.InputTokens-h.CachedInputTokens-h.CacheReadTokens-h.CacheWriteTokens, 0)
	var filed, term big.Int
	filed.Mul(big.NewInt(uncached), big.NewInt(int64(p.Input)))
	filed.Add(&filed, term.Mul(big.NewInt(h.CachedInputTokens), big.NewInt(int64(p.CachedInput))))
	filed.Add(&filed, term.Mul(big.NewInt(h.CacheReadTokens), big.NewInt(int64(readPrice))))
	filed.Add(&filed, term.Mul(big.NewInt(h.CacheWriteTokens), big.NewInt(int64(writePrice))))
	filed.Add(&filed, term.Mul(big.NewInt(h.OutputTokens), big.NewInt(int64(p.Output))))
	s.filed.Add(&s.filed, &filed)
	var paid big.Int
	paid.Mul(&filed, big.NewInt(fare.Unit-int64(f.Discount)))
	s.paid.Add(&s.paid, &paid)
	var kept big.Int
	kept.Mul(&paid, big.NewInt(fare.Unit-int64(f.LandingFee)))
	s.kept.Add(&s.kept, &kept)
}

// Merge adds another sum.
func (s *Sum) Merge(o *Sum) {
	s.Requests += o.Requests
	s.Errors += o.Errors
	s.ClientErrors += o.ClientErrors
	s.Capped += o.Capped
	s.InputTokens += o.InputTokens
	s.CachedInputTokens += o.CachedInputTokens
	s.OutputTokens += o.OutputTokens
	s.CacheReadTokens += o.CacheReadTokens
	s.CacheWriteTokens += o.CacheWriteTokens
	s.Unpriced += o.Unpriced
	s.filed.Add(&s.filed, &o.filed)
	s.paid.Add(&s.paid, &o.paid)
	s.kept.Add(&s.kept, &o.kept)
}

// roundDiv is n / d rounded half away from zero (n, d >= 0 here).
func roundDiv(n, d *big.Int) money.Micros {
	var q, r big.Int
	q.QuoRem(n, d, &r)
	r.Mul(&r, big.NewInt(2))
	if r.Cmp(d) >= 0 {
		q.Add(&q, big.NewInt(1))
	}
	return money.Micros(q.Int64())
}

// Money rounds the exact sums once: each figure to the micro-dollar, the
// discount and landing fee as differences so the lines add up.
func (s *Sum) Money() Money {
	if s.filed.Sign() == 0 && s.paid.Sign() == 0 && s.kept.Sign() == 0 {
		return Money{} // most groups of a month's series are idle
	}
	var d1, d2 big.Int
	filed := roundDiv(&s.filed, perMillion)
	paid := roundDiv(&s.paid, d1.Mul(perMillion, unit))
	kept := roundDiv(&s.kept, d2.Mul(d1.Mul(perMillion, unit), unit))
	return Money{Filed: filed, Discount: filed - paid, LandingFee: paid - kept, Kept: kept}
}

// Uptime is the share of served requests that did not fail for the
// listing's reasons (client errors do not count against it), or -1 when
// there were none.
func (t Traffic) Uptime() float64 {
	n := t.Requests - t.ClientErrors
	if n <= 0 {
		return -1
	}
	return float64(n-t.Errors) / float64(n)
}
