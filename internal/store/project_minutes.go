package store

import (
	"context"
	"fmt"
	"time"

	"gorm.io/gorm"

	"github.com/airside/airside/internal/catalogue"
)

// projectMinuteRow is a minute of one API project on one listing that a
// gateway process reported (migration 41): kept only so a retried report
// adds nothing; the figures go to the project's hour.
type projectMinuteRow struct {
	Project   string    `gorm:"primaryKey"`
	ListingID int64     `gorm:"primaryKey;autoIncrement:false"`
	Minute    time.Time `gorm:"primaryKey"`
	Source    string    `gorm:"primaryKey"`
}

func (projectMinuteRow) TableName() string { return "project_minutes" }

// projectHourRow is an API project's hour on one listing, every reported
// minute added (migration 41).
type projectHourRow struct {
	Project           string    `gorm:"primaryKey"`
	ListingID         int64     `gorm:"primaryKey;autoIncrement:false"`
	Hour              time.Time `gorm:"primaryKey"`
	Model             string
	Answers           int64
	InputTokens       int64
	CachedInputTokens int64
	OutputTokens      int64
	ResponseCacheHits int64
	// CacheHitRate and CacheOutputRatio are the project's declared rates
	// in the hour's last reported minute (migration 42).
	CacheHitRate, CacheOutputRatio *float64
}

func (projectHourRow) TableName() string { return "project_hourly" }

// RecordProjectMinutes stores projects' minutes in one transaction: a key
// already recorded keeps its first figures (a retry adds nothing), each new
// one adds to its project's hour on the listing; minutes older than the
// buckets' retention go (no report of them is taken any more), hours older
// than catalogue.HealthSampleRetention. It returns how many rows were new.
// The projection reads the hours: a fleet's minutes of a day are hundreds
// of thousands of rows, their hours a sixtieth.
func (s *Store) RecordProjectMinutes(ctx context.Context, minutes []catalogue.ProjectMinute) (int, error) {
	added := 0
	var earliest time.Time
	err := s.tx(ctx, func(tx *gorm.DB, now time.Time) error {
		added = 0
		for _, p := range minutes {
			hour := projectHourRow{Project: p.Project, ListingID: p.ListingID, Hour: p.Minute.UTC().Truncate(time.Hour), Model: p.Model,
				Answers: p.Answers, InputTokens: p.InputTokens, CachedInputTokens: p.CachedInputTokens, OutputTokens: p.OutputTokens,
				ResponseCacheHits: p.ResponseCacheHits, CacheHitRate: p.CacheHitRate, CacheOutputRatio: p.CacheOutputRatio}
			isNew, err := addMinuteOnce(tx, &projectMinuteRow{Project: p.Project, ListingID: p.ListingID, Minute: p.Minute.UTC(), Source: p.Source},
				&hour, "project_hourly", []string{"project", "listing_id", "hour"}, map[string]int64{"answers": p.Answers,
					"input_tokens": p.InputTokens, "cached_input_tokens": p.CachedInputTokens, "output_tokens": p.OutputTokens,
					"response_cache_hits": p.ResponseCacheHits}, "cache_hit_rate", "cache_output_ratio")
			if err != nil {
				return fmt.Errorf("record project minutes: %w", err)
			}
			if !isNew {
				continue
			}
			if added == 0 || p.Minute.Before(earliest) {
				earliest = p.Minute
			}
			added++
		}
		if err := tx.Where("minute < ?", now.Add(-catalogue.BucketRetention).UTC()).Delete(&projectMinuteRow{}).Error; err != nil {
			return fmt.Errorf("drop old project minutes: %w", err)
		}
		if err := tx.Where("hour < ?", now.Add(-catalogue.HealthSampleRetention).UTC()).Delete(&projectHourRow{}).Error; err != nil {
			return fmt.Errorf("drop old project hours: %w", err)
		}
		return nil
	})
	if err == nil && added > 0 {
		s.countWrite(earliest.UTC()) // the projection of the hours from then on is stale
	}
	return added, err
}

// ProjectHours are the projects' hours on the models' listings starting
// from since (inclusive) to until (exclusive), by model, oldest first (for
// one hour, by project, then listing): one read for every model a page
// projects.
func (s *Store) ProjectHours(ctx context.Context, models []string, since, until time.Time) (map[string][]catalogue.ProjectHour, error) {
	out := map[string][]catalogue.ProjectHour{}
	if len(models) == 0 {
		return out, nil
	}
	var rows []projectHourRow
	if err := s.read(ctx).Where("model IN ? AND hour >= ? AND hour < ?", models, since.UTC(), until.UTC()).
		Order("model, hour, project, listing_id").Find(&rows).Error; err != nil {
		return nil, fmt.Errorf("project hours: %w", err)
	}
	for _, r := range rows {
		out[r.Model] = append(out[r.Model], catalogue.ProjectHour{Project: r.Project, ListingID: r.ListingID, Model: r.Model, Hour: r.Hour.UTC(),
			Answers: r.Answers, InputTokens: r.InputTokens, CachedInputTokens: r.CachedInputTokens, OutputTokens: r.OutputTokens,
			ResponseCacheHits: r.ResponseCacheHits, CacheHitRate: r.CacheHitRate, CacheOutputRatio: r.CacheOutputRatio})
	}
	return out, nil
}
