// Package preview answers "where does this fare land?": it turns a model's
// published listings into election ballots for the standard scenarios, and
// computes standings, impacts, break-even fares, projections and chart data on
// top of internal/election, so what a carrier or reviewer sees is what
// routing will do.
package preview

import (
	"strings"
	"time"

	"github.com/airside/airside/internal/catalogue"
	"github.com/airside/airside/internal/election"
	"github.com/airside/airside/internal/fare"
	"github.com/airside/airside/internal/traffic"
)

// Scenario is a standard request shape.
type Scenario struct {
	Key            string
	Name           string
	PromptTokens   int64
	Workload       election.Workload
	Streaming      bool
	SessionOpening bool
	Routing        election.Mode
	Requires       election.Capabilities
	// At, when set, is the time the scenario is elected at (a custom time of
	// day); otherwise the preview's time is used.
	At time.Time
}

// Request is the scenario as an election request at time at.
func (s Scenario) Request(model string, at time.Time) election.Request {
	if !s.At.IsZero() {
		at = s.At
	}
	return election.Request{Model: model, PromptTokens: s.PromptTokens, Streaming: s.Streaming, Routing: s.Routing,
		Workload: s.Workload, SessionOpening: s.SessionOpening, Requires: s.Requires, At: at}
}

// shapes are the workloads that matter, each run under auto and price routing.
var shapes = []Scenario{
	{Key: "small", Name: "Small one-shot", PromptTokens: 1000, Workload: election.WorkloadGeneral},
	{Key: "large", Name: "Large prompt, general API", PromptTokens: 20000, Workload: election.WorkloadGeneral},
	{Key: "coding", Name: "Coding agent session opener", PromptTokens: 40000, Workload: election.WorkloadCoding, Streaming: true, SessionOpening: true},
	{Key: "chat", Name: "Chat", PromptTokens: 8000, Workload: election.WorkloadChat, Streaming: true},
}

// WithPrompts gives each scenario of a shape the prompt size measured for
// it (by shape key; absent or zero keeps the standard size).
func WithPrompts(scenarios []Scenario, prompts map[string]int64) []Scenario {
	for i := range scenarios {
		for _, shape := range shapes {
			if strings.HasPrefix(scenarios[i].Key, shape.Key+"-") && prompts[shape.Key] > 0 {
				scenarios[i].PromptTokens = prompts[shape.Key]
			}
		}
	}
	return scenarios
}

// StandardScenarios are the four shapes under auto, then under price routing.
func StandardScenarios() []Scenario {
	var out []Scenario
	for _, mode := range []election.Mode{election.ModeAuto, election.ModePrice} {
		for _, s := range shapes {
			s.Routing = mode
			s.Key += "-" + mode.String()
			s.Name += " (" + mode.String() + ")"
			out = append(out, s)
		}
	}
	return out
}

// CandidateID names a listing on the ballot: "carrier/model".
func CandidateID(l *catalogue.Listing) string { return l.CarrierSlug + "/" + l.Model.Slug }

// Candidate turns a listing with fare f into a ballot candidate. Only
// capabilities declared in the fare and verified count.
func Candidate(l *catalogue.Listing, f *fare.Fare, verified map[string]string) election.Candidate {
	priority := float64(l.PriorityBP) / 10000
	c := election.Candidate{
		ID:       CandidateID(l),
		Priority: &priority,
		Metrics: election.Metrics{Uptime: l.Health.UptimePct, LatencyMs: l.Health.LatencyMs,
			Throughput: l.Health.ThroughputTPS, CacheHitRate: l.Health.CacheHitRate},
		Fare: f.ForElection(),
	}
	for _, flag := range f.Capabilities {
		if verified[flag.String()] == "verified" {
			c.Capabilities = c.Capabilities.With(flag)
		}
	}
	return c
}

// Market is one model's listings with their capability verifications.
type Market struct {
	Listings []catalogue.Listing
	// Checks maps listing ids to capability name -> "verified" or "failed".
	Checks map[int64]map[string]string
	// Routing, when set, is where routing stands for the model: the rates
	// it has learned and each shape's holder. Ballots then carry the
	// learned rates, never the catalogue's cache-hit rate, and each
	// standard shape's incumbent is its holder, as ProjectHistory elects a
	// moment: the preview of a published fare projects what the traffic
	// pages project now. Nil keeps the catalogue's rates, and the winner
	// with the published fares as each shape's incumbent.
	Routing *RoutingState
}

