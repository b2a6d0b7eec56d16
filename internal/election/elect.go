package election

import (
	"cmp"
	"math"
	"math/bits"
	"slices"
	"time"
)

// CachePromptTokens is the prompt size from which a request is cache-relevant.
const CachePromptTokens = 5000

// Exclusion is the set of reasons a candidate is off the ballot.
type Exclusion uint32

const (
	// capability bits occupy the low numCapabilities bits, one per flag.
	exclPriority Exclusion = 1 << (numCapabilities + iota)
	exclRateCapRPM
	exclRateCapRPD
	exclBackoff
	exclBreaker
	// sec. 7: what the listing cannot hold, and what the request's
	// preferences and residency rule out.
	exclContext
	exclMaxOutput
	exclOnly
	exclIgnore
	exclQuantization
	exclDataCollection
	exclZDR
	exclMaxPrice
	exclRegion
)

// exclHard are the exclusions a ballot never falls open over: capabilities,
// priority, the gateway's limits (election.md sec. 8: backoff and the
// breaker are exclusions, not caps) and the market's (sec. 7).
const exclHard = Exclusion(1<<(numCapabilities+1)-1) | exclLimits | exclMarket
const exclRateCap = exclRateCapRPM | exclRateCapRPD
const exclLimits = exclBackoff | exclBreaker
const exclMarket = exclContext | exclMaxOutput | exclPreferences | exclRegion

// exclPreferences are the exclusions of the request's provider object.
const exclPreferences = exclOnly | exclIgnore | exclQuantization | exclDataCollection | exclZDR | exclMaxPrice

// marketReasons are sec. 7's exclusions in reporting order: what the
// listing cannot hold, the preferences in the spec's order, residency.
var marketReasons = [...]struct {
	bit    Exclusion
	reason string
}{
	{exclContext, "context"}, {exclMaxOutput, "max_output"},
	{exclOnly, "preference:only"}, {exclIgnore, "preference:ignore"},
	{exclQuantization, "preference:quantization"}, {exclDataCollection, "preference:data_collection"},
	{exclZDR, "preference:zdr"}, {exclMaxPrice, "preference:max_price"},
	{exclRegion, "region"},
}

var capabilityReasons = func() (r [numCapabilities]string) {
	for i, name := range capabilityNames {
		r[i] = "capability:" + name
	}
	return r
}()

// Reasons lists the exclusion reasons in the contract's words, capabilities
// first (in flag order), then priority, the gateway's limits (backoff,
// breaker), then rate caps.
func (e Exclusion) Reasons() []string { return e.appendReasons([]string{}) }

func (e Exclusion) appendReasons(reasons []string) []string {
	for c := range numCapabilities {
		if e&(1<<c) != 0 {
			reasons = append(reasons, capabilityReasons[c])
		}
	}
	if e&exclPriority != 0 {
		reasons = append(reasons, "priority")
	}
	if e&exclMarket != 0 {
		for _, m := range marketReasons {
			if e&m.bit != 0 {
				reasons = append(reasons, m.reason)
			}
		}
	}
	if e&exclBackoff != 0 {
		reasons = append(reasons, "backoff")
	}
	if e&exclBreaker != 0 {
		reasons = append(reasons, "breaker")
	}
	if e&exclRateCapRPM != 0 {
		reasons = append(reasons, "rate_cap:rpm")
	}
	if e&exclRateCapRPD != 0 {
		reasons = append(reasons, "rate_cap:rpd")
	}
	return reasons
}

// MissingCapabilities reports whether the exclusion includes a capability.
func (e Exclusion) MissingCapabilities() bool { return e&Exclusion(1<<numCapabilities-1) != 0 }

// RateCapped reports whether the exclusion includes a rate cap.
func (e Exclusion) RateCapped() bool { return e&exclRateCap != 0 }

// Preferences reports whether the request's provider object or its
// residency excludes the candidate (sec. 7), as opposed to what the
// listing cannot hold (context, max_output).
func (e Exclusion) Preferences() bool { return e&(exclPreferences|exclRegion) != 0 }

// Limited reports whether the gateway's limits exclude the candidate (its
// 429 backoff or its breaker).
func (e Exclusion) Limited() bool { return e&exclLimits != 0 }

