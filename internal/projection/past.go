package projection

import (
	"context"
	"hash/fnv"
	"maps"
	"math"
	"slices"
	"strconv"
	"sync"
	"sync/atomic"
	"time"

	"github.com/airside/airside/internal/catalogue"
	"github.com/airside/airside/internal/earnings"
	"github.com/airside/airside/internal/election"
	"github.com/airside/airside/internal/fare"
	"github.com/airside/airside/internal/preview"
	"github.com/airside/airside/internal/routing"
	"github.com/airside/airside/internal/traffic"
)

// Reach is how far back a traffic page projects, hour by hour,
// what the preview would have said.
const Reach = 31 * 24 * time.Hour

// frozenAfter is the age past which an hour's projection can no longer
// change: the portal refuses metrics and demand older than
// catalogue.MaxBucketAge (25 hours), and fares are never published into
// the past. Such hours are projected once per model and what of its market
// they read (marketPrint), and kept.
const frozenAfter = catalogue.MaxBucketAge + time.Hour

// Past is, for one listing, the share the preview projected in
// each past hour from what was then in force, and its model's requests and
// requests turned away at caps in that hour: the projection a traffic page
// sets beside the measured share.
type Past struct {
	hours    []time.Time
	shares   []preview.Share
	requests []int64
	capped   []int64
	// reported says, per hour, whether a gateway reported who held the
	// model's shapes in it: the replay then followed routing's own moves.
	reported []bool
	// end is where the projection left the model after its last hour.
	end projectionEnd
}

// projectionEnd is the model's routing state after a projection's last
// hour: each shape's holder, and the rates routing had learned by then, of
// the model's requests and of each API project's (nil: no project's
// minutes reported). A projection of now starts from it.
type projectionEnd struct {
	holders  map[string]string
	learned  traffic.Learned
	projects map[string]traffic.Learned
}

// projectParts are the parts of each shape's requests in demand by project
// (preview.ProjectPartsFromDemand) with the rates routing has learned of
// each project by the end: each elects on its own rates looking forward as
// it did in the replay. A project named but never reported has learned
// nothing; nil when no project's minutes were reported (every request on
// the model's rates, as projectRates.parts).
func (e projectionEnd) projectParts(demand map[string]catalogue.WorkloadDemand) map[string][]preview.ProjectPart {
	if e.projects == nil {
		return nil
	}
	return groupProjects(preview.ProjectPartsFromDemand(demand), func(project string) traffic.Learned { return e.projects[project] })
}

// over is the projection weighed by the model's requests over the hours
// from since (inclusive) to until (exclusive).
func (p Past) Over(since, until time.Time) (preview.Share, bool) {
	var w preview.ShareWeigher
	for i, h := range p.hours {
		if !h.Before(since) && h.Before(until) {
			w.Add(p.shares[i], p.requests[i])
		}
	}
	return w.Share()
}

// cappedSince sums what the model's caps turned away from the hour from on.
func (p Past) CappedSince(from time.Time) int64 {
	var n int64
	for i, h := range p.hours {
		if !h.Before(from) {
			n += p.capped[i]
		}
	}
	return n
}

// HoldersReported says whether a gateway reported who held the model's
// shapes in the hour starting at h: the replay of it then followed the
// moves routing made, its limits' included (a slow incumbent losing its
// shape).
func (p Past) HoldersReported(h time.Time) bool {
	i, found := slices.BinarySearchFunc(p.hours, h, time.Time.Compare) // hours run oldest first
	return found && i < len(p.reported) && p.reported[i]
}

// modelProjection is a model's projection hour by hour: each listing's
// share (rows in the order of listings), the model's requests and capped
// requests, and whether holders were reported in the hour.
type modelProjection struct {
	listings         []int64
	hours            []time.Time
	shares           [][]preview.Share
	requests, capped []int64
	reported         []bool
	end              projectionEnd
}

// of is one listing's part of the projection (ok false for a listing the
// model's market does not hold).
func (m modelProjection) of(id int64) (Past, bool) {
	i := slices.Index(m.listings, id)
	if i < 0 {
		return Past{}, false
	}
	p := Past{hours: m.hours, requests: m.requests, capped: m.capped, reported: m.reported, shares: make([]preview.Share, len(m.hours)), end: m.end}
	for h := range m.hours {
		p.shares[h] = m.shares[h][i]
	}
	return p, true
}

// append adds o's hours after m's.
func (m *modelProjection) append(o modelProjection) {
	m.hours = append(m.hours, o.hours...)
	m.shares = append(m.shares, o.shares...)
	m.requests = append(m.requests, o.requests...)
	m.capped = append(m.capped, o.capped...)
	m.reported = append(m.reported, o.reported...)
	m.end = o.end
}

// projectionCache keeps, per model, window start and market print,
// the projection of the hours that can no longer change and the holders at
// their end, so a view projects only the last day or so.
type projectionCache struct {
	mu sync.Mutex
	by map[projectionKey]*frozenProjection
}

type projectionKey struct {
	model  string
	since  time.Time
	market uint64 // marketPrint
}

// frozenProjection is the frozen part of one model's projection: the hours
// before through, and the holders after them; and the last projection of
// the hours after them (in whole), kept while liveKey holds and for at most
// liveFor.
type frozenProjection struct {
	mu      sync.Mutex
	through time.Time
	proj    modelProjection
	holders map[string]string

	liveKey liveKey
	liveAt  time.Time
	// live is the projection of the live hours (from through on), and
	// liveHolders the holders at the start of each of its hours: after a
	// metric batch that touched only the last hours, the hours before
	// them are kept and the rest projected from the holders there.
	live        modelProjection
	liveHolders []map[string]string
	// whole is the frozen and the live hours together, as last returned: a
	// view with the live hours kept shares it rather than copying a month
	// of hours again (readers never change a projection).
	whole modelProjection
	// served is whole with the key and time it was made at, read without
	// mu: a view that may take a projection a batch behind
	// (Projector.StaleFor) takes it while mu is held by the projection of
	// the next.
	served atomic.Pointer[servedProjection]
}

// servedProjection is a model's whole projection as last made, the live
// key it was made from and when.
type servedProjection struct {
	key   liveKey
	at    time.Time
	whole modelProjection
}

// liveKey is what the projection of the live hours was computed from,
// besides the entry's model, window start and market print: the
// hours it covers, the catalogue revision (a fare published now is in
// force in them) and the metric batches recorded by then.
type liveKey struct {
	from, last time.Time
	revision   int64
	metrics    uint64
}

// liveFor bounds how long a projection of the live hours is kept: this
// process's metric batches end it at once (liveKey), another process's
// (several portals on one PostgreSQL) within liveFor. The demand mix is
// kept as long (demandCache).
const liveFor = time.Minute

