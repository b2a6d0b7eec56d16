package store_test

import (
	"context"
	"errors"
	"maps"
	"math"
	"math/rand/v2"
	"reflect"
	"slices"
	"sync"
	"sync/atomic"
	"testing"
	"time"

	"github.com/airside/airside/internal/account"
	"github.com/airside/airside/internal/apitoken"
	"github.com/airside/airside/internal/apperr"
	"github.com/airside/airside/internal/catalogue"
	"github.com/airside/airside/internal/election"
	"github.com/airside/airside/internal/fare"
	"github.com/airside/airside/internal/routing"
	"github.com/airside/airside/internal/store"
	"github.com/airside/airside/internal/store/storetest"
	"github.com/airside/airside/internal/workflow"
)

func TestLiveHealthMatchesTheHandComputedWindow(t *testing.T) {
	storetest.ForEach(t, func(t *testing.T, s *store.Store) {
		fx := newFixture(t, s)
		now := time.Now().UTC()
		s.Now = func() time.Time { return now }
		m := func(ago int) time.Time { return now.Truncate(time.Minute).Add(-time.Duration(ago) * time.Minute) }
		buckets := []catalogue.Bucket{
			{ListingID: fx.listingID, Minute: m(0), Counts: catalogue.Counts{Requests: 10, Errors: 5, ClientErrors: 1, TTFTMsSum: 2000, OutputTokens: 400, DurationMs: 8000, InputTokens: 10000, CachedInputTokens: 2000}},
			{ListingID: fx.listingID, Minute: m(3), Counts: catalogue.Counts{Requests: 20, TTFTMsSum: 6000, OutputTokens: 2000, DurationMs: 20000, InputTokens: 20000, CachedInputTokens: 8000}},
			{ListingID: fx.listingID, Minute: m(30), Counts: catalogue.Counts{Requests: 100, Errors: 1, TTFTMsSum: 39600, OutputTokens: 9900, DurationMs: 99000}},
			{ListingID: fx.listingID, Minute: m(61), Counts: catalogue.Counts{Requests: 1000, Errors: 1000}},
		}
		if err := s.RecordBuckets(ctx, buckets); err != nil {
			t.Fatal(err)
		}
		// The same batch again (a retry) must not double count.
		if err := s.RecordBuckets(ctx, buckets); err != nil {
			t.Fatal(err)
		}
		l, err := s.FindListing(ctx, fx.listingID, nil)
		if err != nil {
			t.Fatal(err)
		}
		want := catalogue.HealthFrom(catalogue.WindowOf(buckets, now), catalogue.DayOf(buckets, now))
		h := l.Health
		if h.UptimePct == nil || math.Abs(*h.UptimePct-100*199.0/250) > 1e-9 || math.Abs(*h.UptimePct-*want.UptimePct) > 1e-9 {
			t.Errorf("uptime %v, want %v", deref(h.UptimePct), 100*199.0/250)
		}
		if math.Abs(*h.LatencyMs-*want.LatencyMs) > 1e-9 || math.Abs(*h.ThroughputTPS-*want.ThroughputTPS) > 1e-9 {
			t.Errorf("latency %v / %v, throughput %v / %v", *h.LatencyMs, *want.LatencyMs, *h.ThroughputTPS, *want.ThroughputTPS)
		}
		// Day: successes 4 + 20 + 99 + 0 = 123 >= 20; input 30,000 >= 20,000: observed rates count.
		if h.CacheHitRate == nil || math.Abs(*h.CacheHitRate-10000.0/30000) > 1e-12 || math.Abs(*h.OutputRatio-12300.0/30000) > 1e-12 {
			t.Errorf("hit rate %v, output ratio %v", deref(h.CacheHitRate), deref(h.OutputRatio))
		}
	})
}

func deref(v *float64) float64 {
	if v == nil {
		return math.NaN()
	}
	return *v
}

func TestTokens(t *testing.T) {
	storetest.ForEach(t, func(t *testing.T, s *store.Store) {
		admin := newReviewer(t, s, "admin@airside.example")
		tokens := &apitoken.Service{Store: s, Now: s.Now}
		p := &account.Principal{User: account.User{ID: admin, Staff: account.StaffAdmin}}
		if _, err := tokens.Create(ctx, p, "", nil); apperr.Code(err) != apperr.EINVALID {
			t.Errorf("unnamed token without scopes: %v", err)
		}
		secret, err := tokens.Create(ctx, p, "gateway-eu", []string{apitoken.ScopeCatalogueRead, apitoken.ScopeElect})
		if err != nil {
			t.Fatal(err)
		}
		tok, err := tokens.Authenticate(ctx, secret)
		if err != nil || !tok.Has(apitoken.ScopeElect) || tok.Has(apitoken.ScopeMetricsWrite) || tok.LastUsedAt == nil {
			t.Fatalf("token %+v, %v", tok, err)
		}
		if _, err := tokens.Authenticate(ctx, secret+"x"); apperr.Code(err) != apperr.ENOTFOUND {
			t.Errorf("a wrong secret: %v", err)
		}
		list, _ := s.FindTokens(ctx, nil)
		for _, tk := range list {
			if tk.Name == secret {
				t.Error("the secret is stored as is")
			}
		}
		if err := s.RevokeToken(ctx, admin, nil, tok.ID); err != nil {
			t.Fatal(err)
		}
		if _, err := tokens.Authenticate(ctx, secret); apperr.Code(err) != apperr.ENOTFOUND {
			t.Errorf("a revoked token still works: %v", err)
		}
	})
}

