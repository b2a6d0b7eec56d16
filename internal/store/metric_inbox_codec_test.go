package store

import (
	"encoding/binary"
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
	if distinctCounts() == (catalogue.Counts{}) {
		t.Fatal("no counters")
	}
	minute := time.Date(2026, 12, 3, 10, 15, 0, 0, time.UTC)
	large, largePrompt := int64(3), int64(-7) // negative varints too
	batches := map[string]catalogue.QueuedBatch{
		"buckets only": {Buckets: []catalogue.Bucket{{ListingID: 1 << 40, Minute: minute, Source: "gw-ü", Counts: distinctCounts()}}},
		"demand only": {Demand: []catalogue.Demand{
			{Model: "m", Workload: "chat", Minute: minute, Requests: 4, PromptTokens: 400},
			{Model: "m", Workload: "coding", Minute: minute.Add(-time.Minute), Source: "gw", Requests: 5, PromptTokens: 500,
				LargeRequests: &large, LargePromptTokens: &largePrompt, Streaming: new(false), Requires: []string{}},
			{Model: "m", Workload: "general", Minute: minute, Requests: 6, Streaming: new(true), Requires: []string{"tools", "vision"},
				Asked: map[string]int64{"zdr": 2, "regions:DE,FR": 6, "context_over:131072": 1}},
		}},
		"both": {Buckets: []catalogue.Bucket{{ListingID: 7, Minute: minute, Counts: catalogue.Counts{Requests: 0}}, {ListingID: 8, Minute: minute, Counts: catalogue.Counts{Requests: 2}}},
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

// distinctCounts sets every counter of catalogue.Counters to its own value
// (its place, from 1).
func distinctCounts() catalogue.Counts {
	var c catalogue.Counts
	for i, k := range catalogue.Counters {
		*k.Of(&c) = int64(i + 1)
	}
	return c
}

// TestInboxReadsTheFirstFormat: a batch queued by the version before the
// counter count (format 1, 18 counters a bucket) still reads after an
// upgrade, every later counter zero; a batch that names more counters than
// this version knows is refused, not folded without them.
func TestInboxReadsTheFirstFormat(t *testing.T) {
	minute := time.Date(2026, 12, 3, 10, 15, 0, 0, time.UTC)
	old := []byte{1}
	old = binary.AppendVarint(old, minute.UnixNano()) // the base
	old = binary.AppendUvarint(old, 1)                // one source,
	old = appendString(old, "gw")                     // named gw
	old = binary.AppendUvarint(old, 1)                // one bucket
	old = binary.AppendVarint(old, 42)                // its listing,
	old = binary.AppendVarint(old, 0)                 // minute (from the base)
	old = binary.AppendUvarint(old, 0)                // and source
	for i := range 18 {
		old = binary.AppendVarint(old, int64(i+1))
	}
	old = binary.AppendUvarint(old, 0) // no demand
	got, err := decodeBatch(old)
	if err != nil {
		t.Fatal(err)
	}
	want := catalogue.Bucket{ListingID: 42, Minute: minute, Source: "gw"}
	for i, k := range catalogue.Counters {
		if i < 18 {
			*k.Of(&want.Counts) = int64(i + 1)
		}
	}
	if len(got.Buckets) != 1 || got.Buckets[0] != want {
		t.Errorf("read %+v, want %+v", got.Buckets, want)
	}

	newer := []byte{inboxFormat}
	newer = binary.AppendVarint(newer, minute.UnixNano())
	newer = binary.AppendUvarint(newer, uint64(len(catalogue.Counters)+1))
	newer = append(newer, old[len(newer)-1:]...) // not read past the count
	if _, err := decodeBatch(newer); err == nil {
		t.Error("a batch with a counter this version does not know was read")
	}
}