// liveValid reports whether the entry's live projection was made from k
// and is younger than liveFor at now.
func (e *frozenProjection) liveValid(k liveKey, now time.Time) bool {
	return e.liveKey == k && !e.liveAt.IsZero() && keptFresh(e.liveAt, now, liveFor)
}

// keptFresh reports whether something kept at at is still fresh at now
// for a lifetime of life (a clock that went back makes it stale).
func keptFresh(at, now time.Time, life time.Duration) bool {
	return !now.Before(at) && now.Sub(at) < life
}

// maxFrozen bounds the cache: a month of hours of one model of 20 listings
// is about 0.5 MB.
const maxFrozen = 256

func (c *projectionCache) entry(k projectionKey) *frozenProjection {
	c.mu.Lock()
	defer c.mu.Unlock()
	if e, ok := c.by[k]; ok {
		return e
	}
	if c.by == nil {
		c.by = map[projectionKey]*frozenProjection{}
	}
	for old := range c.by {
		// A model whose market changed starts again; the others keep theirs.
		if old.model == k.model && old.since.Equal(k.since) || len(c.by) >= maxFrozen {
			delete(c.by, old)
		}
	}
	e := &frozenProjection{through: k.since, holders: map[string]string{}}
	c.by[k] = e
	return e
}

// ListingHours is the listing's projection hour by hour from since to until
// (projectModels says how); ok is false for a listing routing does not
// know.
func (pj *Projector) ListingHours(ctx context.Context, l *catalogue.Listing, since, until time.Time) (Past, bool, error) {
	models, err := pj.projectModels(ctx, []string{l.Model.Slug}, since, until)
	if err != nil {
		return Past{}, false, err
	}
	m, ok := models[l.Model.Slug]
	if !ok {
		return Past{}, false, nil
	}
	p, ok := m.of(l.ID)
	return p, ok, nil
}

// Shares is, for each listing, the share the preview projects
// over since to until from what was in force hour by hour, as a page shows
// it; a listing routing does not know, or whose model had no requests, has
// none.
func (pj *Projector) Shares(ctx context.Context, listings []catalogue.Listing, since, until time.Time) (map[int64]preview.Share, error) {
	whole, _, err := pj.SharesIn(ctx, listings, since, until, until)
	return whole, err
}

// SharesIn is Shares over since to until and, from the same projection
// (the same holders carried from since), over from to until: a page's
// window and the hour under way in it agree with each other.
func (pj *Projector) SharesIn(ctx context.Context, listings []catalogue.Listing, since, until, from time.Time) (whole, tail map[int64]preview.Share, err error) {
	var models []string
	for _, l := range listings {
		models = append(models, l.Model.Slug)
	}
	projections, err := pj.projectModels(ctx, models, since, until)
	if err != nil {
		return nil, nil, err
	}
	whole, tail = map[int64]preview.Share{}, map[int64]preview.Share{}
	for _, l := range listings {
		if share, any := projections[l.Model.Slug].shareOver(l.ID, since, until); any {
			whole[l.ID] = share
		}
		if share, any := projections[l.Model.Slug].shareOver(l.ID, from, until); any {
			tail[l.ID] = share
		}
	}
	return whole, tail, nil
}

// shareOver is the listing's projection weighed by the model's requests
// over the hours from since (inclusive) to until (exclusive), as
// Past.over, read in place (a page of every listing reads a
// month of hours per model).
func (m modelProjection) shareOver(id int64, since, until time.Time) (preview.Share, bool) {
	i := slices.Index(m.listings, id)
	if i < 0 {
		return preview.Share{}, false
	}
	// The hours are in order: only those in the window are read (the hour
	// under way is one of a month of them).
	from, _ := slices.BinarySearchFunc(m.hours, since, time.Time.Compare)
	to, _ := slices.BinarySearchFunc(m.hours, until, time.Time.Compare)
	var w preview.ShareWeigher
	for h := from; h < to; h++ {
		w.Add(m.shares[h][i], m.requests[h])
	}
	return w.Share()
}

