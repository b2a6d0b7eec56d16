package election_test

import (
	"math"
	"strings"
	"testing"

	"github.com/airside/airside/internal/election"
)

// scaled returns c with every filed price multiplied by m, as a carrier would
// file it: the solver's answer must hold on a real filing, not only inside it.
func scaled(c election.Candidate, m float64) election.Candidate {
	mul := func(p *float64) *float64 {
		if p == nil {
			return nil
		}
		v := *p * m
		return &v
	}
	c.Fare.Input *= m
	c.Fare.Output *= m
	c.Fare.CachedInput = mul(c.Fare.CachedInput)
	c.Fare.RequestPrice *= m
	c.Fare.ImagePrice *= m
	scaleBlock := func(b election.PriceBlock) election.PriceBlock {
		out := election.PriceBlock{Input: mul(b.Input), Output: mul(b.Output), CachedInput: mul(b.CachedInput)}
		if b.Fees != nil {
			out.Fees = &election.FeeBlock{Request: mul(b.Fees.Request), Image: mul(b.Fees.Image)}
		}
		return out
	}
	tiers := make([]election.Tier, len(c.Fare.Tiers))
	for i, t := range c.Fare.Tiers {
		tiers[i] = election.Tier{AboveTokens: t.AboveTokens, PriceBlock: scaleBlock(t.PriceBlock)}
	}
	c.Fare.Tiers = tiers
	if tb := c.Fare.TimeBased; tb != nil {
		block := *tb
		block.Peak, block.OffPeak = scaleBlock(tb.Peak), scaleBlock(tb.OffPeak)
		c.Fare.TimeBased = &block
	}
	return c
}

func rankOf(b *election.Ballot, i int) int {
	res := election.Elect(b)
	return res.Candidates[i].Rank
}

func withCandidate(b election.Ballot, i int, c election.Candidate) *election.Ballot {
	cands := append([]election.Candidate(nil), b.Candidates...)
	cands[i] = c
	b.Candidates = cands
	return &b
}

func solverBallots() map[string]election.Ballot {
	return map[string]election.Ballot{
		"three carriers, small prompt": {
			Request: election.Request{PromptTokens: 1000},
			Candidates: []election.Candidate{
				withMetrics(cand("me", 0.60, 2.50), election.Metrics{Uptime: f(99), Throughput: f(60)}),
				withMetrics(cand("rival", 0.55, 2.20), election.Metrics{Uptime: f(98), Throughput: f(80)}),
				withMetrics(cand("slow", 0.50, 2.00), election.Metrics{Uptime: f(96), Throughput: f(20)}),
			},
		},
		"coding session with tiers": {
			Request: election.Request{PromptTokens: 40000, Workload: election.WorkloadCoding, Streaming: true, SessionOpening: true},
			Candidates: []election.Candidate{
				func() election.Candidate {
					c := cand("me", 0.40, 1.60)
					c.Fare.CachedInput = f(0.2)
					c.Fare.Tiers = []election.Tier{{AboveTokens: 32768, PriceBlock: election.PriceBlock{Input: f(0.8), CachedInput: f(0.3)}}}
					return c
				}(),
				func() election.Candidate { c := cand("rival", 0.45, 1.80); c.Fare.CachedInput = f(0.05); return c }(),
			},
		},
	}
}

func TestSolverPriceMultiplier(t *testing.T) {
	for name, b := range solverBallots() {
		t.Run(name, func(t *testing.T) {
			sol := election.NewSolver(&b, 0).PriceMultiplier()
			if !sol.CanWin || sol.Unbounded {
				t.Fatalf("solution %+v", sol)
			}
			if got := rankOf(withCandidate(b, 0, scaled(b.Candidates[0], sol.Value)), 0); got != 1 {
				t.Errorf("at multiplier %v the candidate ranks %d, want 1", sol.Value, got)
			}
			lessAmbitious := sol.Value * (1 + 1e-9)
			if got := rankOf(withCandidate(b, 0, scaled(b.Candidates[0], lessAmbitious)), 0); got == 1 {
				t.Errorf("at multiplier %v (just above the answer) the candidate still ranks 1", lessAmbitious)
			}
		})
	}
}

