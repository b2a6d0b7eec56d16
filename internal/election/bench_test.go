package election_test

import (
	"fmt"
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
