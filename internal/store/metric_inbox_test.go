package store_test

import (
	"errors"
	"testing"
	"time"

	"github.com/airside/airside/internal/catalogue"
	"github.com/airside/airside/internal/store"
	"github.com/airside/airside/internal/store/storetest"
)

// requestsIn sums a listing's requests recorded from since to now.
func requestsIn(t *testing.T, s *store.Store, listingID int64, since time.Time) int64 {
	t.Helper()
	series, err := s.MetricSeries(ctx, listingID, since, time.Minute)
	if err != nil {
		t.Fatal(err)
	}
	var total int64
	for _, p := range series {
		total += p.Requests
	}
	return total
}

// TestTheInboxFoldsBatchesAsRecordBatchStoresThem: batches written to the
// inbox are stored by a fold as RecordBatch stores them (minutes, hourly
// rollups, demand, the write counted for readers), removed from the inbox,
// and a replay of them afterwards is harmless; on both databases.
func TestTheInboxFoldsBatchesAsRecordBatchStoresThem(t *testing.T) {
	storetest.ForEach(t, func(t *testing.T, s *store.Store) {
		fx := newFixture(t, s)
		minute := time.Now().UTC().Truncate(time.Minute).Add(-2 * time.Minute)
		large, largePrompt := int64(2), int64(90000)
		first := catalogue.QueuedBatch{
			Buckets: []catalogue.Bucket{
				{ListingID: fx.listingID, Minute: minute, Source: "gw-a", Counts: catalogue.Counts{Requests: 10, Errors: 1, TTFTMsSum: 3600, OutputTokens: 900, DurationMs: 9000,
					InputTokens: 40000, CachedInputTokens: 10000, GatewayCounts: catalogue.GatewayCounts{Routed: 8, Exploration: 1, ToolCalls: 3}}},
			},
			Demand: []catalogue.Demand{{Model: "kimi-k2.5", Workload: "coding", Minute: minute, Source: "gw-a", Requests: 10, PromptTokens: 120000,
				LargeRequests: &large, LargePromptTokens: &largePrompt, Streaming: new(true), Requires: []string{"tools"}}},
		}
		second := catalogue.QueuedBatch{Buckets: []catalogue.Bucket{{ListingID: fx.listingID, Minute: minute.Add(time.Minute), Source: "gw-a", Counts: catalogue.Counts{Requests: 5}}}}
		if err := s.AddToInbox(ctx, []catalogue.QueuedBatch{first, second}); err != nil {
			t.Fatal(err)
		}
		if n, err := s.InboxSize(ctx); err != nil || n != 2 {
			t.Fatalf("waiting after two batches: %d %v", n, err)
		}
		if got := requestsIn(t, s, fx.listingID, minute); got != 0 {
			t.Fatalf("requests stored before the fold: %d", got)
		}
		written := s.MetricsWritten()
		res, err := s.FoldInbox(ctx, time.Minute, 64)
		if err != nil {
			t.Fatal(err)
		}
		if res.Batches != 2 || res.Buckets != 2 || res.DemandRows != 1 || len(res.Refused) != 0 || res.More ||
			len(res.Models) != 1 || res.Models[0] != "kimi-k2.5" {
			t.Errorf("fold: %+v", res)
		}
		if n, _ := s.InboxSize(ctx); n != 0 {
			t.Errorf("%d batches still waiting after the fold", n)
		}
		if s.MetricsWritten() == written {
			t.Error("the fold was not counted as a metrics write: readers would keep figures from before it")
		} else if from, ok := s.MetricsTouchedSince(written); !ok || !from.Equal(minute) {
			t.Errorf("the fold says it touched from %v (%v), want %v", from, ok, minute)
		}
		if got := requestsIn(t, s, fx.listingID, minute); got != 15 {
			t.Errorf("requests after the fold: %d, want 15", got)
		}
		hours, err := s.HourlySeries(ctx, fx.listingID, minute.Truncate(time.Hour), minute.Add(time.Hour))
		if err != nil {
			t.Fatal(err)
		}
		var rolled, tools int64
		for _, h := range hours {
			rolled += h.Requests
			tools += h.ToolCalls
		}
		if rolled != 15 || tools != 3 {
			t.Errorf("hourly rollups hold %d requests and %d tool calls, want 15 and 3", rolled, tools)
		}
		shapes, err := s.DemandShapes(ctx, "kimi-k2.5", minute.Add(-time.Minute), 30000)
		if err != nil {
			t.Fatal(err)
		}
		if c := shapes["coding"]; c.Requests != 10 || c.LargeRequests != 2 {
			t.Errorf("demand after the fold: %+v", shapes)
		}
		// The same rows again, as a gateway's retry, change nothing.
		if err := s.RecordBatch(ctx, first.Buckets, first.Demand); err != nil {
			t.Errorf("a replay of a folded batch: %v", err)
		}
		if got := requestsIn(t, s, fx.listingID, minute); got != 15 {
			t.Errorf("requests after a replay: %d, want 15", got)
		}
	})
}

