// Package routing is the routing catalogue in memory: one immutable snapshot
// per catalogue revision (and health refresh), swapped atomically, from which
// the gateway's hot paths (the catalogue with its ETag, elect, token checks)
// answer without touching the database.
package routing

import (
	"bytes"
	"compress/gzip"
	"context"
	"encoding/binary"
	"encoding/json"
	"fmt"
	"hash/fnv"
	"math"
	"sort"
	"strconv"
	"sync"
	"sync/atomic"
	"time"

	"github.com/airside/airside/internal/apitoken"
	"github.com/airside/airside/internal/catalogue"
	"github.com/airside/airside/internal/election"
	"github.com/airside/airside/internal/preview"
)

// Source is what a snapshot is built from.
type Source interface {
	CatalogueRevision(ctx context.Context) (int64, error)
	FindListings(ctx context.Context, f catalogue.ListingFilter) ([]catalogue.Listing, error)
	FindCapabilityChecksFor(ctx context.Context, listingIDs []int64) (map[int64]map[string]string, error)
	// FindLiveTokens maps the hashes of unrevoked API tokens to them.
	FindLiveTokens(ctx context.Context) (map[string]apitoken.Token, error)
	// HealthMetrics reads the metrics live health is computed from: all of
	// them the span covers, or (since not zero) those recorded or changed
	// from since on.
	HealthMetrics(ctx context.Context, span catalogue.HealthSpan, since time.Time) (catalogue.MetricRows, error)
}

// Body is a pre-encoded catalogue document, plain and gzipped.
type Body struct {
	Plain, Gzip []byte
}

// Snapshot is the routing catalogue at one revision, with health as of one
// moment. It is never changed once built.
type Snapshot struct {
	Revision   int64
	HealthAsOf time.Time
	BuiltAt    time.Time
	// base is what was read at this revision, before health: a health
	// refresh assembles a new snapshot from it without reading it again.
	base    *structure
	markets map[string]preview.Market
	// candidates are each model's ballot, compiled once per snapshot:
	// fares converted for the engine, verdicts applied, off-ballot listings
	// left out. An election copies them and sets its request.
	candidates map[string][]election.Candidate
	// compiled are the same ballots compiled for winner-only elections, each
	// with a pool of forks (an election needs scratch of its own).
	compiled map[string]*compiledModel
	// health is every listing's live health as of HealthAsOf; healthTag
	// identifies its figures (equal figures, equal tag, on every process).
	health    map[int64]catalogue.Health
	healthTag uint64
	// history is the health of the last refreshes at this revision whose
	// figures differed, oldest first, this one's last: what a gateway may
	// hold, so a delta from it can be served.
	history []healthGeneration
	tokens  map[string]apitoken.Token
	// The documents are encoded when first asked for, never at a health
	// refresh (every 5 s; at 10,000 listings the whole catalogue is 5.9 MB).
	// The fares are encoded once per revision (the cache lives on base, which
	// health refreshes share); health once per set of figures (a refresh
	// that moved no figure keeps the previous snapshot's); the one-document
	// form once per snapshot.
	published map[string][]*catalogue.Listing // by model, with live health
	order     []*catalogue.Listing            // every published listing, in catalogue order
	all       []*catalogue.Listing            // every listing, delisted and unpublished too, in the same order
	healthDoc *bodyCache
	combined  *bodyCache
}

// healthGeneration is one set of health figures and its tag.
type healthGeneration struct {
	tag    uint64
	health map[int64]catalogue.Health
}

// keepGenerations bounds the history deltas are served from: a minute of
// refreshes every 5 s. A gateway holding older figures gets the whole
// document.
const keepGenerations = 12

// bodyCache holds documents encoded on first use: the whole one under "",
// each model's under its name.
type bodyCache struct {
	mu     sync.Mutex
	bodies map[string]*lazyBody
}

// lazyBody is one document, encoded once when first asked for.
type lazyBody struct {
	once sync.Once
	body Body
	err  error
}

func newBodyCache() *bodyCache { return &bodyCache{bodies: map[string]*lazyBody{}} }