// TestPublicationWakesOtherProcesses: on PostgreSQL a publication by one
// store (serve process) wakes waiters of another through LISTEN/NOTIFY.
func TestPublicationWakesOtherProcesses(t *testing.T) {
	url := storetest.URL(t, store.Postgres)
	a, err := store.Open(ctx, url)
	if err != nil {
		t.Fatal(err)
	}
	defer a.Close()
	if err := a.Migrate(ctx); err != nil {
		t.Fatal(err)
	}
	b, err := store.Open(ctx, url)
	if err != nil {
		t.Fatal(err)
	}
	defer b.Close()
	fx := newFixture(t, a)
	reviewer := newReviewer(t, a, "rev@airside.example")
	listenCtx, stop := context.WithCancel(ctx)
	defer stop()
	go b.ListenForPublications(listenCtx, func(err error) { t.Logf("listener: %v", err) })
	time.Sleep(300 * time.Millisecond) // let the listener subscribe
	woken := b.Published()
	id := submitted(t, a, fx, "0.45", nil)
	if _, err := a.DecideFiling(ctx, reviewer, id, workflow.Approve, "", versionOf(t, a, id)); err != nil {
		t.Fatal(err)
	}
	select {
	case <-woken:
	case <-time.After(20 * time.Second):
		t.Fatal("the other process was never told of the publication")
	}
	changed, err := b.FindListings(ctx, catalogue.ListingFilter{ChangedAfter: 1})
	if err != nil || len(changed) != 1 || changed[0].ID != fx.listingID {
		t.Errorf("changes after revision 1: %v, %v", changed, err)
	}
}

func TestOldBucketsAreDeleted(t *testing.T) {
	storetest.ForEach(t, func(t *testing.T, s *store.Store) {
		fx := newFixture(t, s)
		now := time.Now().UTC().Truncate(time.Minute)
		if err := s.RecordBuckets(ctx, []catalogue.Bucket{
			{ListingID: fx.listingID, Minute: now.Add(-30 * time.Hour), Counts: catalogue.Counts{Requests: 5}},
			{ListingID: fx.listingID, Minute: now.Add(-time.Hour), Counts: catalogue.Counts{Requests: 7}},
		}); err != nil {
			t.Fatal(err)
		}
		n, err := s.DeleteBucketsBefore(ctx, now.Add(-25*time.Hour))
		if err != nil || n != 1 {
			t.Fatalf("deleted %d, %v", n, err)
		}
		points, _ := s.MetricSeries(ctx, fx.listingID, now.Add(-2*time.Hour), time.Hour)
		total := int64(0)
		for _, p := range points {
			total += p.Requests
		}
		if total != 7 {
			t.Errorf("the recent bucket went too: %d requests left", total)
		}
	})
}

// TestReplayedBucketsFirstWriteWins: the same bucket again is a harmless
// retry; other figures for a recorded minute are refused, that bucket alone:
// the batch's other buckets are stored (a restarted gateway's conflicting
// minute must not sink the minutes beside it).
func TestReplayedBucketsFirstWriteWins(t *testing.T) {
	storetest.ForEach(t, func(t *testing.T, s *store.Store) {
		fx := newFixture(t, s)
		minute := time.Now().UTC().Truncate(time.Minute)
		first := catalogue.Bucket{ListingID: fx.listingID, Minute: minute, Counts: catalogue.Counts{Requests: 10, TTFTMsSum: 5000, OutputTokens: 100, DurationMs: 9000}}
		if err := s.RecordBuckets(ctx, []catalogue.Bucket{first}); err != nil {
			t.Fatal(err)
		}
		if err := s.RecordBuckets(ctx, []catalogue.Bucket{first}); err != nil {
			t.Fatalf("an identical retry: %v", err)
		}
		other := first
		other.Requests = 99
		fresh := catalogue.Bucket{ListingID: fx.listingID, Minute: minute.Add(-time.Minute), Counts: catalogue.Counts{Requests: 1}}
		err := s.RecordBuckets(ctx, []catalogue.Bucket{fresh, other})
		var replay *catalogue.ReplayError
		if !errors.As(err, &replay) || !slices.Equal(replay.Indexes, []int{1}) {
			t.Fatalf("a replay with other figures: %v", err)
		}
		series, err := s.MetricSeries(ctx, fx.listingID, minute.Add(-time.Minute), time.Minute)
		if err != nil {
			t.Fatal(err)
		}
		var total int64
		for _, p := range series {
			total += p.Requests
		}
		if total != 11 {
			t.Errorf("requests recorded %d, want the first write's 10 and the batch's new minute's 1", total)
		}
	})
}

