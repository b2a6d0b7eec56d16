package store_test

import (
	"context"
	"fmt"
	"testing"
	"time"

	"github.com/airside/airside/internal/catalogue"
	"github.com/airside/airside/internal/store"
	"github.com/airside/airside/internal/store/storetest"
)

// BenchmarkRecordBuckets records a gateway's minute batch (a new minute of
// 63 listings, as the load tool's fleet of 8 posts at 500 listings) beside
// a batch of one bucket in the same run, on both databases: the ratio per
// bucket is what a row costs against a statement and a commit.
//
//	go test -run '^$' -bench RecordBuckets ./internal/store
func BenchmarkRecordBuckets(b *testing.B) {
	for _, d := range []store.Dialect{store.SQLite, store.Postgres} {
		b.Run(string(d), func(b *testing.B) {
			s, ids := benchListings(b, d)
			ctx := context.Background()
			start := time.Now().UTC().Truncate(time.Minute)
			minute := 0
			for _, size := range []int{1, 63} {
				b.Run(fmt.Sprintf("%d buckets", size), func(b *testing.B) {
					for b.Loop() {
						minute++ // a new minute each time: every bucket is inserted and rolled up
						batch := make([]catalogue.Bucket, size)
						for i := range batch {
							batch[i] = catalogue.Bucket{ListingID: ids[i], Minute: start.Add(-time.Duration(minute) * time.Minute), Source: "bench", Counts: catalogue.Counts{Requests: 80, Errors: 1, TTFTMsSum: 31600, OutputTokens: 23700, DurationMs: 395000, InputTokens: 320000, CachedInputTokens: 80000,
								GatewayCounts: catalogue.GatewayCounts{Routed: 78, Exploration: 1}}}
						}
						if err := s.RecordBuckets(ctx, batch); err != nil {
							b.Fatal(err)
						}
					}
					b.ReportMetric(float64(b.Elapsed().Microseconds())/float64(b.N*size), "µs/bucket")
				})
			}
		})
	}
}

// BenchmarkFoldInbox folds gateways' minute batches from the metrics inbox
// (8 gateways' batches of a new minute each, 63 listings apiece, as the
// load tool's fleet posts at 500 listings), 64 batches a fold: the cost a
// bucket of the background work behind a respond-async answer, beside
// BenchmarkRecordBuckets' synchronous batch.
//
//	go test -run '^$' -bench 'RecordBuckets|FoldInbox' ./internal/store
func BenchmarkFoldInbox(b *testing.B) {
	for _, d := range []store.Dialect{store.SQLite, store.Postgres} {
		b.Run(string(d), func(b *testing.B) {
			s, ids := benchListings(b, d)
			ctx := context.Background()
			start := time.Now().UTC().Truncate(time.Minute)
			minute := 0
			const perFold = 64
			for b.Loop() {
				b.StopTimer()
				batches := make([]catalogue.QueuedBatch, perFold)
				for i := range batches {
					minute++
					batch := make([]catalogue.Bucket, len(ids))
					for j := range batch {
						batch[j] = catalogue.Bucket{ListingID: ids[j], Minute: start.Add(-time.Duration(minute/8) * time.Minute), Source: fmt.Sprintf("gw-%d", minute%8), Counts: catalogue.Counts{Requests: 80, Errors: 1, TTFTMsSum: 31600, OutputTokens: 23700, DurationMs: 395000, InputTokens: 320000, CachedInputTokens: 80000,
							GatewayCounts: catalogue.GatewayCounts{Routed: 78, Exploration: 1}}}
					}
					batches[i] = catalogue.QueuedBatch{Buckets: batch}
				}
				if err := s.AddToInbox(ctx, batches); err != nil {
					b.Fatal(err)
				}
				b.StartTimer()
				for {
					res, err := s.FoldInbox(ctx, time.Hour, perFold)
					if err != nil {
						b.Fatal(err)
					}
					if !res.More {
						break
					}
				}
			}
			b.ReportMetric(float64(b.Elapsed().Microseconds())/float64(b.N*perFold*len(ids)), "µs/bucket")
		})
	}
}

// benchListings is a store on d with a carrier's 63 listings (the share
// of one gateway of 8 at 500 listings).
func benchListings(b *testing.B, d store.Dialect) (*store.Store, []int64) {
	b.Helper()
	s := storetest.Open(b, d)
	ctx := context.Background()
	carrier, err := s.CreateCarrier(ctx, nil, "bench", "Bench")
	if err != nil {
		b.Fatal(err)
	}
	var ids []int64
	for m := range 63 {
		model, err := s.CreateModel(ctx, nil, catalogue.Model{Slug: fmt.Sprintf("model-%02d", m), Name: fmt.Sprintf("Model %02d", m), ContextTokens: 131072})
		if err != nil {
			b.Fatal(err)
		}
		id, err := s.CreateListing(ctx, nil, carrier.ID, model.ID)
		if err != nil {
			b.Fatal(err)
		}
		ids = append(ids, id)
	}
	return s, ids
}

// BenchmarkRecordDemandInAFleetsMinute records one gateway's demand row for
// a minute in which 100 other gateways already reported 20 models each:
// the replay check reads the rows of its own key, not the minute's 2,000.
//
//	go test -run '^$' -bench RecordDemandInAFleetsMinute ./internal/store
func BenchmarkRecordDemandInAFleetsMinute(b *testing.B) {
	for _, d := range []store.Dialect{store.SQLite, store.Postgres} {
		b.Run(string(d), func(b *testing.B) {
			s := storetest.Open(b, d)
			ctx := context.Background()
			minute := time.Now().UTC().Truncate(time.Minute).Add(-time.Hour)
			var fleet []catalogue.Demand
			for g := range 100 {
				for m := range 20 {
					fleet = append(fleet, catalogue.Demand{Model: fmt.Sprintf("model-%02d", m), Workload: "coding", Minute: minute,
						Source: fmt.Sprintf("gw-%03d", g), Requests: 40, PromptTokens: 160000})
				}
			}
			if err := s.RecordDemand(ctx, fleet); err != nil {
				b.Fatal(err)
			}
			n := 0
			for b.Loop() {
				n++
				row := catalogue.Demand{Model: "model-07", Workload: "coding", Minute: minute, Source: fmt.Sprintf("new-%d", n), Requests: 40, PromptTokens: 160000}
				if err := s.RecordDemand(ctx, []catalogue.Demand{row}); err != nil {
					b.Fatal(err)
				}
			}
		})
	}
}