// projectModels rebuilds, for every hour from since to until (at most
// Reach back from until), what was in force for each model
// (every listing's published fare and health, the hour's workload mix and
// prompt sizes, the rates routing had learned) and projects every
// listing's share of each hour as the preview would have
// (preview.ProjectHistory). An hour in which a fare was published is
// projected in parts, before and after, each weighed by the model's
// requests in it. Hours older than frozenAfter come from projectionCache.
// A model routing does not know is left out.
func (pj *Projector) projectModels(ctx context.Context, models []string, since, until time.Time) (map[string]modelProjection, error) {
	snap, err := pj.Routing.Current(ctx)
	if err != nil {
		return nil, err
	}
	since, until = since.UTC().Truncate(time.Hour), until.UTC()
	if reach := until.Add(-Reach).Truncate(time.Hour); since.Before(reach) {
		since = reach
	}
	frozen := pj.Now().UTC().Add(-frozenAfter).Truncate(time.Hour)
	if frozen.Before(since) {
		frozen = since
	}
	if last := until.Truncate(time.Hour); frozen.After(last) {
		frozen = last
	}

	now := pj.Now()
	// The live hours' projection is kept per model (liveKey): a view after
	// no new metrics reads nothing for the model.
	live := liveKey{from: frozen, last: until.Add(-time.Nanosecond).Truncate(time.Hour), revision: snap.Revision, metrics: pj.Reads.MetricsWritten()}
	type work struct {
		market preview.Market
		entry  *frozenProjection
		from   time.Time // the first hour to project
		kept   bool      // the live hours' projection is kept: nothing to project
		// redo is the first live hour to project again when the metric
		// batches since the live projection touched only the hours from
		// it on (the hours before it kept; zero: project them all).
		redo time.Time
	}
	jobs := map[string]*work{}
	var ids []int64
	readFrom, projectFrom := until, until // the first hour to read the rollups of, and to project
	// Entries are locked in the models' order: two views of overlapping
	// models never wait on each other in a circle.
	models = slices.Sorted(slices.Values(models))
	models = slices.Compact(models)
	markets := make(map[string]preview.Market, len(models))
	entries := make(map[string]*frozenProjection, len(models))
	for _, model := range models {
		if market, ok := baseMarket(snap, model); ok {
			markets[model] = market
			entries[model] = pj.projections.entry(projectionKey{model: model, since: since, market: marketPrint(market)})
		}
	}
	if out, ok := pj.takeServed(ctx, entries, live, now, models, since, until); ok {
		return out, nil
	}
	for _, model := range models {
		market, ok := markets[model]
		if !ok {
			continue
		}
		w := &work{market: market, entry: entries[model]}
		w.entry.mu.Lock()
		defer w.entry.mu.Unlock()
		w.from = w.entry.through
		if w.from.After(frozen) { // the clock went back (tests move it): start again
			w.entry.through, w.entry.proj, w.entry.holders, w.from = since, modelProjection{}, map[string]string{}, since
			w.entry.liveAt = time.Time{}
		}
		jobs[model] = w
		if w.kept = !w.from.Before(frozen) && w.entry.liveValid(live, now); w.kept {
			continue
		}
		for _, ml := range market.Listings {
			ids = append(ids, ml.ID)
		}
		first := w.from
		if !w.from.Before(frozen) {
			if w.redo = pj.liveRedo(w.entry, live, now); !w.redo.IsZero() {
				first = w.redo
			}
		}
		if first.Before(projectFrom) {
			projectFrom = first
		}
		// The rollups are read from the first live hour even when only
		// the hour under way is projected again: the read's window then
		// stays the one kept from the last projection, and after a batch
		// of the minute under way only that hour is read again.
		if !w.from.Before(frozen) {
			first = frozen
		}
		if first.Before(readFrom) {
			readFrom = first
		}
	}
	var hourly map[int64][]catalogue.HourlyPoint
	var history map[int64][]earnings.FareSpan
	var demand map[string]map[time.Time]map[string]catalogue.WorkloadDemand
	var samples map[int64][]catalogue.HealthSample
	if len(ids) > 0 {
		// A day before the first hour: an hour's health and learned rates
		// read the day before it.
		// Kept as the traffic pages keep their reads (splitMetrics): after
		// a batch of the minute under way only that hour is read again.
		if hourly, err = splitMetrics(pj, "hourly", ids, readFrom.Add(-24*time.Hour), until, hourlyPoints,
			func(from, to time.Time) (map[int64][]catalogue.HourlyPoint, error) {
				return pj.Reads.HourlyTraffic(ctx, ids, from, to)
			}, mergeLists); err != nil {
			return nil, err
		}
		if history, err = pj.fareHistories(ctx, snap.Revision, ids); err != nil {
			return nil, err
		}
		var projected []string
		for model, w := range jobs {
			if !w.kept {
				projected = append(projected, model)
			}
		}
		if demand, err = pj.Reads.DemandByHour(ctx, projected, projectFrom, until, election.CachePromptTokens); err != nil {
			return nil, err
		}
		// The health routing elected on, from a sample before the first
		// hour projected on (a part reads the latest at or before it).
		if samples, err = pj.Reads.HealthSamples(ctx, ids, projectFrom.Add(-2*catalogue.HealthSampleEvery), until); err != nil {
			return nil, err
		}
	}
	// The holders gateways reported, from a day before the first hour
	// projected (a part starts from the latest at or before it).
	var unkept []string
	for model, w := range jobs {
		if !w.kept {
			unkept = append(unkept, model)
		}
	}
	reported, err := pj.Reads.ShapeHolders(ctx, unkept, projectFrom.Add(-24*time.Hour), until)
	if err != nil {
		return nil, err
	}
	// And each project's hours, from the learned window before the first
	// hour projected: the rates routing learned of each project. Kept as
	// the rollups are (after a batch only the hour under way is read).
	var unkeptIDs []int64
	for _, model := range unkept {
		for _, ml := range jobs[model].market.Listings {
			unkeptIDs = append(unkeptIDs, ml.ID)
		}
	}
	projects, err := splitMetrics(pj, "project-hours", unkeptIDs, projectFrom.Add(-traffic.LearnedWindow-time.Hour), until, projectHourPoints,
		func(from, to time.Time) (map[string][]catalogue.ProjectHour, error) {
			return pj.Reads.ProjectHours(ctx, unkept, from, to)
		}, mergeLists)
	if err != nil {
		return nil, err
	}
	// The minutes of every live hour to project that is cut in parts,
	// every model's at once and kept: a part is weighed by its minutes, and
	// after each batch a carrier's overview would read them a model at a
	// time.
	var asks []minuteAsk
	for _, model := range unkept {
		w := jobs[model]
		ids := make([]int64, len(w.market.Listings))
		for i, ml := range w.market.Listings {
			ids[i] = ml.ID
		}
		for h := range hourCuts(ids, history, samples, heldEvents(reported[model]), maxTime(projectFrom, frozen), until) {
			asks = append(asks, minuteAsk{ids: ids, hour: h})
		}
	}
	if _, err := pj.requestsByMinuteOf(ctx, asks); err != nil {
		return nil, err
	}
	out := map[string]modelProjection{}
	for model, w := range jobs {
		lids := make([]int64, len(w.market.Listings))
		for i, ml := range w.market.Listings {
			lids[i] = ml.ID
		}
		w.entry.proj.listings = lids
		if w.kept {
			out[model] = w.entry.whole
			continue
		}
		if w.from.Before(frozen) {
			part, _, err := pj.projectHours(ctx, w.market, model, w.from, frozen, hourly, history, demand[model], samples, reported[model], projects[model], w.entry.holders)
			if err != nil {
				return nil, err
			}
			w.entry.proj.append(part)
			w.entry.through = frozen
		}
		// The live hours: all of them, or those from redo on, after the
		// kept ones before it (copied: readers share the old slices).
		start, holders := frozen, maps.Clone(w.entry.holders)
		var liveProj modelProjection
		var liveHolders []map[string]string
		if !w.redo.IsZero() {
			k := int(w.redo.Sub(frozen) / time.Hour)
			start, holders = w.redo, maps.Clone(w.entry.liveHolders[k])
			liveProj.append(w.entry.live.prefix(k))
			liveHolders = append(liveHolders, w.entry.liveHolders[:k]...)
		}
		hours, starts, err := pj.projectHours(ctx, w.market, model, start, until, hourly, history, demand[model], samples, reported[model], projects[model], holders)
		if err != nil {
			return nil, err
		}
		liveProj.append(hours)
		liveHolders = append(liveHolders, starts...)
		m := modelProjection{listings: lids}
		m.append(w.entry.proj)
		m.append(liveProj)
		w.entry.liveKey, w.entry.liveAt, w.entry.whole = live, now, m
		w.entry.live, w.entry.liveHolders = liveProj, liveHolders
		w.entry.served.Store(&servedProjection{key: live, at: now, whole: m})
		out[model] = m
	}
	return out, nil
}

// baseMarket is the model's market in the routing catalogue with each
// listing's stored health: what the catalogue served for an hour nothing
// had been reported before (ok false: routing does not know the model).
func baseMarket(snap *routing.Snapshot, model string) (preview.Market, bool) {
	market, ok := snap.Market(model)
	if !ok {
		return preview.Market{}, false
	}
	base := preview.Market{Listings: make([]catalogue.Listing, len(market.Listings)), Checks: market.Checks}
	for i, ml := range market.Listings {
		base.Listings[i] = ml
		base.Listings[i].Health, _ = snap.StoredHealth(ml.ID)
	}
	return base, true
}

