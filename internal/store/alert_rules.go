package store

import (
	"context"
	"errors"
	"fmt"
	"time"

	"gorm.io/gorm"
	"gorm.io/gorm/clause"

	"github.com/airside/airside/internal/alerting"
	"github.com/airside/airside/internal/apperr"
)

type alertConditionRow struct {
	ListingID int64  `gorm:"primaryKey"`
	Kind      string `gorm:"primaryKey"`
	Holds     bool
	Since     time.Time
}

func (alertConditionRow) TableName() string { return "alert_conditions" }

type alertRuleRow struct {
	CarrierID         int64  `gorm:"primaryKey"`
	Kind              string `gorm:"primaryKey"`
	Enabled           bool
	OpenAfterSeconds  int64
	CloseAfterSeconds int64
	Threshold         float64
	UpdatedBy         *int64
	UpdatedAt         time.Time
}

func (alertRuleRow) TableName() string { return "alert_rules" }

type alertMuteRow struct {
	ID        int64 `gorm:"primaryKey"`
	CarrierID int64
	ListingID int64
	Kind      string
	UntilAt   time.Time
	CreatedBy *int64
	CreatedAt time.Time
}

func (alertMuteRow) TableName() string { return "alert_mutes" }

// ResolvedSince lists the alerts resolved at or after since.
func (s *Store) ResolvedSince(ctx context.Context, since time.Time) ([]alerting.Alert, error) {
	var rows []alertRow
	if err := s.read(ctx).Where("resolved_at >= ?", since.UTC()).Order("id").Find(&rows).Error; err != nil {
		return nil, fmt.Errorf("alerts resolved since %s: %w", since, err)
	}
	out := make([]alerting.Alert, len(rows))
	for i, r := range rows {
		out[i] = r.domain("")
	}
	return out, nil
}

// ReopenAlert folds a condition that came back into the alert that had
// resolved: open again, one more flap, the new words; the carrier is told
// (inbox and webhook) when message is not empty. It reports whether this
// call reopened it: not when another process did, or opened a new one.
func (s *Store) ReopenAlert(ctx context.Context, a alerting.Alert, detail, message string) (bool, error) {
	reopened := false
	err := s.tx(ctx, func(tx *gorm.DB, now time.Time) error {
		var already int64
		if err := tx.Model(&alertRow{}).Where("listing_id = ? AND kind = ? AND resolved_at IS NULL", a.ListingID, string(a.Kind)).
			Count(&already).Error; err != nil || already > 0 {
			return err
		}
		res := tx.Model(&alertRow{}).Where("id = ? AND resolved_at IS NOT NULL", a.ID).
			Updates(map[string]any{"resolved_at": nil, "flaps": gorm.Expr("flaps + 1"), "reopened_at": now, "detail": detail})
		if res.Error != nil || res.RowsAffected == 0 {
			return res.Error
		}
		reopened = true
		if message == "" {
			return nil
		}
		if err := notifyCarrier(tx, now, a.CarrierID, nil, message); err != nil {
			return err
		}
		return queueDelivery(tx, now, a.CarrierID, webhookEvent{Event: alerting.EventAlertOpened, At: now, AlertID: a.ID, Listing: a.Listing,
			Kind: string(a.Kind), Detail: detail, Flapping: true})
	})
	if errors.Is(err, gorm.ErrDuplicatedKey) {
		return false, nil // another process opened one meanwhile: the one-open index kept it single
	}
	if err != nil {
		return false, fmt.Errorf("reopen alert %d: %w", a.ID, err)
	}
	return reopened, nil
}

// AlertConditions are where every rule stands for every listing.
func (s *Store) AlertConditions(ctx context.Context) ([]alerting.Condition, error) {
	var rows []alertConditionRow
	if err := s.read(ctx).Find(&rows).Error; err != nil {
		return nil, fmt.Errorf("alert conditions: %w", err)
	}
	out := make([]alerting.Condition, len(rows))
	for i, r := range rows {
		out[i] = alerting.Condition{ListingID: r.ListingID, Kind: alerting.Kind(r.Kind), Holds: r.Holds, Since: r.Since.UTC()}
	}
	return out, nil
}

