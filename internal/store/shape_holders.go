package store

import (
	"context"
	"fmt"
	"time"

	"gorm.io/gorm"
	"gorm.io/gorm/clause"

	"github.com/airside/airside/internal/catalogue"
)

// shapeHolderRow is one gateway's holder of one shape from a second of a
// minute, with the elections it held (migrations 27, 39 and 40).
type shapeHolderRow struct {
	Model         string    `gorm:"primaryKey"`
	Workload      string    `gorm:"primaryKey"`
	CacheRelevant bool      `gorm:"primaryKey"`
	Minute        time.Time `gorm:"primaryKey"`
	Source        string    `gorm:"primaryKey"`
	AtSecond      int       `gorm:"primaryKey;autoIncrement:false"`
	ListingID     int64
	Requests      int64
}

func (shapeHolderRow) TableName() string { return "shape_holders" }

// RecordShapeHolders keeps the holders a gateway reported (a second a
// process reported already keeps its first report: a retried report
// changes nothing) and drops those older than
// catalogue.HealthSampleRetention, in one transaction. It returns how many
// rows were new.
func (s *Store) RecordShapeHolders(ctx context.Context, holders []catalogue.ShapeHolder) (int, error) {
	rows := make([]shapeHolderRow, len(holders))
	for i, h := range holders {
		rows[i] = shapeHolderRow{Model: h.Model, Workload: h.Workload, CacheRelevant: h.CacheRelevant, Minute: h.Minute.UTC(),
			Source: h.Source, AtSecond: h.Second, ListingID: h.ListingID, Requests: h.Requests}
	}
	var n int
	err := s.tx(ctx, func(tx *gorm.DB, now time.Time) error {
		if len(rows) > 0 {
			res := tx.Clauses(clause.OnConflict{DoNothing: true}).CreateInBatches(rows, 500)
			if res.Error != nil {
				return fmt.Errorf("record shape holders: %w", res.Error)
			}
			n = int(res.RowsAffected)
		}
		if err := tx.Where("minute < ?", now.Add(-catalogue.HealthSampleRetention).UTC()).Delete(&shapeHolderRow{}).Error; err != nil {
			return fmt.Errorf("drop old shape holders: %w", err)
		}
		return nil
	})
	if err == nil && n > 0 {
		earliest := rows[0].Minute
		for _, r := range rows {
			earliest = minTime(earliest, r.Minute)
		}
		s.countWrite(earliest.UTC()) // the projection of the hours from then on is stale
	}
	return n, err
}

// ShapeHolders are the holders reported for the models' shapes in the
// minutes from since (inclusive) to until (exclusive), by model, oldest
// first (for one minute, by source, then second): one read for every model
// a page projects.
func (s *Store) ShapeHolders(ctx context.Context, models []string, since, until time.Time) (map[string][]catalogue.ShapeHolder, error) {
	out := map[string][]catalogue.ShapeHolder{}
	if len(models) == 0 {
		return out, nil
	}
	var rows []shapeHolderRow
	if err := s.read(ctx).Where("model IN ? AND minute >= ? AND minute < ?", models, since.UTC(), until.UTC()).
		Order("model, minute, source, at_second, workload, cache_relevant").Find(&rows).Error; err != nil {
		return nil, fmt.Errorf("shape holders: %w", err)
	}
	for _, r := range rows {
		out[r.Model] = append(out[r.Model], catalogue.ShapeHolder{Model: r.Model, Workload: r.Workload, CacheRelevant: r.CacheRelevant,
			ListingID: r.ListingID, Minute: r.Minute.UTC(), Second: r.AtSecond, Source: r.Source, Requests: r.Requests})
	}
	return out, nil
}
