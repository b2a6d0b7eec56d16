package store_test

import (
	"context"
	"fmt"
	"runtime"
	"sync"
	"testing"
	"time"

	"gorm.io/gorm"

	"github.com/airside/airside/internal/store"
	"github.com/airside/airside/internal/store/storetest"
)

// TestWritersInAndOutOfTransactionsNeverDeadlock is the regression test of the
// embedded default freezing at start-up: gorm's prepared-statement cache and a
// full connection pool waited on each other (go-gorm/gorm#7350, #7465) when one
// goroutine held the single SQLite writer inside a transaction and needed a new
// statement while another, outside any transaction, held the cache's lock and
// waited for a connection, while the transaction waited for that very
// statement to be prepared. Each round's SQL text is new, and shared by the
// workers in and out of transactions, so every round races to prepare it;
// the mix of transactions and lone statements is what the
// preflight burst, the scheduler and the session sweep do together. It fails
// if the whole burst has not finished within its deadline (a hang, not a
// slowness: it takes well under a second when nothing is stuck).
func TestWritersInAndOutOfTransactionsNeverDeadlock(t *testing.T) {
	storetest.ForEach(t, func(t *testing.T, s *store.Store) {
		db := s.WriterForTest()
		const workers, rounds = 600, 4
		done := make(chan error, workers)
		var wg sync.WaitGroup
		for w := range workers {
			wg.Add(1)
			go func() {
				defer wg.Done()
				for r := range rounds {
					ctx, cancel := context.WithTimeout(context.Background(), 30*time.Second)
					var err error
					if w%10 == 0 {
						err = db.WithContext(ctx).Transaction(func(tx *gorm.DB) error {
							if err := tx.Exec(fmt.Sprintf("SELECT %d", w*1000+r)).Error; err != nil {
								return err
							}
							return tx.Exec(fmt.Sprintf("SELECT %d + 1", w*1000+r)).Error
						})
					} else {
						err = db.WithContext(ctx).Exec(fmt.Sprintf("SELECT %d + 1", w*1000+r)).Error
					}
					cancel()
					if err != nil {
						done <- fmt.Errorf("worker %d round %d: %w", w, r, err)
						return
					}
				}
			}()
		}
		finished := make(chan struct{})
		go func() { wg.Wait(); close(finished) }()
		select {
		case <-finished:
		case <-time.After(90 * time.Second):
			buf := make([]byte, 1<<20)
			n := runtime.Stack(buf, true)
			t.Fatalf("writers still waiting after 90 s: a deadlock\n%s", buf[:n])
		}
		close(done)
		for err := range done {
			t.Error(err)
		}
	})
}

// TestTwoProcessesMigrateOneFreshSQLiteFile: two serve processes started at
// the same moment on a fresh file both migrate; the migration lock makes the
// second wait for the first (it used to die with "table users already
// exists").
func TestTwoProcessesMigrateOneFreshSQLiteFile(t *testing.T) {
	url := storetest.URL(t, store.SQLite)
	errs := make(chan error, 4)
	for range 4 {
		go func() {
			s, err := store.Open(context.Background(), url)
			if err != nil {
				errs <- err
				return
			}
			defer s.Close()
			errs <- s.Migrate(context.Background())
		}()
	}
	for range 4 {
		if err := <-errs; err != nil {
			t.Error(err)
		}
	}
}