// SaveAlertConditions stores the conditions that changed at this pass.
func (s *Store) SaveAlertConditions(ctx context.Context, changed []alerting.Condition) error {
	if len(changed) == 0 {
		return nil
	}
	rows := make([]alertConditionRow, len(changed))
	for i, c := range changed {
		rows[i] = alertConditionRow{ListingID: c.ListingID, Kind: string(c.Kind), Holds: c.Holds, Since: c.Since.UTC()}
	}
	err := s.db.WithContext(ctx).Clauses(clause.OnConflict{
		Columns:   []clause.Column{{Name: "listing_id"}, {Name: "kind"}},
		DoUpdates: clause.AssignmentColumns([]string{"holds", "since"}),
	}).CreateInBatches(rows, 500).Error
	if err != nil {
		return fmt.Errorf("save alert conditions: %w", err)
	}
	return nil
}

func (r alertRuleRow) setting() alerting.Setting {
	return alerting.Setting{On: r.Enabled, OpenAfter: time.Duration(r.OpenAfterSeconds) * time.Second,
		CloseAfter: time.Duration(r.CloseAfterSeconds) * time.Second, Threshold: r.Threshold}
}

// AlertRules are every carrier's own settings (a rule not listed takes its
// default).
func (s *Store) AlertRules(ctx context.Context) (map[int64]alerting.CarrierRules, error) {
	var rows []alertRuleRow
	if err := s.read(ctx).Find(&rows).Error; err != nil {
		return nil, fmt.Errorf("alert rules: %w", err)
	}
	out := map[int64]alerting.CarrierRules{}
	for _, r := range rows {
		if out[r.CarrierID] == nil {
			out[r.CarrierID] = alerting.CarrierRules{}
		}
		out[r.CarrierID][alerting.Kind(r.Kind)] = r.setting()
	}
	return out, nil
}

// CarrierAlertRules are one carrier's settings.
func (s *Store) CarrierAlertRules(ctx context.Context, carrierID int64) (alerting.CarrierRules, error) {
	var rows []alertRuleRow
	if err := s.read(ctx).Where("carrier_id = ?", carrierID).Find(&rows).Error; err != nil {
		return nil, fmt.Errorf("alert rules of carrier %d: %w", carrierID, err)
	}
	out := alerting.CarrierRules{}
	for _, r := range rows {
		out[alerting.Kind(r.Kind)] = r.setting()
	}
	return out, nil
}

// SetAlertRules replaces a carrier's settings of the rules given, audited
// with what changed; a rule set back to its default keeps no row.
func (s *Store) SetAlertRules(ctx context.Context, actorID, carrierID int64, rules alerting.CarrierRules) error {
	return s.tx(ctx, func(tx *gorm.DB, now time.Time) error {
		var old []alertRuleRow
		if err := tx.Where("carrier_id = ?", carrierID).Find(&old).Error; err != nil {
			return err
		}
		before := alerting.CarrierRules{}
		for _, r := range old {
			before[alerting.Kind(r.Kind)] = r.setting()
		}
		changedBefore, changedAfter := map[string]any{}, map[string]any{}
		for kind, set := range rules {
			if before.Of(kind) == set {
				continue
			}
			changedBefore[string(kind)], changedAfter[string(kind)] = settingAudit(before.Of(kind)), settingAudit(set)
			if err := tx.Where("carrier_id = ? AND kind = ?", carrierID, string(kind)).Delete(&alertRuleRow{}).Error; err != nil {
				return err
			}
			if set == alerting.DefaultSetting(kind) {
				continue
			}
			row := alertRuleRow{CarrierID: carrierID, Kind: string(kind), Enabled: set.On, OpenAfterSeconds: int64(set.OpenAfter / time.Second),
				CloseAfterSeconds: int64(set.CloseAfter / time.Second), Threshold: set.Threshold, UpdatedBy: &actorID, UpdatedAt: now}
			if err := tx.Create(&row).Error; err != nil {
				return err
			}
		}
		if len(changedAfter) == 0 {
			return nil
		}
		return appendAudit(tx, now, auditEvent{ActorID: &actorID, CarrierID: &carrierID, Action: "alert.rules", SubjectType: "carrier",
			SubjectID: carrierID, Before: changedBefore, After: changedAfter})
	})
}

