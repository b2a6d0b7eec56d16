package preview

import (
	"maps"
	"math"
	"reflect"
	"testing"

	"github.com/airside/airside/internal/catalogue"
	"github.com/airside/airside/internal/election"
	"github.com/airside/airside/internal/traffic"
)

func TestKindsFromDemandSplitsEachShape(t *testing.T) {
	said := func(streaming bool, requires election.Capabilities) catalogue.RequestKind {
		return catalogue.RequestKind{Reported: true, Streaming: streaming, Requires: requires}
	}
	vision := election.CapabilitySet(election.CapVision)
	tools := election.CapabilitySet(election.CapTools)
	cases := []struct {
		name   string
		demand map[string]catalogue.WorkloadDemand
		want   map[string][]Kind
	}{
		{"no demand", nil, map[string][]Kind{}},
		{"a gateway that does not say: every shape its usual kind",
			map[string]catalogue.WorkloadDemand{"general": {Requests: 10, LargeRequests: 4}, "coding": {Requests: 3}}, map[string][]Kind{}},
		{"all of the usual kind, said", map[string]catalogue.WorkloadDemand{"general": {Requests: 5,
			Kinds: []catalogue.KindDemand{{RequestKind: said(false, 0), Requests: 5}}}}, map[string][]Kind{}},
		{"small one-shots of three kinds, the unsaid counted as the usual one; large prompts all usual",
			map[string]catalogue.WorkloadDemand{"general": {Requests: 20, LargeRequests: 4, Kinds: []catalogue.KindDemand{
				{RequestKind: said(false, 0), Requests: 7, LargeRequests: 4},
				{RequestKind: said(false, vision), Requests: 2},
				{RequestKind: said(true, 0), Requests: 6},
			}}},
			map[string][]Kind{"small": {{Streaming: false, Part: 3.0 / 16}, {Requires: vision, Part: 2.0 / 16}, {Streaming: true, Part: 6.0 / 16},
				{Streaming: false, Part: 5.0 / 16}}}},
		{"coding agents that stream with tools: one kind, not the usual one",
			map[string]catalogue.WorkloadDemand{"coding": {Requests: 9, Kinds: []catalogue.KindDemand{{RequestKind: said(true, tools), Requests: 9}}}},
			map[string][]Kind{"coding": {{Streaming: true, Requires: tools, Part: 1}}}},
	}
	for _, c := range cases {
		t.Run(c.name, func(t *testing.T) {
			got := KindsFromDemand(c.demand)
			// The unsaid merge into the usual kind said: compare by kind.
			if len(got) != len(c.want) {
				t.Fatalf("got %+v, want %+v", got, c.want)
			}
			for shape, want := range c.want {
				parts := map[[2]any]float64{}
				for _, k := range want {
					parts[[2]any{k.Streaming, k.Requires}] += k.Part
				}
				gotParts := map[[2]any]float64{}
				for _, k := range got[shape] {
					gotParts[[2]any{k.Streaming, k.Requires}] += k.Part
				}
				if !reflect.DeepEqual(parts, gotParts) {
					t.Errorf("%s: got %+v, want %+v", shape, gotParts, parts)
				}
			}
		})
	}
}

// jsonMarket is market() with one listing, fast, able to answer JSON (the
// flag declared and verified) at a fare scaled to percent of its own.
func jsonMarket(percent int64) Market {
	m := market()
	for i := range m.Listings {
		if l := &m.Listings[i]; l.ID == 4 {
			f := scaled(l.Published, percent)
			f.Capabilities = []election.Capability{election.CapTools, election.CapJSONOutput}
			l.Published = f
		}
	}
	m.Checks[4] = map[string]string{"tools": "verified", "json_output": "verified"}
	return m
}

