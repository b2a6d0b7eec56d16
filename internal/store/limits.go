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

// OnCallFigures reads, for every listing of a carrier, the counts from
// since and its limit minutes from limitsSince, in two queries whatever
// the number of listings.
func (s *Store) OnCallFigures(ctx context.Context, carrierID int64, since, limitsSince time.Time) (map[int64]catalogue.Recent, error) {
	out := map[int64]catalogue.Recent{}
	scan := func(q string, withMinute bool, args []any, each func(id int64, b catalogue.Bucket)) error {
		rows, err := s.read(ctx).Raw(q, args...).Rows()
		if err != nil {
			return err
		}
		defer rows.Close()
		for rows.Next() {
			var id int64
			var b catalogue.Bucket
			targets := []any{&id}
			if withMinute {
				targets = append(targets, &b.Minute)
			}
			if err := rows.Scan(appendCounterTargets(targets, &b.Counts)...); err != nil {
				return err
			}
			b.ListingID, b.Minute = id, b.Minute.UTC()
			each(id, b)
		}
		return rows.Err()
	}
	mine := "metric_buckets.listing_id IN (SELECT id FROM listings WHERE carrier_id = ?)"
	err := scan("SELECT metric_buckets.listing_id, "+sumCounters+" FROM metric_buckets WHERE "+mine+" AND metric_buckets.minute > ? GROUP BY metric_buckets.listing_id", false,
		[]any{carrierID, since.UTC()}, func(id int64, b catalogue.Bucket) {
			o := out[id]
			o.Window = b.Counts
			out[id] = o
		})
	if err != nil {
		return nil, fmt.Errorf("on-call counts of carrier %d: %w", carrierID, err)
	}
	err = scan("SELECT metric_buckets.listing_id, metric_buckets.minute, "+sumCounters+" FROM metric_buckets WHERE "+mine+
		" AND metric_buckets.minute >= ? AND (backoffs > 0 OR breaker_openings > 0 OR breaker_closings > 0 OR slow_backoffs > 0)"+
		" GROUP BY metric_buckets.listing_id, metric_buckets.minute ORDER BY metric_buckets.minute", true,
		[]any{carrierID, limitsSince.UTC()}, func(id int64, b catalogue.Bucket) {
			o := out[id]
			o.LimitMinutes = append(o.LimitMinutes, b)
			out[id] = o
		})
	if err != nil {
		return nil, fmt.Errorf("on-call limits of carrier %d: %w", carrierID, err)
	}
	return out, nil
}
