package election

import (
	"fmt"
	"math"
	"strings"
)

// Lever is what a carrier can change to win an election.
type Lever uint8

// The levers the solver moves.
const (
	// LeverPriceMultiplier scales every filed price of the fare.
	LeverPriceMultiplier Lever = iota
	// LeverLandingFee sets the landing fee (5-50 %).
	LeverLandingFee
	// LeverDiscount sets the traffic discount (0-50 %).
	LeverDiscount
	// LeverUptime sets the measured uptime: not filed, earned.
	LeverUptime
)

func (l Lever) String() string {
	return [...]string{"price multiplier", "landing fee", "discount", "uptime"}[l]
}

// Solution is what one lever must be set to for a candidate to become rank 1.
type Solution struct {
	Lever Lever
	// CanWin is false when no value of the lever in its range wins; Reason then
	// says why.
	CanWin bool
	// Value is the boundary: the largest price multiplier, or the lowest landing
	// fee, discount or uptime, at which the candidate is rank 1. Every value on
	// the winning side of it wins too.
	Value float64
	// Unbounded is set for the price multiplier when the candidate wins at any
	// price (it has no eligible competitor, or the others are excluded).
	Unbounded bool
	// WinsNow reports whether the candidate is rank 1 as filed.
	WinsNow bool
	Reason  string
}

// Bounds of the search.
const (
	// maxMultiplier bounds the upward search: a fare 10,000 times its filing is
	// "any price" for a person reading the answer.
	maxMultiplier = 1e4
	minMultiplier = 1e-6
	bisectSteps   = 64
	// bisectTolerance is the relative width at which a bisection stops.
	bisectTolerance = 1e-12
)

// Solver answers "what does it take to win" for one candidate of a ballot,
// reusing one result buffer across the elections it runs.
type Solver struct {
	ballot *Ballot
	index  int
	res    Result
	// base is the election as filed, whose other candidates' prices every
	// trial reuses (only the solved candidate's change); built on first use.
	base     Result
	haveBase bool
	// margin is the lead over every other eligible candidate that counts as
	// winning (0: plain rank 1).
	margin float64
}

// IncumbentMargin is the lead a challenger needs over a stable incumbent.
const IncumbentMargin = 0.15

// WithMargin makes the solver ask for a lead of more than m score points
// over every other candidate (IncumbentMargin to displace a stable
// incumbent), not just rank 1.
func (s *Solver) WithMargin(m float64) *Solver {
	s.margin = m
	return s
}

// NewSolver prepares a solver for candidate index of b. The ballot is read,
// never changed.
func NewSolver(b *Ballot, index int) *Solver {
	return &Solver{ballot: b, index: index}
}

// Reset points the solver at another ballot and candidate, keeping its
// buffers: one solver serves many ballots without allocating again.
func (s *Solver) Reset(b *Ballot, index int) *Solver {
	s.ballot, s.index, s.haveBase, s.margin = b, index, false, 0
	return s
}

// Current runs the election as filed.
func (s *Solver) Current() *Result {
	elect(s.ballot, &s.res, nil, true, nil)
	return &s.res
}

func (s *Solver) winsWith(adj adjustment) bool {
	adj.index = s.index
	elect(s.ballot, &s.res, &adj, false, s.baseline()) // the bisection needs the winner, not the ranking
	return s.winsIn(&s.res)
}

// winsIn reads an election: rank 1, with the margin when one is asked.
func (s *Solver) winsIn(res *Result) bool {
	if res.Winner != s.index {
		return false
	}
	if s.margin <= 0 {
		return true
	}
	mine := res.Candidates[s.index].Score
	for _, i := range res.order {
		if int(i) != s.index && res.Candidates[i].Score-mine <= s.margin {
			return false
		}
	}
	return true
}

// exclusionReason reports a candidate that no lever can bring on the ballot,
// from the election as filed (run once per solver, not once per lever).
func (s *Solver) exclusionReason() (string, bool) {
	o := s.baseline().Candidates[s.index]
	if o.Eligible {
		return "", false
	}
	return "cannot win: excluded (" + strings.Join(o.Excluded.Reasons(), ", ") + ")", true
}

// PriceMultiplier finds the largest factor by which every filed price can be
// multiplied with the candidate still rank 1.
func (s *Solver) PriceMultiplier() Solution {
	sol := Solution{Lever: LeverPriceMultiplier}
	if reason, excluded := s.exclusionReason(); excluded {
		sol.Reason = reason
		return sol
	}
	sol.WinsNow = s.winsIn(s.baseline())
	if s.baseline().Candidates[s.index].RoutingPrice == 0 {
		// A free fare scales to itself: only the other factors decide.
		sol.CanWin, sol.Value = sol.WinsNow, 1
		if !sol.WinsNow {
			sol.Reason = s.cannotWinReason(adjustment{})
		}
		return sol
	}
	wins := func(m float64) bool { return s.winsWith(adjustment{scale: m}) }
	lo, hi := 0.0, 0.0
	if sol.WinsNow {
		lo, hi = 1, 2
		for wins(hi) {
			lo, hi = hi, hi*2
			if hi > maxMultiplier {
				sol.CanWin, sol.Unbounded, sol.Value = true, true, math.Inf(1)
				return sol
			}
		}
	} else {
		lo, hi = 0.5, 1
		for !wins(lo) {
			lo, hi = lo/2, lo
			if lo < minMultiplier {
				sol.Reason = s.cannotWinReason(adjustment{scale: minMultiplier})
				return sol
			}
		}
	}
	sol.CanWin, sol.Value = true, bisect(lo, hi, wins)
	return sol
}

