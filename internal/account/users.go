package account

import (
	"context"
	"fmt"
	"strings"
	"time"

	"github.com/airside/airside/internal/apperr"
	"github.com/airside/airside/internal/textcheck"
)

// NewUser is a user to create, as typed (the password in clear).
type NewUser struct {
	Email, Name, Password string
	Staff                 StaffRole
	// CarrierSlug and CarrierRole add a membership when set.
	CarrierSlug string
	CarrierRole CarrierRole
}

// UserRecord is a validated user for the store to insert: the address
// normalised and the password hashed.
type UserRecord struct {
	Email, Name, PasswordHash string
	Staff                     StaffRole
	CarrierSlug               string
	CarrierRole               CarrierRole
}

// UserSummary is a row of the admin's user list.
type UserSummary struct {
	User
	Carriers string // "slug (role), ..."
}

// CarrierSummary is a row of the admin's carrier list.
type CarrierSummary struct {
	Carrier
	Members  int
	Listings int
}

// Invite is a pending sign-up.
type Invite struct {
	Email   string
	Carrier Carrier
	Role    CarrierRole
}

// InviteRecord is a validated carrier invitation for the store to insert.
type InviteRecord struct {
	Slug, Name, Email string
	TokenHash         string
	ExpiresAt         time.Time
}

// Session is a server-side session record.
type Session struct {
	UserID    *int64
	Data      string
	CreatedAt time.Time
	ExpiresAt time.Time
}

// InviteTTL is how long a sign-up link works.
const InviteTTL = 7 * 24 * time.Hour

// ValidateNewUser names what is wrong with a user to create, by field.
func ValidateNewUser(nu NewUser) map[string]string {
	fields := map[string]string{}
	if NormalizeEmail(nu.Email) == "" {
		fields["email"] = "Enter a valid email address."
	}
	if msg := ValidatePassword(nu.Password); msg != "" {
		fields["password"] = msg
	}
	if msg := textcheck.Problem(nu.Name, 100); msg != "" {
		fields["name"] = msg
	}
	switch nu.Staff {
	case StaffNone, StaffReviewer, StaffAdmin:
	default:
		fields["role"] = "Role must be reviewer or admin."
	}
	if nu.CarrierSlug != "" && nu.CarrierRole != CarrierAdmin && nu.CarrierRole != CarrierMember {
		fields["carrier_role"] = "Carrier role must be admin or member."
	}
	return fields
}

// ValidateCarrier names what is wrong with a new carrier's slug and name.
func ValidateCarrier(slug, name string) map[string]string {
	fields := map[string]string{}
	if !ValidSlug(slug) {
		fields["slug"] = "Use 3-40 lower-case letters, digits and hyphens."
	}
	if msg := textcheck.Problem(name, 100); name == "" || msg != "" {
		fields["name"] = "Enter a name of 1-100 characters (valid text, no NUL)."
	}
	return fields
}

// CreateUser validates and creates a user (and its membership), audited;
// actorID is nil when the command line or the demo creates it.
func (s *Service) CreateUser(ctx context.Context, actorID *int64, nu NewUser) (*User, error) {
	if fields := ValidateNewUser(nu); len(fields) > 0 {
		return nil, apperr.Invalid(fields)
	}
	hash, err := HashPassword(ctx, nu.Password)
	if err != nil {
		return nil, err
	}
	return s.Store.CreateUser(ctx, actorID, UserRecord{Email: NormalizeEmail(nu.Email), Name: nu.Name, PasswordHash: hash,
		Staff: nu.Staff, CarrierSlug: nu.CarrierSlug, CarrierRole: nu.CarrierRole})
}

// InviteCarrier creates a carrier and a one-time sign-up link for its first
// admin (gateway admins only); it returns the link's token, shown once.
func (s *Service) InviteCarrier(ctx context.Context, p *Principal, slug, name, email string) (string, error) {
	if !p.IsAdmin() {
		return "", apperr.Errorf(apperr.EFORBIDDEN, "Only gateway admins invite carriers.")
	}
	slug, name = strings.TrimSpace(slug), strings.TrimSpace(name)
	fields := ValidateCarrier(slug, name)
	email = NormalizeEmail(email)
	if email == "" {
		fields["email"] = "Enter a valid email address."
	}
	if len(fields) > 0 {
		return "", apperr.Invalid(fields)
	}
	token, hash, err := NewToken()
	if err != nil {
		return "", err
	}
	rec := InviteRecord{Slug: slug, Name: name, Email: email, TokenHash: hash, ExpiresAt: s.Now().Add(InviteTTL)}
	if err := s.Store.InviteCarrier(ctx, p.User.ID, rec); err != nil {
		return "", fmt.Errorf("invite carrier %s: %w", slug, err)
	}
	return token, nil
}

// FindInvite returns the pending invite for a sign-up link's token.
func (s *Service) FindInvite(ctx context.Context, token string) (*Invite, error) {
	return s.Store.FindInvite(ctx, HashToken(token))
}

// AcceptInvite creates the invited user and its membership, and spends the
// link: a second use finds nothing.
func (s *Service) AcceptInvite(ctx context.Context, token, name, password string) (*User, error) {
	name = strings.TrimSpace(name)
	fields := map[string]string{}
	if name == "" || textcheck.Problem(name, 100) != "" {
		fields["name"] = "Enter your name (up to 100 characters)."
	}
	if msg := ValidatePassword(password); msg != "" {
		fields["password"] = msg
	}
	if len(fields) > 0 {
		return nil, apperr.Invalid(fields)
	}
	hash, err := HashPassword(ctx, password)
	if err != nil {
		return nil, err
	}
	return s.Store.AcceptInvite(ctx, HashToken(token), name, hash)
}

// EndSession ends a session everywhere (logout, or a new login replacing it).
func (s *Service) EndSession(ctx context.Context, sessionID string) error {
	return s.Store.DeleteSession(ctx, HashToken(sessionID))
}

// SweepSessions deletes expired sessions and stale login failures.
func (s *Service) SweepSessions(ctx context.Context) (int64, error) {
	return s.Store.DeleteExpiredSessions(ctx)
}

// NewService is the account service on a store, on the wall clock.
func NewService(st Store) *Service { return &Service{Store: st, Now: time.Now} }
