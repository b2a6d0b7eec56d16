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

// SetListingPriority sets a listing's routing priority (gateway staff only;
// 10000 basis points is the default priority 1, 0 or below takes it off every
// ballot). It changes routing, so it raises the catalogue revision.
func (s *Store) SetListingPriority(ctx context.Context, actorID, listingID, priorityBP int64) error {
	return s.tx(ctx, func(tx *gorm.DB, now time.Time) error {
		var l listingRow
		if err := tx.First(&l, listingID).Error; err != nil {
			return notFound(err, "Listing")
		}
		if l.PriorityBP == priorityBP {
			return nil
		}
		if err := tx.Model(&listingRow{}).Where("id = ?", l.ID).Updates(map[string]any{"priority_bp": priorityBP, "updated_at": now}).Error; err != nil {
			return err
		}
		if _, err := bumpRevision(tx, now, l.ID, fmt.Sprintf("priority of listing %d", l.ID)); err != nil {
			return err
		}
		return appendAudit(tx, now, auditEvent{ActorID: &actorID, CarrierID: &l.CarrierID, Action: "listing.priority",
			SubjectType: "listing", SubjectID: l.ID, Before: map[string]any{"priorityBp": l.PriorityBP}, After: map[string]any{"priorityBp": priorityBP}})
	})
}

// DelistListing takes a listing out of the catalogue for good (gateway
// staff only). A filing in flight is withdrawn with it; the carrier is told.
func (s *Store) DelistListing(ctx context.Context, actorID, listingID int64, reason string) error {
	return s.tx(ctx, func(tx *gorm.DB, now time.Time) error {
		var l listingRow
		if err := tx.First(&l, listingID).Error; err != nil {
			return notFound(err, "Listing")
		}
		if l.Status == string(catalogue.StatusDelisted) {
			return apperr.Errorf(apperr.ECONFLICT, "The listing is already delisted.")
		}
		if err := tx.Model(&listingRow{}).Where("id = ?", l.ID).Updates(map[string]any{"status": string(catalogue.StatusDelisted), "updated_at": now}).Error; err != nil {
			return err
		}
		var open []filingRow
		if err := tx.Where("listing_id = ? AND state IN ?", l.ID, append(workflow.InFlightStates, workflow.Draft)).Find(&open).Error; err != nil {
			return err
		}
		for _, f := range open { // each withdrawal audited, like one the carrier makes
			res := tx.Model(&filingRow{}).Where("id = ? AND state = ?", f.ID, f.State).
				Updates(map[string]any{"state": string(workflow.Withdrawn), "updated_at": now, "lock_version": f.LockVersion + 1})
			if res.Error != nil {
				return res.Error
			}
			if err := appendAudit(tx, now, auditEvent{ActorID: &actorID, CarrierID: &l.CarrierID, Action: "filing.withdraw",
				SubjectType: "filing", SubjectID: f.ID, Before: map[string]any{"state": f.State},
				After: map[string]any{"state": workflow.Withdrawn, "reason": "listing delisted"}}); err != nil {
				return err
			}
		}
		if _, err := bumpRevision(tx, now, l.ID, fmt.Sprintf("delisted listing %d", l.ID)); err != nil {
			return err
		}
		if err := appendAudit(tx, now, auditEvent{ActorID: &actorID, CarrierID: &l.CarrierID, Action: "listing.delist",
			SubjectType: "listing", SubjectID: l.ID, Before: map[string]any{"status": l.Status},
			After: map[string]any{"status": catalogue.StatusDelisted, "reason": reason}}); err != nil {
			return err
		}
		return notifyCarrier(tx, now, l.CarrierID, nil, workflow.NoticeDelisted(l.ID, reason))
	})
}

// pausedNow is the update that pauses a listing: its status, and when and
// with which fare in force, so a resume with that fare can skip review.
func pausedNow(now time.Time, fareID *int64) map[string]any {
	return map[string]any{"status": string(catalogue.StatusPaused), "updated_at": now, "paused_at": now, "paused_fare_id": fareID}
}

// ListingPause is when a listing was last paused and the fare then in force
// (nil when it never was, or had no fare).
func (s *Store) ListingPause(ctx context.Context, listingID int64) (*time.Time, *int64, error) {
	var row struct {
		PausedAt     *time.Time
		PausedFareID *int64
	}
	if err := s.read(ctx).Table("listings").Select("paused_at, paused_fare_id").Where("id = ?", listingID).Scan(&row).Error; err != nil {
		return nil, nil, fmt.Errorf("listing pause: %w", err)
	}
	if row.PausedAt != nil {
		at := row.PausedAt.UTC()
		row.PausedAt = &at
	}
	return row.PausedAt, row.PausedFareID, nil
}

// ResumeListing puts a paused listing back in service at once, published
// (a new catalogue revision) and audited with why no review was needed;
// only while its fare is still the one in force when it was paused.
func (s *Store) ResumeListing(ctx context.Context, actorID, listingID int64, why string) error {
	return s.tx(ctx, func(tx *gorm.DB, now time.Time) error {
		var l listingRow
		if err := tx.First(&l, listingID).Error; err != nil {
			return notFound(err, "Listing")
		}
		res := tx.Model(&listingRow{}).Where("id = ? AND status = ? AND paused_fare_id = published_fare_id", l.ID, string(catalogue.StatusPaused)).
			Updates(map[string]any{"status": string(catalogue.StatusInService), "updated_at": now})
		if res.Error != nil {
			return res.Error
		}
		if res.RowsAffected != 1 {
			return apperr.Errorf(apperr.ECONFLICT, "This listing is no longer paused with the fare it was paused with; file the resume for review.")
		}
		if _, err := bumpRevision(tx, now, l.ID, fmt.Sprintf("resumed listing %d", l.ID)); err != nil {
			return err
		}
		return appendAudit(tx, now, auditEvent{ActorID: &actorID, CarrierID: &l.CarrierID, Action: "listing.resume",
			SubjectType: "listing", SubjectID: l.ID, Before: map[string]any{"status": l.Status},
			After: map[string]any{"status": catalogue.StatusInService, "review": why}})
	})
}

// PauseListing takes a listing in service out of routing at once: its
// status becomes paused and a new catalogue revision is published (gateways
// stop routing to it at their next read), audited with the reason.
func (s *Store) PauseListing(ctx context.Context, actorID, listingID int64, reason string) error {
	return s.tx(ctx, func(tx *gorm.DB, now time.Time) error {
		var l listingRow
		if err := tx.First(&l, listingID).Error; err != nil {
			return notFound(err, "Listing")
		}
		res := tx.Model(&listingRow{}).Where("id = ? AND status = ?", l.ID, string(catalogue.StatusInService)).
			Updates(pausedNow(now, l.PublishedFareID))
		if res.Error != nil {
			return res.Error
		}
		if res.RowsAffected != 1 {
			return apperr.Errorf(apperr.ECONFLICT, "Only a listing in service can be paused; this one is %s.", catalogue.ListingStatus(l.Status).Label())
		}
		if _, err := bumpRevision(tx, now, l.ID, fmt.Sprintf("paused listing %d", l.ID)); err != nil {
			return err
		}
		return appendAudit(tx, now, auditEvent{ActorID: &actorID, CarrierID: &l.CarrierID, Action: "listing.pause",
			SubjectType: "listing", SubjectID: l.ID, Before: map[string]any{"status": l.Status},
			After: map[string]any{"status": catalogue.StatusPaused, "reason": reason}})
	})
}
