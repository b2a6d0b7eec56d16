package projection

import (
	"context"
	"fmt"
	"hash/fnv"
	"io"
	"maps"
	"slices"
	"strconv"
	"strings"
	"sync"
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
	// standard size), Kinds its requests by kind, Preferences by the set
	// of preferences they carried.
	Prompts     map[string]int64
	Kinds       map[string][]preview.Kind
	Preferences map[string][]preview.PreferencePart
}

// MeasuredDemand is the model's workload as the gateway measured it.
func (pj *Projector) MeasuredDemand(ctx context.Context, model string) (Measured, error) {
	d, err := pj.Demand(ctx, model)
	if err != nil {
		return Measured{}, err
	}
	m := Measured{Prompts: preview.PromptsFromDemand(d), Kinds: preview.KindsFromDemand(d), Preferences: preview.PreferencePartsFromDemand(d)}
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
// measured workload (prompt sizes, kinds and sets of preferences always;
// the mix unless one was typed), so a published fare previews as the
// traffic page projects it.
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
		Custom: ask.Custom, Mix: mix, Prompts: d.Prompts, Kinds: d.Kinds, Preferences: d.Preferences, Focus: ask.Focus}), nil
}

// Impact is a change's effect on the standard scenarios at each of the
// times asked, and the market's candidates named by carrier.
type Impact struct {
	Sets  [][]preview.ScenarioImpact
	Names map[string]string
}

// ImpactOf is what change (to a listing of the model) does to each
// standard scenario at each time in at, elected as the carrier's preview
// elects (on the rates routing learned and each shape's holder, and each
// set of preferences the model's measured demand carried on a ballot of
// its own), so the reviewer reads the scores the carrier saw before
// filing.
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
	measured, err := pj.MeasuredDemand(ctx, model)
	if err != nil {
		return Impact{}, err
	}
	out := Impact{Names: map[string]string{}}
	for i := range m.Listings {
		out.Names[preview.CandidateID(&m.Listings[i])] = m.Listings[i].CarrierName
	}
	for _, t := range at {
		out.Sets = append(out.Sets, preview.Impact(m, model, change, t, measured.Preferences))
	}
	return out, nil
}

// Win is a standard scenario a listing wins now, or the part of one it
// takes for the preferences its requests carried.
type Win struct {
	Scenario string
	// Set, when not "", is a set of preferences (preview.SetWords) whose
	// requests, Part of the scenario's, the listing takes while another
	// holds the scenario.
	Set  string
	Part float64
	// Elsewhere, on the holder's win, is the part of the scenario's
	// requests whose preferences send them to other listings.
	Elsewhere float64
	// Projects, when set, says the listing takes Part of the scenario's
	// requests, from API projects whose rates routing learned apart,
	// while another holds the scenario; ProjectsElsewhere, on the
	// holder's win, is the part such projects take to other listings.
	Projects          bool
	ProjectsElsewhere float64
}

