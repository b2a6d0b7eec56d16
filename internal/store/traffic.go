package store

import (
	"context"
	"fmt"
	"strings"
	"time"

	"gorm.io/gorm"

	"github.com/airside/airside/internal/catalogue"
	"github.com/airside/airside/internal/earnings"
)

type fareHistoryRow struct {
	ListingID int64 `gorm:"primaryKey"`
	FareID    int64 `gorm:"primaryKey"`
	FromAt    time.Time
}

func (fareHistoryRow) TableName() string { return "fare_history" }

// recordFareHistory notes that a fare is in force from now on.
func recordFareHistory(tx *gorm.DB, listingID, fareID int64, now time.Time) error {
	return tx.Create(&fareHistoryRow{ListingID: listingID, FareID: fareID, FromAt: now}).Error
}

// FareHistory lists, per listing, every fare published with when it came
// into force, oldest first.
func (s *Store) FareHistory(ctx context.Context, listingIDs []int64) (map[int64][]earnings.FareSpan, error) {
	out := map[int64][]earnings.FareSpan{}
	if len(listingIDs) == 0 {
		return out, nil
	}
	err := s.readTx(ctx, func(tx *gorm.DB) error {
		var rows []fareHistoryRow
		if err := tx.Where("listing_id IN ?", listingIDs).Order("from_at, fare_id").Find(&rows).Error; err != nil {
			return err
		}
		ids := make([]int64, len(rows))
		for i, r := range rows {
			ids[i] = r.FareID
		}
		fares, err := loadFares(tx, ids)
		if err != nil {
			return err
		}
		for _, r := range rows {
			out[r.ListingID] = append(out[r.ListingID], earnings.FareSpan{From: r.FromAt.UTC(), Fare: fares[r.FareID]})
		}
		return nil
	})
	if err != nil {
		return nil, fmt.Errorf("fare history: %w", err)
	}
	return out, nil
}

// HourlyTraffic lists the hourly rollups of listings from since (inclusive)
// to until (exclusive), oldest first, per listing.
func (s *Store) HourlyTraffic(ctx context.Context, listingIDs []int64, since, until time.Time) (map[int64][]catalogue.HourlyPoint, error) {
	out := map[int64][]catalogue.HourlyPoint{}
	if len(listingIDs) == 0 {
		return out, nil
	}
	// Scanned by hand, column by column: a month of a carrier's hours is
	// thousands of rows, and gorm's reflection per row was a third of the
	// traffic page's time.
	cols := append([]string{"listing_id", "hour"}, counterColumns...)
	rows, err := s.read(ctx).Table("metric_hourly").Select(cols).
		Where("listing_id IN ? AND hour >= ? AND hour < ?", listingIDs, since.UTC(), until.UTC()).
		Order("listing_id, hour").Rows()
	if err != nil {
		return nil, fmt.Errorf("hourly traffic: %w", err)
	}
	defer rows.Close()
	for rows.Next() {
		var id int64
		var p catalogue.HourlyPoint
		if err := rows.Scan(appendCounterTargets([]any{&id, &p.Hour}, &p.Counts)...); err != nil {
			return nil, fmt.Errorf("hourly traffic: %w", err)
		}
		p.Hour = p.Hour.UTC()
		out[id] = append(out[id], p)
	}
	if err := rows.Err(); err != nil {
		return nil, fmt.Errorf("hourly traffic: %w", err)
	}
	return out, nil
}

func hourlyPoint(r hourlyRow) catalogue.HourlyPoint {
	return catalogue.HourlyPoint{Hour: r.Hour.UTC(), Counts: r.Counts}
}

// ModelTraffic sums the hourly requests of every listing of each model, per
// hour: the denominator of a listing's share (competitors are never named).
func (s *Store) ModelTraffic(ctx context.Context, modelIDs []int64, since, until time.Time) (map[int64]map[time.Time]int64, error) {
	out := map[int64]map[time.Time]int64{}
	if len(modelIDs) == 0 {
		return out, nil
	}
	var rows []struct {
		ModelID  int64
		Hour     time.Time
		Requests int64
	}
	err := s.read(ctx).Table("metric_hourly").Select("listings.model_id, metric_hourly.hour, SUM(metric_hourly.requests) AS requests").
		Joins("JOIN listings ON listings.id = metric_hourly.listing_id").
		Where("listings.model_id IN ? AND metric_hourly.hour >= ? AND metric_hourly.hour < ?", modelIDs, since.UTC(), until.UTC()).
		Group("listings.model_id, metric_hourly.hour").Scan(&rows).Error
	if err != nil {
		return nil, fmt.Errorf("model traffic: %w", err)
	}
	for _, r := range rows {
		if out[r.ModelID] == nil {
			out[r.ModelID] = map[time.Time]int64{}
		}
		out[r.ModelID][r.Hour.UTC()] += r.Requests
	}
	return out, nil
}

