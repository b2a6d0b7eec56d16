package store

import (
	"context"
	"encoding/json"
	"fmt"
	"strings"
	"time"

	"github.com/airside/airside/internal/audit"

	"gorm.io/gorm"
)

type auditRow struct {
	ID          int64 `gorm:"primaryKey"`
	At          time.Time
	ActorID     *int64
	CarrierID   *int64
	Action      string
	SubjectType string
	SubjectID   int64
	BeforeJSON  string `gorm:"column:before_json"`
	AfterJSON   string `gorm:"column:after_json"`
}

func (auditRow) TableName() string { return "audit_events" }

type auditEvent struct {
	ActorID, CarrierID *int64
	Action             string
	SubjectType        string
	SubjectID          int64
	Before, After      any
}

// appendAudit writes an audit row inside the caller's transaction, so the
// change and its record commit together. There is deliberately no update or
// delete of audit rows anywhere in the code.
func appendAudit(tx *gorm.DB, now time.Time, e auditEvent) error {
	row := auditRow{At: now, ActorID: e.ActorID, CarrierID: e.CarrierID, Action: e.Action,
		SubjectType: e.SubjectType, SubjectID: e.SubjectID}
	for _, part := range []struct {
		v   any
		dst *string
	}{{e.Before, &row.BeforeJSON}, {e.After, &row.AfterJSON}} {
		if part.v == nil {
			continue
		}
		b, err := json.Marshal(part.v)
		if err != nil {
			return fmt.Errorf("audit %s: %w", e.Action, err)
		}
		*part.dst = string(b)
	}
	if err := tx.Create(&row).Error; err != nil {
		return fmt.Errorf("audit %s: %w", e.Action, err)
	}
	return nil
}

// FindAuditEvents lists audit events, newest first.
func (s *Store) FindAuditEvents(ctx context.Context, f audit.Filter) ([]audit.Event, error) {
	q := s.read(ctx).Table("audit_events").
		Select("audit_events.*, COALESCE(users.email, '') AS actor_email, COALESCE(carriers.slug, '') AS carrier_slug").
		Joins("LEFT JOIN users ON users.id = audit_events.actor_id").
		Joins("LEFT JOIN carriers ON carriers.id = audit_events.carrier_id").
		Order("audit_events.id DESC")
	if f.CarrierIDs != nil {
		q = q.Where("audit_events.carrier_id IN ?", append(f.CarrierIDs, -1))
	}
	if f.SubjectType != "" {
		q = q.Where("audit_events.subject_type = ? AND audit_events.subject_id = ?", f.SubjectType, f.SubjectID)
	}
	if f.Actor != "" {
		q = q.Where("users.email = ?", f.Actor)
	}
	if f.Action != "" {
		if strings.HasSuffix(f.Action, ".") {
			q = q.Where("audit_events.action LIKE ?", f.Action+"%")
		} else {
			q = q.Where("audit_events.action = ?", f.Action)
		}
	}
	if f.CarrierSlug != "" {
		q = q.Where("carriers.slug = ?", f.CarrierSlug)
	}
	if !f.Since.IsZero() {
		q = q.Where("audit_events.at >= ?", f.Since.UTC())
	}
	if !f.Until.IsZero() {
		q = q.Where("audit_events.at < ?", f.Until.UTC())
	}
	if f.Limit <= 0 {
		f.Limit = 200
	}
	q = q.Offset(max(f.Offset, 0))
	var rows []struct {
		Row         auditRow `gorm:"embedded"`
		ActorEmail  string
		CarrierSlug string
	}
	if err := q.Limit(f.Limit).Scan(&rows).Error; err != nil {
		return nil, fmt.Errorf("find audit events: %w", err)
	}
	out := make([]audit.Event, len(rows))
	for i, r := range rows {
		out[i] = audit.Event{ID: r.Row.ID, At: r.Row.At, ActorEmail: r.ActorEmail, CarrierSlug: r.CarrierSlug, Action: r.Row.Action,
			SubjectType: r.Row.SubjectType, SubjectID: r.Row.SubjectID, Before: r.Row.BeforeJSON, After: r.Row.AfterJSON}
	}
	return out, nil
}
