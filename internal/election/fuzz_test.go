package election_test

import (
	"encoding/json"
	"errors"
	"math"
	"math/rand/v2"
	"slices"
	"strings"
	"testing"
	"time"

	"github.com/airside/airside/internal/election"
)

// randomBallot builds a ballot from a seed: every field the engine reads is
// drawn, including missing metrics, caps, tiers and time blocks.
func randomBallot(seed uint64, size uint8) election.Ballot {
	rng := rand.New(rand.NewPCG(seed, seed^0x9e3779b97f4a7c15))
	maybe := func(p float64, v float64) *float64 {
		if rng.Float64() < p {
			return &v
		}
		return nil
	}
	priceOf := func() float64 {
		if rng.IntN(10) == 0 {
			return 0 // free candidates happen
		}
		return math.Round(rng.Float64()*500) / 100
	}
	b := election.Ballot{Request: election.Request{
		PromptTokens:   int64(rng.IntN(100000)),
		Streaming:      rng.IntN(2) == 0,
		Routing:        election.Mode(rng.IntN(4)),
		Workload:       election.Workload(rng.IntN(3)),
		SessionOpening: rng.IntN(5) == 0,
		Requires:       election.Capabilities(rng.IntN(4)),
		At:             time.Date(2026, 11, 1+rng.IntN(28), rng.IntN(24), rng.IntN(60), 0, 0, time.UTC),
		CacheHitRate:   maybe(0.2, rng.Float64()*1.4-0.2),
	}}
	if rng.IntN(8) == 0 {
		b.Request.At = time.Time{} // the contract's pure default: base prices
	}
	if rng.IntN(4) == 0 {
		b.AutoWeights = &election.Weights{Price: rng.Float64(), Uptime: rng.Float64(), Cache: rng.Float64()}
	}
	count := int(size%24) + 1
	for i := range count {
		c := election.Candidate{
			ID:           string(rune('a' + i)),
			Capabilities: election.Capabilities(rng.IntN(8)),
			Priority:     maybe(0.2, float64(rng.IntN(3))-0.5),
			Metrics: election.Metrics{
				Uptime:     maybe(0.7, rng.Float64()*100),
				LatencyMs:  maybe(0.7, rng.Float64()*2000),
				Throughput: maybe(0.7, rng.Float64()*200),
			},
			Usage: election.Usage{RPM: int64(rng.IntN(20))},
			Fare: election.Fare{
				Input: priceOf(), Output: priceOf(),
				CachedInput: maybe(0.5, priceOf()),
				Discount:    rng.Float64() * 0.5,
				LandingFee:  maybe(0.5, 0.05+rng.Float64()*0.45),
			},
		}
		if rng.IntN(3) == 0 {
			c.Fare.MaxRPM = n(int64(rng.IntN(20)))
		}
		for range rng.IntN(5) - 1 { // up to 3 tiers, thresholds possibly repeated
			c.Fare.Tiers = append(c.Fare.Tiers, election.Tier{AboveTokens: int64(rng.IntN(4)) * 16000,
				PriceBlock: election.PriceBlock{Input: maybe(0.8, priceOf()), CachedInput: maybe(0.5, priceOf())}})
		}
		if rng.IntN(3) == 0 {
			start := rng.IntN(23)
			c.Fare.TimeBased = &election.TimeBased{
				PeakHours:   []election.PeakWindow{{Start: start, End: start + 1 + rng.IntN(24-start)}},
				OffPeakDays: &election.OffPeakDays{Days: uint8(rng.IntN(128)), UTCOffsetMinutes: rng.IntN(1561) - 720},
				Peak:        election.PriceBlock{Input: maybe(0.9, priceOf())},
				OffPeak:     election.PriceBlock{Output: maybe(0.9, priceOf())},
			}
			if rng.IntN(3) == 0 {
				c.Fare.TimeBased.EffectiveAt = time.Date(2026, 11, 1+rng.IntN(28), rng.IntN(24), 0, 0, 0, time.UTC)
			}
		}
		addMarketAttributes(rng, &c.Fare, maybe, priceOf)
		b.Candidates = append(b.Candidates, c)
	}
	addPreferences(rng, &b.Request, count)
	return b
}

