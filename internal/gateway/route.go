package gateway

import (
	"context"
	"fmt"
	"slices"
	"strings"
	"sync"
	"time"

	"github.com/airside/airside/internal/election"
	"github.com/airside/airside/internal/fleet"
	"github.com/airside/airside/internal/traffic"
)

// plan is one request's election and the order it tries candidates in.
type plan struct {
	market *Market
	ballot election.Ballot
	result election.Result
	// tries are ballot indices, first to last, with how the first came.
	tries []int
	kind  Kind
	// session is set when the request carries a session id.
	session *traffic.SessionKey
	// view is the fleet's state as the plan read it.
	view fleet.View
}

// plans are kept between requests: a ballot's candidates and its result
// were most of what routing allocated per request.
var plans = sync.Pool{New: func() any { return new(plan) }}

// release gives the plan back once its request is answered; nothing of it
// may be held after.
func (pl *plan) release() {
	pl.market, pl.session, pl.view = nil, nil, fleet.View{}
	plans.Put(pl)
}

// sessionPin is where a session served by ballot candidate i is pinned:
// that listing, in the first of the request's regions it serves (a
// follow-up's regions are its session's one already).
func (pl *plan) sessionPin(i int) traffic.SessionPin {
	pin := traffic.SessionPin{Listing: pl.market.Listings[i].ID}
	for _, r := range pl.ballot.Request.Regions {
		if slices.Contains(pl.ballot.Candidates[i].Fare.Regions, r) {
			pin.Region = r
			break
		}
	}
	return pin
}

// refusal is a request no candidate can take, said the way the caller can
// act on it.
type refusal struct {
	status  int
	code    string
	message string
}

func (r *refusal) Error() string { return r.message }

