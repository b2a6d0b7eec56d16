package gateway

import (
	"sort"
	"sync"
	"time"

	"github.com/airside/airside/internal/catalogue"
	"github.com/airside/airside/internal/election"
	"github.com/airside/airside/internal/fleet"
	"github.com/airside/airside/internal/traffic"
)

// Kind is how a request came to the listing that served it.
type Kind uint8

const (
	// Routed: the shape's holder (the election's winner, or the incumbent
	// inside the margin), or the listing a session is pinned to.
	Routed Kind = iota
	// Pinned: the caller named the listing ("carrier/model").
	Pinned
	// Exploration: the 1 % sent to another eligible candidate.
	Exploration
	// Fallback: an earlier try failed and this one served.
	Fallback
)

// Stat is one listing's minute as the gateway saw it: the figures of the
// metrics contract, GatewayCounts (how served attempts came, 429s, cache
// reads and writes, tool calls) as the contract declares them.
type Stat struct {
	// Attempts counts every request sent to the listing, by its class
	// (429s in GatewayCounts.RateLimited).
	Attempts, Errors, ClientErrors int64
	// Over the attempts served: time to first token and whole duration.
	TTFTMsSum, DurationMs int64
	// Tokens of the attempts served, as the carrier reported them.
	InputTokens, CachedInputTokens, OutputTokens int64
	// Capped counts requests the listing could not take at its rate cap.
	Capped int64
	catalogue.GatewayCounts
}

// Served is how many attempts were answered in full.
func (s *Stat) Served() int64 { return s.Routed + s.Pinned + s.Exploration + s.Fallback }

// Demand is one model and workload's minute of requests as customers sent
// them, before any routing: the real workload mix.
type Demand struct {
	Requests, PromptTokens int64
	// LargeRequests are those whose prompt was at least the large line
	// (election.CachePromptTokens), LargePromptTokens their prompts: a
	// minute of small one-shots and large prompts is then not read as one
	// average.
	LargeRequests, LargePromptTokens int64
	// Asked counts the requests by what they asked for besides the model
	// (catalogue.AskedKeys); nil when none asked anything.
	Asked map[string]int64
	// sets are the prefs: keys among Asked, projects the project: keys.
	sets, projects int
}

// Outcome is what one attempt came to.
type Outcome struct {
	Class        traffic.Class
	Status       int
	TTFT, Total  time.Duration
	Usage        Usage
	ToolCalls    int64
	BadToolCalls int64
}

// Usage is an answer's token counts, in the carrier's report.
type Usage struct {
	Input, Cached, CacheRead, CacheWrite, Output int64
}

type minuteKey struct {
	listing int64
	minute  time.Time
}

type hourKey struct {
	project, model, candidate string
	hour                      time.Time
}

type demandKey struct {
	model    string
	workload election.Workload
	minute   time.Time
	kind     RequestKind
}

// RequestKind is how a request asked: streamed or not, and the
// capabilities it required. Demand is counted per kind, since each elects
// on its own ballot (streaming weighs latency; a capability narrows the
// candidates) while the shape keeps one incumbent.
type RequestKind struct {
	Streaming bool
	Requires  election.Capabilities
}

// Recorder accumulates what the gateway saw. Safe for concurrent use.
type Recorder struct {
	mu      sync.Mutex
	minutes map[minuteKey]*Stat
	hours   map[hourKey]*traffic.Hour
	demand  map[demandKey]*Demand
	holders map[holderKey]*[]heldRow // each auto shape's holders by minute (holders.go)
	orgs    map[orgKey]*OrgStat      // each organisation's minutes by listing (orgs.go)
	// projects are each API project's minutes by listing, what routing
	// learned the project's rates from (projects.go).
	projects map[projectMinuteKey]*traffic.Hour
	// dirty are the hours changed since the fleet last had them
	// (TakeChangedHours).
	dirty map[hourKey]struct{}
	// Spool, when set, keeps every count on disk until the portal has its
	// minute (spool.go); written under mu, so a replay takes the counts in
	// the order they were taken.
	Spool *Spool
}

