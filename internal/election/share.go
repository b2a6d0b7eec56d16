package election

import (
	"cmp"
	"math"
	"slices"
)

// Policy is how a project's requests are spread over a model's listings:
// by election (secs. 3-4, the default) or by share (sec. 8, seed 004).
type Policy uint8

// The policies, in the contract's words.
const (
	PolicyElection Policy = iota
	PolicyShare
)

var policyNames = [...]string{"election", "share"}

func (p Policy) String() string {
	if int(p) < len(policyNames) {
		return policyNames[p]
	}
	return "unknown"
}

// ParsePolicy reads a policy in the contract's words.
func ParsePolicy(s string) (Policy, bool) {
	for i, name := range policyNames {
		if s == name {
			return Policy(i), true
		}
	}
	return PolicyElection, false
}

// ShareMetrics are a candidate's figures for share routing, from the
// gateway's tries of its window (sec. 8); a nil figure is missing.
type ShareMetrics struct {
	// Successes is n, the weight of the listing's own figures.
	Successes int64
	// ErrorRate, MalformedToolCallRate and RateLimitedRate are fractions of
	// tries; TTFTMs the mean time to first token; Speed end-to-end output
	// tokens a second (a TTFTMs or Speed <= 0 counts as missing).
	ErrorRate, MalformedToolCallRate, RateLimitedRate, TTFTMs, Speed *float64
}

// ShareMetricsFromHealth are a candidate's figures for the share policy
// read from its health as a catalogue serves it (uptime as the error share,
// latency as the first token, throughput as the speed), for a gateway that
// has no tries of its own to count. Catalogue health is already blended
// with the model's median by the same n / (n + 20) rule, so the figures
// are passed with a weight that keeps them as they are.
func ShareMetricsFromHealth(m Metrics) ShareMetrics {
	out := ShareMetrics{Successes: math.MaxInt32, TTFTMs: m.LatencyMs, Speed: m.Throughput}
	if u := m.Uptime; u != nil {
		e := min(max(1-*u/100, 0), 1)
		out.ErrorRate = &e
	}
	return out
}

// ShareOutcome is an eligible candidate's part under the share policy.
type ShareOutcome struct {
	AdjustedPrice float64
	// Speed is the blended speed; HasSpeed is false when no candidate has
	// one (the speed term is then left out).
	Speed    float64
	HasSpeed bool
	Distance float64
	Weight   float64
	Share    float64
	// The blended figures the adjusted price was made of (fractions of
	// tries; the first token in seconds, 0 unless streaming; malformed tool
	// calls 0 unless tools are required), the median speed the speed term
	// divides by, and Best, the lowest speed-adjusted price of the ballot
	// that Distance is measured from: what a preview explains the share by.
	ErrorRate, MalformedRate, TTFTSeconds, RateLimitedRate float64
	MedianSpeed, Best                                      float64
}

// Share routing's edge: a candidate's weight falls steeply past this
// distance from the best speed-adjusted price (sec. 8).
const ShareEdge = shareEdge

// AdjustedParts splits an adjusted price into what each figure adds to
// the routing price p, in the order of sec. 8's formula: the price, the
// errors (8x their rate), malformed tool calls (on the price and the
// errors), the first token and the 429s. They add up to AdjustedPrice.
func (s ShareOutcome) AdjustedParts(p float64) (price, errors, malformed, firstToken, limited float64) {
	errors = p * shareErrorFactor * s.ErrorRate
	malformed = (p + errors) * s.MalformedRate
	return p, errors, malformed, p * shareTTFTFactor * s.TTFTSeconds, p * shareLimitFactor * s.RateLimitedRate
}

// Share routing's constants (sec. 8).
const (
	shareErrorFactor  = 8
	shareTTFTFactor   = 0.1 // per second of first token, streaming only
	shareLimitFactor  = 2
	shareBlendN       = 20
	shareEdge         = 0.25
	shareFloor        = 0.02
	shareSteepness    = 4
	shareSlowFraction = 0.5
)

