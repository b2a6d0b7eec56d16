package store

import (
	"context"
	"fmt"
	"time"

	"gorm.io/gorm"

	"github.com/airside/airside/internal/account"
	"github.com/airside/airside/internal/apperr"
)

var _ account.SelfStore = (*Store)(nil)

// SetPassword sets a user's password hash and ends every session of the
// user but the one kept, audited.
func (s *Store) SetPassword(ctx context.Context, actorID *int64, userID int64, hash, keepSessionHash string) error {
	return s.tx(ctx, func(tx *gorm.DB, now time.Time) error {
		if err := tx.Model(&userRow{}).Where("id = ?", userID).Update("password_hash", hash).Error; err != nil {
			return err
		}
		if err := tx.Where("user_id = ? AND id_hash <> ?", userID, keepSessionHash).Delete(&sessionRow{}).Error; err != nil {
			return err
		}
		// A browser remembered under the old password asks for the code
		// again (whoever changed it may not be the one who remembered it).
		if _, err := forgetRememberedBrowsers(tx, userID); err != nil {
			return err
		}
		if err := spendResetLinks(tx, userID, now); err != nil {
			return err
		}
		return appendAudit(tx, now, auditEvent{ActorID: actorID, Action: "user.password", SubjectType: "user", SubjectID: userID})
	})
}

// FindMembers lists a carrier's people, admins first.
func (s *Store) FindMembers(ctx context.Context, carrierID int64) ([]account.Member, error) {
	var rows []struct {
		UserID      int64
		Email, Name string
		Role        string
	}
	err := s.read(ctx).Table("memberships").Select("memberships.user_id, users.email, users.name, memberships.role").
		Joins("JOIN users ON users.id = memberships.user_id").
		Where("memberships.carrier_id = ? AND users.deactivated_at IS NULL", carrierID).
		Order("memberships.role, users.email").Scan(&rows).Error
	if err != nil {
		return nil, fmt.Errorf("find members: %w", err)
	}
	out := make([]account.Member, len(rows))
	for i, r := range rows {
		out[i] = account.Member{UserID: r.UserID, Email: r.Email, Name: r.Name, Role: account.CarrierRole(r.Role)}
	}
	return out, nil
}

// CreateMemberInvite records a sign-up link for a new person of a carrier.
func (s *Store) CreateMemberInvite(ctx context.Context, actorID, carrierID int64, email string, role account.CarrierRole, tokenHash string, expires time.Time) error {
	return s.tx(ctx, func(tx *gorm.DB, now time.Time) error {
		var n int64
		if err := tx.Table("memberships").Joins("JOIN users ON users.id = memberships.user_id").
			Where("memberships.carrier_id = ? AND users.email = ?", carrierID, email).Count(&n).Error; err != nil {
			return err
		}
		if n > 0 {
			return apperr.Invalid(map[string]string{"email": "This person is already one of yours."})
		}
		inv := inviteRow{TokenHash: tokenHash, CarrierID: carrierID, Email: email, Role: string(role), CreatedBy: &actorID, CreatedAt: now, ExpiresAt: expires.UTC()}
		if err := tx.Create(&inv).Error; err != nil {
			return err
		}
		return appendAudit(tx, now, auditEvent{ActorID: &actorID, CarrierID: &carrierID, Action: "invite.create", SubjectType: "invite",
			SubjectID: inv.ID, After: map[string]any{"email": email, "role": string(role)}})
	})
}

// adminCount counts a carrier's active admins.
func adminCount(tx *gorm.DB, carrierID int64) (int64, error) {
	var n int64
	err := tx.Table("memberships").Joins("JOIN users ON users.id = memberships.user_id").
		Where("memberships.carrier_id = ? AND memberships.role = ? AND users.deactivated_at IS NULL", carrierID, string(account.CarrierAdmin)).
		Count(&n).Error
	return n, err
}

// SetMemberRole changes a person's role; the last admin stays an admin.
func (s *Store) SetMemberRole(ctx context.Context, actorID, carrierID, userID int64, role account.CarrierRole) error {
	return s.tx(ctx, func(tx *gorm.DB, now time.Time) error {
		var m membershipRow
		if err := tx.Where("carrier_id = ? AND user_id = ?", carrierID, userID).First(&m).Error; err != nil {
			return notFound(err, "Member")
		}
		if m.Role == string(account.CarrierAdmin) && role != account.CarrierAdmin {
			if n, err := adminCount(tx, carrierID); err != nil || n <= 1 {
				if err != nil {
					return err
				}
				return apperr.Errorf(apperr.ECONFLICT, "A carrier keeps at least one admin: make someone else admin first.")
			}
		}
		if err := tx.Model(&membershipRow{}).Where("carrier_id = ? AND user_id = ?", carrierID, userID).Update("role", string(role)).Error; err != nil {
			return err
		}
		return appendAudit(tx, now, auditEvent{ActorID: &actorID, CarrierID: &carrierID, Action: "member.role", SubjectType: "user",
			SubjectID: userID, Before: map[string]any{"role": m.Role}, After: map[string]any{"role": string(role)}})
	})
}

