package preview

import (
	"cmp"
	"fmt"
	"math"
	"slices"
	"strings"

	"github.com/airside/airside/internal/catalogue"
	"github.com/airside/airside/internal/election"
	"github.com/airside/airside/internal/traffic"
)

// Kind is one kind of a shape's requests: streamed or not, the
// capabilities required, and its part of the shape's requests (0 to 1).
// Each kind elects on its own ballot (streaming weighs latency; a
// capability narrows the candidates) while the gateway keeps one incumbent
// for the shape, whichever kind it came from.
type Kind struct {
	Streaming bool
	Requires  election.Capabilities
	Part      float64
}

// usualKind is the kind a shape's requests are taken to be when demand
// does not say: the scenario's streaming, requiring nothing.
func usualKind(shape Scenario) Kind {
	return Kind{Streaming: shape.Streaming, Part: 1}
}

// KindsFromDemand splits each shape's measured requests by kind: small
// one-shots and large prompts from the general workload's kinds (below and
// above the large line), coding and chat from theirs; requests whose
// gateway did not say count as the shape's usual kind. A shape whose
// requests are all of its usual kind is absent (ProjectHistory then elects
// it once, as it always did).
func KindsFromDemand(d map[string]catalogue.WorkloadDemand) map[string][]Kind {
	out := map[string][]Kind{}
	for _, shape := range shapes {
		var total int64
		var counts []catalogue.KindDemand
		add := func(k catalogue.RequestKind, n int64) {
			if n <= 0 {
				return
			}
			if !k.Reported { // said nothing: the shape's usual kind
				k = catalogue.RequestKind{Reported: true, Streaming: shape.Streaming}
			}
			total += n
			for i := range counts {
				if counts[i].RequestKind == k {
					counts[i].Requests += n
					return
				}
			}
			counts = append(counts, catalogue.KindDemand{RequestKind: k, Requests: n})
		}
		workload, large := shape.Workload.String(), shape.Key == "large"
		w := d[workload]
		var said, saidLarge int64
		for _, k := range w.Kinds {
			said, saidLarge = said+k.Requests, saidLarge+k.LargeRequests
			switch {
			case shape.Workload != election.WorkloadGeneral:
				add(k.RequestKind, k.Requests)
			case large:
				add(k.RequestKind, k.LargeRequests)
			default:
				add(k.RequestKind, k.Requests-k.LargeRequests)
			}
		}
		switch unsaid := w.Requests - said; {
		case shape.Workload != election.WorkloadGeneral:
			add(catalogue.RequestKind{}, unsaid)
		case large:
			add(catalogue.RequestKind{}, w.LargeRequests-saidLarge)
		default:
			add(catalogue.RequestKind{}, unsaid-(w.LargeRequests-saidLarge))
		}
		usual := catalogue.RequestKind{Reported: true, Streaming: shape.Streaming}
		if total == 0 || (len(counts) == 1 && counts[0].RequestKind == usual) {
			continue
		}
		// The usual kind first, then the most requested: the order a shape
		// with no incumbent is taken to open in (the gateway's incumbent is
		// its first request's winner, and which kind came first is not
		// reported).
		slices.SortStableFunc(counts, func(a, b catalogue.KindDemand) int {
			if (a.RequestKind == usual) != (b.RequestKind == usual) {
				if a.RequestKind == usual {
					return -1
				}
				return 1
			}
			return cmp.Compare(b.Requests, a.Requests)
		})
		kinds := make([]Kind, len(counts))
		for i, c := range counts {
			kinds[i] = Kind{Streaming: c.Streaming, Requires: c.Requires, Part: float64(c.Requests) / float64(total)}
		}
		out[shape.Key] = kinds
	}
	return out
}

// kindSteps is how many requests stand for a moment of a shape with more
// than one kind, run through the stable preference one by one.
const kindSteps = 120

