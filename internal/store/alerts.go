package store

import (
	"context"
	"encoding/json"
	"fmt"
	"time"

	"gorm.io/gorm"
	"gorm.io/gorm/clause"

	"github.com/airside/airside/internal/alerting"
	"github.com/airside/airside/internal/apperr"
	"github.com/airside/airside/internal/catalogue"
)

type alertRow struct {
	ID         int64 `gorm:"primaryKey"`
	CarrierID  int64
	ListingID  int64
	Kind       string
	Detail     string
	OpenedAt   time.Time
	ResolvedAt *time.Time
	Flaps      int64
	ReopenedAt *time.Time
}

func (alertRow) TableName() string { return "alerts" }

type webhookRow struct {
	CarrierID    int64 `gorm:"primaryKey"`
	URL          string
	SecretSealed string
	// The secret a rotation replaced, still signing until its time.
	PreviousSecretSealed *string
	PreviousSecretUntil  *time.Time
	UpdatedBy            *int64
	UpdatedAt            time.Time
}

func (webhookRow) TableName() string { return "webhooks" }

type deliveryRow struct {
	ID            int64 `gorm:"primaryKey"`
	CarrierID     int64
	Event         string
	Body          string
	State         string
	Attempts      int64
	NextAttemptAt time.Time
	LastStatus    int64
	LastError     string
	ClaimedUntil  *time.Time
	CreatedAt     time.Time
	DeliveredAt   *time.Time
}

func (deliveryRow) TableName() string { return "webhook_deliveries" }

type rankRow struct {
	ListingID         int64  `gorm:"primaryKey"`
	Scenario          string `gorm:"primaryKey"`
	RankNow           int64
	OwnRevision       int64
	BaselineRank      int64
	BaselineCatalogue int64
	UpdatedAt         time.Time
}

func (rankRow) TableName() string { return "listing_ranks" }