// RoutingState is what routing carries from request to request for a
// model: the learned rates (traffic.Learn), each shape's holder (shape
// key, as in ProjectHistory, to candidate id) and the parts of each
// shape's requests from API projects with the rates learned of each
// (Moment.Projects: the share projected elects each part on its own
// rates; a shape absent is all on Learned).
type RoutingState struct {
	Learned  traffic.Learned
	Holders  map[string]string
	Projects map[string][]ProjectPart
}

// withLearned is m elected on the learned rates l in place of its
// routing's (m.Routing set): a project part's ballots.
func (m Market) withLearned(l traffic.Learned) Market {
	routing := *m.Routing
	routing.Learned = l
	m.Routing = &routing
	return m
}

// Change is a what-if for one listing: a proposed fare, or a status change.
type Change struct {
	ListingID int64
	// Fare replaces the listing's published fare when set.
	Fare *fare.Fare
	// Status replaces the listing's status when set (a pause or a resume).
	Status catalogue.ListingStatus
}

// onBallot reports whether a listing with status and fare is elected on.
func onBallot(status catalogue.ListingStatus, f *fare.Fare) bool {
	return f != nil && status == catalogue.StatusInService
}

// Entry is one listing on a ballot with the fare it is elected on.
type Entry struct {
	Listing *catalogue.Listing
	Fare    *fare.Fare
}

// Ballot builds the election for req over the market with change applied,
// and returns the subject's index on it (-1 when it is not on the ballot).
func (m Market) Ballot(req election.Request, change Change) (election.Ballot, int) {
	b, _, subject := m.BallotEntries(req, change)
	return b, subject
}

// BallotEntries is Ballot with the listing and fare behind each candidate.
func (m Market) BallotEntries(req election.Request, change Change) (election.Ballot, []Entry, int) {
	b := election.Ballot{Request: req, Candidates: make([]election.Candidate, 0, len(m.Listings))}
	if m.Routing != nil {
		b.Request.ObservedHitRate, b.Request.ObservedOutputRatio = m.Routing.Learned.Combined, m.Routing.Learned.OutputRatio
	}
	entries := make([]Entry, 0, len(m.Listings))
	subject := -1
	for i := range m.Listings {
		l := &m.Listings[i]
		f, status := l.Published, l.Status
		if l.ID == change.ListingID {
			if change.Fare != nil {
				f = change.Fare
				if status == catalogue.StatusDraft {
					status = catalogue.StatusInService // its first fare brings it into service
				}
			}
			if change.Status != "" {
				status = change.Status
			}
		}
		if !onBallot(status, f) {
			continue
		}
		if l.ID == change.ListingID {
			subject = len(b.Candidates)
		}
		c := Candidate(l, f, m.Checks[l.ID])
		if m.Routing != nil {
			// As ProjectHistory: the gateway ranks on the rates it learned.
			c.Metrics.CacheHitRate = nil
			if r, ok := m.Routing.Learned.HitRate[c.ID]; ok {
				c.Metrics.CacheHitRate = &r
			}
		}
		b.Candidates = append(b.Candidates, c)
		entries = append(entries, Entry{Listing: l, Fare: f})
	}
	// Health with little traffic starts as a typical peer (election spec
	// section 4), as the reference gateway blends the catalogue's figures.
	samples := make([]float64, len(entries))
	for i, e := range entries {
		samples[i] = traffic.PeerSample(e.Listing.Health.Requests)
	}
	traffic.BlendWithPeers(b.Candidates, samples)
	return b, entries, subject
}

// Standing is where one listing stands in one election.
type Standing struct {
	OnBallot bool
	Eligible bool
	Rank     int
	Of       int // eligible candidates
	Score    float64
	Winner   string
	// Gap is the score points between the listing and the winner (0 when it
	// wins).
	Gap      float64
	Excluded []string
}

