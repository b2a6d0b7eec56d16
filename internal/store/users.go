package store

import (
	"context"
	"fmt"
	"time"

	"gorm.io/gorm"

	"github.com/airside/airside/internal/account"
	"github.com/airside/airside/internal/apperr"
)

var _ account.Store = (*Store)(nil)

type userRow struct {
	ID            int64 `gorm:"primaryKey"`
	Email         string
	Name          string
	PasswordHash  string
	StaffRole     string
	CreatedAt     time.Time
	DeactivatedAt *time.Time
	TotpEnabledAt *time.Time
}

func (userRow) TableName() string { return "users" }

func (r *userRow) toDomain() *account.User {
	return &account.User{ID: r.ID, Email: r.Email, Name: r.Name, PasswordHash: r.PasswordHash,
		Staff: account.StaffRole(r.StaffRole), CreatedAt: r.CreatedAt, Deactivated: r.DeactivatedAt != nil,
		TwoFactorOn: r.TotpEnabledAt != nil}
}

// CreateUser inserts a validated user (and its membership), audited.
func (s *Store) CreateUser(ctx context.Context, actorID *int64, nu account.UserRecord) (*account.User, error) {
	email := nu.Email
	row := userRow{Email: email, Name: nu.Name, PasswordHash: nu.PasswordHash, StaffRole: string(nu.Staff)}
	err := s.tx(ctx, func(tx *gorm.DB, now time.Time) error {
		row.CreatedAt = now
		if err := tx.Create(&row).Error; err != nil {
			if isDuplicate(err) {
				return apperr.Invalid(map[string]string{"email": "An account with this email already exists."})
			}
			return err
		}
		var carrierID *int64
		if nu.CarrierSlug != "" {
			var c carrierRow
			if err := tx.Where("slug = ?", nu.CarrierSlug).First(&c).Error; err != nil {
				return notFound(err, "Carrier "+nu.CarrierSlug)
			}
			if err := tx.Create(&membershipRow{UserID: row.ID, CarrierID: c.ID, Role: string(nu.CarrierRole), CreatedAt: now}).Error; err != nil {
				return err
			}
			carrierID = &c.ID
		}
		return appendAudit(tx, now, auditEvent{ActorID: actorID, CarrierID: carrierID, Action: "user.create",
			SubjectType: "user", SubjectID: row.ID,
			After: map[string]any{"email": email, "staff": nu.Staff, "carrier": nu.CarrierSlug, "carrierRole": nu.CarrierRole}})
	})
	if err != nil {
		return nil, fmt.Errorf("create user %s: %w", email, err)
	}
	return row.toDomain(), nil
}

// FindUserByEmail finds a user by address.
func (s *Store) FindUserByEmail(ctx context.Context, email string) (*account.User, error) {
	var row userRow
	// A deactivated user is no user at all to the login.
	if err := s.read(ctx).Where("email = ? AND deactivated_at IS NULL", email).First(&row).Error; err != nil {
		return nil, notFound(err, "User")
	}
	return row.toDomain(), nil
}

// FindPrincipal loads a user with its memberships.
func (s *Store) FindPrincipal(ctx context.Context, userID int64) (*account.Principal, error) {
	var p *account.Principal
	err := s.readTx(ctx, func(tx *gorm.DB) error {
		// The site's two-factor policy comes in the same query: this runs
		// on every page a person loads.
		var row struct {
			User             userRow `gorm:"embedded"`
			RequireTwoFactor bool
		}
		res := tx.Table("users").Select("users.*, (SELECT require_two_factor FROM site_policy WHERE id = 1) AS require_two_factor").
			Where("users.id = ? AND users.deactivated_at IS NULL", userID).Limit(1).Scan(&row)
		if res.Error != nil {
			return res.Error
		}
		if res.RowsAffected == 0 {
			return apperr.Errorf(apperr.ENOTFOUND, "User not found.")
		}
		p = &account.Principal{User: *row.User.toDomain(), TwoFactorPolicy: row.RequireTwoFactor}
		var rows []struct {
			Row  membershipRow `gorm:"embedded"`
			Slug string
			Name string
		}
		err := tx.Table("memberships").Select("memberships.*, carriers.slug, carriers.name").
			Joins("JOIN carriers ON carriers.id = memberships.carrier_id").
			Where("memberships.user_id = ?", userID).Order("carriers.name").Scan(&rows).Error
		if err != nil {
			return err
		}
		for _, r := range rows {
			p.Memberships = append(p.Memberships, account.Membership{UserID: r.Row.UserID, CarrierID: r.Row.CarrierID,
				Role: account.CarrierRole(r.Row.Role), Carrier: account.Carrier{ID: r.Row.CarrierID, Slug: r.Slug, Name: r.Name}})
		}
		return nil
	})
	if err != nil {
		return nil, fmt.Errorf("find principal %d: %w", userID, err)
	}
	return p, nil
}

// FindUsers lists every user with their carriers.
func (s *Store) FindUsers(ctx context.Context) ([]account.UserSummary, error) {
	var rows []struct {
		Row      userRow `gorm:"embedded"`
		Carriers string
	}
	err := s.read(ctx).Table("users").
		Select("users.*, COALESCE((SELECT " + s.groupConcat("carriers.slug || ' (' || memberships.role || ')'") +
			" FROM memberships JOIN carriers ON carriers.id = memberships.carrier_id WHERE memberships.user_id = users.id), '') AS carriers").
		Order("users.email").Scan(&rows).Error
	if err != nil {
		return nil, fmt.Errorf("find users: %w", err)
	}
	out := make([]account.UserSummary, len(rows))
	for i := range rows {
		out[i] = account.UserSummary{User: *rows[i].Row.toDomain(), Carriers: rows[i].Carriers}
	}
	return out, nil
}

func (s *Store) groupConcat(expr string) string {
	if s.dialect == Postgres {
		return "string_agg(" + expr + ", ', ')"
	}
	return "group_concat(" + expr + ", ', ')"
}
