package store_test

import (
	"testing"
	"time"

	"github.com/airside/airside/internal/catalogue"
	"github.com/airside/airside/internal/store"
	"github.com/airside/airside/internal/store/storetest"
)

// counted sets every counter of catalogue.Counters to its own value, times
// scale.
func counted(scale int64) catalogue.Counts {
	var c catalogue.Counts
	for i, k := range catalogue.Counters {
		*k.Of(&c) = scale * int64(i+1)
	}
	return c
}

// TestEveryCounterIsStoredAndRead: every counter of catalogue.Counters goes
// into metric_buckets and metric_hourly and comes back out of each read of
// them (the health mirror's minutes and hours, a listing's hours, a model's
// peers, the demo's seeded hours), on both databases: a counter without its
// migration, or one a read leaves out, fails here.
func TestEveryCounterIsStoredAndRead(t *testing.T) {
	storetest.ForEach(t, func(t *testing.T, s *store.Store) {
		now := time.Now().UTC().Truncate(time.Minute)
		s.Now = func() time.Time { return now }
		fx := newFixture(t, s)
		peer, modelID := peerListing(t, s)
		minute := now.Add(-2 * time.Minute)
		hour := minute.Truncate(time.Hour)
		first := catalogue.Bucket{ListingID: peer, Minute: minute, Source: "gw", Counts: counted(1)}
		second := catalogue.Bucket{ListingID: peer, Minute: minute, Source: "gw-2", Counts: counted(10)}
		if err := s.RecordBuckets(ctx, []catalogue.Bucket{first, second}); err != nil {
			t.Fatal(err)
		}
		if err := s.RecordBuckets(ctx, []catalogue.Bucket{first}); err != nil {
			t.Fatalf("an identical replay: %v", err)
		}
		summed := counted(11)

		rows, err := s.HealthMetrics(ctx, catalogue.SpanAt(now), time.Time{})
		if err != nil {
			t.Fatal(err)
		}
		got := map[string]catalogue.Counts{}
		for _, b := range rows.Buckets {
			got[b.Source] = b.Counts
		}
		if got["gw"] != first.Counts || got["gw-2"] != second.Counts {
			t.Errorf("the mirror's minutes: %+v, want %+v and %+v", got, first.Counts, second.Counts)
		}
		if len(rows.Hours) != 1 || rows.Hours[0].Counts != summed {
			t.Errorf("the mirror's hours: %+v, want one of %+v", rows.Hours, summed)
		}
		series, err := s.HourlySeries(ctx, peer, hour, hour)
		if err != nil || len(series) != 1 || series[0].Counts != summed {
			t.Errorf("hourly series: %+v %v, want %+v", series, err, summed)
		}
		traffic, err := s.HourlyTraffic(ctx, []int64{peer}, hour, hour.Add(time.Hour))
		if err != nil || len(traffic[peer]) != 1 || traffic[peer][0].Counts != summed {
			t.Errorf("hourly traffic: %+v %v, want %+v", traffic, err, summed)
		}
		peers, err := s.PeerTraffic(ctx, modelID, fx.listingID, hour, hour.Add(time.Hour))
		if err != nil || peers.Counts != summed {
			t.Errorf("peer traffic: %+v %v, want %+v", peers, err, summed)
		}

		seededHour := hour.Add(-48 * time.Hour)
		if err := s.SeedHourly(ctx, map[int64][]catalogue.HourlyPoint{fx.listingID: {{Hour: seededHour, Counts: counted(7)}}}); err != nil {
			t.Fatal(err)
		}
		seeded, err := s.HourlySeries(ctx, fx.listingID, seededHour, seededHour)
		if err != nil || len(seeded) != 1 || seeded[0].Counts != counted(7) {
			t.Errorf("a seeded hour: %+v %v, want %+v", seeded, err, counted(7))
		}
	})
}

// TestLimitMinutesAndMinuteSums: the minutes a listing's limits acted in
// come back summed over the gateways reporting them, oldest first, and
// nothing else; a model's listings are summed over a few minutes each.
func TestLimitMinutesAndMinuteSums(t *testing.T) {
	storetest.ForEach(t, func(t *testing.T, s *store.Store) {
		now := time.Now().UTC().Truncate(time.Minute)
		s.Now = func() time.Time { return now }
		fx := newFixture(t, s)
		peer, modelID := peerListing(t, s)
		m := func(i int) time.Time { return now.Add(time.Duration(i-10) * time.Minute) }
		b := func(listing int64, i int, source string, c catalogue.Counts) catalogue.Bucket {
			return catalogue.Bucket{ListingID: listing, Minute: m(i), Source: source, Counts: c}
		}
		if err := s.RecordBuckets(ctx, []catalogue.Bucket{
			b(fx.listingID, 1, "gw", catalogue.Counts{Requests: 10, Errors: 4}),
			b(fx.listingID, 2, "gw", catalogue.Counts{Requests: 10, Errors: 5, GatewayCounts: catalogue.GatewayCounts{BreakerOpenings: 1}}),
			b(fx.listingID, 2, "gw-2", catalogue.Counts{Requests: 5, GatewayCounts: catalogue.GatewayCounts{BreakerOpenings: 1, Backoffs: 1}}),
			b(fx.listingID, 3, "gw", catalogue.Counts{Requests: 10}),
			b(fx.listingID, 6, "gw", catalogue.Counts{Requests: 3, GatewayCounts: catalogue.GatewayCounts{BreakerClosings: 1}}),
			b(peer, 2, "gw", catalogue.Counts{Requests: 50, Errors: 1}),
		}); err != nil {
			t.Fatal(err)
		}
		minutes, err := s.LimitMinutes(ctx, fx.listingID, m(0))
		if err != nil {
			t.Fatal(err)
		}
		if len(minutes) != 2 || !minutes[0].Minute.Equal(m(2)) || minutes[0].BreakerOpenings != 2 || minutes[0].Backoffs != 1 ||
			minutes[0].Requests != 15 || !minutes[1].Minute.Equal(m(6)) || minutes[1].BreakerClosings != 1 {
			t.Errorf("limit minutes %+v", minutes)
		}
		if later, err := s.LimitMinutes(ctx, fx.listingID, m(3)); err != nil || len(later) != 1 {
			t.Errorf("from minute 3: %+v %v", later, err)
		}
		sums, err := s.MinuteSums(ctx, modelID, m(1), m(3))
		if err != nil {
			t.Fatal(err)
		}
		if got := sums[fx.listingID]; got.Requests != 25 || got.Errors != 9 || got.BreakerOpenings != 2 {
			t.Errorf("the listing's minutes 1-2: %+v", got)
		}
		if got := sums[peer]; got.Requests != 50 || got.Errors != 1 || len(sums) != 2 {
			t.Errorf("the peer's: %+v (of %d listings)", got, len(sums))
		}
	})
}