// histories keeps the listings' fare histories the projection reads, as
// of one routing revision: a history changes only when a fare is
// published, which moves the revision (and, with it, the live
// projection's key), so a batch of metrics reads none of them again.
type histories struct {
	mu       sync.Mutex
	revision int64
	by       map[int64][]earnings.FareSpan // nil: the listing has none
}

// fareHistories is the store's FareHistory of the listings, kept per
// revision (histories). Readers never change what it returns.
func (pj *Projector) fareHistories(ctx context.Context, revision int64, ids []int64) (map[int64][]earnings.FareSpan, error) {
	c := &pj.histories
	out := make(map[int64][]earnings.FareSpan, len(ids))
	var missing []int64
	c.mu.Lock()
	if c.by == nil || c.revision != revision {
		c.by, c.revision = map[int64][]earnings.FareSpan{}, revision
	}
	for _, id := range ids {
		if h, ok := c.by[id]; ok {
			out[id] = h
		} else {
			missing = append(missing, id)
		}
	}
	c.mu.Unlock()
	if len(missing) == 0 {
		return out, nil
	}
	read, err := pj.Reads.FareHistory(ctx, missing)
	if err != nil {
		return nil, err
	}
	c.mu.Lock()
	defer c.mu.Unlock()
	for _, id := range missing {
		out[id] = read[id]
		if c.revision == revision {
			c.by[id] = read[id]
		}
	}
	return out, nil
}

// FareHistory is the store's FareHistory of the listings as of the
// routing revision in force, kept as the projection keeps it
// (fareHistories): a traffic page reads a month of fares once per
// publication, not once per view.
func (pj *Projector) FareHistory(ctx context.Context, ids []int64) (map[int64][]earnings.FareSpan, error) {
	snap, err := pj.Routing.Current(ctx)
	if err != nil {
		return nil, err
	}
	return pj.fareHistories(ctx, snap.Revision, ids)
}

// liveRedo is the first live hour to project again for the entry: the
// hour of the earliest minute this process's metric batches touched since
// its live projection, when that projection is otherwise current (the
// same hours and revision, younger than liveFor) and the hour is one of
// its hours after the first; zero to project every live hour.
func (pj *Projector) liveRedo(e *frozenProjection, k liveKey, now time.Time) time.Time {
	kept := e.liveKey
	if kept.from != k.from || kept.last != k.last || kept.revision != k.revision || e.liveAt.IsZero() || !keptFresh(e.liveAt, now, liveFor) ||
		len(e.liveHolders) != len(e.live.hours) {
		return time.Time{}
	}
	touched, ok := pj.Reads.MetricsTouchedSince(kept.metrics)
	if !ok || touched.IsZero() {
		return time.Time{}
	}
	redo := touched.UTC().Truncate(time.Hour)
	i := int(redo.Sub(k.from) / time.Hour)
	if i <= 0 || i >= len(e.live.hours) || !e.live.hours[i].Equal(redo) {
		return time.Time{}
	}
	return redo
}

// prefix is the projection's first k hours (sharing m's rows; append to it
// copies).
func (m modelProjection) prefix(k int) modelProjection {
	return modelProjection{listings: m.listings, hours: m.hours[:k:k], shares: m.shares[:k:k], requests: m.requests[:k:k], capped: m.capped[:k:k],
		reported: m.reported[:k:k]}
}

// hourCuts are the moments within each hour from since to until at which
// what routing elected on changed, by hour: fare publications, the health
// samples (what routing elected on from then) and every second a gateway
// reported another holder of a shape than before (routing moved it there:
// a limit, a kind of request the replay cannot tell). Each starts a part
// of its hour.
func hourCuts(ids []int64, history map[int64][]earnings.FareSpan, samples map[int64][]catalogue.HealthSample, held []heldEvent,
	since, until time.Time) map[time.Time][]time.Time {
	changes := map[time.Time][]time.Time{}
	add := func(at time.Time) {
		if h := at.Truncate(time.Hour); !at.Equal(h) && !h.Before(since) && h.Before(until) {
			changes[h] = append(changes[h], at)
		}
	}
	for _, id := range ids {
		for _, f := range history[id] {
			add(f.From)
		}
		for _, sm := range samples[id] {
			add(sm.At)
		}
	}
	for _, at := range holderChanges(held) {
		add(at)
	}
	return changes
}

