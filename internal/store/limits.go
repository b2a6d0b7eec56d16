package store

import (
	"context"
	"fmt"
	"strings"
	"time"

	"github.com/airside/airside/internal/catalogue"
)

// sumCounters selects every counter of metric_buckets summed, under its
// own column name.
var sumCounters = func() string {
	sums := make([]string, len(counterColumns))
	for i, c := range counterColumns {
		sums[i] = "COALESCE(SUM(metric_buckets." + c + "), 0) AS " + c
	}
	return strings.Join(sums, ", ")
}()

// LimitMinutes lists the minutes from since in which the gateways reported
// their limits acting on a listing (a 429 or latency backoff started, the
// breaker opened or closed), every gateway's part summed, oldest first: what the
// listing's traffic page pairs into the spells it was held back.
func (s *Store) LimitMinutes(ctx context.Context, listingID int64, since time.Time) ([]catalogue.Bucket, error) {
	rows, err := s.read(ctx).Table("metric_buckets").Select("minute, "+sumCounters).
		Where("listing_id = ? AND minute >= ? AND (backoffs > 0 OR breaker_openings > 0 OR breaker_closings > 0 OR slow_backoffs > 0)", listingID, since.UTC()).
		Group("minute").Order("minute").Rows()
	if err != nil {
		return nil, fmt.Errorf("limit minutes: %w", err)
	}
	defer rows.Close()
	var out []catalogue.Bucket
	for rows.Next() {
		b := catalogue.Bucket{ListingID: listingID}
		if err := rows.Scan(appendCounterTargets([]any{&b.Minute}, &b.Counts)...); err != nil {
			return nil, fmt.Errorf("limit minutes: %w", err)
		}
		b.Minute = b.Minute.UTC()
		out = append(out, b)
	}
	return out, rows.Err()
}

// MinuteSums sums each listing of a model over the minutes from since
// (inclusive) to until (exclusive), every gateway's part included: what a
// listing's failures in a few minutes are read beside.
func (s *Store) MinuteSums(ctx context.Context, modelID int64, since, until time.Time) (map[int64]catalogue.Counts, error) {
	rows, err := s.read(ctx).Table("metric_buckets").Select("metric_buckets.listing_id, "+sumCounters).
		Joins("JOIN listings ON listings.id = metric_buckets.listing_id").
		Where("listings.model_id = ? AND metric_buckets.minute >= ? AND metric_buckets.minute < ?", modelID, since.UTC(), until.UTC()).
		Group("metric_buckets.listing_id").Rows()
	if err != nil {
		return nil, fmt.Errorf("minute sums: %w", err)
	}
	defer rows.Close()
	out := map[int64]catalogue.Counts{}
	for rows.Next() {
		var id int64
		var c catalogue.Counts
		if err := rows.Scan(appendCounterTargets([]any{&id}, &c)...); err != nil {
			return nil, fmt.Errorf("minute sums: %w", err)
		}
		out[id] = c
	}
	return out, rows.Err()
}
