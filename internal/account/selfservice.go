package account

import (
	"context"
	"fmt"
	"strings"
	"time"

	"github.com/airside/airside/internal/apperr"
)

// Member is one person of a carrier, as its admins manage them.
type Member struct {
	UserID      int64
	Email, Name string
	Role        CarrierRole
}

// SelfStore is what account self-service needs from storage.
type SelfStore interface {
	SetPassword(ctx context.Context, actorID *int64, userID int64, hash, keepSessionHash string) error
	FindMembers(ctx context.Context, carrierID int64) ([]Member, error)
	CreateMemberInvite(ctx context.Context, actorID, carrierID int64, email string, role CarrierRole, tokenHash string, expires time.Time) error
	SetMemberRole(ctx context.Context, actorID, carrierID, userID int64, role CarrierRole) error
	RemoveMember(ctx context.Context, actorID, carrierID, userID int64) error
	SetUserActive(ctx context.Context, actorID, userID int64, active bool) error
	CreatePasswordReset(ctx context.Context, actorID, userID int64, tokenHash string, expires time.Time) error
	FindPasswordReset(ctx context.Context, tokenHash string) (string, error)
	UsePasswordReset(ctx context.Context, tokenHash, passwordHash string) error
	ReserveLoginAttempt(ctx context.Context, subject string, policy ThrottlePolicy) (time.Duration, error)
	ClearLoginThrottle(ctx context.Context, subject string) error
}

// ResetTTL is how long a reset link works.
const ResetTTL = 24 * time.Hour

// SelfService lets people manage their own account, carrier admins their
// carrier's people, and gateway admins anyone's access.
type SelfService struct {
	Store SelfStore
	Now   func() time.Time
}

// ChangePassword changes p's password after checking the current one; every
// other session of p ends (the one in use, keepSessionHash, stays). Checks
// of the current password are reserved per account and per session before
// they run, as logins are, so a stolen session cannot guess the password
// here faster than at the login form.
func (s *SelfService) ChangePassword(ctx context.Context, p *Principal, current, next, confirm, keepSessionHash string) error {
	subjects := []string{fmt.Sprintf("password:user:%d", p.User.ID), "password:session:" + keepSessionHash}
	for _, subject := range subjects {
		wait, err := s.Store.ReserveLoginAttempt(ctx, subject, PasswordChangeThrottle)
		if err != nil {
			return fmt.Errorf("change password: %w", err)
		}
		if wait > 0 {
			return ErrThrottled(wait)
		}
	}
	problems := map[string]string{}
	ok, err := VerifyPassword(ctx, p.User.PasswordHash, current)
	if err != nil {
		return err
	}
	if !ok {
		problems["current"] = "This is not your current password."
	} else {
		for _, subject := range subjects {
			if err := s.Store.ClearLoginThrottle(ctx, subject); err != nil {
				return fmt.Errorf("change password: %w", err)
			}
		}
	}
	if msg := ValidatePassword(next); msg != "" {
		problems["password"] = msg
	} else if next != confirm {
		problems["confirm"] = "The two new passwords differ."
	}
	if len(problems) > 0 {
		return apperr.Invalid(problems)
	}
	hash, err := HashPassword(ctx, next)
	if err != nil {
		return err
	}
	return s.Store.SetPassword(ctx, &p.User.ID, p.User.ID, hash, keepSessionHash)
}

// CanManagePeople reports whether p may invite, change and remove a
// carrier's people (its admins): the rule the people page's buttons follow.
func CanManagePeople(p *Principal, carrierID int64) bool { return p.RoleIn(carrierID) == CarrierAdmin }

func (s *SelfService) manage(p *Principal, carrierID int64) error {
	if p.RoleIn(carrierID) == "" {
		return apperr.Errorf(apperr.ENOTFOUND, "Carrier not found.")
	}
	if !CanManagePeople(p, carrierID) {
		return apperr.Errorf(apperr.EFORBIDDEN, "Only the carrier's admins manage its people.")
	}
	return nil
}