// RemoveMember takes a person out of a carrier and ends their sessions;
// the last admin cannot go.
func (s *Store) RemoveMember(ctx context.Context, actorID, carrierID, userID int64) error {
	return s.tx(ctx, func(tx *gorm.DB, now time.Time) error {
		var m membershipRow
		if err := tx.Where("carrier_id = ? AND user_id = ?", carrierID, userID).First(&m).Error; err != nil {
			return notFound(err, "Member")
		}
		if m.Role == string(account.CarrierAdmin) {
			if n, err := adminCount(tx, carrierID); err != nil || n <= 1 {
				if err != nil {
					return err
				}
				return apperr.Errorf(apperr.ECONFLICT, "A carrier keeps at least one admin.")
			}
		}
		if err := tx.Where("carrier_id = ? AND user_id = ?", carrierID, userID).Delete(&membershipRow{}).Error; err != nil {
			return err
		}
		if err := tx.Where("user_id = ?", userID).Delete(&sessionRow{}).Error; err != nil {
			return err
		}
		return appendAudit(tx, now, auditEvent{ActorID: &actorID, CarrierID: &carrierID, Action: "member.remove", SubjectType: "user",
			SubjectID: userID, Before: map[string]any{"role": m.Role}})
	})
}

// SetUserActive deactivates (ending every session) or reactivates a user.
func (s *Store) SetUserActive(ctx context.Context, actorID, userID int64, active bool) error {
	return s.tx(ctx, func(tx *gorm.DB, now time.Time) error {
		var when any = now
		action := "user.deactivate"
		if active {
			when, action = nil, "user.activate"
		}
		res := tx.Model(&userRow{}).Where("id = ?", userID).Update("deactivated_at", when)
		if res.Error != nil {
			return res.Error
		}
		if res.RowsAffected == 0 {
			return apperr.Errorf(apperr.ENOTFOUND, "User not found.")
		}
		if !active {
			if err := tx.Where("user_id = ?", userID).Delete(&sessionRow{}).Error; err != nil {
				return err
			}
		}
		return appendAudit(tx, now, auditEvent{ActorID: &actorID, Action: action, SubjectType: "user", SubjectID: userID})
	})
}

type passwordResetRow struct {
	TokenHash string `gorm:"primaryKey"`
	UserID    int64
	CreatedBy *int64
	CreatedAt time.Time
	ExpiresAt time.Time
	UsedAt    *time.Time
}

func (passwordResetRow) TableName() string { return "password_resets" }

// CreatePasswordReset records a one-time reset link for a user.
func (s *Store) CreatePasswordReset(ctx context.Context, actorID, userID int64, tokenHash string, expires time.Time) error {
	return s.tx(ctx, func(tx *gorm.DB, now time.Time) error {
		var u userRow
		if err := tx.First(&u, userID).Error; err != nil {
			return notFound(err, "User")
		}
		if err := tx.Create(&passwordResetRow{TokenHash: tokenHash, UserID: userID, CreatedBy: &actorID, CreatedAt: now, ExpiresAt: expires.UTC()}).Error; err != nil {
			return err
		}
		return appendAudit(tx, now, auditEvent{ActorID: &actorID, Action: "user.reset.issue", SubjectType: "user", SubjectID: userID})
	})
}

// FindPasswordReset returns the e-mail a live reset link is for.
func (s *Store) FindPasswordReset(ctx context.Context, tokenHash string) (string, error) {
	var email string
	err := s.read(ctx).Table("password_resets").Select("users.email").Joins("JOIN users ON users.id = password_resets.user_id").
		Where("password_resets.token_hash = ? AND password_resets.used_at IS NULL AND password_resets.expires_at > ?", tokenHash, s.Now().UTC()).
		Scan(&email).Error
	if err != nil {
		return "", fmt.Errorf("find reset: %w", err)
	}
	if email == "" {
		return "", apperr.Errorf(apperr.ENOTFOUND, "This reset link is unknown, used or expired.")
	}
	return email, nil
}

// UsePasswordReset sets the password with a live link, once, and ends
// every session of the user.
func (s *Store) UsePasswordReset(ctx context.Context, tokenHash, passwordHash string) error {
	return s.tx(ctx, func(tx *gorm.DB, now time.Time) error {
		var r passwordResetRow
		if err := tx.Where("token_hash = ? AND used_at IS NULL AND expires_at > ?", tokenHash, now).First(&r).Error; err != nil {
			return notFound(err, "This reset link is unknown, used or expired. Link")
		}
		res := tx.Model(&passwordResetRow{}).Where("token_hash = ? AND used_at IS NULL", tokenHash).Update("used_at", now)
		if res.Error != nil || res.RowsAffected != 1 {
			if res.Error != nil {
				return res.Error
			}
			return apperr.Errorf(apperr.ECONFLICT, "This reset link was just used.")
		}
		if err := tx.Model(&userRow{}).Where("id = ?", r.UserID).Update("password_hash", passwordHash).Error; err != nil {
			return err
		}
		if err := tx.Where("user_id = ?", r.UserID).Delete(&sessionRow{}).Error; err != nil {
			return err
		}
		if _, err := forgetRememberedBrowsers(tx, r.UserID); err != nil {
			return err
		}
		if err := spendResetLinks(tx, r.UserID, now); err != nil {
			return err
		}
		return appendAudit(tx, now, auditEvent{ActorID: &r.UserID, Action: "user.reset.use", SubjectType: "user", SubjectID: r.UserID})
	})
}

// spendResetLinks marks every unused reset link of a user used: once the
// password is set (by a link or by its owner), an older link someone else
// may hold must not set it again.
func spendResetLinks(tx *gorm.DB, userID int64, now time.Time) error {
	return tx.Model(&passwordResetRow{}).Where("user_id = ? AND used_at IS NULL", userID).Update("used_at", now).Error
}