func settingAudit(s alerting.Setting) map[string]any {
	return map[string]any{"on": s.On, "openAfterMinutes": int64(s.OpenAfter / time.Minute), "closeAfterMinutes": int64(s.CloseAfter / time.Minute),
		"threshold": s.Threshold}
}

// ActiveMutes are the mutes still in force at now.
func (s *Store) ActiveMutes(ctx context.Context, now time.Time) ([]alerting.Mute, error) {
	return s.mutes(s.read(ctx).Where("alert_mutes.until_at > ?", now.UTC()))
}

// CarrierMutes are a carrier's mutes in force at now, with the listing's
// name and who set each.
func (s *Store) CarrierMutes(ctx context.Context, carrierID int64, now time.Time) ([]alerting.Mute, error) {
	return s.mutes(s.read(ctx).Where("alert_mutes.carrier_id = ? AND alert_mutes.until_at > ?", carrierID, now.UTC()))
}

func (s *Store) mutes(q *gorm.DB) ([]alerting.Mute, error) {
	var rows []struct {
		Row   alertMuteRow `gorm:"embedded"`
		Name  string
		Email *string
	}
	err := q.Table("alert_mutes").Select("alert_mutes.*, models.name AS name, users.email").
		Joins("JOIN listings ON listings.id = alert_mutes.listing_id").Joins("JOIN carriers ON carriers.id = listings.carrier_id").
		Joins("JOIN models ON models.id = listings.model_id").Joins("LEFT JOIN users ON users.id = alert_mutes.created_by").
		Order("alert_mutes.until_at, alert_mutes.id").Scan(&rows).Error
	if err != nil {
		return nil, fmt.Errorf("alert mutes: %w", err)
	}
	out := make([]alerting.Mute, len(rows))
	for i, r := range rows {
		out[i] = alerting.Mute{ID: r.Row.ID, CarrierID: r.Row.CarrierID, ListingID: r.Row.ListingID, Listing: r.Name, Kind: alerting.Kind(r.Row.Kind),
			Until: r.Row.UntilAt.UTC()}
		if r.Email != nil {
			out[i].By = *r.Email
		}
	}
	return out, nil
}

// MuteAlerts silences a carrier's listing's alerts of kind ("" for every
// kind) until until, audited. A listing of another carrier is not found.
func (s *Store) MuteAlerts(ctx context.Context, actorID, carrierID, listingID int64, kind alerting.Kind, until time.Time) error {
	return s.tx(ctx, func(tx *gorm.DB, now time.Time) error {
		var n int64
		if err := tx.Table("listings").Where("id = ? AND carrier_id = ?", listingID, carrierID).Count(&n).Error; err != nil {
			return err
		}
		if n == 0 {
			return apperr.Invalid(map[string]string{"listing": "Choose one of your listings."})
		}
		row := alertMuteRow{CarrierID: carrierID, ListingID: listingID, Kind: string(kind), UntilAt: until.UTC(), CreatedBy: &actorID, CreatedAt: now}
		if err := tx.Create(&row).Error; err != nil {
			return err
		}
		return appendAudit(tx, now, auditEvent{ActorID: &actorID, CarrierID: &carrierID, Action: "alert.mute", SubjectType: "listing",
			SubjectID: listingID, After: map[string]any{"kind": string(kind), "until": until.UTC()}})
	})
}

