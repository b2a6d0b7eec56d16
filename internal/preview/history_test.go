package preview

import (
	"fmt"
	"maps"
	"math"
	"slices"
	"testing"
	"time"

	"github.com/airside/airside/internal/catalogue"
	"github.com/airside/airside/internal/election"
	"github.com/airside/airside/internal/fare"
	"github.com/airside/airside/internal/traffic"
)

// faresOf are the market's published fares, by listing.
func faresOf(m Market) map[int64]*fare.Fare {
	out := map[int64]*fare.Fare{}
	for _, l := range m.Listings {
		out[l.ID] = l.Published
	}
	return out
}

// scaled is f with its token prices at percent of filed.
func scaled(f *fare.Fare, percent int64) *fare.Fare {
	g := *f
	g.Input, g.Output = f.Input.Scale(percent, 100), f.Output.Scale(percent, 100)
	if f.CachedInput != nil {
		g.CachedInput = ptr(f.CachedInput.Scale(percent, 100))
	}
	return &g
}

// byID keys one moment's shares by listing id.
func byID(m Market, shares []Share) map[int64]Share {
	out := map[int64]Share{}
	for i, l := range m.Listings {
		out[l.ID] = shares[i]
	}
	return out
}

// TestOneMomentProjectsWhatThePreviewDoes: a single moment's projection is
// the preview's share for every listing and mix (one rule set, one home).
func TestOneMomentProjectsWhatThePreviewDoes(t *testing.T) {
	m := market()
	for _, mix := range []map[string]float64{nil, {"small": 5, "large": 1, "coding": 3, "chat": 1}, {"coding": 1}} {
		got := byID(m, ProjectHistory(m, "kimi-k2.5", []Moment{{At: at, Fares: faresOf(m), Mix: mix}}, nil)[0])
		sum := 0.0
		for _, l := range m.Listings {
			want := Build(Input{Market: m, Model: "kimi-k2.5", ListingID: l.ID, At: at, Mix: mix}).Share
			if math.Abs(got[l.ID].Total-want.Total) > 1e-12 || math.Abs(got[l.ID].Exploration-want.Exploration) > 1e-12 {
				t.Errorf("mix %v, %s: history projects %+v, the preview %v / %v", mix, l.CarrierSlug, got[l.ID], want.Total, want.Exploration)
			}
			sum += got[l.ID].Total
		}
		if math.Abs(sum-1) > 1e-9 {
			t.Errorf("mix %v: the listings' shares add up to %v, want 1", mix, sum)
		}
	}
	// With sets of preferences carried by part of the requests, the
	// preview's headline and each of its rows weigh them as the moment
	// elects them: one rule for the fare form and the traffic pages.
	slugs := func(ids ...int) []string {
		var out []string
		for _, i := range ids {
			out = append(out, m.Listings[i].CarrierSlug)
		}
		return out
	}
	for _, prefs := range []map[string][]PreferencePart{
		{"small": {{Preferences: &catalogue.Preferences{Provider: election.Provider{Order: slugs(2)}}, Part: 0.2}}},
		{"small": {{Preferences: &catalogue.Preferences{Provider: election.Provider{Ignore: slugs(0, 1)}}, Part: 0.3}},
			"coding": {{Preferences: &catalogue.Preferences{Provider: election.Provider{ZDR: true}}, Part: 0.5},
				{Preferences: &catalogue.Preferences{Provider: election.Provider{Only: slugs(1, 2)}}, Part: 0.25}}},
	} {
		mix := map[string]float64{"small": 5, "large": 1, "coding": 3, "chat": 1}
		got := byID(m, ProjectHistory(m, "kimi-k2.5", []Moment{{At: at, Fares: faresOf(m), Mix: mix, Preferences: prefs}}, nil)[0])
		for _, l := range m.Listings {
			want := Build(Input{Market: m, Model: "kimi-k2.5", ListingID: l.ID, At: at, Mix: mix, Preferences: prefs}).Share
			if math.Abs(got[l.ID].Total-want.Total) > 1e-12 || math.Abs(got[l.ID].Exploration-want.Exploration) > 1e-12 {
				t.Errorf("preferences %v, %s: history projects %+v, the preview %v / %v", prefs, l.CarrierSlug, got[l.ID], want.Total, want.Exploration)
			}
			rows := 0.0
			for _, row := range want.Mix {
				rows += row.Weight * row.ServedShare
			}
			if math.Abs(rows-want.Total) > 1e-12 {
				t.Errorf("preferences %v, %s: the rows weigh to %v, the headline %v", prefs, l.CarrierSlug, rows, want.Total)
			}
		}
	}
}

