package store

import (
	"testing"
	"time"

	"github.com/google/go-cmp/cmp"

	"github.com/airside/airside/internal/catalogue"
)

// TestInboxEncodingKeepsEveryField: a batch read back from its inbox
// encoding equals the batch, for every field and every optional form (a
// demand row that says nothing of its kind, one that says all), and a cut
// or damaged encoding is an error, never a panic or a short batch.
func TestInboxEncodingKeepsEveryField(t *testing.T) {
	minute := time.Date(2026, 12, 3, 10, 15, 0, 0, time.UTC)
	large, largePrompt := int64(3), int64(-7) // negative varints too
	batches := map[string]catalogue.QueuedBatch{
		"buckets only": {Buckets: []catalogue.Bucket{{ListingID: 1 << 40, Minute: minute, Source: "gw-ü", Requests: 1, Errors: 2, ClientErrors: 3,
			TTFTMsSum: 4, OutputTokens: 5, DurationMs: 6, InputTokens: 7, CachedInputTokens: 8, Capped: 9,
			GatewayCounts: catalogue.GatewayCounts{Routed: 10, Pinned: 11, Exploration: 12, Fallback: 13, RateLimited: 14,
				CacheReadTokens: 15, CacheWriteTokens: 16, ToolCalls: 17, MalformedToolCalls: 18}}}},
		"demand only": {Demand: []catalogue.Demand{
			{Model: "m", Workload: "chat", Minute: minute, Requests: 4, PromptTokens: 400},
			{Model: "m", Workload: "coding", Minute: minute.Add(-time.Minute), Source: "gw", Requests: 5, PromptTokens: 500,
				LargeRequests: &large, LargePromptTokens: &largePrompt, Streaming: new(false), Requires: []string{}},
			{Model: "m", Workload: "general", Minute: minute, Requests: 6, Streaming: new(true), Requires: []string{"tools", "vision"}},
		}},
		"both": {Buckets: []catalogue.Bucket{{ListingID: 7, Minute: minute, Requests: 0}, {ListingID: 8, Minute: minute, Requests: 2}},
			Demand: []catalogue.Demand{{Model: "x", Workload: "chat", Minute: minute, Requests: 1}}},
	}
	for name, b := range batches {
		t.Run(name, func(t *testing.T) {
			data := encodeBatch(b)
			got, err := decodeBatch(data)
			if err != nil {
				t.Fatal(err)
			}
			if diff := cmp.Diff(b, got); diff != "" {
				t.Errorf("read back (-sent +read):\n%s", diff)
			}
			for n := range len(data) {
				if _, err := decodeBatch(data[:n]); err == nil {
					t.Errorf("the first %d of %d bytes read as a whole batch", n, len(data))
				}
			}
			if _, err := decodeBatch(append(data, 0)); err == nil {
				t.Error("a trailing byte was not noticed")
			}
		})
	}
}
