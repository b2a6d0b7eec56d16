package store_test

import (
	"fmt"
	"testing"
	"time"

	"github.com/airside/airside/internal/catalogue"
	"github.com/airside/airside/internal/store"
	"github.com/airside/airside/internal/store/storetest"
)

// TestShapeHoldersAreKeptOncePerMinuteAndPruned: a gateway's holder of a
// shape at a second is kept once per source (a retried report, or one with
// another listing for that second, changes nothing and counts nothing new;
// another source's report of the same minute, or a move later in the
// minute, is its own row, with the elections it held), read back per model
// oldest first (a minute by
// source, then second) within the window asked, and rows older than the
// retention go with the next report. A report moves the metrics version,
// so kept projections of the hours it touches are worked out again.
func TestShapeHoldersAreKeptOncePerMinuteAndPruned(t *testing.T) {
	storetest.ForEach(t, func(t *testing.T, s *store.Store) {
		fx := newFixture(t, s)
		now := time.Now().UTC().Truncate(time.Minute)
		s.Now = func() time.Time { return now }
		held := func(minute time.Time, source string, listing int64) catalogue.ShapeHolder {
			return catalogue.ShapeHolder{Model: "kimi-k2.5", Workload: "general", ListingID: listing, Minute: minute, Source: source}
		}
		old := now.Add(-catalogue.HealthSampleRetention - time.Hour)
		before := s.MetricsWritten()
		if n, err := s.RecordShapeHolders(ctx, []catalogue.ShapeHolder{held(old, "", fx.listingID), held(now.Add(-2*time.Minute), "b", fx.listingID),
			held(now.Add(-2*time.Minute), "a", fx.listingID), held(now.Add(-time.Minute), "a", fx.listingID)}); err != nil || n != 4 {
			t.Fatalf("first report: %d rows, %v", n, err)
		}
		if s.MetricsWritten() == before {
			t.Error("a report of holders did not move the metrics version")
		}
		if from, ok := s.MetricsTouchedSince(before); !ok || !from.Equal(old) {
			t.Errorf("the report touched the hours from %v (%v), want its earliest minute %v", from, ok, old)
		}
		if n, err := s.RecordShapeHolders(ctx, []catalogue.ShapeHolder{held(now.Add(-time.Minute), "a", fx.listingID+1)}); err != nil || n != 0 {
			t.Fatalf("a second report of a recorded minute: %d rows, %v; want none new", n, err)
		}
		moved := held(now.Add(-2*time.Minute), "a", fx.listingID)
		moved.Second, moved.Requests = 40, 17
		if n, err := s.RecordShapeHolders(ctx, []catalogue.ShapeHolder{moved}); err != nil || n != 1 {
			t.Fatalf("a move later in a recorded minute: %d rows, %v; want one new", n, err)
		}
		byModel, err := s.ShapeHolders(ctx, []string{"kimi-k2.5", "glm-5"}, old, now)
		if err != nil {
			t.Fatal(err)
		}
		got := byModel["kimi-k2.5"]
		var seen []string
		for _, h := range got {
			seen = append(seen, fmt.Sprintf("%s %s %d", h.At().Sub(now), h.Source, h.Requests))
			if h.ListingID != fx.listingID || h.Workload != "general" || h.CacheRelevant {
				t.Errorf("row read back as %+v", h)
			}
		}
		if want := "[-2m0s a 0 -1m20s a 17 -2m0s b 0 -1m0s a 0]"; fmt.Sprint(seen) != want {
			t.Errorf("holders read back %v, want %s (the old one pruned, the first report of a second kept, a minute by source then second, each with its elections)", seen, want)
		}
		if other := byModel["glm-5"]; len(other) != 0 {
			t.Errorf("another model's holders: %v", other)
		}
	})
}