// WinsNow is, for each listing, the standard scenarios it wins now as the
// gateway routes them: elected on the snapshot's ballots with the rates
// routing has learned where the projection of since to until leaves them
// (never the catalogue's cache rate: the gateway elects on learned rates
// only) and, under auto, held by the shape's
// incumbent where the projection of since to until left one and it keeps
// the shape under the stable preference (within the incumbent margin of
// the winner, at or above the stable uptime): a cheaper fare that has not
// cleared the margin wins nothing yet. Under auto, the requests that
// carried sets of preferences (the model's measured demand, as the
// preview's) go where each set sends them (preview.SetHolders): a listing
// taking a set it does not hold the scenario for wins that part, and the
// holder's win says what part went elsewhere; so do the requests of API
// projects whose rates routing learned apart (each group elected on its
// own rates under the shape's one incumbent, as the projected share
// elects them). The projection is the one the page shows beside it (kept:
// asking again costs nothing).
func (pj *Projector) WinsNow(ctx context.Context, snap *routing.Snapshot, listings []catalogue.Listing, since, until, now time.Time) (map[int64][]Win, error) {
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
	models = slices.Compact(slices.Sorted(slices.Values(models)))
	// The sets of preferences each model's requests carried and its
	// projects' parts with their learned rates (kept per model until its
	// demand moves).
	prefs := make(map[string]map[string][]preview.PreferencePart, len(models))
	projects := make(map[string]map[string][]preview.ProjectPart, len(models))
	for _, slug := range models {
		d, err := pj.Demand(ctx, slug)
		if err != nil {
			return nil, err
		}
		prefs[slug] = preview.PreferencePartsFromDemand(d)
		projects[slug] = projected[slug].end.projectParts(d)
	}
	// The answer depends on the snapshot, the listings asked of, each
	// model's holders and sets of preferences, and the minute (a
	// time-of-day block): kept while they hold, since a page read after
	// each metric batch would otherwise run a full election for every
	// shape whose holder is not the winner.
	h := fnv.New64a()
	fmt.Fprintf(h, "%d|", now.Unix()/60)
	for _, id := range slices.Sorted(maps.Keys(byCandidate)) {
		fmt.Fprintf(h, "%s=%d,", id, byCandidate[id])
	}
	for _, slug := range models {
		holders := projected[slug].end.holders
		for _, shape := range slices.Sorted(maps.Keys(holders)) {
			fmt.Fprintf(h, "%s/%s=%s;", slug, shape, holders[shape])
		}
		for _, shape := range slices.Sorted(maps.Keys(prefs[slug])) {
			for _, p := range prefs[slug][shape] {
				fmt.Fprintf(h, "%s/%s:%s=%g;", slug, shape, p.Key, p.Part)
			}
		}
		fmt.Fprintf(h, "%s:", slug)
		learned := projected[slug].end.learned
		printLearned(h, &learned)
		for _, shape := range slices.Sorted(maps.Keys(projects[slug])) {
			for _, p := range projects[slug][shape] {
				fmt.Fprintf(h, "%s/%s=%g:", slug, shape, p.Part)
				printLearned(h, &p.Learned)
			}
		}
	}
	key := h.Sum64()
	pj.wins.mu.Lock()
	if pj.wins.snap == snap && pj.wins.key == key {
		kept := pj.wins.by
		pj.wins.mu.Unlock()
		return kept, nil
	}
	pj.wins.mu.Unlock()
	wins := map[int64][]Win{}
	var res election.Result
	for _, slug := range models {
		end := projected[slug].end
		for _, sc := range preview.StandardScenarios() {
			req := sc.Request(slug, now)
			plain, ok := snap.Ballot(req, nil)
			if !ok {
				continue
			}
			ballot := preview.OnLearned(plain, &end.learned)
			election.ElectWinnerInto(&ballot, &res)
			if res.Winner < 0 {
				continue
			}
			id := ballot.Candidates[res.Winner].ID
			win := Win{Scenario: sc.Name}
			if shape, auto := strings.CutSuffix(sc.Key, "-"+election.ModeAuto.String()); auto {
				incumbent := end.holders[shape]
				if at, kept := traffic.Holder(&ballot, &res, incumbent); kept {
					id = ballot.Candidates[at].ID
				}
				for _, set := range preview.SetHolders(ballot, id, prefs[slug][shape]) {
					if set.Holder == id {
						continue
					}
					win.Elsewhere += set.Part
					if lid, ok := byCandidate[set.Holder]; ok {
						wins[lid] = append(wins[lid], Win{Scenario: sc.Name, Set: set.Set, Part: set.Part})
					}
				}
				// Each project group elects on its own rates; the shape's
				// incumbent keeps its requests while it keeps its lead
				// on their ballot, else their own winner takes them.
				for _, p := range projects[slug][shape] {
					own := preview.OnLearned(plain, &p.Learned)
					election.ElectWinnerInto(&own, &res)
					at, _ := traffic.Holder(&own, &res, incumbent)
					if at < 0 || own.Candidates[at].ID == id {
						continue
					}
					win.ProjectsElsewhere += p.Part
					if lid, ok := byCandidate[own.Candidates[at].ID]; ok {
						wins[lid] = append(wins[lid], Win{Scenario: sc.Name, Projects: true, Part: p.Part})
					}
				}
			}
			if lid, ok := byCandidate[id]; ok {
				wins[lid] = append(wins[lid], win)
			}
		}
	}
	pj.wins.mu.Lock()
	pj.wins.snap, pj.wins.key, pj.wins.by = snap, key, wins
	pj.wins.mu.Unlock()
	return wins, nil
}

