package store

import (
	"context"
	"fmt"
	"maps"
	"slices"
	"time"

	"gorm.io/gorm"
	"gorm.io/gorm/clause"

	"github.com/airside/airside/internal/catalogue"
)

type bucketRow struct {
	ListingID         int64     `gorm:"primaryKey"`
	Minute            time.Time `gorm:"primaryKey"`
	Requests          int64
	Errors            int64
	ClientErrors      int64
	TTFTMsSum         int64 `gorm:"column:ttft_ms_sum"`
	OutputTokens      int64
	DurationMs        int64
	InputTokens       int64
	CachedInputTokens int64
}

func (bucketRow) TableName() string { return "metric_buckets" }

// RecordBuckets stores a batch of buckets, all or nothing. The first write
// of a (listing, minute) wins: the same bucket again is a harmless retry, a
// different one is refused with a *catalogue.ReplayError naming it.
func (s *Store) RecordBuckets(ctx context.Context, buckets []catalogue.Bucket) error {
	return s.tx(ctx, func(tx *gorm.DB, _ time.Time) error {
		rows := make([]bucketRow, len(buckets))
		ids := map[int64]bool{}
		var minutes []time.Time
		for i, b := range buckets {
			rows[i] = bucketRow{ListingID: b.ListingID, Minute: b.Minute.UTC(), Requests: b.Requests, Errors: b.Errors,
				ClientErrors: b.ClientErrors, TTFTMsSum: b.TTFTMsSum, OutputTokens: b.OutputTokens, DurationMs: b.DurationMs,
				InputTokens: b.InputTokens, CachedInputTokens: b.CachedInputTokens}
			ids[b.ListingID] = true
			minutes = append(minutes, rows[i].Minute)
		}
		type key struct {
			listing int64
			minute  int64
		}
		existing := map[key]bucketRow{}
		if len(rows) > 0 {
			lo, hi := slices.MinFunc(minutes, time.Time.Compare), slices.MaxFunc(minutes, time.Time.Compare)
			var found []bucketRow
			if err := tx.Where("listing_id IN ? AND minute >= ? AND minute <= ?", slices.Collect(maps.Keys(ids)), lo, hi).Find(&found).Error; err != nil {
				return fmt.Errorf("record metric buckets: %w", err)
			}
			for _, r := range found {
				existing[key{r.ListingID, r.Minute.Unix()}] = r
			}
		}
		var fresh []bucketRow
		var replays []int
		for i, r := range rows {
			old, ok := existing[key{r.ListingID, r.Minute.Unix()}]
			switch {
			case !ok:
				fresh = append(fresh, r)
			case !sameBucket(old, r):
				replays = append(replays, i)
			}
		}
		if len(replays) > 0 {
			return &catalogue.ReplayError{Indexes: replays}
		}
		for start := 0; start < len(fresh); start += 500 {
			end := min(start+500, len(fresh))
			// A concurrent identical retry may insert first: that is no conflict.
			if err := tx.Clauses(clause.OnConflict{DoNothing: true}).Create(fresh[start:end]).Error; err != nil {
				return fmt.Errorf("record metric buckets: %w", err)
			}
		}
		return nil
	})
}

func sameBucket(a, b bucketRow) bool {
	a.Minute, b.Minute = time.Time{}, time.Time{} // compared by key already; drivers differ in location
	return a == b
}

// ListingIDsBySlug maps "carrier/model" to listing ids, for naming listings
// in metric batches.
func (s *Store) ListingIDsBySlug(ctx context.Context) (map[string]int64, error) {
	var rows []struct {
		ID          int64
		CarrierSlug string
		ModelSlug   string
	}
	err := s.read(ctx).Table("listings").Select("listings.id, carriers.slug AS carrier_slug, models.slug AS model_slug").
		Joins("JOIN carriers ON carriers.id = listings.carrier_id").Joins("JOIN models ON models.id = listings.model_id").Scan(&rows).Error
	if err != nil {
		return nil, fmt.Errorf("listing ids: %w", err)
	}
	out := make(map[string]int64, len(rows))
	for _, r := range rows {
		out[r.CarrierSlug+"/"+r.ModelSlug] = r.ID
	}
	return out, nil
}