// holdShape serves a shape's requests of one moment the way the gateway
// routes them: each request goes to the holder its own kind's ballot
// leaves (traffic.Holder: the incumbent while it keeps the shape, else that
// ballot's winner), and that holder is the incumbent for the next request,
// whatever its kind. The kinds arrive interleaved evenly, kindSteps
// requests standing for the moment's (one request when there is one kind:
// the holder is then the same for all). Every ballot holds the same
// candidates in the same order; results are their elections, parts each
// kind's part of the shape. serve gets each candidate's part of the shape
// (explored: exploration brought it, traffic.ExplorationRate of each
// request going evenly to the other eligible candidates). It returns the
// incumbent after the moment ("" when there was none and no one is
// eligible) and the part of the shape some candidate could serve (a kind
// no one is eligible for is refused by the gateway, and never served).
func holdShape(ballots []election.Ballot, results []election.Result, parts []float64, incumbent string,
	serve func(i int, part float64, explored bool)) (next string, servable float64) {
	if len(ballots) == 1 {
		return holdOne(&ballots[0], &results[0], incumbent, serve)
	}
	kinds := len(ballots)
	steps := make([]int, kinds)
	total := 0
	for v := range steps {
		steps[v] = max(1, int(math.Round(parts[v]*kindSteps)))
		total += steps[v]
	}
	cur := -1
	for i, c := range results[0].Candidates {
		if c.ID == incumbent {
			cur = i
		}
	}
	n := len(results[0].Candidates)
	held := make([]int, kinds*n) // requests of each kind each candidate held
	done := make([]int, kinds)
	for step := range total {
		// With no incumbent, the first kind's request opens the shape (see
		// KindsFromDemand); then the kind furthest behind its even pace
		// comes next. The holder is traffic.Holder's, by index.
		v := 0
		if step > 0 || cur >= 0 {
			v = behindPace(done, steps)
		}
		done[v]++
		res := &results[v]
		h := res.Winner
		if cur >= 0 && res.Winner >= 0 && traffic.Keeps(&ballots[v], res, cur) {
			h = cur
		}
		if h >= 0 {
			held[v*n+h]++
			cur = h
		}
	}
	for v := range kinds {
		if results[v].Winner >= 0 {
			servable += parts[v]
		}
		for h := range n {
			if c := held[v*n+h]; c > 0 {
				serveHeld(&results[v], h, parts[v]*float64(c)/float64(steps[v]), serve)
			}
		}
	}
	if cur < 0 {
		return incumbent, servable
	}
	return results[0].Candidates[cur].ID, servable
}

// holdOne is holdShape for a shape of one kind: its holder serves it all,
// but the exploration share.
func holdOne(b *election.Ballot, res *election.Result, incumbent string, serve func(i int, part float64, explored bool)) (string, float64) {
	h, _ := traffic.Holder(b, res, incumbent)
	if h < 0 {
		return incumbent, 0
	}
	serveHeld(res, h, 1, serve)
	return res.Candidates[h].ID, 1
}

// serveHeld splits part of a shape's requests held by candidate h of res
// as the gateway routes them: the holder serves them but the exploration
// share, which goes evenly to the other eligible candidates (shapeShare).
func serveHeld(res *election.Result, h int, part float64, serve func(i int, part float64, explored bool)) {
	eligible := 0
	for _, o := range res.Candidates {
		if o.Eligible {
			eligible++
		}
	}
	for i, o := range res.Candidates {
		if o.Eligible {
			if s := part * shapeShare(i == h, eligible); s > 0 {
				serve(i, s, i != h)
			}
		}
	}
}

// behindPace is the kind whose requests so far lag furthest behind an even
// spread of its steps over the moment.
func behindPace(done, steps []int) int {
	v := -1
	for k := range steps {
		if done[k] < steps[k] && (v < 0 || (float64(done[k])+0.5)/float64(steps[k]) < (float64(done[v])+0.5)/float64(steps[v])) {
			v = k
		}
	}
	return v
}

// kindsShare is the listing's part of a shape's requests whose kinds are
// known (the fare being typed in place of its published one): the kinds
// elected on ballots of their own under the shape's one incumbent, as
// ProjectHistory projects them. explored is the part exploration brings;
// holds says the listing is the incumbent the moment leaves; servable is
// the part of the shape some candidate could serve.
func kindsShare(in Input, sc Scenario, kinds []Kind, projects []learnedGroup) (share, explored, servable float64, holds bool) {
	change := Change{ListingID: in.ListingID, Fare: in.Fare}
	if len(projects) == 0 {
		projects = []learnedGroup{{part: 1}}
	}
	ballots := make([]election.Ballot, 0, len(kinds)*len(projects))
	parts := make([]float64, 0, cap(ballots))
	me := -1
	for _, g := range projects {
		market := in.Market
		if g.learned != nil {
			// The group's requests elect on the rates learned of it.
			market = market.withLearned(*g.learned)
		}
		for _, k := range kinds {
			req := sc.Request(in.Model, in.At)
			req.Streaming, req.Requires = k.Streaming, k.Requires
			var b election.Ballot
			b, _, me = market.BallotEntries(req, change)
			ballots, parts = append(ballots, b), append(parts, k.Part*g.part)
		}
	}
	results := make([]election.Result, len(ballots))
	for i := range ballots {
		election.ElectWinnerInto(&ballots[i], &results[i])
	}
	next, servable := holdShape(ballots, results, parts, incumbentOf(in, sc), func(i int, part float64, exploring bool) {
		if i == me {
			share += part
			if exploring {
				explored += part
			}
		}
	})
	return share, explored, servable, me >= 0 && next == ballots[0].Candidates[me].ID
}

