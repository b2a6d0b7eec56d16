package store

import (
	"context"
	"fmt"
	"time"

	"gorm.io/gorm"

	"github.com/airside/airside/internal/alerting"
)

var _ alerting.MailOutbox = (*Store)(nil)

type outboxRow struct {
	ID            int64 `gorm:"primaryKey"`
	ToAddr        string
	Subject       string
	Body          string
	CreatedAt     time.Time
	Attempts      int
	NextAttemptAt time.Time
	LastError     string
	SentAt        *time.Time
	GaveUpAt      *time.Time
}

func (outboxRow) TableName() string { return "alert_email_outbox" }

// QueueAlertEmail keeps an e-mail the relay refused, to send again at next.
func (s *Store) QueueAlertEmail(ctx context.Context, m alerting.QueuedEmail) error {
	return s.tx(ctx, func(tx *gorm.DB, now time.Time) error {
		return tx.Create(&outboxRow{ToAddr: m.To, Subject: m.Subject, Body: m.Body, CreatedAt: now, Attempts: m.Attempts,
			NextAttemptAt: m.NextAttemptAt.UTC(), LastError: m.LastError}).Error
	})
}

// DueAlertEmails are the queued e-mails whose next attempt has come.
func (s *Store) DueAlertEmails(ctx context.Context, now time.Time, limit int) ([]alerting.QueuedEmail, error) {
	var rows []outboxRow
	err := s.read(ctx).Where("sent_at IS NULL AND gave_up_at IS NULL AND next_attempt_at <= ?", now.UTC()).
		Order("next_attempt_at").Limit(limit).Find(&rows).Error
	if err != nil {
		return nil, fmt.Errorf("due alert e-mails: %w", err)
	}
	out := make([]alerting.QueuedEmail, len(rows))
	for i, r := range rows {
		out[i] = alerting.QueuedEmail{ID: r.ID, To: r.ToAddr, Subject: r.Subject, Body: r.Body, CreatedAt: r.CreatedAt.UTC(),
			Attempts: r.Attempts, NextAttemptAt: r.NextAttemptAt.UTC(), LastError: r.LastError}
	}
	return out, nil
}

// ClaimAlertEmail takes a due e-mail for one attempt by moving its next
// attempt to until, unless another process moved it first.
func (s *Store) ClaimAlertEmail(ctx context.Context, m alerting.QueuedEmail, until time.Time) (bool, error) {
	var ok bool
	err := s.tx(ctx, func(tx *gorm.DB, _ time.Time) error {
		res := tx.Model(&outboxRow{}).Where("id = ? AND next_attempt_at = ? AND sent_at IS NULL AND gave_up_at IS NULL", m.ID, m.NextAttemptAt.UTC()).
			Updates(map[string]any{"next_attempt_at": until.UTC(), "attempts": gorm.Expr("attempts + 1")})
		ok = res.RowsAffected == 1
		return res.Error
	})
	return ok, err
}

// FinishAlertEmail records an attempt's outcome: sent, failed again (with
// its next attempt), or given up.
func (s *Store) FinishAlertEmail(ctx context.Context, id int64, o alerting.Attempt) error {
	return s.tx(ctx, func(tx *gorm.DB, now time.Time) error {
		u := map[string]any{"last_error": o.Error}
		switch {
		case o.Sent:
			u["sent_at"] = now
		case o.GiveUp:
			u["gave_up_at"] = now
		default:
			u["next_attempt_at"] = o.NextAttemptAt.UTC()
		}
		return tx.Model(&outboxRow{}).Where("id = ?", id).Updates(u).Error
	})
}