// get is the document under key, built on first use.
func (c *bodyCache) get(key string, build func() (Body, error)) (Body, error) {
	c.mu.Lock()
	lb, ok := c.bodies[key]
	if !ok {
		lb = &lazyBody{}
		c.bodies[key] = lb
	}
	c.mu.Unlock()
	lb.once.Do(func() { lb.body, lb.err = build() })
	return lb.body, lb.err
}

// StoredHealth is a listing's stored health, what the catalogue serves for
// it while the gateway reports nothing on it (the demo's seeded figures;
// none for most listings), and whether the listing is known.
func (s *Snapshot) StoredHealth(id int64) (catalogue.Health, bool) {
	for i := range s.base.listings {
		if l := &s.base.listings[i]; l.ID == id {
			return l.Health, true
		}
	}
	return catalogue.Health{}, false
}

// Market is a model's listings with their verdicts, for an election.
func (s *Snapshot) Market(model string) (preview.Market, bool) {
	m, ok := s.markets[model]
	return m, ok
}

// Ballot is a ready ballot for an election on a model: the compiled
// candidates, copied into dst's storage (the caller may set their usage and
// reuse the storage for the next election), with the request.
func (s *Snapshot) Ballot(req election.Request, dst []election.Candidate) (election.Ballot, bool) {
	c, ok := s.candidates[req.Model]
	if !ok {
		return election.Ballot{}, false
	}
	return election.Ballot{Request: req, Candidates: append(dst[:0], c...)}, true
}

type compiledModel struct {
	base *election.Compiled
	pool sync.Pool
}

// Winner runs a winner-only election for req on the model's compiled ballot
// with each candidate's usage (keyed by candidate id), returning the
// winner's id ("" when no one is eligible) and score. ok is false for a
// model without a ballot.
func (s *Snapshot) Winner(req *election.Request, usage map[string]election.Usage) (id string, score float64, ok bool) {
	cm, ok := s.compiled[req.Model]
	if !ok {
		return "", 0, false
	}
	c := cm.pool.Get().(*election.Compiled)
	defer cm.pool.Put(c)
	var u []election.Usage
	if len(usage) > 0 {
		u = make([]election.Usage, c.Len())
		for i := range u {
			u[i] = usage[c.ID(i)]
		}
	}
	w, score := c.Winner(req, u)
	if w < 0 {
		return "", 0, true
	}
	return c.ID(w), score, true
}

// Catalogue is the encoded catalogue (fares, statuses, verified
// capabilities, endpoints) of one model, or of every model for "", encoded
// once per revision. A model with no listings gets an empty catalogue at
// this revision.
func (s *Snapshot) Catalogue(model string) (Body, error) {
	return s.lazily(s.base.fares, model, model, func(listings []*catalogue.Listing) (Body, error) {
		return encode(Catalogue{Revision: s.Revision, Listings: s.documents(listings, false)})
	})
}

// CatalogueWithHealth is the one-document form: the catalogue with each
// listing's live health, as version 1.1 served it.
func (s *Snapshot) CatalogueWithHealth(model string) (Body, error) {
	return s.lazily(s.combined, model, model, func(listings []*catalogue.Listing) (Body, error) {
		asOf := s.HealthAsOf
		return encode(Catalogue{Revision: s.Revision, HealthAsOf: &asOf, Listings: s.documents(listings, true)})
	})
}

// HealthDocument is the encoded live health of every published listing of
// one model, or of every model for "".
func (s *Snapshot) HealthDocument(model string) (Body, error) {
	return s.lazily(s.healthDoc, model, model, func(listings []*catalogue.Listing) (Body, error) {
		doc := HealthDocument{Revision: s.Revision, HealthAsOf: s.HealthAsOf, Listings: make([]ListingHealth, len(listings))}
		for i, l := range listings {
			doc.Listings[i] = ListingHealth{ID: preview.CandidateID(l), ListingID: l.ID, Metrics: *MetricsOf(l.Health)}
		}
		return encode(doc)
	})
}

