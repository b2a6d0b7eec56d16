package preview

import (
	"math"
	"strings"
	"time"

	"github.com/airside/airside/internal/election"
)

// ShareStanding is where a listing stands in a scenario for a project on
// the share policy (election.md sec. 8, seed 004): its share of the
// scenario's requests, the adjusted price it is made of, and what brings
// it inside the competitive edge. Health is the catalogue's (the preview
// has no tries of its own), read as the share policy reads it.
type ShareStanding struct {
	// OnBallot is false when the listing is not eligible in the scenario.
	OnBallot bool
	Outcome  election.ShareOutcome
	// RoutingPrice is the price the adjusted price starts from (USD per
	// million tokens, as routed).
	RoutingPrice float64
	// CheaperBy and FasterBy are what brings the listing inside the edge,
	// as fractions (0.12: 12 % cheaper; 0.3: 30 % faster); 0 when it is
	// inside, FasterBy also 0 when no listing has a speed.
	CheaperBy, FasterBy float64
}

// Inside is whether the listing is within the competitive edge.
func (s ShareStanding) Inside() bool { return s.Outcome.Distance <= election.ShareEdge }

// shareStanding elects the scenario under the share policy, with every
// candidate's share figures read from its catalogue health.
func shareStanding(in Input, sc Scenario, change Change) ShareStanding {
	if sc.Routing != election.ModeAuto {
		return ShareStanding{}
	}
	ballot, _, me := in.Market.BallotEntries(sc.Request(in.Model, in.At), change)
	if me < 0 {
		return ShareStanding{}
	}
	for i := range ballot.Candidates {
		ballot.Candidates[i].ShareMetrics = election.ShareMetricsFromHealth(ballot.Candidates[i].Metrics)
	}
	ballot.Policy = election.PolicyShare
	res := election.Elect(&ballot)
	o := res.Candidates[me]
	if !o.Eligible || !o.HasShare {
		return ShareStanding{}
	}
	st := ShareStanding{OnBallot: true, Outcome: o.Share, RoutingPrice: o.RoutingPrice}
	s := o.Share
	if s.Distance > election.ShareEdge && s.Best > 0 {
		// Every part of the adjusted price is in proportion to the price;
		// the speed term divides it by the root of speed over the median.
		v := s.Best * (1 + s.Distance)
		st.CheaperBy = 1 - s.Best*(1+election.ShareEdge)/v
		if s.HasSpeed && s.Speed > 0 {
			st.FasterBy = math.Pow(v/(s.Best*(1+election.ShareEdge)), 2) - 1
		}
	}
	return st
}

// ScenarioShare is a listing's standing in one standard auto scenario for a
// project on the share policy.
type ScenarioShare struct {
	Scenario Scenario
	Standing ShareStanding
}

// PolicyShare is where a listing's published fare stands for projects on
// the share policy: each standard auto scenario's share, and the total
// weighed by the workload mix (OnBallot false when no scenario has it).
type PolicyShare struct {
	Scenarios []ScenarioShare
	Total     float64
	OnBallot  bool
	// Demand is the part of the model's requests routed under the share
	// policy over the mix window, as the gateways reported it (0 without
	// demand measured); the projection sets it.
	Demand float64
}

// Blended is the listing's share of the model's requests with each
// policy weighed by the demand it carried: election the share projected
// under the election policy.
func (p PolicyShare) Blended(election float64) float64 {
	return (1-p.Demand)*election + p.Demand*p.Total
}

// SharePolicyNow is a listing's share for projects on the share policy,
// with the published fares and the catalogue's health at at, in each
// standard auto scenario and weighed by mix (shape key to weight; nil or
// all zero: an even mix), as the preview's "For projects on the share
// policy" reads it for the fare as published.
func SharePolicyNow(m Market, model string, listingID int64, at time.Time, mix map[string]float64) PolicyShare {
	in := Input{Market: m, Model: model, ListingID: listingID, At: at}
	var out PolicyShare
	var weighed, weights float64
	even := true
	for _, w := range mix {
		if w > 0 {
			even = false
		}
	}
	for _, sc := range StandardScenarios() {
		if sc.Routing != election.ModeAuto {
			continue
		}
		st := shareStanding(in, sc, Change{ListingID: listingID})
		out.Scenarios = append(out.Scenarios, ScenarioShare{Scenario: sc, Standing: st})
		w := 1.0
		if !even {
			w = mix[strings.TrimSuffix(sc.Key, "-"+sc.Routing.String())]
		}
		weights += w
		if st.OnBallot {
			out.OnBallot = true
			weighed += w * st.Outcome.Share
		}
	}
	if weights > 0 {
		out.Total = weighed / weights
	}
	return out
}
