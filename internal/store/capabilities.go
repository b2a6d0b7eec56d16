package store

import (
	"context"
	"fmt"
	"time"

	"github.com/airside/airside/internal/workflow"
	"gorm.io/gorm"
	"gorm.io/gorm/clause"
)

type capabilityCheckRow struct {
	ListingID  int64  `gorm:"primaryKey"`
	Capability string `gorm:"primaryKey"`
	State      string
	Note       string
	CheckedBy  *int64
	UpdatedAt  time.Time
}

func (capabilityCheckRow) TableName() string { return "capability_checks" }

// FindCapabilityChecks maps a listing's capability names to their
// verification state ("verified" or "failed"); a flag not in the map has not
// been verified yet.
func (s *Store) FindCapabilityChecks(ctx context.Context, listingID int64) (map[string]string, error) {
	var rows []capabilityCheckRow
	if err := s.read(ctx).Where("listing_id = ?", listingID).Find(&rows).Error; err != nil {
		return nil, fmt.Errorf("find capability checks of listing %d: %w", listingID, err)
	}
	out := map[string]string{}
	for _, r := range rows {
		out[r.Capability] = r.State
	}
	return out, nil
}

// SetCapabilityCheck records a reviewer's verification of a declared
// capability ("verified" or "failed", with a note), audited, and tells the
// carrier.
func (s *Store) SetCapabilityCheck(ctx context.Context, reviewerID, listingID int64, capability, state, note string) error {
	return s.tx(ctx, func(tx *gorm.DB, now time.Time) error {
		var l listingRow
		if err := tx.First(&l, listingID).Error; err != nil {
			return notFound(err, "Listing")
		}
		var before capabilityCheckRow
		tx.Where("listing_id = ? AND capability = ?", listingID, capability).Find(&before)
		row := capabilityCheckRow{ListingID: listingID, Capability: capability, State: state, Note: note, CheckedBy: &reviewerID, UpdatedAt: now}
		if err := tx.Clauses(clause.OnConflict{
			Columns:   []clause.Column{{Name: "listing_id"}, {Name: "capability"}},
			DoUpdates: clause.AssignmentColumns([]string{"state", "note", "checked_by", "updated_at"}),
		}).Create(&row).Error; err != nil {
			return err
		}
		if before.State != state { // a verdict changes which elections the listing is on: a new revision
			if _, err := bumpRevision(tx, now, l.ID, fmt.Sprintf("capability %s of listing %d %s", capability, l.ID, state)); err != nil {
				return err
			}
		}
		if err := appendAudit(tx, now, auditEvent{ActorID: &reviewerID, CarrierID: &l.CarrierID, Action: "capability.check",
			SubjectType: "listing", SubjectID: listingID, Before: map[string]any{"capability": capability, "state": before.State},
			After: map[string]any{"capability": capability, "state": state, "note": note}}); err != nil {
			return err
		}
		return notifyCarrier(tx, now, l.CarrierID, nil, workflow.NoticeCapability(capability, listingID, state))
	})
}

// FindCapabilityChecksFor maps listing ids to their capability states.
func (s *Store) FindCapabilityChecksFor(ctx context.Context, listingIDs []int64) (map[int64]map[string]string, error) {
	out := map[int64]map[string]string{}
	if len(listingIDs) == 0 {
		return out, nil
	}
	var rows []capabilityCheckRow
	if err := s.read(ctx).Where("listing_id IN ?", listingIDs).Find(&rows).Error; err != nil {
		return nil, fmt.Errorf("find capability checks: %w", err)
	}
	for _, r := range rows {
		if out[r.ListingID] == nil {
			out[r.ListingID] = map[string]string{}
		}
		out[r.ListingID][r.Capability] = r.State
	}
	return out, nil
}