// spool writes a count to the spool, if there is one (mu held).
func (r *Recorder) spool(e spoolEntry) {
	if r.Spool != nil {
		r.Spool.write(e)
	}
}

// NewRecorder is an empty recorder.
func NewRecorder() *Recorder {
	return &Recorder{minutes: map[minuteKey]*Stat{}, hours: map[hourKey]*traffic.Hour{}, demand: map[demandKey]*Demand{}}
}

func (r *Recorder) stat(listing int64, at time.Time) *Stat {
	k := minuteKey{listing, at.UTC().Truncate(time.Minute)}
	s := r.minutes[k]
	if s == nil {
		s = &Stat{}
		r.minutes[k] = s
	}
	return s
}

// Limited counts a limit acting on a listing in the minute it acted: a 429
// or latency backoff starting, the breaker opening or closing.
func (r *Recorder) Limited(route Route, e traffic.Event) {
	r.mu.Lock()
	defer r.mu.Unlock()
	r.spool(spoolEntry{Op: opLimited, At: e.At, Route: routeOf(route), Event: &e})
	s := r.stat(route.ListingID, e.At)
	switch {
	case e.Limit == traffic.LimitBackoff && e.Opened:
		s.Backoffs++
	case e.Limit == traffic.LimitSlow && e.Opened:
		s.SlowBackoffs++
	case e.Limit == traffic.LimitBreaker && e.Opened:
		s.BreakerOpenings++
	case e.Limit == traffic.LimitBreaker:
		s.BreakerClosings++
	}
}

// Attempt records one attempt at a listing, finished at at.
func (r *Recorder) Attempt(project, model string, route Route, kind Kind, o Outcome, at time.Time) {
	r.mu.Lock()
	defer r.mu.Unlock()
	r.spool(spoolEntry{Op: opAttempt, At: at, Project: project, Model: model, Route: routeOf(route), Kind: kind, Outcome: &o})
	s := r.stat(route.ListingID, at)
	s.Attempts++
	switch o.Class {
	case traffic.Counted:
		s.Errors++
		return
	case traffic.NotCounted:
		s.ClientErrors++
		return
	case traffic.RateLimited:
		s.RateLimited++
		return
	}
	switch kind {
	case Routed:
		s.Routed++
	case Pinned:
		s.Pinned++
	case Exploration:
		s.Exploration++
	case Fallback:
		s.Fallback++
	}
	s.TTFTMsSum += o.TTFT.Milliseconds()
	s.DurationMs += o.Total.Milliseconds()
	s.InputTokens += o.Usage.Input
	s.CachedInputTokens += o.Usage.Cached
	s.CacheReadTokens += o.Usage.CacheRead
	s.CacheWriteTokens += o.Usage.CacheWrite
	s.OutputTokens += o.Usage.Output
	s.ToolCalls += o.ToolCalls
	s.MalformedToolCalls += o.BadToolCalls

	hk := hourKey{project, model, route.ID, at.UTC().Truncate(time.Hour)}
	h := r.hours[hk]
	if h == nil {
		h = &traffic.Hour{Start: hk.hour, Candidate: route.ID}
		r.hours[hk] = h
	}
	r.changed(hk)
	for _, h := range []*traffic.Hour{h, r.projectMinute(project, route, at)} {
		h.Successes++
		h.InputTokens += o.Usage.Input
		h.CachedInputTokens += o.Usage.Cached + o.Usage.CacheRead // a read of the explicit cache is a cache hit too
		h.OutputTokens += o.Usage.Output
	}
}

// CacheHit records a request the gateway answered from its response cache
// with the answer route gave: no carrier served it, and its hour no longer
// teaches the project's cache rates (seed 001).
func (r *Recorder) CacheHit(project, model string, route Route, at time.Time) {
	r.mu.Lock()
	defer r.mu.Unlock()
	r.spool(spoolEntry{Op: opCacheHit, At: at, Project: project, Model: model, Route: routeOf(route)})
	hk := hourKey{project, model, route.ID, at.UTC().Truncate(time.Hour)}
	h := r.hours[hk]
	if h == nil {
		h = &traffic.Hour{Start: hk.hour, Candidate: route.ID}
		r.hours[hk] = h
	}
	r.changed(hk)
	h.ResponseCacheHits++
	r.projectMinute(project, route, at).ResponseCacheHits++
}

