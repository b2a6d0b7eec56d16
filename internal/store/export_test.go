package store

import "gorm.io/gorm"

// WriterForTest exposes the writer's gorm handle to the external tests that
// exercise the connection pool and inject faults (the deadlock and
// write-check tests).
func (s *Store) WriterForTest() *gorm.DB { return s.db }
