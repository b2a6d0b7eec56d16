package preview

import (
	"fmt"
	"math"
	"sort"
	"strings"
	"time"

	"github.com/airside/airside/internal/election"
	"github.com/airside/airside/internal/fare"
	"github.com/airside/airside/internal/money"
	"github.com/airside/airside/internal/traffic"
)

// Input is one preview: a listing's market and the fare being considered.
type Input struct {
	Market    Market
	Model     string
	ListingID int64
	// Fare is the fare being typed; it replaces the listing's published one.
	Fare *fare.Fare
	// At is when the elections run (the time-of-day block in force).
	At time.Time
	// Custom is an extra scenario the carrier set up, if any.
	Custom *Scenario
	// Mix is the percent of traffic per shape key ("small", "large",
	// "coding", "chat"); nil or all zero means an even mix.
	Mix map[string]float64
	// Prompts are the prompt tokens a request of each shape key carries as
	// the gateway measured them (PromptsFromDemand); a shape absent keeps
	// its standard size.
	Prompts map[string]int64
	// Kinds split each shape's requests by kind as the gateway measured
	// them (KindsFromDemand); a shape absent is all of its usual kind.
	Kinds map[string][]Kind
	// Preferences are each shape's parts of requests by the set of
	// preferences they carried (PreferencePartsFromDemand): each set is
	// elected on a ballot of its own, as the gateway routes it and the
	// traffic pages project it; nil when none carried any.
	Preferences map[string][]PreferencePart
	// Focus is the scenario key the charts are drawn for ("" = the first).
	Focus string
}

// Effective is what each filed component routes at, and what the carrier
// keeps.
type Effective struct {
	Input, Output money.Micros
	CachedInput   *money.Micros
	// Kept is what the carrier keeps of every filed dollar, in basis points.
	Kept money.BasisPoints
}

// Mine is the carrier's standing in one scenario.
type Mine struct {
	OnBallot bool
	Eligible bool
	Excluded []string
	Rank, Of int
	HitRate  float64
	Prices   election.Prices
	// TokenPrice and RoutingPrice are USD per million tokens.
	TokenPrice, RoutingPrice float64
	// Contributions are the weighted factors: what each adds to the score.
	Contributions                  election.Factors
	UptimePenalty, PriorityPenalty float64
	Score                          float64
	// Gap is the score points between the carrier and the winner.
	Gap float64
}

// Competitor is one candidate of a ballot as any carrier may see it: public
// list prices and health, score and rank. Never a landing fee, an unpublished
// discount or a draft.
type Competitor struct {
	Name                 string
	IsMe                 bool
	Input, Output        money.Micros
	CachedInput          *money.Micros
	Uptime, Latency, TPS *float64
	Eligible             bool
	Excluded             []string
	Score                float64
	Rank                 int
	RoutingPrice         float64
}

// WinPlan is what it takes to become rank 1 in one scenario.
type WinPlan struct {
	WinsNow bool
	// Price is the price multiplier lever; New* are the resulting prices
	// (rounded down to the micro-dollar, so they still win).
	Price               election.Solution
	NewInput, NewOutput money.Micros
	NewCachedInput      *money.Micros
	LandingFee          election.Solution
	LandingFeeBP        money.BasisPoints // rounded up to the basis point
	Discount            election.Solution
	DiscountBP          money.BasisPoints
	Displace            election.Solution // with the incumbent margin
	DisplaceInput       money.Micros
	DisplaceOutput      money.Micros
	Uptime              election.Solution
	// Reason says why no fare wins, when none does.
	Reason string
}

// LowerFeeWins reports whether a landing fee lower than the one filed, yet
// within its bounds, still wins (LandingFeeBP is the lowest such fee).
func (w WinPlan) LowerFeeWins() bool {
	return w.LandingFee.CanWin && w.LandingFeeBP > fare.MinLandingFee
}

// Prospect is where the listing stands on one ballot, who serves its
// requests, and what it takes to win them.
type Prospect struct {
	Mine   Mine
	Winner string // the winner's carrier name
	// Holder is who serves the ballot's traffic under the gateway's
	// stable preference (see holderOf), HolderIsMe whether that is the
	// listing, and HolderNote which rule decided it.
	Holder     string
	HolderIsMe bool
	HolderNote string
	Win        WinPlan
}

