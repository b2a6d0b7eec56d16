package preview

import (
	"math"
	"time"

	"github.com/airside/airside/internal/election"
)

// FeeCurve is the carrier's score, and every competitor's, as the carrier's
// landing fee goes from 5 % to 50 %, in one scenario.
type FeeCurve struct {
	Scenario string
	// FeesBP are the x values, basis points.
	FeesBP []int
	Series []Series
	// CurrentBP is the fee in the fare, marked on the chart.
	CurrentBP int
}

// Series is one line of a chart.
type Series struct {
	Name   string
	IsMe   bool
	Points []float64 // one per x; NaN where not eligible
}

func feeCurve(in Input, sc Scenario, change Change) FeeCurve {
	curve := FeeCurve{Scenario: sc.Name}
	if in.Fare != nil {
		curve.CurrentBP = int(in.Fare.LandingFee)
	}
	ballot, entries, me := in.Market.BallotEntries(sc.Request(in.Model, in.At), change)
	if me < 0 {
		return curve
	}
	for i, e := range entries {
		curve.Series = append(curve.Series, Series{Name: e.Listing.CarrierName, IsMe: i == me})
	}
	var res election.Result
	// One private copy of the ballot, whose subject's fee each step moves.
	b := withLandingFee(ballot, me, 0)
	for bp := 500; bp <= 5000; bp += 100 {
		curve.FeesBP = append(curve.FeesBP, bp)
		*b.Candidates[me].Fare.LandingFee = float64(bp) / 10000
		election.ElectInto(&b, &res)
		for i, o := range res.Candidates {
			v := o.Score
			if !o.Eligible {
				v = nan
			}
			curve.Series[i].Points = append(curve.Series[i].Points, v)
		}
	}
	return curve
}

// Bars are the routing prices of one scenario's candidates.
type Bars struct {
	Scenario string
	Bars     []Bar
}

// Bar is one candidate's routing price, USD per million tokens.
type Bar struct {
	Name  string
	IsMe  bool
	Value float64
}

func barsOf(s ScenarioResult) Bars {
	out := Bars{Scenario: s.Scenario.Name}
	for _, c := range s.Ballot {
		if c.Eligible {
			out.Bars = append(out.Bars, Bar{Name: c.Name, IsMe: c.IsMe, Value: c.RoutingPrice})
		}
	}
	return out
}

// Heatmap is the carrier's rank for each hour of a week (UTC).
type Heatmap struct {
	Scenario string
	// Ranks[d][h] is the rank on weekday d (0 = Sunday) at UTC hour h; 0 when
	// not eligible.
	Ranks [7][24]int
	Of    int
}

func heatmap(in Input, sc Scenario, change Change) Heatmap {
	h := Heatmap{Scenario: sc.Name}
	at := in.At.UTC()
	sunday := time.Date(at.Year(), at.Month(), at.Day(), 0, 0, 0, 0, time.UTC).AddDate(0, 0, -int(at.Weekday()))
	var res election.Result
	// The ballot is built once: only the hour changes, and the engine
	// resolves each fare's time-of-day block for the request's time.
	ballot, _, me := in.Market.BallotEntries(sc.Request(in.Model, sunday), change)
	if me < 0 {
		return h
	}
	// Hours at which every fare is in the same time-of-day block elect
	// alike: elect once per combination of blocks, not 168 times.
	type outcome struct{ rank, of int }
	seen := map[string]outcome{}
	signature := make([]byte, len(ballot.Candidates))
	for d := range 7 {
		for hour := range 24 {
			ballot.Request.At = sc.Request(in.Model, sunday.Add(time.Duration(d*24+hour)*time.Hour)).At
			for i := range ballot.Candidates {
				signature[i] = byte(election.BlockAt(&ballot.Candidates[i].Fare, ballot.Request.At))
			}
			if o, ok := seen[string(signature)]; ok {
				h.Ranks[d][hour] = o.rank
				h.Of = max(h.Of, o.of)
				continue
			}
			election.ElectInto(&ballot, &res)
			h.Ranks[d][hour] = res.Candidates[me].Rank
			eligible := 0
			for _, o := range res.Candidates {
				if o.Eligible {
					eligible++
				}
			}
			h.Of = max(h.Of, eligible)
			seen[string(signature)] = outcome{rank: h.Ranks[d][hour], of: eligible}
		}
	}
	return h
}

var nan = math.NaN()
