// Package account is who may use Airside: users, carriers, memberships and
// staff roles, password hashing, and the login rules (throttling included).
package account

import (
	"context"
	"crypto/rand"
	"crypto/sha256"
	"crypto/subtle"
	"encoding/base64"
	"encoding/hex"
	"fmt"
	"net/mail"
	"regexp"
	"strings"
	"time"

	"golang.org/x/crypto/argon2"

	"github.com/airside/airside/internal/apperr"
	"github.com/airside/airside/internal/textcheck"
)

// StaffRole is a gateway-staff role; carrier users have none.
type StaffRole string

// The staff roles.
const (
	StaffNone     StaffRole = ""
	StaffReviewer StaffRole = "reviewer"
	StaffAdmin    StaffRole = "admin"
)

// CarrierRole is a user's role within a carrier.
type CarrierRole string

// The carrier roles.
const (
	CarrierAdmin  CarrierRole = "admin"
	CarrierMember CarrierRole = "member"
)

// User is a person who logs in.
type User struct {
	ID           int64
	Email        string
	Name         string
	PasswordHash string
	Staff        StaffRole
	CreatedAt    time.Time
}

// Carrier is an inference provider filing fares.
type Carrier struct {
	ID        int64
	Slug      string
	Name      string
	CreatedAt time.Time
}

// Membership ties a user to a carrier.
type Membership struct {
	UserID    int64
	CarrierID int64
	Carrier   Carrier
	Role      CarrierRole
}

// Principal is a logged-in user with everything authorization needs.
type Principal struct {
	User        User
	Memberships []Membership
}

// IsStaff reports whether the user is a reviewer or an admin.
func (p *Principal) IsStaff() bool { return p.User.Staff != StaffNone }

// IsAdmin reports whether the user is a gateway admin.
func (p *Principal) IsAdmin() bool { return p.User.Staff == StaffAdmin }

// IsReviewer reports whether the user may review filings.
func (p *Principal) IsReviewer() bool {
	return p.User.Staff == StaffReviewer || p.User.Staff == StaffAdmin
}

// RoleIn returns the user's role in a carrier, or "" when not a member.
func (p *Principal) RoleIn(carrierID int64) CarrierRole {
	for _, m := range p.Memberships {
		if m.CarrierID == carrierID {
			return m.Role
		}
	}
	return ""
}

// CarrierIDs lists the carriers the user belongs to.
func (p *Principal) CarrierIDs() []int64 {
	ids := make([]int64, len(p.Memberships))
	for i, m := range p.Memberships {
		ids[i] = m.CarrierID
	}
	return ids
}

// argon2id parameters (OWASP's minimum: 19 MiB, 2 passes, 1 lane).
const (
	argonTime    = 2
	argonMemory  = 19 * 1024
	argonThreads = 1
	argonKeyLen  = 32
)

// HashPassword hashes a password with argon2id and a random salt, in the
// PHC string format.
func HashPassword(password string) (string, error) {
	salt := make([]byte, 16)
	if _, err := rand.Read(salt); err != nil {
		return "", fmt.Errorf("hash password: %w", err)
	}
	key := argon2.IDKey([]byte(password), salt, argonTime, argonMemory, argonThreads, argonKeyLen)
	b64 := base64.RawStdEncoding
	return fmt.Sprintf("$argon2id$v=%d$m=%d,t=%d,p=%d$%s$%s", argon2.Version, argonMemory, argonTime, argonThreads,
		b64.EncodeToString(salt), b64.EncodeToString(key)), nil
}

// CheckPassword reports whether password matches an argon2id hash.
func CheckPassword(hash, password string) bool {
	parts := strings.Split(hash, "$")
	if len(parts) != 6 || parts[1] != "argon2id" {
		return false
	}
	var memory uint32
	var iterations uint32
	var threads uint8
	if _, err := fmt.Sscanf(parts[3], "m=%d,t=%d,p=%d", &memory, &iterations, &threads); err != nil {
		return false
	}
	b64 := base64.RawStdEncoding
	salt, err := b64.DecodeString(parts[4])
	if err != nil {
		return false
	}
	want, err := b64.DecodeString(parts[5])
	if err != nil {
		return false
	}
	got := argon2.IDKey([]byte(password), salt, iterations, memory, threads, uint32(len(want)))
	return subtle.ConstantTimeCompare(got, want) == 1
}

// MinPasswordLength is the shortest password accepted.
const MinPasswordLength = 10

// ValidatePassword returns a message when a new password is too weak.
func ValidatePassword(password string) string {
	if len(password) < MinPasswordLength {
		return fmt.Sprintf("Use at least %d characters.", MinPasswordLength)
	}
	if len(password) > 1024 {
		return "Use at most 1024 characters."
	}
	return ""
}