// ScenarioResult is one scenario of the preview.
type ScenarioResult struct {
	Scenario Scenario
	Weights  election.Weights
	Prospect
	Ballot []Competitor
	// UnderShare is where the listing stands for a project on the share
	// policy (auto scenarios only).
	UnderShare ShareStanding
	// Sets are the scenario's requests that carried preferences, one per
	// set (auto scenarios of the measured mix only): each is routed on a
	// ballot of its own, so what it takes to win them is its own.
	Sets []SetProspect
	// SetsLeft are the sets past MaxSetProspects, SetsLeftPart the part of
	// the scenario's requests they carried.
	SetsLeft     int
	SetsLeftPart float64
	// Projects are the scenario's requests from API projects whose rates
	// routing learned apart (auto scenarios only; the largest
	// MaxSetProspects parts): each elects on its own rates under the
	// shape's incumbent, so what it takes to win them is its own.
	Projects []ProjectProspect
}

// ProjectProspect is where the listing stands with the part (Part, of the
// scenario's requests) from API projects routing learned the same rates
// of, elected on those rates, and what it takes to win them.
type ProjectProspect struct {
	Prospect
	Part float64
}

// SetProspect is where the listing stands with the part of a scenario's
// requests that carried one set of preferences (zero data retention, a
// region, a provider order...), and what it takes to win them.
type SetProspect struct {
	Prospect
	// Set is the preferences in words, Key their prefs: key (as
	// PreferencePart has it); Part the part of the scenario's requests
	// that carried them.
	Set, Key string
	Part     float64
	// OrderDecides says the set's provider order names the listing that
	// serves these requests: no fare lever moves them.
	OrderDecides bool
}

// Result is a whole preview.
type Result struct {
	Effective Effective
	Scenarios []ScenarioResult
	Share     Share
	Focus     string
	FeeCurve  FeeCurve
	Bars      []Bars
	Heatmap   *Heatmap
}

// Build computes a preview. It only reads its input.
func Build(in Input) Result {
	if in.Fare == nil {
		for i := range in.Market.Listings {
			if l := &in.Market.Listings[i]; l.ID == in.ListingID {
				in.Fare = l.Published
			}
		}
	}
	res := Result{Effective: effectiveOf(in.Fare)}
	scenarios := WithPrompts(StandardScenarios(), in.Prompts)
	if in.Custom != nil {
		scenarios = append(scenarios, *in.Custom)
	}
	change := Change{ListingID: in.ListingID, Fare: in.Fare}
	solver := new(election.Solver)
	for _, sc := range scenarios {
		res.Scenarios = append(res.Scenarios, scenarioResult(in, sc, change, solver))
	}
	res.Share = projectShare(in, res.Scenarios)
	focus := res.Scenarios[0]
	for _, s := range res.Scenarios {
		if s.Scenario.Key == in.Focus {
			focus = s
		}
	}
	res.Focus = focus.Scenario.Key
	res.FeeCurve = feeCurve(in, focus.Scenario, change)
	for _, s := range res.Scenarios {
		res.Bars = append(res.Bars, barsOf(s))
	}
	if in.Fare != nil && in.Fare.TimeBased != nil {
		h := heatmap(in, focus.Scenario, change)
		res.Heatmap = &h
	}
	return res
}

func effectiveOf(f *fare.Fare) Effective {
	if f == nil {
		return Effective{}
	}
	e := Effective{Input: f.Effective(f.Input), Output: f.Effective(f.Output), Kept: f.KeptPerDollar()}
	if f.CachedInput != nil {
		c := f.Effective(*f.CachedInput)
		e.CachedInput = &c
	}
	return e
}

