package store

import (
	"context"
	"fmt"
	"time"

	"gorm.io/gorm"
	"gorm.io/gorm/clause"

	"github.com/airside/airside/internal/catalogue"
)

// healthSampleRow is one listing's live health as the routing catalogue
// served it at one sample time (migration 25).
type healthSampleRow struct {
	ListingID     int64     `gorm:"primaryKey"`
	At            time.Time `gorm:"primaryKey"`
	Requests      *float64
	UptimePct     *float64
	LatencyMs     *float64
	ThroughputTPS *float64 `gorm:"column:throughput_tps"`
	CacheHitRate  *float64
	OutputRatio   *float64
}

func (healthSampleRow) TableName() string { return "health_samples" }

// RecordHealthSample keeps the listings' live health at one sample time and
// drops samples older than catalogue.HealthSampleRetention, in one
// transaction. Every portal computes the same health from the same
// metrics, so a sample another process recorded first is kept as it is.
func (s *Store) RecordHealthSample(ctx context.Context, at time.Time, health map[int64]catalogue.Health) error {
	rows := make([]healthSampleRow, 0, len(health))
	for id, h := range health {
		rows = append(rows, healthSampleRow{ListingID: id, At: at.UTC(), Requests: h.Requests, UptimePct: h.UptimePct, LatencyMs: h.LatencyMs,
			ThroughputTPS: h.ThroughputTPS, CacheHitRate: h.CacheHitRate, OutputRatio: h.OutputRatio})
	}
	return s.tx(ctx, func(tx *gorm.DB, now time.Time) error {
		if len(rows) > 0 {
			if err := tx.Clauses(clause.OnConflict{DoNothing: true}).CreateInBatches(rows, 500).Error; err != nil {
				return fmt.Errorf("record health sample: %w", err)
			}
		}
		if err := tx.Where("at < ?", now.Add(-catalogue.HealthSampleRetention).UTC()).Delete(&healthSampleRow{}).Error; err != nil {
			return fmt.Errorf("drop old health samples: %w", err)
		}
		return nil
	})
}

// HealthSamples are the listings' recorded health samples from since
// (inclusive) to until (exclusive), oldest first.
func (s *Store) HealthSamples(ctx context.Context, listingIDs []int64, since, until time.Time) (map[int64][]catalogue.HealthSample, error) {
	out := map[int64][]catalogue.HealthSample{}
	if len(listingIDs) == 0 {
		return out, nil
	}
	var rows []healthSampleRow
	if err := s.read(ctx).Where("listing_id IN ? AND at >= ? AND at < ?", listingIDs, since.UTC(), until.UTC()).
		Order("listing_id, at").Find(&rows).Error; err != nil {
		return nil, fmt.Errorf("health samples: %w", err)
	}
	for _, r := range rows {
		out[r.ListingID] = append(out[r.ListingID], catalogue.HealthSample{At: r.At.UTC(), Health: catalogue.Health{Requests: r.Requests,
			UptimePct: r.UptimePct, LatencyMs: r.LatencyMs, ThroughputTPS: r.ThroughputTPS, CacheHitRate: r.CacheHitRate, OutputRatio: r.OutputRatio}})
	}
	return out, nil
}