// changed marks an hour for the fleet (mu held).
func (r *Recorder) changed(k hourKey) {
	if r.dirty == nil {
		r.dirty = map[hourKey]struct{}{}
	}
	r.dirty[k] = struct{}{}
}

// TakeChangedHours returns the running totals of every hour changed since
// the last call, by project and model, for the fleet's learned rates.
func (r *Recorder) TakeChangedHours() []fleet.ProjectHours {
	r.mu.Lock()
	defer r.mu.Unlock()
	by := map[[2]string]*fleet.ProjectHours{}
	var out []fleet.ProjectHours
	for k := range r.dirty {
		h := r.hours[k]
		if h == nil {
			continue // pruned
		}
		pm := [2]string{k.project, k.model}
		if by[pm] == nil {
			by[pm] = &fleet.ProjectHours{Project: k.project, Model: k.model}
		}
		by[pm].Hours = append(by[pm].Hours, *h)
	}
	clear(r.dirty)
	for _, ph := range by {
		out = append(out, *ph)
	}
	return out
}

// Unpublished marks hours the fleet did not get as changed again.
func (r *Recorder) Unpublished(all []fleet.ProjectHours) {
	r.mu.Lock()
	defer r.mu.Unlock()
	for _, ph := range all {
		for _, h := range ph.Hours {
			r.changed(hourKey{ph.Project, ph.Model, h.Candidate, h.Start})
		}
	}
}

// Capped records a request a listing could not take at its cap.
func (r *Recorder) Capped(route Route, at time.Time) {
	r.mu.Lock()
	defer r.mu.Unlock()
	r.spool(spoolEntry{Op: opCapped, At: at, Route: routeOf(route)})
	r.stat(route.ListingID, at).Capped++
}

// HeldBack records a request of the listing's model elected while the
// gateway's limits held the listing back.
func (r *Recorder) HeldBack(route Route, at time.Time) {
	r.mu.Lock()
	defer r.mu.Unlock()
	r.spool(spoolEntry{Op: opHeldBack, At: at, Route: routeOf(route)})
	r.stat(route.ListingID, at).HeldBack++
}

// Demanded records a customer's request as sent, with what it asked for
// besides the model (catalogue.AskedKeys).
func (r *Recorder) Demanded(model string, w election.Workload, kind RequestKind, promptTokens int64, asked []string, at time.Time) {
	r.mu.Lock()
	defer r.mu.Unlock()
	r.spool(spoolEntry{Op: opDemanded, At: at, Model: model, Workload: w, Request: &kind, Prompt: promptTokens, Asked: asked})
	k := demandKey{model, w, at.UTC().Truncate(time.Minute), kind}
	d := r.demand[k]
	if d == nil {
		d = &Demand{}
		r.demand[k] = d
	}
	for _, key := range asked {
		if d.Asked == nil {
			d.Asked = map[string]int64{}
		}
		if _, known := d.Asked[key]; !known {
			// The portal takes so many keys a row, of them so many sets
			// of preferences: a minute with more sets reports the first
			// ones (the projection replays the rest as plain requests).
			// So many projects: the projection elects the rest on the
			// rates learned of the whole model.
			set, project := catalogue.IsPreferenceSet(key), catalogue.IsProjectKey(key)
			if len(d.Asked) >= catalogue.MaxAskedKeys || set && d.sets >= catalogue.MaxPreferenceSets ||
				project && d.projects >= catalogue.MaxProjectKeys {
				continue
			}
			if set {
				d.sets++
			}
			if project {
				d.projects++
			}
		}
		d.Asked[key]++
	}
	d.Requests++
	d.PromptTokens += promptTokens
	if promptTokens >= election.CachePromptTokens {
		d.LargeRequests++
		d.LargePromptTokens += promptTokens
	}
}