// scenarioResult elects one scenario and solves what it takes to win, on s
// (whose buffers every scenario reuses; res is s's and read before the
// solver runs again).
func scenarioResult(in Input, sc Scenario, change Change, s *election.Solver) ScenarioResult {
	ballot, entries, me := in.Market.BallotEntries(sc.Request(in.Model, in.At), change)
	res := s.Reset(&ballot, me).Current()
	out := ScenarioResult{Scenario: sc, Weights: res.Weights, UnderShare: shareStanding(in, sc, change)}
	if res.Winner >= 0 {
		out.Winner = entries[res.Winner].Listing.CarrierName
	}
	incumbent := ""
	if sc.Routing == election.ModeAuto {
		incumbent = incumbentOf(in, sc)
		holder, note := holderOf(sc, incumbent, &ballot, entries, res)
		out.HolderNote = note
		if holder >= 0 {
			out.Holder, out.HolderIsMe = entries[holder].Listing.CarrierName, holder == me
		}
	}
	for i, o := range res.Candidates {
		if o.Eligible {
			out.Mine.Of++
		}
		e := entries[i]
		c := Competitor{Name: e.Listing.CarrierName, IsMe: i == me, Input: e.Fare.Input, Output: e.Fare.Output, CachedInput: e.Fare.CachedInput,
			Uptime: e.Listing.Health.UptimePct, Latency: e.Listing.Health.LatencyMs, TPS: e.Listing.Health.ThroughputTPS,
			Eligible: o.Eligible, Excluded: o.Excluded.Reasons(), Score: o.Score, Rank: o.Rank, RoutingPrice: o.RoutingPrice}
		out.Ballot = append(out.Ballot, c)
	}
	sort.SliceStable(out.Ballot, func(a, b int) bool {
		ra, rb := out.Ballot[a].Rank, out.Ballot[b].Rank
		if ra == 0 || rb == 0 {
			return rb == 0 && ra != 0
		}
		return ra < rb
	})
	if me < 0 {
		out.Win.Reason = "not on the ballot: the listing has no fare in service"
		return out
	}
	out.Mine = mineOf(res, me)
	out.Win = winPlan(s, change.Fare)
	out.Sets, out.SetsLeft, out.SetsLeftPart = setProspects(in, sc, change.Fare, s, ballot, entries, me, incumbent)
	out.Projects = projectProspects(in, sc, change, s, me, incumbent)
	return out
}

// mineOf is candidate me's standing in res.
func mineOf(res *election.Result, me int) Mine {
	o := res.Candidates[me]
	m := Mine{OnBallot: true, Eligible: o.Eligible, Excluded: o.Excluded.Reasons(), Rank: o.Rank}
	for _, c := range res.Candidates {
		if c.Eligible {
			m.Of++
		}
	}
	if o.Eligible {
		w := res.Weights
		m.HitRate, m.Prices, m.TokenPrice, m.RoutingPrice = o.HitRate, o.Prices, o.TokenPrice, o.RoutingPrice
		m.Contributions = election.Factors{Price: w.Price * o.Factors.Price, Uptime: w.Uptime * o.Factors.Uptime,
			Throughput: w.Throughput * o.Factors.Throughput, Latency: w.Latency * o.Factors.Latency, Cache: w.Cache * o.Factors.Cache}
		m.UptimePenalty, m.PriorityPenalty, m.Score = o.UptimePenalty, o.PriorityPenalty, o.Score
		if res.Winner >= 0 {
			m.Gap = o.Score - res.Candidates[res.Winner].Score
		}
	}
	return m
}

// winPlan runs the solver on every lever.
func winPlan(s *election.Solver, f *fare.Fare) WinPlan {
	w := priceLever(s, f)
	w.LandingFee = s.LandingFee()
	if w.LandingFee.CanWin {
		w.LandingFeeBP = ceilBP(w.LandingFee.Value)
	}
	w.Discount = s.Discount()
	if w.Discount.CanWin {
		w.DiscountBP = ceilBP(w.Discount.Value)
	}
	if !w.WinsNow {
		w.Uptime = s.Uptime()
	}
	displaceLever(&w, s, f)
	if !w.Price.CanWin && !w.LandingFee.CanWin && !w.Discount.CanWin {
		w.Reason = w.Price.Reason
	}
	return w
}

// priceLever is a plan's price multiplier and the prices it gives.
func priceLever(s *election.Solver, f *fare.Fare) WinPlan {
	w := WinPlan{Price: s.PriceMultiplier()}
	w.WinsNow = w.Price.WinsNow
	if w.Price.CanWin && !w.Price.Unbounded {
		w.NewInput, w.NewOutput, w.NewCachedInput = scaledPrices(f, w.Price.Value)
	}
	return w
}

// displaceLever adds the prices that lead by the incumbent's margin; it
// runs last, as it leaves the solver asking for the margin.
func displaceLever(w *WinPlan, s *election.Solver, f *fare.Fare) {
	w.Displace = s.WithMargin(election.IncumbentMargin).PriceMultiplier()
	if w.Displace.CanWin && !w.Displace.Unbounded {
		w.DisplaceInput, w.DisplaceOutput, _ = scaledPrices(f, w.Displace.Value)
	}
}