// projectHours projects the model's hours from since to until, from the
// holders given (updated to those after the last hour), and returns the
// holders at the start of each hour.
func (pj *Projector) projectHours(ctx context.Context, market preview.Market, model string, since, until time.Time,
	hourly map[int64][]catalogue.HourlyPoint, history map[int64][]earnings.FareSpan, demand map[time.Time]map[string]catalogue.WorkloadDemand,
	samples map[int64][]catalogue.HealthSample, reported []catalogue.ShapeHolder, projectHours []catalogue.ProjectHour,
	holders map[string]string) (modelProjection, []map[string]string, error) {
	ids := make([]int64, len(market.Listings))
	modelRequests, modelCapped := map[time.Time]int64{}, map[time.Time]int64{}
	var learnedHours []traffic.Hour
	for i := range market.Listings {
		ml := &market.Listings[i]
		ids[i] = ml.ID
		for _, hp := range hourly[ml.ID] {
			modelRequests[hp.Hour.UTC()] += hp.Requests
			modelCapped[hp.Hour.UTC()] += hp.Capped
			learnedHours = append(learnedHours, traffic.Hour{Start: hp.Hour.UTC(), Candidate: preview.CandidateID(ml),
				Successes: hp.Requests - hp.Errors - hp.ClientErrors, InputTokens: hp.InputTokens, CachedInputTokens: hp.CachedInputTokens,
				OutputTokens: hp.OutputTokens})
		}
	}
	events := heldEvents(reported)
	changes := hourCuts(ids, history, samples, events, since, until)
	elected := electedSpans(reported)
	reportedHours := map[time.Time]bool{}
	for i := range reported {
		reportedHours[reported[i].Minute.Truncate(time.Hour)] = true
	}
	candidates := make(map[int64]string, len(market.Listings))
	for i := range market.Listings {
		candidates[market.Listings[i].ID] = preview.CandidateID(&market.Listings[i])
	}
	held := newHeldCursor(events, candidates)
	projectRates := newProjectRates(projectHours, candidates)
	var p modelProjection
	var moments []preview.Moment
	var parts []hourPart
	// Scratch for the rates learned within an hour, reused hour to hour.
	var earlier, scratch []traffic.Hour
	for h := since; h.Before(until); h = h.Add(time.Hour) {
		var mix map[string]float64
		var prompts map[string]int64
		var kinds map[string][]preview.Kind
		var shareParts map[string]float64
		var preferences map[string][]preview.PreferencePart
		var projectShares map[string]map[string]float64
		if d := demand[h]; len(d) > 0 {
			projectShares = preview.ProjectPartsFromDemand(d)
			mix, _ = preview.MixFromDemand(d)
			prompts = preview.PromptsFromDemand(d)
			kinds = preview.KindsFromDemand(d)
			shareParts = preview.SharePartsFromDemand(d)
			preferences = preview.PreferencePartsFromDemand(d)
		}
		rebuilt := map[int64]catalogue.Health{}
		var tried map[int64]preview.TriedRates
		for _, id := range ids {
			if hh, ok := catalogue.HealthAt(hourly[id], h); ok {
				rebuilt[id] = hh
			}
			if hp, found := hourOf(hourly[id], h); found && len(shareParts) > 0 {
				if tried == nil {
					tried = map[int64]preview.TriedRates{}
				}
				tried[id] = preview.TriedRatesOf(hp.Counts)
			}
		}
		splits, weights, learnedPart, err := pj.hourSplits(ctx, ids, h, changes[h], elected)
		if err != nil {
			return p, nil, err
		}
		mixes, weights := partMixes(mix, h, splits, weights, elected)
		heldBack := heldBackParts(ids, hourly, h, modelRequests[h])
		// The hours routing learned from before h (those within the learned
		// window), for the rates learned within it; a part adds the hour's
		// requests routing had learned from by its start.
		earlier = earlier[:0]
		haveEarlier := false
		atStart := traffic.Learn(learnedHours, h.Add(-time.Second))
		for i, from := range splits {
			health := sampledHealth(ids, samples, rebuilt, from)
			learned := atStart
			if i > 0 {
				if !haveEarlier {
					haveEarlier = true
					for _, lh := range learnedHours {
						if lh.Start.Before(h) && lh.Start.After(h.Add(-traffic.LearnedWindow-time.Hour)) {
							earlier = append(earlier, lh)
						}
					}
				}
				learned, scratch = learnedWithin(earlier, scratch, hourly, market, h, from, learnedPart[i])
			}
			partMix := mix
			if mixes != nil {
				partMix = mixes[i]
			}
			m := preview.Moment{At: from, Fares: map[int64]*fare.Fare{}, Health: health, Mix: partMix, Prompts: prompts, Kinds: kinds, Learned: learned,
				Idle: modelRequests[h] == 0, Holders: held.at(from), ShareParts: shareParts, Preferences: preferences, Tried: tried,
				Projects: projectRates.parts(projectShares, from, learnedDone(i, learnedPart))}
			for _, id := range ids {
				if f := earnings.FareAt(history[id], from); f != nil {
					m.Fares[id] = f
				}
			}
			// The part's requests elected while the gateway's limits held a
			// listing back are elected without it (the hour's figures
			// taken as even over its parts).
			rest := weights[i]
			for _, hb := range heldBack {
				held := m
				held.HeldBack = []int64{hb.id}
				moments = append(moments, held)
				parts = append(parts, hourPart{hour: len(p.hours), weight: weights[i] * hb.part})
				rest -= weights[i] * hb.part
			}
			moments = append(moments, m)
			parts = append(parts, hourPart{hour: len(p.hours), weight: rest})
		}
		p.hours, p.requests, p.capped = append(p.hours, h), append(p.requests, modelRequests[h]), append(p.capped, modelCapped[h])
		p.reported = append(p.reported, reportedHours[h])
	}
	p.shares = make([][]preview.Share, len(p.hours))
	for i := range p.shares {
		p.shares[i] = make([]preview.Share, len(ids))
	}
	// Hour by hour, noting the holders each starts from.
	starts := make([]map[string]string, 0, len(p.hours))
	for first := 0; first < len(moments); {
		last := first + 1
		for last < len(moments) && parts[last].hour == parts[first].hour {
			last++
		}
		starts = append(starts, maps.Clone(holders))
		for i, shares := range preview.ProjectHistory(market, model, moments[first:last], holders) {
			part := parts[first+i]
			for j, sh := range shares {
				p.shares[part.hour][j].Total += part.weight * sh.Total
				p.shares[part.hour][j].Exploration += part.weight * sh.Exploration
				p.shares[part.hour][j].Pinned += part.weight * sh.Pinned
			}
		}
		first = last
	}
	end := minTime(until, pj.Now())
	p.end = projectionEnd{holders: maps.Clone(holders), learned: traffic.Learn(learnedHours, end), projects: projectRates.learnedAll(end)}
	pj.hoursProjected.Add(int64(len(p.hours)))
	return p, starts, nil
}

// RoutingState is where routing stands for the listing's model now, as the
// traffic pages project it: the rates learned and each shape's holder at
// the end of the projection of the listing traffic page's default window.
// The fare preview elects on it, so a published fare previews as the
// traffic page projects it now. Nil for a model routing does not know.
func (pj *Projector) RoutingState(ctx context.Context, l *catalogue.Listing) (*preview.RoutingState, error) {
	since, until := earnings.Grouping{Period: earnings.ParsePeriod(""), Loc: time.UTC}.Window(pj.Now())
	past, ok, err := pj.ListingHours(ctx, l, since, until)
	if err != nil || !ok {
		return nil, err
	}
	d, err := pj.Demand(ctx, l.Model.Slug)
	if err != nil {
		return nil, err
	}
	return &preview.RoutingState{Learned: past.end.learned, Holders: maps.Clone(past.end.holders),
		Projects: past.end.projectParts(d)}, nil
}

// projectNow is the share the preview projects for the listing with what
// is in force now, by the rule every past hour is projected by
// (preview.ProjectHistory): the published fares and the catalogue's health
// of now, the model's workload mix (mix nil: even), prompt sizes, kinds of
// request and sets of preferences over the last week (demand), the rates
// routing has learned, and each shape's holder where the projection of the
// hours before left it (past.end). ok is false for a listing not on the
// model's ballot now.
func (pj *Projector) projectNow(ctx context.Context, l *catalogue.Listing, past Past, mix map[string]float64,
	demand map[string]catalogue.WorkloadDemand) (preview.Share, bool, error) {
	market, at, err := pj.marketNow(ctx, l)
	if err != nil || at < 0 {
		return preview.Share{}, false, err
	}
	fares := map[int64]*fare.Fare{}
	for _, ml := range market.Listings {
		if ml.Published != nil {
			fares[ml.ID] = ml.Published
		}
	}
	moment := preview.Moment{At: pj.Now(), Fares: fares, Mix: mix, Prompts: preview.PromptsFromDemand(demand), Kinds: preview.KindsFromDemand(demand),
		Preferences: preview.PreferencePartsFromDemand(demand), Learned: past.end.learned,
		Projects: past.end.projectParts(demand)}
	shares := preview.ProjectHistory(market, l.Model.Slug, []preview.Moment{moment}, maps.Clone(past.end.holders))
	return shares[0][at], true, nil
}

