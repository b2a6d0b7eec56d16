package account

import (
	"context"
	"fmt"

	"github.com/airside/airside/internal/apperr"
)

// AlertEmailCandidate is one active person of a carrier, with their role
// there and their own choice about alert e-mails (nil: none made).
type AlertEmailCandidate struct {
	Email  string
	Role   CarrierRole
	Choice *bool
}

// AlertEmailOn is whether alerts are e-mailed to a person: their choice
// when they made one, else on for the carrier's admins (who answer for its
// listings) and off for members.
func AlertEmailOn(role CarrierRole, choice *bool) bool {
	if choice != nil {
		return *choice
	}
	return role == CarrierAdmin
}

// AlertEmailStore is what alert e-mail settings need from storage.
type AlertEmailStore interface {
	AlertEmailCandidates(ctx context.Context, carrierID int64) ([]AlertEmailCandidate, error)
	AlertEmailChoice(ctx context.Context, userID int64) (*bool, error)
	SetAlertEmail(ctx context.Context, userID int64, on bool) error
}

// AlertEmails decides who gets a carrier's alerts by e-mail.
type AlertEmails struct{ Store AlertEmailStore }

// Recipients are the addresses a carrier's alerts go to.
func (a *AlertEmails) Recipients(ctx context.Context, carrierID int64) ([]string, error) {
	people, err := a.Store.AlertEmailCandidates(ctx, carrierID)
	if err != nil {
		return nil, fmt.Errorf("alert e-mail recipients: %w", err)
	}
	var out []string
	for _, c := range people {
		if AlertEmailOn(c.Role, c.Choice) {
			out = append(out, c.Email)
		}
	}
	return out, nil
}

// On is whether p gets alerts by e-mail: from any of their carriers where
// the answer is yes (an admin of one and a member of another with no choice
// made gets them from the first).
func (a *AlertEmails) On(ctx context.Context, p *Principal) (bool, error) {
	choice, err := a.Store.AlertEmailChoice(ctx, p.User.ID)
	if err != nil {
		return false, err
	}
	for _, m := range p.Memberships {
		if AlertEmailOn(m.Role, choice) {
			return true, nil
		}
	}
	return false, nil
}

// Set records p's choice; only people of a carrier get alerts at all.
func (a *AlertEmails) Set(ctx context.Context, p *Principal, on bool) error {
	if len(p.Memberships) == 0 {
		return apperr.Errorf(apperr.EFORBIDDEN, "Alert e-mails are for carriers' people; you belong to no carrier.")
	}
	return a.Store.SetAlertEmail(ctx, p.User.ID, on)
}
