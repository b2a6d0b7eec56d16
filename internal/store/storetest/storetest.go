// Package storetest gives tests a real, migrated, throw-away database: a
// temporary SQLite file, and a PostgreSQL database created for the test and
// dropped after it.
package storetest

import (
	"context"
	"crypto/rand"
	"database/sql"
	"encoding/hex"
	"fmt"
	"net/url"
	"os"
	"path/filepath"
	"testing"

	_ "github.com/jackc/pgx/v5/stdlib" // the "pgx" database/sql driver, to create and drop test databases

	"github.com/airside/airside/internal/store"
)

// AdminURL is the PostgreSQL server tests create their databases on; set
// AIRSIDE_TEST_POSTGRES_URL to use another.
func AdminURL() string {
	if u := os.Getenv("AIRSIDE_TEST_POSTGRES_URL"); u != "" {
		return u
	}
	return "postgres://postgres@127.0.0.1:5432/postgres?sslmode=disable"
}

// Dialects are the databases every store test runs on.
var Dialects = []store.Dialect{store.SQLite, store.Postgres}

// ForEach runs fn once per dialect, each on its own fresh database.
func ForEach(t *testing.T, fn func(t *testing.T, s *store.Store)) {
	t.Helper()
	for _, d := range Dialects {
		t.Run(string(d), func(t *testing.T) { fn(t, Open(t, d)) })
	}
}

// Open returns a migrated store on a fresh database of the dialect, closed and
// removed when the test ends.
func Open(t testing.TB, d store.Dialect) *store.Store {
	t.Helper()
	return OpenURL(t, URL(t, d))
}

// OpenURL returns a migrated store on the database at url (a second store
// on one database is a second serve process), closed when the test ends.
func OpenURL(t testing.TB, url string) *store.Store {
	t.Helper()
	d, _, _ := store.ParseURL(url)
	s, err := store.Open(context.Background(), url)
	if err != nil {
		t.Fatalf("open %s: %v", d, err)
	}
	t.Cleanup(func() { s.Close() })
	if err := s.Migrate(context.Background()); err != nil {
		t.Fatalf("migrate %s: %v", d, err)
	}
	return s
}

// URL creates an empty database of the dialect and returns its URL; the
// database is dropped when the test ends.
func URL(t testing.TB, d store.Dialect) string {
	t.Helper()
	if d == store.SQLite {
		return "sqlite:" + filepath.Join(t.TempDir(), "airside.db")
	}
	admin, err := sql.Open("pgx", AdminURL())
	if err == nil {
		err = admin.PingContext(context.Background())
	}
	if err != nil {
		if admin != nil {
			admin.Close()
		}
		// In CI a missing database is a failure, never a skip.
		if os.Getenv("CI") == "true" {
			t.Fatalf("PostgreSQL at %s is required with CI=true: %v", AdminURL(), err)
		}
		t.Skipf("PostgreSQL not reachable at %s (%v); set CI=true to make this a failure", AdminURL(), err)
	}
	b := make([]byte, 6)
	rand.Read(b)
	name := "airside_test_" + hex.EncodeToString(b)
	if _, err := admin.Exec("CREATE DATABASE " + name); err != nil {
		admin.Close()
		t.Fatalf("create database %s: %v", name, err)
	}
	t.Cleanup(func() {
		defer admin.Close()
		if _, err := admin.Exec("DROP DATABASE IF EXISTS " + name + " WITH (FORCE)"); err != nil {
			t.Errorf("drop database %s: %v", name, err)
		}
	})
	return withDatabase(AdminURL(), name)
}

func withDatabase(admin, name string) string {
	u, err := url.Parse(admin)
	if err != nil {
		panic(fmt.Sprintf("bad admin URL %q: %v", admin, err))
	}
	u.Path = "/" + name
	return u.String()
}