var (
	fuzzQuantizations = election.Quantizations()
	fuzzRegions       = []string{"DE", "FR", "US", "JP"}
)

// addMarketAttributes draws sec. 7's attributes of a fare: each may be
// undeclared.
func addMarketAttributes(rng *rand.Rand, f *election.Fare, maybe func(float64, float64) *float64, priceOf func() float64) {
	if rng.IntN(3) == 0 {
		f.ContextLength = n(int64(8000 + rng.IntN(200000)))
	}
	if rng.IntN(3) == 0 {
		f.MaxOutputTokens = n(int64(1000 + rng.IntN(30000)))
	}
	f.Quantization = fuzzQuantizations[rng.IntN(len(fuzzQuantizations))]
	if rng.IntN(2) == 0 {
		f.DataPolicy.RetentionDays = n(int64(rng.IntN(3) * 15))
		trains := rng.IntN(3) == 0
		f.DataPolicy.TrainsOnPrompts = &trains
	}
	for _, r := range fuzzRegions {
		if rng.IntN(3) == 0 {
			f.Regions = append(f.Regions, r)
		}
	}
	if rng.IntN(4) == 0 {
		f.RequestPrice = priceOf() / 1000
	}
	if rng.IntN(4) == 0 {
		f.ImagePrice = priceOf() / 1000
	}
	for i := range f.Tiers {
		if rng.IntN(3) == 0 {
			f.Tiers[i].Fees = &election.FeeBlock{Request: maybe(1, priceOf()/1000)}
		}
	}
}

// addPreferences draws a request's sec. 7 fields: output asked for,
// images, residency and a provider object naming candidates a, b, c...
func addPreferences(rng *rand.Rand, req *election.Request, count int) {
	if rng.IntN(3) == 0 {
		req.MaxTokens = int64(1 + rng.IntN(40000))
	}
	req.Images = int64(rng.IntN(3))
	if rng.IntN(4) == 0 {
		req.Regions = []string{fuzzRegions[rng.IntN(len(fuzzRegions))]}
	}
	if rng.IntN(2) == 0 {
		return
	}
	id := func() string { return string(rune('a' + rng.IntN(count))) }
	p := &election.Provider{NoFallbacks: rng.IntN(3) == 0, DenyDataCollection: rng.IntN(4) == 0, ZDR: rng.IntN(6) == 0}
	for range rng.IntN(3) {
		p.Order = append(p.Order, id())
	}
	if rng.IntN(4) == 0 {
		p.Only = []string{id(), id()}
	}
	if rng.IntN(4) == 0 {
		p.Ignore = []string{id()}
	}
	if rng.IntN(4) == 0 {
		p.Quantizations = p.Quantizations.With(fuzzQuantizations[rng.IntN(len(fuzzQuantizations))])
	}
	if rng.IntN(4) == 0 {
		limit := rng.Float64() * 4
		p.MaxPrice = &election.MaxPrice{Prompt: &limit}
	}
	req.Provider = p
}

func FuzzElect(f *testing.F) {
	for seed := range uint64(16) {
		f.Add(seed, uint8(seed*3))
	}
	f.Fuzz(func(t *testing.T, seed uint64, size uint8) {
		b := randomBallot(seed, size)
		res := election.Elect(&b)
		checkInvariants(t, &b, &res)

		// The winner-only path elects the same winner with the same scores.
		var quick election.Result
		election.ElectWinnerInto(&b, &quick)
		if quick.Winner != res.Winner {
			t.Fatalf("winner-only elected %d, the ranking %d", quick.Winner, res.Winner)
		}
		for i := range res.Candidates {
			if quick.Candidates[i].Score != res.Candidates[i].Score || quick.Candidates[i].Eligible != res.Candidates[i].Eligible {
				t.Fatalf("candidate %d: winner-only score %v, ranking %v", i, quick.Candidates[i].Score, res.Candidates[i].Score)
			}
		}

		// The compiled path elects the same winner with the same score, bit
		// for bit, with and without the ballot's usage.
		usage := make([]election.Usage, len(b.Candidates))
		for i := range b.Candidates {
			usage[i] = b.Candidates[i].Usage
		}
		compiled := election.Compile(&b)
		winner, score := compiled.Winner(&b.Request, usage)
		if winner != res.Winner || winner >= 0 && score != res.Candidates[winner].Score {
			t.Fatalf("compiled path: winner %d score %v, explaining path: winner %d", winner, score, res.Winner)
		}
		free := b
		free.Candidates = slices.Clone(b.Candidates)
		for i := range free.Candidates {
			free.Candidates[i].Usage = election.Usage{}
		}
		unused := election.Elect(&free)
		if winner, score := compiled.Winner(&b.Request, nil); winner != unused.Winner || winner >= 0 && score != unused.Candidates[winner].Score {
			t.Fatalf("compiled path without usage: winner %d score %v, explaining path: winner %d", winner, score, unused.Winner)
		}

		// Lowering one eligible candidate's routing price never lowers its rank.
		for i, o := range res.Candidates {
			if !o.Eligible || o.RoutingPrice == 0 {
				continue
			}
			cheaper := withCandidate(b, i, scaled(b.Candidates[i], 0.9))
			after := election.Elect(cheaper)
			if after.Candidates[i].Eligible && after.Candidates[i].Rank > o.Rank {
				t.Fatalf("candidate %s fell from rank %d to %d when its prices dropped 10%%", o.ID, o.Rank, after.Candidates[i].Rank)
			}
		}
	})
}