// TestKindsShareTheShapesIncumbent: small one-shots, a tenth of them
// asking for JSON, which only one listing answers. The JSON requests go to
// it whatever holds the rest; it then holds the plain requests too while
// it stays within the incumbent's margin of their winner (the gateway
// keeps one incumbent a shape, whichever kind made it), and loses them
// again past the margin. The history projects it so, and the preview of
// the same moment says the same.
func TestKindsShareTheShapesIncumbent(t *testing.T) {
	json := election.CapabilitySet(election.CapJSONOutput)
	kinds := map[string][]Kind{"small": {{Part: 0.9}, {Requires: json, Part: 0.1}}}
	small := map[string]float64{"small": 1}
	shape, _ := scenarioByKey("small")
	// The highest fare at which fast is within the margin of the plain
	// requests' winner (inside it, not winning), found as the preview
	// finds such fares; its own fare is past the margin.
	inside := int64(0)
	for percent := int64(100); percent > 0 && inside == 0; percent-- {
		m := jsonMarket(percent)
		b := m.ballotFor(shape, 0)
		if res := election.Elect(&b); traffic.Keeps(&b, &res, 3) {
			inside = percent
		}
	}
	if inside == 0 {
		t.Fatal("no fare puts fast within the margin")
	}
	for _, percent := range []int64{inside, 100} {
		m := jsonMarket(percent)
		plain := m.ballotFor(shape, 0)
		plainRes := election.Elect(&plain)
		if plainRes.Winner < 0 || plainRes.Candidates[plainRes.Winner].ID == "fast/kimi-k2.5" {
			t.Fatalf("the test needs another winner than fast for plain requests: %+v", plainRes)
		}
		fastAt := 3 // fast's index on the ballot (every listing is on it)
		if plain.Candidates[fastAt].ID != "fast/kimi-k2.5" {
			t.Fatalf("ballot order: %+v", plain.Candidates)
		}
		keeps := traffic.Keeps(&plain, &plainRes, fastAt)
		if keeps != (percent == inside) {
			t.Fatalf("at %d %% fast keeps plain requests: %v; the cases need it to at %d %% only", percent, keeps, inside)
		}
		winner := m.Listings[plainRes.Winner].ID
		eligible := 0
		for _, o := range plainRes.Candidates {
			if o.Eligible {
				eligible++
			}
		}
		explore := traffic.ExplorationRate / float64(eligible-1)
		want := map[int64]float64{}
		for _, l := range m.Listings {
			want[l.ID] = 0.9 * explore
		}
		if keeps { // fast holds it all: JSON requests alone, plain ones but the others' exploration
			want[4] = 0.1 + 0.9*(1-traffic.ExplorationRate)
		} else { // each kind its own holder
			want[4], want[winner] = 0.1+0.9*explore, 0.9*(1-traffic.ExplorationRate)
		}
		// Two moments: the first settles the incumbent, the second shows
		// where the shape rests.
		moments := []Moment{{At: at, Fares: faresOf(m), Mix: small, Kinds: kinds}, {At: at, Fares: faresOf(m), Mix: small, Kinds: kinds}}
		holders := map[string]string{}
		got := byID(m, ProjectHistory(m, "kimi-k2.5", moments, holders)[1])
		for id, w := range want {
			if math.Abs(got[id].Total-w) > 1e-9 {
				t.Errorf("fare at %d %%: listing %d projects %.5f, want %.5f", percent, id, got[id].Total, w)
			}
		}
		m.Routing = &RoutingState{Holders: holders}
		for _, l := range m.Listings {
			after := byID(m, ProjectHistory(m, "kimi-k2.5", moments[1:], maps.Clone(holders))[0])
			preview := Build(Input{Market: m, Model: "kimi-k2.5", ListingID: l.ID, At: at, Mix: small, Kinds: kinds}).Share
			if math.Abs(preview.Total-after[l.ID].Total) > 1e-12 || math.Abs(preview.Exploration-after[l.ID].Exploration) > 1e-12 {
				t.Errorf("fare at %d %%: listing %d previews %.5f (%.5f explored), the history %+v", percent, l.ID, preview.Total,
					preview.Exploration, after[l.ID])
			}
		}
	}
}

// scenarioByKey is the standard shape of key.
func scenarioByKey(key string) (Scenario, bool) {
	for _, s := range shapes {
		if s.Key == key {
			s.Routing = election.ModeAuto
			return s, true
		}
	}
	return Scenario{}, false
}

// ballotFor is the shape's auto ballot on the published fares for requests
// requiring requires.
func (m Market) ballotFor(shape Scenario, requires election.Capabilities) election.Ballot {
	req := shape.Request("kimi-k2.5", at)
	req.Requires = requires
	b, _ := m.Ballot(req, Change{})
	return b
}

// TestTheHeadlineIsTheRowsWeighed: the preview's headline share is the sum
// of its rows' weights times their shares, the weights summing to one,
// whatever part of the mix no listing can serve (vision requests here,
// which no listing has verified: they route nowhere and count in no
// share).
func TestTheHeadlineIsTheRowsWeighed(t *testing.T) {
	vision := election.CapabilitySet(election.CapVision)
	for _, test := range []struct {
		name   string
		mix    map[string]float64
		kinds  map[string][]Kind
		weight map[string]float64 // the rows' expected weights
	}{
		{"everything servable", map[string]float64{"small": 50, "large": 50}, nil,
			map[string]float64{"small": 0.5, "large": 0.5}},
		{"a third of small unservable", map[string]float64{"small": 50, "large": 50},
			map[string][]Kind{"small": {{Part: 0.7}, {Requires: vision, Part: 0.3}}},
			map[string]float64{"small": 0.35 / 0.85, "large": 0.5 / 0.85}},
		{"small all unservable", map[string]float64{"small": 40, "coding": 60},
			map[string][]Kind{"small": {{Requires: vision, Part: 1}}},
			map[string]float64{"small": 0, "coding": 1}},
	} {
		t.Run(test.name, func(t *testing.T) {
			m := jsonMarket(100)
			for _, l := range m.Listings {
				share := Build(Input{Market: m, Model: "kimi-k2.5", ListingID: l.ID, At: at, Mix: test.mix, Kinds: test.kinds}).Share
				var sum, weights float64
				for _, row := range share.Mix {
					sum += row.Weight * row.ServedShare
					weights += row.Weight
					if math.Abs(row.Weight-test.weight[row.Key]) > 1e-9 {
						t.Errorf("listing %d: %s weighs %.4f, want %.4f", l.ID, row.Key, row.Weight, test.weight[row.Key])
					}
				}
				if math.Abs(sum-share.Total) > 1e-12 || math.Abs(weights-1) > 1e-12 {
					t.Errorf("listing %d: headline %.6f, the rows weigh to %.6f (weights sum to %.6f)", l.ID, share.Total, sum, weights)
				}
			}
		})
	}
}