// NormalizeEmail lower-cases and checks an address; "" when invalid.
func NormalizeEmail(email string) string {
	email = strings.ToLower(strings.TrimSpace(email))
	addr, err := mail.ParseAddress(email)
	if err != nil || addr.Address != email || len(email) > 254 {
		return ""
	}
	return email
}

var slugPattern = regexp.MustCompile(`^[a-z0-9][a-z0-9-]{1,38}[a-z0-9]$`)

// ValidSlug reports whether s is a carrier slug: 3-40 lower-case letters,
// digits and inner hyphens.
func ValidSlug(s string) bool { return slugPattern.MatchString(s) }

// NewToken returns a random URL-safe token and the hash stored in its place,
// so a leaked database does not hand out sessions or invites.
func NewToken() (token, hash string, err error) {
	b := make([]byte, 32)
	if _, err := rand.Read(b); err != nil {
		return "", "", fmt.Errorf("new token: %w", err)
	}
	token = base64.RawURLEncoding.EncodeToString(b)
	return token, HashToken(token), nil
}

// HashToken is the stored form of a token.
func HashToken(token string) string {
	sum := sha256.Sum256([]byte(token))
	return hex.EncodeToString(sum[:])
}

// Login throttling: failures counted over a window, per account and per
// client address.
const (
	ThrottleWindow     = 15 * time.Minute
	MaxFailuresAccount = 5
	MaxFailuresAddress = 20
)

// Store is what the account service needs from storage.
type Store interface {
	FindUserByEmail(ctx context.Context, email string) (*User, error)
	FindPrincipal(ctx context.Context, userID int64) (*Principal, error)
	CountLoginFailures(ctx context.Context, subject string, since time.Time) (int, error)
	RecordLoginFailure(ctx context.Context, subjects []string, at time.Time) error
	ClearLoginFailures(ctx context.Context, subject string) error
	CreateUser(ctx context.Context, actorID *int64, u UserRecord) (*User, error)
	InviteCarrier(ctx context.Context, actorID int64, inv InviteRecord) error
	FindInvite(ctx context.Context, tokenHash string) (*Invite, error)
	AcceptInvite(ctx context.Context, tokenHash, name, passwordHash string) (*User, error)
	DeleteSession(ctx context.Context, idHash string) error
	DeleteExpiredSessions(ctx context.Context) (int64, error)
}

// Service runs logins.
type Service struct {
	Store Store
	Now   func() time.Time
}

// ErrBadCredentials is the one message for a wrong email or password, so the
// form does not tell which accounts exist.
var ErrBadCredentials = apperr.Errorf(apperr.EUNAUTHORIZED, "That email and password do not match an account.")

// Authenticate checks a login from addr. Too many recent failures for the
// account or the address refuse even a right password until the window passes.
func (s *Service) Authenticate(ctx context.Context, email, password, addr string) (*Principal, error) {
	now := s.Now()
	email = strings.ToLower(strings.TrimSpace(email))
	if textcheck.Problem(email, 254) != "" || textcheck.Problem(addr, 100) != "" {
		return nil, ErrBadCredentials // not an address any account has; nothing to look up
	}
	accountKey, addrKey := "account:"+email, "addr:"+addr
	for _, limit := range []struct {
		key string
		max int
	}{{accountKey, MaxFailuresAccount}, {addrKey, MaxFailuresAddress}} {
		n, err := s.Store.CountLoginFailures(ctx, limit.key, now.Add(-ThrottleWindow))
		if err != nil {
			return nil, fmt.Errorf("authenticate: %w", err)
		}
		if n >= limit.max {
			return nil, apperr.Errorf(apperr.ETHROTTLED, "Too many failed logins. Try again in %d minutes.", int(ThrottleWindow.Minutes()))
		}
	}
	user, err := s.Store.FindUserByEmail(ctx, email)
	if err != nil && apperr.Code(err) != apperr.ENOTFOUND {
		return nil, fmt.Errorf("authenticate: %w", err)
	}
	if user == nil || !CheckPassword(user.PasswordHash, password) {
		if err := s.Store.RecordLoginFailure(ctx, []string{accountKey, addrKey}, now); err != nil {
			return nil, fmt.Errorf("authenticate: %w", err)
		}
		return nil, ErrBadCredentials
	}
	if err := s.Store.ClearLoginFailures(ctx, accountKey); err != nil {
		return nil, fmt.Errorf("authenticate: %w", err)
	}
	return s.Store.FindPrincipal(ctx, user.ID)
}
