package routing

import (
	"bytes"
	"compress/gzip"
	"context"
	"encoding/json"
	"io"
	"math"
	"slices"
	"strings"
	"sync"
	"sync/atomic"
	"testing"
	"time"

	"github.com/airside/airside/internal/apitoken"
	"github.com/airside/airside/internal/catalogue"
	"github.com/airside/airside/internal/election"
	"github.com/airside/airside/internal/fare"
	"github.com/airside/airside/internal/money"
)

// fakeSource is a catalogue whose revision and prices a test moves.
type fakeSource struct {
	mu       sync.Mutex
	revision int64
	// read is the revision the last build read: its listings are priced
	// at it, as if both were read in one transaction. (Read apart, a
	// publication between the two reads gives a snapshot whose listings are
	// a revision ahead, which the keeper allows and which would make the
	// swap test below see a "torn" snapshot that is not one; seen once under
	// the race detector on a loaded machine.)
	read   int64
	builds atomic.Int64
	// buckets are the metrics reported, with when each was recorded.
	buckets  []catalogue.Bucket
	recorded []time.Time
	// fullReads and sinceReads count the health reads of each kind;
	// sinces are the incremental reads' cursors.
	fullReads, sinceReads int
	sinces                []time.Time
}

func (f *fakeSource) CatalogueRevision(context.Context) (int64, error) {
	f.mu.Lock()
	defer f.mu.Unlock()
	f.builds.Add(1)
	f.read = f.revision
	return f.revision, nil
}

func (f *fakeSource) FindListings(context.Context, catalogue.ListingFilter) ([]catalogue.Listing, error) {
	f.mu.Lock()
	defer f.mu.Unlock()
	price := money.Micros(100000 * f.read)
	return []catalogue.Listing{
		{ID: 1, CarrierSlug: "a", Model: catalogue.Model{Slug: "m"}, Status: catalogue.StatusInService, PriorityBP: 10000,
			Published: &fare.Fare{Input: price, Output: price, LandingFee: fare.BaselineLandingFee, CapScope: fare.ScopeGlobal}},
		{ID: 2, CarrierSlug: "b", Model: catalogue.Model{Slug: "m"}, Status: catalogue.StatusDelisted, PriorityBP: 10000,
			Published: &fare.Fare{Input: 1, Output: 1, LandingFee: fare.BaselineLandingFee, CapScope: fare.ScopeGlobal}},
	}, nil
}

func (f *fakeSource) FindCapabilityChecksFor(context.Context, []int64) (map[int64]map[string]string, error) {
	return map[int64]map[string]string{}, nil
}

func (f *fakeSource) FindLiveTokens(context.Context) (map[string]apitoken.Token, error) {
	return map[string]apitoken.Token{"hash": {ID: 9, Scopes: []string{apitoken.ScopeElect}}}, nil
}

func (f *fakeSource) HealthMetrics(_ context.Context, _ catalogue.HealthSpan, since time.Time) (catalogue.MetricRows, error) {
	f.mu.Lock()
	defer f.mu.Unlock()
	if since.IsZero() {
		f.fullReads++
	} else {
		f.sinceReads++
		f.sinces = append(f.sinces, since)
	}
	var out catalogue.MetricRows
	for i, b := range f.buckets {
		if !f.recorded[i].Before(since) {
			out.Buckets = append(out.Buckets, b)
			out.Latest = later(out.Latest, f.recorded[i])
		}
	}
	return out, nil
}

func (f *fakeSource) report(b catalogue.Bucket, at time.Time) {
	f.mu.Lock()
	defer f.mu.Unlock()
	f.buckets = append(f.buckets, b)
	f.recorded = append(f.recorded, at)
}

func (f *fakeSource) publish() {
	f.mu.Lock()
	f.revision++
	f.mu.Unlock()
}

