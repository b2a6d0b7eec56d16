package store

import (
	"context"
	"fmt"
	"time"

	"gorm.io/gorm"

	"github.com/airside/airside/internal/account"
	"github.com/airside/airside/internal/apperr"
)

var _ account.TwoFactorStore = (*Store)(nil)

type recoveryCodeRow struct {
	ID        int64 `gorm:"primaryKey"`
	UserID    int64
	CodeHash  string
	CreatedAt time.Time
	UsedAt    *time.Time
}

func (recoveryCodeRow) TableName() string { return "recovery_codes" }

// TwoFactorState is a person's second factor and how many recovery codes
// they have left.
func (s *Store) TwoFactorState(ctx context.Context, userID int64) (*account.TwoFactorState, error) {
	var out account.TwoFactorState
	err := s.readTx(ctx, func(tx *gorm.DB) error {
		var row struct {
			TotpSecret    *string
			TotpEnabledAt *time.Time
		}
		res := tx.Table("users").Select("totp_secret, totp_enabled_at").Where("id = ?", userID).Scan(&row)
		if res.Error != nil {
			return res.Error
		}
		if res.RowsAffected == 0 {
			return apperr.Errorf(apperr.ENOTFOUND, "User not found.")
		}
		if row.TotpSecret != nil {
			out.SealedSecret = *row.TotpSecret
		}
		out.EnabledAt = row.TotpEnabledAt
		var left int64
		if err := tx.Model(&recoveryCodeRow{}).Where("user_id = ? AND used_at IS NULL", userID).Count(&left).Error; err != nil {
			return err
		}
		out.RecoveryLeft = int(left)
		return nil
	})
	if err != nil {
		return nil, fmt.Errorf("two-factor state of user %d: %w", userID, err)
	}
	return &out, nil
}

// BeginTwoFactor keeps an unconfirmed secret; an enabled one is never
// replaced this way (the condition is in the UPDATE, so two tabs cannot race
// past it).
func (s *Store) BeginTwoFactor(ctx context.Context, userID int64, sealed string) error {
	return s.tx(ctx, func(tx *gorm.DB, now time.Time) error {
		res := tx.Table("users").Where("id = ? AND totp_enabled_at IS NULL", userID).
			Updates(map[string]any{"totp_secret": sealed, "totp_last_step": nil})
		if res.Error != nil {
			return res.Error
		}
		if res.RowsAffected == 0 {
			return apperr.Errorf(apperr.ECONFLICT, "Two-factor sign-in is already on.")
		}
		return appendAudit(tx, now, auditEvent{ActorID: &userID, Action: "two_factor.begin", SubjectType: "user", SubjectID: userID})
	})
}

// EnableTwoFactor confirms the secret and sets the recovery codes, in one
// transaction.
func (s *Store) EnableTwoFactor(ctx context.Context, userID, step int64, codeHashes []string) error {
	return s.tx(ctx, func(tx *gorm.DB, now time.Time) error {
		res := tx.Table("users").Where("id = ? AND totp_enabled_at IS NULL AND totp_secret IS NOT NULL", userID).
			Updates(map[string]any{"totp_enabled_at": now, "totp_last_step": step})
		if res.Error != nil {
			return res.Error
		}
		if res.RowsAffected == 0 {
			return apperr.Errorf(apperr.ECONFLICT, "Two-factor sign-in changed meanwhile; reload the page.")
		}
		if err := replaceRecoveryCodes(tx, now, userID, codeHashes); err != nil {
			return err
		}
		return appendAudit(tx, now, auditEvent{ActorID: &userID, Action: "two_factor.enable", SubjectType: "user", SubjectID: userID,
			After: map[string]any{"recoveryCodes": len(codeHashes)}})
	})
}