// TestThePreviewElectsEachProjectAsTheMomentDoes: with routing's rates
// learned apart for API projects, the preview's headline (the fare form's
// and "wins now"'s share looking forward) is the share a moment with the
// same parts projects, for every listing, alone and beside sets of
// preferences and kinds of request; and it differs from the model's rates
// alone, so the parts are what moved it.
func TestThePreviewElectsEachProjectAsTheMomentDoes(t *testing.T) {
	m := market()
	hits, none := cachingRates(m)
	mix := map[string]float64{"small": 2, "large": 5, "coding": 2, "chat": 1}
	projects := map[string][]ProjectPart{"large": {{Part: 0.3, Learned: none}}, "coding": {{Part: 0.5, Learned: none}, {Part: 0.2, Learned: hits}}}
	cases := []struct {
		name  string
		prefs map[string][]PreferencePart
		kinds map[string][]Kind
	}{
		{name: "projects alone"},
		{name: "beside a set of preferences", prefs: map[string][]PreferencePart{
			"large": {{Preferences: &catalogue.Preferences{Provider: election.Provider{Ignore: []string{m.Listings[3].CarrierSlug}}}, Part: 0.2}}}},
		{name: "beside kinds", kinds: map[string][]Kind{"large": {{Part: 0.6}, {Streaming: true, Part: 0.4}}}},
	}
	for _, c := range cases {
		t.Run(c.name, func(t *testing.T) {
			moment := Moment{At: at, Fares: faresOf(m), Mix: mix, Learned: hits, Preferences: c.prefs, Kinds: c.kinds, Projects: projects}
			got := byID(m, ProjectHistory(m, "kimi-k2.5", []Moment{moment}, nil)[0])
			plain := moment
			plain.Projects = nil
			modelOnly := byID(m, ProjectHistory(m, "kimi-k2.5", []Moment{plain}, nil)[0])
			moved := false
			for _, l := range m.Listings {
				routed := m
				routed.Routing = &RoutingState{Learned: hits, Projects: projects}
				want := Build(Input{Market: routed, Model: "kimi-k2.5", ListingID: l.ID, At: at, Mix: mix, Preferences: c.prefs, Kinds: c.kinds}).Share
				if math.Abs(got[l.ID].Total-want.Total) > 1e-12 || math.Abs(got[l.ID].Exploration-want.Exploration) > 1e-12 {
					t.Errorf("%s: the moment projects %+v, the preview %v / %v", l.CarrierSlug, got[l.ID], want.Total, want.Exploration)
				}
				rows := 0.0
				for _, row := range want.Mix {
					rows += row.Weight * row.ServedShare
				}
				if math.Abs(rows-want.Total) > 1e-12 {
					t.Errorf("%s: the rows weigh to %v, the headline %v", l.CarrierSlug, rows, want.Total)
				}
				moved = moved || math.Abs(got[l.ID].Total-modelOnly[l.ID].Total) > 0.05
			}
			if !moved {
				t.Errorf("every listing projects as on the model's rates alone (%v): the test's projects change nothing", modelOnly)
			}
		})
	}
}