// Factors are the five unweighted ratios against the best eligible candidate.
type Factors struct {
	Price, Uptime, Throughput, Latency, Cache float64
}

// Prices are resolved prices for one request.
type Prices struct {
	Input, Output, CachedInput float64
	// HasCachedInput is false when no cached-input price applies: cache hits are
	// then ranked at the full input price.
	HasCachedInput bool
}

// Outcome is one candidate's part of the result, in ballot order.
type Outcome struct {
	ID       string
	Eligible bool
	// Excluded holds why the candidate is off the ballot; zero when eligible
	// (after a fall-open, capped candidates are eligible and Excluded is zero).
	Excluded Exclusion
	// The fields below are set only when Eligible.
	Prices      Prices
	HitRate     float64
	OutputRatio float64
	TokenPrice  float64
	// Fees are the fees per request and per image part resolved for the
	// request, and FeePrice the part of TokenPrice they make (sec. 7).
	Fees            Fees
	FeePrice        float64
	FareFactor      float64
	RoutingPrice    float64
	Factors         Factors
	UptimePenalty   float64
	PriorityPenalty float64
	Score           float64
	Rank            int // 1 is the winner (the largest share under share)
	// Share is the candidate's part under the share policy (HasShare).
	Share    ShareOutcome
	HasShare bool
}

// Result is the outcome of one election.
type Result struct {
	// Winner is the index of the winning candidate, or -1 when no one is eligible.
	Winner        int
	CacheRelevant bool
	FellOpen      bool
	// Weights are the normalised weights the scores used.
	Weights    Weights
	Candidates []Outcome
	// order is scratch space for ranking, kept to avoid allocating per election.
	order []int32
	// keys, spare and starts are the bucket sort's scratch space, kept
	// likewise.
	keys, spare []rankKey
	starts      []int32
	// health is each candidate's health as pass 1 read it, scratch for pass 2.
	health []health
	// Policy is the policy applied (share only for an auto request of a
	// share ballot). Extended says the ballot used sec. 7-8's fields, so
	// the contract's output carries Order (the tries the request implies,
	// ballot indices) and the new figures.
	Policy   Policy
	Extended bool
	Order    []int
	// Pinned says the request's preferences leave it one listing to try
	// (sec. 7): it is counted apart, never explored.
	Pinned bool
}

// WinnerID returns the winner's id, or "" when there is none.
func (r *Result) WinnerID() string {
	if r.Winner < 0 {
		return ""
	}
	return r.Candidates[r.Winner].ID
}

// Ranked returns the indices of the eligible candidates from rank 1 down.
func (r *Result) Ranked() []int {
	ranked := make([]int, 0, len(r.order))
	for _, i := range r.order {
		ranked = append(ranked, int(i))
	}
	return ranked
}

// Elect runs one election.
func Elect(b *Ballot) Result {
	var res Result
	ElectInto(b, &res)
	return res
}

// ElectInto runs one election into res, reusing its memory, so that a caller
// running many elections (the preview, the solver, a benchmark) allocates
// nothing per election.
func ElectInto(b *Ballot, res *Result) {
	elect(b, res, nil, true, nil)
	finish(b, res)
}

// finish applies the ballot's policy to a ranked result (share spreads an
// auto request by share, sec. 8) and, for a ballot that uses sec. 7-8's
// fields, the order of tries: half-open probes first (input order), then
// every other eligible candidate by rank; the winner is the first of it.
func finish(b *Ballot, res *Result) {
	res.Policy, res.Extended, res.Order, res.Pinned = PolicyElection, b.Extended, res.Order[:0], false
	if b.Policy == PolicyShare && b.Request.Routing == ModeAuto && len(res.order) > 0 {
		applyShare(b, res)
	}
	prov := b.Request.Provider
	ordered := prov != nil && len(prov.Order) > 0
	if !b.Extended && !ordered && !b.Request.Narrows() {
		return
	}
	for i := range res.Candidates {
		if res.Candidates[i].Eligible && b.Candidates[i].State.Probe {
			res.Order = append(res.Order, i)
		}
	}
	for _, i := range res.order {
		if !b.Candidates[i].State.Probe {
			res.Order = append(res.Order, int(i))
		}
	}
	if ordered {
		// The provider's order comes first (sec. 7), then, unless
		// fallbacks are off, the tries above.
		n := len(res.Order)
		res.Order = orderTries(res.Order, prov, func(i int) string { return res.Candidates[i].ID }, res.Order[:n])
		res.Order = append(res.Order[:0], res.Order[n:]...)
	}
	res.Pinned = b.Request.Narrows() && len(res.Order) == 1
	res.Winner = -1
	if len(res.Order) > 0 {
		res.Winner = res.Order[0]
	}
}