// SharePolicyNow is where the listing's published fare stands now for
// projects on the share policy (election.md sec. 8), on the routing
// snapshot's market, weighed by the model's measured workload mix (even
// without demand measured): the preview's "For projects on the share
// policy" for the fare as published. OnBallot is false for a listing not
// in service.
func (pj *Projector) SharePolicyNow(ctx context.Context, l *catalogue.Listing) (PolicyShare, error) {
	market, at, err := pj.marketNow(ctx, l)
	if err != nil || at < 0 {
		return PolicyShare{}, err
	}
	d, err := pj.Demand(ctx, l.Model.Slug)
	if err != nil {
		return PolicyShare{}, err
	}
	mix, requests := preview.MixFromDemand(d)
	if requests == 0 {
		mix = nil
	}
	out := preview.SharePolicyNow(market, l.Model.Slug, l.ID, pj.Now(), mix)
	asked, err := pj.Asked(ctx, l.Model.Slug)
	if err != nil {
		return PolicyShare{}, err
	}
	if asked.Requests > 0 {
		out.Demand = float64(asked.Asked[catalogue.AskedSharePolicy]) / float64(asked.Requests)
	}
	return out, nil
}

// marketNow is the listing's model's market on the routing snapshot and
// the listing's place in it; at is -1 when the listing is not there in
// service with a published fare (nothing is projected for it now).
func (pj *Projector) marketNow(ctx context.Context, l *catalogue.Listing) (preview.Market, int, error) {
	snap, err := pj.Routing.Current(ctx)
	if err != nil {
		return preview.Market{}, -1, err
	}
	market, ok := snap.Market(l.Model.Slug)
	if !ok {
		return preview.Market{}, -1, nil
	}
	at := slices.IndexFunc(market.Listings, func(ml catalogue.Listing) bool { return ml.ID == l.ID })
	if at < 0 || market.Listings[at].Published == nil || market.Listings[at].Status != catalogue.StatusInService {
		return market, -1, nil
	}
	return market, at, nil
}

func maxTime(a, b time.Time) time.Time {
	if a.After(b) {
		return a
	}
	return b
}

func minTime(a, b time.Time) time.Time {
	if a.Before(b) {
		return a
	}
	return b
}

// heldAt is, per gateway shape, the holder reported at or before at (the
// holder after the latest election a gateway reported: a minute's first,
// or a later one that moved the shape; of several gateways, the latest of
// any), named by candidate; nil when none was reported. A listing no
// longer on the market is left out.
func heldAt(reported []catalogue.ShapeHolder, candidates map[int64]string, at time.Time) map[traffic.Shape]string {
	return newHeldCursor(heldEvents(reported), candidates).at(at)
}

// heldEvent is a reported holder taking a shape at a second.
type heldEvent struct {
	at      time.Time
	shape   traffic.Shape
	listing int64
}

// heldEvents are the reported holders in time order, every source's
// together: replicas share their incumbents (the fleet's Redis), so each
// row is the one incumbent after an election one of them ran, and
// together they are the shape's moves as they came (taking one source's
// rows a minute missed the other's moves: with moves within a minute
// reported, fathom was 4.3 points off in the two-replica loop test).
// reported is in the store's order (by minute, source, second); rows of
// one second keep it.
func heldEvents(reported []catalogue.ShapeHolder) []heldEvent {
	out := make([]heldEvent, 0, len(reported))
	for i := range reported {
		h := &reported[i]
		w, ok := election.ParseWorkload(h.Workload)
		if !ok {
			continue
		}
		shape := traffic.Shape{Model: h.Model, Mode: election.ModeAuto, Workload: w, CacheRelevant: h.CacheRelevant}
		out = append(out, heldEvent{at: h.At(), shape: shape, listing: h.ListingID})
	}
	slices.SortStableFunc(out, func(a, b heldEvent) int { return a.at.Compare(b.at) })
	return out
}

// heldCursor walks the reported holders once, in time order, for the
// moments of a projection (which come in time order): each moment reads
// only the events since the one before.
type heldCursor struct {
	events     []heldEvent
	candidates map[int64]string
	next       int
	holders    map[traffic.Shape]string
}

func newHeldCursor(events []heldEvent, candidates map[int64]string) *heldCursor {
	return &heldCursor{events: events, candidates: candidates}
}

// at is heldAt for a time no earlier than the cursor's last.
func (c *heldCursor) at(at time.Time) map[traffic.Shape]string {
	for ; c.next < len(c.events) && !c.events[c.next].at.After(at); c.next++ {
		e := &c.events[c.next]
		id, known := c.candidates[e.listing]
		if !known {
			continue
		}
		if c.holders == nil {
			c.holders = map[traffic.Shape]string{}
		}
		c.holders[e.shape] = id
	}
	if c.holders == nil {
		return nil
	}
	return maps.Clone(c.holders)
}

// holderChanges are the times at which a reported holder of a shape
// differed from the one reported before it (the first report of a shape
// included), of events (heldEvents).
func holderChanges(events []heldEvent) []time.Time {
	last := map[traffic.Shape]int64{}
	var out []time.Time
	for _, e := range events {
		if id, ok := last[e.shape]; !ok || id != e.listing {
			out = append(out, e.at)
		}
		last[e.shape] = e.listing
	}
	return out
}

// hourPart says which hour a moment belongs to and its weight in it.
type hourPart struct {
	hour   int
	weight float64
}

// learnedLag is how far behind a part's start the rates routing elected
// on were learned: a gateway works a project's rates out again once they
// are traffic.LearnedCacheFor old, so at any moment they are from 0 to
// that long old; the projection takes the middle. (Without it a cut a
// second into a run's first minute learned from what the run had not yet
// answered, and the loop test's fathom, which wins large prompts until
// the others' cache hits are learned, was 4.4 points off.)
const learnedLag = traffic.LearnedCacheFor / 2

// electedSpan is a stretch of a minute in which a reported holder row held
// its shape, from one second to another, with the elections it held.
type electedSpan struct {
	from, to  float64 // seconds of the minute
	elections int64
	// key is the mix key the row's shape counts under
	// (preview.MixKeyOf; "" for none).
	key string
}

