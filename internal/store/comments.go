package store

import (
	"context"
	"fmt"
	"time"

	"gorm.io/gorm"

	"github.com/airside/airside/internal/workflow"
)

type commentRow struct {
	ID        int64 `gorm:"primaryKey"`
	FilingID  int64
	AuthorID  int64
	Body      string
	CreatedAt time.Time
}

func (commentRow) TableName() string { return "filing_comments" }

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