// TestAMomentOnTheSharePolicyProjectsItsShares: the requests of projects
// on the share policy are spread by share, as the preview's "for projects
// on the share policy" reads each listing's standing; a moment half on
// each policy projects each listing half of each (one rule set, one home).
func TestAMomentOnTheSharePolicyProjectsItsShares(t *testing.T) {
	m := market()
	for _, mix := range []map[string]float64{nil, {"small": 5, "large": 1, "coding": 3, "chat": 1}} {
		elected := byID(m, ProjectHistory(m, "kimi-k2.5", []Moment{{At: at, Fares: faresOf(m), Mix: mix}}, nil)[0])
		shared := byID(m, ProjectHistory(m, "kimi-k2.5", []Moment{{At: at, Fares: faresOf(m), Mix: mix, ShareParts: allShapes(1)}}, nil)[0])
		half := byID(m, ProjectHistory(m, "kimi-k2.5", []Moment{{At: at, Fares: faresOf(m), Mix: mix, ShareParts: allShapes(0.5)}}, nil)[0])
		spread, sum := 0, 0.0
		for _, l := range m.Listings {
			want := SharePolicyNow(m, "kimi-k2.5", l.ID, at, mix).Total
			if got := shared[l.ID]; math.Abs(got.Total-want) > 1e-9 || got.Exploration != 0 {
				t.Errorf("mix %v, %s: all on the share policy projects %+v, the preview's share-policy standing %v", mix, l.CarrierSlug, got, want)
			}
			if want := (elected[l.ID].Total + shared[l.ID].Total) / 2; math.Abs(half[l.ID].Total-want) > 1e-9 {
				t.Errorf("mix %v, %s: half on each policy projects %v, want %v", mix, l.CarrierSlug, half[l.ID].Total, want)
			}
			if shared[l.ID].Total > 0.01 {
				spread++
			}
			sum += shared[l.ID].Total
		}
		if spread < 2 || math.Abs(sum-1) > 1e-9 {
			t.Errorf("mix %v: the share policy gives %d listings a share, adding up to %v: want it spread, adding up to 1", mix, spread, sum)
		}
		// The 429s the gateway counted of a listing's tries raise its
		// adjusted price, as the gateway's own count does: its share falls.
		var top int64
		for id, sh := range shared {
			if top == 0 || sh.Total > shared[top].Total {
				top = id
			}
		}
		limited := 0.2
		tried := byID(m, ProjectHistory(m, "kimi-k2.5", []Moment{{At: at, Fares: faresOf(m), Mix: mix, ShareParts: allShapes(1),
			Tried: map[int64]TriedRates{top: {RateLimited: &limited}}}}, nil)[0])
		if tried[top].Total >= shared[top].Total-0.01 {
			t.Errorf("mix %v: listing %d answering 20 %% of its tries 429 projects %v under the share policy, %v without", mix, top, tried[top].Total, shared[top].Total)
		}
	}
}

// allShapes gives every shape the same part.
func allShapes(part float64) map[string]float64 {
	out := map[string]float64{}
	for _, s := range shapes {
		out[s.Key] = part
	}
	return out
}

// reportedSmall is routing's report of the small one-shot shape's holder:
// listing id's candidate.
func reportedSmall(m Market, id int64) map[traffic.Shape]string {
	for i := range m.Listings {
		if m.Listings[i].ID == id {
			return map[traffic.Shape]string{{Model: "kimi-k2.5", Mode: election.ModeAuto, Workload: election.WorkloadGeneral}: CandidateID(&m.Listings[i])}
		}
	}
	panic(fmt.Sprintf("no listing %d", id))
}