// TestSnapshotSwapUnderConcurrentReads: readers always see a whole snapshot
// (revision, catalogue and market agree) while publications swap it; run
// with the race detector by make test.
func TestSnapshotSwapUnderConcurrentReads(t *testing.T) {
	src := &fakeSource{revision: 1}
	k := NewKeeper(src, time.Now)
	ctx := context.Background()
	stop := make(chan struct{})
	var wg sync.WaitGroup
	var reads atomic.Int64
	for range 8 {
		wg.Add(1)
		go func() {
			defer wg.Done()
			for {
				select {
				case <-stop:
					return
				default:
				}
				snap, err := k.Current(ctx)
				if err != nil {
					t.Error(err)
					return
				}
				m, ok := snap.Market("m")
				if !ok || len(m.Listings) != 2 {
					t.Errorf("market %+v", m)
					return
				}
				if want := money.Micros(100000 * snap.Revision); m.Listings[0].Published.Input != want {
					t.Errorf("revision %d with price %v: a torn snapshot", snap.Revision, m.Listings[0].Published.Input)
					return
				}
				if _, ok := snap.Token("hash"); !ok {
					t.Error("token missing")
					return
				}
				// Winner-only elections share the snapshot's compiled ballot
				// through a pool of forks (the race detector watches).
				if id, score, ok := snap.Winner(&election.Request{Model: "m", PromptTokens: 100}, nil); !ok || id != "a/m" || math.IsNaN(score) {
					t.Errorf("winner %q %v %v", id, score, ok)
					return
				}
				reads.Add(1)
			}
		}()
	}
	for range 50 {
		src.publish()
		k.Invalidate()
		time.Sleep(time.Millisecond)
	}
	deadline := time.Now().Add(30 * time.Second)
	for reads.Load() < 1000 && time.Now().Before(deadline) {
		time.Sleep(10 * time.Millisecond)
	}
	close(stop)
	wg.Wait()
	snap, _ := k.Current(ctx)
	if snap.Revision != 51 {
		t.Errorf("after the last publication the snapshot is at revision %d, want 51", snap.Revision)
	}
	if builds := src.builds.Load(); builds > 60 {
		t.Errorf("%d builds for 50 publications: readers rebuild more than once per change", builds)
	}
}

func TestSnapshotCatalogueLeavesDelistedOut(t *testing.T) {
	snap, err := NewKeeper(&fakeSource{revision: 3}, time.Now).Refresh(context.Background())
	if err != nil {
		t.Fatal(err)
	}
	full := string(mustCatalogue(t, snap, "").Plain)
	if !strings.Contains(full, `"carrier":"a"`) || strings.Contains(full, `"carrier":"b"`) {
		t.Errorf("catalogue %s", full)
	}
	if empty := string(mustCatalogue(t, snap, "unknown").Plain); !strings.Contains(empty, `"listings":[]`) || !strings.Contains(empty, `"revision":3`) {
		t.Errorf("unknown model: %s", empty)
	}
	if n := len(snap.base.fares.bodies); n != 1 {
		t.Errorf("%d catalogue bodies kept, want the whole one only (an unknown model's empty one is not kept)", n)
	}
}