// TestRollupsEqualTheMinutes: health read through the hourly rollups (the
// day) and the minutes (the window and the day's two partial hours) equals
// health computed from every raw bucket, on both databases, whatever the
// minute of the hour, with retries and a concurrent writer.
func TestRollupsEqualTheMinutes(t *testing.T) {
	storetest.ForEach(t, func(t *testing.T, s *store.Store) {
		fx := newFixture(t, s)
		for _, offset := range []time.Duration{0, 17 * time.Minute, 59*time.Minute + 30*time.Second} {
			now := time.Date(2026, 12, 1, 10, 0, 0, 0, time.UTC).Add(offset)
			s.Now = func() time.Time { return now }
			rng := rand.New(rand.NewPCG(uint64(offset), 1))
			var all []catalogue.Bucket
			seen := map[int64]bool{}
			for range 600 {
				minute := now.Truncate(time.Minute).Add(-time.Duration(rng.IntN(25*60)) * time.Minute)
				if seen[minute.Unix()] {
					continue
				}
				seen[minute.Unix()] = true
				req := int64(1 + rng.IntN(100))
				errs := int64(rng.IntN(int(req)))
				all = append(all, catalogue.Bucket{ListingID: fx.listingID, Minute: minute, Counts: catalogue.Counts{Requests: req, Errors: errs,
					TTFTMsSum: (req - errs) * 300, OutputTokens: (req - errs) * 200, DurationMs: (req - errs) * 900,
					InputTokens: req * 1000, CachedInputTokens: req * 400}})
			}
			if err := s.ExecForTest(ctx, "DELETE FROM metric_buckets", "DELETE FROM metric_hourly"); err != nil {
				t.Fatal(err)
			}
			// In batches, some twice (retries), from two writers at once.
			var wg sync.WaitGroup
			for w := range 2 {
				wg.Add(1)
				go func() {
					defer wg.Done()
					for i := w * 50; i < len(all); i += 100 {
						batch := all[i:min(i+50, len(all))]
						for range 2 {
							if err := s.RecordBuckets(context.Background(), batch); err != nil {
								t.Error(err)
							}
						}
					}
				}()
			}
			wg.Wait()
			l, err := s.FindListing(ctx, fx.listingID, nil)
			if err != nil {
				t.Fatal(err)
			}
			want := catalogue.HealthFrom(catalogue.WindowOf(all, now), catalogue.DayOf(all, now))
			for name, pair := range map[string][2]*float64{
				"uptime": {l.Health.UptimePct, want.UptimePct}, "latency": {l.Health.LatencyMs, want.LatencyMs},
				"throughput": {l.Health.ThroughputTPS, want.ThroughputTPS}, "cache hit rate": {l.Health.CacheHitRate, want.CacheHitRate},
				"output ratio": {l.Health.OutputRatio, want.OutputRatio},
			} {
				got, w := pair[0], pair[1]
				if (got == nil) != (w == nil) || got != nil && math.Abs(*got-*w) > 1e-9 {
					t.Errorf("at :%02d %s from rollups %v, from the minutes %v", now.Minute(), name, deref(got), deref(w))
				}
			}
		}
	})
}

// TestRetention: minutes go after 25 hours, hourly rollups after 400 days,
// nothing younger.
func TestRetention(t *testing.T) {
	storetest.ForEach(t, func(t *testing.T, s *store.Store) {
		fx := newFixture(t, s)
		now := time.Now().UTC().Truncate(time.Minute)
		s.Now = func() time.Time { return now }
		in := &catalogue.Ingest{Store: s, Now: s.Now}
		old := catalogue.Bucket{ListingID: fx.listingID, Minute: now.Add(-401 * 24 * time.Hour), Counts: catalogue.Counts{Requests: 1}}
		kept := catalogue.Bucket{ListingID: fx.listingID, Minute: now.Add(-399 * 24 * time.Hour), Counts: catalogue.Counts{Requests: 2}}
		day := catalogue.Bucket{ListingID: fx.listingID, Minute: now.Add(-26 * time.Hour), Counts: catalogue.Counts{Requests: 3}}
		fresh := catalogue.Bucket{ListingID: fx.listingID, Minute: now.Add(-time.Hour), Counts: catalogue.Counts{Requests: 4}}
		if err := s.RecordBuckets(ctx, []catalogue.Bucket{old, kept, day, fresh}); err != nil {
			t.Fatal(err)
		}
		if _, err := in.Prune(ctx); err != nil {
			t.Fatal(err)
		}
		hours, err := s.HourlySeries(ctx, fx.listingID, now.Add(-500*24*time.Hour), now)
		if err != nil {
			t.Fatal(err)
		}
		var requests []int64
		for _, h := range hours {
			requests = append(requests, h.Requests)
		}
		if !slices.Equal(requests, []int64{2, 3, 4}) {
			t.Errorf("hourly rows after pruning: %v, want those of 399 days, 26 hours and 1 hour ago", requests)
		}
		series, _ := s.MetricSeries(ctx, fx.listingID, now.Add(-30*time.Hour), time.Hour)
		var minutes int64
		for _, p := range series {
			minutes += p.Requests
		}
		if minutes != 4 {
			t.Errorf("minutes kept hold %d requests, want only the last 25 hours' 4", minutes)
		}
	})
}

