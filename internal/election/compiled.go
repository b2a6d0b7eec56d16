package election

import (
	"cmp"
	"slices"
	"time"
)

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
	fares []compiledFare // the fares that are not simple
	// weights are the normalised weights by routing mode, streaming and
	// cache relevance, with the ballot's auto weights: the same for every
	// election on the ballot.
	weights [len(modeWeights)][2][2]Weights
	// scratch, per election: each candidate's routing price, which stay
	// on the ballot (0 eligible, else why not), and the scores (read by a
	// provider order).
	price, score []float64
	excl         []Exclusion
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
	// prices for every request; the others pick theirs from a table
	// (fares[fare]) resolved at compile time.
	simple bool
	base   Prices
	fare   int32
	// discount is the fare's, for a request's max_price; attrs holds the
	// fare's attributes of sec. 7 (its prices left zero), copied.
	discount float64
	attrs    Fare
	// hasFees: the fare files a fee somewhere (Fare.HasFees); baseFees
	// are a simple fare's.
	hasFees  bool
	baseFees Fees
}

// compiledFare is a fare with tiers or a time-of-day block, resolved at
// compile time for every block and tier: an election finds the block from
// the hour and weekday of its moment (integer arithmetic on masks) and the
// tier from the prompt, and reads the prices.
type compiledFare struct {
	timed bool
	// effective is when the block starts to apply (zero: always).
	effective time.Time
	// peakHours has bit h set when UTC hour h is in a peak window.
	peakHours uint32
	// offPeakDays has bit d set when weekday d (0 Sunday), in the offset,
	// is billed off-peak; hasDays when the fare names off-peak days.
	offPeakDays   uint8
	hasDays       bool
	offsetSeconds int64
	// thresholds are the tiers' AboveTokens, ascending, the first listed of
	// equal thresholds kept (ResolvePrices' rule).
	thresholds []int64
	// prices[block][k] are the prices in a block under the k-th threshold's
	// tier (k = 0: no tier applies); fees likewise, for a fare with fees.
	prices [3][]Prices
	fees   [3][]Fees
}

func compileFare(f *Fare) compiledFare {
	var cf compiledFare
	var tiers []*Tier
	for i := range f.Tiers {
		tiers = append(tiers, &f.Tiers[i])
	}
	slices.SortStableFunc(tiers, func(a, b *Tier) int { return cmp.Compare(a.AboveTokens, b.AboveTokens) })
	tiers = slices.CompactFunc(tiers, func(a, b *Tier) bool { return a.AboveTokens == b.AboveTokens })
	for _, t := range tiers {
		cf.thresholds = append(cf.thresholds, t.AboveTokens)
	}
	blocks := [3]*PriceBlock{BlockBase: nil}
	if tb := f.TimeBased; tb != nil {
		cf.timed, cf.effective = true, tb.EffectiveAt
		blocks[BlockPeak], blocks[BlockOffPeak] = &tb.Peak, &tb.OffPeak
		for _, w := range tb.PeakHours {
			for h := max(w.Start, 0); h < min(w.End, 24); h++ {
				cf.peakHours |= 1 << h
			}
		}
		if o := tb.OffPeakDays; o != nil {
			cf.hasDays, cf.offPeakDays, cf.offsetSeconds = true, o.Days, int64(o.UTCOffsetMinutes)*60
		}
	}
	for b, block := range blocks {
		p := Prices{Input: f.Input, Output: f.Output}
		fees := Fees{Request: f.RequestPrice, Image: f.ImagePrice}
		if f.CachedInput != nil {
			p.CachedInput, p.HasCachedInput = *f.CachedInput, true
		}
		if block != nil {
			p.apply(block)
			fees.apply(block.Fees)
		}
		cf.prices[b] = append(cf.prices[b], p)
		cf.fees[b] = append(cf.fees[b], fees)
		for _, t := range tiers {
			tiered, tieredFees := p, fees
			tiered.apply(&t.PriceBlock)
			tieredFees.apply(t.Fees)
			cf.prices[b] = append(cf.prices[b], tiered)
			cf.fees[b] = append(cf.fees[b], tieredFees)
		}
	}
	return cf
}

// moment is what an election's time says about time-of-day blocks.
type moment struct {
	at      time.Time
	unix    int64
	utcHour uint
}

func momentOf(at time.Time) moment {
	if at.IsZero() {
		return moment{}
	}
	unix := at.Unix()
	return moment{at: at, unix: unix, utcHour: uint(((unix%86400 + 86400) % 86400) / 3600)}
}

// resolve is ResolvePrices for the fare at the moment with promptTokens.
func (cf *compiledFare) resolve(m *moment, promptTokens int64) *Prices {
	block, k := cf.index(m, promptTokens)
	return &cf.prices[block][k]
}

// index is the block and tier a request at the moment with promptTokens
// reads its prices (and fees) from.
func (cf *compiledFare) index(m *moment, promptTokens int64) (Block, int) {
	block := BlockBase
	if cf.timed && !m.at.IsZero() && (cf.effective.IsZero() || !m.at.Before(cf.effective)) {
		block = BlockOffPeak
		if !cf.hasDays || cf.offPeakDays&(1<<weekdayAt(m.unix+cf.offsetSeconds)) == 0 {
			if cf.peakHours&(1<<m.utcHour) != 0 {
				block = BlockPeak
			}
		}
	}
	k := 0
	for k < len(cf.thresholds) && cf.thresholds[k] < promptTokens {
		k++
	}
	return block, k
}