// AlertSignals computes, for every listing in service, what the alert rules
// judge at now: uptime over the window, minutes at the cap in the last hour,
// and the share of the model over the last 7 days and the 7 before.
func (s *Store) AlertSignals(ctx context.Context, now time.Time, window time.Duration) ([]alerting.Listing, map[int64]alerting.Signals, error) {
	var listings []alerting.Listing
	out := map[int64]alerting.Signals{}
	err := s.readTx(ctx, func(tx *gorm.DB) error {
		if err := tx.Table("listings").Select("listings.id, listings.carrier_id, listings.model_id, carriers.slug || '/' || models.slug AS name").
			Joins("JOIN carriers ON carriers.id = listings.carrier_id").Joins("JOIN models ON models.id = listings.model_id").
			Where("listings.status = ?", string(catalogue.StatusInService)).Order("listings.id").Scan(&listings).Error; err != nil {
			return err
		}
		type span struct {
			ListingID                       int64
			Requests, Failures, RateLimited int64
			Successes, TTFTMsSum            int64
		}
		sums := "listing_id, SUM(requests - client_errors) AS requests, SUM(errors) AS failures, SUM(rate_limited) AS rate_limited, " +
			"SUM(requests - errors - client_errors) AS successes, SUM(ttft_ms_sum) AS ttft_ms_sum"
		var win, prev []span
		if err := tx.Table("metric_buckets").Select(sums).
			Where("minute > ? AND minute <= ?", now.Add(-window).UTC(), now.UTC()).Group("listing_id").Scan(&win).Error; err != nil {
			return err
		}
		if err := tx.Table("metric_buckets").Select(sums).
			Where("minute > ? AND minute <= ?", now.Add(-window-time.Hour).UTC(), now.Add(-window).UTC()).Group("listing_id").Scan(&prev).Error; err != nil {
			return err
		}
		var capped []struct {
			ListingID int64
			Minutes   int
		}
		if err := tx.Table("metric_buckets").Select("listing_id, COUNT(*) AS minutes").
			Where("minute > ? AND minute <= ? AND capped > 0", now.Add(-time.Hour).UTC(), now.UTC()).Group("listing_id").Scan(&capped).Error; err != nil {
			return err
		}
		split := now.Add(-7 * 24 * time.Hour).UTC()
		var weeks []struct {
			ListingID         int64
			NowReq, BeforeReq int64
		}
		if err := tx.Table("metric_hourly").Select("listing_id, SUM(CASE WHEN hour >= ? THEN requests ELSE 0 END) AS now_req, "+
			"SUM(CASE WHEN hour < ? THEN requests ELSE 0 END) AS before_req", split, split).
			Where("hour >= ? AND hour <= ?", now.Add(-14*24*time.Hour).UTC(), now.UTC()).Group("listing_id").Scan(&weeks).Error; err != nil {
			return err
		}
		model := map[int64]int64{}
		for _, l := range listings {
			model[l.ID] = l.ModelID
		}
		modelNow, modelBefore := map[int64]int64{}, map[int64]int64{}
		byListing := map[int64][2]int64{}
		for _, w := range weeks {
			modelNow[model[w.ListingID]] += w.NowReq
			modelBefore[model[w.ListingID]] += w.BeforeReq
			byListing[w.ListingID] = [2]int64{w.NowReq, w.BeforeReq}
		}
		for _, l := range listings {
			sig := alerting.Signals{ShareNow: -1, ShareBefore: -1}
			if n := modelNow[l.ModelID]; n > 0 {
				sig.ShareNow = float64(byListing[l.ID][0]) / float64(n)
			}
			if n := modelBefore[l.ModelID]; n > 0 {
				sig.ShareBefore = float64(byListing[l.ID][1]) / float64(n)
			}
			out[l.ID] = sig
		}
		modelWin := map[int64]span{}
		for _, w := range win {
			if sig, ok := out[w.ListingID]; ok {
				sig.Requests, sig.Failures, sig.RateLimited = w.Requests, w.Failures, w.RateLimited
				sig.Successes, sig.TTFTMsSum = w.Successes, w.TTFTMsSum
				out[w.ListingID] = sig
			}
			m := modelWin[model[w.ListingID]]
			m.Requests, m.Failures, m.RateLimited = m.Requests+w.Requests, m.Failures+w.Failures, m.RateLimited+w.RateLimited
			modelWin[model[w.ListingID]] = m
		}
		for _, p := range prev {
			if sig, ok := out[p.ListingID]; ok {
				sig.PrevSuccesses, sig.PrevTTFTMsSum = p.Successes, p.TTFTMsSum
				out[p.ListingID] = sig
			}
		}
		// Peers: the model's other listings, together.
		for id, sig := range out {
			m := modelWin[model[id]]
			sig.PeerRequests, sig.PeerFailures, sig.PeerRateLimited = m.Requests-sig.Requests, m.Failures-sig.Failures, m.RateLimited-sig.RateLimited
			out[id] = sig
		}
		for _, c := range capped {
			if sig, ok := out[c.ListingID]; ok {
				sig.CappedMinutes = c.Minutes
				out[c.ListingID] = sig
			}
		}
		// The gateways' breakers: the last opening and closing reported in
		// the last day.
		rows, err := tx.Table("metric_buckets").Select("listing_id, minute, breaker_openings, breaker_closings").
			Where("minute > ? AND minute <= ? AND (breaker_openings > 0 OR breaker_closings > 0)", now.Add(-24*time.Hour).UTC(), now.UTC()).Rows()
		if err != nil {
			return err
		}
		defer rows.Close()
		for rows.Next() {
			var id, opened, closed int64
			var minute time.Time
			if err := rows.Scan(&id, &minute, &opened, &closed); err != nil {
				return err
			}
			sig, ok := out[id]
			if !ok {
				continue
			}
			minute = minute.UTC()
			if opened > 0 && (sig.BreakerOpened == nil || minute.After(*sig.BreakerOpened)) {
				sig.BreakerOpened = &minute
			}
			if closed > 0 && (sig.BreakerClosed == nil || minute.After(*sig.BreakerClosed)) {
				sig.BreakerClosed = &minute
			}
			out[id] = sig
		}
		return rows.Err()
	})
	if err != nil {
		return nil, nil, fmt.Errorf("alert signals: %w", err)
	}
	return listings, out, nil
}

// OpenAlerts lists every alert not resolved.
func (s *Store) OpenAlerts(ctx context.Context) ([]alerting.Alert, error) {
	var rows []alertRow
	if err := s.read(ctx).Where("resolved_at IS NULL").Order("id").Find(&rows).Error; err != nil {
		return nil, fmt.Errorf("open alerts: %w", err)
	}
	out := make([]alerting.Alert, len(rows))
	for i, r := range rows {
		out[i] = r.domain("")
	}
	return out, nil
}