func replaceRecoveryCodes(tx *gorm.DB, now time.Time, userID int64, codeHashes []string) error {
	if err := tx.Where("user_id = ?", userID).Delete(&recoveryCodeRow{}).Error; err != nil {
		return err
	}
	rows := make([]recoveryCodeRow, len(codeHashes))
	for i, h := range codeHashes {
		rows[i] = recoveryCodeRow{UserID: userID, CodeHash: h, CreatedAt: now}
	}
	if len(rows) == 0 {
		return nil
	}
	return tx.Create(&rows).Error
}

// DisableTwoFactor forgets a person's second factor, recovery codes and
// remembered browsers.
func (s *Store) DisableTwoFactor(ctx context.Context, actorID, userID int64) error {
	return s.tx(ctx, func(tx *gorm.DB, now time.Time) error {
		res := tx.Table("users").Where("id = ?", userID).
			Updates(map[string]any{"totp_secret": nil, "totp_enabled_at": nil, "totp_last_step": nil})
		if res.Error != nil {
			return res.Error
		}
		if res.RowsAffected == 0 {
			return apperr.Errorf(apperr.ENOTFOUND, "User not found.")
		}
		if err := tx.Where("user_id = ?", userID).Delete(&recoveryCodeRow{}).Error; err != nil {
			return err
		}
		if _, err := forgetRememberedBrowsers(tx, userID); err != nil {
			return err
		}
		action := "two_factor.disable"
		if actorID != userID {
			action = "two_factor.reset"
		}
		return appendAudit(tx, now, auditEvent{ActorID: &actorID, Action: action, SubjectType: "user", SubjectID: userID})
	})
}

// ReplaceRecoveryCodes swaps a person's recovery codes for new ones.
func (s *Store) ReplaceRecoveryCodes(ctx context.Context, userID int64, codeHashes []string) error {
	return s.tx(ctx, func(tx *gorm.DB, now time.Time) error {
		if err := replaceRecoveryCodes(tx, now, userID, codeHashes); err != nil {
			return err
		}
		return appendAudit(tx, now, auditEvent{ActorID: &userID, Action: "two_factor.recovery_codes", SubjectType: "user", SubjectID: userID,
			After: map[string]any{"recoveryCodes": len(codeHashes)}})
	})
}

// UseTOTPStep records a step as spent by compare-and-set: two requests
// carrying the same code cannot both pass.
func (s *Store) UseTOTPStep(ctx context.Context, userID, step int64) (bool, error) {
	var ok bool
	err := s.tx(ctx, func(tx *gorm.DB, _ time.Time) error {
		res := tx.Table("users").Where("id = ? AND totp_enabled_at IS NOT NULL AND (totp_last_step IS NULL OR totp_last_step < ?)", userID, step).
			Update("totp_last_step", step)
		ok = res.RowsAffected == 1
		return res.Error
	})
	return ok, err
}

// UseRecoveryCode spends an unused code, by compare-and-set.
func (s *Store) UseRecoveryCode(ctx context.Context, userID int64, codeHash string) (bool, error) {
	var ok bool
	err := s.tx(ctx, func(tx *gorm.DB, now time.Time) error {
		res := tx.Model(&recoveryCodeRow{}).Where("user_id = ? AND code_hash = ? AND used_at IS NULL", userID, codeHash).Update("used_at", now)
		if res.Error != nil {
			return res.Error
		}
		ok = res.RowsAffected == 1
		if !ok {
			return nil
		}
		return appendAudit(tx, now, auditEvent{ActorID: &userID, Action: "two_factor.recovery_used", SubjectType: "user", SubjectID: userID})
	})
	return ok, err
}

// RememberTwoFactorDevice lets a browser the person logged in from skip the
// code until a moment.
func (s *Store) RememberTwoFactorDevice(ctx context.Context, userID int64, deviceHash string, until time.Time) error {
	return s.tx(ctx, func(tx *gorm.DB, _ time.Time) error {
		return tx.Table("known_devices").Where("token_hash = ? AND user_id = ?", deviceHash, userID).
			Update("two_factor_until", until.UTC()).Error
	})
}