// scaledPrices multiplies the filed prices by m, rounding down to the
// micro-dollar: a lower price never ranks worse, so the result still wins.
func scaledPrices(f *fare.Fare, m float64) (input, output money.Micros, cached *money.Micros) {
	if f == nil {
		return 0, 0, nil
	}
	scale := func(p money.Micros) money.Micros { return money.Micros(math.Floor(float64(p) * m)) }
	input, output = scale(f.Input), scale(f.Output)
	if f.CachedInput != nil {
		c := scale(*f.CachedInput)
		cached = &c
	}
	return input, output, cached
}

// ceilBP rounds a fraction up to the next basis point, within 0-100 %.
func ceilBP(v float64) money.BasisPoints {
	bp := money.BasisPoints(math.Ceil(v*10000 - 1e-9))
	return min(max(bp, 0), 10000)
}

// withLandingFee returns the ballot with the subject's landing fee replaced.
func withLandingFee(b election.Ballot, me int, lf float64) election.Ballot {
	cands := append([]election.Candidate(nil), b.Candidates...)
	f := cands[me].Fare
	f.LandingFee = &lf
	cands[me].Fare = f
	b.Candidates = cands
	return b
}

// incumbentOf is the candidate id of the scenario's incumbent: where
// routing stands, the shape's holder (if it has one); without it, the
// winner with the published fares ("" for none).
func incumbentOf(in Input, sc Scenario) string {
	if shape, standard := strings.CutSuffix(sc.Key, "-"+election.ModeAuto.String()); standard && in.Market.Routing != nil {
		return in.Market.Routing.Holders[shape]
	}
	published, publishedEntries, _ := in.Market.BallotEntries(sc.Request(in.Model, in.At), Change{ListingID: in.ListingID})
	var won election.Result
	election.ElectWinnerInto(&published, &won)
	if won.Winner < 0 {
		return ""
	}
	return CandidateID(publishedEntries[won.Winner].Listing)
}

// holderOf decides who serves a scenario's traffic the way the gateway
// moves it (traffic.Keeps, the rule the share and the replay apply): the
// incumbent (id, incumbentOf's) keeps the traffic
// unless a challenger's score beats it by more than the incumbent margin,
// or the incumbent's uptime on the ballot is under 85 % (its sessions move
// away). It returns the holder's index in entries (-1: no one) and the
// rule that decided, in words.
func holderOf(sc Scenario, id string, ballot *election.Ballot, entries []Entry, after *election.Result) (int, string) {
	if after.Winner < 0 {
		return -1, "no eligible candidate"
	}
	incumbent := -1
	if id != "" {
		for i := range entries {
			if CandidateID(entries[i].Listing) == id {
				incumbent = i
			}
		}
	}
	sessions := ""
	if sc.SessionOpening {
		sessions = "; the opener's winner also serves the session's follow-up requests"
	}
	switch {
	case incumbent < 0 || !after.Candidates[incumbent].Eligible:
		return after.Winner, "no incumbent on this ballot: the best score takes it" + sessions
	case incumbent == after.Winner:
		return incumbent, "the incumbent has the best score and keeps it" + sessions
	}
	lead := after.Candidates[incumbent].Score - after.Candidates[after.Winner].Score
	switch {
	case traffic.Keeps(ballot, after, incumbent):
	case traffic.UptimeOf(&ballot.Candidates[incumbent]) < traffic.MinStableUptime:
		return after.Winner, fmt.Sprintf("the incumbent (%s) is under %s %% uptime: its traffic moves to the best score",
			entries[incumbent].Listing.CarrierName, election.Percent(election.StableUptime)) + sessions
	default:
		return after.Winner, fmt.Sprintf("leads the incumbent (%s) by %.3f, more than the %.2f margin: the traffic moves",
			entries[incumbent].Listing.CarrierName, lead, election.IncumbentMargin) + sessions
	}
	return incumbent, fmt.Sprintf("the best score leads the incumbent (%s) by only %.3f, within the %.2f margin: the incumbent keeps it",
		entries[incumbent].Listing.CarrierName, lead, election.IncumbentMargin) + sessions
}