// liveHealth computes the health of listings from their buckets at time now:
// the decayed hour (weights 10, 3, 1, as catalogue.MinuteWeight) and the gated
// day. Listings without buckets in the window are absent from the result.
func liveHealth(tx *gorm.DB, ids []int64, now time.Time) (map[int64]catalogue.Health, error) {
	out := map[int64]catalogue.Health{}
	if len(ids) == 0 {
		return out, nil
	}
	current := now.UTC().Truncate(time.Minute)
	recent := current.Add(-4 * time.Minute)
	hourAgo := current.Add(-(catalogue.WindowMinutes - 1) * time.Minute)
	weight := "(CASE WHEN minute >= @current THEN 10 WHEN minute >= @recent THEN 3 ELSE 1 END)"
	var window []struct {
		ListingID int64
		catalogue.WindowSums
	}
	err := tx.Raw(`SELECT listing_id,
			SUM(`+weight+` * (requests - client_errors)) AS requests,
			SUM(`+weight+` * (requests - errors - client_errors)) AS successes,
			SUM(`+weight+` * ttft_ms_sum) AS ttft_ms_sum,
			SUM(`+weight+` * output_tokens) AS output_tokens,
			SUM(`+weight+` * duration_ms) AS duration_ms
		FROM metric_buckets WHERE listing_id IN @ids AND minute >= @hourAgo GROUP BY listing_id`,
		map[string]any{"current": current, "recent": recent, "hourAgo": hourAgo, "ids": ids}).Scan(&window).Error
	if err != nil {
		return nil, fmt.Errorf("metrics window: %w", err)
	}
	var day []struct {
		ListingID int64
		catalogue.DaySums
	}
	err = tx.Raw(`SELECT listing_id, SUM(requests - errors - client_errors) AS successes, SUM(input_tokens) AS input_tokens,
			SUM(cached_input_tokens) AS cached_input_tokens, SUM(output_tokens) AS output_tokens
		FROM metric_buckets WHERE listing_id IN @ids AND minute > @dayAgo GROUP BY listing_id`,
		map[string]any{"ids": ids, "dayAgo": now.UTC().Add(-24 * time.Hour)}).Scan(&day).Error
	if err != nil {
		return nil, fmt.Errorf("metrics day: %w", err)
	}
	days := map[int64]catalogue.DaySums{}
	for _, d := range day {
		days[d.ListingID] = d.DaySums
	}
	for _, w := range window {
		out[w.ListingID] = catalogue.HealthFrom(w.WindowSums, days[w.ListingID])
	}
	for id, d := range days {
		if _, ok := out[id]; !ok && catalogue.PassesGates(d) {
			out[id] = catalogue.HealthFrom(catalogue.WindowSums{}, d)
		}
	}
	return out, nil
}

// MetricSeries sums a listing's buckets into steps from since to now.
func (s *Store) MetricSeries(ctx context.Context, listingID int64, since time.Time, step time.Duration) ([]catalogue.SeriesPoint, error) {
	var rows []bucketRow
	if err := s.read(ctx).Where("listing_id = ? AND minute >= ?", listingID, since.UTC()).Order("minute").Find(&rows).Error; err != nil {
		return nil, fmt.Errorf("metric series: %w", err)
	}
	now := s.Now().UTC()
	n := int(now.Sub(since)/step) + 1
	points := make([]catalogue.SeriesPoint, n)
	for i := range points {
		points[i].At = since.Add(time.Duration(i) * step)
	}
	for _, r := range rows {
		i := int(r.Minute.Sub(since) / step)
		if i < 0 || i >= n {
			continue
		}
		p := &points[i]
		p.Requests += r.Requests - r.ClientErrors
		p.Errors += r.Errors
		p.SuccessCount += r.Requests - r.Errors - r.ClientErrors
		p.TTFTMsSum += r.TTFTMsSum
		p.OutputTokens += r.OutputTokens
		p.DurationMs += r.DurationMs
	}
	return points, nil
}

// DeleteBucketsBefore drops buckets older than a time (a day is all any
// metric reads).
func (s *Store) DeleteBucketsBefore(ctx context.Context, before time.Time) (int64, error) {
	res := s.db.WithContext(ctx).Where("minute < ?", before.UTC()).Delete(&bucketRow{})
	return res.RowsAffected, res.Error
}