func TestSolverLandingFeeAndDiscount(t *testing.T) {
	b := solverBallots()["three carriers, small prompt"]
	s := election.NewSolver(&b, 0)
	fee := s.LandingFee()
	if !fee.CanWin || fee.Value <= election.MinLandingFee || fee.Value >= election.MaxLandingFee {
		t.Fatalf("landing fee solution %+v", fee)
	}
	withFee := func(v float64) *election.Ballot {
		c := b.Candidates[0]
		c.Fare.LandingFee = f(v)
		return withCandidate(b, 0, c)
	}
	if rankOf(withFee(fee.Value), 0) != 1 || rankOf(withFee(fee.Value-1e-9), 0) == 1 {
		t.Errorf("landing fee %v is not the boundary", fee.Value)
	}

	disc := s.Discount()
	withDiscount := func(v float64) *election.Ballot {
		c := b.Candidates[0]
		c.Fare.Discount = v
		return withCandidate(b, 0, c)
	}
	if !disc.CanWin || rankOf(withDiscount(disc.Value), 0) != 1 || rankOf(withDiscount(disc.Value-1e-9), 0) == 1 {
		t.Errorf("discount solution %+v is not the boundary", disc)
	}
}

func TestSolverCannotWin(t *testing.T) {
	for _, test := range []struct {
		name       string
		ballot     election.Ballot
		lever      func(*election.Solver) election.Solution
		wantReason string
	}{
		{
			name: "excluded by a capability",
			ballot: election.Ballot{Request: election.Request{Requires: election.CapabilitySet(election.CapTools)}, Candidates: []election.Candidate{
				cand("me", 0.1, 0.1), func() election.Candidate {
					c := cand("rival", 1, 1)
					c.Capabilities = election.CapabilitySet(election.CapTools)
					return c
				}(),
			}},
			lever:      (*election.Solver).PriceMultiplier,
			wantReason: "excluded (capability:tools)",
		},
		{
			name: "uptime penalty larger than the whole gap",
			ballot: election.Ballot{Candidates: []election.Candidate{
				withMetrics(cand("me", 0.40, 0.40), election.Metrics{Uptime: f(80)}),
				withMetrics(cand("rival", 0.45, 0.45), election.Metrics{Uptime: f(99.9)}),
			}},
			lever:      (*election.Solver).LandingFee,
			wantReason: "uptime penalty",
		},
		{
			name: "a free rival with better health",
			ballot: election.Ballot{Candidates: []election.Candidate{
				withMetrics(cand("me", 0.40, 0.40), election.Metrics{Uptime: f(97)}),
				cand("free", 0, 0),
			}},
			lever:      (*election.Solver).Discount,
			wantReason: "cannot win",
		},
	} {
		t.Run(test.name, func(t *testing.T) {
			sol := test.lever(election.NewSolver(&test.ballot, 0))
			if sol.CanWin || !strings.Contains(sol.Reason, test.wantReason) {
				t.Errorf("solution %+v, want a reason containing %q", sol, test.wantReason)
			}
		})
	}
}

func TestSolverUptimeNeeded(t *testing.T) {
	b := election.Ballot{Candidates: []election.Candidate{
		withMetrics(cand("me", 0.40, 0.40), election.Metrics{Uptime: f(80)}),
		withMetrics(cand("rival", 0.45, 0.45), election.Metrics{Uptime: f(99.9)}),
	}}
	sol := election.NewSolver(&b, 0).Uptime()
	if !sol.CanWin || sol.Value <= 80 || sol.Value >= 99.9 {
		t.Fatalf("uptime solution %+v", sol)
	}
	at := func(u float64) *election.Ballot {
		return withCandidate(b, 0, withMetrics(b.Candidates[0], election.Metrics{Uptime: f(u)}))
	}
	if rankOf(at(sol.Value), 0) != 1 || rankOf(at(sol.Value-1e-7), 0) == 1 {
		t.Errorf("uptime %v is not the boundary", sol.Value)
	}
}

func TestSolverUnboundedAlone(t *testing.T) {
	b := election.Ballot{Candidates: []election.Candidate{cand("me", 1, 1)}}
	sol := election.NewSolver(&b, 0).PriceMultiplier()
	if !sol.CanWin || !sol.Unbounded || !math.IsInf(sol.Value, 1) || !sol.WinsNow {
		t.Errorf("a lone candidate should win at any price: %+v", sol)
	}
}

func TestSolverMarginToDisplaceAnIncumbent(t *testing.T) {
	b := solverBallots()["three carriers, small prompt"]
	plain := election.NewSolver(&b, 0).PriceMultiplier()
	lead := election.NewSolver(&b, 0).WithMargin(election.IncumbentMargin).PriceMultiplier()
	if !lead.CanWin || lead.Value >= plain.Value {
		t.Fatalf("displacing the incumbent should take a deeper cut: plain %v, with margin %v", plain.Value, lead.Value)
	}
	res := election.Elect(withCandidate(b, 0, scaled(b.Candidates[0], lead.Value)))
	mine := res.Candidates[0].Score
	for i, o := range res.Candidates {
		if i != 0 && o.Eligible && o.Score-mine <= election.IncumbentMargin {
			t.Errorf("at %v the lead over %s is only %v", lead.Value, o.ID, o.Score-mine)
		}
	}
}
