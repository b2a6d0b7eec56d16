package store

import (
	"context"
	"fmt"
	"time"

	"gorm.io/gorm"
	"gorm.io/gorm/clause"

	"github.com/airside/airside/internal/account"
	"github.com/airside/airside/internal/apperr"
	"github.com/airside/airside/internal/catalogue"
	"github.com/airside/airside/internal/workflow"
)

type notificationRow struct {
	ID        int64 `gorm:"primaryKey"`
	UserID    int64
	FilingID  *int64
	Message   string
	CreatedAt time.Time
	ReadAt    *time.Time
}

func (notificationRow) TableName() string { return "notifications" }

type commentRow struct {
	ID        int64 `gorm:"primaryKey"`
	FilingID  int64
	AuthorID  int64
	Body      string
	CreatedAt time.Time
}

func (commentRow) TableName() string { return "filing_comments" }

// notifyCarrier tells every member of a carrier, inside the caller's
// transaction; filingID is nil for a message about the listing itself.
func notifyCarrier(tx *gorm.DB, now time.Time, carrierID int64, filingID *int64, message string) error {
	var userIDs []int64
	if err := tx.Model(&membershipRow{}).Where("carrier_id = ?", carrierID).Pluck("user_id", &userIDs).Error; err != nil {
		return fmt.Errorf("notify carrier %d: %w", carrierID, err)
	}
	return notifyUsers(tx, now, userIDs, filingID, message)
}

// notifyReviewers tells every reviewer and admin except one (the actor).
func notifyReviewers(tx *gorm.DB, now time.Time, filingID, exceptUserID int64, message string) error {
	var userIDs []int64
	err := tx.Model(&userRow{}).Where("staff_role IN ? AND id <> ?", []string{string(account.StaffReviewer), string(account.StaffAdmin)}, exceptUserID).
		Pluck("id", &userIDs).Error
	if err != nil {
		return fmt.Errorf("notify reviewers: %w", err)
	}
	return notifyUsers(tx, now, userIDs, &filingID, message)
}

func notifyUsers(tx *gorm.DB, now time.Time, userIDs []int64, filingID *int64, message string) error {
	for _, id := range userIDs {
		row := notificationRow{UserID: id, FilingID: filingID, Message: message, CreatedAt: now}
		if err := tx.Create(&row).Error; err != nil {
			return fmt.Errorf("notify user %d: %w", id, err)
		}
	}
	return nil
}

// filingLabel names a filing in messages, in the workflow's words.
func filingLabel(tx *gorm.DB, f *filingRow) string {
	var names struct{ Carrier, Model string }
	tx.Table("listings").Select("carriers.name AS carrier, models.name AS model").
		Joins("JOIN carriers ON carriers.id = listings.carrier_id").Joins("JOIN models ON models.id = listings.model_id").
		Where("listings.id = ?", f.ListingID).Scan(&names)
	return workflow.FilingLabel(f.ID, names.Carrier, names.Model)
}

// DecideFiling records a reviewer's decision on a submitted filing and, for
// an approval that is due now, publishes it, all in one transaction with its
// audit rows and inbox messages. Of two reviewers deciding at once, one
// decision stands; the other gets ECONFLICT naming who decided.
func (s *Store) DecideFiling(ctx context.Context, reviewerID, filingID int64, action workflow.Action, note string) (workflow.State, error) {
	var next workflow.State
	err := s.tx(ctx, func(tx *gorm.DB, now time.Time) error {
		f, l, err := filingWithListing(tx, filingID)
		if err != nil {
			return err
		}
		if workflow.State(f.State) != workflow.Submitted {
			return alreadyDecided(tx, &f)
		}
		if next, err = workflow.Next(workflow.State(f.State), action); err != nil {
			return err
		}
		if action == workflow.Approve {
			if !workflow.SameBase(f.BaseFareID, l.PublishedFareID) { // published meanwhile
				return workflow.ErrStaleBase()
			}
			if f.EffectiveAt != nil && f.EffectiveAt.After(now) {
				next = workflow.Scheduled
			}
		}
		updates := map[string]any{"state": string(next), "decided_by": reviewerID, "decided_at": now, "decision_note": note,
			"updated_at": now, "lock_version": f.LockVersion + 1}
		res := tx.Model(&filingRow{}).Where("id = ? AND state = ?", f.ID, string(workflow.Submitted)).Updates(updates)
		if res.Error != nil {
			return res.Error
		}
		if res.RowsAffected != 1 {
			// Another decision committed first; read it to say whose.
			if err := tx.First(&f, filingID).Error; err != nil {
				return err
			}
			return alreadyDecided(tx, &f)
		}
		if err := appendAudit(tx, now, auditEvent{ActorID: &reviewerID, CarrierID: &l.CarrierID, Action: "filing." + string(action),
			SubjectType: "filing", SubjectID: f.ID, Before: map[string]any{"state": f.State},
			After: map[string]any{"state": next, "note": note}}); err != nil {
			return err
		}
		message := workflow.NoticeDecided(filingLabel(tx, &f), next, f.EffectiveAt, note)
		if err := notifyCarrier(tx, now, l.CarrierID, &f.ID, message); err != nil {
			return err
		}
		if next == workflow.Published {
			f.State = string(next)
			return publishFiling(tx, now, &f, &l, &reviewerID)
		}
		return nil
	})
	if err != nil {
		return "", fmt.Errorf("%s filing %d: %w", action, filingID, err)
	}
	return next, nil
}

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