// TestHistoryCarriesTheHolder: the holder of each shape carries from one
// moment to the next as the gateway's stable preference keeps it.
func TestHistoryCarriesTheHolder(t *testing.T) {
	m := market()
	small := map[string]float64{"small": 1}
	first := byID(m, ProjectHistory(m, "kimi-k2.5", []Moment{{At: at, Fares: faresOf(m), Mix: small}}, nil)[0])
	var holder int64
	for id, s := range first {
		if s.Total > 0.5 {
			holder = id
		}
	}
	if holder == 0 || holder == 1 {
		t.Fatalf("the test needs another listing than ours to hold the small shape first: %+v", first)
	}
	// The cut that makes ours barely best (within the margin) and one far
	// past it, found as the preview finds them.
	barely := int64(0)
	for percent := int64(100); percent > 0; percent-- {
		f := scaled(m.Listings[0].Published, percent)
		if Build(Input{Market: m, Model: "kimi-k2.5", ListingID: 1, At: at, Fare: f}).Scenarios[0].Mine.Rank == 1 {
			barely = percent
			break
		}
	}
	if barely == 0 {
		t.Fatal("no cut makes ours best")
	}
	with := func(percent int64) map[int64]*fare.Fare {
		fs := faresOf(m)
		fs[1] = scaled(fs[1], percent)
		return fs
	}
	offBallot := faresOf(m)
	delete(offBallot, holder)
	sick := map[int64]catalogue.Health{holder: {UptimePct: ptr(80.0)}}
	cases := []struct {
		name    string
		moments []Moment
		// want is the listing holding the small shape at the last moment.
		want int64
	}{
		{"a fare barely best stays behind the incumbent", []Moment{{At: at, Fares: faresOf(m)}, {At: at, Fares: with(barely)}}, holder},
		{"a fare barely best with no incumbent before it holds", []Moment{{At: at, Fares: with(barely)}}, 1},
		{"a fare far past the margin takes the shape", []Moment{{At: at, Fares: faresOf(m)}, {At: at, Fares: with(1)}}, 1},
		{"an incumbent under the uptime line loses it", []Moment{{At: at, Fares: faresOf(m)}, {At: at, Fares: with(barely), Health: sick}}, 1},
		// Routing reported the old holder holding the shape (another kind of
		// request opened it): the moment starts from that, not from the
		// replay, which with no incumbent gives the shape to ours.
		{"a reported holder within the margin keeps the shape", []Moment{{At: at, Fares: with(barely), Holders: reportedSmall(m, holder)}}, holder},
		{"a reported holder past the margin loses it", []Moment{{At: at, Fares: faresOf(m)}, {At: at, Fares: with(1), Holders: reportedSmall(m, holder)}}, 1},
		{"a holder reported for another shape changes nothing", []Moment{{At: at, Fares: with(barely), Holders: map[traffic.Shape]string{
			{Model: "kimi-k2.5", Mode: election.ModeAuto, Workload: election.WorkloadGeneral, CacheRelevant: true}: "nebula/kimi-k2.5"}}}, 1},
	}
	for _, c := range cases {
		t.Run(c.name, func(t *testing.T) {
			for i := range c.moments {
				c.moments[i].Mix = small
			}
			got := ProjectHistory(m, "kimi-k2.5", c.moments, nil)
			last := byID(m, got[len(got)-1])
			if s := last[c.want]; math.Abs(s.Total-(1-traffic.ExplorationRate)) > 1e-12 || s.Exploration != 0 {
				t.Errorf("listing %d projects %+v at the last moment, want it holding the shape: %+v", c.want, s, last)
			}
		})
	}
	t.Run("a projection continued from its holders equals one run", func(t *testing.T) {
		moments := []Moment{{At: at, Fares: faresOf(m), Mix: small}, {At: at, Fares: with(barely), Mix: small}}
		whole := ProjectHistory(m, "kimi-k2.5", moments, nil)
		holders := map[string]string{}
		parts := append(ProjectHistory(m, "kimi-k2.5", moments[:1], holders), ProjectHistory(m, "kimi-k2.5", moments[1:], holders)...)
		for i := range whole {
			if !slices.EqualFunc(whole[i], parts[i], func(a, b Share) bool { return a.Total == b.Total && a.Exploration == b.Exploration }) {
				t.Errorf("moment %d: one run %+v, continued %+v", i, whole[i], parts[i])
			}
		}
		if byID(m, parts[1])[holder].Total < 0.5 {
			t.Errorf("the continued projection lost the incumbent: %+v", byID(m, parts[1]))
		}
	})
	// The gateway's limits hold the holder back for a moment (a 429
	// backoff, the breaker): it serves nothing then, and holds the shape
	// again after it, even against a fare that won the moment within the
	// margin (the gateway keeps an incumbent its limits hold back).
	t.Run("a holder the limits hold back keeps the shape for after", func(t *testing.T) {
		got := ProjectHistory(m, "kimi-k2.5", []Moment{{At: at, Fares: faresOf(m), Mix: small},
			{At: at, Fares: with(barely), Mix: small, HeldBack: []int64{holder}}, {At: at, Fares: with(barely), Mix: small}}, nil)
		held, after := byID(m, got[1]), byID(m, got[2])
		if held[holder].Total != 0 || math.Abs(held[1].Total-(1-traffic.ExplorationRate)) > 1e-12 {
			t.Errorf("held back: the holder projects %+v and ours %+v, want nothing and the shape", held[holder], held[1])
		}
		if math.Abs(after[holder].Total-(1-traffic.ExplorationRate)) > 1e-12 {
			t.Errorf("after its backoff the holder projects %+v, want the shape back", after[holder])
		}
	})
	t.Run("a listing without a fare is off the ballot", func(t *testing.T) {
		got := byID(m, ProjectHistory(m, "kimi-k2.5", []Moment{{At: at, Fares: offBallot, Mix: small}}, nil)[0])
		if s, ok := got[holder]; ok && s.Total != 0 {
			t.Errorf("a listing with no fare in force projects %+v", s)
		}
		sum := 0.0
		for _, s := range got {
			sum += s.Total
		}
		if math.Abs(sum-1) > 1e-9 {
			t.Errorf("the others' shares add up to %v, want 1", sum)
		}
	})
}