// TestHealthMirrorEqualsTheTables: the routing snapshot's health, kept from
// a metrics mirror read whole once an hour and otherwise only for what was
// recorded since, equals the health the store computes from its tables,
// step after step over three hours of a clock that crosses hour boundaries,
// with buckets arriving late (up to a day old), on both databases.
func TestHealthMirrorEqualsTheTables(t *testing.T) {
	storetest.ForEach(t, func(t *testing.T, s *store.Store) {
		fx := newFixture(t, s)
		orbit, err := s.CreateCarrier(ctx, nil, "orbit", "Orbit")
		if err != nil {
			t.Fatal(err)
		}
		l, _ := s.FindListing(ctx, fx.listingID, nil)
		second, err := s.CreateListing(ctx, nil, orbit.ID, l.Model.ID)
		if err != nil {
			t.Fatal(err)
		}
		if _, err := s.PublishSeedFare(ctx, &fare.Fare{ListingID: second, Input: mustPrice(t, "0.40"), Output: mustPrice(t, "2.00"),
			LandingFee: 2000, CapScope: fare.ScopeGlobal}); err != nil {
			t.Fatal(err)
		}
		ids := []int64{fx.listingID, second}
		now := time.Date(2026, 12, 1, 9, 41, 13, 0, time.UTC)
		s.Now = func() time.Time { return now }
		keeper := routing.NewKeeper(s, s.Now)
		rng := rand.New(rand.NewPCG(7, 11))
		taken := map[[2]int64]bool{}
		for step := range 45 {
			var batch []catalogue.Bucket
			for range 1 + rng.IntN(6) {
				id := ids[rng.IntN(len(ids))]
				age := time.Duration(rng.IntN(3)) * time.Minute // mostly the last minutes
				if rng.IntN(4) == 0 {
					age = time.Duration(rng.IntN(24*60)) * time.Minute // a late report
				}
				minute := now.Truncate(time.Minute).Add(-age)
				if taken[[2]int64{id, minute.Unix()}] {
					continue
				}
				taken[[2]int64{id, minute.Unix()}] = true
				req := int64(1 + rng.IntN(50))
				errs := int64(rng.IntN(int(req)))
				batch = append(batch, catalogue.Bucket{ListingID: id, Minute: minute, Counts: catalogue.Counts{Requests: req, Errors: errs,
					TTFTMsSum: (req - errs) * int64(100+rng.IntN(400)), OutputTokens: (req - errs) * 200, DurationMs: (req - errs) * 900,
					InputTokens: req * 1000, CachedInputTokens: req * int64(rng.IntN(900))}})
			}
			if err := s.RecordBuckets(ctx, batch); err != nil {
				t.Fatal(err)
			}
			snap, err := keeper.Refresh(ctx)
			if err != nil {
				t.Fatal(err)
			}
			for _, id := range ids {
				want, err := s.FindListing(ctx, id, nil)
				if err != nil {
					t.Fatal(err)
				}
				got, ok := snap.Health(id)
				if !ok {
					t.Fatalf("listing %d not in the snapshot", id)
				}
				for name, pair := range map[string][2]*float64{
					"uptime": {got.UptimePct, want.Health.UptimePct}, "latency": {got.LatencyMs, want.Health.LatencyMs},
					"throughput": {got.ThroughputTPS, want.Health.ThroughputTPS}, "cache hit rate": {got.CacheHitRate, want.Health.CacheHitRate},
					"output ratio": {got.OutputRatio, want.Health.OutputRatio},
				} {
					g, w := pair[0], pair[1]
					if (g == nil) != (w == nil) || g != nil && math.Abs(*g-*w) > 1e-9 {
						t.Errorf("step %d at %s, listing %d: %s from the mirror %v, from the tables %v", step, now.Format("15:04:05"), id, name, deref(g), deref(w))
					}
				}
			}
			now = now.Add(time.Duration(20+rng.IntN(400)) * time.Second)
		}
	})
}

// TestGatewayFiguresAndDemandAreKept: the reference gateway's further
// figures roll up into the hours like the rest, a replay with the same
// figures is harmless and one with others refused; demand rows likewise,
// summed per workload for the mix and by hour, and pruned after their
// retention.
func TestGatewayFiguresAndDemandAreKept(t *testing.T) {
	storetest.ForEach(t, func(t *testing.T, s *store.Store) {
		fx := newFixture(t, s)
		now := time.Now().UTC()
		s.Now = func() time.Time { return now }
		hour := now.Truncate(time.Hour)
		g := catalogue.GatewayCounts{Routed: 5, Pinned: 1, Exploration: 1, Fallback: 2, RateLimited: 3, CacheReadTokens: 700,
			CacheWriteTokens: 300, ToolCalls: 4, MalformedToolCalls: 1}
		buckets := []catalogue.Bucket{
			{ListingID: fx.listingID, Minute: hour, Counts: catalogue.Counts{Requests: 10, Errors: 1, GatewayCounts: g}},
			{ListingID: fx.listingID, Minute: hour.Add(time.Minute), Counts: catalogue.Counts{Requests: 10, GatewayCounts: g}},
		}
		if err := s.RecordBuckets(ctx, buckets); err != nil {
			t.Fatal(err)
		}
		if err := s.RecordBuckets(ctx, buckets); err != nil {
			t.Fatalf("an identical replay: %v", err)
		}
		other := buckets[:1:1]
		other[0].RateLimited = 9
		var replay *catalogue.ReplayError
		if err := s.RecordBuckets(ctx, []catalogue.Bucket{other[0]}); !errors.As(err, &replay) {
			t.Errorf("a replay with another 429 count: %v, want a ReplayError", err)
		}
		points, err := s.HourlySeries(ctx, fx.listingID, hour, hour)
		if err != nil || len(points) != 1 {
			t.Fatalf("hourly: %v %v", points, err)
		}
		want := g
		want.Add(g)
		if points[0].GatewayCounts != want {
			t.Errorf("the hour holds %+v, want %+v", points[0].GatewayCounts, want)
		}

		minute := now.Truncate(time.Minute)
		demand := []catalogue.Demand{
			{Model: "m", Workload: "coding", Minute: minute, Requests: 4, PromptTokens: 40000},
			{Model: "m", Workload: "coding", Minute: minute.Add(-time.Minute), Requests: 2, PromptTokens: 20000},
			{Model: "m", Workload: "general", Minute: minute, Requests: 6, PromptTokens: 600},
			{Model: "other", Workload: "general", Minute: minute, Requests: 100},
			{Model: "m", Workload: "chat", Minute: minute.Add(-9 * 24 * time.Hour), Requests: 50},
		}
		if err := s.RecordDemand(ctx, demand); err != nil {
			t.Fatal(err)
		}
		if err := s.RecordDemand(ctx, demand[:2]); err != nil {
			t.Fatalf("an identical demand replay: %v", err)
		}
		changed := demand[0]
		changed.Requests = 5
		if err := s.RecordDemand(ctx, []catalogue.Demand{demand[2], changed}); !errors.As(err, &replay) || !slices.Equal(replay.DemandIndexes, []int{1}) {
			t.Errorf("a demand replay with other figures: %v, want a ReplayError naming row 1", err)
		}
		mix, err := s.DemandMix(ctx, "m", now.Add(-7*24*time.Hour))
		if err != nil {
			t.Fatal(err)
		}
		if mix["coding"].Requests != 6 || mix["coding"].PromptTokens != 60000 || mix["general"].Requests != 6 || len(mix) != 2 {
			t.Errorf("the week's mix of m: %+v", mix)
		}
		// Per workload, the requests of minutes with a large average prompt
		// apart: coding's 40,000 and 20,000 tokens over 4 and 2 requests are
		// 10,000 a request (large); general's 600 over 6 are small.
		shapes, err := s.DemandShapes(ctx, "m", now.Add(-7*24*time.Hour), 5000)
		if err != nil {
			t.Fatal(err)
		}
		if c, g := shapes["coding"], shapes["general"]; c.Requests != 6 || c.LargeRequests != 6 || g.Requests != 6 || g.LargeRequests != 0 || c.PromptTokens != 60000 {
			t.Errorf("demand shapes of m: %+v", shapes)
		}
		// By hour: the last minute of an hour and the first of the next fall
		// apart; minutes of one hour add up; until is exclusive.
		hourStart := now.Truncate(time.Hour).Add(-3 * time.Hour)
		byHour := []catalogue.Demand{
			{Model: "h", Workload: "general", Minute: hourStart.Add(-time.Minute), Requests: 3, PromptTokens: 30000},
			{Model: "h", Workload: "general", Minute: hourStart, Requests: 2, PromptTokens: 200},
			{Model: "h", Workload: "general", Minute: hourStart.Add(59 * time.Minute), Requests: 1, PromptTokens: 9000},
			{Model: "h", Workload: "coding", Minute: hourStart.Add(30 * time.Minute), Requests: 4, PromptTokens: 4000},
			{Model: "h", Workload: "chat", Minute: hourStart.Add(time.Hour), Requests: 7, PromptTokens: 70},
			// A gateway that splits its minute: 2 of 10 requests large, though
			// the minute's average (4,400) is small.
			{Model: "h", Workload: "general", Minute: hourStart.Add(10 * time.Minute), Requests: 10, PromptTokens: 44000,
				LargeRequests: ptr(int64(2)), LargePromptTokens: ptr(int64(40000))},
		}
		if err := s.RecordDemand(ctx, byHour); err != nil {
			t.Fatal(err)
		}
		models, err := s.DemandByHour(ctx, []string{"h"}, hourStart.Add(-time.Hour), hourStart.Add(time.Hour), 5000)
		hours := models["h"]
		if err != nil {
			t.Fatal(err)
		}
		before, during := hours[hourStart.Add(-time.Hour)], hours[hourStart]
		if len(hours) != 2 || !reflect.DeepEqual(before["general"], catalogue.WorkloadDemand{Requests: 3, LargeRequests: 3, PromptTokens: 30000, LargePromptTokens: 30000}) ||
			!reflect.DeepEqual(during["general"], catalogue.WorkloadDemand{Requests: 13, LargeRequests: 3, PromptTokens: 53200, LargePromptTokens: 49000}) ||
			!reflect.DeepEqual(during["coding"], catalogue.WorkloadDemand{Requests: 4, PromptTokens: 4000}) || len(during) != 2 {
			t.Errorf("demand of h by hour: %+v", hours)
		}
		resplit := byHour[5]
		resplit.LargeRequests = ptr(int64(3))
		if err := s.RecordDemand(ctx, []catalogue.Demand{resplit}); !errors.As(err, &replay) {
			t.Errorf("a replay of a split minute with another split: %v, want a ReplayError", err)
		}
		if n, err := s.DeleteDemandBefore(ctx, now.Add(-catalogue.DemandRetention)); err != nil || n != 1 {
			t.Errorf("pruned %d demand rows (%v), want the one 9 days old", n, err)
		}
	})
}

