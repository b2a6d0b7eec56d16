package projection

import (
	"context"
	"slices"
	"strings"
	"time"

	"github.com/airside/airside/internal/catalogue"
	"github.com/airside/airside/internal/election"
	"github.com/airside/airside/internal/fare"
	"github.com/airside/airside/internal/preview"
	"github.com/airside/airside/internal/routing"
	"github.com/airside/airside/internal/traffic"
)

// Market is the model's market as the preview and the reviewer's impact
// table elect on it: its listings and their capability verdicts.
func (pj *Projector) Market(ctx context.Context, modelID int64) (preview.Market, error) {
	return preview.LoadMarket(ctx, pj.Reads, catalogue.ListingFilter{ModelID: modelID})
}

// Measured is a model's workload as the gateway measured it over MixWindow.
type Measured struct {
	// Mix is the requests by workload key, Requests their sum (0: no
	// demand measured).
	Mix      map[string]float64
	Requests int64
	// Prompts are each workload's measured prompt size (absent: the
	// standard size), Kinds its requests by kind.
	Prompts map[string]int64
	Kinds   map[string][]preview.Kind
}

// MeasuredDemand is the model's workload as the gateway measured it.
func (pj *Projector) MeasuredDemand(ctx context.Context, model string) (Measured, error) {
	d, err := pj.Demand(ctx, model)
	if err != nil {
		return Measured{}, err
	}
	m := Measured{Prompts: preview.PromptsFromDemand(d), Kinds: preview.KindsFromDemand(d)}
	m.Mix, m.Requests = preview.MixFromDemand(d)
	return m, nil
}

// Ask is what a carrier set on the fare preview besides the fare.
type Ask struct {
	// Mix is a typed workload mix; nil uses the measured one.
	Mix map[string]float64
	// Custom is a scenario of the carrier's own; Focus the scenario the
	// charts are drawn for.
	Custom *preview.Scenario
	Focus  string
}

// Preview is the fare preview of fare f for listing l now: elected on the
// model's market, the rates routing learned and each shape's holder where
// the projection of the traffic page leaves them (RoutingState), under the
// measured workload (prompt sizes and kinds always; the mix unless one was
// typed), so a published fare previews as the traffic page projects it.
func (pj *Projector) Preview(ctx context.Context, l *catalogue.Listing, f *fare.Fare, ask Ask) (preview.Result, error) {
	m, err := pj.Market(ctx, l.Model.ID)
	if err != nil {
		return preview.Result{}, err
	}
	if m.Routing, err = pj.RoutingState(ctx, l); err != nil {
		return preview.Result{}, err
	}
	d, err := pj.MeasuredDemand(ctx, l.Model.Slug)
	if err != nil {
		return preview.Result{}, err
	}
	mix := ask.Mix
	if mix == nil {
		mix = d.Mix
	}
	return preview.Build(preview.Input{Market: m, Model: l.Model.Slug, ListingID: l.ID, Fare: f, At: pj.Now().UTC(),
		Custom: ask.Custom, Mix: mix, Prompts: d.Prompts, Kinds: d.Kinds, Focus: ask.Focus}), nil
}

// Impact is a change's effect on the standard scenarios at each of the
// times asked, and the market's candidates named by carrier.
type Impact struct {
	Sets  [][]preview.ScenarioImpact
	Names map[string]string
}

// ImpactOf is what change (to a listing of the model) does to each
// standard scenario at each time in at, elected as the carrier's preview
// elects (on the rates routing learned and each shape's holder), so the
// reviewer reads the scores the carrier saw before filing.
func (pj *Projector) ImpactOf(ctx context.Context, modelID int64, model string, change preview.Change, at ...time.Time) (Impact, error) {
	m, err := pj.Market(ctx, modelID)
	if err != nil {
		return Impact{}, err
	}
	if i := slices.IndexFunc(m.Listings, func(l catalogue.Listing) bool { return l.ID == change.ListingID }); i >= 0 {
		if m.Routing, err = pj.RoutingState(ctx, &m.Listings[i]); err != nil {
			return Impact{}, err
		}
	}
	out := Impact{Names: map[string]string{}}
	for i := range m.Listings {
		out.Names[preview.CandidateID(&m.Listings[i])] = m.Listings[i].CarrierName
	}
	for _, t := range at {
		out.Sets = append(out.Sets, preview.Impact(m, model, change, t))
	}
	return out, nil
}

// WinsNow is, for each listing, the standard scenarios it wins now as the
// gateway routes them: elected on the snapshot's compiled ballots (as the
// gateway's winner-only elections run) and, under auto, held by the shape's
// incumbent where the projection of since to until left one and it keeps
// the shape under the stable preference (within the incumbent margin of
// the winner, at or above the stable uptime): a cheaper fare that has not
// cleared the margin wins nothing yet. The projection is the one the page
// shows beside it (kept: asking again costs nothing).
func (pj *Projector) WinsNow(ctx context.Context, snap *routing.Snapshot, listings []catalogue.Listing, since, until, now time.Time) (map[int64][]string, error) {
	byCandidate := map[string]int64{}
	var models []string
	for i := range listings {
		byCandidate[preview.CandidateID(&listings[i])] = listings[i].ID
		models = append(models, listings[i].Model.Slug)
	}
	projected, err := pj.projectModels(ctx, models, since, until)
	if err != nil {
		return nil, err
	}
	wins := map[int64][]string{}
	for _, slug := range slices.Compact(slices.Sorted(slices.Values(models))) {
		holders := projected[slug].end.holders
		for _, sc := range preview.StandardScenarios() {
			req := sc.Request(slug, now)
			id, _, ok := snap.Winner(&req, nil)
			if !ok || id == "" {
				continue
			}
			if shape, auto := strings.CutSuffix(sc.Key, "-"+election.ModeAuto.String()); auto {
				if incumbent := holders[shape]; incumbent != "" && incumbent != id && keeps(snap, slug, req, incumbent) {
					id = incumbent
				}
			}
			if lid, ok := byCandidate[id]; ok {
				wins[lid] = append(wins[lid], sc.Name)
			}
		}
	}
	return wins, nil
}

// keeps reports whether the incumbent keeps the request's shape against
// the winner of a full election on the snapshot's market (traffic.Holder).
func keeps(snap *routing.Snapshot, model string, req election.Request, incumbent string) bool {
	market, ok := snap.Market(model)
	if !ok {
		return false
	}
	b, _ := market.Ballot(req, preview.Change{})
	res := election.Elect(&b)
	_, kept := traffic.Holder(&b, &res, incumbent)
	return kept
}