// LandingFee finds the lowest landing fee in 5-50 % at which the candidate is
// rank 1 (a higher fee lowers its routing price, so every fee above wins too).
func (s *Solver) LandingFee() Solution {
	return s.solveRate(LeverLandingFee, MinLandingFee, MaxLandingFee, func(v float64) adjustment {
		return adjustment{landingFee: &v}
	})
}

// Discount finds the lowest discount in 0-50 % at which the candidate is rank 1.
func (s *Solver) Discount() Solution {
	return s.solveRate(LeverDiscount, 0, MaxDiscount, func(v float64) adjustment {
		return adjustment{discount: &v}
	})
}

// Uptime finds the lowest uptime (percent) at which the candidate would be rank
// 1 with its fare as filed.
func (s *Solver) Uptime() Solution {
	return s.solveRate(LeverUptime, 0, 100, func(v float64) adjustment {
		return adjustment{uptime: &v}
	})
}

// solveRate bisects a lever whose winning values form [boundary, upper].
func (s *Solver) solveRate(lever Lever, lower, upper float64, adj func(float64) adjustment) Solution {
	sol := Solution{Lever: lever}
	if reason, excluded := s.exclusionReason(); excluded {
		sol.Reason = reason
		return sol
	}
	sol.WinsNow = s.winsIn(s.baseline())
	wins := func(v float64) bool { return s.winsWith(adj(v)) }
	if !wins(upper) {
		sol.Reason = s.cannotWinReason(adj(upper))
		return sol
	}
	sol.CanWin = true
	if wins(lower) {
		sol.Value = lower
		return sol
	}
	// Bisect with the predicate reversed: winning values are the high ones.
	sol.Value = bisect(upper, lower, wins)
	return sol
}

// bisect narrows [good, bad] (in either order) to the boundary and returns the
// last value that satisfied pred.
func bisect(good, bad float64, pred func(float64) bool) float64 {
	for range bisectSteps {
		mid := (good + bad) / 2
		// Stop at a trillionth: finer than any price (micro-dollars) or rate
		// (basis points) the answer is shown in.
		if mid == good || mid == bad || math.Abs(bad-good) <= bisectTolerance*math.Max(1, math.Abs(good)) {
			break
		}
		if pred(mid) {
			good = mid
		} else {
			bad = mid
		}
	}
	return good
}

// cannotWinReason explains, at the lever's best setting, what keeps the
// candidate from rank 1.
func (s *Solver) cannotWinReason(best adjustment) string {
	best.index = s.index
	elect(s.ballot, &s.res, &best, false, s.baseline())
	res := &s.res
	if res.Winner < 0 {
		return "cannot win: no one is eligible"
	}
	me, winner := &res.Candidates[s.index], &res.Candidates[res.Winner]
	gap := me.Score - winner.Score
	if me.UptimePenalty > 0 && me.Score-me.UptimePenalty <= winner.Score {
		room := winner.Score - (me.Score - me.UptimePenalty)
		return fmt.Sprintf("cannot win: the uptime penalty (%.3f) alone exceeds the %.3f score points left between it and %s",
			me.UptimePenalty, room, winner.ID)
	}
	if me.PriorityPenalty > 0 && me.Score-me.PriorityPenalty <= winner.Score {
		return fmt.Sprintf("cannot win: the priority set by gateway staff costs %.3f, more than the gap to %s", me.PriorityPenalty, winner.ID)
	}
	w := res.Weights
	parts := []struct {
		name string
		diff float64
	}{
		{"uptime", w.Uptime * (me.Factors.Uptime - winner.Factors.Uptime)},
		{"throughput", w.Throughput * (me.Factors.Throughput - winner.Factors.Throughput)},
		{"latency", w.Latency * (me.Factors.Latency - winner.Factors.Latency)},
		{"cache support", w.Cache * (me.Factors.Cache - winner.Factors.Cache)},
		{"price", w.Price * (me.Factors.Price - winner.Factors.Price)},
	}
	worst := parts[0]
	for _, p := range parts[1:] {
		if p.diff > worst.diff {
			worst = p
		}
	}
	return fmt.Sprintf("cannot win: %s stays %.3f score points ahead, mostly on %s", winner.ID, gap, worst.name)
}

// baseline is the election as filed, run once per solver.
func (s *Solver) baseline() *Result {
	if !s.haveBase {
		elect(s.ballot, &s.base, nil, false, nil)
		s.haveBase = true
	}
	return &s.base
}
