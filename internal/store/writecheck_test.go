package store_test

import (
	"context"
	"database/sql"
	"fmt"
	"net/url"
	"strings"
	"testing"

	_ "github.com/jackc/pgx/v5/stdlib"

	"github.com/airside/airside/internal/apperr"
	"github.com/airside/airside/internal/store"
	"github.com/airside/airside/internal/store/storetest"
)

// TestCheckWriteTellsReadOnlyAndDiskFull: a database that answers pings but
// refuses writes is named for what it is, on both databases, so /readyz and
// the error pages can say "disk full" or "read-only" instead of a bare 500.
func TestCheckWriteTellsReadOnlyAndDiskFull(t *testing.T) {
	ctx := context.Background()
	t.Run("sqlite read-only", func(t *testing.T) {
		s := storetest.Open(t, store.SQLite)
		if err := s.CheckWrite(ctx); err != nil {
			t.Fatalf("a healthy database: %v", err)
		}
		// query_only makes SQLite refuse every write with SQLITE_READONLY,
		// as a read-only file or mount does.
		if err := s.WriterForTest().Exec("PRAGMA query_only = 1").Error; err != nil {
			t.Fatal(err)
		}
		wantRefusal(t, s.CheckWrite(ctx), "read-only")
		if err := s.Ping(ctx); err != nil {
			t.Errorf("ping of a read-only database: %v (it answers; only writes fail)", err)
		}
	})
	t.Run("sqlite disk full", func(t *testing.T) {
		s := storetest.Open(t, store.SQLite)
		db := s.WriterForTest()
		// Migrations that rebuild a table leave free pages a new table
		// would take without growing the file: give them back first.
		if err := db.Exec("VACUUM").Error; err != nil {
			t.Fatal(err)
		}
		var pages int64
		if err := db.Raw("PRAGMA page_count").Scan(&pages).Error; err != nil {
			t.Fatal(err)
		}
		// The file may not grow by one page more: SQLITE_FULL, as on a full disk.
		if err := db.Exec(fmt.Sprintf("PRAGMA max_page_count = %d", pages)).Error; err != nil {
			t.Fatal(err)
		}
		err := db.Exec("CREATE TABLE filler (x TEXT)").Error
		if got := store.WriteRefusal(err); got != "disk full" {
			t.Fatalf("WriteRefusal(%v) = %q, want disk full", err, got)
		}
	})
	t.Run("postgres read-only", func(t *testing.T) {
		u := storetest.URL(t, store.Postgres)
		s := storetest.OpenURL(t, u)
		if err := s.CheckWrite(ctx); err != nil {
			t.Fatalf("a healthy database: %v", err)
		}
		parsed, _ := url.Parse(u)
		name := strings.TrimPrefix(parsed.Path, "/")
		admin, err := sql.Open("pgx", storetest.AdminURL())
		if err != nil {
			t.Fatal(err)
		}
		defer admin.Close()
		if _, err := admin.Exec("ALTER DATABASE " + name + " SET default_transaction_read_only = on"); err != nil {
			t.Fatal(err)
		}
		s.Close() // new connections see the setting, as on a read-only replica
		ro, err := store.Open(ctx, u)
		if err != nil {
			t.Fatal(err)
		}
		defer ro.Close()
		wantRefusal(t, ro.CheckWrite(ctx), "read-only")
	})
}

func wantRefusal(t *testing.T, err error, why string) {
	t.Helper()
	if err == nil {
		t.Fatalf("CheckWrite passed, want a %s refusal", why)
	}
	if apperr.Code(err) != apperr.EUNAVAILABLE || !strings.Contains(apperr.Message(err), "("+why+")") || apperr.RetryAfterOf(err) <= 0 {
		t.Errorf("CheckWrite: code %q, message %q, retry after %d; want unavailable naming %s with a Retry-After",
			apperr.Code(err), apperr.Message(err), apperr.RetryAfterOf(err), why)
	}
}
