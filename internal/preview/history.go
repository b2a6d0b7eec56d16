package preview

import (
	"maps"
	"slices"
	"time"

	"github.com/airside/airside/internal/catalogue"
	"github.com/airside/airside/internal/election"
	"github.com/airside/airside/internal/fare"
	"github.com/airside/airside/internal/traffic"
)

// Moment is what was in force for a model from a time on: each listing's
// published fare (absent: none yet, so not on the ballot) and health as the
// catalogue computed it (absent: the listing's health in the base market),
// and the workload mix of the demand (nil or empty: an even mix).
type Moment struct {
	At     time.Time
	Fares  map[int64]*fare.Fare
	Health map[int64]catalogue.Health
	Mix    map[string]float64
	// Prompts are each shape's measured prompt size (Input.Prompts).
	Prompts map[string]int64
	// Kinds split each shape's requests by kind (KindsFromDemand); a shape
	// absent is all of its usual kind.
	Kinds map[string][]Kind
	// Learned are the rates routing had learned of the model's traffic by
	// then (seed 001, traffic.Learn): each candidate's own cache-hit rate
	// past the gates, and the combined rate and output ratio every other
	// candidate is elected with, as the gateway applies them.
	Learned traffic.Learned
	// Idle says the model had no request then: routing, electing nothing,
	// set no holder, so none carries to the next moment.
	Idle bool
	// Holders are the holders gateways reported in force at the moment's
	// start, by gateway shape (candidate ids): a shape named here starts
	// the moment with that holder instead of the one carried from the
	// moment before, since which kind of request opened a shape decides its
	// holder and only routing saw that.
	Holders map[traffic.Shape]string
	// HeldBack are listings the gateway's limits held back for the whole
	// moment (a 429 backoff, an open breaker: election.md sec. 8): off
	// every ballot, the shape they hold served by its winner meanwhile,
	// and, as the gateway keeps an incumbent its limits hold back, every
	// holder the same after the moment as before it.
	HeldBack []int64
	// ShareParts are the part of each shape's requests (by shape key)
	// routed under the share policy (election.md sec. 8: projects that
	// chose it; SharePartsFromDemand), each listing taking its share of
	// them by its standing from the moment's health; the rest are
	// elected. A shape absent is all elected.
	ShareParts map[string]float64
	// Preferences are the parts of each shape's requests (by shape key)
	// that carried preferences narrowing or ordering the ballot
	// (PreferencePartsFromDemand), each set elected on a ballot of its own
	// as the gateway routes it (election.md sec. 7): an order or a single
	// listing left takes them all, otherwise the shape's incumbent when it
	// may serve them and keeps its lead, else their own winner, the
	// incumbent left in place. They are taken out of the elected part.
	Preferences map[string][]PreferencePart
	// Tried are the rates the gateway counts of its own tries of each
	// listing and adds to its adjusted price under the share policy (429s
	// of tries, malformed tool calls of tool calls; election.md sec. 8),
	// as the gateways reported them for the moment's hour: absent, none.
	Tried map[int64]TriedRates
	// Projects are the parts of each shape's requests (by shape key) from
	// API projects the gateway named, of those it elected with no
	// preferences, each with the rates routing had learned of that project
	// (the gateway learns per project: seed 001). Each part elects on its
	// own rates, the rest of the elected requests on Learned, all under
	// the shape's one incumbent. A shape absent is all elected on Learned.
	Projects map[string][]ProjectPart
}

// ProjectPart is a part of a shape's requests from one API project (or
// from several whose learned rates were the same), of all the shape's
// requests, with the rates routing had learned of it.
type ProjectPart struct {
	Part    float64
	Learned traffic.Learned
}

// learnedGroup is a part of a shape's elected requests (of them) and the
// rates they are elected on.
type learnedGroup struct {
	part    float64
	learned *traffic.Learned
}

