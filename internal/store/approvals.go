package store

import (
	"context"
	"fmt"
	"time"

	"gorm.io/gorm"
	"gorm.io/gorm/clause"

	"github.com/airside/airside/internal/workflow"
)

type approvalRow struct {
	FilingID    int64 `gorm:"primaryKey"`
	ReviewerID  int64 `gorm:"primaryKey"`
	LockVersion int64 `gorm:"primaryKey"`
	At          time.Time
}

func (approvalRow) TableName() string { return "filing_approvals" }

var _ workflow.ApprovalStore = (*Store)(nil)

// FilingApprovals lists the reviewers who approved this version of a
// quarantined filing.
func (s *Store) FilingApprovals(ctx context.Context, filingID, lockVersion int64) ([]int64, error) {
	var rows []approvalRow
	if err := s.read(ctx).Where("filing_id = ? AND lock_version = ?", filingID, lockVersion).Order("at").Find(&rows).Error; err != nil {
		return nil, fmt.Errorf("filing approvals: %w", err)
	}
	out := make([]int64, len(rows))
	for i, r := range rows {
		out[i] = r.ReviewerID
	}
	return out, nil
}

// RecordApproval records the first approval of a quarantined filing,
// audited, and asks the other reviewers for the second. The filing must
// still be submitted at that version.
func (s *Store) RecordApproval(ctx context.Context, reviewerID, filingID, lockVersion int64) error {
	return s.tx(ctx, func(tx *gorm.DB, now time.Time) error {
		var f filingRow
		if err := tx.First(&f, filingID).Error; err != nil {
			return notFound(err, "Filing")
		}
		if f.State != string(workflow.Submitted) || f.LockVersion != lockVersion {
			return workflow.ErrChangedSinceOpened(filingID)
		}
		if err := tx.Clauses(clause.OnConflict{DoNothing: true}).Create(&approvalRow{FilingID: filingID, ReviewerID: reviewerID,
			LockVersion: lockVersion, At: now}).Error; err != nil {
			return err
		}
		var l listingRow
		if err := tx.First(&l, f.ListingID).Error; err != nil {
			return err
		}
		if err := appendAudit(tx, now, auditEvent{ActorID: &reviewerID, CarrierID: &l.CarrierID, Action: "filing.approve.first",
			SubjectType: "filing", SubjectID: filingID, After: map[string]any{"lockVersion": lockVersion}}); err != nil {
			return err
		}
		return notifyReviewers(tx, now, filingID, reviewerID, workflow.NoticeSecondApproval(filingLabel(tx, &f)))
	})
}

// ApproverEmails maps a filing's first approvals (this version) to the
// reviewers' e-mails, for its page.
func (s *Store) ApproverEmails(ctx context.Context, filingID, lockVersion int64) ([]string, error) {
	var out []string
	err := s.read(ctx).Table("filing_approvals").Select("users.email").Joins("JOIN users ON users.id = filing_approvals.reviewer_id").
		Where("filing_approvals.filing_id = ? AND filing_approvals.lock_version = ?", filingID, lockVersion).Order("filing_approvals.at").
		Scan(&out).Error
	if err != nil {
		return nil, fmt.Errorf("approver e-mails: %w", err)
	}
	return out, nil
}