// TestSnapshotCatalogueEncodedOnceWhenAsked: a health refresh encodes
// nothing; the first readers of a body (concurrently) get one encoding, in
// the catalogue's order, gzip equal to plain; the fares carry no health (the
// health document and the one-document form do) and are encoded once per
// revision, whatever health does.
func TestSnapshotCatalogueEncodedOnceWhenAsked(t *testing.T) {
	base, live := bigStructure(6, 4)
	lat := 123.0
	live[base.listings[9].ID] = catalogue.Health{LatencyMs: &lat}
	at := time.Date(2026, 12, 1, 10, 0, 0, 0, time.UTC)
	snap, err := assemble(base, live, at, nil)
	if err != nil {
		t.Fatal(err)
	}
	if len(base.fares.bodies)+len(snap.healthDoc.bodies)+len(snap.combined.bodies) != 0 {
		t.Fatal("a document was encoded before anyone asked")
	}
	for _, model := range []string{"", "model-2"} {
		for _, form := range []struct {
			name   string
			get    func(string) (Body, error)
			health bool
		}{{"fares", snap.Catalogue, false}, {"one document", snap.CatalogueWithHealth, true}} {
			bodies := make([]Body, 8)
			var wg sync.WaitGroup
			for i := range bodies {
				wg.Go(func() {
					b, err := form.get(model)
					if err != nil {
						t.Error(err)
					}
					bodies[i] = b
				})
			}
			wg.Wait()
			for _, b := range bodies[1:] {
				if &b.Plain[0] != &bodies[0].Plain[0] {
					t.Errorf("%s of model %q: encoded more than once", form.name, model)
				}
			}
			var doc Catalogue
			if err := json.Unmarshal(bodies[0].Plain, &doc); err != nil {
				t.Fatal(err)
			}
			var got []int64
			for _, l := range doc.Listings {
				got = append(got, l.ListingID)
				switch {
				case !form.health && l.Metrics != nil:
					t.Errorf("%s: listing %d carries health %+v", form.name, l.ListingID, l.Metrics)
				case form.health && l.ListingID == base.listings[9].ID && (l.Metrics == nil || l.Metrics.LatencyMs == nil || *l.Metrics.LatencyMs != lat):
					t.Errorf("%s: listing %d's health is %+v, want the snapshot's", form.name, l.ListingID, l.Metrics)
				}
			}
			if want := listingIDs(base, model); !slices.Equal(got, want) {
				t.Errorf("%s of model %q: listings %v, want %v", form.name, model, got, want)
			}
			if (doc.HealthAsOf != nil) != form.health {
				t.Errorf("%s: healthAsOf %v", form.name, doc.HealthAsOf)
			}
			zr, err := gzip.NewReader(bytes.NewReader(bodies[0].Gzip))
			if err != nil {
				t.Fatal(err)
			}
			if unzipped, err := io.ReadAll(zr); err != nil || !bytes.Equal(unzipped, bodies[0].Plain) {
				t.Errorf("%s of model %q: gzip body is not the plain one (%v)", form.name, model, err)
			}
		}
		health, err := snap.HealthDocument(model)
		if err != nil {
			t.Fatal(err)
		}
		var doc HealthDocument
		if err := json.Unmarshal(health.Plain, &doc); err != nil {
			t.Fatal(err)
		}
		var got []int64
		for _, l := range doc.Listings {
			got = append(got, l.ListingID)
			if l.ListingID == base.listings[9].ID && (l.Metrics.LatencyMs == nil || *l.Metrics.LatencyMs != lat) {
				t.Errorf("health document: listing %d has %+v, want the snapshot's", l.ListingID, l.Metrics)
			}
		}
		if want := listingIDs(base, model); !slices.Equal(got, want) || !doc.HealthAsOf.Equal(at) {
			t.Errorf("health of model %q: listings %v as of %s, want %v as of %s", model, got, doc.HealthAsOf, want, at)
		}
	}

	// A refresh that moved a figure: the fares are the bytes already
	// encoded; the health is encoded anew. One that moved none keeps both.
	fares := mustCatalogue(t, snap, "")
	health, _ := snap.HealthDocument("")
	lat2 := 124.0
	live[base.listings[9].ID] = catalogue.Health{LatencyMs: &lat2}
	moved, _ := assemble(base, live, at.Add(5*time.Second), snap)
	if b := mustCatalogue(t, moved, ""); &b.Plain[0] != &fares.Plain[0] {
		t.Error("a health refresh encoded the fares again")
	}
	if b, _ := moved.HealthDocument(""); &b.Plain[0] == &health.Plain[0] {
		t.Error("a figure moved and the old health document is served")
	}
	still, _ := assemble(base, live, at.Add(10*time.Second), moved)
	h1, _ := moved.HealthDocument("")
	if h2, _ := still.HealthDocument(""); &h2.Plain[0] != &h1.Plain[0] {
		t.Error("no figure moved and the health document was encoded again")
	}
}

// listingIDs are the ids of a model's listings (every model's for "") in
// catalogue order.
func listingIDs(base *structure, model string) []int64 {
	var ids []int64
	for _, l := range base.listings {
		if model == "" || l.Model.Slug == model {
			ids = append(ids, l.ID)
		}
	}
	return ids
}

func mustCatalogue(t *testing.T, snap *Snapshot, model string) Body {
	t.Helper()
	b, err := snap.Catalogue(model)
	if err != nil {
		t.Fatal(err)
	}
	return b
}