// applyShare spreads an elected result by share (sec. 8): each eligible
// candidate's adjusted price, speed, distance from the edge, weight and
// share, then ranks by share (ties by input order) and puts any half-open
// probe first. The election's factors and scores stay as they were.
func applyShare(b *Ballot, res *Result) {
	req := &b.Request
	res.Policy = PolicyShare
	// Medians over every candidate that has the figure, eligible or not.
	figure := func(m *ShareMetrics, k int) *float64 {
		switch k {
		case 0:
			return m.ErrorRate
		case 1:
			return m.MalformedToolCallRate
		case 2:
			return m.RateLimitedRate
		case 3:
			if m.TTFTMs != nil && *m.TTFTMs > 0 {
				return m.TTFTMs
			}
		case 4:
			if m.Speed != nil && *m.Speed > 0 {
				return m.Speed
			}
		}
		return nil
	}
	var medians [5]float64
	var have [5]bool
	values := make([]float64, 0, len(b.Candidates))
	for k := range medians {
		values = values[:0]
		for i := range b.Candidates {
			if v := figure(&b.Candidates[i].ShareMetrics, k); v != nil {
				values = append(values, *v)
			}
		}
		if len(values) > 0 {
			medians[k], have[k] = Median(values), true
		}
	}
	blend := func(m *ShareMetrics, k int) float64 {
		v := figure(m, k)
		switch {
		case v == nil:
			return medians[k] // 0 when no candidate has it
		default:
			n := float64(max(m.Successes, 0))
			return (n**v + shareBlendN*medians[k]) / (n + shareBlendN)
		}
	}
	eligible := 0
	minV, minPositive := math.Inf(1), math.Inf(1)
	for i := range res.Candidates {
		o := &res.Candidates[i]
		o.HasShare = o.Eligible
		if !o.Eligible {
			continue
		}
		eligible++
		m := &b.Candidates[i].ShareMetrics
		p := o.RoutingPrice
		e, q := blend(m, 0), blend(m, 2)
		var malformed, ttft float64
		if req.Requires.Has(CapTools) {
			malformed = blend(m, 1)
		}
		if req.Streaming {
			ttft = blend(m, 3) / 1000
		}
		s := &o.Share
		*s = ShareOutcome{AdjustedPrice: p*(1+shareErrorFactor*e)*(1+malformed) + p*shareTTFTFactor*ttft + p*shareLimitFactor*q,
			ErrorRate: e, MalformedRate: malformed, TTFTSeconds: ttft, RateLimitedRate: q}
		v := s.AdjustedPrice
		if have[4] {
			s.Speed, s.HasSpeed, s.MedianSpeed = blend(m, 4), true, medians[4]
			v = s.AdjustedPrice / math.Sqrt(s.Speed/medians[4])
		}
		s.Distance = v // the speed-adjusted price, until the minimum is known
		minV = min(minV, v)
		if v > 0 {
			minPositive = min(minPositive, v)
		}
	}
	if eligible == 0 {
		return
	}
	var sum float64
	for i := range res.Candidates {
		o := &res.Candidates[i]
		if !o.HasShare {
			continue
		}
		s := &o.Share
		v := s.Distance
		s.Best = minV
		switch {
		case minV > 0:
			s.Distance = v/minV - 1
		case v == 0:
			s.Distance = 0
		default:
			s.Distance = v / minPositive
		}
		s.Weight = 1 / (1 + math.Pow(s.Distance/shareEdge, shareSteepness))
		if b.Candidates[i].State.Slow {
			s.Weight *= shareSlowFraction
		}
		sum += s.Weight
	}
	for i := range res.Candidates {
		if o := &res.Candidates[i]; o.HasShare {
			if sum > 0 {
				o.Share.Share = (1-shareFloor)*o.Share.Weight/sum + shareFloor/float64(eligible)
			} else {
				o.Share.Share = 1 / float64(eligible)
			}
		}
	}
	// Rank by share, ties by input order; probes first in the order.
	res.order = res.order[:0]
	for i := range res.Candidates {
		if res.Candidates[i].HasShare {
			res.order = append(res.order, int32(i))
		}
	}
	slices.SortStableFunc(res.order, func(a, c int32) int {
		return cmp.Compare(res.Candidates[c].Share.Share, res.Candidates[a].Share.Share)
	})
	for r, i := range res.order {
		res.Candidates[i].Rank = r + 1
	}
	res.Winner = int(res.order[0])
}

// Median is the middle value of values, or the mean of the two middle
// ones (0 for none); values is sorted in place. The share policy's medians
// and the gateway's peer rules all take it.
func Median(values []float64) float64 {
	if len(values) == 0 {
		return 0
	}
	slices.Sort(values)
	n := len(values)
	if n%2 == 1 {
		return values[n/2]
	}
	return (values[n/2-1] + values[n/2]) / 2
}