func (r *alertRow) domain(name string) alerting.Alert {
	return alerting.Alert{ID: r.ID, CarrierID: r.CarrierID, ListingID: r.ListingID, Listing: name, Kind: alerting.Kind(r.Kind),
		Detail: r.Detail, OpenedAt: r.OpenedAt.UTC(), ResolvedAt: utcPtr(r.ResolvedAt), Flaps: r.Flaps, ReopenedAt: utcPtr(r.ReopenedAt)}
}

func utcPtr(t *time.Time) *time.Time {
	if t == nil {
		return nil
	}
	u := t.UTC()
	return &u
}

// webhookEvent is the body a webhook receives: an alert's (alertId,
// listing, kind), a test's, or a feed's (feed: its URL).
type webhookEvent struct {
	Event   string    `json:"event"`
	At      time.Time `json:"at"`
	AlertID int64     `json:"alertId"`
	Listing string    `json:"listing"`
	Kind    string    `json:"kind"`
	Detail  string    `json:"detail"`
	Feed    string    `json:"feed,omitempty"`
	// Flapping is set on an alert.opened that reopens an alert that
	// resolved within the hour (the same alertId).
	Flapping bool `json:"flapping,omitempty"`
}

// OpenAlert records an alert unless one of its kind is already open for
// the listing (several processes may judge at once: the one-open index lets
// one of them in), tells the carrier, and queues the webhook event, in one
// transaction. It reports whether it opened one.
func (s *Store) OpenAlert(ctx context.Context, a alerting.Alert, message string) (bool, error) {
	opened := false
	err := s.tx(ctx, func(tx *gorm.DB, now time.Time) error {
		row := alertRow{CarrierID: a.CarrierID, ListingID: a.ListingID, Kind: string(a.Kind), Detail: a.Detail, OpenedAt: now}
		res := tx.Clauses(clause.OnConflict{DoNothing: true}).Create(&row)
		if res.Error != nil {
			return res.Error
		}
		if res.RowsAffected == 0 {
			return nil
		}
		opened = true
		if err := notifyCarrier(tx, now, a.CarrierID, nil, message); err != nil {
			return err
		}
		return queueDelivery(tx, now, a.CarrierID, webhookEvent{Event: alerting.EventAlertOpened, At: now, AlertID: row.ID, Listing: a.Listing,
			Kind: string(a.Kind), Detail: a.Detail})
	})
	if err != nil {
		return false, fmt.Errorf("open alert: %w", err)
	}
	return opened, nil
}

// ResolveAlert closes an open alert, tells the carrier and queues the
// webhook event (unless message is empty); it reports whether this call
// closed it.
func (s *Store) ResolveAlert(ctx context.Context, a alerting.Alert, message, detail string) (bool, error) {
	resolved := false
	err := s.tx(ctx, func(tx *gorm.DB, now time.Time) error {
		res := tx.Model(&alertRow{}).Where("id = ? AND resolved_at IS NULL", a.ID).Update("resolved_at", now)
		if res.Error != nil || res.RowsAffected == 0 {
			return res.Error
		}
		resolved = true
		if message == "" { // an event alert closes silently
			return nil
		}
		if err := notifyCarrier(tx, now, a.CarrierID, nil, message); err != nil {
			return err
		}
		return queueDelivery(tx, now, a.CarrierID, webhookEvent{Event: alerting.EventAlertResolved, At: now, AlertID: a.ID, Listing: a.Listing,
			Kind: string(a.Kind), Detail: detail})
	})
	if err != nil {
		return false, fmt.Errorf("resolve alert %d: %w", a.ID, err)
	}
	return resolved, nil
}

// FindAlerts lists a carrier's alerts, open first, newest first.
func (s *Store) FindAlerts(ctx context.Context, carrierID int64, limit int) ([]alerting.Alert, error) {
	var rows []struct {
		Row       alertRow `gorm:"embedded"`
		Name      string
		ModelName string
	}
	err := s.read(ctx).Table("alerts").Select("alerts.*, carriers.slug || '/' || models.slug AS name, models.name AS model_name").
		Joins("JOIN listings ON listings.id = alerts.listing_id").Joins("JOIN carriers ON carriers.id = listings.carrier_id").
		Joins("JOIN models ON models.id = listings.model_id").Where("alerts.carrier_id = ?", carrierID).
		Order("CASE WHEN alerts.resolved_at IS NULL THEN 0 ELSE 1 END, alerts.opened_at DESC, alerts.id DESC").Limit(limit).Scan(&rows).Error
	if err != nil {
		return nil, fmt.Errorf("find alerts: %w", err)
	}
	out := make([]alerting.Alert, len(rows))
	for i := range rows {
		out[i] = rows[i].Row.domain(rows[i].Name)
		out[i].ModelName = rows[i].ModelName
	}
	return out, nil
}