// TestDemandKeepsItsKinds: a gateway that says how its requests asked
// (streamed or not, what they required) reports a row per kind of a
// workload's minute; each is its own row (replayed on its own), the
// workload's totals add them up with the rows that do not say, and the
// reads give each kind apart, summed over the period or the hour.
func TestDemandKeepsItsKinds(t *testing.T) {
	storetest.ForEach(t, func(t *testing.T, s *store.Store) {
		now := time.Now().UTC()
		s.Now = func() time.Time { return now }
		hour := now.Truncate(time.Hour).Add(-2 * time.Hour)
		yes, no := true, false
		rows := []catalogue.Demand{
			{Model: "k", Workload: "general", Minute: hour, Requests: 6, PromptTokens: 600, Streaming: &yes},
			{Model: "k", Workload: "general", Minute: hour, Requests: 3, PromptTokens: 300, Streaming: &no},
			{Model: "k", Workload: "general", Minute: hour, Requests: 2, PromptTokens: 200, Streaming: &no, Requires: []string{"vision"}},
			// The same kind with its names in another order.
			{Model: "k", Workload: "general", Minute: hour.Add(time.Minute), Requests: 1, PromptTokens: 100, Streaming: &yes,
				Requires: []string{"vision", "json_output"}},
			{Model: "k", Workload: "general", Minute: hour.Add(2 * time.Minute), Requests: 4, PromptTokens: 400, Streaming: &yes,
				Requires: []string{"json_output", "vision"}},
			// A gateway that does not say.
			{Model: "k", Workload: "general", Minute: hour, Source: "old", Requests: 5, PromptTokens: 500},
			{Model: "k", Workload: "coding", Minute: hour, Requests: 2, PromptTokens: 80000, Streaming: &yes, Requires: []string{"tools"},
				LargeRequests: ptr(int64(2)), LargePromptTokens: ptr(int64(80000))},
		}
		if err := s.RecordDemand(ctx, rows); err != nil {
			t.Fatal(err)
		}
		if err := s.RecordDemand(ctx, rows[1:3]); err != nil {
			t.Fatalf("an identical replay of two kinds: %v", err)
		}
		changed := rows[2]
		changed.Requests = 9
		var replay *catalogue.ReplayError
		if err := s.RecordDemand(ctx, []catalogue.Demand{changed}); !errors.As(err, &replay) {
			t.Errorf("a replay of a kind with other figures: %v, want a ReplayError", err)
		}
		vision := election.CapabilitySet(election.CapVision)
		visionJSON := vision.With(election.CapJSONOutput)
		wantGeneral := catalogue.WorkloadDemand{Requests: 21, PromptTokens: 2100, Kinds: []catalogue.KindDemand{
			{RequestKind: catalogue.RequestKind{Reported: true}, Requests: 3},
			{RequestKind: catalogue.RequestKind{Reported: true, Requires: vision}, Requests: 2},
			{RequestKind: catalogue.RequestKind{Reported: true, Streaming: true}, Requests: 6},
			{RequestKind: catalogue.RequestKind{Reported: true, Streaming: true, Requires: visionJSON}, Requests: 5},
		}}
		wantCoding := catalogue.WorkloadDemand{Requests: 2, LargeRequests: 2, PromptTokens: 80000, LargePromptTokens: 80000, Kinds: []catalogue.KindDemand{
			{RequestKind: catalogue.RequestKind{Reported: true, Streaming: true, Requires: election.CapabilitySet(election.CapTools)}, Requests: 2, LargeRequests: 2},
		}}
		shapes, err := s.DemandShapes(ctx, "k", now.Add(-24*time.Hour), 5000)
		if err != nil {
			t.Fatal(err)
		}
		if !reflect.DeepEqual(shapes["general"], wantGeneral) || !reflect.DeepEqual(shapes["coding"], wantCoding) {
			t.Errorf("the kinds of k's demand:\n got %+v\nwant %+v and %+v", shapes, wantGeneral, wantCoding)
		}
		byHour, err := s.DemandByHour(ctx, []string{"k"}, hour, hour.Add(time.Hour), 5000)
		if err != nil {
			t.Fatal(err)
		}
		if got := byHour["k"][hour]; !reflect.DeepEqual(got["general"], wantGeneral) || !reflect.DeepEqual(got["coding"], wantCoding) {
			t.Errorf("the kinds of k's hour:\n got %+v", got)
		}
	})
}

