package catalogue

import (
	"slices"
	"time"

	"github.com/airside/airside/internal/election"
)

// LimitSpell is a time the gateways' limits held a listing back, read from
// what they reported (election.md sec. 8): a breaker from the minute it
// opened to the minute it closed, or the minutes in which 429 backoffs
// (or latency backoffs) started.
type LimitSpell struct {
	// Limit is "breaker", "backoff" (429s) or "slow" (the latency backoff).
	Limit string
	// From is the first minute; Until the end of the last (nil for a breaker
	// not reported closed yet).
	From  time.Time
	Until *time.Time
	// Backoffs are the backoffs started within a backoff or slow spell; Openings
	// the times a breaker spell opened (a failed probe reopens it).
	Backoffs, Openings int64
}

// LimitSpells pairs a listing's limit minutes (LimitMinutes: the minutes in
// which backoffs started or the breaker opened or closed, oldest first)
// into spells: a breaker spell runs from its first opening to the closing
// after it; backoffs of one kind in minutes a minute apart or less are one
// spell.
func LimitSpells(minutes []Bucket) []LimitSpell {
	var out []LimitSpell
	// Open spells are held by index: a pointer into out would be left
	// behind when an append moves it.
	breaker, backoff, slow := -1, -1, -1
	end := func(m time.Time) *time.Time { t := m.Add(time.Minute); return &t }
	open := func(limit string, m time.Time) int {
		out = append(out, LimitSpell{Limit: limit, From: m})
		return len(out) - 1
	}
	run := func(spell *int, limit string, m time.Time, n int64) {
		if *spell < 0 || m.After(*out[*spell].Until) {
			*spell = open(limit, m)
		}
		out[*spell].Backoffs += n
		out[*spell].Until = end(m)
	}
	for _, b := range minutes {
		if b.BreakerOpenings > 0 {
			if breaker < 0 {
				breaker = open("breaker", b.Minute)
			}
			out[breaker].Openings += b.BreakerOpenings
		}
		if b.BreakerClosings > 0 {
			if breaker < 0 { // opened before the minutes read
				breaker = open("breaker", b.Minute)
			}
			out[breaker].Until = end(b.Minute)
			breaker = -1
		}
		if b.Backoffs > 0 {
			run(&backoff, "backoff", b.Minute, b.Backoffs)
		}
		if b.SlowBackoffs > 0 {
			run(&slow, "slow", b.Minute, b.SlowBackoffs)
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