// ElectWinnerInto runs one election into res for a caller that needs only the
// winner (the gateway routing a request): every eligible candidate's prices,
// factors and score are computed as ElectInto computes them, but no ranking
// is sorted, so Rank stays 0. res.Winner is the same candidate ElectInto
// elects (the lowest score, ties to the one listed first).
func ElectWinnerInto(b *Ballot, res *Result) {
	elect(b, res, nil, false, nil)
	if p := b.Request.Provider; p != nil && len(p.Order) > 0 {
		if w, ok := orderedWinner(p, len(res.Candidates), func(i int) string { return res.Candidates[i].ID },
			func(i int) (float64, bool) { return res.Candidates[i].Score, res.Candidates[i].Eligible }); ok {
			res.Winner = w
		}
	}
}

// adjustment changes one candidate's fare levers for the solver without
// copying the ballot.
type adjustment struct {
	index      int
	scale      float64 // multiplies every filed price; 0 means unchanged
	landingFee *float64
	discount   *float64
	uptime     *float64
}

// metric defaults from the spec, for listings not measured yet.
const (
	defaultUptime     = 100
	defaultThroughput = 50
	defaultLatencyMs  = 1000
	throughputCap     = 3
)

// elect runs an election. adj changes one candidate's levers (the solver);
// base, when given, is an election of the same ballot whose other
// candidates' prices are reused instead of resolved again (the solver's
// bisections change only one candidate's).
func elect(b *Ballot, res *Result, adj *adjustment, rank bool, base *Result) {
	req := &b.Request
	n := len(b.Candidates)
	res.Winner = -1
	res.FellOpen = false
	res.CacheRelevant = req.PromptTokens >= CachePromptTokens || req.SessionOpening
	res.Candidates = slices.Grow(res.Candidates[:0], n)[:n]
	res.order = slices.Grow(res.order[:0], n)[:0]

	// Pass 1: exclusions and the price each candidate is ranked on.
	var rt *rates // nil: not cache-relevant (h = 0, r = 1)
	if res.CacheRelevant {
		r := ratesFor(req)
		rt = &r
	}
	uncapped, capped := 0, 0
	// The best value of each factor among the uncapped is gathered as the
	// prices are resolved; health is read once, kept for pass 2.
	res.health = slices.Grow(res.health[:0], n)[:n]
	uncappedBest := newBests()
	market := req.marketAsked() // sec. 7's exclusions, worked out once
	for i := range b.Candidates {
		c := &b.Candidates[i]
		out := &res.Candidates[i]
		*out = Outcome{ID: c.ID}
		out.Excluded = excludedBy(c, req, market)
		if out.Excluded&exclHard != 0 {
			continue
		}
		if base != nil && adj.forCandidate(i) == nil {
			reusePrices(out, &base.Candidates[i])
		} else {
			price(c, req, rt, out, adj.forCandidate(i))
		}
		if m := req.Provider; m != nil && m.MaxPrice != nil && overMaxPrice(m.MaxPrice, &out.Prices, out.Fees, c.Fare.Discount) {
			out.Excluded |= exclMaxPrice
			continue
		}
		u, t, l := healthOf(c, adj.forCandidate(i))
		res.health[i] = health{u, t, l}
		// What pass 2 needs of the candidate is taken now, so pass 2 reads
		// only the result.
		out.PriorityPenalty = 1 - c.priority()
		if !c.Fare.hasCachedInput() {
			out.Factors.Cache = 1
		}
		if out.Excluded != 0 {
			capped++
		} else {
			uncapped++
			uncappedBest.add(out.RoutingPrice, u, t, l)
		}
	}
	// Every otherwise-eligible candidate capped: fall open to the capped ones.
	// (Rare, so the best of the open ballot is gathered only then.)
	best := uncappedBest
	if uncapped == 0 && capped > 0 {
		res.FellOpen = true
		best = newBests()
		for i := range res.Candidates {
			if out := &res.Candidates[i]; out.Excluded&exclHard == 0 {
				hl := &res.health[i]
				best.add(out.RoutingPrice, hl.uptime, hl.throughput, hl.latency)
			}
		}
	}
	for i := range res.Candidates {
		out := &res.Candidates[i]
		if out.Excluded == 0 || (res.FellOpen && out.Excluded&exclHard == 0) {
			out.Excluded = 0
			out.Eligible = true
			res.order = append(res.order, int32(i))
		}
	}

	res.Weights = weightsFor(&b.Request, b.AutoWeights, res.CacheRelevant)
	if len(res.order) == 0 {
		return
	}

	// Pass 2: factors and scores.
	w := res.Weights
	for _, i := range res.order {
		out := &res.Candidates[i]
		hl := &res.health[i]
		setFactors(&out.Factors, out.RoutingPrice, hl, out.Factors.Cache, &best, b.Request.Streaming)
		out.UptimePenalty = UptimePenalty(hl.uptime)
		out.Score = scoreOf(&w, &out.Factors, out.PriorityPenalty, out.UptimePenalty)
	}

	if !rank {
		best := res.order[0]
		for _, i := range res.order[1:] {
			if res.Candidates[i].Score < res.Candidates[best].Score {
				best = i // strictly lower: a tie stays with the one listed first
			}
		}
		res.Winner = int(best)
		return
	}

	// Pass 3: rank by score, ties to the candidate listed first.
	res.rank()
	for rank, i := range res.order {
		res.Candidates[i].Rank = rank + 1
	}
	res.Winner = int(res.order[0])
}

