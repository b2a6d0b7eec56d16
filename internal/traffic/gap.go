package traffic

import (
	"cmp"
	"math"
	"slices"
)

// Projected beside measured: why the share routing served a listing differs
// from the share the preview projected (election.md section 4). The
// projection is the auto election under the workload mix: the holder of a
// shape serves its requests but the exploration share, which the others
// split. Routing adds what the projection leaves out, and each is counted by
// the gateway, so the difference splits into named parts that add up to it
// exactly.

// ShareCounts are a listing's and its model's requests in a period, as the
// gateway reported them.
type ShareCounts struct {
	// ModelRequests are every request the model's listings served;
	// Requests the listing's.
	ModelRequests, Requests int64
	// How the listing's successful requests came (the gateway's counts);
	// Failed are its failed requests, for any reason.
	Routed, Pinned, Exploration, Fallback, Failed int64
	// Capped are requests the election gave the listing that its rate cap
	// turned away (served by another listing); RateLimited tries the
	// carrier answered 429 (retried on another listing).
	Capped, RateLimited int64
	// OthersCapped are requests the model's other listings' caps turned
	// away: elected next, some came here.
	OthersCapped int64
	// SlowHeld are the model's requests in the minutes the gateway held
	// the listing back for slow first tokens (its latency backoff), in
	// hours the projection could not follow it (no holders reported),
	// estimated from the backoffs reported per hour: each holds the
	// listing out for SlowHold, the hour's requests taken as even within
	// it.
	SlowHeld int64
	// PreferenceHeld are the model's requests whose customers' preferences
	// or residency the listing could not meet (election.md sec. 7),
	// estimated from what demand asked for: those requests never came to
	// it, and the projection does not yet elect them apart.
	PreferenceHeld int64
}

// unlabelled are requests reported without how they came (history from
// before the gateway said so).
func (c ShareCounts) unlabelled() int64 {
	return max(0, c.Requests-c.Routed-c.Pinned-c.Exploration-c.Fallback-c.Failed)
}

// Projection is the preview's projected share, split as routing splits it.
type Projection struct {
	// Total is the projected share of the model's requests (0-1);
	// Exploration is the part of it that comes from exploration, Pinned
	// the part callers' preferences sent to the listing alone (an order,
	// or one listing left).
	Total, Exploration, Pinned float64
}

// Cause is one named part of a gap, in percentage points: positive when it
// brought the listing more than projected, negative when less.
type Cause struct {
	Key, Name string
	Points    float64
}

// ShareGap is a listing's projected share beside the measured one, in
// percentage points, and the causes that add up to the difference.
type ShareGap struct {
	Projected, Measured, Gap float64
	Causes                   []Cause
}

// Cause keys, stable for pages and tests.
const (
	CauseElection    = "election"
	CauseExploration = "exploration"
	CausePins        = "pins"
	CauseFallbacks   = "fallbacks"
	CauseCaps        = "caps"
	CauseRateLimited = "rate-limited"
	CauseOthersCaps  = "others-caps"
	CauseSlow        = "slow"
	CausePreferences = "preferences"
	CauseFailures    = "failures"
	CauseUnlabelled  = "unlabelled"
)

