package store

import (
	"context"
	"fmt"
	"time"

	"gorm.io/gorm"

	"github.com/airside/airside/internal/apperr"
	"github.com/airside/airside/internal/catalogue"
	"github.com/airside/airside/internal/workflow"
)

var _ workflow.MaintenanceStore = (*Store)(nil)

type maintenanceRow struct {
	ID            int64 `gorm:"primaryKey"`
	ListingID     int64
	StartsAt      time.Time
	EndsAt        time.Time
	Reason        string
	CreatedBy     *int64
	CreatedAt     time.Time
	CancelledAt   *time.Time
	StartedAt     *time.Time
	EndedAt       *time.Time
	PausedListing bool
	Outcome       string
}

func (maintenanceRow) TableName() string { return "maintenance_windows" }

// FindMaintenanceWindows lists windows, open ones first, then the newest.
func (s *Store) FindMaintenanceWindows(ctx context.Context, f workflow.MaintenanceFilter) ([]workflow.MaintenanceWindow, error) {
	var rows []struct {
		Row          maintenanceRow `gorm:"embedded"`
		CarrierID    int64
		CreatorEmail *string
	}
	q := s.read(ctx).Table("maintenance_windows").
		Select("maintenance_windows.*, listings.carrier_id, users.email AS creator_email").
		Joins("JOIN listings ON listings.id = maintenance_windows.listing_id").
		Joins("LEFT JOIN users ON users.id = maintenance_windows.created_by")
	if f.ListingID != 0 {
		q = q.Where("maintenance_windows.listing_id = ?", f.ListingID)
	}
	if f.CarrierIDs != nil {
		q = q.Where("listings.carrier_id IN ?", append(f.CarrierIDs, 0))
	}
	if f.OpenOnly || !f.DueAt.IsZero() {
		q = q.Where("maintenance_windows.ended_at IS NULL AND maintenance_windows.cancelled_at IS NULL")
	}
	if !f.DueAt.IsZero() {
		at := f.DueAt.UTC()
		q = q.Where("((maintenance_windows.started_at IS NULL AND maintenance_windows.starts_at <= ?) OR "+
			"(maintenance_windows.started_at IS NOT NULL AND maintenance_windows.ends_at <= ?))", at, at)
	}
	err := q.Order("CASE WHEN maintenance_windows.ended_at IS NULL AND maintenance_windows.cancelled_at IS NULL THEN 0 ELSE 1 END, " +
		"maintenance_windows.starts_at DESC, maintenance_windows.id DESC").Limit(200).Scan(&rows).Error
	if err != nil {
		return nil, fmt.Errorf("find maintenance windows: %w", err)
	}
	out := make([]workflow.MaintenanceWindow, len(rows))
	for i, x := range rows {
		r := x.Row
		w := workflow.MaintenanceWindow{ID: r.ID, ListingID: r.ListingID, CarrierID: x.CarrierID, StartsAt: r.StartsAt.UTC(),
			EndsAt: r.EndsAt.UTC(), Reason: r.Reason, CancelledAt: r.CancelledAt, StartedAt: r.StartedAt, EndedAt: r.EndedAt,
			PausedListing: r.PausedListing, Outcome: r.Outcome}
		if x.CreatorEmail != nil {
			w.CreatedBy = *x.CreatorEmail
		}
		out[i] = w
	}
	return out, nil
}

// CreateMaintenanceWindow plans a window, refusing one that overlaps an open
// window of the listing (checked under the listing's row, so two tabs cannot
// both pass).
func (s *Store) CreateMaintenanceWindow(ctx context.Context, actorID int64, w workflow.MaintenanceWindow) (int64, error) {
	row := maintenanceRow{ListingID: w.ListingID, StartsAt: w.StartsAt.UTC(), EndsAt: w.EndsAt.UTC(), Reason: w.Reason, CreatedBy: &actorID}
	err := s.tx(ctx, func(tx *gorm.DB, now time.Time) error {
		// Touching the listing serialises windows of one listing on both
		// databases (a row lock on PostgreSQL, the writer on SQLite).
		if err := tx.Model(&listingRow{}).Where("id = ?", w.ListingID).Update("updated_at", now).Error; err != nil {
			return err
		}
		var overlapping int64
		err := tx.Model(&maintenanceRow{}).Where("listing_id = ? AND ended_at IS NULL AND cancelled_at IS NULL AND starts_at < ? AND ends_at > ?",
			w.ListingID, row.EndsAt, row.StartsAt).Count(&overlapping).Error
		if err != nil {
			return err
		}
		if overlapping > 0 {
			return apperr.Errorf(apperr.ECONFLICT, "Another maintenance window of this listing overlaps these times: change or cancel it first.")
		}
		row.CreatedAt = now
		if err := tx.Create(&row).Error; err != nil {
			return err
		}
		return appendAudit(tx, now, auditEvent{ActorID: &actorID, CarrierID: &w.CarrierID, Action: "maintenance.schedule",
			SubjectType: "listing", SubjectID: w.ListingID,
			After: map[string]any{"window": row.ID, "startsAt": row.StartsAt, "endsAt": row.EndsAt, "reason": w.Reason}})
	})
	if err != nil {
		return 0, fmt.Errorf("schedule maintenance of listing %d: %w", w.ListingID, err)
	}
	return row.ID, nil
}

