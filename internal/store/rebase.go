package store

import (
	"context"
	"fmt"
	"time"

	"gorm.io/gorm"

	"github.com/airside/airside/internal/apperr"
	"github.com/airside/airside/internal/workflow"
)

// filingWithListing loads a filing and its listing inside a transaction.
func filingWithListing(tx *gorm.DB, filingID int64) (filingRow, listingRow, error) {
	var f filingRow
	var l listingRow
	if err := tx.First(&f, filingID).Error; err != nil {
		return f, l, notFound(err, "Filing")
	}
	if err := tx.First(&l, f.ListingID).Error; err != nil {
		return f, l, fmt.Errorf("listing of filing %d: %w", filingID, err)
	}
	return f, l, nil
}

// RebaseFiling points an open filing at the fare published now, so it can be
// approved after another filing changed the listing; the proposed fare stays
// as it was and the change summary is recomputed against the new base.
func (s *Store) RebaseFiling(ctx context.Context, actorID, filingID int64) error {
	return s.tx(ctx, func(tx *gorm.DB, now time.Time) error {
		f, l, err := filingWithListing(tx, filingID)
		if err != nil {
			return err
		}
		if !workflow.State(f.State).Open() {
			return apperr.Errorf(apperr.ECONFLICT, "A filing that is %s cannot be refreshed; only drafts and filings sent back for changes can.", workflow.State(f.State).Label())
		}
		if workflow.SameBase(f.BaseFareID, l.PublishedFareID) { // refreshed meanwhile
			return apperr.Errorf(apperr.ECONFLICT, "This filing is already drafted against the published fare.")
		}
		updates := map[string]any{"base_fare_id": l.PublishedFareID, "updated_at": now, "lock_version": f.LockVersion + 1}
		if f.FareID != nil {
			fares, err := loadFares(tx, []int64{*f.FareID})
			if err != nil {
				return err
			}
			base, err := publishedFare(tx, l.PublishedFareID)
			if err != nil {
				return err
			}
			kind, kinds := kindsText(fareKinds(base, fares[*f.FareID]))
			updates["kind"], updates["kinds"] = kind, kinds
		}
		res := tx.Model(&filingRow{}).Where("id = ? AND lock_version = ?", f.ID, f.LockVersion).Updates(updates)
		if res.Error != nil {
			return res.Error
		}
		if res.RowsAffected != 1 {
			return workflow.ErrChangedMeanwhile()
		}
		return appendAudit(tx, now, auditEvent{ActorID: &actorID, CarrierID: &l.CarrierID, Action: "filing.refresh",
			SubjectType: "filing", SubjectID: f.ID, Before: map[string]any{"baseFareId": f.BaseFareID}, After: map[string]any{"baseFareId": l.PublishedFareID}})
	})
}