func checkInvariants(t *testing.T, b *election.Ballot, res *election.Result) {
	t.Helper()
	seen := map[int]bool{}
	eligible := 0
	for _, o := range res.Candidates {
		if !o.Eligible {
			if o.Rank != 0 {
				t.Fatalf("excluded %s has rank %d", o.ID, o.Rank)
			}
			continue
		}
		eligible++
		if math.IsNaN(o.Score) {
			t.Fatalf("%s scored NaN", o.ID)
		}
		if seen[o.Rank] {
			t.Fatalf("rank %d given twice", o.Rank)
		}
		seen[o.Rank] = true
	}
	for r := 1; r <= eligible; r++ {
		if !seen[r] {
			t.Fatalf("ranks are not a permutation of 1..%d: %v", eligible, seen)
		}
	}
	if eligible == 0 {
		if res.Winner != -1 {
			t.Fatalf("winner %d with no one eligible", res.Winner)
		}
		return
	}
	checkPreferences(t, b, res)
	if p := b.Request.Provider; p != nil && len(p.Order) > 0 {
		checkOrderedWinner(t, p, res)
		return
	}
	w := res.Candidates[res.Winner]
	if !w.Eligible || w.Rank != 1 {
		t.Fatalf("winner %s eligible=%v rank=%d", w.ID, w.Eligible, w.Rank)
	}
	for _, o := range res.Candidates {
		if o.Eligible && o.Score < w.Score {
			t.Fatalf("%s scores %v below the winner %s at %v", o.ID, o.Score, w.ID, w.Score)
		}
	}
}

// checkPreferences holds every eligible candidate to what the request asked
// for (sec. 7), read from the ballot, not from the engine's reasons.
func checkPreferences(t *testing.T, b *election.Ballot, res *election.Result) {
	t.Helper()
	req := &b.Request
	for i, o := range res.Candidates {
		if !o.Eligible {
			continue
		}
		f := &b.Candidates[i].Fare
		if f.ContextLength != nil && req.PromptTokens+req.MaxTokens > *f.ContextLength {
			t.Fatalf("%s holds %d tokens, elected for %d + %d", o.ID, *f.ContextLength, req.PromptTokens, req.MaxTokens)
		}
		if f.MaxOutputTokens != nil && req.MaxTokens > *f.MaxOutputTokens {
			t.Fatalf("%s gives %d output tokens, elected for %d", o.ID, *f.MaxOutputTokens, req.MaxTokens)
		}
		if len(req.Regions) > 0 && !slices.Contains(f.Regions, req.Regions[0]) {
			t.Fatalf("%s serves %v, elected for residency %v", o.ID, f.Regions, req.Regions)
		}
		p := req.Provider
		if p == nil {
			continue
		}
		if len(p.Only) > 0 && !slices.Contains(p.Only, o.ID) || slices.Contains(p.Ignore, o.ID) {
			t.Fatalf("%s elected against only %v / ignore %v", o.ID, p.Only, p.Ignore)
		}
		if p.Quantizations != 0 && !p.Quantizations.Has(f.Quantization) {
			t.Fatalf("%s is %s, elected for %v", o.ID, f.Quantization, p.Quantizations)
		}
		if (p.ZDR || p.DenyDataCollection) && (f.DataPolicy.TrainsOnPrompts == nil || *f.DataPolicy.TrainsOnPrompts) {
			t.Fatalf("%s may train on prompts, elected for a request that denies it", o.ID)
		}
		if p.ZDR && (f.DataPolicy.RetentionDays == nil || *f.DataPolicy.RetentionDays != 0) {
			t.Fatalf("%s keeps prompts, elected for a zero-retention request", o.ID)
		}
		if p.MaxPrice != nil && o.Prices.Input*(1-f.Discount) > *p.MaxPrice.Prompt*(1+1e-9) {
			t.Fatalf("%s charges %v, elected under max_price %v", o.ID, o.Prices.Input*(1-f.Discount), *p.MaxPrice.Prompt)
		}
	}
}

