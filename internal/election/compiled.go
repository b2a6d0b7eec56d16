package election

import "time"

// Compiled is a ballot's candidates prepared once for many winner-only
// elections (the gateway's question: who serves this request?): everything
// that does not depend on the request (capabilities, priority, caps, the
// fare factor, health with its defaults, the uptime penalty, a fare with no
// tier or time-of-day block already resolved) is worked out at compile time
// into flat records, so an election reads two small arrays. It gives the
// same winner and score as Elect, bit for bit (the vectors and a fuzz test
// hold the two paths equal); Elect stays the path that explains.
type Compiled struct {
	ids   []string
	cands []compiledCandidate
	// weights are the normalised weights by routing mode, streaming and
	// cache relevance, with the ballot's auto weights: the same for every
	// election on the ballot.
	weights [len(modeWeights)][2][2]Weights
	// scratch, per election: each candidate's routing price, and which stay
	// on the ballot (0 eligible, else why not).
	price []float64
	excl  []Exclusion
}

type compiledCandidate struct {
	caps            Capabilities
	hardExcluded    bool // priority 0: off the ballot for every request
	maxRPM, maxRPD  int64
	hasRPM, hasRPD  bool
	fareFactor      float64
	health          health // with the defaults for what is not measured
	uptimePenalty   float64
	priorityPenalty float64
	cacheFactor     float64 // 1 when the fare has no cached price at all
	// observedHit is the candidate's own observed hit rate (hasObserved).
	observedHit float64
	hasObserved bool
	// simple fares (no tiers, no time-of-day block) resolve to their base
	// prices for every request; the others are resolved per election.
	simple bool
	base   Prices
	fare   *Fare
}

// Compile prepares b's candidates for Winner. b's request and usage are not
// read: each election brings its own. The fares are referenced, not copied:
// the ballot must not change while the Compiled is in use.
func Compile(b *Ballot) *Compiled {
	n := len(b.Candidates)
	c := &Compiled{ids: make([]string, n), cands: make([]compiledCandidate, n), price: make([]float64, n), excl: make([]Exclusion, n)}
	for m := range c.weights {
		for s, streaming := range []bool{false, true} {
			for r, relevant := range []bool{false, true} {
				c.weights[m][s][r] = weightsFor(&Request{Routing: Mode(m), Streaming: streaming}, b.AutoWeights, relevant)
			}
		}
	}
	for i := range b.Candidates {
		src := &b.Candidates[i]
		u, t, l := healthOf(src, nil)
		f := &src.Fare
		cc := compiledCandidate{caps: src.Capabilities, hardExcluded: src.priority() <= 0,
			fareFactor: FareFactor(f.Discount, f.landingFee()), health: health{u, t, l},
			uptimePenalty: UptimePenalty(u), priorityPenalty: 1 - src.priority(),
			simple: len(f.Tiers) == 0 && f.TimeBased == nil, fare: f}
		if cc.simple {
			cc.base = ResolvePrices(f, time.Time{}, 0)
		}
		if !f.hasCachedInput() {
			cc.cacheFactor = 1
		}
		if f.MaxRPM != nil {
			cc.maxRPM, cc.hasRPM = *f.MaxRPM, true
		}
		if f.MaxRPD != nil {
			cc.maxRPD, cc.hasRPD = *f.MaxRPD, true
		}
		if m := src.Metrics.CacheHitRate; m != nil {
			cc.observedHit, cc.hasObserved = *m, true
		}
		c.ids[i], c.cands[i] = src.ID, cc
	}
	return c
}

// Fork is a Compiled sharing c's read-only records with scratch of its own:
// one per concurrent election (a pool of forks serves a busy model).
func (c *Compiled) Fork() *Compiled {
	f := *c
	f.price, f.excl = make([]float64, len(c.cands)), make([]Exclusion, len(c.cands))
	return &f
}

// Len is the number of candidates.
func (c *Compiled) Len() int { return len(c.cands) }

// Winner elects for req, with each candidate's current usage (nil: none),
// and returns the winner's index and score (-1 when no candidate is
// eligible). A Compiled runs one election at a time.
func (c *Compiled) Winner(req *Request, usage []Usage) (int, float64) {
	cacheRelevant := req.PromptTokens >= CachePromptTokens || req.SessionOpening
	var rt rates
	if cacheRelevant {
		rt = ratesFor(req)
	}
	uncappedBest := newBests()
	uncapped, capped := 0, 0
	for i := range c.cands {
		cc := &c.cands[i]
		e := Exclusion(req.Requires &^ cc.caps)
		if cc.hardExcluded {
			e |= exclPriority
		}
		var u Usage // none given: nothing used (a cap of 0 still excludes)
		if usage != nil {
			u = usage[i]
		}
		if cc.hasRPM && u.RPM >= cc.maxRPM {
			e |= exclRateCapRPM
		}
		if cc.hasRPD && u.RPD >= cc.maxRPD {
			e |= exclRateCapRPD
		}
		c.excl[i] = e
		if e&exclHard != 0 {
			continue
		}
		prices := &cc.base
		if !cc.simple {
			resolved := ResolvePrices(cc.fare, req.At, req.PromptTokens)
			prices = &resolved
		}
		h, r := 0.0, 1.0
		if cacheRelevant {
			h, r = rt.forObserved(cc.observedHit, cc.hasObserved)
		}
		p := tokenPrice(prices, h, r) * cc.fareFactor
		c.price[i] = p
		if e != 0 {
			capped++
		} else {
			uncapped++
			uncappedBest.add(p, cc.health.uptime, cc.health.throughput, cc.health.latency)
		}
	}
	best, fellOpen := uncappedBest, false
	if uncapped == 0 && capped > 0 {
		// Every eligible candidate capped: fall open to them (rare, so the
		// best of the open ballot is gathered only then).
		best, fellOpen = newBests(), true
		for i := range c.cands {
			if cc := &c.cands[i]; c.excl[i]&exclHard == 0 {
				best.add(c.price[i], cc.health.uptime, cc.health.throughput, cc.health.latency)
			}
		}
	}
	mode := req.Routing
	if int(mode) >= len(c.weights) {
		mode = ModeAuto
	}
	w := c.weights[mode][b2i(req.Streaming)][b2i(cacheRelevant)]
	winner, winScore := -1, 0.0
	for i := range c.cands {
		e := c.excl[i]
		if e != 0 && !(fellOpen && e&exclHard == 0) {
			continue
		}
		cc := &c.cands[i]
		var f Factors
		setFactors(&f, c.price[i], &cc.health, cc.cacheFactor, &best, req.Streaming)
		score := scoreOf(&w, &f, cc.priorityPenalty, cc.uptimePenalty)
		if winner < 0 || score < winScore {
			winner, winScore = i, score // strictly lower: a tie stays with the one listed first
		}
	}
	return winner, winScore
}

func b2i(b bool) int {
	if b {
		return 1
	}
	return 0
}

// ID is candidate i's id.
func (c *Compiled) ID(i int) string { return c.ids[i] }
