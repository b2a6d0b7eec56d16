package store

import (
	"context"
	"fmt"
	"time"

	"gorm.io/gorm"
	"gorm.io/gorm/clause"

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

type throttleRow struct {
	Subject       string `gorm:"primaryKey"`
	Attempts      int64
	WindowStart   time.Time
	NextAllowedAt time.Time
	UpdatedAt     time.Time
}

func (throttleRow) TableName() string { return "login_throttles" }

type deviceRow struct {
	TokenHash string `gorm:"primaryKey"`
	UserID    int64
	CreatedAt time.Time
}

func (deviceRow) TableName() string { return "known_devices" }

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
	return &account.Session{UserID: row.UserID, Data: row.Data, CreatedAt: row.CreatedAt, ExpiresAt: row.ExpiresAt}, nil
}

// DeleteSession ends a session; its cookie stops working everywhere.
func (s *Store) DeleteSession(ctx context.Context, idHash string) error {
	if err := s.db.WithContext(ctx).Where("id_hash = ?", idHash).Delete(&sessionRow{}).Error; err != nil {
		return fmt.Errorf("delete session: %w", err)
	}
	return nil
}

// DeleteExpiredSessions removes sessions past their expiry and login
// throttles long quiet, returning how many sessions went.
func (s *Store) DeleteExpiredSessions(ctx context.Context) (int64, error) {
	var n int64
	err := s.tx(ctx, func(tx *gorm.DB, now time.Time) error {
		res := tx.Where("expires_at <= ?", now).Delete(&sessionRow{})
		if res.Error != nil {
			return res.Error
		}
		n = res.RowsAffected
		return tx.Where("updated_at <= ? AND next_allowed_at <= ?", now.Add(-account.ThrottleWindow), now).Delete(&throttleRow{}).Error
	})
	if err != nil {
		return 0, fmt.Errorf("delete expired sessions: %w", err)
	}
	return n, nil
}

// ReserveLoginAttempt counts one attempt against subject unless policy
// holds it back, by compare-and-swap on the attempt count: of parallel
// attempts that read the same count, one wins and the others read again.
func (s *Store) ReserveLoginAttempt(ctx context.Context, subject string, policy account.ThrottlePolicy) (time.Duration, error) {
	for range 50 {
		var wait time.Duration
		reserved := false
		err := s.tx(ctx, func(tx *gorm.DB, now time.Time) error {
			var row throttleRow
			if err := tx.Where("subject = ?", subject).Limit(1).Find(&row).Error; err != nil {
				return err
			}
			if row.Subject == "" {
				res := tx.Clauses(clause.OnConflict{DoNothing: true}).Create(&throttleRow{Subject: subject, Attempts: 1,
					WindowStart: now, NextAllowedAt: now.Add(policy.Delay(1)), UpdatedAt: now})
				reserved = res.Error == nil && res.RowsAffected == 1
				return res.Error
			}
			if now.Before(row.NextAllowedAt) {
				wait = row.NextAllowedAt.Sub(now)
				return nil
			}
			attempts, start := row.Attempts+1, row.WindowStart
			if now.Sub(row.WindowStart) > policy.Window { // a quiet window forgets
				attempts, start = 1, now
			}
			res := tx.Model(&throttleRow{}).Where("subject = ? AND attempts = ? AND window_start = ?", subject, row.Attempts, row.WindowStart).
				Updates(map[string]any{"attempts": attempts, "window_start": start, "next_allowed_at": now.Add(policy.Delay(attempts)), "updated_at": now})
			reserved = res.Error == nil && res.RowsAffected == 1
			return res.Error
		})
		if err != nil {
			return 0, fmt.Errorf("reserve login attempt: %w", err)
		}
		if wait > 0 || reserved {
			return wait, nil
		}
	}
	return time.Second, nil // contended beyond reason: hold this one back
}