// Hours is a project's hourly aggregates for a model over the learned
// window, dropping older ones as it goes.
func (r *Recorder) Hours(project, model string, now time.Time) []traffic.Hour {
	r.mu.Lock()
	defer r.mu.Unlock()
	var out []traffic.Hour
	for k, h := range r.hours {
		if k.hour.Before(now.Add(-traffic.LearnedWindow - time.Hour)) {
			delete(r.hours, k)
			continue
		}
		if k.project == project && k.model == model {
			out = append(out, *h)
		}
	}
	return out
}

// MinuteStat is one listing's closed minute.
type MinuteStat struct {
	ListingID int64
	Minute    time.Time
	Stat
}

// TakeClosed removes and returns every minute that ended before until, in
// time order: a minute is reported once, whole.
func (r *Recorder) TakeClosed(until time.Time) []MinuteStat {
	r.mu.Lock()
	defer r.mu.Unlock()
	var out []MinuteStat
	for k, s := range takeClosed(r.minutes, func(k minuteKey) time.Time { return k.minute }, until) {
		out = append(out, MinuteStat{ListingID: k.listing, Minute: k.minute, Stat: s})
	}
	sort.Slice(out, func(i, j int) bool {
		if !out[i].Minute.Equal(out[j].Minute) {
			return out[i].Minute.Before(out[j].Minute)
		}
		return out[i].ListingID < out[j].ListingID
	})
	return out
}

// takeClosed removes from m, and returns, the entries whose minute ended
// before until: a minute is reported once, whole.
func takeClosed[K comparable, V any](m map[K]*V, minuteOf func(K) time.Time, until time.Time) map[K]V {
	out := map[K]V{}
	for k, v := range m {
		if !minuteOf(k).Add(time.Minute).After(until) {
			out[k] = *v
			delete(m, k)
		}
	}
	return out
}

// DemandMinute is one model, workload and kind of request's closed minute.
type DemandMinute struct {
	Model    string
	Workload election.Workload
	Minute   time.Time
	Kind     RequestKind
	Demand
}

// TakeClosedDemand removes and returns the demand of every minute that ended
// before until, in time order.
func (r *Recorder) TakeClosedDemand(until time.Time) []DemandMinute {
	r.mu.Lock()
	defer r.mu.Unlock()
	var out []DemandMinute
	for k, d := range takeClosed(r.demand, func(k demandKey) time.Time { return k.minute }, until) {
		out = append(out, DemandMinute{Model: k.model, Workload: k.workload, Minute: k.minute, Kind: k.kind, Demand: d})
	}
	sort.Slice(out, func(i, j int) bool {
		a, b := out[i], out[j]
		if !a.Minute.Equal(b.Minute) {
			return a.Minute.Before(b.Minute)
		}
		if a.Model != b.Model {
			return a.Model < b.Model
		}
		if a.Workload != b.Workload {
			return a.Workload < b.Workload
		}
		if a.Kind.Streaming != b.Kind.Streaming {
			return !a.Kind.Streaming
		}
		return a.Kind.Requires < b.Kind.Requires
	})
	return out
}

// Totals sums every minute still held (for tests and the status page).
func (r *Recorder) Totals() map[int64]Stat {
	r.mu.Lock()
	defer r.mu.Unlock()
	out := map[int64]Stat{}
	for k, s := range r.minutes {
		t := out[k.listing]
		t.add(s)
		out[k.listing] = t
	}
	return out
}

func (s *Stat) add(o *Stat) {
	s.Attempts += o.Attempts
	s.Errors += o.Errors
	s.ClientErrors += o.ClientErrors
	s.TTFTMsSum += o.TTFTMsSum
	s.DurationMs += o.DurationMs
	s.InputTokens += o.InputTokens
	s.CachedInputTokens += o.CachedInputTokens
	s.OutputTokens += o.OutputTokens
	s.Capped += o.Capped
	s.GatewayCounts.Add(o.GatewayCounts)
}