// Members lists a carrier's people for anyone of it.
func (s *SelfService) Members(ctx context.Context, p *Principal, carrierID int64) ([]Member, error) {
	if p.RoleIn(carrierID) == "" && !p.IsStaff() {
		return nil, apperr.Errorf(apperr.ENOTFOUND, "Carrier not found.")
	}
	return s.Store.FindMembers(ctx, carrierID)
}

// InviteMember makes a one-time sign-up link for a new person of the
// carrier; the token is returned once.
func (s *SelfService) InviteMember(ctx context.Context, p *Principal, carrierID int64, email string, role CarrierRole) (string, error) {
	if err := s.manage(p, carrierID); err != nil {
		return "", err
	}
	email = NormalizeEmail(email)
	problems := map[string]string{}
	if email == "" {
		problems["email"] = "Enter a valid email address."
	}
	if role != CarrierAdmin && role != CarrierMember {
		problems["role"] = "Choose admin or member."
	}
	if len(problems) > 0 {
		return "", apperr.Invalid(problems)
	}
	token, hash, err := NewToken()
	if err != nil {
		return "", err
	}
	return token, s.Store.CreateMemberInvite(ctx, p.User.ID, carrierID, email, role, hash, s.Now().Add(InviteTTL))
}

// SetRole changes a person's role in the carrier; the last admin stays one.
func (s *SelfService) SetRole(ctx context.Context, p *Principal, carrierID, userID int64, role CarrierRole) error {
	if err := s.manage(p, carrierID); err != nil {
		return err
	}
	if role != CarrierAdmin && role != CarrierMember {
		return apperr.Invalid(map[string]string{"role": "Choose admin or member."})
	}
	return s.Store.SetMemberRole(ctx, p.User.ID, carrierID, userID, role)
}

// Remove takes a person out of the carrier; the last admin cannot go.
func (s *SelfService) Remove(ctx context.Context, p *Principal, carrierID, userID int64) error {
	if err := s.manage(p, carrierID); err != nil {
		return err
	}
	return s.Store.RemoveMember(ctx, p.User.ID, carrierID, userID)
}

// SetActive deactivates or reactivates a user; gateway admins only, and
// never themselves.
func (s *SelfService) SetActive(ctx context.Context, p *Principal, userID int64, active bool) error {
	if !p.IsAdmin() {
		return apperr.Errorf(apperr.EFORBIDDEN, "Only gateway admins deactivate users.")
	}
	if userID == p.User.ID {
		return apperr.Errorf(apperr.ECONFLICT, "You cannot deactivate yourself.")
	}
	return s.Store.SetUserActive(ctx, p.User.ID, userID, active)
}

// IssueReset makes a one-time password reset link for a user (gateway
// admins only); the token is returned once.
func (s *SelfService) IssueReset(ctx context.Context, p *Principal, userID int64) (string, error) {
	if !p.IsAdmin() {
		return "", apperr.Errorf(apperr.EFORBIDDEN, "Only gateway admins issue reset links.")
	}
	token, hash, err := NewToken()
	if err != nil {
		return "", err
	}
	return token, s.Store.CreatePasswordReset(ctx, p.User.ID, userID, hash, s.Now().Add(ResetTTL))
}

// ResetEmail is whose password a reset link sets.
func (s *SelfService) ResetEmail(ctx context.Context, token string) (string, error) {
	return s.Store.FindPasswordReset(ctx, HashToken(token))
}

// Reset sets a new password with a reset link, once; every session of the
// user ends.
func (s *SelfService) Reset(ctx context.Context, token, next, confirm string) error {
	if msg := ValidatePassword(next); msg != "" {
		return apperr.Invalid(map[string]string{"password": msg})
	}
	if next != confirm {
		return apperr.Invalid(map[string]string{"confirm": "The two passwords differ."})
	}
	hash, err := HashPassword(ctx, next)
	if err != nil {
		return err
	}
	return s.Store.UsePasswordReset(ctx, HashToken(strings.TrimSpace(token)), hash)
}