// LoginAttempts is how many attempts subject made in its current window.
func (s *Store) LoginAttempts(ctx context.Context, subject string, policy account.ThrottlePolicy) (int64, error) {
	var row throttleRow
	if err := s.read(ctx).Where("subject = ?", subject).Limit(1).Find(&row).Error; err != nil {
		return 0, fmt.Errorf("login attempts: %w", err)
	}
	if row.Subject == "" || s.Now().Sub(row.WindowStart) > policy.Window {
		return 0, nil
	}
	return row.Attempts, nil
}

// RefundLoginAttempt gives back one reserved attempt of subject.
func (s *Store) RefundLoginAttempt(ctx context.Context, subject string) error {
	return s.tx(ctx, func(tx *gorm.DB, now time.Time) error {
		return tx.Model(&throttleRow{}).Where("subject = ? AND attempts > 0", subject).
			Updates(map[string]any{"attempts": gorm.Expr("attempts - 1"), "updated_at": now}).Error
	})
}

// ClearLoginThrottle forgets subject's attempts.
func (s *Store) ClearLoginThrottle(ctx context.Context, subject string) error {
	return s.tx(ctx, func(tx *gorm.DB, _ time.Time) error {
		return tx.Where("subject = ?", subject).Delete(&throttleRow{}).Error
	})
}

// FindLoginThrottles lists the subjects with attempts in their window,
// those held back longest first.
func (s *Store) FindLoginThrottles(ctx context.Context) ([]account.Throttle, error) {
	var rows []throttleRow
	since := s.Now().UTC().Add(-account.ThrottleWindow)
	if err := s.read(ctx).Where("updated_at > ? OR next_allowed_at > ?", since, s.Now().UTC()).
		Order("next_allowed_at DESC").Limit(500).Find(&rows).Error; err != nil {
		return nil, fmt.Errorf("find login throttles: %w", err)
	}
	out := make([]account.Throttle, len(rows))
	for i, r := range rows {
		out[i] = account.Throttle{Subject: r.Subject, Attempts: r.Attempts, NextAllowedAt: r.NextAllowedAt, UpdatedAt: r.UpdatedAt}
	}
	return out, nil
}

// RememberDevice records a browser a user logged in from.
func (s *Store) RememberDevice(ctx context.Context, userID int64, tokenHash string) error {
	return s.tx(ctx, func(tx *gorm.DB, now time.Time) error {
		return tx.Create(&deviceRow{TokenHash: tokenHash, UserID: userID, CreatedAt: now}).Error
	})
}

// IsKnownDevice reports whether the user logged in before from this browser.
func (s *Store) IsKnownDevice(ctx context.Context, userID int64, tokenHash string) (bool, error) {
	var n int64
	if err := s.read(ctx).Model(&deviceRow{}).Where("token_hash = ? AND user_id = ?", tokenHash, userID).Count(&n).Error; err != nil {
		return false, fmt.Errorf("known device: %w", err)
	}
	return n > 0, nil
}

// DeleteUserSessions ends every session of a user and forgets the
// browsers remembered for two-factor sign-in: "log out everywhere" means
// every browser signs in again in full.
func (s *Store) DeleteUserSessions(ctx context.Context, userID int64) (int64, error) {
	var n int64
	err := s.tx(ctx, func(tx *gorm.DB, _ time.Time) error {
		res := tx.Where("user_id = ?", userID).Delete(&sessionRow{})
		if res.Error != nil {
			return res.Error
		}
		n = res.RowsAffected
		_, err := forgetRememberedBrowsers(tx, userID)
		return err
	})
	return n, err
}

// RecordAudit appends one audit event on its own (logins, logouts, token
// use: events with no other change to commit with).
func (s *Store) RecordAudit(ctx context.Context, actorID *int64, action, subjectType string, subjectID int64, after map[string]any) error {
	return s.tx(ctx, func(tx *gorm.DB, now time.Time) error {
		return appendAudit(tx, now, auditEvent{ActorID: actorID, Action: action, SubjectType: subjectType, SubjectID: subjectID, After: after})
	})
}
