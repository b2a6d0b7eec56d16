package store

import (
	"context"
	"fmt"
	"time"

	"gorm.io/gorm"

	"github.com/airside/airside/internal/account"
)

type sessionRow struct {
	IDHash    string `gorm:"primaryKey"`
	UserID    *int64
	Data      string
	CreatedAt time.Time
	ExpiresAt time.Time
}

func (sessionRow) TableName() string { return "sessions" }

type loginFailureRow struct {
	ID      int64 `gorm:"primaryKey"`
	Subject string
	At      time.Time
}

func (loginFailureRow) TableName() string { return "login_failures" }

// SaveSession creates or replaces a session by the hash of its id.
func (s *Store) SaveSession(ctx context.Context, idHash string, sess account.Session) error {
	return s.tx(ctx, func(tx *gorm.DB, now time.Time) error {
		row := sessionRow{IDHash: idHash, UserID: sess.UserID, Data: sess.Data, CreatedAt: now, ExpiresAt: sess.ExpiresAt.UTC()}
		res := tx.Model(&sessionRow{}).Where("id_hash = ?", idHash).
			Updates(map[string]any{"user_id": sess.UserID, "data": sess.Data, "expires_at": row.ExpiresAt})
		if res.Error != nil {
			return fmt.Errorf("save session: %w", res.Error)
		}
		if res.RowsAffected == 0 {
			if err := tx.Create(&row).Error; err != nil {
				return fmt.Errorf("save session: %w", err)
			}
		}
		return nil
	})
}

// FindSession returns a live session.
func (s *Store) FindSession(ctx context.Context, idHash string) (*account.Session, error) {
	var row sessionRow
	err := s.read(ctx).Where("id_hash = ? AND expires_at > ?", idHash, s.Now().UTC()).First(&row).Error
	if err != nil {
		return nil, notFound(err, "Session")
	}
	return &account.Session{UserID: row.UserID, Data: row.Data, ExpiresAt: row.ExpiresAt}, nil
}

// DeleteSession ends a session; its cookie stops working everywhere.
func (s *Store) DeleteSession(ctx context.Context, idHash string) error {
	if err := s.read(ctx).Where("id_hash = ?", idHash).Delete(&sessionRow{}).Error; err != nil {
		return fmt.Errorf("delete session: %w", err)
	}
	return nil
}

// DeleteExpiredSessions removes sessions past their expiry and old login
// failures, returning how many sessions went.
func (s *Store) DeleteExpiredSessions(ctx context.Context) (int64, error) {
	var n int64
	err := s.tx(ctx, func(tx *gorm.DB, now time.Time) error {
		res := tx.Where("expires_at <= ?", now).Delete(&sessionRow{})
		if res.Error != nil {
			return res.Error
		}
		n = res.RowsAffected
		return tx.Where("at <= ?", now.Add(-account.ThrottleWindow)).Delete(&loginFailureRow{}).Error
	})
	if err != nil {
		return 0, fmt.Errorf("delete expired sessions: %w", err)
	}
	return n, nil
}

// CountLoginFailures counts a subject's failures since a time.
func (s *Store) CountLoginFailures(ctx context.Context, subject string, since time.Time) (int, error) {
	var n int64
	if err := s.read(ctx).Model(&loginFailureRow{}).Where("subject = ? AND at > ?", subject, since.UTC()).Count(&n).Error; err != nil {
		return 0, fmt.Errorf("count login failures: %w", err)
	}
	return int(n), nil
}

// RecordLoginFailure records one failed login against each subject.
func (s *Store) RecordLoginFailure(ctx context.Context, subjects []string, at time.Time) error {
	return s.tx(ctx, func(tx *gorm.DB, _ time.Time) error {
		for _, subject := range subjects {
			if err := tx.Create(&loginFailureRow{Subject: subject, At: at.UTC()}).Error; err != nil {
				return fmt.Errorf("record login failure: %w", err)
			}
		}
		return nil
	})
}

// ClearLoginFailures forgets a subject's failures after a good login.
func (s *Store) ClearLoginFailures(ctx context.Context, subject string) error {
	if err := s.read(ctx).Where("subject = ?", subject).Delete(&loginFailureRow{}).Error; err != nil {
		return fmt.Errorf("clear login failures: %w", err)
	}
	return nil
}
