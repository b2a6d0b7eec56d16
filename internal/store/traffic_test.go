package store_test

import (
	"bytes"
	"testing"
	"time"

	"github.com/airside/airside/internal/catalogue"
	"github.com/airside/airside/internal/earnings"
	"github.com/airside/airside/internal/store"
	"github.com/airside/airside/internal/store/storetest"
	"github.com/airside/airside/internal/workflow"
)

// TestEarningsFromRecordedTrafficAcrossAFareChange records known minutes
// before and after a fare change and checks the month's statement against
// a figure computed by hand, to the micro-dollar, on both databases.
func TestEarningsFromRecordedTrafficAcrossAFareChange(t *testing.T) {
	storetest.ForEach(t, func(t *testing.T, s *store.Store) {
		change := time.Date(2026, 11, 10, 12, 0, 0, 0, time.UTC)
		clock := change.Add(-4 * time.Hour)
		s.Now = func() time.Time { return clock }
		fx := newFixture(t, s) // published at 08:00: input 0.50, output 2.00, landing fee 20 %
		clock = change.Add(-time.Minute)
		// Two minutes under the first fare, in one hour, and one client error.
		before := []catalogue.Bucket{
			{ListingID: fx.listingID, Minute: change.Add(-3 * time.Hour), Counts: catalogue.Counts{Requests: 10, InputTokens: 1_000_000, OutputTokens: 100_000, Capped: 4}},
			{ListingID: fx.listingID, Minute: change.Add(-3*time.Hour + time.Minute), Counts: catalogue.Counts{Requests: 5, ClientErrors: 1, InputTokens: 500_000, CachedInputTokens: 100_000}},
		}
		if err := s.RecordBuckets(ctx, before); err != nil {
			t.Fatal(err)
		}
		clock = change
		id := submitted(t, s, fx, "0.45", nil) // input 0.45, landing fee 30 %
		reviewer := newReviewer(t, s, "rev@airside.example")
		if _, err := s.DecideFiling(ctx, reviewer, id, workflow.Approve, "", versionOf(t, s, id)); err != nil {
			t.Fatal(err)
		}
		clock = change.Add(2 * time.Hour)
		after := []catalogue.Bucket{{ListingID: fx.listingID, Minute: change.Add(time.Hour), Counts: catalogue.Counts{Requests: 20, InputTokens: 2_000_000, OutputTokens: 500_000}}}
		if err := s.RecordBuckets(ctx, after); err != nil {
			t.Fatal(err)
		}

		month := earnings.MonthOf(change)
		hours, err := s.HourlyTraffic(ctx, []int64{fx.listingID}, month, month.AddDate(0, 1, 0))
		if err != nil {
			t.Fatal(err)
		}
		if got := hours[fx.listingID]; len(got) != 2 || got[0].Requests != 15 || got[0].Capped != 4 || got[0].ClientErrors != 1 {
			t.Fatalf("hourly rollups %+v, want two hours, the first of 15 requests and 4 turned away", got)
		}
		history, err := s.FareHistory(ctx, []int64{fx.listingID})
		if err != nil {
			t.Fatal(err)
		}
		if h := history[fx.listingID]; len(h) != 2 || !h[1].From.Equal(change) {
			t.Fatalf("fare history %+v, want the seed fare and the change at %v", h, change)
		}
		models, err := s.ModelTraffic(ctx, []int64{mustListing(t, s, fx.listingID).Model.ID}, month, month.AddDate(0, 1, 0))
		if err != nil {
			t.Fatal(err)
		}
		var modelTotal int64
		for _, n := range models[mustListing(t, s, fx.listingID).Model.ID] {
			modelTotal += n
		}
		if modelTotal != 35 {
			t.Errorf("the model's requests: %d, want 35", modelTotal)
		}
		model := mustListing(t, s, fx.listingID).Model.ID
		if totals, err := s.ModelTotals(ctx, []int64{model}, month, month.AddDate(0, 1, 0)); err != nil || totals[model] != 35 {
			t.Errorf("the model's total: %v (%v), want 35, as its hours add up", totals, err)
		}
		if totals, err := s.ListingTotals(ctx, []int64{fx.listingID}, month, month.AddDate(0, 1, 0)); err != nil || totals[fx.listingID] != 35 {
			t.Errorf("the listing's total: %v (%v), want 35, as its hours add up", totals, err)
		}
		// The window's end is exclusive: the hour after the change is left out.
		if totals, err := s.ListingTotals(ctx, []int64{fx.listingID}, month, change.Add(time.Hour)); err != nil || totals[fx.listingID] != 15 {
			t.Errorf("the listing's total before the hour after the change: %v (%v), want 15", totals, err)
		}
		names := []earnings.Listing{{ID: fx.listingID, Carrier: "nebula", Model: "glm-5"}}
		st := earnings.BuildStatement("nebula", month, clock, names, hours, history)
		// Before: 1.5M input (no cached price: the cached share bills at input) x 0.50 + 0.1M output x 2.00 = $0.95,
		// kept x 0.8 = $0.76. After: 2M x 0.45 + 0.5M x 2.00 = $1.90, kept x 0.7 = $1.33.
		want := earnings.Money{Filed: 2_850_000, Discount: 0, LandingFee: 760_000, Kept: 2_090_000}
		if st.Total.Money != want || st.Closed {
			t.Errorf("statement %+v (closed %v), want %+v, open", st.Total.Money, st.Closed, want)
		}
		var a, b bytes.Buffer
		_ = st.WriteCSV(&a)
		again := earnings.BuildStatement("nebula", month, clock.Add(30*24*time.Hour), names, hours, history)
		_ = again.WriteCSV(&b)
		if a.String() != b.String() || !again.Closed {
			t.Errorf("a regenerated statement differs, or a past month is not closed:\n%s\n%s", a.String(), b.String())
		}
	})
}

func mustListing(t *testing.T, s *store.Store, id int64) *catalogue.Listing {
	t.Helper()
	l, err := s.FindListing(ctx, id, nil)
	if err != nil {
		t.Fatal(err)
	}
	return l
}
