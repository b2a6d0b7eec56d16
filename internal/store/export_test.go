package store

import (
	"context"

	"gorm.io/gorm"
)

// WriterForTest exposes the writer's gorm handle to the external tests that
// exercise the connection pool and inject faults (the deadlock and
// write-check tests).
func (s *Store) WriterForTest() *gorm.DB { return s.db }

// OpenWithStatementCacheForTest opens the store as it was when the embedded
// default froze (gorm's prepared-statement cache on), so the deadlock test
// can show that it fails there.
func OpenWithStatementCacheForTest(ctx context.Context, url string) (*Store, error) {
	return open(ctx, url, true)
}