// forCandidate returns the adjustment when it applies to candidate i.
func (a *adjustment) forCandidate(i int) *adjustment {
	if a != nil && i == a.index {
		return a
	}
	return nil
}

// excludedBy returns why c cannot serve req, rate caps included; market
// says the request asks something of sec. 7 (Request.marketAsked).
func excludedBy(c *Candidate, req *Request, market bool) Exclusion {
	missing := Exclusion(req.Requires &^ c.Capabilities)
	if c.priority() <= 0 {
		missing |= exclPriority
	}
	f := &c.Fare
	if f.MaxRPM != nil && c.Usage.RPM >= *f.MaxRPM {
		missing |= exclRateCapRPM
	}
	if f.MaxRPD != nil && c.Usage.RPD >= *f.MaxRPD {
		missing |= exclRateCapRPD
	}
	if c.State.Backoff {
		missing |= exclBackoff
	}
	if c.State.Breaker == BreakerOpen || c.State.Breaker == BreakerHalfOpen && !c.State.Probe {
		missing |= exclBreaker
	}
	if market || f.ContextLength != nil {
		missing |= marketExclusions(f, c.ID, req)
	}
	return missing
}

// price fills the resolved prices, h, r, token price, fare factor and routing
// price of an eligible candidate.
func price(c *Candidate, req *Request, rt *rates, out *Outcome, adj *adjustment) {
	p := ResolvePrices(&c.Fare, req.At, req.PromptTokens)
	h, r := 0.0, 1.0
	if rt != nil {
		h, r = rt.forCandidate(&c.Metrics)
	}
	var fees Fees
	var fee float64
	if c.Fare.HasFees() {
		fees = ResolveFees(&c.Fare, req.At, req.PromptTokens)
		fee = FeePrice(fees.Request, fees.Image, req.Images, req.PromptTokens)
	}
	token := tokenPrice(&p, h, r) + fee
	discount, landingFee := c.Fare.Discount, c.Fare.landingFee()
	if adj != nil {
		if adj.scale != 0 {
			token *= adj.scale
			fee *= adj.scale
			p.Input *= adj.scale
			p.Output *= adj.scale
			p.CachedInput *= adj.scale
			fees.Request *= adj.scale
			fees.Image *= adj.scale
		}
		if adj.discount != nil {
			discount = *adj.discount
		}
		if adj.landingFee != nil {
			landingFee = *adj.landingFee
		}
	}
	out.Prices, out.Fees = p, fees
	out.HitRate, out.OutputRatio = h, r
	out.TokenPrice, out.FeePrice = token, fee
	out.FareFactor = FareFactor(discount, landingFee)
	out.RoutingPrice = token * out.FareFactor
}