// projectGroups are the parts of a shape's elected requests (elected, of
// all the shape's: those that carried no preferences) by the rates routing
// learned of their projects (Market.Routing.Projects), the rest on the
// model's, as ProjectHistory splits a moment's (learnedGroups); nil when
// every one of them elects on the model's rates.
func projectGroups(in Input, shape string, elected float64) []learnedGroup {
	if in.Market.Routing == nil || len(in.Market.Routing.Projects[shape]) == 0 {
		return nil
	}
	model := &in.Market.Routing.Learned
	groups := learnedGroups(nil, in.Market.Routing.Projects[shape], elected, model)
	if len(groups) == 1 && groups[0].learned == model {
		return nil
	}
	return groups
}

// projectProspects are where the listing stands, under auto, with each
// part of the scenario's requests from projects routing learned rates of
// apart (Market.Routing.Projects), the largest MaxSetProspects, each
// elected on its rates as the share elects them, held by the shape's
// incumbent (incumbent) as holderOf decides, and what it takes to win it.
func projectProspects(in Input, sc Scenario, change Change, s *election.Solver, me int, incumbent string) []ProjectProspect {
	shape, auto := strings.CutSuffix(sc.Key, "-"+election.ModeAuto.String())
	if !auto || me < 0 || in.Market.Routing == nil || len(in.Market.Routing.Projects[shape]) == 0 {
		return nil
	}
	parts := slices.Clone(in.Market.Routing.Projects[shape])
	slices.SortStableFunc(parts, func(a, b ProjectPart) int { return cmp.Compare(b.Part, a.Part) })
	var out []ProjectProspect
	for _, p := range parts[:min(len(parts), MaxSetProspects)] {
		b, entries, _ := in.Market.withLearned(p.Learned).BallotEntries(sc.Request(in.Model, in.At), change)
		res := s.Reset(&b, me).Current() // read before the solver runs again
		pp := ProjectProspect{Part: p.Part}
		pp.Mine = mineOf(res, me)
		if res.Winner >= 0 {
			pp.Winner = entries[res.Winner].Listing.CarrierName
		}
		holder, note := holderOf(sc, incumbent, &b, entries, res)
		pp.HolderNote = note
		if holder >= 0 {
			pp.Holder, pp.HolderIsMe = entries[holder].Listing.CarrierName, holder == me
		}
		pp.Win = winPlan(s, change.Fare)
		out = append(out, pp)
	}
	return out
}

// projectsNote says how much of a shape's elected requests came from
// projects routing learned rates of their own for (groups, projectGroups),
// before the rule that decided the usual kind's holder on the model's.
func projectsNote(groups []learnedGroup, model *traffic.Learned) string {
	own := 0.0
	for _, g := range groups {
		if g.learned != model {
			own += g.part
		}
	}
	return fmt.Sprintf("%.0f %% of these requests come from API projects whose cache-hit rates routing learned apart; "+
		"each is elected on its own, one incumbent serving them all while it keeps them. On the model's rates: ", 100*own)
}

// kindsNote says how a shape's requests split by kind, before the rule
// that decided its usual kind's holder.
func kindsNote(kinds []Kind) string {
	streamed, narrowed := 0.0, 0.0
	for _, k := range kinds {
		if k.Streaming {
			streamed += k.Part
		}
		if k.Requires != 0 {
			narrowed += k.Part
		}
	}
	return fmt.Sprintf("%.0f %% of these requests stream and %.0f %% require a capability; each kind is elected on its own ballot, "+
		"one incumbent serving them all while it keeps them. For the usual kind: ", 100*streamed, 100*narrowed)
}
