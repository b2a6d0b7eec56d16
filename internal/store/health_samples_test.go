package store_test

import (
	"testing"
	"time"

	"github.com/airside/airside/internal/catalogue"
	"github.com/airside/airside/internal/store"
	"github.com/airside/airside/internal/store/storetest"
)

// TestHealthSamplesAreKeptOnceAndPruned: a sample time is recorded once
// (a second portal's sample of the same time keeps the first), read back
// per listing oldest first within the window asked, and samples older than
// the retention go with the next record.
func TestHealthSamplesAreKeptOnceAndPruned(t *testing.T) {
	storetest.ForEach(t, func(t *testing.T, s *store.Store) {
		fx := newFixture(t, s)
		now := time.Now().UTC().Truncate(catalogue.HealthSampleEvery)
		s.Now = func() time.Time { return now }
		up := func(v float64) catalogue.Health { return catalogue.Health{UptimePct: &v} }
		old := now.Add(-catalogue.HealthSampleRetention - time.Hour)
		for _, sample := range []struct {
			at     time.Time
			uptime float64
		}{{old, 10}, {now.Add(-20 * time.Minute), 99}, {now.Add(-10 * time.Minute), 98}, {now.Add(-10 * time.Minute), 50}, {now, 97}} {
			if err := s.RecordHealthSample(ctx, sample.at, map[int64]catalogue.Health{fx.listingID: up(sample.uptime)}); err != nil {
				t.Fatal(err)
			}
		}
		got, err := s.HealthSamples(ctx, []int64{fx.listingID}, old, now)
		if err != nil {
			t.Fatal(err)
		}
		var uptimes []float64
		for _, sm := range got[fx.listingID] {
			uptimes = append(uptimes, *sm.UptimePct)
		}
		if len(uptimes) != 2 || uptimes[0] != 99 || uptimes[1] != 98 || !got[fx.listingID][1].At.Equal(now.Add(-10*time.Minute)) {
			t.Errorf("samples from the old one's time to now: uptimes %v (%+v), want 99 and 98 (the first of two at one time kept, the old one pruned, now's outside)",
				uptimes, got[fx.listingID])
		}
	})
}