// StandingIn runs the election and reads the subject's standing.
func StandingIn(b *election.Ballot, subject int) (Standing, election.Result) {
	res := election.Elect(b)
	st := Standing{Winner: res.WinnerID()}
	for _, o := range res.Candidates {
		if o.Eligible {
			st.Of++
		}
	}
	if subject < 0 {
		return st, res
	}
	o := res.Candidates[subject]
	st.OnBallot, st.Eligible, st.Rank, st.Score = true, o.Eligible, o.Rank, o.Score
	if !o.Eligible {
		st.Excluded = o.Excluded.Reasons()
	} else if res.Winner >= 0 {
		st.Gap = o.Score - res.Candidates[res.Winner].Score
	}
	return st, res
}

// ScenarioImpact is a listing's standing in one scenario before and after a
// change.
type ScenarioImpact struct {
	Scenario      Scenario
	Before, After Standing
	// ShareBefore and ShareAfter are the listing's standing for a project
	// on the share policy (election.md sec. 8): its share of the
	// scenario's requests as published and with the change.
	ShareBefore, ShareAfter ShareStanding
	// Sets are, under auto, the parts of the scenario's requests that
	// carried sets of preferences, each elected on a ballot of its own.
	Sets []SetImpact
	// Projects are, under auto, the parts of its requests from API
	// projects whose rates routing learned apart (Market.Routing.Projects),
	// each elected on those rates.
	Projects []ProjectImpact
}

// ProjectImpact is the listing's standing, as published and with the
// change, on the ballot of a part of a scenario's requests (Part) from API
// projects routing learned the same rates of, elected on those rates.
type ProjectImpact struct {
	Part          float64
	Before, After Standing
}

// SetImpact is the listing's standing, as published and with the change,
// on the ballot of the part of a scenario's requests that carried one set
// of preferences (Set in words, Part of the scenario's requests). Each
// Winner is that ballot's: an order's first listing that may serve them,
// whatever the prices, else the best score among the listings the set
// allows (incumbency left out, as on the scenario's own row).
type SetImpact struct {
	Set           string
	Part          float64
	Before, After Standing
}

// Impact computes, for every standard scenario, the listing's standing as
// published and with the change applied, against the same competitors, and
// under auto on the ballot of each set of preferences the scenario's
// requests carried (prefs by shape key, Input.Preferences) and of each
// part from projects routing learned rates of apart (m.Routing.Projects).
func Impact(m Market, model string, change Change, at time.Time, prefs map[string][]PreferencePart) []ScenarioImpact {
	var out []ScenarioImpact
	for _, sc := range StandardScenarios() {
		req := sc.Request(model, at)
		before, bi := m.Ballot(req, Change{ListingID: change.ListingID})
		after, ai := m.Ballot(req, change)
		b, _ := StandingIn(&before, bi)
		a, _ := StandingIn(&after, ai)
		in := Input{Market: m, Model: model, ListingID: change.ListingID, At: at}
		imp := ScenarioImpact{Scenario: sc, Before: b, After: a,
			ShareBefore: shareStanding(in, sc, Change{ListingID: change.ListingID}), ShareAfter: shareStanding(in, sc, change)}
		if shape, auto := strings.CutSuffix(sc.Key, "-"+election.ModeAuto.String()); auto {
			for _, p := range scaledSets(prefs[shape]) {
				set := SetImpact{Set: SetWords(p.Preferences), Part: p.Part}
				b, a := before, after
				carryPreferences(&b, p.Preferences)
				carryPreferences(&a, p.Preferences)
				set.Before, _ = StandingIn(&b, bi)
				set.After, _ = StandingIn(&a, ai)
				imp.Sets = append(imp.Sets, set)
			}
			if m.Routing != nil {
				for _, p := range m.Routing.Projects[shape] {
					own := m.withLearned(p.Learned)
					pi := ProjectImpact{Part: p.Part}
					b, bi := own.Ballot(req, Change{ListingID: change.ListingID})
					a, ai := own.Ballot(req, change)
					pi.Before, _ = StandingIn(&b, bi)
					pi.After, _ = StandingIn(&a, ai)
					imp.Projects = append(imp.Projects, pi)
				}
			}
		}
		out = append(out, imp)
	}
	return out
}
