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
	ID           int64 `gorm:"primaryKey"`
	Email        string
	Name         string
	PasswordHash string
	StaffRole    string
	CreatedAt    time.Time
}

func (userRow) TableName() string { return "users" }

func (r *userRow) toDomain() *account.User {
	return &account.User{ID: r.ID, Email: r.Email, Name: r.Name, PasswordHash: r.PasswordHash,
		Staff: account.StaffRole(r.StaffRole), CreatedAt: r.CreatedAt}
}

type carrierRow struct {
	ID        int64 `gorm:"primaryKey"`
	Slug      string
	Name      string
	CreatedAt time.Time
}

func (carrierRow) TableName() string { return "carriers" }

func (r *carrierRow) toDomain() account.Carrier {
	return account.Carrier{ID: r.ID, Slug: r.Slug, Name: r.Name, CreatedAt: r.CreatedAt}
}

type membershipRow struct {
	UserID    int64 `gorm:"primaryKey"`
	CarrierID int64 `gorm:"primaryKey"`
	Role      string
	CreatedAt time.Time
}

func (membershipRow) TableName() string { return "memberships" }

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
	if err := s.read(ctx).Where("email = ?", email).First(&row).Error; err != nil {
		return nil, notFound(err, "User")
	}
	return row.toDomain(), nil
}

// FindPrincipal loads a user with its memberships.
func (s *Store) FindPrincipal(ctx context.Context, userID int64) (*account.Principal, error) {
	var p *account.Principal
	err := s.db.WithContext(ctx).Transaction(func(tx *gorm.DB) error {
		var row userRow
		if err := tx.First(&row, userID).Error; err != nil {
			return notFound(err, "User")
		}
		p = &account.Principal{User: *row.toDomain()}
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

// FindCarriers lists every carrier.
func (s *Store) FindCarriers(ctx context.Context) ([]account.CarrierSummary, error) {
	var rows []struct {
		Row      carrierRow `gorm:"embedded"`
		Members  int
		Listings int
	}
	err := s.read(ctx).Table("carriers").Select(`carriers.*,
		(SELECT COUNT(*) FROM memberships WHERE memberships.carrier_id = carriers.id) AS members,
		(SELECT COUNT(*) FROM listings WHERE listings.carrier_id = carriers.id) AS listings`).
		Order("carriers.name").Scan(&rows).Error
	if err != nil {
		return nil, fmt.Errorf("find carriers: %w", err)
	}
	out := make([]account.CarrierSummary, len(rows))
	for i := range rows {
		out[i] = account.CarrierSummary{Carrier: rows[i].Row.toDomain(), Members: rows[i].Members, Listings: rows[i].Listings}
	}
	return out, nil
}

// FindCarrierBySlug finds a carrier.
func (s *Store) FindCarrierBySlug(ctx context.Context, slug string) (*account.Carrier, error) {
	var row carrierRow
	if err := s.read(ctx).Where("slug = ?", slug).First(&row).Error; err != nil {
		return nil, notFound(err, "Carrier")
	}
	c := row.toDomain()
	return &c, nil
}

// CreateCarrier creates a carrier, audited.
func (s *Store) CreateCarrier(ctx context.Context, actorID *int64, slug, name string) (*account.Carrier, error) {
	var row carrierRow
	err := s.tx(ctx, func(tx *gorm.DB, now time.Time) error {
		var err error
		row, err = createCarrier(tx, now, actorID, slug, name)
		return err
	})
	if err != nil {
		return nil, fmt.Errorf("create carrier %s: %w", slug, err)
	}
	c := row.toDomain()
	return &c, nil
}

func createCarrier(tx *gorm.DB, now time.Time, actorID *int64, slug, name string) (carrierRow, error) {
	if fields := account.ValidateCarrier(slug, name); len(fields) > 0 { // the demo and the command line come here directly
		return carrierRow{}, apperr.Invalid(fields)
	}
	row := carrierRow{Slug: slug, Name: name, CreatedAt: now}
	if err := tx.Create(&row).Error; err != nil {
		if isDuplicate(err) {
			return row, apperr.Invalid(map[string]string{"slug": "A carrier with this slug already exists."})
		}
		return row, err
	}
	return row, appendAudit(tx, now, auditEvent{ActorID: actorID, CarrierID: &row.ID, Action: "carrier.create",
		SubjectType: "carrier", SubjectID: row.ID, After: map[string]any{"slug": slug, "name": name}})
}

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
	return &account.Invite{Email: inv.Email, Carrier: c.toDomain()}, nil
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
