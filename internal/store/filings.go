package store

import (
	"context"
	"fmt"
	"strings"
	"time"

	"gorm.io/gorm"

	"github.com/airside/airside/internal/apperr"
	"github.com/airside/airside/internal/catalogue"
	"github.com/airside/airside/internal/fare"
	"github.com/airside/airside/internal/workflow"
)

var _ workflow.Store = (*Store)(nil)

type filingRow struct {
	ID            int64 `gorm:"primaryKey"`
	ListingID     int64
	Kind          string
	Kinds         string
	State         string
	FareID        *int64
	BaseFareID    *int64
	TargetStatus  string
	EndpointID    *int64
	Justification string
	EffectiveAt   *time.Time
	AuthorID      int64
	ViaToken      string
	DecidedBy     *int64
	DecidedAt     *time.Time
	DecisionNote  string
	PublishedAt   *time.Time
	SubmittedAt   *time.Time
	LockVersion   int64
	CreatedAt     time.Time
	UpdatedAt     time.Time
}

func (filingRow) TableName() string { return "filings" }

func kindsText(kinds []fare.Kind) (primary, all string) {
	if len(kinds) == 0 {
		return string(fare.KindPrice), ""
	}
	parts := make([]string, len(kinds))
	for i, k := range kinds {
		parts[i] = string(k)
	}
	return parts[0], strings.Join(parts, ",")
}

// CreateFiling records a filing (a draft, or submitted at once) against the
// listing's published fare, audited. A submit while another filing of the
// listing is in flight fails with ECONFLICT naming that filing.
func (s *Store) CreateFiling(ctx context.Context, actorID int64, nf workflow.NewFiling) (int64, error) {
	var id int64
	err := s.tx(ctx, func(tx *gorm.DB, now time.Time) error {
		var err error
		id, err = createFiling(tx, now, actorID, nf)
		return err
	})
	if err != nil {
		return 0, s.inFlightConflict(ctx, nf.ListingID, fmt.Errorf("create filing for listing %d: %w", nf.ListingID, err))
	}
	return id, nil
}

type idempotencyRow struct {
	CarrierID      int64  `gorm:"primaryKey"`
	IdempotencyKey string `gorm:"primaryKey"`
	BodyHash       string
	FilingID       int64
	CreatedAt      time.Time
}

func (idempotencyRow) TableName() string { return "filing_idempotency_keys" }

// CreateFilingOnce records a filing under its Idempotency-Key: a request
// already made under the key (in the last workflow.IdempotentFor) answers
// the filing it made (replayed), one with another body is refused. The
// key is written in the filing's transaction; two requests racing under
// one key, in one process or two, leave one filing: the second's
// transaction fails on the key (or on the listing's one filing in
// flight), and it answers the first's.
func (s *Store) CreateFilingOnce(ctx context.Context, actorID int64, nf workflow.NewFiling) (id int64, replayed bool, err error) {
	idem := nf.Idempotency
	if idem == nil {
		id, err = s.CreateFiling(ctx, actorID, nf)
		return id, false, err
	}
	lookup := func() (int64, bool, error) { return s.FindFilingByKey(ctx, *idem) }
	if id, found, err := lookup(); found || err != nil {
		return id, found, err
	}
	err = s.tx(ctx, func(tx *gorm.DB, now time.Time) error {
		// Keys past their day are forgotten as the carrier files anew.
		if err := tx.Where("carrier_id = ? AND created_at < ?", idem.CarrierID, now.Add(-workflow.IdempotentFor)).
			Delete(&idempotencyRow{}).Error; err != nil {
			return err
		}
		var err error
		if id, err = createFiling(tx, now, actorID, nf); err != nil {
			return err
		}
		return tx.Create(&idempotencyRow{CarrierID: idem.CarrierID, IdempotencyKey: idem.Key, BodyHash: idem.BodyHash,
			FilingID: id, CreatedAt: now}).Error
	})
	if err != nil {
		if id, found, lerr := lookup(); found && lerr == nil || found && apperr.Code(lerr) == apperr.EINVALID {
			return id, true, lerr // a request under the same key won the race
		}
		return 0, false, s.inFlightConflict(ctx, nf.ListingID, fmt.Errorf("create filing for listing %d: %w", nf.ListingID, err))
	}
	return id, false, nil
}