// learnedGroups splits a shape's elected requests (elected, of all the
// shape's) into the projects' parts (ProjectPart.Part, of all) and the
// rest, elected on the model's rates; one group of the model's rates when
// no project is named. out is reused.
func learnedGroups(out []learnedGroup, projects []ProjectPart, elected float64, model *traffic.Learned) []learnedGroup {
	out = out[:0]
	rest := 1.0
	if elected > 0 {
		for i := range projects {
			f := min(max(projects[i].Part, 0)/elected, rest)
			if f <= 0 {
				continue
			}
			out = append(out, learnedGroup{part: f, learned: &projects[i].Learned})
			rest -= f
		}
	}
	if rest > 1e-9 || len(out) == 0 {
		out = append(out, learnedGroup{part: max(rest, 0), learned: model})
	}
	return out
}

// onRates sets cands' cache-hit rates to learned's (a candidate without
// one past the gates has none), into out (reused), rates holding them.
func onRates(out, cands []election.Candidate, rates []float64, learned *traffic.Learned) ([]election.Candidate, []float64) {
	out = append(out[:0], cands...)
	rates = rates[:0]
	for i := range out {
		rates = append(rates, 0)
		out[i].Metrics.CacheHitRate = nil
	}
	for i := range out {
		if r, ok := learned.HitRate[out[i].ID]; ok {
			rates[i] = r
			out[i].Metrics.CacheHitRate = &rates[i]
		}
	}
	return out, rates
}

// OnLearned is ballot b elected on the rates routing learned (learned) as
// the gateway elects: each candidate's own cache-hit rate past the gates
// (none otherwise, never the catalogue's) and the request's combined rate
// and output ratio. b's candidates are copied, not changed.
func OnLearned(b election.Ballot, learned *traffic.Learned) election.Ballot {
	b.Candidates, _ = onRates(nil, b.Candidates, nil, learned)
	b.Request.ObservedHitRate, b.Request.ObservedOutputRatio = learned.Combined, learned.OutputRatio
	return b
}

// TriedRates are a listing's 429 and malformed-tool-call rates as the
// gateway counted them of its tries (nil: none counted).
type TriedRates struct {
	RateLimited, MalformedToolCalls *float64
}

// TriedRatesOf are the rates of a listing's hour as the gateways reported
// it: its 429s of its tries (answers and 429s), its malformed tool calls
// of its tool calls.
func TriedRatesOf(c catalogue.Counts) TriedRates {
	var out TriedRates
	if tries := c.Requests + c.RateLimited; tries > 0 {
		r := float64(c.RateLimited) / float64(tries)
		out.RateLimited = &r
	}
	if c.ToolCalls > 0 {
		r := float64(c.MalformedToolCalls) / float64(c.ToolCalls)
		out.MalformedToolCalls = &r
	}
	return out
}

