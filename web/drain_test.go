package web_test

import (
	"context"
	"fmt"
	"net/http"
	"testing"
	"time"

	"github.com/airside/airside/internal/apitoken"
	"github.com/airside/airside/internal/store"
)

// TestDrainAnswersLongPollsAndTurnsNotReady: once the process drains (the
// first step of SIGTERM), /readyz answers 503, a held long poll is answered
// at once with the current revision, and a new one does not wait.
func TestDrainAnswersLongPollsAndTurnsNotReady(t *testing.T) {
	p := newPortal(t, store.SQLite)
	tok := apiToken(t, p.store, apitoken.ScopeCatalogueRead)
	if code := readyz(t, p.srv.URL); code != http.StatusOK {
		t.Fatalf("readyz before the drain: %d", code)
	}

	// A poll at the current revision is held until something is published
	// (a revision ahead of the catalogue would be refused at once).
	rev, err := p.store.CatalogueRevision(context.Background())
	if err != nil {
		t.Fatal(err)
	}
	held := make(chan response, 1)
	go func() {
		held <- apiCall(t, p.srv.URL, "GET", fmt.Sprintf("/api/v1/catalogue/changes?since=%d&wait=60s", rev), tok, "")
	}()
	select {
	case <-held:
		t.Fatal("the long poll answered before the drain: it was not held")
	case <-time.After(300 * time.Millisecond):
	}
	p.server.Drain()
	select {
	case r := <-held:
		wantStatus(t, "held long poll", r, http.StatusOK)
	case <-time.After(20 * time.Second):
		t.Fatal("the held long poll was not answered when the process drained")
	}
	fresh := make(chan response, 1)
	go func() {
		fresh <- apiCall(t, p.srv.URL, "GET", fmt.Sprintf("/api/v1/catalogue/changes?since=%d&wait=60s", rev), tok, "")
	}()
	select {
	case r := <-fresh:
		wantStatus(t, "new long poll while draining", r, http.StatusOK)
	case <-time.After(20 * time.Second):
		t.Fatal("a new long poll waited while the process drained")
	}
	if code := readyz(t, p.srv.URL); code != http.StatusServiceUnavailable {
		t.Errorf("readyz while draining: %d, want 503", code)
	}
	p.server.Drain() // twice is harmless
}

func readyz(t *testing.T, base string) int {
	t.Helper()
	res, err := http.Get(base + "/readyz")
	if err != nil {
		t.Fatal(err)
	}
	res.Body.Close()
	return res.StatusCode
}
