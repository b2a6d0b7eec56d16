package store

import (
	"context"
	"fmt"
	"time"

	"gorm.io/gorm"

	"github.com/airside/airside/internal/account"
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
