package preview

import (
	"math"
	"testing"

	"github.com/airside/airside/internal/election"
)

// TestTheShareStandingExplainsItself: under the share policy a listing's
// adjusted price is its parts' sum, shares add up over the ballot, and the
// price cut the preview names brings a listing outside the edge back to it.
func TestTheShareStandingExplainsItself(t *testing.T) {
	m := market()
	for _, id := range []int64{1, 3} {
		res := Build(Input{Market: m, Model: "kimi-k2.5", ListingID: id, At: at})
		for _, s := range res.Scenarios {
			st := s.UnderShare
			if s.Scenario.Routing != election.ModeAuto || !st.OnBallot {
				continue
			}
			p, e, mal, ttft, q := st.Outcome.AdjustedParts(st.RoutingPrice)
			if sum := p + e + mal + ttft + q; math.Abs(sum-st.Outcome.AdjustedPrice) > 1e-9*st.Outcome.AdjustedPrice {
				t.Errorf("listing %d, %s: parts %v+%v+%v+%v+%v = %v, adjusted %v", id, s.Scenario.Key, p, e, mal, ttft, q, sum, st.Outcome.AdjustedPrice)
			}
			if e <= 0 {
				t.Errorf("listing %d, %s: its uptime under 100 %% adds nothing (%v)", id, s.Scenario.Key, st.Outcome)
			}
			if st.Inside() != (st.CheaperBy == 0) {
				t.Errorf("listing %d, %s: inside %v but cheaper by %v", id, s.Scenario.Key, st.Inside(), st.CheaperBy)
			}
			if st.Inside() {
				continue
			}
			// The named cut, applied to every price, lands on the edge.
			cut := *m.Listings[id-1].Published
			cut.Input, cut.Output, cut.CachedInput = scaledPrices(&cut, 1-st.CheaperBy)
			again := shareStanding(Input{Market: m, Model: "kimi-k2.5", ListingID: id, At: at}, s.Scenario, Change{ListingID: id, Fare: &cut})
			if math.Abs(again.Outcome.Distance-election.ShareEdge) > 0.01 {
				t.Errorf("listing %d, %s: %.1f %% cheaper puts it at distance %.3f, want the edge %.2f", id, s.Scenario.Key, 100*st.CheaperBy,
					again.Outcome.Distance, election.ShareEdge)
			}
		}
	}
	// The shaky, slow listing is outside the edge somewhere, and told how far.
	res := Build(Input{Market: m, Model: "kimi-k2.5", ListingID: 3, At: at})
	outside := false
	for _, s := range res.Scenarios {
		outside = outside || s.UnderShare.OnBallot && !s.UnderShare.Inside() && s.UnderShare.FasterBy > 0
	}
	if !outside {
		t.Error("the 92 % uptime, 40 tok/s listing is inside the edge in every scenario")
	}
}

// TestTheSharePolicyNowIsThePreviewsForThePublishedFare: the share-policy
// standing the traffic page shows is, scenario by scenario, the preview's
// for the fare as published, and its total is the scenarios' shares
// weighed by the mix given (evenly without one).
func TestTheSharePolicyNowIsThePreviewsForThePublishedFare(t *testing.T) {
	m := market()
	for _, tc := range []struct {
		name string
		mix  map[string]float64
	}{
		{"even", nil},
		{"small prompts only", map[string]float64{"small": 5}},
		{"coding and chat", map[string]float64{"coding": 3, "chat": 1, "small": 0}},
	} {
		t.Run(tc.name, func(t *testing.T) {
			for id := int64(1); id <= 4; id++ {
				got := SharePolicyNow(m, "kimi-k2.5", id, at, tc.mix)
				res := Build(Input{Market: m, Model: "kimi-k2.5", ListingID: id, At: at})
				byKey := map[string]ShareStanding{}
				for _, s := range res.Scenarios {
					byKey[s.Scenario.Key] = s.UnderShare
				}
				var weighed, weights float64
				for _, s := range got.Scenarios {
					want := byKey[s.Scenario.Key]
					if s.Standing.OnBallot != want.OnBallot || s.Standing.Outcome.Share != want.Outcome.Share {
						t.Errorf("listing %d, %s: share %v (on ballot %v), the preview's %v (%v)", id, s.Scenario.Key,
							s.Standing.Outcome.Share, s.Standing.OnBallot, want.Outcome.Share, want.OnBallot)
					}
					w := 1.0
					if tc.mix != nil {
						w = tc.mix[s.Scenario.Key[:len(s.Scenario.Key)-len("-auto")]]
					}
					weights += w
					weighed += w * s.Standing.Outcome.Share
				}
				if len(got.Scenarios) != 4 || !got.OnBallot || math.Abs(got.Total-weighed/weights) > 1e-12 {
					t.Errorf("listing %d: %d scenarios, total %v; want 4 and %v", id, len(got.Scenarios), got.Total, weighed/weights)
				}
			}
		})
	}
	if got := SharePolicyNow(m, "kimi-k2.5", 99, at, nil); got.OnBallot || got.Total != 0 {
		t.Errorf("a listing not on the market: %+v", got)
	}
}