// HealthDelta is the health of the listings (of one model, or every model
// for "") whose figures moved since the health the validator etag names,
// encoded once per validator. ok is false when etag names no health held at
// this revision: the gateway then needs the whole document.
func (s *Snapshot) HealthDelta(model, etag string) (body Body, ok bool, err error) {
	var from map[int64]catalogue.Health
	for _, g := range s.history {
		if healthETag(s.Revision, g.tag) == etag {
			from = g.health
		}
	}
	if from == nil {
		return Body{}, false, nil
	}
	body, err = s.lazily(s.healthDoc, "\x00delta "+etag+" "+model, model, func(listings []*catalogue.Listing) (Body, error) {
		doc := HealthDocument{Revision: s.Revision, HealthAsOf: s.HealthAsOf, Delta: true, Listings: []ListingHealth{}}
		for _, l := range listings {
			if old, held := from[l.ID]; !held || !sameFigures(old, l.Health) {
				doc.Listings = append(doc.Listings, ListingHealth{ID: preview.CandidateID(l), ListingID: l.ID, Metrics: *MetricsOf(l.Health)})
			}
		}
		return encode(doc)
	})
	return body, err == nil, err
}

// sameFigures says two healths serve the same figures.
func sameFigures(a, b catalogue.Health) bool {
	same := func(x, y *float64) bool { return (x == nil) == (y == nil) && (x == nil || *x == *y) }
	return same(a.UptimePct, b.UptimePct) && same(a.LatencyMs, b.LatencyMs) && same(a.ThroughputTPS, b.ThroughputTPS) &&
		same(a.CacheHitRate, b.CacheHitRate) && same(a.OutputRatio, b.OutputRatio) && same(a.Requests, b.Requests)
}

// lazily encodes the listings of a model (every model for "") into cache
// on first use. A name with no listings is encoded without being kept: any
// name may be asked for.
func (s *Snapshot) lazily(cache *bodyCache, key, model string, build func([]*catalogue.Listing) (Body, error)) (Body, error) {
	listings := s.order
	if model != "" {
		var ok bool
		if listings, ok = s.published[model]; !ok {
			return build(nil)
		}
	}
	return cache.get(key, func() (Body, error) { return build(listings) })
}

// Changes is the change feed's answer from memory: the published listings
// (of the model, or every model) changed after revision since, delisted ones
// included so a gateway sees the removal; since 0 is the whole catalogue,
// which is what routes (no delisted listing). It reads no database, so the
// feed keeps answering while the database is away.
func (s *Snapshot) Changes(model string, since int64) Catalogue {
	out := Catalogue{Revision: s.Revision, Listings: []CatalogueListing{}}
	for _, l := range s.all {
		// A draft (a fare approved, its endpoint not yet through
		// preflight) is not routable: it appears once it goes into service.
		if l.Published == nil || l.Status == catalogue.StatusDraft || l.Revision <= since || (model != "" && l.Model.Slug != model) ||
			(since == 0 && l.Status == catalogue.StatusDelisted) {
			continue
		}
		out.Listings = append(out.Listings, ListingDocument(l, s.base.checks[l.ID]))
	}
	return out
}

// documents are listings as the catalogue serves them, with their live
// health when asked.
func (s *Snapshot) documents(listings []*catalogue.Listing, withHealth bool) []CatalogueListing {
	out := make([]CatalogueListing, len(listings))
	for i, l := range listings {
		out[i] = ListingDocument(l, s.base.checks[l.ID])
		if withHealth {
			out[i].Metrics = MetricsOf(l.Health)
		}
	}
	return out
}

// CandidateID is the id of the model's candidate an elect request names by
// key: its listing id or "carrier/model".
func (s *Snapshot) CandidateID(model, key string) (string, bool) {
	id, ok := s.base.candidateKeys[model][key]
	return id, ok
}

// ETag is the catalogue's validator: its revision alone, since the fares
// document carries no health. It is weak, as every validator here.
func (s *Snapshot) ETag() string {
	return fmt.Sprintf(`W/"%d"`, s.Revision)
}

// HealthETag is the validator of the health document and of the
// one-document form: the revision (which listings are published) and the
// health figures. Two snapshots with the same figures have the same tag
// though their healthAsOf differs (when the figures were computed, not what
// they are).
func (s *Snapshot) HealthETag() string { return healthETag(s.Revision, s.healthTag) }

