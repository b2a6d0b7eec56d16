package catalogue

import (
	"context"
	"fmt"
	"time"

	"github.com/airside/airside/internal/apperr"
)

// ShapeHolder is which listing held a shape of requests (the gateway's
// stable preference: model, workload and whether the cache matters, under
// auto routing) from a second of a minute, as the reporting gateway elected
// it: the holder after the minute's first election of the shape, at that
// election's second, and after each later election in the minute that
// moved the shape (MaxHolderRows), with the elections the row held. The
// projection starts a part of an hour at every second a reported holder
// changed, from the holders routing reported rather than those it
// replays: it cannot know which kind of request opened a shape (a streamed
// request may elect another listing than a plain one, and the first keeps
// the shape within the incumbent margin), nor see the gateway's own limits
// move a shape (a slow incumbent loses it to the winner).
type ShapeHolder struct {
	Model         string    `json:"model"`
	Workload      string    `json:"workload"`
	CacheRelevant bool      `json:"cacheRelevant"`
	ListingID     int64     `json:"listingId"`
	Minute        time.Time `json:"minute"`
	// Second is the second of the minute of the election the row reports
	// (0-59; 0, the minute's start, from a gateway that does not say).
	Second int `json:"second,omitempty"`
	// Source names the reporting gateway process, as on buckets: two
	// replicas each report their own holders.
	Source string `json:"source,omitempty"`
	// Requests counts the shape's elections the row held: from its second
	// to the next row of the shape's minute (from the same source), or to
	// the minute's end. The projection weighs the parts of a minute by
	// them, by when requests were elected rather than when they finished
	// (0: a gateway that does not say; the minute's requests are then
	// taken as even over it).
	Requests int64 `json:"requests,omitempty"`
}

// At is when the row's holder took the shape: its minute and second.
func (h *ShapeHolder) At() time.Time { return h.Minute.Add(time.Duration(h.Second) * time.Second) }

// MaxHolderRows bounds a shape's rows in a minute from one gateway: its
// first election's and the moves after it. A shape that moves more often
// in a minute (a streamed request electing another listing than a plain
// one, back and forth) keeps its last row to the minute's end, counting
// the elections after it. The rows carry their elections (Requests)
// because the minute buckets count requests when they finish: weighed by
// them, taken as even over the minute, the afternoon loop test's
// nebula/kimi-k2.5 was projected 11.4 % against 8.0 % served.
const MaxHolderRows = 12

// MaxHolders bounds one report of holders.
const MaxHolders = 5000

// Check names the first problem of a reported holder, as field and message;
// now bounds its minute (not in the future, not older than the portal
// takes metrics).
func (h *ShapeHolder) Check(now time.Time) (field, problem string) {
	switch {
	case h.Model == "" || len(h.Model) > 200:
		return "model", "a model slug of 1 to 200 characters"
	case h.Workload != "general" && h.Workload != "coding" && h.Workload != "chat":
		return "workload", "general, coding or chat"
	case h.ListingID <= 0:
		return "listingId", "a listing id"
	case h.Minute.IsZero() || !h.Minute.Equal(h.Minute.Truncate(time.Minute)):
		return "minute", "the start of a minute (RFC 3339, no seconds)"
	case h.Second < 0 || h.Second > 59:
		return "second", "a second of the minute, 0 to 59"
	case h.Minute.After(now.Add(time.Minute)):
		return "minute", "not in the future"
	case h.Minute.Before(now.Add(-MaxBucketAge)):
		return "minute", fmt.Sprintf("within the last %s", MaxBucketAge)
	case len(h.Source) > 200:
		return "source", "at most 200 characters"
	case h.Requests < 0:
		return "requests", "a count of elections, 0 or more"
	}
	return "", ""
}

// HolderStore keeps reported shape holders (the store's
// RecordShapeHolders).
type HolderStore interface {
	RecordShapeHolders(ctx context.Context, holders []ShapeHolder) (int, error)
}

// modelOf is the model slug of a listing id the index knows.
func (x *ListingIndex) modelOf(id int64) (string, bool) {
	m, ok := x.models[id]
	return m, ok && x.known[id]
}

// RecordHolders checks a gateway's report of shape holders whole (each row
// a listing of its own model, a minute the portal takes, a shape once per
// second and source and at most MaxHolderRows times per minute and source),
// naming problems by row and field, and stores it with the store given
// (idempotent per shape, second and source). It returns how many rows were
// new.
func (in *Ingest) RecordHolders(ctx context.Context, st HolderStore, holders []ShapeHolder) (int, error) {
	if len(holders) == 0 || len(holders) > MaxHolders {
		return 0, apperr.Invalid(map[string]string{"holders": fmt.Sprintf("send 1 to %d holders", MaxHolders)})
	}
	ids := make([]PostedBucket, len(holders))
	for i, h := range holders {
		ids[i].ListingID = h.ListingID
	}
	index, err := in.index(ctx, ids)
	if err != nil {
		return 0, err
	}
	now := in.Now()
	type key struct {
		model, workload, source string
		cache                   bool
		minute                  int64
	}
	seen := make(map[key]bool, len(holders))
	perMinute := map[key]int{}
	for i := range holders {
		h := &holders[i]
		field, problem := h.Check(now)
		if field == "" {
			if model, ok := index.modelOf(h.ListingID); !ok {
				field, problem = "listingId", "no listing has this id"
			} else if model != h.Model {
				field, problem = "listingId", fmt.Sprintf("a listing of %s, not of %s", h.Model, model)
			}
		}
		k := key{h.Model, h.Workload, h.Source, h.CacheRelevant, h.At().Unix()}
		m := k
		m.minute = h.Minute.Unix()
		switch {
		case field != "":
		case seen[k]:
			field, problem = "second", "a shape's second once per source in a report"
		case perMinute[m] >= MaxHolderRows:
			field, problem = "minute", fmt.Sprintf("at most %d rows of a shape's minute per source", MaxHolderRows)
		}
		if field != "" {
			return 0, apperr.Invalid(map[string]string{fmt.Sprintf("holders[%d].%s", i, field): problem})
		}
		seen[k] = true
		perMinute[m]++
	}
	n, err := st.RecordShapeHolders(ctx, holders)
	if err != nil {
		return 0, fmt.Errorf("record shape holders: %w", err)
	}
	return n, nil
}