// DeleteIdempotencyKeysBefore deletes the Idempotency-Keys recorded
// before a time.
func (s *Store) DeleteIdempotencyKeysBefore(ctx context.Context, before time.Time) (int64, error) {
	res := s.db.WithContext(ctx).Where("created_at < ?", before.UTC()).Delete(&idempotencyRow{})
	if res.Error != nil {
		return 0, fmt.Errorf("delete idempotency keys: %w", res.Error)
	}
	return res.RowsAffected, nil
}

// FindFilingByKey finds the filing made under an Idempotency-Key in the
// last workflow.IdempotentFor: found, with the filing, or refused
// (workflow.ErrKeyReused) when the key came with another body.
func (s *Store) FindFilingByKey(ctx context.Context, idem workflow.Idempotency) (filingID int64, found bool, err error) {
	var row idempotencyRow
	err = s.read(ctx).Where("carrier_id = ? AND idempotency_key = ? AND created_at >= ?", idem.CarrierID, idem.Key,
		s.Now().UTC().Add(-workflow.IdempotentFor)).Limit(1).Find(&row).Error
	switch {
	case err != nil:
		return 0, false, fmt.Errorf("read idempotency key: %w", err)
	case row.FilingID == 0:
		return 0, false, nil
	case row.BodyHash != idem.BodyHash:
		return 0, true, workflow.ErrKeyReused()
	}
	return row.FilingID, true, nil
}

// CreateFilings records several filings in one transaction: all or none.
func (s *Store) CreateFilings(ctx context.Context, actorID int64, nfs []workflow.NewFiling) ([]int64, error) {
	ids := make([]int64, 0, len(nfs))
	err := s.tx(ctx, func(tx *gorm.DB, now time.Time) error {
		for _, nf := range nfs {
			id, err := createFiling(tx, now, actorID, nf)
			if err != nil {
				return fmt.Errorf("listing %d: %w", nf.ListingID, err)
			}
			ids = append(ids, id)
		}
		return nil
	})
	if err != nil {
		return nil, fmt.Errorf("create %d filings: %w", len(nfs), err)
	}
	return ids, nil
}

func createFiling(tx *gorm.DB, now time.Time, actorID int64, nf workflow.NewFiling) (int64, error) {
	var l listingRow
	if err := tx.First(&l, nf.ListingID).Error; err != nil {
		return 0, notFound(err, "Listing")
	}
	var kinds []fare.Kind
	row := filingRow{ListingID: l.ID, State: string(workflow.Draft), BaseFareID: l.PublishedFareID,
		Justification: nf.Justification, EffectiveAt: nf.EffectiveAt, AuthorID: actorID, ViaToken: nf.ViaToken, CreatedAt: now, UpdatedAt: now}
	var changes []fare.Change
	if nf.Fare != nil {
		base, err := publishedFare(tx, l.PublishedFareID)
		if err != nil {
			return 0, err
		}
		changes = fare.Diff(base, nf.Fare)
		kinds = fare.KindsOf(changes)
		f := *nf.Fare
		f.ListingID = l.ID
		fareID, err := createFare(tx, now, &actorID, &f)
		if err != nil {
			return 0, err
		}
		row.FareID = &fareID
	} else {
		kinds = []fare.Kind{fare.KindPause}
		row.TargetStatus = string(nf.TargetStatus)
	}
	row.Kind, row.Kinds = kindsText(kinds)
	if nf.Submit {
		row.State, row.SubmittedAt = string(workflow.Submitted), &now
	}
	if err := tx.Create(&row).Error; err != nil {
		return 0, err
	}
	action := "filing.create"
	if nf.Submit {
		action = "filing.submit"
		facts, err := moveFacts(tx, &row)
		if err != nil {
			return 0, err
		}
		facts.State = workflow.Draft // created and submitted at once
		outcome, err := workflow.CarrierOutcome(facts, workflow.Submit)
		if err != nil {
			return 0, err
		}
		if err := carryOut(tx, now, actorID, &row, &l, outcome); err != nil {
			return 0, err
		}
	}
	return row.ID, appendAudit(tx, now, auditEvent{ActorID: &actorID, CarrierID: &l.CarrierID, Action: action,
		SubjectType: "filing", SubjectID: row.ID,
		After: map[string]any{"state": row.State, "listingId": l.ID, "kinds": row.Kinds, "changes": changesForAudit(changes, nf.TargetStatus)}})
}

func changesForAudit(changes []fare.Change, target catalogue.ListingStatus) []map[string]string {
	var out []map[string]string
	for _, c := range changes {
		out = append(out, map[string]string{"field": c.Field, "old": c.Old, "new": c.New})
	}
	if target != "" {
		out = append(out, map[string]string{"field": "status", "new": string(target)})
	}
	return out
}