// weekdayAt is the weekday (0 Sunday) of a Unix time: 1 January 1970 was a
// Thursday.
func weekdayAt(unix int64) uint {
	days := unix / 86400
	if unix%86400 < 0 {
		days-- // floor, for moments before 1970
	}
	return uint(((days+4)%7 + 7) % 7)
}

// Compile prepares b's candidates for Winner. b's request and usage are not
// read: each election brings its own. Nothing of b is kept.
func Compile(b *Ballot) *Compiled {
	n := len(b.Candidates)
	c := &Compiled{ids: make([]string, n), cands: make([]compiledCandidate, n), price: make([]float64, n), score: make([]float64, n), excl: make([]Exclusion, n)}
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
			simple: len(f.Tiers) == 0 && f.TimeBased == nil}
		if cc.simple {
			cc.base = ResolvePrices(f, time.Time{}, 0)
		} else {
			cc.fare = int32(len(c.fares))
			c.fares = append(c.fares, compileFare(f))
		}
		if !f.hasCachedInput() {
			cc.cacheFactor = 1
		}
		cc.discount, cc.attrs = f.Discount, marketAttributes(f)
		cc.hasFees, cc.baseFees = f.HasFees(), Fees{Request: f.RequestPrice, Image: f.ImagePrice}
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
	f.price, f.score, f.excl = make([]float64, len(c.cands)), make([]float64, len(c.cands)), make([]Exclusion, len(c.cands))
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
	market := req.marketAsked()
	var maxPrice *MaxPrice
	if req.Provider != nil {
		maxPrice = req.Provider.MaxPrice
	}
	var now moment
	if len(c.fares) > 0 {
		now = momentOf(req.At)
	}
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
		if market || cc.attrs.ContextLength != nil {
			e |= marketExclusions(&cc.attrs, c.ids[i], req)
		}
		c.excl[i] = e
		if e&exclHard != 0 {
			continue
		}
		prices, fees := &cc.base, cc.baseFees
		if !cc.simple {
			cf := &c.fares[cc.fare]
			block, k := cf.index(&now, req.PromptTokens)
			prices, fees = &cf.prices[block][k], cf.fees[block][k]
		}
		if maxPrice != nil && overMaxPrice(maxPrice, prices, fees, cc.discount) {
			c.excl[i] |= exclMaxPrice
			continue
		}
		h, r := 0.0, 1.0
		if cacheRelevant {
			h, r = rt.forObserved(cc.observedHit, cc.hasObserved)
		}
		fee := 0.0
		if cc.hasFees {
			fee = FeePrice(fees.Request, fees.Image, req.Images, req.PromptTokens)
		}
		p := (tokenPrice(prices, h, r) + fee) * cc.fareFactor
		c.price[i] = p
		if e != 0 {
			capped++
		} else {
			uncapped++
			uncappedBest.add(p, cc.health.uptime, cc.health.throughput, cc.health.latency)
		}
	}
	best, fellOpen := &uncappedBest, false
	if uncapped == 0 && capped > 0 {
		// Every eligible candidate capped: fall open to them (rare, so the
		// best of the open ballot is gathered only then).
		open := newBests()
		best, fellOpen = &open, true
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
		setFactors(&f, c.price[i], &cc.health, cc.cacheFactor, best, req.Streaming)
		score := scoreOf(&w, &f, cc.priorityPenalty, cc.uptimePenalty)
		c.score[i] = score
		if winner < 0 || score < winScore {
			winner, winScore = i, score // strictly lower: a tie stays with the one listed first
		}
	}
	if p := req.Provider; p != nil && len(p.Order) > 0 {
		if w, ok := orderedWinner(p, len(c.cands), c.ID, func(i int) (float64, bool) {
			e := c.excl[i]
			return c.score[i], e == 0 || fellOpen && e&exclHard == 0
		}); ok {
			if w < 0 {
				return -1, 0
			}
			return w, c.score[w]
		}
	}
	return winner, winScore
}

// marketAttributes copies a fare's attributes of sec. 7 (and nothing else)
// for the compiled ballot, which keeps nothing of the ballot it compiled.
func marketAttributes(f *Fare) Fare {
	out := Fare{Quantization: f.Quantization, Regions: slices.Clone(f.Regions)}
	out.ContextLength, out.MaxOutputTokens = clonePtr(f.ContextLength), clonePtr(f.MaxOutputTokens)
	out.DataPolicy = DataPolicy{RetentionDays: clonePtr(f.DataPolicy.RetentionDays), TrainsOnPrompts: clonePtr(f.DataPolicy.TrainsOnPrompts)}
	return out
}

func clonePtr[T any](p *T) *T {
	if p == nil {
		return nil
	}
	v := *p
	return &v
}

func b2i(b bool) int {
	if b {
		return 1
	}
	return 0
}

// ID is candidate i's id.
func (c *Compiled) ID(i int) string { return c.ids[i] }