// TestGatewaysReportTheirOwnPartsOfAMinute: two gateways routing the same
// listing report the same minute under their own names; both parts are
// kept and add up in the hour and in live health (the routing snapshot's
// mirror reads them as separate rows), each replayable on its own.
func TestGatewaysReportTheirOwnPartsOfAMinute(t *testing.T) {
	storetest.ForEach(t, func(t *testing.T, s *store.Store) {
		fx := newFixture(t, s)
		now := time.Now().UTC()
		s.Now = func() time.Time { return now }
		minute := now.Truncate(time.Minute)
		a := catalogue.Bucket{ListingID: fx.listingID, Minute: minute, Source: "gw-a", Counts: catalogue.Counts{Requests: 10, Errors: 5, TTFTMsSum: 2000}}
		b := catalogue.Bucket{ListingID: fx.listingID, Minute: minute, Source: "gw-b", Counts: catalogue.Counts{Requests: 30, TTFTMsSum: 9000}}
		if err := s.RecordBuckets(ctx, []catalogue.Bucket{a}); err != nil {
			t.Fatal(err)
		}
		if err := s.RecordBuckets(ctx, []catalogue.Bucket{b, a}); err != nil {
			t.Fatalf("the second gateway's part (and the first's replay): %v", err)
		}
		points, err := s.HourlySeries(ctx, fx.listingID, minute.Truncate(time.Hour), minute)
		if err != nil || len(points) != 1 || points[0].Requests != 40 || points[0].Errors != 5 {
			t.Fatalf("the hour holds %+v (%v), want 40 requests and 5 errors", points, err)
		}
		rows, err := s.HealthMetrics(ctx, catalogue.SpanAt(now), time.Time{})
		if err != nil {
			t.Fatal(err)
		}
		health := catalogue.NewHealthMirror(catalogue.SpanAt(now), rows).Health(now)[fx.listingID]
		if health.UptimePct == nil || *health.UptimePct != 87.5 {
			t.Errorf("live uptime %v, want 87.5 (35 of 40 across both gateways)", health.UptimePct)
		}
		other := b
		other.Requests = 31
		var replay *catalogue.ReplayError
		if err := s.RecordBuckets(ctx, []catalogue.Bucket{other}); !errors.As(err, &replay) {
			t.Errorf("gw-b's minute with other figures: %v, want a ReplayError", err)
		}
		demand := []catalogue.Demand{{Model: "m", Workload: "chat", Minute: minute, Source: "gw-a", Requests: 3},
			{Model: "m", Workload: "chat", Minute: minute, Source: "gw-b", Requests: 4}}
		if err := s.RecordDemand(ctx, demand); err != nil {
			t.Fatal(err)
		}
		if mix, err := s.DemandMix(ctx, "m", minute); err != nil || mix["chat"].Requests != 7 {
			t.Errorf("the chat demand across gateways: %+v %v, want 7", mix, err)
		}
		// Replays are judged by the whole key (the replay check reads the
		// batch's models, workloads and sources, not the whole minute):
		// gw-a's row again with another model's new one is accepted, gw-b's
		// with other figures refused.
		again := []catalogue.Demand{demand[0], {Model: "n", Workload: "chat", Minute: minute, Source: "gw-b", Requests: 9}}
		if err := s.RecordDemand(ctx, again); err != nil {
			t.Errorf("gw-a's replay and gw-b's row for another model: %v", err)
		}
		changed := demand[1]
		changed.Requests = 5
		if err := s.RecordDemand(ctx, []catalogue.Demand{demand[0], changed}); !errors.As(err, &replay) || len(replay.DemandIndexes) != 1 || replay.DemandIndexes[0] != 1 || len(replay.Indexes) != 0 {
			t.Errorf("gw-b's chat minute with other figures: %v, want a ReplayError naming row 1", err)
		}
	})
}

func ptr[T any](v T) *T { return &v }