// checkOrderedWinner: under a provider order the winner is the best-ranked
// eligible listing of the first entry that names one; with none, the
// election's own winner, or no one when fallbacks are off.
func checkOrderedWinner(t *testing.T, p *election.Provider, res *election.Result) {
	t.Helper()
	want := -1
	for _, entry := range p.Order {
		for i, o := range res.Candidates {
			if o.Eligible && o.ID == entry && (want < 0 || o.Rank < res.Candidates[want].Rank) {
				want = i
			}
		}
		if want >= 0 {
			break
		}
	}
	if want < 0 && !p.NoFallbacks {
		for i, o := range res.Candidates {
			if o.Rank == 1 {
				want = i
			}
		}
	}
	if res.Winner != want {
		t.Fatalf("ordered %v (fallbacks off: %v): winner %d, want %d", p.Order, p.NoFallbacks, res.Winner, want)
	}
}

// FuzzDecodeBallot: any input either fails with an *InputError naming a
// field, or decodes to a ballot inside the contract's ranges that elects
// without panicking.
func FuzzDecodeBallot(f *testing.F) {
	for _, seed := range []string{
		`{"request":{"model":"m","promptTokens":20000,"routing":"auto","workload":"coding","at":"2026-11-30T02:00:00Z"},"candidates":[{"id":"a","fare":{"inputPrice":"0.55","outputPrice":"2.20","cachedInputPrice":"0.30","landingFee":"0.3","discount":"0.1","tiers":[{"aboveTokens":32768,"inputPrice":"1.1"}],"timeBased":{"peakHoursUtc":[[1,4]],"offPeakDays":{"daysOfWeek":[0,6],"utcOffsetMinutes":480},"peak":{"inputPrice":"0.66"}}}}]}`,
		`{"request":{},"candidates":[{"id":"a","fare":{"inputPrice":-1,"outputPrice":1}}]}`,
		`{"request":{"routing":"cheapest"},"candidates":[]}`,
		`{"request":`, `null`, `[]`, `{"request":{},"weights":{"price":1e308,"uptime":1e308},"candidates":[{"id":"x","fare":{"inputPrice":"1e300","outputPrice":"0"}}]}`,
	} {
		f.Add([]byte(seed))
	}
	f.Fuzz(func(t *testing.T, data []byte) {
		b, err := election.UnmarshalBallot(data)
		if err != nil {
			var ie *election.InputError
			if !errors.As(err, &ie) || strings.Contains(err.Error(), "\n") {
				t.Fatalf("not a one-line InputError: %v", err)
			}
			return
		}
		for _, c := range b.Candidates {
			if c.Fare.Input < 0 || c.Fare.Output < 0 || c.Fare.Discount < 0 || c.Fare.Discount > 0.5 {
				t.Fatalf("out of range fare accepted: %+v", c.Fare)
			}
			if lf := c.Fare.LandingFee; lf != nil && (*lf < 0.05 || *lf > 0.5) {
				t.Fatalf("landing fee %v accepted", *lf)
			}
		}
		res := election.Elect(b)
		checkInvariants(t, b, &res)
		if _, err := json.Marshal(res); err != nil && !strings.Contains(err.Error(), "unsupported value") {
			t.Fatalf("result does not encode: %v", err)
		}
	})
}