// inFlightConflict turns the one-in-flight index violation into a message a
// carrier understands, naming the filing already under way.
func (s *Store) inFlightConflict(ctx context.Context, listingID int64, err error) error {
	if !isDuplicate(err) {
		return err
	}
	var pending filingRow
	if ferr := s.read(ctx).Where("listing_id = ? AND state IN ?", listingID, workflow.InFlightStates).First(&pending).Error; ferr != nil {
		return apperr.Errorf(apperr.ECONFLICT, "Another filing for this listing is already in flight.")
	}
	e := apperr.Errorf(apperr.ECONFLICT, "Filing #%d for this listing is already %s: withdraw it or wait for its decision before submitting another.",
		pending.ID, workflow.State(pending.State).Label())
	e.Ref = pending.ID
	return e
}

func publishedFare(tx *gorm.DB, id *int64) (*fare.Fare, error) {
	if id == nil {
		return nil, nil
	}
	fares, err := loadFares(tx, []int64{*id})
	if err != nil {
		return nil, err
	}
	return fares[*id], nil
}

// UpdateFiling replaces an open filing's fare and note (a new immutable fare
// row; the old one stays for the history), and submits it when asked.
func (s *Store) UpdateFiling(ctx context.Context, actorID, filingID int64, u workflow.FilingUpdate) error {
	return s.changeFiling(ctx, "update", filingID, func(tx *gorm.DB, now time.Time, f filingRow, l listingRow) error {
		if f.LockVersion != u.LockVersion {
			return workflow.ErrEditedSinceOpened()
		}
		if !workflow.State(f.State).Open() || u.Fare == nil {
			return apperr.Errorf(apperr.ECONFLICT, "A filing that is %s cannot be edited.", workflow.State(f.State).Label())
		}
		base, err := publishedFare(tx, f.BaseFareID)
		if err != nil {
			return err
		}
		changes := fare.Diff(base, u.Fare)
		// What this edit changed from the version it replaces (for a
		// resubmission, the one the reviewer sent back): the history shows it.
		var edit []fare.Change
		if f.FareID != nil {
			previous, err := loadFares(tx, []int64{*f.FareID})
			if err != nil {
				return err
			}
			if prev := previous[*f.FareID]; prev != nil {
				edit = fare.Diff(prev, u.Fare)
			}
		}
		u.Fare.ListingID = f.ListingID
		fareID, err := createFare(tx, now, &actorID, u.Fare)
		if err != nil {
			return err
		}
		kind, kinds := kindsText(fare.KindsOf(changes))
		updates := map[string]any{"fare_id": fareID, "kind": kind, "kinds": kinds, "justification": u.Justification,
			"effective_at": u.EffectiveAt, "updated_at": now, "lock_version": f.LockVersion + 1}
		action := "filing.edit"
		if u.Submit {
			updates["state"], updates["submitted_at"] = string(workflow.Submitted), now
			action = "filing.submit"
		}
		res := tx.Model(&filingRow{}).Where("id = ? AND lock_version = ? AND state IN ?", f.ID, f.LockVersion, workflow.From(workflow.Save)).Updates(updates)
		if res.Error != nil {
			return res.Error
		}
		if res.RowsAffected != 1 {
			return workflow.ErrEditedSinceOpened()
		}
		if u.Submit {
			facts, err := moveFacts(tx, &f)
			if err != nil {
				return err
			}
			facts.Proposed = u.Fare
			outcome, err := workflow.CarrierOutcome(facts, workflow.Submit)
			if err != nil {
				return err
			}
			if err := carryOut(tx, now, actorID, &f, &l, outcome); err != nil {
				return err
			}
		}
		return appendAudit(tx, now, auditEvent{ActorID: &actorID, CarrierID: &l.CarrierID, Action: action,
			SubjectType: "filing", SubjectID: f.ID,
			Before: map[string]any{"state": f.State, "fareId": f.FareID},
			After: map[string]any{"state": stateAfter(f.State, u.Submit), "fareId": fareID, "changes": changesForAudit(changes, ""),
				"edit": changesForAudit(edit, "")}})
	})
}

