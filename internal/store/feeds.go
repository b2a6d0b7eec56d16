package store

import (
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"time"

	"gorm.io/gorm"
	"gorm.io/gorm/clause"

	"github.com/airside/airside/internal/alerting"
	"github.com/airside/airside/internal/apperr"
	"github.com/airside/airside/internal/feed"
)

var _ feed.Store = (*Store)(nil)

type feedRow struct {
	CarrierID    int64 `gorm:"primaryKey;autoIncrement:false"`
	URL          string
	Submit       bool
	ETag         string `gorm:"column:etag"`
	LastModified string
	CheckedAt    *time.Time
	Failing      bool
	Outcome      string
	Mapping      map[string]int64 `gorm:"serializer:json"`
	Models       []string         `gorm:"serializer:json"`
	UpdatedBy    int64
	UpdatedAt    time.Time
}

func (feedRow) TableName() string { return "carrier_feeds" }

func (r *feedRow) toDomain() feed.Config {
	return feed.Config{CarrierID: r.CarrierID, URL: r.URL, Submit: r.Submit, ETag: r.ETag, LastModified: r.LastModified,
		CheckedAt: r.CheckedAt, Failing: r.Failing, Outcome: r.Outcome, Mapping: r.Mapping, Models: r.Models, UpdatedBy: r.UpdatedBy, UpdatedAt: r.UpdatedAt}
}

// FindFeed is a carrier's feed (ENOTFOUND when it has none).
func (s *Store) FindFeed(ctx context.Context, carrierID int64) (*feed.Config, error) {
	var row feedRow
	if err := s.read(ctx).Where("carrier_id = ?", carrierID).First(&row).Error; err != nil {
		if errors.Is(err, gorm.ErrRecordNotFound) {
			return nil, apperr.Errorf(apperr.ENOTFOUND, "No feed is set.")
		}
		return nil, fmt.Errorf("find feed: %w", err)
	}
	c := row.toDomain()
	return &c, nil
}

// FindFeedsDue lists the feeds not read since checkedBefore.
func (s *Store) FindFeedsDue(ctx context.Context, checkedBefore time.Time) ([]feed.Config, error) {
	var rows []feedRow
	if err := s.read(ctx).Where("checked_at IS NULL OR checked_at < ?", checkedBefore.UTC()).Order("carrier_id").Find(&rows).Error; err != nil {
		return nil, fmt.Errorf("find feeds due: %w", err)
	}
	out := make([]feed.Config, len(rows))
	for i := range rows {
		out[i] = rows[i].toDomain()
	}
	return out, nil
}

// SaveFeed sets a carrier's feed, audited.
func (s *Store) SaveFeed(ctx context.Context, actorID int64, c feed.Config) error {
	return s.tx(ctx, func(tx *gorm.DB, now time.Time) error {
		row := feedRow{CarrierID: c.CarrierID, URL: c.URL, Submit: c.Submit, ETag: c.ETag, LastModified: c.LastModified,
			CheckedAt: c.CheckedAt, Failing: c.Failing, Outcome: c.Outcome, Mapping: nonNilMapping(c.Mapping), Models: nonNilModels(c.Models),
			UpdatedBy: actorID, UpdatedAt: now}
		if err := tx.Clauses(clause.OnConflict{Columns: []clause.Column{{Name: "carrier_id"}}, UpdateAll: true}).Create(&row).Error; err != nil {
			return fmt.Errorf("save feed: %w", err)
		}
		return appendAudit(tx, now, auditEvent{ActorID: &actorID, CarrierID: &c.CarrierID, Action: "feed.set", SubjectType: "carrier",
			SubjectID: c.CarrierID, After: map[string]any{"url": c.URL, "submit": c.Submit}})
	})
}

