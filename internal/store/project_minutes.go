package store

import (
	"context"
	"fmt"
	"time"

	"github.com/airside/airside/internal/catalogue"
)

// projectMinuteRow is one gateway's minute of one API project on one
// listing (migration 41).
type projectMinuteRow struct {
	Project           string    `gorm:"primaryKey"`
	ListingID         int64     `gorm:"primaryKey;autoIncrement:false"`
	Minute            time.Time `gorm:"primaryKey"`
	Source            string    `gorm:"primaryKey"`
	Model             string
	Answers           int64
	InputTokens       int64
	CachedInputTokens int64
	OutputTokens      int64
	ResponseCacheHits int64
}

func (projectMinuteRow) TableName() string { return "project_minutes" }

// RecordProjectMinutes keeps the projects' minutes a gateway reported (a
// minute a process reported already keeps its first report: a retried
// report changes nothing) and drops those older than
// catalogue.HealthSampleRetention, in one transaction. It returns how many
// rows were new.
func (s *Store) RecordProjectMinutes(ctx context.Context, minutes []catalogue.ProjectMinute) (int, error) {
	rows := make([]projectMinuteRow, len(minutes))
	for i, p := range minutes {
		rows[i] = projectMinuteRow{Project: p.Project, ListingID: p.ListingID, Minute: p.Minute.UTC(), Source: p.Source, Model: p.Model,
			Answers: p.Answers, InputTokens: p.InputTokens, CachedInputTokens: p.CachedInputTokens, OutputTokens: p.OutputTokens,
			ResponseCacheHits: p.ResponseCacheHits}
	}
	return recordFirstReports(ctx, s, "project minutes", rows, func(r *projectMinuteRow) time.Time { return r.Minute })
}

// ProjectMinutes are the projects' minutes reported for the models' listings
// from since (inclusive) to until (exclusive), every gateway's source summed,
// by model, oldest first (for one minute, by project, then listing): one
// read for every model a page projects.
func (s *Store) ProjectMinutes(ctx context.Context, models []string, since, until time.Time) (map[string][]catalogue.ProjectMinute, error) {
	out := map[string][]catalogue.ProjectMinute{}
	if len(models) == 0 {
		return out, nil
	}
	var rows []projectMinuteRow
	if err := s.read(ctx).Model(&projectMinuteRow{}).
		Select("model, minute, project, listing_id, SUM(answers) AS answers, SUM(input_tokens) AS input_tokens, "+
			"SUM(cached_input_tokens) AS cached_input_tokens, SUM(output_tokens) AS output_tokens, SUM(response_cache_hits) AS response_cache_hits").
		Where("model IN ? AND minute >= ? AND minute < ?", models, since.UTC(), until.UTC()).
		Group("model, minute, project, listing_id").Order("model, minute, project, listing_id").Scan(&rows).Error; err != nil {
		return nil, fmt.Errorf("project minutes: %w", err)
	}
	for _, r := range rows {
		out[r.Model] = append(out[r.Model], catalogue.ProjectMinute{Project: r.Project, ListingID: r.ListingID, Minute: r.Minute.UTC(), Model: r.Model,
			Answers: r.Answers, InputTokens: r.InputTokens, CachedInputTokens: r.CachedInputTokens, OutputTokens: r.OutputTokens,
			ResponseCacheHits: r.ResponseCacheHits})
	}
	return out, nil
}
