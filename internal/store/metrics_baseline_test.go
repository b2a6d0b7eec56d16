package store_test

import (
	"fmt"
	"testing"
	"time"

	"github.com/airside/airside/internal/catalogue"
	"github.com/airside/airside/internal/store"
	"github.com/airside/airside/internal/store/storetest"
)

// TestThePlainInsertBaselineStoresRowsAndNothingElse: the load tool's
// baseline puts every bucket in metric_buckets, in batches, without the
// hourly rollup the portal's own ingest adds; its rows are removed by
// their sources' prefix, and the portal's rows stay.
func TestThePlainInsertBaselineStoresRowsAndNothingElse(t *testing.T) {
	storetest.ForEach(t, func(t *testing.T, s *store.Store) {
		fx := newFixture(t, s)
		now := time.Now().UTC().Truncate(time.Minute)
		recorded := catalogue.Bucket{ListingID: fx.listingID, Minute: now.Add(-time.Hour), Source: "gw-1", Counts: catalogue.Counts{Requests: 7, GatewayCounts: catalogue.GatewayCounts{Backoffs: 1}}}
		if err := s.RecordBuckets(ctx, []catalogue.Bucket{recorded}); err != nil {
			t.Fatal(err)
		}
		var plain []catalogue.Bucket
		for i := range 37 {
			plain = append(plain, catalogue.Bucket{ListingID: fx.listingID, Minute: now.Add(-time.Duration(90+i) * time.Minute),
				Source: fmt.Sprintf("load-baseline-%d", i%3), Counts: catalogue.Counts{Requests: 3, GatewayCounts: catalogue.GatewayCounts{Backoffs: 1}}})
		}
		if err := s.InsertBucketsPlain(ctx, plain, 10); err != nil {
			t.Fatal(err)
		}
		minutes := func() int {
			got, err := s.LimitMinutes(ctx, fx.listingID, now.Add(-3*time.Hour))
			if err != nil {
				t.Fatal(err)
			}
			return len(got)
		}
		if n := minutes(); n != 38 {
			t.Errorf("%d minutes stored, want 38 (37 plain, 1 recorded)", n)
		}
		hours, err := s.HourlySeries(ctx, fx.listingID, now.Add(-3*time.Hour), now.Add(time.Hour))
		if err != nil {
			t.Fatal(err)
		}
		var rolled int64
		for _, h := range hours {
			rolled += h.Requests
		}
		if rolled != 7 {
			t.Errorf("the hourly rollup holds %d requests; want the recorded 7 alone", rolled)
		}
		if n, err := s.DeleteBucketsOfSources(ctx, "load-baseline-"); err != nil || n != 37 {
			t.Errorf("deleted %d (%v), want 37", n, err)
		}
		if n := minutes(); n != 1 {
			t.Errorf("%d minutes left, want the recorded one", n)
		}
		if _, err := s.DeleteBucketsOfSources(ctx, "%"); err == nil {
			t.Error("a wildcard prefix was taken")
		}
	})
}