// plan elects a request and applies the traffic rules around the election:
// pins, sessions, stable preference, exploration, caps and the fallback order.
func (g *Gateway) plan(p *Project, a *Analysis, m *Market, now time.Time) (*plan, error) {
	pl := plans.Get().(*plan)
	*pl = plan{market: m, result: pl.result, tries: pl.tries[:0], ballot: election.Ballot{Candidates: pl.ballot.Candidates[:0]}}
	req := election.Request{Model: a.Model, PromptTokens: a.PromptTokens, Streaming: a.Stream, Routing: a.Mode,
		Workload: a.Workload, Requires: a.Requires, At: now, CacheHitRate: p.CacheHitRate, CacheOutputRatio: p.CacheOutputRatio,
		MaxTokens: a.MaxTokens, Images: a.Images}
	if err := preferences(p, a, &req); err != nil {
		return nil, &refusal{400, "invalid_request_error", err.Error()}
	}
	queries := make([]traffic.CapQuery, len(m.Candidates))
	for i := range queries {
		queries[i] = traffic.CapQuery{Candidate: m.Candidates[i].ID, Org: p.Organisation, PerOrg: m.Listings[i].PerOrg}
	}
	// One read of the fleet's state (one round trip with Redis): the
	// ballot's caps and limits, the session's pin and the incumbents of
	// the shapes the request may have (a session's request is an opening
	// or not by its pin).
	q := fleet.Query{Caps: queries, Shapes: []traffic.Shape{traffic.ShapeOf(&req)}}
	if a.SessionID != "" {
		pl.session = &traffic.SessionKey{Project: p.Name, Model: a.Model, ID: a.SessionID}
		q.Session = pl.session
		opening := req
		opening.SessionOpening = true
		q.Shapes = append(q.Shapes, traffic.ShapeOf(&opening))
	}
	pl.view = g.shared().Read(q, now)
	pinnedTo := pl.view.Pin.Listing
	req.SessionOpening = pl.session != nil && !pl.view.Open
	if region := pl.view.Pin.Region; pl.view.Open && region != "" && slices.Contains(req.Regions, region) {
		// A session's follow-ups stay in the region it was opened in,
		// wherever its listing moves (election.md sec. 7).
		req.Regions = []string{region}
	}
	learned := g.learned(p.Name, a.Model, now)
	req.ObservedHitRate, req.ObservedOutputRatio = learned.Combined, learned.OutputRatio
	pl.ballot = election.Ballot{Request: req, Candidates: append(pl.ballot.Candidates, m.Candidates...), Policy: p.policy()}
	usages := pl.view.Usages
	for i := range pl.ballot.Candidates {
		c := &pl.ballot.Candidates[i]
		c.Usage = usages[i]
		if h, ok := learned.HitRate[c.ID]; ok {
			c.Metrics.CacheHitRate = &h
		}
		// The limits hold a listing back (backoff, an open breaker); a
		// half-open breaker lets 1 request in 20 probe it, never a pinned
		// one.
		c.State = g.limits.State(c.ID, now)
		if held := pl.view.Held[i]; held.Backoff || held.Slow || held.Breaker == election.BreakerOpen {
			// Another replica's limit holds it back until its end.
			c.State.Backoff = c.State.Backoff || held.Backoff
			c.State.Slow = c.State.Slow || held.Slow
			if c.State.Breaker == election.BreakerClosed {
				c.State.Breaker = held.Breaker
			}
		}
		if c.State.Breaker == election.BreakerHalfOpen && a.Pin == "" {
			c.State.Probe = g.limits.Probe(c.ID, now)
		}
		if pl.ballot.Policy == election.PolicyShare {
			c.ShareMetrics = election.ShareMetricsFromHealth(c.Metrics)
			c.ShareMetrics.RateLimitedRate, c.ShareMetrics.MalformedToolCallRate = g.limits.Shares(c.ID, now)
		}
	}
	election.ElectInto(&pl.ballot, &pl.result)
	res := &pl.result
	for i := range res.Candidates {
		ex := res.Candidates[i].Excluded
		if ex.MissingCapabilities() {
			continue
		}
		if ex.RateCapped() && !res.FellOpen {
			g.Recorder.Capped(m.Listings[i], now)
		}
		// The request a limit kept from the listing: the portal's replay
		// of the minute holds it back for as much of it (a ballot never
		// falls open over a limit, election.md sec. 8).
		if ex.Limited() {
			g.Recorder.HeldBack(m.Listings[i], now)
		}
	}

	switch {
	case a.Pin != "":
		i := m.index(a.Pin)
		if i < 0 {
			return nil, &refusal{404, "model_not_found", fmt.Sprintf("%s is not a listing in service.", a.Pin)}
		}
		if ex := res.Candidates[i].Excluded; ex.MissingCapabilities() {
			return nil, &refusal{404, "capability_missing", fmt.Sprintf("%s cannot serve this request (it lacks %s).", a.Pin, missing(ex))}
		}
		pl.kind = Pinned
		pl.tries = traffic.FallbackOrder(res, i)
		if a.NoFallback {
			pl.tries = pl.tries[:1]
		}
		return pl, nil
	case res.Winner < 0:
		if err := noneLeft(a.Model, res, req.Provider); err != nil {
			return nil, err
		}
		return nil, g.noCandidate(res)
	case req.Provider != nil && len(req.Provider.Order) > 0 || res.Pinned:
		// The caller chose: a provider order (tried in its order, then
		// the rest unless fallbacks are off) or preferences that left
		// one listing. Counted apart from routed requests, never
		// explored, no incumbent (election.md sec. 7).
		pl.kind = Pinned
		pl.tries = append([]int(nil), res.Order[:min(len(res.Order), maxTries)]...)
		if a.NoFallback {
			pl.tries = pl.tries[:1]
		}
		return pl, nil
	}
	first := -1
	for i := range pl.ballot.Candidates {
		if pl.ballot.Candidates[i].State.Probe && res.Candidates[i].Eligible {
			first = i // the probe goes first (election.md sec. 8's order)
			break
		}
	}
	if first < 0 && pinnedTo != "" {
		// A session stays with its listing while that one is eligible and
		// at or above the stable uptime; otherwise it re-elects among the
		// others (the best of them) and is pinned to the new one.
		if i := m.index(pinnedTo); i >= 0 && res.Candidates[i].Eligible && traffic.UptimeOf(&pl.ballot.Candidates[i]) >= traffic.MinStableUptime {
			first = i
		} else {
			for _, j := range res.Ranked() {
				if m.Listings[j].ID != pinnedTo {
					first = j
					break
				}
			}
		}
	}
	if first < 0 && res.Policy == election.PolicyShare {
		// Share routing: a weighted draw by share, and each retry drawn
		// the same way from the candidates not tried yet; no incumbent
		// and no exploration of its own.
		pl.tries = g.drawByShare(res, maxTries)
		if a.NoFallback {
			pl.tries = pl.tries[:1]
		}
		return pl, nil
	}
	if first < 0 && req.Narrows() {
		// A request whose preferences or residency narrow the ballot goes
		// to the shape's incumbent when it may serve it and keeps its
		// lead, else to its own winner, and leaves the incumbent in place:
		// the customer's restriction is not the incumbent's failing, and
		// the rest of the shape's traffic stays with it (election.md sec. 7).
		shape := traffic.ShapeOf(&req)
		first, _ = traffic.Holder(&pl.ballot, res, pl.view.Incumbent(shape))
		if i, ok := traffic.Explore(&req, res, first, g.draw(), g.draw()); ok {
			first, pl.kind = i, Exploration
		}
	} else if first < 0 {
		shape := traffic.ShapeOf(&req)
		var holder string
		first, holder = g.shared().Hold(shape, &pl.view, &pl.ballot, res)
		// The shape's holder, which is not the request's listing while a
		// limit holds the incumbent back (the portal's replay elects
		// those requests without it: heldBack).
		if h := m.index(holder); first >= 0 && h >= 0 && req.Routing == election.ModeAuto {
			g.Recorder.Held(shape, m.Listings[h], now)
		}
		if i, ok := traffic.Explore(&req, res, first, g.draw(), g.draw()); ok {
			first, pl.kind = i, Exploration
		}
	}
	pl.tries = traffic.FallbackOrder(res, first)
	if a.NoFallback {
		pl.tries = pl.tries[:1]
	}
	return pl, nil
}