// ProjectHistory is the share of the model's requests the preview projects
// for every listing of base at each moment, from what was in force then:
// each shape's auto election on the fares and health of the moment, weighed
// by the moment's mix. The holder of each shape is carried from one moment
// to the next under the gateway's stable preference (traffic.Holder), so a
// cheaper fare that stays within the incumbent's margin projects no move,
// as routing makes none. Listings keep base's status, priority and
// capability verdicts. The result has, per moment, each listing's share in
// the order of base.Listings; a listing off the ballot projects zero.
//
// holders are the holders of each shape (shape key to candidate id) before
// the first moment, updated in place to those after the last: a projection
// continued later starts where this one ended (nil starts with none).
func ProjectHistory(base Market, model string, moments []Moment, holders map[string]string) [][]Share {
	n := len(base.Listings)
	// Each listing's candidate is built again only when its fare changes
	// (a month of hours has a few fares and hundreds of moments); a moment
	// sets its health and learned rate, and its four shapes share it.
	built := make([]election.Candidate, n)
	builtFrom := make([]*fare.Fare, n)
	cands := make([]election.Candidate, 0, n)
	at := make([]int, 0, n) // each candidate's listing, by index in base
	hitRates := make([]float64, n)
	incumbents := holders
	if incumbents == nil {
		incumbents = map[string]string{}
	}
	var ballots []election.Ballot
	var results []election.Result
	var parts []float64
	out := make([][]Share, len(moments))
	all := make([]Share, len(moments)*n)
	var samples []float64
	// The share policy's ballot and result, reused, and those of a set of
	// preferences.
	var shareCands []election.Candidate
	var shareBallot, prefBallot election.Ballot
	var shareResult, prefResult election.Result
	// The ballots of the elected requests when projects split them by
	// their learned rates (a ballot per kind and group), and each group's
	// candidates.
	var groups []learnedGroup
	var heldBallots []election.Ballot
	var heldResults []election.Result
	var heldParts []float64
	var groupCands [][]election.Candidate
	var groupRates [][]float64
	for mi, m := range moments {
		cands, at, samples = cands[:0], at[:0], samples[:0]
		for i := range base.Listings {
			l := &base.Listings[i]
			f := m.Fares[l.ID]
			if !onBallot(l.Status, f) {
				continue
			}
			if builtFrom[i] != f {
				built[i], builtFrom[i] = Candidate(l, f, base.Checks[l.ID]), f
			}
			c := built[i]
			c.State.Backoff = slices.Contains(m.HeldBack, l.ID)
			h := l.Health
			if mh, ok := m.Health[l.ID]; ok {
				h = mh
			}
			// The gateway ranks on the rates it learned, never the
			// catalogue's cache-hit rate (seed 001; gateway.BuildTable).
			c.Metrics = election.Metrics{Uptime: h.UptimePct, LatencyMs: h.LatencyMs, Throughput: h.ThroughputTPS}
			if r, ok := m.Learned.HitRate[c.ID]; ok {
				hitRates[i] = r
				c.Metrics.CacheHitRate = &hitRates[i]
			}
			cands, at = append(cands, c), append(at, i)
			samples = append(samples, traffic.PeerSample(h.Requests))
		}
		traffic.BlendWithPeers(cands, samples)
		if len(m.ShareParts) > 0 {
			// The share policy reads the same health as its parts.
			shareCands = append(shareCands[:0], cands...)
			for i := range shareCands {
				shareCands[i].ShareMetrics = election.ShareMetricsFromHealth(shareCands[i].Metrics)
				tried := m.Tried[base.Listings[at[i]].ID]
				shareCands[i].ShareMetrics.RateLimitedRate, shareCands[i].ShareMetrics.MalformedToolCallRate = tried.RateLimited, tried.MalformedToolCalls
			}
		}
		shares := all[mi*n : (mi+1)*n : (mi+1)*n]
		served := 0.0 // the part of the moment's requests some candidate could serve
		pcts := mixPercents(m.Mix)
		for si, shape := range shapes {
			pct, sp := pcts[si]/100, min(max(m.ShareParts[shape.Key], 0), 1)
			prefs := m.Preferences[shape.Key]
			pp := 0.0 // the part that carried preferences, at most what the share policy leaves
			for _, p := range prefs {
				pp += max(p.Part, 0)
			}
			prefScale := 1.0
			if pp > 1-sp {
				prefScale, pp = (1-sp)/pp, 1-sp
			}
			shape.Routing = election.ModeAuto
			if p := m.Prompts[shape.Key]; p > 0 {
				shape.PromptTokens = p
			}
			if len(m.Holders) > 0 {
				req := shape.Request(model, m.At)
				if id, ok := m.Holders[traffic.ShapeOf(&req)]; ok {
					incumbents[shape.Key] = id
				}
			}
			kinds := m.Kinds[shape.Key]
			if len(kinds) == 0 {
				kinds = []Kind{usualKind(shape)}
			}
			// Each kind elects on its own ballot (buffers kept across
			// moments).
			for len(results) < len(kinds) {
				ballots, results = append(ballots, election.Ballot{}), append(results, election.Result{})
			}
			parts = parts[:0]
			for ki, k := range kinds {
				b := &ballots[ki]
				*b = election.Ballot{Request: shape.Request(model, m.At), Candidates: cands}
				b.Request.Streaming, b.Request.Requires = k.Streaming, k.Requires
				b.Request.ObservedHitRate, b.Request.ObservedOutputRatio = m.Learned.Combined, m.Learned.OutputRatio
				election.ElectWinnerInto(b, &results[ki])
				parts = append(parts, k.Part)
				if sp > 0 {
					// The kind's requests under the share policy: spread
					// by share, no incumbent, no exploration.
					shareBallot = *b
					shareBallot.Candidates, shareBallot.Policy = shareCands, election.PolicyShare
					election.ElectInto(&shareBallot, &shareResult)
					for i := range shareResult.Candidates {
						if o := &shareResult.Candidates[i]; o.HasShare {
							shares[at[i]].Total += pct * k.Part * sp * o.Share.Share
						}
					}
				}
				for _, p := range prefs {
					part := pct * k.Part * max(p.Part, 0) * prefScale
					if part <= 0 {
						continue
					}
					prefBallot = *b
					carryPreferences(&prefBallot, p.Preferences)
					served += part * electPreferred(&prefBallot, &prefResult, incumbents[shape.Key], func(i int, s float64, explored bool) {
						shares[at[i]].Total += part * s
						if explored {
							shares[at[i]].Exploration += part * s
						}
					}, func(i int) {
						shares[at[i]].Total += part
						shares[at[i]].Pinned += part
					})
				}
			}
			elected := 1 - sp - pp
			held, heldRes, heldP := ballots[:len(kinds)], results[:len(kinds)], parts
			if projects := m.Projects[shape.Key]; len(projects) > 0 {
				// Each project's part elects on the rates learned of it,
				// the rest on the model's: a ballot per kind and group,
				// under the shape's one incumbent.
				groups = learnedGroups(groups, projects, elected, &m.Learned)
				for len(groupCands) < len(groups) {
					groupCands, groupRates = append(groupCands, nil), append(groupRates, nil)
				}
				heldBallots, heldParts = heldBallots[:0], heldParts[:0]
				for gi, g := range groups {
					groupCands[gi], groupRates[gi] = onRates(groupCands[gi], cands, groupRates[gi], g.learned)
					for ki, k := range kinds {
						b := ballots[ki]
						b.Candidates = groupCands[gi]
						b.Request.ObservedHitRate, b.Request.ObservedOutputRatio = g.learned.Combined, g.learned.OutputRatio
						heldBallots, heldParts = append(heldBallots, b), append(heldParts, k.Part*g.part)
					}
				}
				for len(heldResults) < len(heldBallots) {
					heldResults = append(heldResults, election.Result{})
				}
				for i := range heldBallots {
					election.ElectWinnerInto(&heldBallots[i], &heldResults[i])
				}
				held, heldRes, heldP = heldBallots, heldResults[:len(heldBallots)], heldParts
			}
			next, servable := holdShape(held, heldRes, heldP, incumbents[shape.Key], func(i int, part float64, explored bool) {
				s := &shares[at[i]]
				s.Total += elected * pct * part
				if explored {
					s.Exploration += elected * pct * part
				}
			})
			// Only requests make a holder: a moment without any of the
			// shape's leaves the incumbent as it was.
			if next != "" && !m.Idle && pcts[si] > 0 && len(m.HeldBack) == 0 {
				incumbents[shape.Key] = next
			}
			served += pct * servable * (1 - pp)
		}
		normalise(shares, served)
		out[mi] = shares
	}
	return out
}

