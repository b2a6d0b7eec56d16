package alerting

import (
	"context"
	"time"

	"github.com/airside/airside/internal/account"
	"github.com/airside/airside/internal/apperr"
	"github.com/airside/airside/internal/workflow"
)

// TuningStore is what a carrier's rules and mutes need from storage.
type TuningStore interface {
	CarrierAlertRules(ctx context.Context, carrierID int64) (CarrierRules, error)
	SetAlertRules(ctx context.Context, actorID, carrierID int64, rules CarrierRules) error
	CarrierMutes(ctx context.Context, carrierID int64, now time.Time) ([]Mute, error)
	MuteAlerts(ctx context.Context, actorID, carrierID, listingID int64, kind Kind, until time.Time) error
	Unmute(ctx context.Context, actorID, carrierID, muteID int64) error
}

// Tuning lets a carrier's people read its alert rules and mutes, and its
// admins change them.
type Tuning struct {
	Store TuningStore
	Now   func() time.Time
}

// RuleForm is one rule's fields as a form posts them.
type RuleForm struct {
	On, OpenAfter, CloseAfter, Threshold string
}

func authorizeTuning(p *account.Principal, carrierID int64, manage bool) error {
	if !workflow.CanFileFor(p, carrierID) {
		return apperr.Errorf(apperr.ENOTFOUND, "Carrier not found.")
	}
	if manage && !workflow.CanManageListings(p, carrierID) {
		return apperr.Errorf(apperr.EFORBIDDEN, "Only the carrier's admins change its alert rules and mutes.")
	}
	return nil
}

// Rules are the carrier's settings of every rule.
func (t *Tuning) Rules(ctx context.Context, p *account.Principal, carrierID int64) (CarrierRules, error) {
	if err := authorizeTuning(p, carrierID, false); err != nil {
		return nil, err
	}
	return t.Store.CarrierAlertRules(ctx, carrierID)
}

// SetRules checks every rule's fields and saves them all, or none: a bad
// field is named (EINVALID) and nothing changes.
func (t *Tuning) SetRules(ctx context.Context, p *account.Principal, carrierID int64, form map[Kind]RuleForm) error {
	if err := authorizeTuning(p, carrierID, true); err != nil {
		return err
	}
	rules, errs := CarrierRules{}, map[string]string{}
	for _, k := range Kinds {
		f, ok := form[k]
		if !ok {
			continue
		}
		s, bad := ParseSetting(k, f.On, f.OpenAfter, f.CloseAfter, f.Threshold)
		for field, msg := range bad {
			errs[field] = msg
		}
		rules[k] = s
	}
	if len(errs) > 0 {
		return apperr.Invalid(errs)
	}
	return t.Store.SetAlertRules(ctx, p.User.ID, carrierID, rules)
}

// Mutes are the carrier's mutes in force.
func (t *Tuning) Mutes(ctx context.Context, p *account.Principal, carrierID int64) ([]Mute, error) {
	if err := authorizeTuning(p, carrierID, false); err != nil {
		return nil, err
	}
	return t.Store.CarrierMutes(ctx, carrierID, t.Now())
}

// Mute silences a listing's alerts of kind ("" for every kind) for one of
// MuteDurations, and returns until when.
func (t *Tuning) Mute(ctx context.Context, p *account.Principal, carrierID, listingID int64, kind, duration string) (time.Time, error) {
	if err := authorizeTuning(p, carrierID, true); err != nil {
		return time.Time{}, err
	}
	k, err := KindOf(kind)
	if err != nil {
		return time.Time{}, err
	}
	span, err := MuteFor(duration)
	if err != nil {
		return time.Time{}, err
	}
	until := t.Now().UTC().Add(span).Truncate(time.Minute)
	return until, t.Store.MuteAlerts(ctx, p.User.ID, carrierID, listingID, k, until)
}

// Unmute ends a mute now.
func (t *Tuning) Unmute(ctx context.Context, p *account.Principal, carrierID, muteID int64) error {
	if err := authorizeTuning(p, carrierID, true); err != nil {
		return err
	}
	return t.Store.Unmute(ctx, p.User.ID, carrierID, muteID)
}
