package election_test

import (
	"fmt"
	"math"
	"testing"

	"github.com/airside/airside/internal/election"
)

// benchBallot is a realistic ballot: a cache-relevant, streaming auto request
// over n listings with metrics, cached prices and some tiers.
func benchBallot(n int) election.Ballot {
	b := election.Ballot{Request: election.Request{PromptTokens: 20000, Streaming: true, Workload: election.WorkloadCoding}}
	for i := range n {
		c := cand(fmt.Sprintf("carrier-%d", i), 0.4+float64(i%17)/100, 1.6+float64(i%13)/50)
		c.Fare.CachedInput = f(0.1 + float64(i%5)/100)
		c.Fare.LandingFee = f(0.05 + float64(i%10)*0.05)
		c.Metrics = election.Metrics{Uptime: f(90 + float64(i%10)), LatencyMs: f(300 + float64(i%7)*40), Throughput: f(40 + float64(i%11)*5)}
		if i%3 == 0 {
			c.Fare.Tiers = []election.Tier{{AboveTokens: 32768, PriceBlock: election.PriceBlock{Input: f(0.8)}}}
		}
		b.Candidates = append(b.Candidates, c)
	}
	return b
}

func BenchmarkElect(b *testing.B) {
	for _, size := range []int{8, 64, 1024} {
		ballot := benchBallot(size)
		b.Run(fmt.Sprintf("candidates=%d/reuse", size), func(b *testing.B) {
			var res election.Result
			b.ReportAllocs()
			for b.Loop() {
				election.ElectInto(&ballot, &res)
			}
		})
		b.Run(fmt.Sprintf("candidates=%d/fresh", size), func(b *testing.B) {
			b.ReportAllocs()
			for b.Loop() {
				_ = election.Elect(&ballot)
			}
		})
	}
}

func BenchmarkSolver(b *testing.B) {
	ballot := benchBallot(20)
	b.ReportAllocs()
	for b.Loop() {
		s := election.NewSolver(&ballot, 3)
		s.PriceMultiplier()
		s.LandingFee()
		s.Discount()
	}
}

// floatScores is the floor the engine is measured against: the score of
// every candidate from prices and metrics already resolved into flat float64
// arrays, and the winner, with nothing else (no fare resolution, exclusions,
// defaults, weights or results). The engine does all of that too; the ratio
// of the two, measured side by side in one run, is what the README reports.
type floatBallot struct {
	input, output, cached, fee, discount, uptime, latency, throughput []float64
}

func floatBallotOf(b *election.Ballot) floatBallot {
	var fb floatBallot
	for _, c := range b.Candidates {
		in, out := c.Fare.Input, c.Fare.Output
		cached := in
		if c.Fare.CachedInput != nil {
			cached = *c.Fare.CachedInput
		}
		fee := 0.2
		if c.Fare.LandingFee != nil {
			fee = *c.Fare.LandingFee
		}
		fb.input, fb.output, fb.cached = append(fb.input, in), append(fb.output, out), append(fb.cached, cached)
		fb.fee, fb.discount = append(fb.fee, fee), append(fb.discount, c.Fare.Discount)
		fb.uptime = append(fb.uptime, *c.Metrics.Uptime)
		fb.latency = append(fb.latency, *c.Metrics.LatencyMs)
		fb.throughput = append(fb.throughput, *c.Metrics.Throughput)
	}
	return fb
}

func floatWinner(fb *floatBallot, scores []float64) int {
	const h, r = 0.9, 0.02
	n := len(fb.input)
	minP, maxU, maxT, minL := math.Inf(1), 0.0, 0.0, math.Inf(1)
	for i := range n {
		p := (fb.cached[i]*h + fb.input[i]*(1-h) + fb.output[i]*r) / 2 * (1 - fb.discount[i]) * (1.2 - fb.fee[i])
		scores[i] = p
		minP, maxU = min(minP, p), max(maxU, fb.uptime[i])
		maxT, minL = max(maxT, fb.throughput[i]), min(minL, fb.latency[i])
	}
	best := 0
	for i := range n {
		s := 0.6*(scores[i]/minP-1) + 0.5*(maxU/fb.uptime[i]-1) + 0.05*min(maxT/fb.throughput[i]-1, 3) + 0.025*(fb.latency[i]/minL-1)
		scores[i] = s
		if s < scores[best] {
			best = i
		}
	}
	return best
}

// BenchmarkEngineVsFloatLoop runs, at each size, the float floor, the full
// election (ranks and every figure), the winner-only path on a plain ballot
// and the compiled winner-only path.
func BenchmarkEngineVsFloatLoop(b *testing.B) {
	for _, size := range []int{8, 64, 1024, 16384} {
		ballot := benchBallot(size)
		fb := floatBallotOf(&ballot)
		scores := make([]float64, size)
		b.Run(fmt.Sprintf("candidates=%d/float-loop", size), func(b *testing.B) {
			for b.Loop() {
				_ = floatWinner(&fb, scores)
			}
		})
		b.Run(fmt.Sprintf("candidates=%d/elect", size), func(b *testing.B) {
			var res election.Result
			for b.Loop() {
				election.ElectInto(&ballot, &res)
			}
		})
		b.Run(fmt.Sprintf("candidates=%d/winner-only", size), func(b *testing.B) {
			var res election.Result
			for b.Loop() {
				election.ElectWinnerInto(&ballot, &res)
			}
		})
		// The compiled ballot, built once per catalogue revision as the
		// routing snapshot does, then one winner-only election per request.
		compiled := election.Compile(&ballot)
		b.Run(fmt.Sprintf("candidates=%d/compiled-winner", size), func(b *testing.B) {
			for b.Loop() {
				compiled.Winner(&ballot.Request, nil)
			}
		})
	}
}
