package web_test

import (
	"database/sql"
	"io"
	"net/http"
	"net/url"
	"strings"
	"testing"
	"time"

	"github.com/airside/airside/internal/apitoken"
	"github.com/airside/airside/internal/demo"
	"github.com/airside/airside/internal/store"
	"github.com/airside/airside/internal/store/storetest"
)

// TestReadOnlyDatabaseIsSaidPlainly: a database that answers but takes no
// write (here PostgreSQL made read-only, as a replica promoted wrongly or a
// full disk would) turns /readyz to 503 with the reason in one line, answers
// a login (which writes a session) with a 503 page saying the database cannot
// take writes and Retry-After, while routing keeps answering from memory; and
// all is well again once writes are possible.
func TestReadOnlyDatabaseIsSaidPlainly(t *testing.T) {
	dbURL := storetest.URL(t, store.Postgres)
	p := portalOn(t, storetest.OpenURL(t, dbURL), io.Discard)
	st, srv := p.store, p.srv
	tok := apiToken(t, st, apitoken.ScopeCatalogueRead)
	wantStatus(t, "catalogue before", apiCall(t, srv.URL, "GET", "/api/v1/catalogue", tok, ""), http.StatusOK)

	admin, name := pgAdmin(t, dbURL)
	readOnly := func(on bool) {
		t.Helper()
		stmt := "ALTER DATABASE " + name + " RESET default_transaction_read_only"
		if on {
			stmt = "ALTER DATABASE " + name + " SET default_transaction_read_only = on"
		}
		if _, err := admin.Exec(stmt); err != nil {
			t.Fatal(err)
		}
		// Pooled connections keep their setting: drop them, so the pool
		// reconnects under the new one.
		dropConnections(t, admin, name)
	}
	readOnly(true)

	var body string
	for range 3 { // the first use of a dropped connection may fail once
		res, err := http.Get(srv.URL + "/readyz")
		if err != nil {
			t.Fatal(err)
		}
		b, _ := io.ReadAll(res.Body)
		res.Body.Close()
		if body = string(b); res.StatusCode == http.StatusServiceUnavailable && strings.Contains(body, "read-only") {
			break
		}
	}
	if !strings.Contains(body, "cannot take writes") || !strings.Contains(body, "read-only") || strings.Count(body, "\n") != 1 {
		t.Errorf("readyz on a read-only database said %q, want one line naming read-only", body)
	}

	person := p.client()
	login := person.post("/login", "/login", url.Values{"email": {"member@nebula.example"}, "password": {demo.Password}})
	if login.status != http.StatusServiceUnavailable || !strings.Contains(login.body, "cannot take writes right now (read-only)") {
		t.Errorf("login on a read-only database: status %d, want 503 saying why\n%.400s", login.status, login.body)
	}
	if login.header.Get("Retry-After") == "" {
		t.Error("the 503 has no Retry-After")
	}
	wantStatus(t, "catalogue from memory", apiCall(t, srv.URL, "GET", "/api/v1/catalogue", tok, ""), http.StatusOK)

	readOnly(false)
	ready := false
	for range 3 {
		res, err := http.Get(srv.URL + "/readyz")
		if err != nil {
			t.Fatal(err)
		}
		res.Body.Close()
		if ready = res.StatusCode == http.StatusOK; ready {
			break
		}
	}
	if !ready {
		t.Error("readyz did not recover once writes were possible")
	}
}

// TestARequestStuckOnTheDatabaseIsCutAtItsDeadline: while another session
// holds a lock the login needs (here an exclusive lock on users, as a long
// migration or a stuck transaction would), a login does not hang: at the
// request deadline its statement is cancelled and the person gets a 503
// saying the database was too slow, with Retry-After. Once the lock is gone
// the same login works.
func TestARequestStuckOnTheDatabaseIsCutAtItsDeadline(t *testing.T) {
	dbURL := storetest.URL(t, store.Postgres)
	p := portalOn(t, storetest.OpenURL(t, dbURL), io.Discard)
	p.server.RequestDeadline = time.Second

	locker, err := sql.Open("pgx", dbURL)
	if err != nil {
		t.Fatal(err)
	}
	defer locker.Close()
	tx, err := locker.Begin()
	if err != nil {
		t.Fatal(err)
	}
	if _, err := tx.Exec("LOCK TABLE users IN ACCESS EXCLUSIVE MODE"); err != nil {
		t.Fatal(err)
	}
	person := p.client()
	login := person.post("/login", "/login", url.Values{"email": {"member@nebula.example"}, "password": {demo.Password}})
	if login.status != http.StatusServiceUnavailable || !strings.Contains(login.body, "took longer than 1s to answer") {
		t.Errorf("login while users is locked: status %d, want 503 saying the database was too slow\n%s", login.status, login.body)
	}
	if login.header.Get("Retry-After") == "" {
		t.Error("the 503 has no Retry-After")
	}
	if err := tx.Rollback(); err != nil {
		t.Fatal(err)
	}
	again := p.client()
	if res := again.post("/login", "/login", url.Values{"email": {"member@nebula.example"}, "password": {demo.Password}}); res.status != http.StatusSeeOther {
		t.Errorf("login once the lock is gone: status %d, want 303\n%.400s", res.status, res.body)
	}
}