// TestHealthRefreshReadsOnlyNewMetrics: once built, a snapshot's health is
// refreshed from the metrics recorded since the last read, without reading the
// catalogue again; a new edge hour reads everything once.
func TestHealthRefreshReadsOnlyNewMetrics(t *testing.T) {
	ctx := context.Background()
	now := time.Date(2026, 12, 1, 10, 30, 20, 0, time.UTC)
	clock := func() time.Time { return now }
	src := &fakeSource{revision: 1}
	src.report(catalogue.Bucket{ListingID: 1, Minute: now.Truncate(time.Minute).Add(-time.Minute), Counts: catalogue.Counts{Requests: 10, Errors: 5}}, now)
	k := NewKeeper(src, clock)
	snap, err := k.Refresh(ctx)
	if err != nil {
		t.Fatal(err)
	}
	if h, _ := snap.Health(1); h.UptimePct == nil || *h.UptimePct != 50 {
		t.Fatalf("uptime after the first build %v, want 50", h.UptimePct)
	}
	builds := src.builds.Load()
	now = now.Add(10 * time.Second)
	src.report(catalogue.Bucket{ListingID: 1, Minute: now.Truncate(time.Minute), Counts: catalogue.Counts{Requests: 30}}, now)
	snap, err = k.rebuild(ctx, false)
	if err != nil {
		t.Fatal(err)
	}
	// weights: the current minute 10 x 30 ok, the one before 3 x (5 of 10)
	want := 100 * float64(10*30+3*5) / float64(10*30+3*10)
	if h, _ := snap.Health(1); h.UptimePct == nil || *h.UptimePct != want {
		t.Errorf("uptime after the refresh %v, want %v", h.UptimePct, want)
	}
	if src.builds.Load() != builds {
		t.Error("a health refresh read the catalogue again")
	}
	if src.fullReads != 1 || src.sinceReads != 1 {
		t.Errorf("%d full and %d incremental health reads, want 1 and 1", src.fullReads, src.sinceReads)
	}
	now = now.Add(time.Hour) // the day's edge moves into the next hour
	if _, err := k.rebuild(ctx, false); err != nil {
		t.Fatal(err)
	}
	if src.fullReads != 2 {
		t.Errorf("%d full reads after the edge hour moved, want 2", src.fullReads)
	}
}

// TestHealthRefreshReadsALateCommitWithinAMinute: between refreshes a
// refresh reads only a few seconds before its cursor, so a recorded row is
// not read again and again; a row whose transaction committed long after
// taking its time (here 40 s) is still read, by the deep read that comes
// once a minute.
func TestHealthRefreshReadsALateCommitWithinAMinute(t *testing.T) {
	ctx := context.Background()
	start := time.Date(2026, 12, 1, 10, 20, 0, 0, time.UTC)
	now := start
	src := &fakeSource{revision: 1}
	src.report(catalogue.Bucket{ListingID: 1, Minute: now.Add(-time.Minute), Counts: catalogue.Counts{Requests: 10}}, now)
	k := NewKeeper(src, func() time.Time { return now })
	if _, err := k.Refresh(ctx); err != nil {
		t.Fatal(err)
	}
	// Listing 2's minute is recorded at start+5s (the transaction's time)
	// and committed 40 s later.
	late := catalogue.Bucket{ListingID: 2, Minute: start, Counts: catalogue.Counts{Requests: 20}}
	var readAt time.Time
	for step := 1; step <= 14 && readAt.IsZero(); step++ {
		now = start.Add(time.Duration(step) * 5 * time.Second)
		// Listing 1 reports as it goes: the cursor moves with it.
		src.report(catalogue.Bucket{ListingID: 1, Minute: now.Truncate(time.Minute), Counts: catalogue.Counts{Requests: 10}}, now)
		if now.Equal(start.Add(45 * time.Second)) {
			src.report(late, start.Add(5*time.Second))
		}
		snap, err := k.rebuild(ctx, false)
		if err != nil {
			t.Fatal(err)
		}
		if h, _ := snap.Health(2); h.UptimePct != nil {
			readAt = now
		}
	}
	if readAt.IsZero() || readAt.Sub(start.Add(45*time.Second)) > time.Minute {
		t.Fatalf("a row committed 40 s after its time was read at %v, want within a minute of its commit (%v)", readAt, start.Add(45*time.Second))
	}
	src.mu.Lock()
	defer src.mu.Unlock()
	short, deep := 0, 0
	for _, since := range src.sinces {
		switch {
		case since.After(start.Add(-time.Minute)):
			short++
		default:
			deep++
		}
	}
	if deep != 1 || short != len(src.sinces)-1 || short < 10 {
		t.Errorf("incremental reads from %v: want one that reads two minutes back and the others a few seconds", src.sinces)
	}
}

