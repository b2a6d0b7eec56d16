package store

import (
	"context"
	"fmt"
	"time"

	"gorm.io/gorm"

	"github.com/airside/airside/internal/apperr"
	"github.com/airside/airside/internal/fare"
	"github.com/airside/airside/internal/workflow"
)

// DecideFiling records a reviewer's decision on a submitted filing and, for
// an approval that is due now, publishes it, all in one transaction with its
// audit rows and inbox messages. Of two reviewers deciding at once, one
// decision stands; the other gets ECONFLICT naming who decided.
func (s *Store) DecideFiling(ctx context.Context, reviewerID, filingID int64, action workflow.Action, note string, seenVersion int64) (workflow.State, error) {
	var next workflow.State
	err := s.tx(ctx, func(tx *gorm.DB, now time.Time) error {
		f, l, err := filingWithListing(tx, filingID)
		if err != nil {
			return err
		}
		if workflow.State(f.State) != workflow.Submitted {
			return alreadyDecided(tx, &f)
		}
		facts, err := moveFacts(tx, &f)
		if err != nil {
			return err
		}
		outcome, err := workflow.DecisionOutcome(facts, action, note, now)
		if err != nil {
			return err
		}
		next = outcome.Next
		if action == workflow.Approve && !workflow.SameBase(f.BaseFareID, l.PublishedFareID) { // published meanwhile
			return workflow.ErrStaleBase()
		}
		updates := map[string]any{"state": string(next), "decided_by": reviewerID, "decided_at": now, "decision_note": note,
			"updated_at": now, "lock_version": f.LockVersion + 1}
		if f.LockVersion != seenVersion {
			return workflow.ErrChangedSinceOpened(f.ID)
		}
		res := tx.Model(&filingRow{}).Where("id = ? AND state = ? AND lock_version = ?", f.ID, string(workflow.Submitted), seenVersion).Updates(updates)
		if res.Error != nil {
			return res.Error
		}
		if res.RowsAffected != 1 {
			// Another decision committed first; read it to say whose.
			if err := tx.First(&f, filingID).Error; err != nil {
				return err
			}
			if workflow.State(f.State) == workflow.Submitted { // resubmitted meanwhile
				return workflow.ErrChangedSinceOpened(f.ID)
			}
			return alreadyDecided(tx, &f)
		}
		if err := appendAudit(tx, now, auditEvent{ActorID: &reviewerID, CarrierID: &l.CarrierID, Action: "filing." + string(action),
			SubjectType: "filing", SubjectID: f.ID, Before: map[string]any{"state": f.State},
			After: map[string]any{"state": next, "note": note, "fareId": f.FareID}}); err != nil {
			return err
		}
		f.State = string(next)
		return carryOut(tx, now, reviewerID, &f, &l, outcome)
	})
	if err != nil {
		return "", fmt.Errorf("%s filing %d: %w", action, filingID, err)
	}
	return next, nil
}

func alreadyDecided(tx *gorm.DB, f *filingRow) error {
	var who userRow
	if f.DecidedBy != nil {
		tx.First(&who, *f.DecidedBy)
	}
	return workflow.ErrAlreadyDecided(who.Email, workflow.State(f.State))
}

// CountAwaitingReview counts submitted filings.
func (s *Store) CountAwaitingReview(ctx context.Context) (int, error) {
	var n int64
	if err := s.read(ctx).Model(&filingRow{}).Where("state = ?", string(workflow.Submitted)).Count(&n).Error; err != nil {
		return 0, fmt.Errorf("count awaiting review: %w", err)
	}
	return int(n), nil
}

// ReviewDurations are how long the reviews decided since then took, from
// (the last) submission to the decision, newest first, at most limit.
func (s *Store) ReviewDurations(ctx context.Context, since time.Time, limit int) ([]time.Duration, error) {
	var rows []struct{ SubmittedAt, DecidedAt time.Time }
	if err := s.read(ctx).Model(&filingRow{}).Select("submitted_at, decided_at").
		Where("decided_at IS NOT NULL AND submitted_at IS NOT NULL AND decided_at >= ? AND decided_at >= submitted_at", since).
		Order("decided_at DESC").Limit(limit).Scan(&rows).Error; err != nil {
		return nil, fmt.Errorf("review durations: %w", err)
	}
	out := make([]time.Duration, len(rows))
	for i, r := range rows {
		out[i] = r.DecidedAt.Sub(r.SubmittedAt)
	}
	return out, nil
}

// FindFiledFare is a fare a filing of the listing proposed at some point
// (fares are never rewritten, so an earlier version stays readable), for
// the diff against the version a reviewer sent back. ENOTFOUND when the
// fare is not the listing's.
func (s *Store) FindFiledFare(ctx context.Context, listingID, fareID int64) (*fare.Fare, error) {
	var n int64
	if err := s.read(ctx).Table("fares").Where("id = ? AND listing_id = ?", fareID, listingID).Count(&n).Error; err != nil {
		return nil, fmt.Errorf("find filed fare: %w", err)
	}
	if n == 0 {
		return nil, apperr.Errorf(apperr.ENOTFOUND, "No such fare.")
	}
	fares, err := loadFares(s.read(ctx), []int64{fareID})
	if err != nil {
		return nil, fmt.Errorf("find filed fare: %w", err)
	}
	return fares[fareID], nil
}
