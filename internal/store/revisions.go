package store

import (
	"context"
	"fmt"
	"time"

	"gorm.io/gorm"

	"github.com/airside/airside/internal/apperr"
)

type revisionRow struct {
	Revision    int64 `gorm:"primaryKey;autoIncrement:false"`
	PublishedAt time.Time
	Note        string
}

func (revisionRow) TableName() string { return "catalogue_revisions" }

// bumpRevision records the next catalogue revision for a change of a
// listing, marks the listing changed at it, and announces it. The primary key
// makes two concurrent publishers collide instead of sharing a number.
func bumpRevision(tx *gorm.DB, now time.Time, listingID int64, note string) (int64, error) {
	var current int64
	if err := tx.Model(&revisionRow{}).Select("COALESCE(MAX(revision), 0)").Scan(&current).Error; err != nil {
		return 0, fmt.Errorf("read catalogue revision: %w", err)
	}
	next := revisionRow{Revision: current + 1, PublishedAt: now, Note: note}
	if err := tx.Create(&next).Error; err != nil {
		if isDuplicate(err) {
			return 0, apperr.Errorf(apperr.ECONFLICT, "Another publication happened at the same moment; try again.")
		}
		return 0, fmt.Errorf("write catalogue revision: %w", err)
	}
	if err := tx.Model(&listingRow{}).Where("id = ?", listingID).Update("revision", next.Revision).Error; err != nil {
		return 0, fmt.Errorf("mark listing %d changed: %w", listingID, err)
	}
	markPublished(tx)
	return next.Revision, notifyPublication(tx, next.Revision)
}

// CatalogueRevision returns the current catalogue revision (0 when empty).
func (s *Store) CatalogueRevision(ctx context.Context) (int64, error) {
	var current int64
	if err := s.read(ctx).Model(&revisionRow{}).Select("COALESCE(MAX(revision), 0)").Scan(&current).Error; err != nil {
		return 0, fmt.Errorf("read catalogue revision: %w", err)
	}
	return current, nil
}