// Unmute ends a carrier's mute now, audited (ENOTFOUND: not the carrier's,
// or over).
func (s *Store) Unmute(ctx context.Context, actorID, carrierID, muteID int64) error {
	return s.tx(ctx, func(tx *gorm.DB, now time.Time) error {
		var row alertMuteRow
		if err := tx.Where("id = ? AND carrier_id = ? AND until_at > ?", muteID, carrierID, now).Limit(1).Find(&row).Error; err != nil {
			return err
		}
		if row.ID == 0 {
			return apperr.Errorf(apperr.ENOTFOUND, "No such mute in force.")
		}
		if err := tx.Model(&alertMuteRow{}).Where("id = ?", muteID).Update("until_at", now).Error; err != nil {
			return err
		}
		return appendAudit(tx, now, auditEvent{ActorID: &actorID, CarrierID: &carrierID, Action: "alert.unmute", SubjectType: "listing",
			SubjectID: row.ListingID, Before: map[string]any{"kind": row.Kind, "until": row.UntilAt.UTC()}})
	})
}

// alertsActiveSince is the alerts open now, or opened, reopened or resolved
// at or after since.
func alertsActiveSince(q *gorm.DB, since time.Time) *gorm.DB {
	return q.Where("alerts.resolved_at IS NULL OR alerts.resolved_at >= ? OR alerts.opened_at >= ? OR alerts.reopened_at >= ?", since, since, since)
}

// CarriersWithAlerts are the carriers a digest has something to say to.
func (s *Store) CarriersWithAlerts(ctx context.Context, since time.Time) ([]int64, error) {
	var ids []int64
	if err := alertsActiveSince(s.read(ctx).Table("alerts"), since.UTC()).Distinct().Order("carrier_id").Pluck("carrier_id", &ids).Error; err != nil {
		return nil, fmt.Errorf("carriers with alerts: %w", err)
	}
	return ids, nil
}

// AlertsSince are a carrier's alerts for its digest, with listing names,
// oldest first.
func (s *Store) AlertsSince(ctx context.Context, carrierID int64, since time.Time) ([]alerting.Alert, error) {
	var rows []struct {
		Row  alertRow `gorm:"embedded"`
		Name string
	}
	q := s.read(ctx).Table("alerts").Select("alerts.*, carriers.slug || '/' || models.slug AS name").
		Joins("JOIN listings ON listings.id = alerts.listing_id").Joins("JOIN carriers ON carriers.id = listings.carrier_id").
		Joins("JOIN models ON models.id = listings.model_id").Where("alerts.carrier_id = ?", carrierID)
	if err := alertsActiveSince(q, since.UTC()).Order("alerts.opened_at, alerts.id").Scan(&rows).Error; err != nil {
		return nil, fmt.Errorf("alerts of carrier %d since %s: %w", carrierID, since, err)
	}
	out := make([]alerting.Alert, len(rows))
	for i := range rows {
		out[i] = rows[i].Row.domain(rows[i].Name)
	}
	return out, nil
}

type alertDigestRow struct {
	CarrierID int64  `gorm:"primaryKey"`
	Day       string `gorm:"primaryKey"`
	SentAt    time.Time
}

func (alertDigestRow) TableName() string { return "alert_digests" }

// ClaimDigest records a carrier's digest of day as sent; false when a
// process already claimed it.
func (s *Store) ClaimDigest(ctx context.Context, carrierID int64, day string) (bool, error) {
	res := s.db.WithContext(ctx).Clauses(clause.OnConflict{DoNothing: true}).
		Create(&alertDigestRow{CarrierID: carrierID, Day: day, SentAt: s.Now().UTC()})
	if res.Error != nil {
		return false, fmt.Errorf("claim the digest of carrier %d for %s: %w", carrierID, day, res.Error)
	}
	return res.RowsAffected == 1, nil
}
