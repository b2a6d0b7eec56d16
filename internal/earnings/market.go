package earnings

import (
	"slices"
	"time"

	"github.com/airside/airside/internal/money"
)

// MarketDay is a model's market on one day: the routing input price (what
// the election ranks: filed x (1 - discount) x (1 + 0.20 - landing fee))
// of every listing with a fare in force at the day's end, at its lowest,
// median and highest, and one listing's own.
type MarketDay struct {
	Day              time.Time
	Listings         int
	Min, Median, Max money.Micros
	// Mine is the listing's own routing input price (nil: no fare yet).
	Mine *money.Micros
}

// Market is the model's market day by day over [from, to) (UTC days),
// from each listing's fare history; mine names the listing whose price is
// set beside the market. A day with no fare in force has Listings 0.
func Market(history map[int64][]FareSpan, mine int64, from, to time.Time) []MarketDay {
	var out []MarketDay
	for day := from.UTC().Truncate(24 * time.Hour); day.Before(to); day = day.Add(24 * time.Hour) {
		end := day.Add(24*time.Hour - time.Nanosecond)
		d := MarketDay{Day: day}
		var prices []money.Micros
		for id, spans := range history {
			f := FareAt(spans, end)
			if f == nil {
				continue
			}
			p := f.Effective(f.Input)
			prices = append(prices, p)
			if id == mine {
				d.Mine = &p
			}
		}
		if d.Listings = len(prices); len(prices) > 0 {
			slices.Sort(prices)
			d.Min, d.Max = prices[0], prices[len(prices)-1]
			d.Median = medianMicros(prices)
		}
		out = append(out, d)
	}
	return out
}

// medianMicros is the middle of sorted prices; of an even count, the mean
// of the two middle ones, rounded down to the micro-dollar.
func medianMicros(sorted []money.Micros) money.Micros {
	n := len(sorted)
	if n%2 == 1 {
		return sorted[n/2]
	}
	return (sorted[n/2-1] + sorted[n/2]) / 2
}
