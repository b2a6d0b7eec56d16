package preview

import (
	"cmp"
	"fmt"
	"slices"
	"strings"

	"github.com/airside/airside/internal/catalogue"
	"github.com/airside/airside/internal/election"
	"github.com/airside/airside/internal/fare"
	"github.com/airside/airside/internal/traffic"
)

// MaxSetProspects bounds the sets of preferences a scenario says what it
// takes to win, the largest first: each is a ballot and a solver run of
// its own (the live preview reruns them as the carrier types), and the
// rest are listed by their part only (ScenarioResult.SetsLeft).
const MaxSetProspects = 4

// setProspects is what it takes to win the requests of an auto scenario
// that carried each set of preferences (in.Preferences of its shape, the
// MaxSetProspects largest), each elected on a ballot of its own at the
// scenario's usual kind, as electPreferred routes them: a provider order
// sends them to the first listing it names that may serve them, whatever
// the prices; other sets go to the shape's incumbent while it may serve
// them and keeps its lead, else to their own winner. The price (and the
// margin over an incumbent) is solved on the set's ballot with s, for the
// fare f; plain, entries and me are the scenario's ballot and incumbent its
// incumbent (scenarioResult's). The sets left out and the part they carry
// are returned after.
func setProspects(in Input, sc Scenario, f *fare.Fare, s *election.Solver, plain election.Ballot, entries []Entry, me int, incumbent string) (
	sets []SetProspect, left int, leftPart float64) {
	shape, auto := strings.CutSuffix(sc.Key, "-"+election.ModeAuto.String())
	prefs := scaledSets(in.Preferences[shape])
	if !auto || len(prefs) == 0 || me < 0 {
		return nil, 0, 0
	}
	slices.SortStableFunc(prefs, func(a, b PreferencePart) int { return cmp.Compare(b.Part, a.Part) })
	for _, p := range prefs[min(len(prefs), MaxSetProspects):] {
		left++
		leftPart += p.Part
	}
	prefs = prefs[:min(len(prefs), MaxSetProspects)]
	var out []SetProspect
	var res election.Result
	for _, p := range prefs {
		part := p.Part
		b := plain // each set elects on a copy; the candidates are only read
		carryPreferences(&b, p.Preferences)
		st := SetProspect{Set: SetWords(p.Preferences), Key: p.Key, Part: part}
		election.ElectInto(&b, &res)
		st.Mine = mineOf(&res, me)
		if res.Winner < 0 {
			st.Win.Reason = "no listing may serve these requests"
			out = append(out, st)
			continue
		}
		winner := res.Candidates[res.Winner].ID
		st.Winner = entries[res.Winner].Listing.CarrierName
		order := p.Preferences.Provider.Order
		ordered := len(order) > 0
		switch {
		case ordered && slices.ContainsFunc(order, func(e string) bool { return election.SlugMatches(e, winner) }):
			st.OrderDecides = true
			st.Holder, st.HolderIsMe = st.Winner, res.Winner == me
			st.HolderNote = "their provider order tries " + st.Winner + " first, whatever the prices"
			st.Win = WinPlan{WinsNow: st.HolderIsMe, Reason: st.HolderNote}
		case ordered || res.Pinned:
			// No listing the order names may serve them: the rest are
			// tried by rank, with no incumbent keeping them.
			st.Holder, st.HolderIsMe = st.Winner, res.Winner == me
			st.HolderNote = "the best score among the listings these preferences allow takes them"
			st.Win = setPlan(s.Reset(&b, me), f, false)
		default:
			h, kept := traffic.Holder(&b, &res, incumbent)
			st.Holder, st.HolderIsMe = entries[h].Listing.CarrierName, h == me
			st.HolderNote = "the best score among the listings these preferences allow takes them"
			if kept && h != res.Winner {
				st.HolderNote = fmt.Sprintf("the shape's incumbent (%s) may serve them and keeps them within the %.2f margin", st.Holder, election.IncumbentMargin)
			}
			// The margin matters only where another listing, the shape's
			// incumbent, may serve these requests.
			other := slices.ContainsFunc(res.Candidates, func(c election.Outcome) bool { return c.ID == incumbent && c.Eligible }) &&
				res.Candidates[me].ID != incumbent
			st.Win = setPlan(s.Reset(&b, me), f, other)
		}
		out = append(out, st)
	}
	return out, left, leftPart
}