// reusePrices copies the prices pass 1 resolved for a candidate in an
// earlier election of the same ballot.
func reusePrices(out, from *Outcome) {
	out.Prices = from.Prices
	out.HitRate, out.OutputRatio = from.HitRate, from.OutputRatio
	out.Fees, out.TokenPrice, out.FeePrice, out.FareFactor, out.RoutingPrice = from.Fees, from.TokenPrice, from.FeePrice, from.FareFactor, from.RoutingPrice
}

// rates are a request's cache rates, worked out once per election: only a
// candidate's own observed hit rate differs between candidates.
type rates struct {
	// fixedH is the hit rate when it does not depend on the candidate
	// (an explicit override); candidateFirst says a candidate's own
	// observation comes before fallbackH.
	fixedH, fallbackH, r float64
	candidateFirst       bool
	defH                 float64
}

// standardRates are requestRates for a request that overrides no rate, by
// workload: worked out once.
var standardRates = func() (out [len(workloadDefaults)]rates) {
	for wl := range out {
		out[wl] = requestRates(&Request{Workload: Workload(wl)})
	}
	return out
}()

// ratesFor is requestRates(req), from standardRates when the request
// overrides nothing.
func ratesFor(req *Request) rates {
	if int(req.Workload) < len(standardRates) && req.CacheHitRate == nil && req.ObservedHitRate == nil &&
		req.CacheOutputRatio == nil && req.ObservedOutputRatio == nil {
		return standardRates[req.Workload]
	}
	return requestRates(req)
}

// requestRates applies the spec's precedence for h and r: explicit override,
// the candidate's own observation (h only), the project's observation, the
// workload default; h is clamped to [0, 1] and r to >= 0.
func requestRates(req *Request) rates {
	def := workloadDefaults[WorkloadGeneral]
	if int(req.Workload) < len(workloadDefaults) {
		def = workloadDefaults[req.Workload]
	}
	out := rates{defH: def.hitRate}
	switch {
	case req.CacheHitRate != nil:
		out.fixedH = clampRate(*req.CacheHitRate, def.hitRate)
	default:
		out.candidateFirst = true
		out.fallbackH = def.hitRate
		if req.ObservedHitRate != nil {
			out.fallbackH = clampRate(*req.ObservedHitRate, def.hitRate)
		}
	}
	switch {
	case req.CacheOutputRatio != nil:
		out.r = *req.CacheOutputRatio
	case req.ObservedOutputRatio != nil:
		out.r = *req.ObservedOutputRatio
	default:
		out.r = def.outputRatio
	}
	out.r = max(out.r, 0)
	if math.IsNaN(out.r) {
		out.r = def.outputRatio
	}
	return out
}

// forCandidate is h and r for a candidate with metrics m.
func (rt *rates) forCandidate(m *Metrics) (h, r float64) {
	observed, has := 0.0, m.CacheHitRate != nil
	if has {
		observed = *m.CacheHitRate
	}
	return rt.forObserved(observed, has)
}

// forObserved is h and r for a candidate whose own observed hit rate is
// observed (when has).
func (rt *rates) forObserved(observed float64, has bool) (h, r float64) {
	switch {
	case !rt.candidateFirst:
		return rt.fixedH, rt.r
	case has:
		return clampRate(observed, rt.defH), rt.r
	}
	return rt.fallbackH, rt.r
}

func clampRate(h, def float64) float64 {
	if math.IsNaN(h) {
		return def
	}
	return min(max(h, 0), 1)
}

// ResolvePrices resolves a fare's input, output and cached-input prices for a
// request at time at with promptTokens: base prices, then the time-of-day block,
// then the context tier, each overriding only the fields it sets.
func ResolvePrices(f *Fare, at time.Time, promptTokens int64) Prices {
	p := Prices{Input: f.Input, Output: f.Output}
	if f.CachedInput != nil {
		p.CachedInput, p.HasCachedInput = *f.CachedInput, true
	}
	if f.TimeBased != nil {
		switch BlockAt(f, at) {
		case BlockPeak:
			p.apply(&f.TimeBased.Peak)
		case BlockOffPeak:
			p.apply(&f.TimeBased.OffPeak)
		}
	}
	// The tier with the largest threshold strictly below the prompt applies:
	// the upper edge belongs to the lower tier.
	var tier *Tier
	for i := range f.Tiers {
		t := &f.Tiers[i]
		if t.AboveTokens < promptTokens && (tier == nil || t.AboveTokens > tier.AboveTokens) {
			tier = t
		}
	}
	if tier != nil {
		p.apply(&tier.PriceBlock)
	}
	return p
}

