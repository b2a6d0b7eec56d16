package account

import (
	"context"
	"fmt"

	"github.com/airside/airside/internal/apperr"
)

// AlertEmailMode is how a person gets their carriers' alerts by e-mail.
type AlertEmailMode string

// The modes: each alert as it opens, flaps and recovers; one digest a day;
// none (alerts still reach the inbox and the carrier's webhook).
const (
	AlertEmailEach   AlertEmailMode = "each"
	AlertEmailDigest AlertEmailMode = "digest"
	AlertEmailOff    AlertEmailMode = "off"
)

// AlertEmailModes are the modes in the order the account page offers them.
var AlertEmailModes = []AlertEmailMode{AlertEmailEach, AlertEmailDigest, AlertEmailOff}

// ParseAlertEmailMode reads a form's choice.
func ParseAlertEmailMode(v string) (AlertEmailMode, error) {
	for _, m := range AlertEmailModes {
		if string(m) == v {
			return m, nil
		}
	}
	return "", apperr.Invalid(map[string]string{"alert_email": "Choose one: each alert, a daily digest, or none."})
}

// AlertEmailCandidate is one active person of a carrier, with their role
// there and their own choice about alert e-mails (nil: none made).
type AlertEmailCandidate struct {
	Email  string
	Role   CarrierRole
	Choice *AlertEmailMode
}

// AlertEmailModeOf is how alerts are e-mailed to a person: their choice
// when they made one, else the daily digest for the carrier's admins (who
// answer for its listings: a summary, not a message per alert, which was
// noise) and none for members.
func AlertEmailModeOf(role CarrierRole, choice *AlertEmailMode) AlertEmailMode {
	if choice != nil {
		return *choice
	}
	if role == CarrierAdmin {
		return AlertEmailDigest
	}
	return AlertEmailOff
}

// AlertEmailStore is what alert e-mail settings need from storage.
type AlertEmailStore interface {
	AlertEmailCandidates(ctx context.Context, carrierID int64) ([]AlertEmailCandidate, error)
	AlertEmailChoice(ctx context.Context, userID int64) (*AlertEmailMode, error)
	SetAlertEmail(ctx context.Context, userID int64, mode AlertEmailMode) error
}

// AlertEmails decides who gets a carrier's alerts by e-mail, and how.
type AlertEmails struct{ Store AlertEmailStore }

// Recipients are the addresses each of a carrier's alerts goes to.
func (a *AlertEmails) Recipients(ctx context.Context, carrierID int64) ([]string, error) {
	return a.recipients(ctx, carrierID, AlertEmailEach)
}

// DigestRecipients are the addresses a carrier's daily digest goes to.
func (a *AlertEmails) DigestRecipients(ctx context.Context, carrierID int64) ([]string, error) {
	return a.recipients(ctx, carrierID, AlertEmailDigest)
}

func (a *AlertEmails) recipients(ctx context.Context, carrierID int64, mode AlertEmailMode) ([]string, error) {
	people, err := a.Store.AlertEmailCandidates(ctx, carrierID)
	if err != nil {
		return nil, fmt.Errorf("alert e-mail recipients: %w", err)
	}
	var out []string
	for _, c := range people {
		if AlertEmailModeOf(c.Role, c.Choice) == mode {
			out = append(out, c.Email)
		}
	}
	return out, nil
}

// Mode is how p gets alerts by e-mail, and whether it is their own
// choice: without one, the mode of their most answerable role (an admin of
// one carrier and a member of another gets the admin's default).
func (a *AlertEmails) Mode(ctx context.Context, p *Principal) (AlertEmailMode, bool, error) {
	choice, err := a.Store.AlertEmailChoice(ctx, p.User.ID)
	if err != nil {
		return "", false, err
	}
	if choice != nil {
		return *choice, true, nil
	}
	mode := AlertEmailOff
	for _, m := range p.Memberships {
		if AlertEmailModeOf(m.Role, nil) == AlertEmailDigest {
			mode = AlertEmailDigest
		}
	}
	return mode, false, nil
}

// Set records p's choice; only people of a carrier get alerts at all.
func (a *AlertEmails) Set(ctx context.Context, p *Principal, mode AlertEmailMode) error {
	if len(p.Memberships) == 0 {
		return apperr.Errorf(apperr.EFORBIDDEN, "Alert e-mails are for carriers' people; you belong to no carrier.")
	}
	if _, err := ParseAlertEmailMode(string(mode)); err != nil {
		return err
	}
	return a.Store.SetAlertEmail(ctx, p.User.ID, mode)
}