// ModelTotals sums the requests of every listing of each model from since
// to until: the denominator of a listing's share over a whole window, for
// pages that need no hour of it.
func (s *Store) ModelTotals(ctx context.Context, modelIDs []int64, since, until time.Time) (map[int64]int64, error) {
	out := map[int64]int64{}
	if len(modelIDs) == 0 {
		return out, nil
	}
	var rows []struct {
		ModelID  int64
		Requests int64
	}
	err := s.read(ctx).Table("metric_hourly").Select("listings.model_id, SUM(metric_hourly.requests) AS requests").
		Joins("JOIN listings ON listings.id = metric_hourly.listing_id").
		Where("listings.model_id IN ? AND metric_hourly.hour >= ? AND metric_hourly.hour < ?", modelIDs, since.UTC(), until.UTC()).
		Group("listings.model_id").Scan(&rows).Error
	if err != nil {
		return nil, fmt.Errorf("model totals: %w", err)
	}
	for _, r := range rows {
		out[r.ModelID] = r.Requests
	}
	return out, nil
}

// ListingTotals sums each listing's requests from since to until: a page
// that shows a listing's share of a window and none of its hours (staff's
// operations view of every listing) reads a row a listing, not a day of them.
func (s *Store) ListingTotals(ctx context.Context, listingIDs []int64, since, until time.Time) (map[int64]int64, error) {
	out := map[int64]int64{}
	if len(listingIDs) == 0 {
		return out, nil
	}
	var rows []struct {
		ListingID int64
		Requests  int64
	}
	err := s.read(ctx).Table("metric_hourly").Select("listing_id, SUM(requests) AS requests").
		Where("listing_id IN ? AND hour >= ? AND hour < ?", listingIDs, since.UTC(), until.UTC()).
		Group("listing_id").Scan(&rows).Error
	if err != nil {
		return nil, fmt.Errorf("listing totals: %w", err)
	}
	for _, r := range rows {
		out[r.ListingID] = r.Requests
	}
	return out, nil
}

// PeerTraffic sums the hours of a model's other listings (all but
// exceptListing) from since to until into one figure: what a listing's
// failures and speeds are read beside (the peers are never named).
func (s *Store) PeerTraffic(ctx context.Context, modelID, exceptListing int64, since, until time.Time) (catalogue.HourlyPoint, error) {
	var out catalogue.HourlyPoint
	sums := make([]string, len(counterColumns))
	for i, c := range counterColumns {
		sums[i] = "COALESCE(SUM(metric_hourly." + c + "), 0) AS " + c
	}
	err := s.read(ctx).Table("metric_hourly").Select(strings.Join(sums, ", ")).
		Joins("JOIN listings ON listings.id = metric_hourly.listing_id").
		Where("listings.model_id = ? AND listings.id <> ? AND metric_hourly.hour >= ? AND metric_hourly.hour < ?", modelID, exceptListing, since.UTC(), until.UTC()).
		Row().Scan(appendCounterTargets(nil, &out.Counts)...)
	if err != nil {
		return catalogue.HourlyPoint{}, fmt.Errorf("peer traffic: %w", err)
	}
	return out, nil
}

// SeedHourly writes hourly rollups directly (the demo's history only; the
// gateway's reports go through RecordBuckets). Hours already there stay.
func (s *Store) SeedHourly(ctx context.Context, rows map[int64][]catalogue.HourlyPoint) error {
	var out []hourlyRow
	for id, points := range rows {
		for _, p := range points {
			out = append(out, hourlyRow{ListingID: id, Hour: p.Hour.UTC(), Counts: p.Counts})
		}
	}
	defer s.countWrite(time.Time{}) // hours anywhere: not known
	return s.tx(ctx, func(tx *gorm.DB, _ time.Time) error {
		if err := writeHours(tx, out, "ON CONFLICT (listing_id, hour) DO NOTHING"); err != nil {
			return fmt.Errorf("seed hourly traffic: %w", err)
		}
		return nil
	})
}

// BackdateSeedFares dates every fare of the demo's seed (the only fares in
// force with no filing), and the seeded listings' creation, back to since,
// so seeded history is priced and its listings have statements.
func (s *Store) BackdateSeedFares(ctx context.Context, since time.Time) error {
	return s.tx(ctx, func(tx *gorm.DB, _ time.Time) error {
		if err := tx.Exec(`UPDATE fare_history SET from_at = ? WHERE from_at > ? AND NOT EXISTS
			(SELECT 1 FROM filings WHERE filings.fare_id = fare_history.fare_id)`, since.UTC(), since.UTC()).Error; err != nil {
			return err
		}
		// The seeded listings existed through the history too: statements
		// list a listing from the month it was created.
		return tx.Exec(`UPDATE listings SET created_at = ? WHERE created_at > ? AND NOT EXISTS
			(SELECT 1 FROM filings WHERE filings.listing_id = listings.id)`, since.UTC(), since.UTC()).Error
	})
}
