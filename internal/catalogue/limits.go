package catalogue

import (
	"slices"
	"time"

	"github.com/airside/airside/internal/election"
)

// LimitSpell is a time the gateways' limits held a listing back, read from
// what they reported (election.md sec. 8): a breaker from the minute it
// opened to the minute it closed, or the minutes in which 429 backoffs
// started.
type LimitSpell struct {
	// Limit is "breaker" or "backoff".
	Limit string
	// From is the first minute; Until the end of the last (nil for a breaker
	// not reported closed yet).
	From  time.Time
	Until *time.Time
	// Backoffs are the backoffs started within a backoff spell; Openings
	// the times a breaker spell opened (a failed probe reopens it).
	Backoffs, Openings int64
}

// LimitSpells pairs a listing's limit minutes (LimitMinutes: the minutes in
// which backoffs started or the breaker opened or closed, oldest first)
// into spells: a breaker spell runs from its first opening to the closing
// after it; backoffs in minutes a minute apart or less are one spell.
func LimitSpells(minutes []Bucket) []LimitSpell {
	var out []LimitSpell
	var breaker, backoff *LimitSpell
	end := func(m time.Time) *time.Time { t := m.Add(time.Minute); return &t }
	for _, b := range minutes {
		if b.BreakerOpenings > 0 {
			if breaker == nil {
				out = append(out, LimitSpell{Limit: "breaker", From: b.Minute})
				breaker = &out[len(out)-1]
			}
			breaker.Openings += b.BreakerOpenings
		}
		if b.BreakerClosings > 0 {
			if breaker == nil { // opened before the minutes read
				out = append(out, LimitSpell{Limit: "breaker", From: b.Minute})
				breaker = &out[len(out)-1]
			}
			breaker.Until = end(b.Minute)
			breaker = nil
		}
		if b.Backoffs > 0 {
			if backoff == nil || b.Minute.After(*backoff.Until) {
				out = append(out, LimitSpell{Limit: "backoff", From: b.Minute})
				backoff = &out[len(out)-1]
			}
			backoff.Backoffs += b.Backoffs
			backoff.Until = end(b.Minute)
		}
	}
	slices.SortStableFunc(out, func(a, b LimitSpell) int { return a.From.Compare(b.From) })
	return out
}

// BreakerWindow is how far back from its opening a breaker's reason is
// read (the gateway judges its last 5 minutes).
const BreakerWindow = 5 * time.Minute

// FailureShareOfTries is the share of tries that failed for the listing's reasons:
// counted errors over the tries that reached an answer or a 429 (callers'
// errors left out), as the gateway's breaker counts them; -1 with no tries.
func (c Counts) FailureShareOfTries() float64 {
	if n := c.Requests - c.ClientErrors + c.RateLimited; n > 0 {
		return float64(c.Errors) / float64(n)
	}
	return -1
}

// LimitedShareOfTries is the share of those tries the listing answered 429; -1
// with no tries.
func (c Counts) LimitedShareOfTries() float64 {
	if n := c.Requests - c.ClientErrors + c.RateLimited; n > 0 {
		return float64(c.RateLimited) / float64(n)
	}
	return -1
}

// PeerMedianFailure is the median failure rate of the listings in sums
// other than listing (those with tries); ok is false when none has any.
func PeerMedianFailure(sums map[int64]Counts, listing int64) (median float64, ok bool) {
	var rates []float64
	for id, c := range sums {
		if r := c.FailureShareOfTries(); id != listing && r >= 0 {
			rates = append(rates, r)
		}
	}
	if len(rates) == 0 {
		return 0, false
	}
	return election.Median(rates), true
}
