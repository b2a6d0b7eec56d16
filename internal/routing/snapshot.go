// Package routing is the routing catalogue in memory: one immutable snapshot
// per catalogue revision (and health refresh), swapped atomically, from which
// the gateway's hot paths (the catalogue with its ETag, elect, token checks)
// answer without touching the database.
package routing

import (
	"bytes"
	"compress/gzip"
	"context"
	"encoding/json"
	"fmt"
	"maps"
	"slices"
	"sort"
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
	markets    map[string]preview.Market
	// candidates are each model's ballot, compiled once per snapshot:
	// fares converted for the engine, verdicts applied, off-ballot listings
	// left out. An election copies them and sets its request.
	candidates map[string][]election.Candidate
	// health is every listing's live health as of HealthAsOf.
	health   map[int64]catalogue.Health
	full     Body
	perModel map[string]Body
	tokens   map[string]apitoken.Token
}

// Market is a model's listings with their verdicts, for an election.
func (s *Snapshot) Market(model string) (preview.Market, bool) {
	m, ok := s.markets[model]
	return m, ok
}

// Ballot is a ready ballot for an election on a model: the compiled
// candidates, copied (the caller may set their usage), with the request.
func (s *Snapshot) Ballot(req election.Request) (election.Ballot, bool) {
	c, ok := s.candidates[req.Model]
	if !ok {
		return election.Ballot{}, false
	}
	return election.Ballot{Request: req, Candidates: slices.Clone(c)}, true
}

// Catalogue is the encoded catalogue of one model, or of every model for "".
// A model with no listings gets an empty catalogue at this revision.
func (s *Snapshot) Catalogue(model string) Body {
	if model == "" {
		return s.full
	}
	if b, ok := s.perModel[model]; ok {
		return b
	}
	b, err := encode(Catalogue{Revision: s.Revision, HealthAsOf: s.HealthAsOf, Listings: []CatalogueListing{}})
	if err != nil {
		return s.full // cannot happen: an empty document always encodes
	}
	return b
}

// Health is a listing's live health as of HealthAsOf.
func (s *Snapshot) Health(listingID int64) (catalogue.Health, bool) {
	h, ok := s.health[listingID]
	return h, ok
}

// Token is the live API token with this hash.
func (s *Snapshot) Token(hash string) (apitoken.Token, bool) {
	t, ok := s.tokens[hash]
	return t, ok
}

// Keeper holds the current snapshot and rebuilds it: at once when told of a
// publication (Invalidate, from this process or, through LISTEN/NOTIFY,
// another), and for health when the snapshot is older than HealthEvery.
type Keeper struct {
	Source Source
	Now    func() time.Time
	// HealthEvery bounds how stale health may be (default 5 s).
	HealthEvery time.Duration

	cur        atomic.Pointer[Snapshot]
	dirty      atomic.Bool
	building   sync.Mutex
	refreshing atomic.Bool
	// OnError hears a failed background refresh (the old snapshot stays).
	OnError func(error)
}

// NewKeeper is a keeper on a source and a clock.
func NewKeeper(src Source, now func() time.Time) *Keeper {
	return &Keeper{Source: src, Now: now, HealthEvery: 5 * time.Second}
}

// Invalidate says the catalogue changed (a publication, a token created or
// revoked, metrics taken in): the next read rebuilds before it answers.
func (k *Keeper) Invalidate() { k.dirty.Store(true) }

// Current is the snapshot to answer from. It is rebuilt first when none was
// built yet or something changed since; when only health has aged, the stale
// one is used while a rebuild runs in the background.
func (k *Keeper) Current(ctx context.Context) (*Snapshot, error) {
	cur := k.cur.Load()
	if cur == nil || k.dirty.Load() {
		return k.Refresh(ctx)
	}
	if k.Now().Sub(cur.BuiltAt) > k.healthEvery() && k.refreshing.CompareAndSwap(false, true) {
		go func() {
			defer k.refreshing.Store(false)
			if _, err := k.Refresh(context.Background()); err != nil && k.OnError != nil {
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

// Refresh builds a new snapshot and swaps it in. Concurrent refreshes build
// once: a caller that waited gets the snapshot built meanwhile.
func (k *Keeper) Refresh(ctx context.Context) (*Snapshot, error) {
	start := k.Now()
	k.building.Lock()
	defer k.building.Unlock()
	if cur := k.cur.Load(); cur != nil && !cur.BuiltAt.Before(start) && !k.dirty.Load() {
		return cur, nil // built while this caller waited
	}
	k.dirty.Store(false) // a change after this point marks it again
	snap, err := Build(ctx, k.Source, k.Now())
	if err != nil {
		k.dirty.Store(true)
		return nil, err
	}
	k.cur.Store(snap)
	return snap, nil
}

// Build reads everything routing needs, once, and encodes the catalogue.
func Build(ctx context.Context, src Source, now time.Time) (*Snapshot, error) {
	// The revision first: a listing published meanwhile is then included and
	// served again at the next revision, never skipped.
	rev, err := src.CatalogueRevision(ctx)
	if err != nil {
		return nil, fmt.Errorf("build routing snapshot: %w", err)
	}
	listings, err := src.FindListings(ctx, catalogue.ListingFilter{})
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
	snap := &Snapshot{Revision: rev, HealthAsOf: now.UTC(), BuiltAt: now, markets: map[string]preview.Market{},
		candidates: map[string][]election.Candidate{}, health: map[int64]catalogue.Health{}, perModel: map[string]Body{}, tokens: tokens}
	docs := map[string][]CatalogueListing{}
	var all []CatalogueListing
	for i := range listings {
		l := &listings[i]
		snap.health[l.ID] = l.Health
		m := snap.markets[l.Model.Slug]
		if m.Checks == nil {
			m.Checks = map[int64]map[string]string{}
		}
		m.Listings = append(m.Listings, *l)
		if c, ok := checks[l.ID]; ok {
			m.Checks[l.ID] = c
		}
		snap.markets[l.Model.Slug] = m
		if l.Published == nil || l.Status == catalogue.StatusDelisted {
			continue // the catalogue is what routes; changes report removals
		}
		doc := ListingDocument(l, checks[l.ID])
		docs[l.Model.Slug] = append(docs[l.Model.Slug], doc)
		all = append(all, doc)
	}
	if all == nil {
		all = []CatalogueListing{}
	}
	for model, m := range snap.markets {
		b, _ := m.Ballot(election.Request{Model: model}, preview.Change{})
		snap.candidates[model] = b.Candidates
	}
	if snap.full, err = encode(Catalogue{Revision: rev, HealthAsOf: snap.HealthAsOf, Listings: all}); err != nil {
		return nil, err
	}
	for _, model := range slices.Sorted(maps.Keys(docs)) {
		if snap.perModel[model], err = encode(Catalogue{Revision: rev, HealthAsOf: snap.HealthAsOf, Listings: docs[model]}); err != nil {
			return nil, err
		}
	}
	return snap, nil
}

func encode(c Catalogue) (Body, error) {
	plain, err := json.Marshal(c)
	if err != nil {
		return Body{}, fmt.Errorf("encode catalogue: %w", err)
	}
	plain = append(plain, '\n')
	var buf bytes.Buffer
	zw, _ := gzip.NewWriterLevel(&buf, gzip.BestSpeed)
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
