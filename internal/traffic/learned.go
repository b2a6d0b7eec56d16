package traffic

import (
	"time"

	"github.com/airside/airside/internal/catalogue"
)

// LearnedWindow is how far back learned rates look.
const LearnedWindow = 24 * time.Hour

// LearnedCacheFor is how long a project's learned rates are reused before
// they are worked out again.
const LearnedCacheFor = time.Minute

// Hour is one hour of a project's traffic on one listing of a model, as the
// gateway aggregates it.
type Hour struct {
	Start     time.Time
	Candidate string
	// Successes counts requests answered in full; the token counts are
	// theirs.
	Successes, InputTokens, CachedInputTokens, OutputTokens int64
	// ResponseCacheHits counts requests the gateway answered from its own
	// response cache: an hour holding any is left out, since such hits
	// would read as the carrier's cache working.
	ResponseCacheHits int64
}

// Learned is a project's observed figures for one model (seed 001): each
// candidate's own cache-hit rate once its traffic passes the gates, the
// project's combined rate across candidates (same gates), and the output
// ratio across candidates (same gates). Nil means not enough traffic.
type Learned struct {
	HitRate     map[string]float64
	Combined    *float64
	OutputRatio *float64
}

// passes applies the gates of catalogue.MinObservedRequests and
// MinObservedInputTokens.
func passes(successes, input int64) bool {
	return successes >= catalogue.MinObservedRequests && input >= catalogue.MinObservedInputTokens && input > 0
}

// Learn works out a project's rates for a model from its hourly aggregates
// over the LearnedWindow before now.
func Learn(hours []Hour, now time.Time) Learned {
	type sums struct{ ok, in, cached, out int64 }
	per := map[string]*sums{}
	var all sums
	for _, h := range hours {
		if h.ResponseCacheHits > 0 || !h.Start.After(now.Add(-LearnedWindow)) || h.Start.After(now) {
			continue
		}
		s := per[h.Candidate]
		if s == nil {
			s = &sums{}
			per[h.Candidate] = s
		}
		for _, t := range []*sums{s, &all} {
			t.ok += h.Successes
			t.in += h.InputTokens
			t.cached += h.CachedInputTokens
			t.out += h.OutputTokens
		}
	}
	out := Learned{HitRate: map[string]float64{}}
	for id, s := range per {
		if passes(s.ok, s.in) {
			out.HitRate[id] = float64(s.cached) / float64(s.in)
		}
	}
	if passes(all.ok, all.in) {
		combined := float64(all.cached) / float64(all.in)
		ratio := float64(all.out) / float64(all.in)
		out.Combined, out.OutputRatio = &combined, &ratio
	}
	return out
}
