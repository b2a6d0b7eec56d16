package store

import (
	"context"
	"fmt"
	"time"

	"gorm.io/gorm"

	"github.com/airside/airside/internal/account"
)

// AlertEmailCandidates are a carrier's active people with their role and
// their choice about alert e-mails; account.AlertEmails decides who gets
// them.
func (s *Store) AlertEmailCandidates(ctx context.Context, carrierID int64) ([]account.AlertEmailCandidate, error) {
	var rows []struct {
		Email          string
		Role           string
		AlertEmailMode *string
	}
	err := s.read(ctx).Table("users").Select("users.email, memberships.role, users.alert_email_mode").
		Joins("JOIN memberships ON memberships.user_id = users.id AND memberships.carrier_id = ?", carrierID).
		Where("users.deactivated_at IS NULL").Order("users.email").Scan(&rows).Error
	if err != nil {
		return nil, fmt.Errorf("alert e-mail candidates: %w", err)
	}
	out := make([]account.AlertEmailCandidate, len(rows))
	for i, r := range rows {
		out[i] = account.AlertEmailCandidate{Email: r.Email, Role: account.CarrierRole(r.Role), Choice: modePtr(r.AlertEmailMode)}
	}
	return out, nil
}

// AlertEmailChoice is a person's own choice (nil: the default for their
// role).
func (s *Store) AlertEmailChoice(ctx context.Context, userID int64) (*account.AlertEmailMode, error) {
	var row struct{ AlertEmailMode *string }
	if err := s.read(ctx).Table("users").Select("alert_email_mode").Where("id = ?", userID).Scan(&row).Error; err != nil {
		return nil, fmt.Errorf("alert e-mail choice: %w", err)
	}
	return modePtr(row.AlertEmailMode), nil
}

func modePtr(v *string) *account.AlertEmailMode {
	if v == nil {
		return nil
	}
	m := account.AlertEmailMode(*v)
	return &m
}

// SetAlertEmail records a person's choice, audited.
func (s *Store) SetAlertEmail(ctx context.Context, userID int64, mode account.AlertEmailMode) error {
	return s.tx(ctx, func(tx *gorm.DB, now time.Time) error {
		if err := tx.Table("users").Where("id = ?", userID).Update("alert_email_mode", string(mode)).Error; err != nil {
			return err
		}
		return appendAudit(tx, now, auditEvent{ActorID: &userID, Action: "user.alert_email", SubjectType: "user", SubjectID: userID,
			After: map[string]any{"alertEmail": string(mode)}})
	})
}
