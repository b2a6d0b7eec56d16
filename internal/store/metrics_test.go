package store_test

import (
	"context"
	"errors"
	"math"
	"slices"
	"testing"
	"time"

	"github.com/airside/airside/internal/account"
	"github.com/airside/airside/internal/apitoken"
	"github.com/airside/airside/internal/apperr"
	"github.com/airside/airside/internal/catalogue"
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
			{ListingID: fx.listingID, Minute: m(0), Requests: 10, Errors: 5, ClientErrors: 1, TTFTMsSum: 2000, OutputTokens: 400, DurationMs: 8000, InputTokens: 10000, CachedInputTokens: 2000},
			{ListingID: fx.listingID, Minute: m(3), Requests: 20, TTFTMsSum: 6000, OutputTokens: 2000, DurationMs: 20000, InputTokens: 20000, CachedInputTokens: 8000},
			{ListingID: fx.listingID, Minute: m(30), Requests: 100, Errors: 1, TTFTMsSum: 39600, OutputTokens: 9900, DurationMs: 99000},
			{ListingID: fx.listingID, Minute: m(61), Requests: 1000, Errors: 1000},
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
		list, _ := s.FindTokens(ctx)
		for _, tk := range list {
			if tk.Name == secret {
				t.Error("the secret is stored as is")
			}
		}
		if err := s.RevokeToken(ctx, admin, tok.ID); err != nil {
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
			{ListingID: fx.listingID, Minute: now.Add(-30 * time.Hour), Requests: 5},
			{ListingID: fx.listingID, Minute: now.Add(-time.Hour), Requests: 7},
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
// retry; other figures for a recorded minute are refused, and the batch with
// them stores nothing.
func TestReplayedBucketsFirstWriteWins(t *testing.T) {
	storetest.ForEach(t, func(t *testing.T, s *store.Store) {
		fx := newFixture(t, s)
		minute := time.Now().UTC().Truncate(time.Minute)
		first := catalogue.Bucket{ListingID: fx.listingID, Minute: minute, Requests: 10, TTFTMsSum: 5000, OutputTokens: 100, DurationMs: 9000}
		if err := s.RecordBuckets(ctx, []catalogue.Bucket{first}); err != nil {
			t.Fatal(err)
		}
		if err := s.RecordBuckets(ctx, []catalogue.Bucket{first}); err != nil {
			t.Fatalf("an identical retry: %v", err)
		}
		other := first
		other.Requests = 99
		fresh := catalogue.Bucket{ListingID: fx.listingID, Minute: minute.Add(-time.Minute), Requests: 1}
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
		if total != 10 {
			t.Errorf("requests recorded %d, want the first write's 10 and nothing of the refused batch", total)
		}
	})
}