// TestMetricsTouchedSinceNamesTheEarliestMinute: a figure kept at a count
// of metric writes learns from which minute on the writes since changed
// anything; a seeding of hours anywhere makes that unknown.
func TestMetricsTouchedSinceNamesTheEarliestMinute(t *testing.T) {
	s := storetest.Open(t, store.SQLite)
	fx := newFixture(t, s)
	now := time.Now().UTC().Truncate(time.Minute)
	v0 := s.MetricsWritten()
	if at, ok := s.MetricsTouchedSince(v0); !ok || !at.IsZero() {
		t.Errorf("nothing written since: %v %v, want zero and known", at, ok)
	}
	if err := s.RecordBuckets(ctx, []catalogue.Bucket{{ListingID: fx.listingID, Minute: now.Add(-3 * time.Minute), Counts: catalogue.Counts{Requests: 1}}}); err != nil {
		t.Fatal(err)
	}
	v1 := s.MetricsWritten()
	if err := s.RecordBatch(ctx, []catalogue.Bucket{{ListingID: fx.listingID, Minute: now, Counts: catalogue.Counts{Requests: 1}}},
		[]catalogue.Demand{{Model: "m", Workload: "chat", Minute: now.Add(-time.Minute), Requests: 1}}); err != nil {
		t.Fatal(err)
	}
	for _, c := range []struct {
		since uint64
		want  time.Time
	}{{v0, now.Add(-3 * time.Minute)}, {v1, now.Add(-time.Minute)}} {
		if at, ok := s.MetricsTouchedSince(c.since); !ok || !at.Equal(c.want) {
			t.Errorf("touched since %d: %v %v, want %v", c.since, at, ok, c.want)
		}
	}
	if err := s.SeedHourly(ctx, map[int64][]catalogue.HourlyPoint{fx.listingID: {{Hour: now.Add(-48 * time.Hour).Truncate(time.Hour), Counts: catalogue.Counts{Requests: 1}}}}); err != nil {
		t.Fatal(err)
	}
	if _, ok := s.MetricsTouchedSince(v1); ok {
		t.Error("after seeding hours the touched minute is known")
	}
}

// TestRequestsByMinuteSumsListingsAndSources: each listing's minutes of an
// hour, every gateway's source summed, and nothing outside the window or
// the listings.
func TestRequestsByMinuteSumsListingsAndSources(t *testing.T) {
	storetest.ForEach(t, func(t *testing.T, s *store.Store) {
		fx := newFixture(t, s)
		l, _ := s.FindListing(ctx, fx.listingID, nil)
		orbit, err := s.CreateCarrier(ctx, nil, "orbit", "Orbit")
		if err != nil {
			t.Fatal(err)
		}
		second, err := s.CreateListing(ctx, nil, orbit.ID, l.Model.ID)
		if err != nil {
			t.Fatal(err)
		}
		other, err := s.CreateModel(ctx, nil, catalogue.Model{Slug: "other", Name: "Other", ContextTokens: 131072})
		if err != nil {
			t.Fatal(err)
		}
		third, err := s.CreateListing(ctx, nil, fx.carrierID, other.ID)
		if err != nil {
			t.Fatal(err)
		}
		now := time.Now().UTC()
		s.Now = func() time.Time { return now }
		hour := now.Truncate(time.Hour).Add(-2 * time.Hour)
		bucket := func(id int64, minute time.Duration, source string, requests int64) catalogue.Bucket {
			return catalogue.Bucket{ListingID: id, Minute: hour.Add(minute), Source: source, Counts: catalogue.Counts{Requests: requests}}
		}
		if err := s.RecordBuckets(ctx, []catalogue.Bucket{
			bucket(fx.listingID, 0, "a", 3), bucket(fx.listingID, 0, "b", 4), bucket(second, 0, "a", 5),
			bucket(fx.listingID, 7*time.Minute, "a", 2), bucket(second, 59*time.Minute, "b", 6),
			bucket(third, 7*time.Minute, "a", 100),                                            // another model
			bucket(fx.listingID, -time.Minute, "a", 100), bucket(second, time.Hour, "a", 100), // outside the hour
		}); err != nil {
			t.Fatal(err)
		}
		got, err := s.RequestsByMinute(ctx, []int64{fx.listingID, second}, hour, hour.Add(time.Hour))
		if err != nil {
			t.Fatal(err)
		}
		want := map[int64]map[time.Time]int64{
			fx.listingID: {hour: 7, hour.Add(7 * time.Minute): 2},
			second:       {hour: 5, hour.Add(59 * time.Minute): 6},
		}
		if len(got) != len(want) || !maps.Equal(got[fx.listingID], want[fx.listingID]) || !maps.Equal(got[second], want[second]) {
			t.Errorf("requests by minute: %v, want %v", got, want)
		}
	})
}

