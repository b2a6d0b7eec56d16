package store_test

import (
	"encoding/json"
	"net/http"
	"net/http/httptest"
	"sync"
	"sync/atomic"
	"testing"
	"time"

	"github.com/airside/airside/internal/feed"
	"github.com/airside/airside/internal/store"
	"github.com/airside/airside/internal/store/storetest"
)

// TestADueFeedIsReadByOneProcess: two serve processes' schedulers find the
// same due feed at once; one claims it and fetches it, the other skips it;
// fifteen minutes on, it is due and claimed again. The feed's mapping and
// the models its read found are stored and read back.
func TestADueFeedIsReadByOneProcess(t *testing.T) {
	for _, d := range storetest.Dialects {
		t.Run(string(d), func(t *testing.T) {
			url := storetest.URL(t, d)
			a, b := storetest.OpenURL(t, url), storetest.OpenURL(t, url)
			fx := newFixture(t, a)
			var fetches atomic.Int64
			srv := httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
				fetches.Add(1)
				_ = json.NewEncoder(w).Encode(feed.Document{Data: []feed.Model{{ID: "acme/unlisted", Pricing: feed.Pricing{Prompt: "0.000001", Completion: "0.000002"}}}})
			}))
			defer srv.Close()
			if err := a.SaveFeed(ctx, fx.authorID, feed.Config{CarrierID: fx.carrierID, URL: srv.URL}); err != nil {
				t.Fatal(err)
			}
			if err := a.SaveFeedMapping(ctx, fx.authorID, fx.carrierID, map[string]int64{"acme/other": feed.NotImported}); err != nil {
				t.Fatal(err)
			}
			now := time.Date(2026, 12, 4, 10, 0, 0, 123456789, time.UTC)
			syncer := func(st *store.Store) *feed.Syncer {
				return &feed.Syncer{Store: st, Reads: st, HTTP: srv.Client(), Now: func() time.Time { return now }}
			}
			round := func() int64 {
				var wg sync.WaitGroup
				read := make([]int, 2)
				for i, st := range []*store.Store{a, b} {
					wg.Go(func() {
						n, err := syncer(st).SyncDue(ctx)
						if err != nil {
							t.Error(err)
						}
						read[i] = n
					})
				}
				wg.Wait()
				if read[0]+read[1] != 1 {
					t.Errorf("the processes read %v feeds; want one read between them", read)
				}
				return fetches.Load()
			}
			if n := round(); n != 1 {
				t.Errorf("first round: %d fetches, want 1", n)
			}
			if n, _ := syncer(a).SyncDue(ctx); n != 0 {
				t.Errorf("read again at once: %d", n)
			}
			now = now.Add(16 * time.Minute)
			if n := round(); n != 2 {
				t.Errorf("second round: %d fetches in all, want 2", n)
			}
			c, err := b.FindFeed(ctx, fx.carrierID)
			if err != nil {
				t.Fatal(err)
			}
			if len(c.Models) != 1 || c.Models[0] != "acme/unlisted" || c.Mapping["acme/other"] != feed.NotImported || len(c.Mapping) != 1 {
				t.Errorf("stored models %v, mapping %v", c.Models, c.Mapping)
			}
		})
	}
}
