package store_test

import (
	"context"
	"path/filepath"
	"sync/atomic"
	"testing"
	"time"

	"github.com/airside/airside/internal/store"
	"github.com/airside/airside/internal/store/storetest"
)

// TestBackupDuringWritesKeepsEveryAcknowledgedWrite: a backup taken while a
// writer commits row after row holds every row acknowledged before the backup
// began, and restores into a database that opens, migrates and has them.
// (Copying the .db file of a serving SQLite instead lost what was still in
// the -wal file.)
func TestBackupDuringWritesKeepsEveryAcknowledgedWrite(t *testing.T) {
	storetest.ForEach(t, func(t *testing.T, s *store.Store) {
		ctx := context.Background()
		db := s.WriterForTest()
		if err := db.Exec("CREATE TABLE acked (n INTEGER PRIMARY KEY)").Error; err != nil {
			t.Fatal(err)
		}
		var acked atomic.Int64
		stop := make(chan struct{})
		writerDone := make(chan error, 1)
		go func() {
			for n := int64(1); ; n++ {
				select {
				case <-stop:
					writerDone <- nil
					return
				default:
				}
				if err := db.Exec("INSERT INTO acked (n) VALUES (?)", n).Error; err != nil {
					writerDone <- err
					return
				}
				acked.Store(n) // acknowledged: committed
			}
		}()
		for acked.Load() < 200 {
			time.Sleep(time.Millisecond)
		}
		before := acked.Load()
		path := filepath.Join(t.TempDir(), "backup.db")
		if err := s.Backup(ctx, path); err != nil {
			t.Fatal(err)
		}
		close(stop)
		if err := <-writerDone; err != nil {
			t.Fatal(err)
		}
		if err := s.Backup(ctx, path); err == nil {
			t.Error("a second backup overwrote the first")
		}

		target := storetest.URL(t, s.Dialect())
		if err := store.Restore(ctx, target, path); err != nil {
			t.Fatal(err)
		}
		restored := storetest.OpenURL(t, target) // opens and migrates
		var count, highest int64
		if err := restored.WriterForTest().Raw("SELECT COUNT(*), COALESCE(MAX(n), 0) FROM acked").Row().Scan(&count, &highest); err != nil {
			t.Fatal(err)
		}
		if highest < before || count != highest {
			t.Errorf("restored copy holds %d rows up to %d; every one of the %d acknowledged before the backup must be there, with no gap",
				count, highest, before)
		}
		if _, err := restored.FindUserByEmail(ctx, "nobody@example.com"); err == nil {
			t.Error("a user that never existed was found in the restored copy")
		}
	})
}