func TestWeighedShare(t *testing.T) {
	got, ok := WeighedShare([]Share{{Total: 1, Exploration: 0}, {Total: 0.01, Exploration: 0.01}, {Total: 0.5}}, []int64{300, 100, 0})
	if !ok || math.Abs(got.Total-(300+1)/400.0) > 1e-12 || math.Abs(got.Exploration-1/400.0) > 1e-12 {
		t.Errorf("weighed share %+v (ok %v), want 301/400 with 1/400 explored", got, ok)
	}
	if _, ok := WeighedShare([]Share{{Total: 1}}, []int64{0}); ok {
		t.Error("a projection over hours without requests claims a share")
	}
}

// BenchmarkProjectHistory: the projection a traffic page makes of a month
// of hours (the day view's 30 days) for a model of 4 and of 20 listings.
func BenchmarkProjectHistory(b *testing.B) {
	for _, n := range []int{4, 20} {
		m := market()
		for len(m.Listings) < n {
			l := m.Listings[len(m.Listings)%4]
			l.ID, l.CarrierSlug = int64(len(m.Listings)+1), fmt.Sprintf("c%d", len(m.Listings))
			m.Listings = append(m.Listings, l)
		}
		// The small shape in the driver's six kinds (streamed or not; plain,
		// JSON or an image), as the reference gateway reports them.
		json, vision := election.CapabilitySet(election.CapJSONOutput), election.CapabilitySet(election.CapVision)
		kinds := map[string][]Kind{"small": {{Part: 0.3}, {Streaming: true, Part: 0.3}, {Requires: json, Part: 0.12},
			{Streaming: true, Requires: json, Part: 0.12}, {Requires: vision, Part: 0.08}, {Streaming: true, Requires: vision, Part: 0.08}}}
		for _, withKinds := range []bool{false, true} {
			moments := make([]Moment, 720)
			for i := range moments {
				moments[i] = Moment{At: at.Add(time.Duration(i) * time.Hour), Fares: faresOf(m), Mix: map[string]float64{"small": 5, "coding": 3, "large": 1}}
				if withKinds {
					moments[i].Kinds = kinds
				}
			}
			b.Run(fmt.Sprintf("listings=%d/kinds=%v", n, withKinds), func(b *testing.B) {
				for b.Loop() {
					ProjectHistory(m, "kimi-k2.5", moments, nil)
				}
			})
		}
	}
}