// ListingRanks returns the ranks last seen: listing -> scenario -> state.
func (s *Store) ListingRanks(ctx context.Context) (map[int64]map[string]alerting.RankState, error) {
	var rows []rankRow
	if err := s.read(ctx).Find(&rows).Error; err != nil {
		return nil, fmt.Errorf("listing ranks: %w", err)
	}
	out := map[int64]map[string]alerting.RankState{}
	for _, r := range rows {
		if out[r.ListingID] == nil {
			out[r.ListingID] = map[string]alerting.RankState{}
		}
		out[r.ListingID][r.Scenario] = alerting.RankState{Rank: r.RankNow, OwnRevision: r.OwnRevision, Baseline: r.BaselineRank,
			BaselineCatalogue: r.BaselineCatalogue}
	}
	return out, nil
}

// SaveListingRanks stores the ranks seen now.
func (s *Store) SaveListingRanks(ctx context.Context, ranks map[int64]map[string]alerting.RankState) error {
	var rows []rankRow
	now := s.Now().UTC()
	for id, byScenario := range ranks {
		for sc, r := range byScenario {
			rows = append(rows, rankRow{ListingID: id, Scenario: sc, RankNow: r.Rank, OwnRevision: r.OwnRevision, BaselineRank: r.Baseline,
				BaselineCatalogue: r.BaselineCatalogue, UpdatedAt: now})
		}
	}
	if len(rows) == 0 {
		return nil
	}
	return s.db.WithContext(ctx).Clauses(clause.OnConflict{
		Columns:   []clause.Column{{Name: "listing_id"}, {Name: "scenario"}},
		DoUpdates: clause.AssignmentColumns([]string{"rank_now", "own_revision", "baseline_rank", "baseline_catalogue", "updated_at"}),
	}).CreateInBatches(rows, 500).Error
}

// queueDelivery queues an event for the carrier's webhook, if it has one.
func queueDelivery(tx *gorm.DB, now time.Time, carrierID int64, event webhookEvent) error {
	var hook webhookRow
	if err := tx.Where("carrier_id = ?", carrierID).Limit(1).Find(&hook).Error; err != nil {
		return err
	}
	if hook.CarrierID == 0 {
		return nil
	}
	body, err := json.Marshal(event)
	if err != nil {
		return err
	}
	return tx.Create(&deliveryRow{CarrierID: carrierID, Event: event.Event, Body: string(body), State: string(alerting.Pending),
		NextAttemptAt: now, CreatedAt: now}).Error
}

// SetWebhook sets (or replaces) a carrier's webhook, audited without its
// secret.
func (s *Store) SetWebhook(ctx context.Context, actorID, carrierID int64, url, secretSealed string, keepPrevious time.Duration) error {
	return s.tx(ctx, func(tx *gorm.DB, now time.Time) error {
		var old webhookRow
		if err := tx.Where("carrier_id = ?", carrierID).Limit(1).Find(&old).Error; err != nil {
			return err
		}
		row := webhookRow{CarrierID: carrierID, URL: url, SecretSealed: secretSealed, UpdatedBy: &actorID, UpdatedAt: now}
		keepOld(&row, old, now, keepPrevious)
		if err := tx.Clauses(clause.OnConflict{Columns: []clause.Column{{Name: "carrier_id"}},
			DoUpdates: clause.AssignmentColumns([]string{"url", "secret_sealed", "previous_secret_sealed", "previous_secret_until", "updated_by", "updated_at"})}).
			Create(&row).Error; err != nil {
			return err
		}
		return appendAudit(tx, now, auditEvent{ActorID: &actorID, CarrierID: &carrierID, Action: "webhook.set", SubjectType: "carrier",
			SubjectID: carrierID, After: map[string]any{"url": url, "previous_secret_until": row.PreviousSecretUntil}})
	})
}

// keepOld keeps the secret a new one replaces signing for keepPrevious, so
// a receiver switches secrets without refusing a delivery.
func keepOld(row *webhookRow, old webhookRow, now time.Time, keepPrevious time.Duration) {
	if old.CarrierID == 0 || keepPrevious <= 0 {
		return
	}
	until := now.Add(keepPrevious)
	row.PreviousSecretSealed, row.PreviousSecretUntil = &old.SecretSealed, &until
}

