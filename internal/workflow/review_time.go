package workflow

import (
	"slices"
	"time"
)

// ReviewWindow is how far back the expected review time looks.
const ReviewWindow = 30 * 24 * time.Hour

// minReviewsForEstimate is how many recent reviews an estimate needs: fewer
// say too little to promise a carrier anything.
const minReviewsForEstimate = 5

// ReviewEstimate is how long a submitted filing can expect to wait, from the
// reviews of the last ReviewWindow.
type ReviewEstimate struct {
	// Known is false with fewer than minReviewsForEstimate recent reviews.
	Known bool
	// Median and P90: half of the recent reviews took at most Median, nine
	// in ten at most P90.
	Median, P90 time.Duration
	// Reviews is how many decisions the figures come from; Waiting how
	// many filings are in the queue now.
	Reviews, Waiting int
}

// EstimateReview summarises recent review durations (any order) and the
// queue's length now.
func EstimateReview(durations []time.Duration, waiting int) ReviewEstimate {
	e := ReviewEstimate{Reviews: len(durations), Waiting: waiting}
	if len(durations) < minReviewsForEstimate {
		return e
	}
	sorted := slices.Clone(durations)
	slices.Sort(sorted)
	e.Known = true
	e.Median = nearestRank(sorted, 50)
	e.P90 = nearestRank(sorted, 90)
	return e
}

// nearestRank is the p-th percentile of sorted by the nearest-rank method
// (a duration that some review actually took).
func nearestRank(sorted []time.Duration, p int) time.Duration {
	i := (p*len(sorted)+99)/100 - 1
	return sorted[max(i, 0)]
}