// noCandidate says why no listing can serve: the capabilities no listing in
// service has, else every listing held back by priority.
func (g *Gateway) noCandidate(res *election.Result) error {
	var ex election.Exclusion = 1<<16 - 1
	for _, o := range res.Candidates {
		ex &= o.Excluded
	}
	if len(res.Candidates) > 0 && ex.MissingCapabilities() {
		return &refusal{404, "capability_missing", fmt.Sprintf("No listing of this model in service can serve this request (none has %s).", missing(ex))}
	}
	return &refusal{404, "no_endpoints", "No listing of this model can serve this request right now."}
}

func missing(ex election.Exclusion) string {
	var names []string
	for _, r := range ex.Reasons() {
		if name, ok := strings.CutPrefix(r, "capability:"); ok {
			names = append(names, name)
		}
	}
	return strings.Join(names, ", ")
}

// learnedRates caches each project's learned rates per model for
// traffic.LearnedCacheFor: they come from the recorder's hourly aggregates,
// which are in memory, so a lookup does not fail; a gateway that kept its
// aggregates in a database would answer a failed lookup with the last
// cached value, then with the defaults (election.md section 4).
type learnedRates struct {
	mu sync.Mutex
	by map[[2]string]learnedEntry
}

type learnedEntry struct {
	at time.Time
	traffic.Learned
}

// ShareLearned publishes this replica's learned-rate hours to the fleet
// every few seconds (its running totals of the hours that changed, under
// its own name), so every replica learns from the whole fleet's traffic
// and a restarted one from the day before it started. Without a fleet it
// returns at once.
func (g *Gateway) ShareLearned(ctx context.Context, replica string, every time.Duration) {
	if g.Fleet == nil {
		return
	}
	if every <= 0 {
		every = 5 * time.Second
	}
	tick := time.NewTicker(every)
	defer tick.Stop()
	for {
		select {
		case <-ctx.Done():
			g.publishHours(replica)
			return
		case <-tick.C:
			g.publishHours(replica)
		}
	}
}

func (g *Gateway) publishHours(replica string) {
	changed := g.Recorder.TakeChangedHours()
	if err := g.Fleet.PublishHours(replica, changed); err != nil {
		g.Recorder.Unpublished(changed)
	}
}

func (g *Gateway) learned(project, model string, now time.Time) traffic.Learned {
	g.rates.mu.Lock()
	defer g.rates.mu.Unlock()
	k := [2]string{project, model}
	if e, ok := g.rates.by[k]; ok && now.Sub(e.at) < traffic.LearnedCacheFor {
		return e.Learned
	}
	hours, ok := g.shared().Hours(project, model, now) // every replica's, with a fleet
	if !ok {
		hours = g.Recorder.Hours(project, model, now)
	} else {
		g.Recorder.Hours(project, model, now) // prunes the replica's old hours
	}
	l := traffic.Learn(hours, now)
	if g.rates.by == nil {
		g.rates.by = map[[2]string]learnedEntry{}
	}
	// A model no longer asked for (gone from the catalogue, or a project
	// that stopped) leaves its entry; entries a day old are dropped as
	// others are refreshed, so the map holds what is in use.
	for old, e := range g.rates.by {
		if now.Sub(e.at) > learnedKept {
			delete(g.rates.by, old)
		}
	}
	g.rates.by[k] = learnedEntry{at: now, Learned: l}
	return l
}

// learnedKept is how long a learned-rate entry not asked for again stays.
const learnedKept = 24 * time.Hour

// draw is a uniform number in [0, 1) from the gateway's seeded source.
func (g *Gateway) draw() float64 {
	g.randMu.Lock()
	defer g.randMu.Unlock()
	return g.Rand.Float64()
}

// maxTries bounds the tries of one request (election.md sec. 4).
const maxTries = 3

// drawByShare draws up to n tries from the eligible candidates of a share
// result, each by share among those not drawn yet.
func (g *Gateway) drawByShare(res *election.Result, n int) []int {
	left := res.Ranked()
	tries := make([]int, 0, min(n, len(left)))
	for len(tries) < n && len(left) > 0 {
		var sum float64
		for _, i := range left {
			sum += res.Candidates[i].Share.Share
		}
		pick, at := len(left)-1, g.draw()*sum
		for k, i := range left {
			if at < res.Candidates[i].Share.Share {
				pick = k
				break
			}
			at -= res.Candidates[i].Share.Share
		}
		tries = append(tries, left[pick])
		left = append(left[:pick], left[pick+1:]...)
	}
	return tries
}