// RotateWebhookSecret gives a carrier's webhook a new signing secret and
// keeps the old one signing for keepPrevious (ECONFLICT with no webhook).
func (s *Store) RotateWebhookSecret(ctx context.Context, actorID, carrierID int64, secretSealed string, keepPrevious time.Duration) error {
	return s.tx(ctx, func(tx *gorm.DB, now time.Time) error {
		var old webhookRow
		if err := tx.Where("carrier_id = ?", carrierID).Limit(1).Find(&old).Error; err != nil {
			return err
		}
		if old.CarrierID == 0 {
			return apperr.Errorf(apperr.ECONFLICT, "Set a webhook address first.")
		}
		row := webhookRow{SecretSealed: secretSealed, UpdatedBy: &actorID, UpdatedAt: now}
		keepOld(&row, old, now, keepPrevious)
		if err := tx.Model(&webhookRow{}).Where("carrier_id = ?", carrierID).Updates(map[string]any{
			"secret_sealed": row.SecretSealed, "previous_secret_sealed": row.PreviousSecretSealed,
			"previous_secret_until": row.PreviousSecretUntil, "updated_by": actorID, "updated_at": now}).Error; err != nil {
			return err
		}
		return appendAudit(tx, now, auditEvent{ActorID: &actorID, CarrierID: &carrierID, Action: "webhook.rotate", SubjectType: "carrier",
			SubjectID: carrierID, After: map[string]any{"previous_secret_until": row.PreviousSecretUntil}})
	})
}

// DeleteWebhook removes a carrier's webhook; its pending deliveries fail.
func (s *Store) DeleteWebhook(ctx context.Context, actorID, carrierID int64) error {
	return s.tx(ctx, func(tx *gorm.DB, now time.Time) error {
		if err := tx.Where("carrier_id = ?", carrierID).Delete(&webhookRow{}).Error; err != nil {
			return err
		}
		if err := tx.Model(&deliveryRow{}).Where("carrier_id = ? AND state = ?", carrierID, string(alerting.Pending)).
			Updates(map[string]any{"state": string(alerting.Failed), "last_error": "the webhook was removed"}).Error; err != nil {
			return err
		}
		return appendAudit(tx, now, auditEvent{ActorID: &actorID, CarrierID: &carrierID, Action: "webhook.delete", SubjectType: "carrier", SubjectID: carrierID})
	})
}

// FindWebhook returns a carrier's webhook (never its secret), or nil.
func (s *Store) FindWebhook(ctx context.Context, carrierID int64) (*alerting.Webhook, error) {
	var row webhookRow
	if err := s.read(ctx).Where("carrier_id = ?", carrierID).Limit(1).Find(&row).Error; err != nil {
		return nil, fmt.Errorf("find webhook: %w", err)
	}
	if row.CarrierID == 0 {
		return nil, nil
	}
	hook := &alerting.Webhook{CarrierID: row.CarrierID, URL: row.URL, UpdatedAt: row.UpdatedAt.UTC()}
	if until := row.PreviousSecretUntil; until != nil && until.After(s.Now()) {
		u := until.UTC()
		hook.PreviousSecretUntil = &u
	}
	return hook, nil
}

// QueueTestEvent queues a test event for a carrier's webhook (ECONFLICT
// when it has none).
func (s *Store) QueueTestEvent(ctx context.Context, carrierID int64) error {
	return s.tx(ctx, func(tx *gorm.DB, now time.Time) error {
		var n int64
		if err := tx.Model(&webhookRow{}).Where("carrier_id = ?", carrierID).Count(&n).Error; err != nil {
			return err
		}
		if n == 0 {
			return apperr.Errorf(apperr.ECONFLICT, "Set a webhook address first.")
		}
		return queueDelivery(tx, now, carrierID, webhookEvent{Event: alerting.EventTest, At: now, Detail: "A test event from Airside."})
	})
}

func (r *deliveryRow) domain() alerting.Delivery {
	return alerting.Delivery{ID: r.ID, CarrierID: r.CarrierID, Event: r.Event, Body: r.Body, State: alerting.DeliveryState(r.State),
		Attempts: r.Attempts, NextAttemptAt: r.NextAttemptAt.UTC(), LastStatus: int(r.LastStatus), LastError: r.LastError,
		CreatedAt: r.CreatedAt.UTC(), DeliveredAt: r.DeliveredAt}
}

