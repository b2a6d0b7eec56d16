package store

import (
	"context"
	"fmt"
	"time"

	"gorm.io/gorm"

	"github.com/airside/airside/internal/account"
	"github.com/airside/airside/internal/apperr"
)

type inviteRow struct {
	ID        int64 `gorm:"primaryKey"`
	TokenHash string
	CarrierID int64
	Email     string
	Role      string
	CreatedBy *int64
	CreatedAt time.Time
	ExpiresAt time.Time
	UsedAt    *time.Time
}

func (inviteRow) TableName() string { return "invites" }

// InviteCarrier creates a carrier and a one-time sign-up link for its first
// admin, audited, in one transaction.
func (s *Store) InviteCarrier(ctx context.Context, actorID int64, rec account.InviteRecord) error {
	return s.tx(ctx, func(tx *gorm.DB, now time.Time) error {
		c, err := createCarrier(tx, now, &actorID, rec.Slug, rec.Name)
		if err != nil {
			return err
		}
		inv := inviteRow{TokenHash: rec.TokenHash, CarrierID: c.ID, Email: rec.Email, Role: string(account.CarrierAdmin),
			CreatedBy: &actorID, CreatedAt: now, ExpiresAt: rec.ExpiresAt.UTC()}
		if err := tx.Create(&inv).Error; err != nil {
			return err
		}
		return appendAudit(tx, now, auditEvent{ActorID: &actorID, CarrierID: &c.ID, Action: "invite.create",
			SubjectType: "invite", SubjectID: inv.ID, After: map[string]any{"email": rec.Email, "role": inv.Role}})
	})
}

// FindInvite returns the pending invite for a token's hash.
func (s *Store) FindInvite(ctx context.Context, tokenHash string) (*account.Invite, error) {
	var inv inviteRow
	err := s.read(ctx).Where("token_hash = ? AND used_at IS NULL AND expires_at > ?", tokenHash, s.Now().UTC()).First(&inv).Error
	if err != nil {
		return nil, notFound(err, "This sign-up link is unknown, used or expired. Invite")
	}
	var c carrierRow
	if err := s.read(ctx).First(&c, inv.CarrierID).Error; err != nil {
		return nil, notFound(err, "Carrier")
	}
	return &account.Invite{Email: inv.Email, Carrier: c.toDomain(), Role: account.CarrierRole(inv.Role)}, nil
}

// AcceptInvite creates the invited user and its membership, and spends the
// link: a second use finds nothing.
func (s *Store) AcceptInvite(ctx context.Context, tokenHash, name, passwordHash string) (*account.User, error) {
	var user userRow
	err := s.tx(ctx, func(tx *gorm.DB, now time.Time) error {
		// Spend the link first with a conditional update: of two concurrent
		// accepts, exactly one changes a row.
		res := tx.Model(&inviteRow{}).Where("token_hash = ? AND used_at IS NULL AND expires_at > ?", tokenHash, now).
			Update("used_at", now)
		if res.Error != nil {
			return res.Error
		}
		if res.RowsAffected != 1 {
			return apperr.Errorf(apperr.ENOTFOUND, "This sign-up link is unknown, used or expired.")
		}
		var inv inviteRow
		if err := tx.Where("token_hash = ?", tokenHash).First(&inv).Error; err != nil {
			return err
		}
		user = userRow{Email: inv.Email, Name: name, PasswordHash: passwordHash, CreatedAt: now}
		if err := tx.Create(&user).Error; err != nil {
			if isDuplicate(err) {
				return apperr.Invalid(map[string]string{"email": "An account with this email already exists; ask an admin to add it to the carrier."})
			}
			return err
		}
		if err := tx.Create(&membershipRow{UserID: user.ID, CarrierID: inv.CarrierID, Role: inv.Role, CreatedAt: now}).Error; err != nil {
			return err
		}
		return appendAudit(tx, now, auditEvent{ActorID: &user.ID, CarrierID: &inv.CarrierID, Action: "invite.accept",
			SubjectType: "user", SubjectID: user.ID, After: map[string]any{"email": inv.Email, "role": inv.Role}})
	})
	if err != nil {
		return nil, fmt.Errorf("accept invite: %w", err)
	}
	return user.toDomain(), nil
}