// Fees are a fare's fees per request and per image part (USD), resolved.
type Fees struct{ Request, Image float64 }

// ResolveFees resolves a fare's fees as ResolvePrices resolves its token
// prices (base, time-of-day block, tier, each overriding what it sets).
// Apart from ResolvePrices, and asked only of fares with fees anywhere
// (Fare.HasFees), so that fees cost the many fares without any nothing.
func ResolveFees(f *Fare, at time.Time, promptTokens int64) Fees {
	out := Fees{Request: f.RequestPrice, Image: f.ImagePrice}
	if f.TimeBased != nil {
		switch BlockAt(f, at) {
		case BlockPeak:
			out.apply(f.TimeBased.Peak.Fees)
		case BlockOffPeak:
			out.apply(f.TimeBased.OffPeak.Fees)
		}
	}
	var tier *Tier
	for i := range f.Tiers {
		t := &f.Tiers[i]
		if t.AboveTokens < promptTokens && (tier == nil || t.AboveTokens > tier.AboveTokens) {
			tier = t
		}
	}
	if tier != nil {
		out.apply(tier.Fees)
	}
	return out
}

func (p *Prices) apply(b *PriceBlock) {
	if b.Input != nil {
		p.Input = *b.Input
	}
	if b.Output != nil {
		p.Output = *b.Output
	}
	if b.CachedInput != nil {
		p.CachedInput, p.HasCachedInput = *b.CachedInput, true
	}
}

// apply overrides the fees a block sets (nil: none).
func (fs *Fees) apply(f *FeeBlock) {
	if f == nil {
		return
	}
	if f.Request != nil {
		fs.Request = *f.Request
	}
	if f.Image != nil {
		fs.Image = *f.Image
	}
}

// isPeak reports whether at falls in the peak block: never on an off-peak day
// (in the block's UTC offset), else when at's UTC hour is in a peak window.
func (tb *TimeBased) isPeak(at time.Time) bool {
	if o := tb.OffPeakDays; o != nil {
		local := at.UTC().Add(time.Duration(o.UTCOffsetMinutes) * time.Minute)
		if o.HasDay(local.Weekday()) {
			return false
		}
	}
	hour := at.UTC().Hour()
	for _, w := range tb.PeakHours {
		if hour >= w.Start && hour < w.End {
			return true
		}
	}
	return false
}

// FareFactor is (1 - discount) x (1 + 0.20 - landingFee): 1 at the baseline.
func FareFactor(discount, landingFee float64) float64 {
	return (1 - discount) * (1 + BaselineLandingFee - landingFee)
}

// UptimePenalty is 0 at PenaltyUptime (95 %) and above, else
// ((95 - u) / 95 x 5)^2.
func UptimePenalty(uptime float64) float64 {
	if uptime >= PenaltyUptime {
		return 0
	}
	x := (PenaltyUptime - uptime) / PenaltyUptime * 5
	return x * x
}

// healthOf returns a candidate's uptime, throughput and latency with the spec's
// defaults for what is not measured.
func healthOf(c *Candidate, adj *adjustment) (uptime, throughput, latency float64) {
	uptime, throughput, latency = defaultUptime, defaultThroughput, defaultLatencyMs
	if c.Metrics.Uptime != nil {
		uptime = *c.Metrics.Uptime
	}
	if adj != nil && adj.uptime != nil {
		uptime = *adj.uptime
	}
	if c.Metrics.Throughput != nil {
		throughput = *c.Metrics.Throughput
	}
	if c.Metrics.LatencyMs != nil {
		latency = *c.Metrics.LatencyMs
	}
	return uptime, throughput, latency
}

type bests struct {
	minPrice, minPositivePrice float64
	maxUptime, maxThroughput   float64
	minLatency                 float64
}

var posInf, negInf = math.Inf(1), math.Inf(-1)

func newBests() bests {
	return bests{minPrice: posInf, minPositivePrice: posInf, maxUptime: negInf, maxThroughput: negInf, minLatency: posInf}
}

