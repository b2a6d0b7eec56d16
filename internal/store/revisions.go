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

// revisionLock is the key of the PostgreSQL advisory lock that publishers
// take, per transaction, before they number a revision.
const revisionLock = 7_310_001

// bumpRevision records the next catalogue revision for a change of a
// listing, marks the listing changed at it, and announces it.
//
// Publishers take turns: on PostgreSQL a transaction-scoped advisory lock,
// held until commit, so two processes never read the same MAX and collide
// (the loser's preflight run stayed "running" with its verdicts unapplied);
// on SQLite the one writer and BEGIN IMMEDIATE already do it. Taking turns
// rather than a sequence also keeps revisions gapless and committed in order,
// so a gateway that has seen revision N can never later miss an N-1 that
// committed after it. The primary key stays as the last guard.
func bumpRevision(tx *gorm.DB, now time.Time, listingID int64, note string) (int64, error) {
	if tx.Dialector.Name() == "postgres" {
		if err := tx.Exec("SELECT pg_advisory_xact_lock(?)", revisionLock).Error; err != nil {
			return 0, fmt.Errorf("wait for the revision lock: %w", err)
		}
	}
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