// winsKept is the last WinsNow answer and what it was worked out from
// (readers never change it).
type winsKept struct {
	mu   sync.Mutex
	snap *routing.Snapshot
	key  uint64
	by   map[int64][]Win
}

// printLearned writes learned rates into a key, in a fixed order.
func printLearned(w io.Writer, l *traffic.Learned) {
	rate := func(r *float64) string {
		if r == nil {
			return "-"
		}
		return strconv.FormatFloat(*r, 'g', -1, 64)
	}
	fmt.Fprintf(w, "%s/%s", rate(l.Combined), rate(l.OutputRatio))
	for _, id := range slices.Sorted(maps.Keys(l.HitRate)) {
		fmt.Fprintf(w, ",%s=%g", id, l.HitRate[id])
	}
	fmt.Fprint(w, ";")
}

// Hold is who serves one of a model's standard scenarios under auto
// routing now, as the gateway decides it (the stable preference), seen
// from one listing.
type Hold struct {
	Scenario string
	// Holder names the carrier serving it ("" when no one is eligible).
	Holder string
	// Mine: the listing serves it. Kept: the listing wins the election but
	// the incumbent keeps the shape, being within the margin.
	Mine, Kept bool
	// Lead is how far the listing's score is ahead of the holder's (lower
	// scores win; negative: behind); 0 when the listing is not eligible.
	Lead float64
	// Eligible says the listing is on the scenario's ballot at all.
	Eligible bool
}

// Holding is, for each standard scenario under auto routing, who serves it
// now and where the listing stands against them: the incumbents where the
// projection of the listing's traffic page leaves them, kept under the
// stable preference. asResumed elects the listing as if back in service
// (the resume a paused listing's page offers).
func (pj *Projector) Holding(ctx context.Context, l *catalogue.Listing, asResumed bool) ([]Hold, error) {
	snap, err := pj.Routing.Current(ctx)
	if err != nil {
		return nil, err
	}
	market, ok := snap.Market(l.Model.Slug)
	if !ok {
		return nil, nil
	}
	state, err := pj.RoutingState(ctx, l)
	if err != nil {
		return nil, err
	}
	holders := map[string]string{}
	if state != nil {
		// Elected on the rates routing learned, as the gateway elects.
		holders, market.Routing = state.Holders, state
	}
	names := map[string]string{}
	for i := range market.Listings {
		names[preview.CandidateID(&market.Listings[i])] = market.Listings[i].CarrierName
	}
	change := preview.Change{ListingID: l.ID}
	if asResumed {
		change.Status = catalogue.StatusInService
	}
	now := pj.Now()
	var out []Hold
	for _, sc := range preview.StandardScenarios() {
		shape, auto := strings.CutSuffix(sc.Key, "-"+election.ModeAuto.String())
		if !auto {
			continue
		}
		b, me := market.Ballot(sc.Request(l.Model.Slug, now), change)
		res := election.Elect(&b)
		at, _ := traffic.Holder(&b, &res, holders[shape])
		h := Hold{Scenario: sc.Name}
		if at < 0 {
			out = append(out, h)
			continue
		}
		h.Holder = names[res.Candidates[at].ID]
		if me >= 0 && res.Candidates[me].Eligible {
			h.Eligible = true
			h.Mine = at == me
			h.Lead = res.Candidates[at].Score - res.Candidates[me].Score
			h.Kept = !h.Mine && res.Winner == me
		}
		out = append(out, h)
	}
	return out, nil
}