// TestTheInboxRefusesOnlyTheConflictingRows: a batch that replays a
// recorded minute with other figures has that row refused when folded and
// its other rows stored, as are the batches around it; it is listed as
// refused in part, and leaves the inbox.
func TestTheInboxRefusesOnlyTheConflictingRows(t *testing.T) {
	storetest.ForEach(t, func(t *testing.T, s *store.Store) {
		fx := newFixture(t, s)
		minute := time.Now().UTC().Truncate(time.Minute).Add(-10 * time.Minute)
		at := func(i int) time.Time { return minute.Add(time.Duration(i) * time.Minute) }
		if err := s.RecordBuckets(ctx, []catalogue.Bucket{{ListingID: fx.listingID, Minute: at(0), Source: "gw", Counts: catalogue.Counts{Requests: 10}}}); err != nil {
			t.Fatal(err)
		}
		batches := []catalogue.QueuedBatch{
			{Buckets: []catalogue.Bucket{{ListingID: fx.listingID, Minute: at(1), Source: "gw", Counts: catalogue.Counts{Requests: 1}}}},
			{Buckets: []catalogue.Bucket{
				{ListingID: fx.listingID, Minute: at(2), Source: "gw", Counts: catalogue.Counts{Requests: 100}},
				{ListingID: fx.listingID, Minute: at(0), Source: "gw", Counts: catalogue.Counts{Requests: 11}}, // other figures for a recorded minute
			}},
			{Buckets: []catalogue.Bucket{{ListingID: fx.listingID, Minute: at(3), Source: "gw", Counts: catalogue.Counts{Requests: 2}}}},
		}
		if err := s.AddToInbox(ctx, batches); err != nil {
			t.Fatal(err)
		}
		res, err := s.FoldInbox(ctx, time.Minute, 64)
		if err != nil {
			t.Fatal(err)
		}
		if res.Batches != 3 || len(res.Refused) != 1 || res.Buckets != 3 {
			t.Fatalf("fold: %+v, want 3 folded (3 buckets stored) and 1 refused in part", res)
		}
		r := res.Refused[0]
		var replay *catalogue.ReplayError
		if !errors.As(r.Err, &replay) || len(replay.Indexes) != 1 || replay.Indexes[0] != 1 || len(r.Sources) != 1 || r.Sources[0] != "gw" || !r.Partial {
			t.Errorf("the refused batch: %+v (%v)", r, r.Err)
		}
		if got := requestsIn(t, s, fx.listingID, minute); got != 113 {
			t.Errorf("requests stored: %d, want 113 (10 first written, 1, the refused batch's new 100, and 2)", got)
		}
		if n, _ := s.InboxSize(ctx); n != 0 {
			t.Errorf("%d batches still waiting", n)
		}
	})
}

// TestAFoldStopsAtItsLimit: a fold takes at most max batches, oldest first,
// and says more wait; the next fold takes the rest.
func TestAFoldStopsAtItsLimit(t *testing.T) {
	storetest.ForEach(t, func(t *testing.T, s *store.Store) {
		fx := newFixture(t, s)
		minute := time.Now().UTC().Truncate(time.Minute).Add(-10 * time.Minute)
		var batches []catalogue.QueuedBatch
		for i := range 3 {
			batches = append(batches, catalogue.QueuedBatch{Buckets: []catalogue.Bucket{{ListingID: fx.listingID, Minute: minute.Add(time.Duration(i) * time.Minute), Counts: catalogue.Counts{Requests: int64(1 + i)}}}})
		}
		if err := s.AddToInbox(ctx, batches); err != nil {
			t.Fatal(err)
		}
		res, err := s.FoldInbox(ctx, time.Minute, 2)
		if err != nil || res.Batches != 2 || !res.More {
			t.Fatalf("first fold: %+v %v, want 2 batches and more waiting", res, err)
		}
		if got := requestsIn(t, s, fx.listingID, minute); got != 3 {
			t.Errorf("after the first fold: %d requests, want the two oldest batches' 1+2", got)
		}
		res, err = s.FoldInbox(ctx, time.Minute, 2)
		if err != nil || res.Batches != 1 || res.More {
			t.Fatalf("second fold: %+v %v", res, err)
		}
		if res, err := s.FoldInbox(ctx, time.Minute, 2); err != nil || res.Batches != 0 || res.More {
			t.Errorf("a fold of an empty inbox: %+v %v", res, err)
		}
	})
}