// ExplainShare splits the difference between the projected and the
// measured share into its causes:
//   - pins: requests a caller pinned to the listing (a model pin, a
//     provider order, preferences that left it alone), less those the
//     projection replayed from the sets of preferences demand reported;
//   - fallbacks: requests another listing failed, retried here;
//   - exploration: the exploration the listing got, less what was projected;
//   - caps: requests the election gave the listing that its cap turned
//     away;
//   - rate-limited: tries the carrier answered 429, which the gateway
//     retried on another listing (its short-term backoff);
//   - others' caps: of the routed requests beyond the projection, up to
//     what the other listings' caps turned away (the gateway elects the
//     next best for those; which listing that was is not reported, so the
//     part is bounded, not counted);
//   - slow first tokens: of the routed requests short of the projection,
//     up to the projected share of the model's requests in the minutes
//     the latency backoff held the listing out (an estimate: the gateway
//     reports when each backoff started, not what it moved);
//   - preferences: of the routed requests short of the projection (after
//     the slow first tokens), up to the projected share of the model's
//     requests whose preferences the listing could not meet (an estimate:
//     demand reports what requests asked, not where they went);
//   - failures: requests that failed here (the gateway retried them on
//     another listing, whose fallbacks they are);
//   - unlabelled: requests reported without how they came;
//   - election: what remains of the routed requests against the projected
//     election share: sessions carried over from before a change, fares or
//     health that moved within the period, the incumbent's margin. When the
//     projection and routing follow one rule set this is small; a large one
//     is a disagreement to fix in code.
//
// The causes add up to the gap exactly. With no traffic for the model, the
// measured share and the causes are zero.
func ExplainShare(p Projection, c ShareCounts) ShareGap {
	g := ShareGap{Projected: 100 * p.Total}
	if c.ModelRequests <= 0 {
		g.Gap = -g.Projected
		g.Causes = []Cause{{Key: CauseElection, Name: causeNames[CauseElection], Points: g.Gap}}
		return g
	}
	pts := func(n int64) float64 { return 100 * float64(n) / float64(c.ModelRequests) }
	g.Measured = pts(c.Requests)
	g.Gap = g.Measured - g.Projected
	election := pts(c.Routed+c.Capped+c.RateLimited) - 100*(p.Total-p.Exploration-p.Pinned)
	othersCaps := min(max(election, 0), pts(c.OthersCapped))
	slow := min(max(-election, 0), p.Total*pts(c.SlowHeld))
	prefs := min(max(-election-slow, 0), p.Total*pts(c.PreferenceHeld))
	parts := []struct {
		key    string
		points float64
	}{
		{CauseElection, election - othersCaps + slow + prefs},
		{CauseOthersCaps, othersCaps},
		{CauseSlow, -slow},
		{CausePreferences, -prefs},
		{CauseExploration, pts(c.Exploration) - 100*p.Exploration},
		{CausePins, pts(c.Pinned) - 100*p.Pinned},
		{CauseFallbacks, pts(c.Fallback)},
		{CauseCaps, -pts(c.Capped)},
		{CauseRateLimited, -pts(c.RateLimited)},
		{CauseFailures, pts(c.Failed)},
		{CauseUnlabelled, pts(c.unlabelled())},
	}
	for _, part := range parts {
		g.Causes = append(g.Causes, Cause{Key: part.key, Name: causeNames[part.key], Points: part.points})
	}
	return g
}

var causeNames = map[string]string{
	CauseElection:    "the election itself (sessions carried over, fares or health that moved in the period, the incumbent's margin)",
	CauseExploration: "exploration (1 % of auto requests, split among the listings not holding the shape)",
	CausePins:        "requests callers pinned to this listing",
	CauseFallbacks:   "fallbacks: requests another listing failed, retried here",
	CauseCaps:        "requests your rate cap turned away",
	CauseRateLimited: "requests your endpoint answered 429 (retried on another listing)",
	CauseOthersCaps:  "requests other listings' rate caps turned away, elected here next",
	CauseSlow:        "held back for slow first tokens (the gateway's latency backoff, in hours without reported holders; estimated from the backoffs it reported)",
	CauseFailures:    "requests that failed here (retried on another listing)",
	CausePreferences: "requests whose customers asked for what this listing does not offer (zero data retention, a quantization, a region, a longer context; estimated from what demand asked for)",
	CauseUnlabelled:  "requests reported without how they came (from before the gateway said so)",
}

// Named are the causes of at least minPoints either way, largest first. A
// gap of minPoints or more made only of smaller parts names its largest
// part in the gap's direction: no gap worth a sentence goes unexplained (a
// gap of 1.4 points made of 0.9 and 0.5 named nothing).
func (g ShareGap) Named(minPoints float64) []Cause {
	var out []Cause
	for _, c := range g.Causes {
		if c.Points >= minPoints || c.Points <= -minPoints {
			out = append(out, c)
		}
	}
	if len(out) == 0 && math.Abs(g.Gap) >= minPoints {
		var largest *Cause
		for i, c := range g.Causes {
			if c.Points*g.Gap > 0 && (largest == nil || math.Abs(c.Points) > math.Abs(largest.Points)) {
				largest = &g.Causes[i]
			}
		}
		if largest != nil {
			out = append(out, *largest)
		}
	}
	slices.SortStableFunc(out, func(a, b Cause) int { return cmp.Compare(math.Abs(b.Points), math.Abs(a.Points)) })
	return out
}
