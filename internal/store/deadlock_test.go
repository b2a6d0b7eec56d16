package store_test

import (
	"context"
	"errors"
	"fmt"
	"runtime"
	"sync"
	"testing"
	"time"

	"gorm.io/gorm"

	"github.com/airside/airside/internal/demo"
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
							return tx.Exec(fmt.Sprintf("SELECT %d + 1", r)).Error
						})
					} else {
						err = db.WithContext(ctx).Exec(fmt.Sprintf("SELECT %d + 1", r)).Error
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

// TestATransactionNeverWaitsOnALoneStatement replays, step by step, the
// interleaving that froze the embedded default: a transaction holds the one
// SQLite writer connection; a statement outside any transaction starts and
// waits for that connection; then the transaction runs the same SQL text.
// With gorm's prepared-statement cache the lone statement had put the text in
// the cache "being prepared" before waiting for a connection, and the
// transaction waited on that preparation (stmt_store's Get blocks on it,
// under the cache's read lock) while holding the connection the preparation
// needed: neither moved until the lone statement's deadline. The step order
// is enforced by conditions (the pool's wait count), not by timing, so the
// case with the cache fails every time and the shipped store never does.
func TestATransactionNeverWaitsOnALoneStatement(t *testing.T) {
	for _, tc := range []struct {
		name         string
		open         func(context.Context, string) (*store.Store, error)
		wantDeadlock bool
	}{
		{"as shipped", store.Open, false},
		{"with gorm's statement cache (the freeze)", store.OpenWithStatementCacheForTest, true},
	} {
		t.Run(tc.name, func(t *testing.T) {
			s, err := tc.open(context.Background(), storetest.URL(t, store.SQLite))
			if err != nil {
				t.Fatal(err)
			}
			defer s.Close()
			db := s.WriterForTest()
			sqlDB, err := db.DB()
			if err != nil {
				t.Fatal(err)
			}
			const query = "SELECT 41 + 1"
			tx := db.Begin() // holds the only writer connection until Commit
			if tx.Error != nil {
				t.Fatal(tx.Error)
			}
			waitsBefore := sqlDB.Stats().WaitCount
			lone := make(chan error, 1)
			go func() {
				ctx, cancel := context.WithTimeout(context.Background(), 10*time.Second)
				defer cancel()
				lone <- db.WithContext(ctx).Exec(query).Error
			}()
			deadline := time.Now().Add(time.Minute)
			for sqlDB.Stats().WaitCount == waitsBefore {
				if time.Now().After(deadline) {
					t.Fatal("the lone statement never waited for the connection")
				}
				time.Sleep(time.Millisecond)
			}
			inTx := tx.Exec(query).Error
			if err := tx.Commit().Error; err != nil && !tc.wantDeadlock {
				t.Fatalf("commit: %v", err)
			}
			loneErr := <-lone
			if tc.wantDeadlock {
				if !errors.Is(inTx, context.DeadlineExceeded) {
					t.Fatalf("with the cache the transaction's statement should wait on the lone one until its deadline; got %v", inTx)
				}
				return
			}
			if inTx != nil || loneErr != nil {
				t.Fatalf("transaction's statement: %v; lone statement: %v", inTx, loneErr)
			}
		})
	}
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

// TestTwoProcessesPublishingNeverCollide: two stores on one database (two
// serve processes) publish at once; every publication succeeds and the
// revisions are numbered 1, 2, 3... with no number shared and none skipped.
func TestTwoProcessesPublishingNeverCollide(t *testing.T) {
	for _, d := range storetest.Dialects {
		t.Run(string(d), func(t *testing.T) {
			url := storetest.URL(t, d)
			a, b := storetest.OpenURL(t, url), storetest.OpenURL(t, url)
			ctx := context.Background()
			listings, admin := seedListings(t, a)
			start, err := a.CatalogueRevision(ctx)
			if err != nil {
				t.Fatal(err)
			}
			const each = 40
			var wg sync.WaitGroup
			errs := make(chan error, 2*each)
			for i, s := range []*store.Store{a, b} {
				wg.Add(1)
				go func() {
					defer wg.Done()
					for n := range each {
						// Each process its own listing (one listing's row
						// lock would make them take turns anyway), the
						// priority alternating so every call changes it.
						if err := s.SetListingPriority(ctx, admin, listings[i], int64(20000+n%2)); err != nil {
							errs <- err
						}
					}
				}()
			}
			wg.Wait()
			close(errs)
			for err := range errs {
				t.Errorf("a publication failed: %v", err)
			}
			var revs []int64
			if err := a.WriterForTest().Raw("SELECT revision FROM catalogue_revisions WHERE revision > ? ORDER BY revision", start).Scan(&revs).Error; err != nil {
				t.Fatal(err)
			}
			for i, r := range revs {
				if r != start+int64(i)+1 {
					t.Fatalf("revision %d at place %d: a gap or a repeat in %v", r, i, revs)
				}
			}
			if len(revs) < each { // calls that changed nothing publish nothing
				t.Errorf("only %d revisions from %d publications", len(revs), 2*each)
			}
		})
	}
}

// seedListings seeds the demo catalogue and returns two listings and the
// gateway admin's id.
func seedListings(t *testing.T, s *store.Store) (listings [2]int64, admin int64) {
	t.Helper()
	if _, err := demo.Seed(context.Background(), s); err != nil {
		t.Fatal(err)
	}
	u, err := s.FindUserByEmail(context.Background(), "admin@airside.example")
	if err != nil {
		t.Fatal(err)
	}
	if err := s.WriterForTest().Raw("SELECT MIN(id), MAX(id) FROM listings").Row().Scan(&listings[0], &listings[1]); err != nil {
		t.Fatal(err)
	}
	return listings, u.ID
}