// TestAMomentsPreferencesAreElectedAsTheGatewayRoutesThem: the part of a
// shape's requests that carried a set of preferences is elected on a
// ballot of its own, as the gateway routes it (election.md sec. 7): an
// order or a single listing left takes it all, a narrowed ballot goes to
// its own winner (here, with no incumbent yet) and leaves the shape's
// holder as it was, and a set no listing can serve is left out of the
// shares, as routing's figures leave the gateway's 404s out.
func TestAMomentsPreferencesAreElectedAsTheGatewayRoutesThem(t *testing.T) {
	m := market()
	small := map[string]float64{"small": 1}
	const part = 0.3
	project := func(p catalogue.Preferences) (map[int64]Share, map[string]string) {
		holders := map[string]string{}
		shares := ProjectHistory(m, "kimi-k2.5", []Moment{{At: at, Fares: faresOf(m), Mix: small,
			Preferences: map[string][]PreferencePart{"small": {{Preferences: &p, Part: part}}}}}, holders)
		return byID(m, shares[0]), holders
	}
	elected := map[string]string{}
	plain := byID(m, ProjectHistory(m, "kimi-k2.5", []Moment{{At: at, Fares: faresOf(m), Mix: small}}, elected)[0])
	winner := int64(0)
	for id, sh := range plain {
		if winner == 0 || sh.Total > plain[winner].Total {
			winner = id
		}
	}
	slug := func(id int64) string { return m.Listings[id-1].CarrierSlug }
	loser := int64(0) // the listing the election gives least
	for id, sh := range plain {
		if id != winner && (loser == 0 || sh.Total < plain[loser].Total) {
			loser = id
		}
	}
	for _, c := range []struct {
		name  string
		prefs catalogue.Preferences
		taker int64 // the listing that takes the whole part (0: none)
	}{
		{"an order", catalogue.Preferences{Provider: election.Provider{Order: []string{slug(loser)}}}, loser},
		{"only one listing", catalogue.Preferences{Provider: election.Provider{Only: []string{slug(loser)}}}, loser},
		{"zero data retention, which no listing here declares", catalogue.Preferences{Provider: election.Provider{ZDR: true}}, 0},
	} {
		got, holders := project(c.prefs)
		sum := 0.0
		for id, sh := range got {
			want := (1 - part) * plain[id].Total
			if id == c.taker {
				want += part
			}
			if c.taker == 0 {
				want = plain[id].Total // the part no one serves is left out
			}
			if math.Abs(sh.Total-want) > 1e-9 {
				t.Errorf("%s: %s projects %v, want %v", c.name, slug(id), sh.Total, want)
			}
			sum += sh.Total
		}
		if math.Abs(sum-1) > 1e-9 || !maps.Equal(holders, elected) {
			t.Errorf("%s: shares add up to %v, holders after %v (without preferences %v)", c.name, sum, holders, elected)
		}
	}
	// Ignoring the winner narrows the ballot: the part goes to the best of
	// the rest (exploration apart), and the winner keeps the shape.
	got, holders := project(catalogue.Preferences{Provider: election.Provider{Ignore: []string{slug(winner)}}})
	if math.Abs(got[winner].Total-(1-part)*plain[winner].Total) > 1e-9 {
		t.Errorf("ignoring %s: it projects %v, want none of the part (%v)", slug(winner), got[winner].Total, (1-part)*plain[winner].Total)
	}
	gained := 0.0
	for id, sh := range got {
		if id != winner {
			gained += sh.Total - (1-part)*plain[id].Total
		}
	}
	if math.Abs(gained-part) > 1e-9 || !maps.Equal(holders, elected) {
		t.Errorf("ignoring %s: the others gained %v of the part %v; holders %v, want %v", slug(winner), gained, part, holders, elected)
	}
}

