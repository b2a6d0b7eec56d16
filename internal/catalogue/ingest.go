package catalogue

import (
	"context"
	"errors"
	"fmt"
	"time"

	"github.com/airside/airside/internal/apperr"
)

// PostedBucket is one metric bucket as a gateway posts it: the listing named
// by "carrier/model" or by id.
type PostedBucket struct {
	Listing   string
	ListingID int64
	Bucket
}

// MaxBuckets bounds one metrics batch.
const MaxBuckets = 10000

// IngestStore is what metric ingestion needs from storage.
type IngestStore interface {
	ListingIDsBySlug(ctx context.Context) (map[string]int64, error)
	RecordBuckets(ctx context.Context, buckets []Bucket) error
	DeleteBucketsBefore(ctx context.Context, before time.Time) (int64, error)
	DeleteHourlyBefore(ctx context.Context, before time.Time) (int64, error)
}

// BucketRetention is how long raw per-minute buckets are kept: every figure
// read from them looks back at most a day; older ones live on in hourly
// rollups, kept HourlyRetention.
const (
	BucketRetention = 25 * time.Hour
	HourlyRetention = 400 * 24 * time.Hour
)

// Prune deletes buckets older than BucketRetention and hourly rollups older
// than HourlyRetention, returning how many rows went.
func (in *Ingest) Prune(ctx context.Context) (int64, error) {
	n, err := in.Store.DeleteBucketsBefore(ctx, in.Now().Add(-BucketRetention))
	if err != nil {
		return n, err
	}
	m, err := in.Store.DeleteHourlyBefore(ctx, in.Now().Add(-HourlyRetention))
	return n + m, err
}

// Ingest takes the gateway's per-minute metrics.
type Ingest struct {
	Store IngestStore
	Now   func() time.Time
}

// Record stores a batch of buckets, all or nothing, idempotent per (listing,
// minute). Problems are named by bucket and field ("buckets[3].minute").
func (in *Ingest) Record(ctx context.Context, posted []PostedBucket) (int, error) {
	if len(posted) == 0 || len(posted) > MaxBuckets {
		return 0, apperr.Invalid(map[string]string{"buckets": fmt.Sprintf("send 1 to %d buckets", MaxBuckets)})
	}
	ids, err := in.Store.ListingIDsBySlug(ctx)
	if err != nil {
		return 0, err
	}
	known := map[int64]bool{}
	for _, id := range ids {
		known[id] = true
	}
	now := in.Now()
	fields := map[string]string{}
	buckets := make([]Bucket, len(posted))
	seen := map[string]int{}
	for i, b := range posted {
		name := fmt.Sprintf("buckets[%d]", i)
		id := b.ListingID
		if b.Listing != "" {
			id = ids[b.Listing]
		}
		if !known[id] {
			fields[name+".listing"] = "unknown listing; name it as \"carrier/model\" or by listingId"
			continue
		}
		bucket := b.Bucket
		bucket.ListingID, bucket.Minute = id, b.Minute.UTC()
		for f, msg := range bucket.Validate(now) {
			fields[name+"."+f] = msg
		}
		key := fmt.Sprintf("%d/%d", id, bucket.Minute.Unix())
		if first, dup := seen[key]; dup {
			fields[name+".minute"] = fmt.Sprintf("the same listing and minute as buckets[%d]", first)
		}
		seen[key] = i
		buckets[i] = bucket
	}
	if len(fields) > 0 {
		return 0, apperr.Invalid(fields)
	}
	if err := in.Store.RecordBuckets(ctx, buckets); err != nil {
		var replay *ReplayError
		if errors.As(err, &replay) {
			fields := map[string]string{}
			for _, i := range replay.Indexes {
				fields[fmt.Sprintf("buckets[%d]", i)] = "this listing and minute were already recorded with other figures; the first write stands"
			}
			e := apperr.Errorf(apperr.ECONFLICT, "%d bucket(s) replay a recorded minute with other figures; nothing in this batch was stored.", len(replay.Indexes))
			e.Fields = fields
			return 0, e
		}
		return 0, err
	}
	return len(buckets), nil
}

// ReplayError refuses a batch some of whose buckets (by index) repeat a
// recorded (listing, minute) with other figures.
type ReplayError struct {
	Indexes []int
}

func (e *ReplayError) Error() string {
	return fmt.Sprintf("%d bucket(s) replay a recorded minute with other figures", len(e.Indexes))
}