// TestWhatDemandAskedIsKept: a demand row's asked counts (election.md sec.
// 7) are stored with it (the first write wins: a replay adds nothing),
// summed per model over a period with every request of the model, and
// deleted with their rows.
func TestWhatDemandAskedIsKept(t *testing.T) {
	storetest.ForEach(t, func(t *testing.T, s *store.Store) {
		now := time.Now().UTC()
		s.Now = func() time.Time { return now }
		hour := now.Truncate(time.Hour).Add(-2 * time.Hour)
		yes := true
		rows := []catalogue.Demand{
			{Model: "k", Workload: "general", Minute: hour, Requests: 10, PromptTokens: 100, Streaming: &yes,
				Asked: map[string]int64{"zdr": 4, "regions:DE,FR": 10, "prefs:zdr|regions:DE,FR": 4, "prefs:regions:DE,FR": 6}},
			{Model: "k", Workload: "general", Minute: hour.Add(time.Minute), Requests: 5, PromptTokens: 50, Streaming: &yes,
				Asked: map[string]int64{"prefs:order:orbit,fathom": 2}},
			{Model: "k", Workload: "coding", Minute: hour, Source: "gw2", Requests: 6, PromptTokens: 100, Asked: map[string]int64{"zdr": 1, catalogue.AskedSharePolicy: 2}},
			{Model: "k", Workload: "coding", Minute: hour.Add(time.Minute), Source: "gw2", Requests: 3, PromptTokens: 50, Asked: map[string]int64{catalogue.AskedSharePolicy: 3}},
			{Model: "k", Workload: "chat", Minute: hour, Requests: 4, PromptTokens: 100}, // a gateway that does not say
			{Model: "other", Workload: "general", Minute: hour, Requests: 50, PromptTokens: 100, Asked: map[string]int64{"zdr": 50}},
			{Model: "k", Workload: "general", Minute: hour.Add(-3 * 24 * time.Hour), Requests: 7, PromptTokens: 100, Asked: map[string]int64{"zdr": 7}},
		}
		if err := s.RecordDemand(ctx, rows); err != nil {
			t.Fatal(err)
		}
		if err := s.RecordDemand(ctx, rows[:1]); err != nil {
			t.Fatalf("an identical replay: %v", err)
		}
		sums, err := s.DemandAsked(ctx, "k", hour.Add(-time.Hour), now)
		if err != nil {
			t.Fatal(err)
		}
		if sums.Requests != 28 || sums.Asked["zdr"] != 5 || sums.Asked["regions:DE,FR"] != 10 || sums.Asked[catalogue.AskedSharePolicy] != 5 || len(sums.Asked) != 6 {
			t.Errorf("summed %+v, want 28 requests, zdr 5, regions:DE,FR 10, policy:share 5 and three sets of preferences", sums)
		}
		// The hour's demand by workload says how many of its requests
		// were routed under the share policy (the projection's replay
		// spreads those by share).
		byHour, err := s.DemandByHour(ctx, []string{"k"}, hour, hour.Add(time.Hour), 5000)
		if err != nil {
			t.Fatal(err)
		}
		if got := byHour["k"][hour]; got["coding"].Requests != 9 || got["coding"].SharePolicy != 5 || got["general"].SharePolicy != 0 || got["chat"].SharePolicy != 0 {
			t.Errorf("the hour's demand: %+v, want 5 of coding's 9 requests on the share policy and none of the rest", got)
		}
		// And by set of preferences, each set apart (the replay elects
		// each on its own ballot).
		want := map[string]int64{"prefs:zdr|regions:DE,FR": 4, "prefs:regions:DE,FR": 6, "prefs:order:orbit,fathom": 2}
		if got := byHour["k"][hour]; !maps.Equal(got["general"].Preferences, want) || got["coding"].Preferences != nil {
			t.Errorf("the hour's demand by preferences: %v (coding %v), want %v for general and none for coding", got["general"].Preferences, got["coding"].Preferences, want)
		}
		// So does the demand of the last days the projection of now reads.
		if shapes, err := s.DemandShapes(ctx, "k", hour.Add(-time.Hour), 5000); err != nil || !maps.Equal(shapes["general"].Preferences, want) {
			t.Errorf("the demand's shapes by preferences: %v (%v), want %v", shapes["general"].Preferences, err, want)
		}
		if before, _ := s.DemandAsked(ctx, "k", hour.Add(-10*24*time.Hour), hour); before.Requests != 7 || before.Asked["zdr"] != 7 {
			t.Errorf("before the hour: %+v, want the old row alone", before)
		}
		if _, err := s.DeleteDemandBefore(ctx, hour.Add(-time.Hour)); err != nil {
			t.Fatal(err)
		}
		if sums, _ := s.DemandAsked(ctx, "k", hour.Add(-10*24*time.Hour), now); sums.Requests != 28 || sums.Asked["zdr"] != 5 {
			t.Errorf("after deleting the old rows: %+v", sums)
		}
	})
}

// TestMetricWritesReachOtherProcesses: on PostgreSQL a metric write by one
// store (serve process) counts in another's MetricsWritten, with the
// minute it touched, and calls its hooks: figures another process kept are
// stale as at once as its own writes make them.
func TestMetricWritesReachOtherProcesses(t *testing.T) {
	url := storetest.URL(t, store.Postgres)
	a := storetest.OpenURL(t, url)
	b := storetest.OpenURL(t, url)
	fx := newFixture(t, a)
	var told atomic.Int64
	b.OnRemoteMetrics(func() { told.Add(1) })
	listenCtx, stop := context.WithCancel(ctx)
	defer stop()
	go b.ListenForPublications(listenCtx, func(err error) { t.Logf("listener: %v", err) })
	minute := time.Now().UTC().Truncate(time.Minute).Add(-time.Hour)
	version := b.MetricsWritten()
	deadline := time.Now().Add(30 * time.Second)
	// Written until the other process hears: it may not be listening yet.
	for i := 0; b.MetricsWritten() == version; i++ {
		if time.Now().After(deadline) {
			t.Fatal("the other process never heard of the metric write")
		}
		if err := a.RecordBuckets(ctx, []catalogue.Bucket{{ListingID: fx.listingID, Minute: minute.Add(-time.Duration(i) * time.Minute),
			Source: "gw", Counts: catalogue.Counts{Requests: 1}}}); err != nil {
			t.Fatal(err)
		}
		time.Sleep(50 * time.Millisecond)
	}
	if from, ok := b.MetricsTouchedSince(version); !ok || from.IsZero() || from.After(minute) {
		t.Errorf("the other process knows the writes touched from %v (known %v), want %v or earlier", from, ok, minute)
	}
	if told.Load() == 0 {
		t.Error("the other process's hooks were not called")
	}
}
