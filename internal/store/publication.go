package store

import (
	"context"
	"fmt"
	"time"

	"gorm.io/gorm"
	"gorm.io/gorm/clause"

	"github.com/airside/airside/internal/catalogue"
	"github.com/airside/airside/internal/workflow"
)

// publishFiling makes an approved filing the listing's published state and
// raises the catalogue revision, inside the caller's transaction: the fare,
// the status, the revision and the audit row commit together or not at all.
func publishFiling(tx *gorm.DB, now time.Time, f *filingRow, l *listingRow, actorID *int64) error {
	updates := map[string]any{"updated_at": now}
	before := map[string]any{"fareId": l.PublishedFareID, "status": l.Status, "endpointId": l.EndpointID}
	switch {
	case f.EndpointID != nil:
		updates["endpoint_id"] = *f.EndpointID
	case f.FareID != nil:
		updates["published_fare_id"] = *f.FareID
		if l.Status == string(catalogue.StatusDraft) {
			updates["status"] = string(catalogue.StatusInService)
		}
	case f.TargetStatus == string(catalogue.StatusPaused):
		for k, v := range pausedNow(now, l.PublishedFareID) {
			updates[k] = v
		}
	default:
		updates["status"] = f.TargetStatus
	}
	res := tx.Model(&listingRow{}).Where("id = ?", l.ID).Updates(updates)
	if res.Error != nil {
		return fmt.Errorf("publish filing %d: %w", f.ID, res.Error)
	}
	if f.EndpointID == nil && f.FareID != nil {
		if err := recordFareHistory(tx, l.ID, *f.FareID, now); err != nil {
			return fmt.Errorf("publish filing %d: %w", f.ID, err)
		}
	}
	if err := tx.Model(&filingRow{}).Where("id = ?", f.ID).Updates(map[string]any{"state": string(workflow.Published), "published_at": now}).Error; err != nil {
		return fmt.Errorf("publish filing %d: %w", f.ID, err)
	}
	rev, err := bumpRevision(tx, now, l.ID, fmt.Sprintf("filing %d", f.ID))
	if err != nil {
		return err
	}
	delete(updates, "updated_at")
	updates["revision"] = rev
	return appendAudit(tx, now, auditEvent{ActorID: actorID, CarrierID: &l.CarrierID, Action: "filing.publish",
		SubjectType: "filing", SubjectID: f.ID, Before: before, After: updates})
}

// PublishDue publishes every scheduled filing whose effective date has come,
// each in its own transaction, and returns how many it published. Several
// schedulers may run at once (several serve processes): on PostgreSQL each
// due filing is claimed with FOR UPDATE SKIP LOCKED, and on both databases the
// conditional state change lets exactly one of them publish it.
func (s *Store) PublishDue(ctx context.Context) (int, error) {
	published := 0
	for range 500 {
		found := false
		err := s.tx(ctx, func(tx *gorm.DB, now time.Time) error {
			q := tx.Where("state = ? AND effective_at <= ?", string(workflow.Scheduled), now).Order("effective_at, id").Limit(1)
			if s.dialect == Postgres {
				q = q.Clauses(clause.Locking{Strength: "UPDATE", Options: "SKIP LOCKED"})
			}
			var f filingRow
			if err := q.Find(&f).Error; err != nil {
				return err
			}
			if f.ID == 0 {
				return nil
			}
			found = true
			res := tx.Model(&filingRow{}).Where("id = ? AND state = ?", f.ID, string(workflow.Scheduled)).
				Updates(map[string]any{"updated_at": now, "lock_version": f.LockVersion + 1})
			if res.Error != nil {
				return res.Error
			}
			if res.RowsAffected != 1 {
				return nil // another scheduler took it
			}
			var l listingRow
			if err := tx.First(&l, f.ListingID).Error; err != nil {
				return err
			}
			if err := publishFiling(tx, now, &f, &l, nil); err != nil {
				return err
			}
			published++
			return notifyCarrier(tx, now, l.CarrierID, &f.ID, workflow.NoticeDue(filingLabel(tx, &f)))
		})
		if err != nil {
			return published, fmt.Errorf("publish due filings: %w", err)
		}
		if !found {
			break
		}
	}
	return published, nil
}