// TestETagsFollowWhatEachDocumentCarries: the health validator changes when
// a listing's health figures change (a cache revalidating with it never
// keeps stale health) and stays when only the moment of computing moved; the
// fares' validator moves with the revision only.
func TestETagsFollowWhatEachDocumentCarries(t *testing.T) {
	base, live := bigStructure(3, 4)
	at := time.Date(2026, 12, 1, 10, 0, 0, 0, time.UTC)
	first, _ := assemble(base, live, at, nil)
	again, _ := assemble(base, live, at.Add(5*time.Second), first)
	if first.HealthETag() != again.HealthETag() {
		t.Errorf("same figures five seconds later: health ETag %s, then %s", first.HealthETag(), again.HealthETag())
	}
	if !strings.HasPrefix(first.HealthETag(), `W/"7-`) || first.ETag() != `W/"7"` {
		t.Errorf("ETags %s and %s do not name revision 7", first.ETag(), first.HealthETag())
	}
	moved := map[int64]catalogue.Health{}
	for id, h := range live {
		moved[id] = h
	}
	up := 97.25
	h := moved[base.listings[5].ID]
	h.UptimePct = &up
	moved[base.listings[5].ID] = h
	changed, _ := assemble(base, moved, at.Add(10*time.Second), again)
	if changed.HealthETag() == first.HealthETag() {
		t.Error("a listing's uptime moved and the health ETag stayed")
	}
	if changed.ETag() != first.ETag() {
		t.Errorf("only health moved and the fares' ETag went from %s to %s", first.ETag(), changed.ETag())
	}
	gone := map[int64]catalogue.Health{}
	for id, h := range live {
		gone[id] = h
	}
	h = gone[base.listings[2].ID]
	h.ThroughputTPS = nil // measured, then no longer
	gone[base.listings[2].ID] = h
	if unmeasured, _ := assemble(base, gone, at, nil); unmeasured.HealthETag() == first.HealthETag() {
		t.Error("a figure no longer measured and the health ETag stayed")
	}
	next := *base
	next.revision = 8
	next.fares = nil
	published, _ := assemble(&next, live, at, nil)
	if published.HealthETag() == first.HealthETag() || published.ETag() == first.ETag() {
		t.Error("a new revision and an ETag stayed")
	}
}

// TestHealthDeltaCarriesOnlyWhatMoved: from figures held a few refreshes
// ago, the delta lists only the listings that moved since (of the model
// asked for); figures older than the history, or from another revision,
// get no delta.
func TestHealthDeltaCarriesOnlyWhatMoved(t *testing.T) {
	base, live := bigStructure(3, 4)
	at := time.Date(2026, 12, 1, 10, 0, 0, 0, time.UTC)
	first, _ := assemble(base, live, at, nil)
	snap := first
	moveTo := func(i int, latency float64) {
		t.Helper()
		h := live[base.listings[i].ID]
		h.LatencyMs = &latency
		live[base.listings[i].ID] = h
		at = at.Add(5 * time.Second)
		snap, _ = assemble(base, live, at, snap)
	}
	moveTo(1, 111)
	second := snap
	moveTo(6, 222)
	moveTo(1, 333)
	delta := func(model, etag string) (HealthDocument, bool) {
		t.Helper()
		body, ok, err := snap.HealthDelta(model, etag)
		if err != nil {
			t.Fatal(err)
		}
		var doc HealthDocument
		if ok {
			if err := json.Unmarshal(body.Plain, &doc); err != nil {
				t.Fatal(err)
			}
		}
		return doc, ok
	}
	moved := func(doc HealthDocument) []int64 {
		var ids []int64
		for _, l := range doc.Listings {
			ids = append(ids, l.ListingID)
		}
		return ids
	}
	if doc, ok := delta("", first.HealthETag()); !ok || !doc.Delta || !slices.Equal(moved(doc), []int64{base.listings[1].ID, base.listings[6].ID}) {
		t.Errorf("since the first figures: delta %v, listings %v, want listings %d and %d", ok, moved(doc), base.listings[1].ID, base.listings[6].ID)
	} else if *doc.Listings[0].Metrics.LatencyMs != 333 {
		t.Errorf("the delta serves latency %v, want the latest 333", *doc.Listings[0].Metrics.LatencyMs)
	}
	if doc, ok := delta(base.listings[6].Model.Slug, second.HealthETag()); !ok || !slices.Equal(moved(doc), []int64{base.listings[6].ID}) {
		t.Errorf("one model since the second figures: %v %v", ok, moved(doc))
	}
	if _, ok := delta("", `W/"7-0000000000000000"`); ok {
		t.Error("a delta from figures never served")
	}
	for i := range keepGenerations {
		moveTo(2, float64(400+i))
	}
	if _, ok := delta("", first.HealthETag()); ok {
		t.Errorf("a delta from figures %d refreshes old, beyond the history of %d", keepGenerations+3, keepGenerations)
	}
	next := *base
	next.revision = 8
	next.fares = nil
	if republished, _ := assemble(&next, live, at, snap); len(republished.history) != 1 {
		t.Errorf("a new revision keeps %d generations of the old one's health", len(republished.history))
	}
}