// add takes one candidate's routing price and health into the bests.
func (best *bests) add(p, u, t, l float64) {
	best.minPrice = min(best.minPrice, p)
	if p > 0 {
		best.minPositivePrice = min(best.minPositivePrice, p)
	}
	best.maxUptime = max(best.maxUptime, u)
	best.maxThroughput = max(best.maxThroughput, t)
	best.minLatency = min(best.minLatency, l)
}

// setFactors sets a candidate's five unweighted factors against the best of
// the ballot: the one place both election paths take them from.
func setFactors(f *Factors, routingPrice float64, hl *health, cache float64, best *bests, streaming bool) {
	f.Price, f.Cache, f.Latency = ratioAboveBest(routingPrice, best.minPrice, best.minPositivePrice), cache, 0
	if hl.uptime <= 0 {
		f.Uptime = 1
	} else {
		f.Uptime = best.maxUptime/hl.uptime - 1
	}
	if hl.throughput <= 0 {
		f.Throughput = throughputCap
	} else {
		f.Throughput = min(best.maxThroughput/hl.throughput-1, throughputCap)
	}
	// Latency scores only streaming requests, and only against a real best:
	// a 0 ms time to first token is no measurement (section 3).
	if streaming && best.minLatency > 0 {
		f.Latency = hl.latency/best.minLatency - 1
	}
}

// scoreOf weighs the factors and adds the penalties: lower wins.
func scoreOf(w *Weights, f *Factors, priorityPenalty, uptimePenalty float64) float64 {
	return w.Price*f.Price + w.Uptime*f.Uptime + w.Throughput*f.Throughput +
		w.Latency*f.Latency + w.Cache*f.Cache + priorityPenalty + uptimePenalty
}

// tokenPrice is the per-token price a request is ranked on: cached input at
// the hit rate h, the rest at the input price, output at ratio r.
func tokenPrice(p *Prices, h, r float64) float64 {
	cached := p.Input
	if p.HasCachedInput {
		cached = p.CachedInput
	}
	return (cached*h + p.Input*(1-h) + p.Output*r) / 2
}

// health is a candidate's uptime, throughput and latency with the defaults.
type health struct{ uptime, throughput, latency float64 }

// ratioAboveBest is v / best - 1. When the best is zero (a free candidate, or a
// zero latency), a positive value scores v / minPositive and a zero one scores 0.
func ratioAboveBest(v, best, minPositive float64) float64 {
	if best > 0 {
		return v/best - 1
	}
	if v <= 0 || math.IsInf(minPositive, 1) {
		return 0
	}
	return v / minPositive
}

// standardWeights are normalisedWeights without auto weights, by routing
// mode, streaming and cache relevance: worked out once.
var standardWeights = func() (out [len(modeWeights)][2][2]Weights) {
	for m := range out {
		for s, streaming := range []bool{false, true} {
			for r, relevant := range []bool{false, true} {
				out[m][s][r] = normalisedWeights(&Request{Routing: Mode(m), Streaming: streaming}, nil, relevant)
			}
		}
	}
	return out
}()

// weightsFor is normalisedWeights, from standardWeights when the ballot
// brings no auto weights.
func weightsFor(req *Request, autoWeights *Weights, cacheRelevant bool) Weights {
	if autoWeights == nil && int(req.Routing) < len(standardWeights) {
		return standardWeights[req.Routing][b2i(req.Streaming)][b2i(cacheRelevant)]
	}
	return normalisedWeights(req, autoWeights, cacheRelevant)
}

// normalisedWeights returns the weights of the request's mode with the inactive
// ones zeroed (latency for non-streaming requests, cache for requests that are
// not cache-relevant), divided by their sum.
func normalisedWeights(req *Request, autoWeights *Weights, cacheRelevant bool) Weights {
	mode := req.Routing
	if int(mode) >= len(modeWeights) {
		mode = ModeAuto
	}
	w := modeWeights[mode]
	if mode == ModeAuto && autoWeights != nil {
		w = *autoWeights
	}
	if !req.Streaming {
		w.Latency = 0
	}
	if !cacheRelevant {
		w.Cache = 0
	}
	sum := w.Price + w.Uptime + w.Throughput + w.Latency + w.Cache
	if sum <= 0 || math.IsNaN(sum) || math.IsInf(sum, 0) {
		return Weights{}
	}
	return Weights{w.Price / sum, w.Uptime / sum, w.Throughput / sum, w.Latency / sum, w.Cache / sum}
}

