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

// FindCapabilityChecks maps a listing's capability names to their verdict
// ("verified" or "failed"): a reviewer's override, else the latest fresh
// probe of the published endpoint; a flag not in the map has no verdict.
func (s *Store) FindCapabilityChecks(ctx context.Context, listingID int64) (map[string]string, error) {
	all, err := s.FindCapabilityChecksFor(ctx, []int64{listingID})
	if err != nil {
		return nil, err
	}
	if all[listingID] == nil {
		return map[string]string{}, nil
	}
	return all[listingID], nil
}

// FindCapabilityOverrides maps a listing's capability names to a reviewer's
// override of the probes' verdict, with its note.
func (s *Store) FindCapabilityOverrides(ctx context.Context, listingID int64) (map[string]workflow.Override, error) {
	var rows []struct {
		Capability, State, Note string
		UpdatedAt               time.Time
		Email                   *string
	}
	if err := s.read(ctx).Table("capability_checks").Select("capability_checks.capability, capability_checks.state, capability_checks.note, capability_checks.updated_at, users.email AS email").
		Joins("LEFT JOIN users ON users.id = capability_checks.checked_by").
		Where("capability_checks.listing_id = ?", listingID).Scan(&rows).Error; err != nil {
		return nil, fmt.Errorf("find capability overrides of listing %d: %w", listingID, err)
	}
	now := s.Now().UTC()
	out := map[string]workflow.Override{}
	for _, r := range rows {
		o := workflow.Override{State: r.State, Note: r.Note, At: r.UpdatedAt, Until: r.UpdatedAt.Add(s.overrideFor())}
		o.Expired = !o.Until.After(now)
		if r.Email != nil {
			o.By = *r.Email
		}
		out[r.Capability] = o
	}
	return out, nil
}

// overrideFor is how long a reviewer's override counts.
func (s *Store) overrideFor() time.Duration {
	if s.OverrideFor > 0 {
		return s.OverrideFor
	}
	return workflow.DefaultOverrideFor
}

// probeFreshness is how long a passed probe earns its flag.
func (s *Store) probeFreshness() time.Duration {
	if s.ProbeFreshness > 0 {
		return s.ProbeFreshness
	}
	return 7 * 24 * time.Hour
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

// FindCapabilityChecksFor maps listing ids to their capability verdicts.
func (s *Store) FindCapabilityChecksFor(ctx context.Context, listingIDs []int64) (map[int64]map[string]string, error) {
	var out map[int64]map[string]string
	err := s.readTx(ctx, func(tx *gorm.DB) error {
		var err error
		out, err = verdictsAt(tx, listingIDs, s.Now().UTC(), s.probeFreshness(), s.overrideFor(), 0)
		return err
	})
	if err != nil {
		return nil, fmt.Errorf("find capability checks: %w", err)
	}
	return out, nil
}