// TwoFactorDeviceRemembered reports whether a browser skips the code at a
// moment.
func (s *Store) TwoFactorDeviceRemembered(ctx context.Context, userID int64, deviceHash string, at time.Time) (bool, error) {
	var n int64
	err := s.read(ctx).Table("known_devices").
		Where("token_hash = ? AND user_id = ? AND two_factor_until IS NOT NULL AND two_factor_until > ?", deviceHash, userID, at.UTC()).
		Count(&n).Error
	return n > 0, err
}

// RememberedBrowsers lists a person's browsers that skip the code at a
// moment, most recently remembered first.
func (s *Store) RememberedBrowsers(ctx context.Context, userID int64, currentHash string, at time.Time) ([]account.RememberedBrowser, error) {
	var rows []struct {
		TokenHash      string
		CreatedAt      time.Time
		TwoFactorUntil time.Time
	}
	err := s.read(ctx).Table("known_devices").Select("token_hash, created_at, two_factor_until").
		Where("user_id = ? AND two_factor_until IS NOT NULL AND two_factor_until > ?", userID, at.UTC()).
		Order("two_factor_until DESC").Scan(&rows).Error
	if err != nil {
		return nil, fmt.Errorf("remembered browsers: %w", err)
	}
	out := make([]account.RememberedBrowser, len(rows))
	for i, r := range rows {
		out[i] = account.RememberedBrowser{FirstSeen: r.CreatedAt.UTC(), Until: r.TwoFactorUntil.UTC(), Current: currentHash != "" && r.TokenHash == currentHash}
	}
	return out, nil
}

// ForgetRememberedBrowsers makes every browser of a person ask for the code
// again, audited.
func (s *Store) ForgetRememberedBrowsers(ctx context.Context, userID int64) (int64, error) {
	var n int64
	err := s.tx(ctx, func(tx *gorm.DB, now time.Time) error {
		var err error
		if n, err = forgetRememberedBrowsers(tx, userID); err != nil {
			return err
		}
		return appendAudit(tx, now, auditEvent{ActorID: &userID, Action: "two_factor.forget_browsers", SubjectType: "user", SubjectID: userID,
			After: map[string]any{"browsers": n}})
	})
	return n, err
}

// forgetRememberedBrowsers is the one rule for ending remembered browsers:
// turning two-factor off, logging out everywhere, a password changed or
// reset, and the person's own "forget" all use it.
func forgetRememberedBrowsers(tx *gorm.DB, userID int64) (int64, error) {
	res := tx.Table("known_devices").Where("user_id = ? AND two_factor_until IS NOT NULL", userID).Update("two_factor_until", nil)
	return res.RowsAffected, res.Error
}

// SetTwoFactorRequired sets the site policy, audited.
func (s *Store) SetTwoFactorRequired(ctx context.Context, actorID int64, on bool) error {
	return s.tx(ctx, func(tx *gorm.DB, now time.Time) error {
		if err := tx.Table("site_policy").Where("id = 1").Updates(map[string]any{"require_two_factor": on, "updated_at": now}).Error; err != nil {
			return err
		}
		return appendAudit(tx, now, auditEvent{ActorID: &actorID, Action: "policy.two_factor", SubjectType: "user", SubjectID: actorID,
			After: map[string]any{"requireTwoFactor": on}})
	})
}

// TwoFactorRequired is the site policy.
func (s *Store) TwoFactorRequired(ctx context.Context) (bool, error) {
	return twoFactorRequired(s.read(ctx))
}

func twoFactorRequired(tx *gorm.DB) (bool, error) {
	var row struct{ RequireTwoFactor bool }
	if err := tx.Table("site_policy").Select("require_two_factor").Where("id = 1").Scan(&row).Error; err != nil {
		return false, fmt.Errorf("two-factor policy: %w", err)
	}
	return row.RequireTwoFactor, nil
}
