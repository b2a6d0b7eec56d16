package store

import (
	"context"
	"fmt"
	"time"

	"gorm.io/gorm"

	"github.com/airside/airside/internal/catalogue"
)

type orgMinuteRow struct {
	ListingID         int64     `gorm:"primaryKey"`
	Minute            time.Time `gorm:"primaryKey"`
	Source            string    `gorm:"primaryKey"`
	Organisation      string    `gorm:"primaryKey"`
	Requests          int64
	Errors            int64
	InputTokens       int64
	CachedInputTokens int64
	OutputTokens      int64
}

func (orgMinuteRow) TableName() string { return "org_minutes" }

type orgHourRow struct {
	ListingID         int64     `gorm:"primaryKey"`
	Hour              time.Time `gorm:"primaryKey"`
	Organisation      string    `gorm:"primaryKey"`
	Requests          int64
	Errors            int64
	InputTokens       int64
	CachedInputTokens int64
	OutputTokens      int64
}

func (orgHourRow) TableName() string { return "org_hourly" }

// RecordOrgUsage stores organisations' minutes in one transaction: a key
// already recorded keeps its first figures (a retry adds nothing), each new
// one adds to its hour; minutes older than the buckets' retention go. It
// returns how many rows were new.
func (s *Store) RecordOrgUsage(ctx context.Context, rows []catalogue.OrgUsage) (int, error) {
	added := 0
	err := s.tx(ctx, func(tx *gorm.DB, now time.Time) error {
		added = 0
		for _, u := range rows {
			row := orgMinuteRow{ListingID: u.ListingID, Minute: u.Minute.UTC(), Source: u.Source, Organisation: u.Organisation, Requests: u.Requests,
				Errors: u.Errors, InputTokens: u.InputTokens, CachedInputTokens: u.CachedInputTokens, OutputTokens: u.OutputTokens}
			hour := orgHourRow{ListingID: u.ListingID, Hour: u.Minute.UTC().Truncate(time.Hour), Organisation: u.Organisation, Requests: u.Requests,
				Errors: u.Errors, InputTokens: u.InputTokens, CachedInputTokens: u.CachedInputTokens, OutputTokens: u.OutputTokens}
			isNew, err := addMinuteOnce(tx, &row, &hour, "org_hourly", []string{"listing_id", "hour", "organisation"}, map[string]int64{
				"requests": u.Requests, "errors": u.Errors, "input_tokens": u.InputTokens, "cached_input_tokens": u.CachedInputTokens,
				"output_tokens": u.OutputTokens})
			if err != nil {
				return err
			}
			if isNew {
				added++
			}
		}
		if err := tx.Where("minute < ?", now.Add(-catalogue.BucketRetention)).Delete(&orgMinuteRow{}).Error; err != nil {
			return err
		}
		return tx.Where("hour < ?", now.Add(-catalogue.HourlyRetention)).Delete(&orgHourRow{}).Error
	})
	if err != nil {
		return 0, fmt.Errorf("record organisations' usage: %w", err)
	}
	return added, nil
}

// OrgHours are the hourly sums of listings' organisations in [since,
// until): listing -> organisation -> hours, oldest first.
func (s *Store) OrgHours(ctx context.Context, listingIDs []int64, since, until time.Time) (map[int64]map[string][]catalogue.HourlyPoint, error) {
	out := map[int64]map[string][]catalogue.HourlyPoint{}
	if len(listingIDs) == 0 {
		return out, nil
	}
	var rows []orgHourRow
	if err := s.read(ctx).Where("listing_id IN ? AND hour >= ? AND hour < ?", listingIDs, since.UTC(), until.UTC()).
		Order("hour").Find(&rows).Error; err != nil {
		return nil, fmt.Errorf("organisations' hours: %w", err)
	}
	for _, r := range rows {
		if out[r.ListingID] == nil {
			out[r.ListingID] = map[string][]catalogue.HourlyPoint{}
		}
		out[r.ListingID][r.Organisation] = append(out[r.ListingID][r.Organisation], catalogue.HourlyPoint{Hour: r.Hour.UTC(),
			Counts: catalogue.Counts{Requests: r.Requests, Errors: r.Errors, InputTokens: r.InputTokens, CachedInputTokens: r.CachedInputTokens,
				OutputTokens: r.OutputTokens}})
	}
	return out, nil
}
