package election_test

import (
	"math"
	"testing"

	"github.com/airside/airside/internal/election"
)

func shareCand(id string, price float64, n int64, errRate, speed float64) election.Candidate {
	c := cand(id, price, price)
	c.ShareMetrics = election.ShareMetrics{Successes: n, ErrorRate: f(errRate), Speed: f(speed)}
	return c
}

// toolCallers are two listings with tools, alike but for their malformed
// tool calls (half of the first's).
func toolCallers() []election.Candidate {
	bad := shareCand("bad-tools", 1, 500, 0, 80)
	bad.ShareMetrics.MalformedToolCallRate = f(0.5)
	bad.Capabilities = election.CapabilitySet(election.CapTools)
	good := shareCand("good", 1, 500, 0, 80)
	good.ShareMetrics.MalformedToolCallRate = f(0)
	good.Capabilities = election.CapabilitySet(election.CapTools)
	return []election.Candidate{bad, good}
}

// TestShareRouting: the share policy's rules (election.md sec. 8) beyond the
// worked vectors: the floor, a free listing, a new listing judged as a
// typical peer, malformed tool calls only for tool requests, first tokens
// only when streaming, speed trading against price, and a sorted request
// elected as sec. 3 says.
func TestShareRouting(t *testing.T) {
	for _, test := range []struct {
		name    string
		mutate  func(b *election.Ballot)
		check   func(t *testing.T, res election.Result)
		options []election.Candidate
	}{
		{name: "every eligible listing keeps the floor", options: []election.Candidate{
			shareCand("cheap", 1, 500, 0, 80), shareCand("dear", 3, 500, 0, 80)},
			check: func(t *testing.T, res election.Result) {
				if s := res.Candidates[1].Share.Share; math.Abs(s-0.01-0.98*res.Candidates[1].Share.Weight/(1+res.Candidates[1].Share.Weight)) > 1e-12 || s < 0.01 {
					t.Errorf("the dear listing's share %v", s)
				}
				if res.WinnerID() != "cheap" || res.Candidates[0].Rank != 1 {
					t.Errorf("winner %s", res.WinnerID())
				}
			}},
		{name: "a free listing is the edge", options: []election.Candidate{
			shareCand("free", 0, 500, 0, 80), shareCand("paid", 1, 500, 0, 80)},
			check: func(t *testing.T, res election.Result) {
				if res.Candidates[0].Share.Distance != 0 || res.Candidates[1].Share.Distance != 1 {
					t.Errorf("distances %v %v, want 0 and v over the smallest positive v", res.Candidates[0].Share.Distance, res.Candidates[1].Share.Distance)
				}
			}},
		{name: "a new listing starts as a typical peer", options: []election.Candidate{
			shareCand("a", 1, 500, 0.01, 80), shareCand("b", 1, 500, 0.01, 80), shareCand("new", 1, 0, 0.5, 10)},
			check: func(t *testing.T, res election.Result) {
				if a, n := res.Candidates[0].Share, res.Candidates[2].Share; n.AdjustedPrice != a.AdjustedPrice || n.Speed != a.Speed {
					t.Errorf("the new listing %+v, its peers %+v", n, a)
				}
			}},
		{name: "malformed tool calls count only for tool requests", options: toolCallers(),
			check: func(t *testing.T, res election.Result) {
				if res.Candidates[0].Share.AdjustedPrice != res.Candidates[1].Share.AdjustedPrice {
					t.Errorf("malformed calls moved a request without tools: %v %v", res.Candidates[0].Share.AdjustedPrice, res.Candidates[1].Share.AdjustedPrice)
				}
			}},
		{name: "with tools they do", mutate: func(b *election.Ballot) { b.Request.Requires = election.CapabilitySet(election.CapTools) },
			options: toolCallers(),
			check: func(t *testing.T, res election.Result) {
				if res.WinnerID() != "good" || res.Candidates[0].Share.AdjustedPrice <= res.Candidates[1].Share.AdjustedPrice {
					t.Errorf("winner %s; adjusted %v %v", res.WinnerID(), res.Candidates[0].Share.AdjustedPrice, res.Candidates[1].Share.AdjustedPrice)
				}
			}},
		{name: "speed trades against price", options: []election.Candidate{
			shareCand("cheap-slow", 1, 500, 0, 20), shareCand("dear-fast", 1.5, 500, 0, 80)},
			check: func(t *testing.T, res election.Result) {
				if res.WinnerID() != "dear-fast" {
					t.Errorf("a listing four times as fast at 1.5x the price lost: %s", res.WinnerID())
				}
			}},
		{name: "a sorted request is elected", mutate: func(b *election.Ballot) { b.Request.Routing = election.ModeThroughput },
			options: []election.Candidate{shareCand("a", 1, 500, 0, 80), shareCand("b", 2, 500, 0, 80)},
			check: func(t *testing.T, res election.Result) {
				if res.Policy != election.PolicyElection || res.Candidates[0].HasShare {
					t.Errorf("policy %v", res.Policy)
				}
			}},
	} {
		t.Run(test.name, func(t *testing.T) {
			b := &election.Ballot{Request: election.Request{Model: "m", PromptTokens: 1000}, Candidates: test.options, Policy: election.PolicyShare}
			if test.mutate != nil {
				test.mutate(b)
			}
			res := election.Elect(b)
			var sum float64
			for _, o := range res.Candidates {
				sum += o.Share.Share
			}
			if res.Policy == election.PolicyShare && math.Abs(sum-1) > 1e-12 {
				t.Errorf("shares add up to %v", sum)
			}
			test.check(t, res)
		})
	}
}