// RecordFeedRead stores what a read of the feed did, and tells the
// carrier's members tell (unless "") in their inbox.
func (s *Store) RecordFeedRead(ctx context.Context, c feed.Config, tell string) error {
	return s.tx(ctx, func(tx *gorm.DB, now time.Time) error {
		res := tx.Model(&feedRow{}).Where("carrier_id = ? AND url = ?", c.CarrierID, c.URL).Updates(map[string]any{
			"etag": c.ETag, "last_modified": c.LastModified, "checked_at": c.CheckedAt, "failing": c.Failing, "outcome": c.Outcome,
			"models": modelsJSON(c.Models)})
		if res.Error != nil {
			return fmt.Errorf("record feed read: %w", res.Error)
		}
		if res.RowsAffected == 0 || tell == "" {
			return nil // nothing to say, or the feed was changed or removed meanwhile
		}
		if err := notifyCarrier(tx, now, c.CarrierID, nil, tell); err != nil {
			return err
		}
		event := alerting.EventFeedRecovered
		if c.Failing {
			event = alerting.EventFeedFailing
		}
		return queueDelivery(tx, now, c.CarrierID, webhookEvent{Event: event, At: now, Detail: c.Outcome, Feed: c.URL})
	})
}

// SaveFeedMapping replaces which listing each feed model files to,
// audited, and drops the validators so the next read is a full one.
func (s *Store) SaveFeedMapping(ctx context.Context, actorID, carrierID int64, mapping map[string]int64) error {
	body, err := json.Marshal(nonNilMapping(mapping))
	if err != nil {
		return fmt.Errorf("save feed mapping: %w", err)
	}
	return s.tx(ctx, func(tx *gorm.DB, now time.Time) error {
		res := tx.Model(&feedRow{}).Where("carrier_id = ?", carrierID).Updates(map[string]any{
			"mapping": string(body), "etag": "", "last_modified": "", "updated_by": actorID, "updated_at": now})
		if res.Error != nil {
			return fmt.Errorf("save feed mapping: %w", res.Error)
		}
		if res.RowsAffected == 0 {
			return apperr.Errorf(apperr.ENOTFOUND, "No feed is set.")
		}
		return appendAudit(tx, now, auditEvent{ActorID: &actorID, CarrierID: &carrierID, Action: "feed.map", SubjectType: "carrier",
			SubjectID: carrierID, After: map[string]any{"mapping": mapping}})
	})
}

func nonNilMapping(m map[string]int64) map[string]int64 {
	if m == nil {
		return map[string]int64{}
	}
	return m
}

func nonNilModels(m []string) []string {
	if m == nil {
		return []string{}
	}
	return m
}

// modelsJSON is the models column's value for an update by map (which
// does not apply the serializer).
func modelsJSON(m []string) string {
	b, _ := json.Marshal(nonNilModels(m)) // a []string always marshals
	return string(b)
}

// ClaimFeedRead moves the feed's checked_at from was to now when it is
// still was: one process of several reading a due feed wins.
func (s *Store) ClaimFeedRead(ctx context.Context, carrierID int64, was *time.Time, now time.Time) (bool, error) {
	q := s.db.WithContext(ctx).Model(&feedRow{}).Where("carrier_id = ?", carrierID)
	if was == nil {
		q = q.Where("checked_at IS NULL")
	} else {
		q = q.Where("checked_at = ?", *was)
	}
	res := q.Update("checked_at", now.UTC())
	if res.Error != nil {
		return false, fmt.Errorf("claim feed read: %w", res.Error)
	}
	return res.RowsAffected == 1, nil
}

// DeleteFeed removes a carrier's feed, audited.
func (s *Store) DeleteFeed(ctx context.Context, actorID, carrierID int64) error {
	return s.tx(ctx, func(tx *gorm.DB, now time.Time) error {
		res := tx.Where("carrier_id = ?", carrierID).Delete(&feedRow{})
		if res.Error != nil {
			return fmt.Errorf("delete feed: %w", res.Error)
		}
		if res.RowsAffected == 0 {
			return apperr.Errorf(apperr.ENOTFOUND, "No feed is set.")
		}
		return appendAudit(tx, now, auditEvent{ActorID: &actorID, CarrierID: &carrierID, Action: "feed.remove", SubjectType: "carrier", SubjectID: carrierID})
	})
}