// insertionUpTo is the number of candidates up to which ranking (and a
// bucket of the bucket sort) sorts by insertion; above it ranking sorts by
// buckets, linear in the candidates.
const insertionUpTo = 24

// rank orders res.order by score, ties to the candidate listed first, on the
// scores' bits made to sort as unsigned integers.
func (res *Result) rank() {
	n := len(res.order)
	res.keys = slices.Grow(res.keys[:0], n)[:n]
	if n <= insertionUpTo {
		for j, i := range res.order {
			res.keys[j] = rankKey{sortableBits(res.Candidates[i].Score), i}
		}
		sortBucket(res.keys)
		for j := range res.keys {
			res.order[j] = res.keys[j].idx
		}
		return
	}
	// A bucket sort on the score's bits made to sort as unsigned integers:
	// the span between the lowest and the highest key is cut into about n
	// buckets, the candidates are distributed to them stably (res.order is
	// in index order, so ties stay with the candidate listed first), and each
	// bucket, of one or two on most ballots, is sorted in place. Linear in
	// the candidates unless scores cluster in a few buckets, where the
	// bucket's stable sort keeps it n log n.
	res.spare = slices.Grow(res.spare[:0], n)[:n]
	lo, hi := uint64(math.MaxUint64), uint64(0)
	for j, i := range res.order {
		k := sortableBits(res.Candidates[i].Score)
		res.keys[j] = rankKey{k, i}
		lo, hi = min(lo, k), max(hi, k)
	}
	if lo == hi {
		return // every score equal: listed order is the rank
	}
	shift := max(0, bits.Len64(hi-lo)-bits.Len(uint(n)))
	buckets := int((hi-lo)>>shift) + 1
	res.starts = slices.Grow(res.starts[:0], buckets+1)[:buckets+1]
	clear(res.starts)
	for _, k := range res.keys {
		res.starts[(k.key-lo)>>shift+1]++
	}
	for b := 1; b <= buckets; b++ {
		res.starts[b] += res.starts[b-1]
	}
	for _, k := range res.keys {
		b := (k.key - lo) >> shift
		res.spare[res.starts[b]] = k
		res.starts[b]++
	}
	// starts[b] is now where bucket b+1 starts.
	from := int32(0)
	for b := range buckets {
		to := res.starts[b]
		if to-from > 1 {
			sortBucket(res.spare[from:to])
		}
		from = to
	}
	for j := range res.spare {
		res.order[j] = res.spare[j].idx
	}
}

// sortBucket sorts a bucket by key, stably: by insertion when small.
func sortBucket(keys []rankKey) {
	if len(keys) > insertionUpTo {
		slices.SortStableFunc(keys, func(a, b rankKey) int { return cmp.Compare(a.key, b.key) })
		return
	}
	for i := 1; i < len(keys); i++ {
		k := keys[i]
		j := i
		for ; j > 0 && keys[j-1].key > k.key; j-- {
			keys[j] = keys[j-1]
		}
		keys[j] = k
	}
}

// rankKey is a score's sortable bits and its candidate.
type rankKey struct {
	key uint64
	idx int32
}

// sortableBits maps a float64 to a uint64 that sorts as the float does
// (negative numbers below positive ones).
func sortableBits(f float64) uint64 {
	b := math.Float64bits(f)
	if b>>63 == 1 {
		return ^b
	}
	return b | 1<<63
}

// Block is which of a fare's time-of-day prices apply at a moment.
type Block uint8

// The blocks.
const (
	BlockBase Block = iota // no time-of-day block applies
	BlockPeak
	BlockOffPeak
)

// BlockAt says which time-of-day block of f applies at at (section 2.1.2).
// Two moments at which every fare on a ballot is in the same block elect
// alike, so a caller electing across hours can elect once per combination.
func BlockAt(f *Fare, at time.Time) Block {
	tb := f.TimeBased
	if tb == nil || at.IsZero() || (!tb.EffectiveAt.IsZero() && at.Before(tb.EffectiveAt)) {
		return BlockBase
	}
	if tb.isPeak(at) {
		return BlockPeak
	}
	return BlockOffPeak
}