// changeFiling runs fn on a filing and its listing in one transaction; a
// violation of the one-in-flight index comes back as a conflict naming the
// filing already under way.
func (s *Store) changeFiling(ctx context.Context, what string, filingID int64, fn func(tx *gorm.DB, now time.Time, f filingRow, l listingRow) error) error {
	var listingID int64
	err := s.tx(ctx, func(tx *gorm.DB, now time.Time) error {
		f, l, err := filingWithListing(tx, filingID)
		if err != nil {
			return err
		}
		listingID = f.ListingID
		return fn(tx, now, f, l)
	})
	if err != nil {
		return s.inFlightConflict(ctx, listingID, fmt.Errorf("%s filing %d: %w", what, filingID, err))
	}
	return nil
}

func stateAfter(state string, submit bool) string {
	if submit {
		return string(workflow.Submitted)
	}
	return state
}

// SubmitFiling sends an open filing to review.
func (s *Store) SubmitFiling(ctx context.Context, actorID, filingID int64) error {
	return s.carrierTransition(ctx, actorID, filingID, workflow.Submit)
}

// WithdrawFiling withdraws a filing not yet decided.
func (s *Store) WithdrawFiling(ctx context.Context, actorID, filingID int64) error {
	return s.carrierTransition(ctx, actorID, filingID, workflow.Withdraw)
}

// carrierTransition moves a filing by a conditional update: of two
// concurrent moves, one changes the row and the other finds it moved.
func (s *Store) carrierTransition(ctx context.Context, actorID, filingID int64, action workflow.Action) error {
	return s.changeFiling(ctx, string(action), filingID, func(tx *gorm.DB, now time.Time, f filingRow, l listingRow) error {
		facts, err := moveFacts(tx, &f)
		if err != nil {
			return err
		}
		outcome, err := workflow.CarrierOutcome(facts, action)
		if err != nil {
			return err
		}
		next := outcome.Next
		updates := map[string]any{"state": string(next), "updated_at": now, "lock_version": f.LockVersion + 1}
		if next == workflow.Submitted {
			updates["submitted_at"] = now
		}
		res := tx.Model(&filingRow{}).Where("id = ? AND state = ? AND lock_version = ?", f.ID, f.State, f.LockVersion).Updates(updates)
		if res.Error != nil {
			return res.Error
		}
		if res.RowsAffected != 1 {
			return workflow.ErrChangedMeanwhile()
		}
		before := f.State
		f.State = string(next)
		if err := carryOut(tx, now, actorID, &f, &l, outcome); err != nil {
			return err
		}
		return appendAudit(tx, now, auditEvent{ActorID: &actorID, CarrierID: &l.CarrierID, Action: "filing." + string(action),
			SubjectType: "filing", SubjectID: f.ID, Before: map[string]any{"state": before}, After: map[string]any{"state": next}})
	})
}

// fareKinds is the kinds of change from base to proposed.
func fareKinds(base, proposed *fare.Fare) []fare.Kind { return fare.KindsOf(fare.Diff(base, proposed)) }

// moveFacts reads what workflow decides a move of f from.
func moveFacts(tx *gorm.DB, f *filingRow) (workflow.MoveFacts, error) {
	facts := workflow.MoveFacts{State: workflow.State(f.State), EffectiveAt: f.EffectiveAt, Label: filingLabel(tx, f)}
	var err error
	if facts.Base, err = publishedFare(tx, f.BaseFareID); err != nil {
		return facts, err
	}
	if facts.Proposed, err = publishedFare(tx, f.FareID); err != nil {
		return facts, err
	}
	return facts, nil
}

// carryOut does what workflow decided a move of f does (its state is
// already written): the notices, the preflight it asks for, the
// publication.
func carryOut(tx *gorm.DB, now time.Time, actorID int64, f *filingRow, l *listingRow, o workflow.MoveOutcome) error {
	if o.CarrierNotice != "" {
		if err := notifyCarrier(tx, now, l.CarrierID, &f.ID, o.CarrierNotice); err != nil {
			return err
		}
	}
	if o.ReviewerNotice != "" {
		if err := notifyReviewers(tx, now, f.ID, actorID, o.ReviewerNotice); err != nil {
			return err
		}
	}
	if o.Probe {
		var ep endpointRow
		if err := tx.Where("listing_id = ?", f.ListingID).Order("id DESC").Limit(1).Find(&ep).Error; err != nil {
			return err
		}
		if ep.ID != 0 {
			if _, err := queueRun(tx, now, f.ListingID, ep.ID, "filing", &actorID, now); err != nil {
				return err
			}
		}
	}
	if o.Publish {
		return publishFiling(tx, now, f, l, &actorID)
	}
	return nil
}