// normalise makes shares parts of the requests some candidate could
// serve (served, a fraction of all): the gateway refuses the others (a
// request requiring a capability no listing has), so routing's measured
// shares, of the requests served, never count them.
func normalise(shares []Share, served float64) {
	if served <= 0 || served >= 1 {
		return
	}
	for i := range shares {
		shares[i].Total /= served
		shares[i].Exploration /= served
		shares[i].Pinned /= served
		shares[i].RevenuePerMillion /= served
	}
}

// mixPercents is each shape's percent of the mix, in the order of shapes
// (an even mix when it holds no requests).
func mixPercents(mix map[string]float64) []float64 {
	total := 0.0
	for _, s := range shapes {
		total += max(mix[s.Key], 0)
	}
	out := make([]float64, len(shapes))
	for i, s := range shapes {
		out[i] = 100.0 / float64(len(shapes))
		if total > 0 {
			out[i] = max(mix[s.Key], 0) / total * 100
		}
	}
	return out
}

// shapeShare is the gateway's split of a shape's auto requests
// (internal/traffic): the holder serves them but the exploration share,
// which goes evenly to the other eligible candidates.
func shapeShare(holds bool, eligible int) float64 {
	switch {
	case holds && eligible == 1:
		return 1 // no one else to explore
	case holds:
		return 1 - traffic.ExplorationRate
	case eligible > 1:
		return traffic.ExplorationRate / float64(eligible-1)
	}
	return 0
}