// FindDeliveries lists a carrier's latest webhook deliveries.
func (s *Store) FindDeliveries(ctx context.Context, carrierID int64, limit int) ([]alerting.Delivery, error) {
	var rows []deliveryRow
	if err := s.read(ctx).Where("carrier_id = ?", carrierID).Order("id DESC").Limit(limit).Find(&rows).Error; err != nil {
		return nil, fmt.Errorf("find deliveries: %w", err)
	}
	out := make([]alerting.Delivery, len(rows))
	for i := range rows {
		out[i] = rows[i].domain()
	}
	return out, nil
}

// ClaimDeliveries leases up to limit due deliveries for lease: a delivery
// is attempted by one process at a time.
func (s *Store) ClaimDeliveries(ctx context.Context, lease time.Duration, limit int) ([]alerting.Delivery, error) {
	var out []alerting.Delivery
	err := s.tx(ctx, func(tx *gorm.DB, now time.Time) error {
		q := tx.Where("state = ? AND next_attempt_at <= ? AND (claimed_until IS NULL OR claimed_until < ?)", string(alerting.Pending), now, now).
			Order("next_attempt_at, id").Limit(limit)
		if s.dialect == Postgres {
			q = q.Clauses(clause.Locking{Strength: "UPDATE", Options: "SKIP LOCKED"})
		}
		var rows []deliveryRow
		if err := q.Find(&rows).Error; err != nil {
			return err
		}
		for _, r := range rows {
			res := tx.Model(&deliveryRow{}).Where("id = ? AND (claimed_until IS NULL OR claimed_until < ?)", r.ID, now).
				Update("claimed_until", now.Add(lease))
			if res.Error != nil {
				return res.Error
			}
			if res.RowsAffected != 1 {
				continue
			}
			var hook webhookRow
			if err := tx.Where("carrier_id = ?", r.CarrierID).Limit(1).Find(&hook).Error; err != nil {
				return err
			}
			d := r.domain()
			d.URL, d.SecretSealed = hook.URL, hook.SecretSealed
			if hook.PreviousSecretSealed != nil && hook.PreviousSecretUntil != nil && hook.PreviousSecretUntil.After(now) {
				d.PreviousSecretSealed = *hook.PreviousSecretSealed
			}
			out = append(out, d)
		}
		return nil
	})
	if err != nil {
		return nil, fmt.Errorf("claim deliveries: %w", err)
	}
	return out, nil
}

// FinishDelivery records an attempt: delivered, or retried at next (a zero
// next gives up: failed).
func (s *Store) FinishDelivery(ctx context.Context, id int64, delivered bool, status int, errText string, next time.Time) error {
	return s.tx(ctx, func(tx *gorm.DB, now time.Time) error {
		updates := map[string]any{"attempts": gorm.Expr("attempts + 1"), "last_status": status, "last_error": errText, "claimed_until": nil}
		switch {
		case delivered:
			updates["state"], updates["delivered_at"] = string(alerting.Delivered), now
		case next.IsZero():
			updates["state"] = string(alerting.Failed)
		default:
			updates["next_attempt_at"] = next
		}
		return tx.Model(&deliveryRow{}).Where("id = ?", id).Updates(updates).Error
	})
}

// ResendDelivery puts a carrier's failed (or waiting) delivery back in the
// queue to be tried now, as the same message (the same webhook-id, so a
// receiver that did handle it drops it), audited. A delivered one, or
// another carrier's, is not found.
func (s *Store) ResendDelivery(ctx context.Context, actorID, carrierID, deliveryID int64) error {
	return s.tx(ctx, func(tx *gorm.DB, now time.Time) error {
		res := tx.Model(&deliveryRow{}).
			Where("id = ? AND carrier_id = ? AND state <> ?", deliveryID, carrierID, string(alerting.Delivered)).
			Updates(map[string]any{"state": string(alerting.Pending), "next_attempt_at": now, "claimed_until": nil})
		if res.Error != nil {
			return res.Error
		}
		if res.RowsAffected != 1 {
			return apperr.Errorf(apperr.ENOTFOUND, "No such delivery waiting or failed.")
		}
		return appendAudit(tx, now, auditEvent{ActorID: &actorID, CarrierID: &carrierID, Action: "webhook.resend",
			SubjectType: "delivery", SubjectID: deliveryID})
	})
}