func healthETag(revision int64, tag uint64) string {
	return fmt.Sprintf(`W/"%d-%016x"`, revision, tag)
}

// healthTagOf hashes the health figures the catalogue serves, in the order
// the listings were read (the same on every process).
func healthTagOf(listings []catalogue.Listing, health map[int64]catalogue.Health) uint64 {
	h := fnv.New64a()
	var buf [8]byte
	put := func(v uint64) {
		binary.LittleEndian.PutUint64(buf[:], v)
		h.Write(buf[:])
	}
	for i := range listings {
		id := listings[i].ID
		put(uint64(id))
		fig := health[id]
		for _, f := range []*float64{fig.UptimePct, fig.LatencyMs, fig.ThroughputTPS, fig.CacheHitRate, fig.OutputRatio, fig.Requests} {
			if f == nil {
				put(0)
				continue
			}
			put(1)
			put(math.Float64bits(*f))
		}
	}
	return h.Sum64()
}

// Health is a listing's live health as of HealthAsOf.
func (s *Snapshot) Health(listingID int64) (catalogue.Health, bool) {
	h, ok := s.health[listingID]
	return h, ok
}

// Listings names every listing by "carrier/model" and by id, for metric
// batches.
func (s *Snapshot) Listings() *catalogue.ListingIndex { return s.base.index }

// Token is the live API token with this hash.
func (s *Snapshot) Token(hash string) (apitoken.Token, bool) {
	t, ok := s.tokens[hash]
	return t, ok
}

// Keeper holds the current snapshot and rebuilds it: at once when told of a
// publication (Invalidate, from this process or, through LISTEN/NOTIFY,
// another), and for health when the snapshot is older than HealthEvery.
//
// Health comes from a mirror of the metrics in memory (catalogue.HealthMirror):
// read whole at start and whenever the 24-hour day moves into a new hour (so
// at least hourly, which also repairs anything an incremental read could have
// missed), and in between only the buckets and rollups recorded since the
// last read. A health refresh reads no listing, fare or token again.
type Keeper struct {
	Source Source
	Now    func() time.Time
	// HealthEvery bounds how stale health may be (default 5 s).
	HealthEvery time.Duration

	cur        atomic.Pointer[Snapshot]
	dirty      atomic.Bool
	building   sync.Mutex
	refreshing atomic.Bool
	// Guarded by building: the metrics mirror and how far it has read.
	mirror *catalogue.HealthMirror
	cursor time.Time
	// deepReadAt is when the mirror last read twice HealthCursorSlack back.
	deepReadAt time.Time
	// OnError hears a failed background refresh (the old snapshot stays).
	OnError func(error)
	// failedAt (unix ns) is when the last rebuild after a change failed,
	// 0 when it did not.
	failedAt atomic.Int64
	// For the operator (Stats): snapshots swapped in, those that read the
	// catalogue again, and how long the last one took.
	swaps, rereads atomic.Int64
	lastBuild      atomic.Int64 // ns
}

// KeeperStats are the keeper's counters since start.
type KeeperStats struct {
	// Builds counts snapshots swapped in (every health refresh); Rereads
	// those that read listings, fares and tokens again (a publication).
	Builds, Rereads int64
	// LastBuild is how long the last swapped-in snapshot took to build.
	LastBuild time.Duration
}

// Stats are the keeper's counters, for metrics.
func (k *Keeper) Stats() KeeperStats {
	return KeeperStats{Builds: k.swaps.Load(), Rereads: k.rereads.Load(), LastBuild: time.Duration(k.lastBuild.Load())}
}

// retryEvery is how often a keeper whose rebuild failed tries again while it
// answers from its last good snapshot.
const retryEvery = time.Second

// Age is how old the current snapshot's health figures are (0 with none).
func (k *Keeper) Age() time.Duration {
	cur := k.cur.Load()
	if cur == nil {
		return 0
	}
	return max(0, k.Now().Sub(cur.BuiltAt)) // never negative when the clock is set back
}