// electedSpans are, by minute, the stretches the reported holder rows held
// their shapes with the elections they counted: each row from its second
// to the shape's next row of the minute from the same source, else to the
// minute's end. Rows that count no elections (a gateway that does not
// say) give none.
func electedSpans(reported []catalogue.ShapeHolder) map[time.Time][]electedSpan {
	type rowKey struct {
		minute   time.Time
		source   string
		workload string
		cache    bool
	}
	// Each row ends at the earliest later second of its shape's minute.
	latest := map[rowKey]int{} // the index of the shape's latest row so far
	ends := make([]float64, len(reported))
	for _, i := range bySecond(reported) {
		r := &reported[i]
		ends[i] = 60
		k := rowKey{r.Minute, r.Source, r.Workload, r.CacheRelevant}
		if j, ok := latest[k]; ok {
			ends[j] = float64(r.Second)
		}
		latest[k] = i
	}
	var out map[time.Time][]electedSpan
	for i := range reported {
		r := &reported[i]
		if r.Requests <= 0 || ends[i] <= float64(r.Second) {
			continue
		}
		if out == nil {
			out = map[time.Time][]electedSpan{}
		}
		key, _ := preview.MixKeyOf(r.Workload, r.CacheRelevant)
		out[r.Minute] = append(out[r.Minute], electedSpan{from: float64(r.Second), to: ends[i], elections: r.Requests, key: key})
	}
	return out
}

// bySecond are the indices of the rows in time order.
func bySecond(rows []catalogue.ShapeHolder) []int {
	order := make([]int, len(rows))
	for i := range order {
		order[i] = i
	}
	slices.SortStableFunc(order, func(a, b int) int { return rows[a].At().Compare(rows[b].At()) })
	return order
}

// electedWithin is the part of a minute's elections made from second a to
// second b of it, each span's elections taken as even over it; ok is false
// when the minute has no counted elections.
func electedWithin(spans []electedSpan, a, b float64) (part float64, ok bool) {
	var in, total float64
	for _, sp := range spans {
		total += float64(sp.elections)
		if lo, hi := max(a, sp.from), min(b, sp.to); hi > lo {
			in += float64(sp.elections) * (hi - lo) / (sp.to - sp.from)
		}
	}
	if total == 0 {
		return 0, false
	}
	return in / total, true
}

// partMixes weighs the parts of the hour h starting at starts (weighing
// weights, from hourSplits) shape by shape where the gateway counted its
// elections: each shape's requests of the hour (its part of the hour's
// mix) are spread over the parts as its elections were, so a part holds
// the mix routing elected in it, not the hour's (a burst of small
// requests at a minute's start, and the shape moved after it, gave the
// part before the move the hour's mix of large and coding requests too).
// A shape without counted elections in the hour keeps the part's weight.
// It returns each part's mix and weight; nil mixes when nothing was
// counted (every part takes the hour's mix and weights stand).
func partMixes(mix map[string]float64, h time.Time, starts []time.Time, weights []float64, elected map[time.Time][]electedSpan) ([]map[string]float64, []float64) {
	if len(starts) < 2 || len(elected) == 0 {
		return nil, weights
	}
	ends := append(starts[1:len(starts):len(starts)], h.Add(time.Hour))
	counted := make([]map[string]float64, len(starts))
	total := map[string]float64{}
	for m := h; m.Before(h.Add(time.Hour)); m = m.Add(time.Minute) {
		for _, sp := range elected[m] {
			if sp.key == "" {
				continue
			}
			from, to := m.Add(time.Duration(sp.from*float64(time.Second))), m.Add(time.Duration(sp.to*float64(time.Second)))
			for i := range starts {
				lo, hi := maxTime(from, starts[i]), minTime(to, ends[i])
				if !hi.After(lo) {
					continue
				}
				n := float64(sp.elections) * hi.Sub(lo).Seconds() / (sp.to - sp.from)
				if counted[i] == nil {
					counted[i] = map[string]float64{}
				}
				counted[i][sp.key] += n
				total[sp.key] += n
			}
		}
	}
	if len(total) == 0 {
		return nil, weights
	}
	sum := 0.0
	for _, v := range mix {
		sum += max(v, 0)
	}
	if sum == 0 {
		return nil, weights
	}
	mixes, out := make([]map[string]float64, len(starts)), make([]float64, len(starts))
	for i := range starts {
		mixes[i] = make(map[string]float64, len(mix))
		for k, v := range mix {
			part := weights[i]
			if total[k] > 0 {
				part = counted[i][k] / total[k]
			}
			mixes[i][k] = max(v, 0) / sum * part
			out[i] += mixes[i][k]
		}
	}
	return mixes, out
}

// hourSplits cuts the hour h at the times given (fare publications, health
// samples and reported moves within it): the start of each part, its
// weight (the model's requests in it as the minute buckets count them,
// kept about a day, else its length) and the part of the hour's requests
// routing had learned from by then (those learnedLag before its start).
// Within a minute, the requests are weighed by when the gateway elected
// them where it counted its elections per holder row (elected), else taken
// as even over the minute; what routing had learned from is taken as even
// (the buckets count requests when they answered).
func (pj *Projector) hourSplits(ctx context.Context, ids []int64, h time.Time, changes []time.Time, elected map[time.Time][]electedSpan) ([]time.Time, []float64, []float64, error) {
	if len(changes) == 0 {
		return []time.Time{h}, []float64{1}, []float64{0}, nil
	}
	starts := append([]time.Time{h}, changes...)
	slices.SortFunc(starts, time.Time.Compare)
	starts = slices.CompactFunc(starts, time.Time.Equal)
	ends := append(starts[1:len(starts):len(starts)], h.Add(time.Hour))
	minutes, err := pj.RequestsByMinute(ctx, ids, h)
	if err != nil {
		return nil, nil, nil, err
	}
	weights, learned := make([]float64, len(starts)), make([]float64, len(starts))
	var total float64
	for m, n := range minutes {
		// A minute's requests are spread over it by its counted elections,
		// else evenly: a minute in which a fare was published or a shape
		// moved gives each part its share of the minute.
		end := m.Add(time.Minute)
		in := func(from, to time.Time, byElection bool) float64 {
			from, to = maxTime(m, from), minTime(end, to)
			if !to.After(from) {
				return 0
			}
			a, b := from.Sub(m).Seconds(), to.Sub(m).Seconds()
			if byElection {
				if part, ok := electedWithin(elected[m], a, b); ok {
					return float64(n) * part
				}
			}
			return float64(n) * (b - a) / 60
		}
		for i := range starts {
			weights[i] += in(starts[i], ends[i], true)
			learned[i] += in(h, starts[i].Add(-learnedLag), false)
		}
		total += float64(n)
	}
	for i := range weights {
		if total > 0 {
			weights[i] /= total
			learned[i] /= total
		} else {
			weights[i] = ends[i].Sub(starts[i]).Hours()
			learned[i] = max(0, starts[i].Add(-learnedLag).Sub(h).Hours())
		}
	}
	return starts, weights, learned, nil
}