// CancelMaintenanceWindow calls off a window that has not started.
func (s *Store) CancelMaintenanceWindow(ctx context.Context, actorID, windowID int64) error {
	return s.tx(ctx, func(tx *gorm.DB, now time.Time) error {
		w, l, err := maintenanceWindow(tx, windowID)
		if err != nil {
			return err
		}
		res := tx.Model(&maintenanceRow{}).Where("id = ? AND started_at IS NULL AND cancelled_at IS NULL", windowID).Update("cancelled_at", now)
		if res.Error != nil {
			return res.Error
		}
		if res.RowsAffected != 1 {
			return apperr.Errorf(apperr.ECONFLICT, "This maintenance window has started or was cancelled meanwhile; reload the page.")
		}
		return appendAudit(tx, now, auditEvent{ActorID: &actorID, CarrierID: &l.CarrierID, Action: "maintenance.cancel",
			SubjectType: "listing", SubjectID: l.ID, After: map[string]any{"window": w.ID}})
	})
}

func maintenanceWindow(tx *gorm.DB, windowID int64) (*maintenanceRow, *listingRow, error) {
	var w maintenanceRow
	if err := tx.First(&w, windowID).Error; err != nil {
		return nil, nil, notFound(err, "Maintenance window")
	}
	var l listingRow
	if err := tx.First(&l, w.ListingID).Error; err != nil {
		return nil, nil, notFound(err, "Listing")
	}
	return &w, &l, nil
}

func modelName(tx *gorm.DB, modelID int64) (string, error) {
	var name string
	err := tx.Table("models").Select("name").Where("id = ?", modelID).Scan(&name).Error
	return name, err
}

// StartMaintenance records a window's start and takes its listing out of
// routing when it is in service (a new catalogue revision, as stop-now).
func (s *Store) StartMaintenance(ctx context.Context, windowID int64) error {
	return s.tx(ctx, func(tx *gorm.DB, now time.Time) error {
		w, l, err := maintenanceWindow(tx, windowID)
		if err != nil {
			return err
		}
		if w.StartedAt != nil || w.CancelledAt != nil {
			return nil // another process started it, or it was called off
		}
		res := tx.Model(&listingRow{}).Where("id = ? AND status = ?", l.ID, string(catalogue.StatusInService)).
			Updates(pausedNow(now, l.PublishedFareID))
		if res.Error != nil {
			return res.Error
		}
		paused := res.RowsAffected == 1
		outcome := ""
		if !paused {
			outcome = "found the listing " + catalogue.ListingStatus(l.Status).Label() + " at its start, so changed nothing"
		}
		if err := tx.Model(&maintenanceRow{}).Where("id = ?", w.ID).
			Updates(map[string]any{"started_at": now, "paused_listing": paused, "outcome": outcome}).Error; err != nil {
			return err
		}
		if !paused {
			return nil
		}
		if _, err := bumpRevision(tx, now, l.ID, fmt.Sprintf("maintenance of listing %d", l.ID)); err != nil {
			return err
		}
		if err := appendAudit(tx, now, auditEvent{CarrierID: &l.CarrierID, Action: "listing.maintenance_start", SubjectType: "listing",
			SubjectID: l.ID, Before: map[string]any{"status": l.Status},
			After: map[string]any{"status": catalogue.StatusPaused, "window": w.ID, "reason": w.Reason, "until": w.EndsAt}}); err != nil {
			return err
		}
		model, err := modelName(tx, l.ModelID)
		if err != nil {
			return err
		}
		return notifyCarrier(tx, now, l.CarrierID, nil, workflow.NoticeMaintenanceStarted(model, l.ID, w.Reason))
	})
}

// EndMaintenance records a window's end and, when resume is set and the
// window paused the listing (still paused), puts it back in service; actorID
// is who ended it early (nil: the scheduler, at its time).
func (s *Store) EndMaintenance(ctx context.Context, actorID *int64, windowID int64, resume bool, outcome string) error {
	return s.tx(ctx, func(tx *gorm.DB, now time.Time) error {
		w, l, err := maintenanceWindow(tx, windowID)
		if err != nil {
			return err
		}
		if w.EndedAt != nil || w.StartedAt == nil {
			return nil // ended by another process, or never started
		}
		back := false
		if resume && w.PausedListing {
			res := tx.Model(&listingRow{}).Where("id = ? AND status = ?", l.ID, string(catalogue.StatusPaused)).
				Updates(map[string]any{"status": string(catalogue.StatusInService), "updated_at": now})
			if res.Error != nil {
				return res.Error
			}
			back = res.RowsAffected == 1
			if !back {
				outcome += "; the listing was no longer paused, so it was left " + catalogue.ListingStatus(l.Status).Label()
			}
		}
		if w.Outcome != "" {
			outcome = w.Outcome + "; " + outcome
		}
		if err := tx.Model(&maintenanceRow{}).Where("id = ?", w.ID).
			Updates(map[string]any{"ended_at": now, "ends_at": minTime(w.EndsAt, now), "outcome": outcome}).Error; err != nil {
			return err
		}
		if back {
			if _, err := bumpRevision(tx, now, l.ID, fmt.Sprintf("maintenance of listing %d ended", l.ID)); err != nil {
				return err
			}
		}
		if err := appendAudit(tx, now, auditEvent{ActorID: actorID, CarrierID: &l.CarrierID, Action: "listing.maintenance_end", SubjectType: "listing",
			SubjectID: l.ID, After: map[string]any{"window": w.ID, "backInService": back, "outcome": outcome}}); err != nil {
			return err
		}
		if !w.PausedListing {
			return nil
		}
		model, err := modelName(tx, l.ModelID)
		if err != nil {
			return err
		}
		return notifyCarrier(tx, now, l.CarrierID, nil, workflow.NoticeMaintenanceEnded(model, l.ID, outcome, back))
	})
}

func minTime(a, b time.Time) time.Time {
	if a.Before(b) {
		return a
	}
	return b
}