func alreadyDecided(tx *gorm.DB, f *filingRow) error {
	var who userRow
	if f.DecidedBy != nil {
		tx.First(&who, *f.DecidedBy)
	}
	return workflow.ErrAlreadyDecided(who.Email, workflow.State(f.State))
}

// publishFiling makes an approved filing the listing's published state and
// raises the catalogue revision, inside the caller's transaction: the fare,
// the status, the revision and the audit row commit together or not at all.
func publishFiling(tx *gorm.DB, now time.Time, f *filingRow, l *listingRow, actorID *int64) error {
	updates := map[string]any{"updated_at": now}
	before := map[string]any{"fareId": l.PublishedFareID, "status": l.Status}
	if f.FareID != nil {
		updates["published_fare_id"] = *f.FareID
		if l.Status == string(catalogue.StatusDraft) {
			updates["status"] = string(catalogue.StatusInService)
		}
	} else {
		updates["status"] = f.TargetStatus
	}
	res := tx.Model(&listingRow{}).Where("id = ?", l.ID).Updates(updates)
	if res.Error != nil {
		return fmt.Errorf("publish filing %d: %w", f.ID, res.Error)
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

// AddComment adds a message to a filing's thread and tells the other side
// (the carrier when fromStaff, the reviewers otherwise).
func (s *Store) AddComment(ctx context.Context, actorID, filingID int64, body string, fromStaff bool) error {
	return s.tx(ctx, func(tx *gorm.DB, now time.Time) error {
		f, l, err := filingWithListing(tx, filingID)
		if err != nil {
			return err
		}
		row := commentRow{FilingID: f.ID, AuthorID: actorID, Body: body, CreatedAt: now}
		if err := tx.Create(&row).Error; err != nil {
			return err
		}
		if err := appendAudit(tx, now, auditEvent{ActorID: &actorID, CarrierID: &l.CarrierID, Action: "filing.comment",
			SubjectType: "filing", SubjectID: f.ID, After: map[string]any{"commentId": row.ID}}); err != nil {
			return err
		}
		message := workflow.NoticeComment(filingLabel(tx, &f))
		if fromStaff {
			return notifyCarrier(tx, now, l.CarrierID, &f.ID, message)
		}
		return notifyReviewers(tx, now, f.ID, actorID, message)
	})
}

// FindComments lists a filing's thread, oldest first.
func (s *Store) FindComments(ctx context.Context, filingID int64) ([]workflow.ThreadMessage, error) {
	var rows []struct {
		Row       commentRow `gorm:"embedded"`
		Email     string
		StaffRole string
	}
	err := s.read(ctx).Table("filing_comments").Select("filing_comments.*, users.email, users.staff_role").
		Joins("JOIN users ON users.id = filing_comments.author_id").Where("filing_id = ?", filingID).
		Order("filing_comments.id").Scan(&rows).Error
	if err != nil {
		return nil, fmt.Errorf("find comments of filing %d: %w", filingID, err)
	}
	out := make([]workflow.ThreadMessage, len(rows))
	for i, r := range rows {
		out[i] = workflow.ThreadMessage{ID: r.Row.ID, AuthorEmail: r.Email, AuthorStaff: r.StaffRole != "", Body: r.Row.Body, At: r.Row.CreatedAt}
	}
	return out, nil
}

// FindNotifications lists a user's inbox, newest first.
func (s *Store) FindNotifications(ctx context.Context, userID int64, limit int) ([]workflow.Notification, error) {
	var rows []notificationRow
	if err := s.read(ctx).Where("user_id = ?", userID).Order("id DESC").Limit(limit).Find(&rows).Error; err != nil {
		return nil, fmt.Errorf("find notifications: %w", err)
	}
	out := make([]workflow.Notification, len(rows))
	for i, r := range rows {
		out[i] = workflow.Notification{ID: r.ID, FilingID: r.FilingID, Message: r.Message, At: r.CreatedAt, Read: r.ReadAt != nil}
	}
	return out, nil
}

// CountUnread counts a user's unread inbox messages.
func (s *Store) CountUnread(ctx context.Context, userID int64) (int, error) {
	var n int64
	if err := s.read(ctx).Model(&notificationRow{}).Where("user_id = ? AND read_at IS NULL", userID).Count(&n).Error; err != nil {
		return 0, fmt.Errorf("count unread: %w", err)
	}
	return int(n), nil
}

// MarkNotificationsRead marks all of a user's messages read.
func (s *Store) MarkNotificationsRead(ctx context.Context, userID int64) error {
	return s.tx(ctx, func(tx *gorm.DB, now time.Time) error {
		return tx.Model(&notificationRow{}).Where("user_id = ? AND read_at IS NULL", userID).Update("read_at", now).Error
	})
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

// CountAwaitingReview counts submitted filings.
func (s *Store) CountAwaitingReview(ctx context.Context) (int, error) {
	var n int64
	if err := s.read(ctx).Model(&filingRow{}).Where("state = ?", string(workflow.Submitted)).Count(&n).Error; err != nil {
		return 0, fmt.Errorf("count awaiting review: %w", err)
	}
	return int(n), nil
}
