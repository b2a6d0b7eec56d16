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
	// Deactivated is set on a user an admin turned off (listed for admins
	// only: such a user cannot log in).
	Deactivated bool
	// TwoFactorOn is set once the person confirmed an authenticator app.
	TwoFactorOn bool
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
	// TwoFactorPolicy is the site's policy as loaded with the principal:
	// a gateway admin requires a second factor of staff and carrier admins.
	TwoFactorPolicy bool
}

// MustEnrolTwoFactor reports whether the site requires a second factor of
// this person and they have none yet: until they set one up, every page
// but the enrolment sends them there.
func (p *Principal) MustEnrolTwoFactor() bool {
	return p.TwoFactorPolicy && RequiresTwoFactorRole(p) && !p.User.TwoFactorOn
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
// PHC string format, in one of the process's hashing slots (at most one
// hash per core at once, whatever asks: login, password change, reset,
// sign-up), so a burst costs bounded memory. It gives up with ETHROTTLED
// when no slot frees within HashWait.
func HashPassword(ctx context.Context, password string) (string, error) {
	release, err := globalHashSlots.acquire(ctx)
	if err != nil {
		return "", err
	}
	defer release()
	return hashPassword(password)
}

// VerifyPassword reports whether password matches an argon2id hash,
// checked in one of the process's hashing slots (see HashPassword).
func VerifyPassword(ctx context.Context, hash, password string) (bool, error) {
	release, err := globalHashSlots.acquire(ctx)
	if err != nil {
		return false, err
	}
	defer release()
	return checkPassword(hash, password), nil
}

// hashPassword hashes outside the bound: callers hold a slot, or run once.
func hashPassword(password string) (string, error) {
	salt := make([]byte, 16)
	if _, err := rand.Read(salt); err != nil {
		return "", fmt.Errorf("hash password: %w", err)
	}
	key := argon2.IDKey([]byte(password), salt, argonTime, argonMemory, argonThreads, argonKeyLen)
	b64 := base64.RawStdEncoding
	return fmt.Sprintf("$argon2id$v=%d$m=%d,t=%d,p=%d$%s$%s", argon2.Version, argonMemory, argonTime, argonThreads,
		b64.EncodeToString(salt), b64.EncodeToString(key)), nil
}

// checkPassword is the check every password check uses, in a hashing slot;
// tests count its calls.
var checkPassword = verifyHash

// verifyHash reports whether password matches an argon2id hash, outside the
// bound: callers hold a slot.
func verifyHash(hash, password string) bool {
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

// ValidatePassword returns a message when a new password is too weak: too
// short, all blank, or one of the passwords every guessing list starts with.
// Long pass phrases are welcome.
func ValidatePassword(password string) string {
	if len(password) < MinPasswordLength {
		return fmt.Sprintf("Use at least %d characters.", MinPasswordLength)
	}
	if len(password) > maxPasswordBytes {
		return fmt.Sprintf("Use at most %d characters.", maxPasswordBytes)
	}
	if strings.TrimSpace(password) == "" {
		return "A password of spaces alone is too easy to guess."
	}
	if commonPasswords[strings.ToLower(password)] {
		return "This password is on every guessing list; choose another (a few unrelated words make a strong one)."
	}
	return ""
}

// commonPasswords are passwords of the minimum length or longer that lead
// every published guessing list.
var commonPasswords = func() map[string]bool {
	m := map[string]bool{}
	for _, p := range []string{
		"1234567890", "12345678910", "123456789012", "0123456789", "0987654321", "1111111111", "0000000000",
		"1q2w3e4r5t", "1qaz2wsx3edc", "qwertyuiop", "qwerty1234", "qwerty12345", "qwertyuiop1", "asdfghjkl1",
		"password12", "password123", "password1234", "passw0rd123", "iloveyou12", "letmein123", "welcome123",
		"abc1234567", "abcd123456", "1234567890a", "a123456789", "zaq12wsxcde", "football12", "baseball12",
		"starwars12", "sunshine12", "princess12", "dragon1234", "monkey1234", "trustno1234", "superman12",
		"administrator", "changeme123", "airside123", "airside1234", "1234qwer!@#$", "!qaz2wsx#edc",
	} {
		m[p] = true
	}
	return m
}()

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

// Store is what the account service needs from storage.
type Store interface {
	FindUserByEmail(ctx context.Context, email string) (*User, error)
	FindPrincipal(ctx context.Context, userID int64) (*Principal, error)
	// ReserveLoginAttempt counts one attempt against a subject unless the
	// policy holds it back, atomically: it returns how long to wait (0 when
	// the attempt was reserved).
	ReserveLoginAttempt(ctx context.Context, subject string, policy ThrottlePolicy) (time.Duration, error)
	// RefundLoginAttempt gives back one reserved attempt (a success).
	RefundLoginAttempt(ctx context.Context, subject string) error
	// LoginAttempts is how many attempts a subject made in its current
	// window (0 when the window has passed).
	LoginAttempts(ctx context.Context, subject string, policy ThrottlePolicy) (int64, error)
	// ClearLoginThrottle forgets a subject's attempts.
	ClearLoginThrottle(ctx context.Context, subject string) error
	FindLoginThrottles(ctx context.Context) ([]Throttle, error)
	RememberDevice(ctx context.Context, userID int64, tokenHash string) error
	IsKnownDevice(ctx context.Context, userID int64, tokenHash string) (bool, error)
	DeleteUserSessions(ctx context.Context, userID int64) (int64, error)
	RecordAudit(ctx context.Context, actorID *int64, action, subjectType string, subjectID int64, after map[string]any) error
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

// Login is one login attempt: who it claims to be, from where, and the
// device cookie the browser sent (if any).
type Login struct {
	Email, Password string
	Addr            string
	DeviceToken     string
}

// LoggedIn is a successful login: the principal, and the device token to
// set (a new one when the browser had none known for this user).
type LoggedIn struct {
	Principal   *Principal
	DeviceToken string
}

// Authenticate checks a login. The attempt is reserved against the account
// (or the known device it comes from) and the address before the password
// is checked, so parallel guesses cannot outrun the throttle; an unknown
// address is checked against a dummy hash, so it takes as long as a known
// one; at most one hash per core runs at once.
func (s *Service) Authenticate(ctx context.Context, in Login) (*LoggedIn, error) {
	email := strings.ToLower(strings.TrimSpace(in.Email))
	if textcheck.Problem(email, 254) != "" || textcheck.Problem(in.Addr, 100) != "" || len(in.Password) > maxPasswordBytes {
		return nil, ErrBadCredentials // not an address any account has; nothing to look up
	}
	user, err := s.Store.FindUserByEmail(ctx, email)
	if err != nil && apperr.Code(err) != apperr.ENOTFOUND {
		return nil, fmt.Errorf("authenticate: %w", err)
	}
	accountKey := "account:" + email
	if user != nil && in.DeviceToken != "" {
		known, err := s.Store.IsKnownDevice(ctx, user.ID, HashToken(in.DeviceToken))
		if err != nil {
			return nil, fmt.Errorf("authenticate: %w", err)
		}
		if known { // failures others caused on the account do not hold this browser back
			accountKey = "device:" + HashToken(in.DeviceToken)
		}
	}
	addrKey := "addr:" + in.Addr
	knownDevice := strings.HasPrefix(accountKey, "device:")
	reservations := []struct {
		key    string
		policy ThrottlePolicy
	}{{accountKey, AccountThrottle}, {addrKey, AddressThrottle}}
	if knownDevice {
		// A browser that has logged in to this account before is held back
		// only by its own failures: others failing from the same address
		// (an office, a proxy, an attacker inventing e-mails) must not lock
		// it out. The address throttle slows unknown devices.
		reservations = reservations[:1]
	}
	for _, r := range reservations {
		wait, err := s.Store.ReserveLoginAttempt(ctx, r.key, r.policy)
		if err != nil {
			return nil, fmt.Errorf("authenticate: %w", err)
		}
		if wait > 0 {
			s.audit(ctx, user, "login.throttle", map[string]any{"subject": r.key, "waitSeconds": int(wait.Seconds())})
			return nil, ErrThrottled(wait)
		}
	}
	release, err := globalHashSlots.acquire(ctx)
	if err != nil {
		return nil, err
	}
	hash := dummyHash()
	if user != nil {
		hash = user.PasswordHash
	}
	ok := checkPassword(hash, in.Password) && user != nil
	release()
	if !ok {
		s.audit(ctx, user, "login.fail", map[string]any{"addr": in.Addr})
		// Warn before the waits start. Unknown addresses are counted the
		// same way, so the warning tells nothing about which accounts exist.
		n, err := s.Store.LoginAttempts(ctx, accountKey, AccountThrottle)
		if err != nil {
			return nil, fmt.Errorf("authenticate: %w", err)
		}
		return nil, badCredentials(AccountThrottle.Free - int(n))
	}
	if err := s.Store.ClearLoginThrottle(ctx, accountKey); err != nil {
		return nil, fmt.Errorf("authenticate: %w", err)
	}
	if !knownDevice {
		if err := s.Store.RefundLoginAttempt(ctx, addrKey); err != nil {
			return nil, fmt.Errorf("authenticate: %w", err)
		}
	}
	p, err := s.Store.FindPrincipal(ctx, user.ID)
	if err != nil {
		return nil, err
	}
	out := &LoggedIn{Principal: p, DeviceToken: in.DeviceToken}
	if !knownDevice {
		token, hash, err := NewToken()
		if err != nil {
			return nil, err
		}
		if err := s.Store.RememberDevice(ctx, user.ID, hash); err != nil {
			return nil, fmt.Errorf("authenticate: %w", err)
		}
		out.DeviceToken = token
	}
	s.audit(ctx, user, "login", map[string]any{"addr": in.Addr})
	return out, nil
}

// badCredentials is ErrBadCredentials, with a warning once at most two
// attempts are left before each further one must wait.
func badCredentials(left int) error {
	switch {
	case left > 2:
		return ErrBadCredentials
	case left > 0:
		return apperr.Errorf(apperr.EUNAUTHORIZED, "%s After %d more wrong %s, each further attempt waits longer "+
			"(1 s, 2 s, 4 s ... up to 15 minutes). An administrator can clear the wait.", ErrBadCredentials.Message, left, plural(left, "attempt", "attempts"))
	default:
		return apperr.Errorf(apperr.EUNAUTHORIZED, "%s Each further attempt now waits longer (1 s, 2 s, 4 s ... up to 15 minutes). "+
			"An administrator can clear the wait.", ErrBadCredentials.Message)
	}
}

func plural(n int, one, many string) string {
	if n == 1 {
		return one
	}
	return many
}

// maxPasswordBytes bounds what is hashed at all.
const maxPasswordBytes = 1024

// audit records a login event about user (nil: no such account, which is
// not recorded: there is no subject to file it under).
func (s *Service) audit(ctx context.Context, user *User, action string, after map[string]any) {
	if user == nil {
		return
	}
	// An audit failure must not turn a refused login into a 500, nor let a
	// failed write block a good login; the store logs none of the password.
	_ = s.Store.RecordAudit(ctx, &user.ID, action, "user", user.ID, after)
}

// Throttles lists the subjects being held back now (gateway admins only).
func (s *Service) Throttles(ctx context.Context, p *Principal) ([]Throttle, error) {
	if !p.IsAdmin() {
		return nil, apperr.Errorf(apperr.EFORBIDDEN, "Only gateway admins see login throttles.")
	}
	return s.Store.FindLoginThrottles(ctx)
}

// ClearThrottle lets a held-back subject try again at once (gateway admins
// only, audited).
func (s *Service) ClearThrottle(ctx context.Context, p *Principal, subject string) error {
	if !p.IsAdmin() {
		return apperr.Errorf(apperr.EFORBIDDEN, "Only gateway admins clear login throttles.")
	}
	if err := s.Store.ClearLoginThrottle(ctx, subject); err != nil {
		return err
	}
	return s.Store.RecordAudit(ctx, &p.User.ID, "throttle.clear", "user", p.User.ID, map[string]any{"subject": subject})
}

// LogOutEverywhere ends every session of p's, on every device.
func (s *Service) LogOutEverywhere(ctx context.Context, p *Principal) (int64, error) {
	n, err := s.Store.DeleteUserSessions(ctx, p.User.ID)
	if err != nil {
		return 0, err
	}
	return n, s.Store.RecordAudit(ctx, &p.User.ID, "logout.everywhere", "user", p.User.ID, map[string]any{"sessions": n})
}

// LoggedOut records a logout (the session itself is ended by the caller).
func (s *Service) LoggedOut(ctx context.Context, p *Principal) {
	s.audit(ctx, &p.User, "logout", nil)
}

// WithinCarrier is p acting for one carrier only: its membership there and
// no staff powers (what a carrier's automation acts as: its API tokens,
// its feed). p itself is not changed.
func WithinCarrier(p *Principal, carrierID int64) *Principal {
	acting := *p
	acting.User.Staff = StaffNone
	acting.Memberships = nil
	for _, m := range p.Memberships {
		if m.CarrierID == carrierID {
			acting.Memberships = append(acting.Memberships, m)
		}
	}
	return &acting
}