// WeighedShare is the share projected over several moments, each weighed by
// the model's requests in it (a moment without requests counts for
// nothing); ok is false when no moment has any.
func WeighedShare(shares []Share, requests []int64) (Share, bool) {
	var w ShareWeigher
	for i, s := range shares {
		w.Add(s, requests[i])
	}
	return w.Share()
}

// ShareWeigher sums shares weighed by their requests (a share of no
// requests counts for nothing), for a caller that walks its own hours.
type ShareWeigher struct {
	sum   Share
	total int64
}

// Add counts share for n requests.
func (w *ShareWeigher) Add(share Share, n int64) {
	if n <= 0 {
		return
	}
	w.total += n
	w.sum.Total += share.Total * float64(n)
	w.sum.Exploration += share.Exploration * float64(n)
	w.sum.Pinned += share.Pinned * float64(n)
}

// Share is the weighed share; ok is false when no requests were counted.
func (w ShareWeigher) Share() (Share, bool) {
	if w.total == 0 {
		return Share{}, false
	}
	return Share{Total: w.sum.Total / float64(w.total), Exploration: w.sum.Exploration / float64(w.total), Pinned: w.sum.Pinned / float64(w.total)}, true
}

// PreferencePart is a part of a shape's requests that carried one set of
// preferences (catalogue.Preferences, from a prefs: key).
type PreferencePart struct {
	// Key is the set's prefs: key as demand rows carry it ("" when the
	// parts were not read from demand).
	Key         string
	Preferences *catalogue.Preferences
	Part        float64
}

// electPreferred elects b, a ballot carrying a set of preferences, into
// res and serves its requests as the gateway routes them (election.md sec.
// 7; gateway plan): a provider order, or preferences that leave one
// listing, send them all to the first listing tried (pin), with no
// exploration; preferences that narrow the ballot send them to the shape's
// incumbent when it may serve them and keeps its lead, else to their own
// winner, exploration apart (serve; the incumbent stays as it was). It
// returns the part some listing could serve (0 or 1).
func electPreferred(b *election.Ballot, res *election.Result, incumbent string, serve func(i int, part float64, explored bool), pin func(i int)) float64 {
	election.ElectInto(b, res)
	switch {
	case res.Winner < 0:
		return 0
	case len(b.Request.Provider.Order) > 0 || res.Pinned:
		pin(res.Winner)
		return 1
	}
	_, servable := holdOne(b, res, incumbent, serve)
	return servable
}

// PreferencePartsFromDemand are each shape's parts of requests by the set
// of preferences they carried (WorkloadDemand.Preferences), the general
// workload's for both its shapes, as SharePartsFromDemand maps them; nil
// when no request carried any. A set that does not read back is left out.
func PreferencePartsFromDemand(d map[string]catalogue.WorkloadDemand) map[string][]PreferencePart {
	var out map[string][]PreferencePart
	for w, keys := range map[string][]string{"general": {"small", "large"}, "coding": {"coding"}, "chat": {"chat"}} {
		wd := d[w]
		if wd.Requests <= 0 || len(wd.Preferences) == 0 {
			continue
		}
		sets := slices.Sorted(maps.Keys(wd.Preferences))
		var parts []PreferencePart
		for _, set := range sets {
			a, ok := catalogue.ParseAsked(set)
			if !ok || a.Preferences == nil || wd.Preferences[set] <= 0 {
				continue
			}
			parts = append(parts, PreferencePart{Key: set, Preferences: a.Preferences, Part: min(float64(wd.Preferences[set])/float64(wd.Requests), 1)})
		}
		if len(parts) == 0 {
			continue
		}
		if out == nil {
			out = map[string][]PreferencePart{}
		}
		for _, k := range keys {
			out[k] = parts
		}
	}
	return out
}