// TestEachProjectElectsOnTheRatesLearnedOfIt: the gateway learns cache-hit
// rates per API project, so a project whose long prompts hit the caches
// and one whose prompts never do are elected on different rates and go to
// different listings; a moment whose large prompts come from both elects
// each project's part on its own rates, under the shape's one incumbent.
func TestEachProjectElectsOnTheRatesLearnedOfIt(t *testing.T) {
	m := market()
	hits, none := cachingRates(m)
	mix := map[string]float64{"large": 1}
	winner := func(shares []Share) (int, float64) {
		best := 0
		for i := range shares {
			if shares[i].Total > shares[best].Total {
				best = i
			}
		}
		return best, shares[best].Total
	}
	alone := func(l traffic.Learned) []Share {
		return ProjectHistory(m, "kimi-k2.5", []Moment{{At: at, Fares: faresOf(m), Mix: mix, Learned: l}}, nil)[0]
	}
	cached, _ := winner(alone(hits))
	plain, _ := winner(alone(none))
	if cached == plain {
		t.Fatalf("the market elects %s for large prompts whatever the hit rate: the test needs two winners", m.Listings[cached].CarrierSlug)
	}
	cases := []struct {
		name     string
		model    traffic.Learned
		projects []ProjectPart
		// want is each winner's share: the cached one's, the plain one's.
		want [2]float64
	}{
		{"one project, rates of its own", none, []ProjectPart{{Part: 1, Learned: hits}}, [2]float64{1, 0}},
		{"two projects", hits, []ProjectPart{{Part: 0.6, Learned: hits}, {Part: 0.4, Learned: none}}, [2]float64{0.6, 0.4}},
		{"a named project and the rest on the model's rates", hits, []ProjectPart{{Part: 0.25, Learned: none}}, [2]float64{0.75, 0.25}},
		{"no project named", none, nil, [2]float64{0, 1}},
	}
	for _, c := range cases {
		t.Run(c.name, func(t *testing.T) {
			moment := Moment{At: at, Fares: faresOf(m), Mix: mix, Learned: c.model}
			if c.projects != nil {
				moment.Projects = map[string][]ProjectPart{"large": c.projects}
			}
			shares := ProjectHistory(m, "kimi-k2.5", []Moment{moment}, nil)[0]
			sum := 0.0
			for i, s := range shares {
				sum += s.Total
				if i != cached && i != plain && s.Total > traffic.ExplorationRate {
					t.Errorf("%s took %.4f: only exploration goes elsewhere", m.Listings[i].CarrierSlug, s.Total)
				}
			}
			for i, id := range []int{cached, plain} {
				if got := shares[id].Total; math.Abs(got-c.want[i]) > 1.5*traffic.ExplorationRate {
					t.Errorf("%s took %.4f, want %.2f (less exploration)", m.Listings[id].CarrierSlug, got, c.want[i])
				}
			}
			if math.Abs(sum-1) > 1e-9 {
				t.Errorf("the shares add up to %v", sum)
			}
		})
	}
}

// cachingRates are two sets of rates routing may learn of m's requests:
// hits, nine tenths of every cached listing's input cached, and none,
// nothing cached anywhere.
func cachingRates(m Market) (hits, none traffic.Learned) {
	rate := func(r float64) *float64 { return &r }
	hits = traffic.Learned{HitRate: map[string]float64{}, Combined: rate(0.9), OutputRatio: rate(0.05)}
	none = traffic.Learned{HitRate: map[string]float64{}, Combined: rate(0), OutputRatio: rate(0.05)}
	for i := range m.Listings {
		if m.Listings[i].Published.CachedInput != nil {
			hits.HitRate[CandidateID(&m.Listings[i])] = 0.9
			none.HitRate[CandidateID(&m.Listings[i])] = 0
		}
	}
	return hits, none
}

// projectsMarket is market() with routing's rates learned: the model's
// (hits, nine tenths of every cached listing's input cached) and, for 30 %
// of the large prompts, a project's that caches nothing (none); cached and
// plain are the large prompt's winners on each.
func projectsMarket(t *testing.T) (m Market, cached, plain *catalogue.Listing) {
	t.Helper()
	m = market()
	hits, none := cachingRates(m)
	m.Routing = &RoutingState{Learned: hits, Projects: map[string][]ProjectPart{"large": {{Part: 0.3, Learned: none}}}}
	winnerOn := func(l traffic.Learned) *catalogue.Listing {
		own := m
		own.Routing = &RoutingState{Learned: l}
		b, _ := own.Ballot(Scenario{PromptTokens: 20000, Workload: election.WorkloadGeneral, Routing: election.ModeAuto}.Request("kimi-k2.5", at), Change{})
		res := election.Elect(&b)
		if res.Winner < 0 {
			t.Fatal("no winner")
		}
		for i := range m.Listings {
			if CandidateID(&m.Listings[i]) == res.Candidates[res.Winner].ID {
				return &m.Listings[i]
			}
		}
		t.Fatal("the winner is no listing")
		return nil
	}
	cached, plain = winnerOn(hits), winnerOn(none)
	if cached.ID == plain.ID {
		t.Fatalf("%s wins large prompts whatever the rates: the test needs two winners", cached.CarrierSlug)
	}
	return m, cached, plain
}