// NewKeeper is a keeper on a source and a clock.
func NewKeeper(src Source, now func() time.Time) *Keeper {
	return &Keeper{Source: src, Now: now, HealthEvery: 5 * time.Second}
}

// Invalidate says the catalogue changed (a publication, a token created or
// revoked): the next read rebuilds before it answers.
func (k *Keeper) Invalidate() { k.dirty.Store(true) }

// Current is the snapshot to answer from. It is built first when none was
// built yet, and rebuilt first when something changed since (falling back to
// the last good one when that fails); when only health has aged, the stale
// one is used while its health is refreshed in the background.
func (k *Keeper) Current(ctx context.Context) (*Snapshot, error) {
	cur := k.cur.Load()
	if cur == nil {
		return k.Refresh(ctx)
	}
	if k.dirty.Load() {
		// Rebuild first, but never fail routing for it: while the database
		// is away the last good snapshot keeps answering (its health marked
		// old), and the rebuild is tried again at most every retryEvery, so
		// requests do not queue behind connection attempts.
		if last := k.failedAt.Load(); last != 0 && k.Now().Sub(time.Unix(0, last)) < retryEvery {
			return cur, nil
		}
		snap, err := k.Refresh(ctx)
		if err != nil {
			k.failedAt.Store(k.Now().UnixNano())
			if k.OnError != nil {
				k.OnError(err)
			}
			return cur, nil
		}
		k.failedAt.Store(0)
		return snap, nil
	}
	if k.Now().Sub(cur.BuiltAt) > k.healthEvery() && k.refreshing.CompareAndSwap(false, true) {
		go func() {
			defer k.refreshing.Store(false)
			if _, err := k.rebuild(context.Background(), false); err != nil && k.OnError != nil {
				k.OnError(err)
			}
		}()
	}
	return cur, nil
}

func (k *Keeper) healthEvery() time.Duration {
	if k.HealthEvery <= 0 {
		return 5 * time.Second
	}
	return k.HealthEvery
}

// Refresh reads the catalogue again, refreshes health and swaps the new
// snapshot in. Concurrent refreshes build once: a caller that waited gets the
// snapshot built meanwhile.
func (k *Keeper) Refresh(ctx context.Context) (*Snapshot, error) { return k.rebuild(ctx, true) }

// rebuild swaps in a new snapshot with fresh health; the catalogue is read
// again when asked (structural), when it changed, or when there is none.
func (k *Keeper) rebuild(ctx context.Context, structural bool) (*Snapshot, error) {
	start := k.Now()
	k.building.Lock()
	defer k.building.Unlock()
	cur := k.cur.Load()
	if cur != nil && !cur.BuiltAt.Before(start) && !k.dirty.Load() {
		return cur, nil // built while this caller waited
	}
	base := cur.baseOrNil()
	reread := structural || base == nil || k.dirty.Load()
	if reread {
		k.dirty.Store(false) // a change after this point marks it again
		b, err := readStructure(ctx, k.Source)
		if err != nil {
			k.dirty.Store(true)
			return nil, err
		}
		base = b
	}
	now := k.Now()
	live, err := k.liveHealth(ctx, now)
	if err == nil {
		var snap *Snapshot
		if snap, err = assemble(base, live, now, cur); err == nil {
			k.cur.Store(snap)
			k.swaps.Add(1)
			if reread {
				k.rereads.Add(1)
			}
			k.lastBuild.Store(int64(k.Now().Sub(start)))
			return snap, nil
		}
	}
	if reread {
		k.dirty.Store(true) // the catalogue read is not in service yet
	}
	return nil, err
}

func (s *Snapshot) baseOrNil() *structure {
	if s == nil {
		return nil
	}
	return s.base
}

