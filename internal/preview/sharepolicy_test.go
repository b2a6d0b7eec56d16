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