// TestTheImpactStandsEachProjectOnItsOwnRates: the reviewer's impact
// panel has, under a large-prompt row elected on the model's rates, a row
// for the part from projects routing learned other rates of, elected on
// those: the listing the model's rates put second leads there.
func TestTheImpactStandsEachProjectOnItsOwnRates(t *testing.T) {
	m, cached, plain := projectsMarket(t)
	change := Change{ListingID: plain.ID, Fare: scaled(plain.Published, 95)}
	for _, imp := range Impact(m, "kimi-k2.5", change, at, nil) {
		large := imp.Scenario.Key == "large-auto"
		if !large {
			if len(imp.Projects) != 0 {
				t.Errorf("%s has project rows %+v: only large prompts came from the project", imp.Scenario.Key, imp.Projects)
			}
			continue
		}
		if imp.Before.Winner != CandidateID(cached) {
			t.Errorf("on the model's rates %s won large prompts, want %s", imp.Before.Winner, cached.CarrierSlug)
		}
		if len(imp.Projects) != 1 {
			t.Fatalf("large prompts have %d project rows, want 1", len(imp.Projects))
		}
		p := imp.Projects[0]
		if p.Part != 0.3 || p.Before.Winner != CandidateID(plain) || p.Before.Rank != 1 || p.After.Rank != 1 || p.After.Winner != p.Before.Winner {
			t.Errorf("the project's row %+v: want 30 %% won by %s before and after its cut", p, plain.CarrierSlug)
		}
		if imp.Before.Rank == 1 {
			t.Errorf("on the model's rates %s ranks first: the test's rates change nothing", plain.CarrierSlug)
		}
	}
}

// TestThePreviewSaysWhatItTakesToWinEachProjectsPart: on the fare form,
// the large prompts' row is lost on the model's rates while the part from
// the project that caches nothing is won on its own, under no incumbent;
// with an incumbent that keeps it within the margin, that part is held.
func TestThePreviewSaysWhatItTakesToWinEachProjectsPart(t *testing.T) {
	m, cached, plain := projectsMarket(t)
	large := func(res Result) ScenarioResult {
		for _, sc := range res.Scenarios {
			if sc.Scenario.Key == "large-auto" {
				return sc
			}
		}
		t.Fatal("no large-auto scenario")
		return ScenarioResult{}
	}
	sc := large(Build(Input{Market: m, Model: "kimi-k2.5", ListingID: plain.ID, At: at}))
	if sc.HolderIsMe || len(sc.Projects) != 1 {
		t.Fatalf("large prompts: holder is me %v, %d project parts; want lost on the model's rates and one part", sc.HolderIsMe, len(sc.Projects))
	}
	p := sc.Projects[0]
	if p.Part != 0.3 || !p.HolderIsMe || !p.Win.WinsNow || p.Winner != plain.CarrierName || p.Mine.Rank != 1 {
		t.Errorf("the project's part %+v: want 30 %% won by %s", p, plain.CarrierSlug)
	}
	for _, other := range []string{"small-auto", "large-price"} {
		for _, s := range Build(Input{Market: m, Model: "kimi-k2.5", ListingID: plain.ID, At: at}).Scenarios {
			if s.Scenario.Key == other && len(s.Projects) != 0 {
				t.Errorf("%s has project parts %+v: only large prompts' auto requests came from the project", other, s.Projects)
			}
		}
	}
	// With the cached listing holding the shape, the project's own winner
	// takes its part only by leading it by more than the margin.
	m.Routing.Holders = map[string]string{"large": CandidateID(cached)}
	p = large(Build(Input{Market: m, Model: "kimi-k2.5", ListingID: plain.ID, At: at})).Projects[0]
	b, me := func() (election.Ballot, int) {
		own := m
		routing := *m.Routing
		routing.Learned = m.Routing.Projects["large"][0].Learned
		own.Routing = &routing
		return own.Ballot(Scenario{PromptTokens: 20000, Workload: election.WorkloadGeneral, Routing: election.ModeAuto}.Request("kimi-k2.5", at), Change{ListingID: plain.ID})
	}()
	res := election.Elect(&b)
	_, kept := traffic.Holder(&b, &res, CandidateID(cached))
	if kept == p.HolderIsMe || me < 0 {
		t.Errorf("the incumbent keeps the project's part: %v; the preview says the listing holds it: %v (%s)", kept, p.HolderIsMe, p.HolderNote)
	}
}
