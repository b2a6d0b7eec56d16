package preview

import (
	"fmt"
	"math"
	"slices"
	"strings"
	"testing"

	"github.com/airside/airside/internal/catalogue"
	"github.com/airside/airside/internal/election"
)

// TestWhatItTakesToWinEachSetOfPreferences: the requests of a scenario that
// carried a set of preferences are won on their own ballot, so "what it
// takes to win" says so per set: an order names who serves them whatever
// the prices; a set that leaves the listing out cannot be won by any fare;
// a set that narrows the ballot has a price of its own, one at which the
// listing wins that ballot.
func TestWhatItTakesToWinEachSetOfPreferences(t *testing.T) {
	m := market()
	ours := &m.Listings[0]
	ours.Published.Market.RetentionDays, ours.Published.Market.TrainsOnPrompts = ptr(int64(0)), ptr(false)
	slug := func(i int) string { return m.Listings[i].CarrierSlug }
	zdr := catalogue.Preferences{Provider: election.Provider{ZDR: true}}
	cases := []struct {
		name  string
		prefs catalogue.Preferences
		// holder serves the set's requests; orderDecides: no price moves
		// them; excluded: the listing cannot serve them at all.
		holder       string
		orderDecides bool
		excluded     string
		words        string
	}{
		{"an order naming a rival", catalogue.Preferences{Provider: election.Provider{Order: []string{slug(1)}}}, slug(1), true, "", "the provider order rival"},
		{"an order naming us", catalogue.Preferences{Provider: election.Provider{Order: []string{slug(0), slug(1)}}}, slug(0), true, "", "the provider order ours, rival"},
		{"zero data retention, which only we declare", zdr, slug(0), false, "", "zero data retention"},
		{"a set that leaves us out", catalogue.Preferences{Provider: election.Provider{Ignore: []string{slug(0)}}}, "", false, "preference:ignore", "not ours"},
		{"a region no one serves in", catalogue.Preferences{Regions: []string{"DE"}}, "", false, "region", "serving in DE"},
		{"a narrower ballot", catalogue.Preferences{Provider: election.Provider{Only: []string{slug(0), slug(2)}}}, "", false, "", "only ours, cheap-shaky"},
	}
	for _, c := range cases {
		t.Run(c.name, func(t *testing.T) {
			prefs := map[string][]PreferencePart{"small": {{Preferences: &c.prefs, Part: 0.25}}}
			res := Build(Input{Market: m, Model: "kimi-k2.5", ListingID: 1, At: at, Preferences: prefs})
			var small *ScenarioResult
			for i := range res.Scenarios {
				sc := &res.Scenarios[i]
				if sc.Scenario.Key == "small-auto" {
					small = sc
				} else if len(sc.Sets) > 0 {
					t.Errorf("%s carries sets, though only small requests carried any", sc.Scenario.Key)
				}
			}
			if small == nil || len(small.Sets) != 1 {
				t.Fatalf("the small scenario's sets: %+v", small)
			}
			set := small.Sets[0]
			if set.Part != 0.25 || set.Set != c.words {
				t.Errorf("set %q of part %v, want %q of 0.25", set.Set, set.Part, c.words)
			}
			if set.OrderDecides != c.orderDecides {
				t.Errorf("the order decides: %v, want %v", set.OrderDecides, c.orderDecides)
			}
			switch {
			case c.excluded != "":
				if set.Mine.Eligible || !slices.Contains(set.Mine.Excluded, c.excluded) || set.Win.WinsNow {
					t.Errorf("want excluded for %s: %+v", c.excluded, set.Mine)
				}
			case c.holder != "":
				if set.Holder != c.holder || set.HolderIsMe != (c.holder == slug(0)) || set.Win.WinsNow != set.HolderIsMe {
					t.Errorf("holder %q (mine %v, wins now %v), want %q", set.Holder, set.HolderIsMe, set.Win.WinsNow, c.holder)
				}
			}
			if c.holder == slug(0) && !c.orderDecides && !set.Win.Price.Unbounded {
				t.Errorf("the only listing the set allows wins at any price: %+v", set.Win.Price)
			}
		})
	}

	// The narrower ballot has a price of its own: at it the listing wins
	// that ballot (and at a tenth more it does not). Scores are relative to
	// the ballot, so the plain ballot's price is no answer here: with these
	// fares it does not win the narrower one.
	narrow := catalogue.Preferences{Provider: election.Provider{Only: []string{slug(0), slug(2)}}}
	res := Build(Input{Market: m, Model: "kimi-k2.5", ListingID: 1, At: at,
		Preferences: map[string][]PreferencePart{"small": {{Preferences: &narrow, Part: 0.25}}}})
	small := res.Scenarios[0]
	if small.Scenario.Key != "small-auto" {
		t.Fatalf("first scenario %s", small.Scenario.Key)
	}
	plan := small.Sets[0].Win.Price
	if !plan.CanWin || plan.Unbounded {
		t.Fatalf("the narrower ballot's price: %+v", plan)
	}
	wins := func(multiplier float64) bool {
		f := *m.Listings[0].Published
		in, out, cached := scaledPrices(&f, multiplier)
		f.Input, f.Output, f.CachedInput = in, out, cached
		b, _, me := m.BallotEntries(small.Scenario.Request("kimi-k2.5", at), Change{ListingID: 1, Fare: &f})
		b.Request.Provider = &narrow.Provider
		return election.Elect(&b).Winner == me
	}
	if !wins(plan.Value) || wins(plan.Value*1.1) {
		t.Errorf("at x%.4f the listing should just win the narrower ballot (wins: %v; at x%.4f: %v)", plan.Value, wins(plan.Value), plan.Value*1.1, wins(plan.Value*1.1))
	}
	if plain := small.Win.Price; !plain.CanWin || wins(plain.Value) {
		t.Errorf("the plain ballot's multiplier %+v should not win the narrower one (its own is x%.4f)", plain, plan.Value)
	}

	// Sets that carry more than the shape are scaled to it, as the share is.
	over := map[string][]PreferencePart{"small": {{Preferences: &zdr, Part: 0.9}, {Preferences: &narrow, Part: 0.6}}}
	sets := Build(Input{Market: m, Model: "kimi-k2.5", ListingID: 1, At: at, Preferences: over}).Scenarios[0].Sets
	if len(sets) != 2 || math.Abs(sets[0].Part+sets[1].Part-1) > 1e-9 || math.Abs(sets[0].Part/sets[1].Part-1.5) > 1e-9 {
		t.Errorf("over-full sets: %+v", sets)
	}
	// Past MaxSetProspects sets, the largest are solved and the rest
	// counted.
	var many []PreferencePart
	for i := range MaxSetProspects + 3 {
		many = append(many, PreferencePart{Preferences: &catalogue.Preferences{Regions: []string{fmt.Sprintf("R%d", i)}}, Part: 0.01 * float64(i+1)})
	}
	small = Build(Input{Market: m, Model: "kimi-k2.5", ListingID: 1, At: at, Preferences: map[string][]PreferencePart{"small": many}}).Scenarios[0]
	if len(small.Sets) != MaxSetProspects || small.Sets[0].Part != 0.01*float64(MaxSetProspects+3) || small.SetsLeft != 3 || math.Abs(small.SetsLeftPart-0.06) > 1e-9 {
		t.Errorf("%d sets solved (the first of part %v), %d left carrying %v; want the %d largest and 3 left carrying 0.06",
			len(small.Sets), small.Sets[0].Part, small.SetsLeft, small.SetsLeftPart, MaxSetProspects)
	}
	if w := SetWords(&catalogue.Preferences{}); !strings.Contains(w, "change nothing") {
		t.Errorf("an empty set reads %q", w)
	}
}