// liveHealth brings the mirror up to now and computes every listing's
// health from it. Called with building held.
func (k *Keeper) liveHealth(ctx context.Context, now time.Time) (map[int64]catalogue.Health, error) {
	span := catalogue.SpanAt(now)
	if !k.mirror.Covers(now) || now.Before(k.cursor) { // a clock set back reads everything again
		rows, err := k.Source.HealthMetrics(ctx, span, time.Time{})
		if err != nil {
			return nil, fmt.Errorf("read health metrics: %w", err)
		}
		k.mirror = catalogue.NewHealthMirror(span, rows)
		k.cursor = later(now, rows.Latest)
		k.deepReadAt = now
	} else {
		// Two minutes back once a minute, a few seconds back between: a
		// transaction committed up to HealthCursorSlack after taking its
		// time is read at the next deep read, and a row is not read a dozen
		// times.
		slack := catalogue.HealthCursorShortSlack
		deep := now.Sub(k.deepReadAt) >= catalogue.HealthCursorSlack
		if deep {
			slack = 2 * catalogue.HealthCursorSlack
		}
		rows, err := k.Source.HealthMetrics(ctx, span, k.cursor.Add(-slack))
		if err != nil {
			return nil, fmt.Errorf("read new health metrics: %w", err)
		}
		if deep {
			k.deepReadAt = now
		}
		k.mirror.Apply(rows)
		k.mirror.Prune(now)
		k.cursor = later(k.cursor, rows.Latest)
	}
	return k.mirror.Health(now), nil
}

func later(a, b time.Time) time.Time {
	if b.After(a) {
		return b
	}
	return a
}

// structure is what a snapshot reads at a revision: everything but live
// health.
type structure struct {
	revision int64
	listings []catalogue.Listing // with their stored health
	checks   map[int64]map[string]string
	tokens   map[string]apitoken.Token
	index    *catalogue.ListingIndex
	// fares are the catalogue documents of this revision, encoded on first
	// use and shared by every health refresh.
	fares *bodyCache
	// candidateKeys names each model's candidates by the keys an elect
	// request's usage may use: the candidate id ("carrier/model") and the
	// listing id.
	candidateKeys map[string]map[string]string
}

// readStructure reads the catalogue, its verdicts and the live tokens.
func readStructure(ctx context.Context, src Source) (*structure, error) {
	// The revision first: a listing published meanwhile is then included and
	// served again at the next revision, never skipped.
	rev, err := src.CatalogueRevision(ctx)
	if err != nil {
		return nil, fmt.Errorf("build routing snapshot: %w", err)
	}
	listings, err := src.FindListings(ctx, catalogue.ListingFilter{StoredHealth: true})
	if err != nil {
		return nil, fmt.Errorf("build routing snapshot: %w", err)
	}
	ids := make([]int64, len(listings))
	for i, l := range listings {
		ids[i] = l.ID
	}
	checks, err := src.FindCapabilityChecksFor(ctx, ids)
	if err != nil {
		return nil, fmt.Errorf("build routing snapshot: %w", err)
	}
	tokens, err := src.FindLiveTokens(ctx)
	if err != nil {
		return nil, fmt.Errorf("build routing snapshot: %w", err)
	}
	bySlug := make(map[string]int64, len(listings))
	keys := map[string]map[string]string{}
	for i := range listings {
		l := &listings[i]
		bySlug[l.CarrierSlug+"/"+l.Model.Slug] = l.ID
		if keys[l.Model.Slug] == nil {
			keys[l.Model.Slug] = map[string]string{}
		}
		id := preview.CandidateID(l)
		keys[l.Model.Slug][id] = id
		keys[l.Model.Slug][strconv.FormatInt(l.ID, 10)] = id
	}
	return &structure{revision: rev, listings: listings, checks: checks, tokens: tokens, index: catalogue.NewListingIndex(bySlug),
		candidateKeys: keys, fares: newBodyCache()}, nil
}