// sampledHealth is each listing's health for a part of an hour starting at
// from: the latest health sample at or before it (no older than two sample
// intervals: what routing elected on then), else the health rebuilt from
// the hourly rollups for the hour.
func sampledHealth(ids []int64, samples map[int64][]catalogue.HealthSample, rebuilt map[int64]catalogue.Health, from time.Time) map[int64]catalogue.Health {
	if len(samples) == 0 {
		return rebuilt
	}
	out := make(map[int64]catalogue.Health, len(ids))
	for _, id := range ids {
		if h, ok := rebuilt[id]; ok {
			out[id] = h
		}
		list := samples[id]
		i, _ := slices.BinarySearchFunc(list, from, func(s catalogue.HealthSample, t time.Time) int { return s.At.Compare(t) })
		if i < len(list) && list[i].At.Equal(from) {
			i++
		}
		if i > 0 && from.Sub(list[i-1].At) < 2*catalogue.HealthSampleEvery {
			out[id] = list[i-1].Health
		}
	}
	return out
}

// hourOf is a listing's rollup of the hour h among its hours (sorted, as
// the store returns them).
func hourOf(list []catalogue.HourlyPoint, h time.Time) (catalogue.HourlyPoint, bool) {
	j, found := slices.BinarySearchFunc(list, h, func(p catalogue.HourlyPoint, t time.Time) int { return p.Hour.Compare(t) })
	if !found {
		return catalogue.HourlyPoint{}, false
	}
	return list[j], true
}

// heldBackPart is the part of an hour's requests of a model elected while
// the gateway's limits held a listing back.
type heldBackPart struct {
	id   int64
	part float64
}

// heldBackParts are the listings the gateway's limits held back in the
// hour h, each with the part of the model's requests (requests) elected
// meanwhile, as the gateways reported them (heldBack): at most the whole
// hour between them, each taken as apart from the others.
func heldBackParts(ids []int64, hourly map[int64][]catalogue.HourlyPoint, h time.Time, requests int64) []heldBackPart {
	if requests <= 0 {
		return nil
	}
	var out []heldBackPart
	total := 0.0
	for _, id := range ids {
		hp, found := hourOf(hourly[id], h)
		if !found || hp.HeldBack <= 0 {
			continue
		}
		part := min(1, float64(hp.HeldBack)/float64(requests))
		out = append(out, heldBackPart{id: id, part: part})
		total += part
	}
	if total > 1 {
		for i := range out {
			out[i].part /= total
		}
	}
	return out
}

// learnedWithin is what routing had learned by from, within the hour h:
// the hours before h (earlier) and the part of each listing's hour h
// routing had learned from by from (done, of the model's requests in it,
// taken evenly from the listing's figures for the hour: hourSplits): the
// gateway learns from the hour under way as its requests answer. scratch is reused for the list
// (returned for the next call).
func learnedWithin(earlier, scratch []traffic.Hour, hourly map[int64][]catalogue.HourlyPoint, market preview.Market, h, from time.Time, done float64) (traffic.Learned, []traffic.Hour) {
	hours := append(scratch[:0], earlier...) // earlier is shared by the hour's parts
	for i := range market.Listings {
		ml := &market.Listings[i]
		hp, found := hourOf(hourly[ml.ID], h)
		if !found {
			continue
		}
		part := func(n int64) int64 { return int64(math.Round(done * float64(n))) }
		hours = append(hours, traffic.Hour{Start: h, Candidate: preview.CandidateID(ml), Successes: part(hp.Requests - hp.Errors - hp.ClientErrors),
			InputTokens: part(hp.InputTokens), CachedInputTokens: part(hp.CachedInputTokens), OutputTokens: part(hp.OutputTokens)})
	}
	return traffic.Learn(hours, from), hours
}

// marketPrint fingerprints what of a model's market the projection of past
// hours reads besides the fare history and the metrics: which listings it
// holds, and each one's status, priority, capability verdicts and stored
// health (the health of an hour nothing was measured). A fare published
// now changes none of it (the past hours read fares from the history, and
// no fare is published into the past), so an approval elsewhere, or on
// this model, keeps the model's old hours.
func marketPrint(m preview.Market) uint64 {
	// Built with appends, not fmt: it runs for every model of every view.
	h := fnv.New64a()
	var b []byte
	for _, l := range m.Listings {
		b = strconv.AppendInt(b[:0], l.ID, 10)
		b = append(append(b, '|'), l.Status...)
		b = strconv.AppendInt(append(b, '|'), l.PriorityBP, 10)
		b = append(b, '|')
		for _, c := range slices.Sorted(maps.Keys(m.Checks[l.ID])) {
			b = append(append(append(append(b, c...), '='), m.Checks[l.ID][c]...), ',')
		}
		hh := l.Health
		for _, v := range []*float64{hh.UptimePct, hh.LatencyMs, hh.ThroughputTPS, hh.CacheHitRate} {
			if v != nil {
				b = strconv.AppendFloat(b, *v, 'g', -1, 64)
			}
			b = append(b, '/')
		}
		h.Write(append(b, '\n'))
	}
	return h.Sum64()
}

// Hours are the hours the projection covers, oldest first (shared: read
// only).
func (p Past) Hours() []time.Time { return p.hours }

// NowShare is the share the preview projects for a listing with what is in
// force now, and the workload mix it was weighed by.
type NowShare struct {
	Share preview.Share
	// OK is false for a listing not on its model's ballot now.
	OK bool
	// Mix is the model's workload mix the gateway measured over MixWindow
	// (requests by workload key) and Requests their sum; Mix is nil and the
	// mix even when Requests is 0.
	Mix      map[string]float64
	Requests int64
}

// ShareNow is the share the preview projects for the listing with what is
// in force now (projectNow: the rule of every past hour, carried on from
// past), weighed by the model's measured workload mix (an even one without
// demand measured).
func (pj *Projector) ShareNow(ctx context.Context, l *catalogue.Listing, past Past) (NowShare, error) {
	d, err := pj.Demand(ctx, l.Model.Slug)
	if err != nil {
		return NowShare{}, err
	}
	var out NowShare
	out.Mix, out.Requests = preview.MixFromDemand(d)
	if out.Requests == 0 {
		out.Mix = nil
	}
	out.Share, out.OK, err = pj.projectNow(ctx, l, past, out.Mix, d)
	return out, err
}