// SetHold is who takes the requests of an auto shape that carried one set
// of preferences.
type SetHold struct {
	// Set is the set in words (SetWords); Part its part of the shape's
	// requests, scaled as the share weighs them (setsScale).
	Set  string
	Part float64
	// Holder is the candidate that takes them ("" when no listing may).
	Holder string
}

// SetHolders elects each set of preferences of an auto shape (prefs, the
// shape's Input.Preferences) on plain, the shape's ballot, and says who
// takes its requests as the gateway routes them (electPreferred, as the
// projected share does): a provider order, or preferences leaving one
// listing, the first listing tried; otherwise the shape's holder
// (holder) while it may serve them and keeps its lead, else their own
// winner.
func SetHolders(plain election.Ballot, holder string, prefs []PreferencePart) []SetHold {
	var out []SetHold
	var res election.Result
	for _, p := range scaledSets(prefs) {
		b := plain
		carryPreferences(&b, p.Preferences)
		hold := SetHold{Set: SetWords(p.Preferences), Part: p.Part}
		take := func(i int) { hold.Holder = res.Candidates[i].ID }
		electPreferred(&b, &res, holder, func(i int, _ float64, explored bool) {
			if !explored {
				take(i)
			}
		}, take)
		out = append(out, hold)
	}
	return out
}

// scaledSets are the sets of preferences that carried requests, each part
// scaled as the share weighs them (setsScale).
func scaledSets(prefs []PreferencePart) []PreferencePart {
	prefs = slices.DeleteFunc(slices.Clone(prefs), func(p PreferencePart) bool { return p.Part <= 0 || p.Preferences == nil })
	scale, _ := setsScale(prefs)
	for i := range prefs {
		prefs[i].Part *= scale
	}
	return prefs
}

// carryPreferences makes the request of b (a copy of a scenario's ballot:
// the candidates are shared, an election only reads them) carry the set of
// preferences p.
func carryPreferences(b *election.Ballot, p *catalogue.Preferences) {
	provider := p.Provider
	b.Request.Provider, b.Request.Regions = &provider, p.Regions
}

// setsScale is what each set's part is multiplied by, and the part of the
// shape the sets carry: all of it at most, the parts scaled down when they
// add up to more.
func setsScale(prefs []PreferencePart) (scale, carried float64) {
	for _, p := range prefs {
		carried += max(p.Part, 0)
	}
	if carried > 1 {
		return 1 / carried, 1
	}
	return 1, carried
}

// setPlan is a set's plan: the price lever and, where another listing's
// incumbency may keep the set's requests, the margin over it (the fee and
// the discount move the same score; the plain row gives them).
func setPlan(s *election.Solver, f *fare.Fare, incumbency bool) WinPlan {
	w := priceLever(s, f)
	if incumbency {
		displaceLever(&w, s, f)
	}
	if !w.Price.CanWin {
		w.Reason = w.Price.Reason
	}
	return w
}

// SetWords is a set of preferences as a carrier reads it.
func SetWords(p *catalogue.Preferences) string {
	var words []string
	pr := p.Provider
	if pr.ZDR {
		words = append(words, "zero data retention")
	}
	if pr.DenyDataCollection {
		words = append(words, "no training on their data")
	}
	if pr.Quantizations != 0 {
		var names []string
		for _, q := range election.Quantizations() {
			if pr.Quantizations.Has(q) {
				names = append(names, q.String())
			}
		}
		words = append(words, "quantization "+strings.Join(names, " or "))
	}
	if len(p.Regions) > 0 {
		words = append(words, "serving in "+strings.Join(p.Regions, " or "))
	}
	if len(pr.Only) > 0 {
		words = append(words, "only "+strings.Join(pr.Only, ", "))
	}
	if len(pr.Ignore) > 0 {
		words = append(words, "not "+strings.Join(pr.Ignore, ", "))
	}
	if len(pr.Order) > 0 {
		order := "the provider order " + strings.Join(pr.Order, ", ")
		if pr.NoFallbacks {
			order += " (no fallbacks)"
		}
		words = append(words, order)
	}
	if len(words) == 0 {
		return "preferences that change nothing"
	}
	return strings.Join(words, ", ")
}