// assemble makes a snapshot of a catalogue read with live health as of now
// (a listing the gateway has not reported on keeps its stored health), with
// its ballots compiled. prev, the snapshot it replaces (or nil), lends its
// encoded health when no figure moved.
func assemble(base *structure, live map[int64]catalogue.Health, now time.Time, prev *Snapshot) (*Snapshot, error) {
	if base.fares == nil {
		base.fares = newBodyCache()
	}
	snap := &Snapshot{Revision: base.revision, HealthAsOf: now.UTC(), BuiltAt: now, base: base, markets: map[string]preview.Market{},
		candidates: map[string][]election.Candidate{}, compiled: map[string]*compiledModel{}, health: make(map[int64]catalogue.Health, len(base.listings)),
		tokens: base.tokens, published: map[string][]*catalogue.Listing{}, healthDoc: newBodyCache(), combined: newBodyCache()}
	// where each listing lands in its market, to point at it once the
	// markets stop growing
	at := make([]int, len(base.listings))
	for i := range base.listings {
		l := base.listings[i]
		if h, ok := live[l.ID]; ok {
			l.Health = h
		}
		snap.health[l.ID] = l.Health
		m := snap.markets[l.Model.Slug]
		if m.Checks == nil {
			m.Checks = map[int64]map[string]string{}
		}
		at[i] = len(m.Listings)
		m.Listings = append(m.Listings, l)
		if c, ok := base.checks[l.ID]; ok {
			m.Checks[l.ID] = c
		}
		snap.markets[l.Model.Slug] = m
	}
	snap.healthTag = healthTagOf(base.listings, snap.health)
	switch {
	case prev != nil && prev.base == base && prev.healthTag == snap.healthTag:
		// The same figures: the health documents a gateway may ask for are
		// still right (their healthAsOf says when the figures were first
		// computed), and are not encoded again.
		snap.healthDoc = prev.healthDoc
		snap.history = prev.history
	case prev != nil && prev.base.revision == base.revision:
		// Moved figures at the same revision: a gateway holding any of the
		// last few may get only what moved. (A re-read of the same
		// revision lists the same listings.)
		held := prev.history[max(0, len(prev.history)-keepGenerations+1):]
		snap.history = append(held[:len(held):len(held)], healthGeneration{tag: snap.healthTag, health: snap.health})
	default:
		snap.history = []healthGeneration{{tag: snap.healthTag, health: snap.health}}
	}
	for i := range base.listings {
		l := &snap.markets[base.listings[i].Model.Slug].Listings[at[i]]
		snap.all = append(snap.all, l)
		if l.Published == nil || l.Status == catalogue.StatusDelisted {
			continue // the catalogue is what routes; changes report removals
		}
		snap.order = append(snap.order, l)
		snap.published[l.Model.Slug] = append(snap.published[l.Model.Slug], l)
	}
	for model, m := range snap.markets {
		b, _ := m.Ballot(election.Request{Model: model}, preview.Change{})
		snap.candidates[model] = b.Candidates
		cm := &compiledModel{base: election.Compile(&b)}
		cm.pool.New = func() any { return cm.base.Fork() }
		snap.compiled[model] = cm
	}
	return snap, nil
}

// gzipWriters are reused: a flate compressor allocates about 1 MB.
var gzipWriters = sync.Pool{New: func() any {
	zw, _ := gzip.NewWriterLevel(nil, gzip.BestSpeed)
	return zw
}}

func encode(c any) (Body, error) {
	plain, err := json.Marshal(c)
	if err != nil {
		return Body{}, fmt.Errorf("encode catalogue: %w", err)
	}
	plain = append(plain, '\n')
	var buf bytes.Buffer
	zw := gzipWriters.Get().(*gzip.Writer)
	defer gzipWriters.Put(zw)
	zw.Reset(&buf)
	zw.Write(plain)
	if err := zw.Close(); err != nil {
		return Body{}, fmt.Errorf("gzip catalogue: %w", err)
	}
	return Body{Plain: plain, Gzip: buf.Bytes()}, nil
}

// Models lists the slugs of the models with a market in the snapshot,
// sorted.
func (s *Snapshot) Models() []string {
	out := make([]string, 0, len(s.markets))
	for m := range s.markets {
		out = append(out, m)
	}
	sort.Strings(out)
	return out
}

// Revision is the catalogue revision of the snapshot answering now, without
// building one (false before the first is built): for the process's own
// metrics, which must not cause work.
func (k *Keeper) Revision() (int64, bool) {
	cur := k.cur.Load()
	if cur == nil {
		return 0, false
	}
	return cur.Revision, true
}

// AllHealth is every listing's live health as of HealthAsOf (shared: read
// only).
func (s *Snapshot) AllHealth() map[int64]catalogue.Health { return s.health }
