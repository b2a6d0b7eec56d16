package routing

import (
	"context"
	"strings"
	"sync"
	"sync/atomic"
	"testing"
	"time"

	"github.com/airside/airside/internal/apitoken"
	"github.com/airside/airside/internal/catalogue"
	"github.com/airside/airside/internal/fare"
	"github.com/airside/airside/internal/money"
)

// fakeSource is a catalogue whose revision and prices a test moves.
type fakeSource struct {
	mu       sync.Mutex
	revision int64
	builds   atomic.Int64
}

func (f *fakeSource) CatalogueRevision(context.Context) (int64, error) {
	f.mu.Lock()
	defer f.mu.Unlock()
	f.builds.Add(1)
	return f.revision, nil
}

func (f *fakeSource) FindListings(context.Context, catalogue.ListingFilter) ([]catalogue.Listing, error) {
	f.mu.Lock()
	defer f.mu.Unlock()
	price := money.Micros(100000 * f.revision)
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
	snap, err := Build(context.Background(), &fakeSource{revision: 3}, time.Now())
	if err != nil {
		t.Fatal(err)
	}
	full := string(snap.Catalogue("").Plain)
	if !strings.Contains(full, `"carrier":"a"`) || strings.Contains(full, `"carrier":"b"`) {
		t.Errorf("catalogue %s", full)
	}
	if empty := string(snap.Catalogue("unknown").Plain); !strings.Contains(empty, `"listings":[]`) || !strings.Contains(empty, `"revision":3`) {
		t.Errorf("unknown model: %s", empty)
	}
	if len(snap.Catalogue("").Gzip) == 0 {
		t.Error("no gzip body")
	}
}
