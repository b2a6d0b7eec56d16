package web_test

import (
	"context"
	"encoding/json"
	"fmt"
	"net/http"
	"testing"
	"time"

	"github.com/airside/airside/internal/apitoken"
	"github.com/airside/airside/internal/store"
)

// TestHotPathsRunNoSQL: once the routing snapshot is warm, a catalogue 304,
// a catalogue 200 and an election run no SQL statement at all, on both
// databases.
func TestHotPathsRunNoSQL(t *testing.T) {
	for _, d := range []store.Dialect{store.SQLite, store.Postgres} {
		t.Run(string(d), func(t *testing.T) {
			p := newPortal(t, d)
			p.server.KeeperForTest().HealthEvery = time.Hour // nothing ages during the test
			tok := apiToken(t, p.store, apitoken.ScopeCatalogueRead, apitoken.ScopeElect)
			warm := apiCall(t, p.srv.URL, "GET", "/api/v1/catalogue", tok, "")
			wantStatus(t, "warm the snapshot", warm, http.StatusOK)
			apiCall(t, p.srv.URL, "POST", "/api/v1/elect", tok, `{"model":"kimi-k2.5"}`)
			// The token's first use is recorded in the background: wait until
			// the statement count settles.
			settled := p.store.Statements()
			for deadline := time.Now().Add(30 * time.Second); time.Now().Before(deadline); {
				time.Sleep(100 * time.Millisecond)
				if n := p.store.Statements(); n == settled {
					break
				} else {
					settled = n
				}
			}
			etag := warm.header.Get("ETag")
			for i := range 20 {
				wantStatus(t, "304", apiCall(t, p.srv.URL, "GET", "/api/v1/catalogue", tok, "", "If-None-Match", etag), http.StatusNotModified)
				wantStatus(t, "200", apiCall(t, p.srv.URL, "GET", "/api/v1/catalogue?model=glm-5", tok, "", "Accept-Encoding", "gzip"), http.StatusOK)
				wantStatus(t, "elect", apiCall(t, p.srv.URL, "POST", "/api/v1/elect", tok, fmt.Sprintf(`{"model":"kimi-k2.5","promptTokens":%d}`, 1000*(i+1))), http.StatusOK)
				wantStatus(t, "winner", apiCall(t, p.srv.URL, "POST", "/api/v1/elect/winner", tok, fmt.Sprintf(`{"model":"kimi-k2.5","promptTokens":%d}`, 1000*(i+1))), http.StatusOK)
			}
			if n := p.store.Statements() - settled; n != 0 {
				t.Errorf("80 hot-path requests ran %d SQL statements, want 0", n)
			}
		})
	}
}

// TestPublicationReachesAnotherProcessSnapshot: a fare published on one serve
// process is in another process's elect answers promptly (LISTEN/NOTIFY
// invalidates its snapshot), with no request-side polling of the database.
func TestPublicationReachesAnotherProcessSnapshot(t *testing.T) {
	ctx := context.Background()
	tp := newTwoProcesses(t)
	stA, srvB := tp.stA, tp.srvB
	tok := apiToken(t, stA, apitoken.ScopeElect)
	changed, err := stA.FindListing(ctx, listingIDs(t, stA)["nebula"][0], nil) // the listing publishOne re-prices
	if err != nil {
		t.Fatal(err)
	}
	model := changed.Model.Slug
	revision := func() string {
		res := apiCall(t, srvB.URL, "POST", "/api/v1/elect", tok, `{"model":"`+model+`"}`)
		wantStatus(t, "elect on B", res, http.StatusOK)
		return res.header.Get("X-Airside-Revision")
	}
	before := revision()
	publishOne(t, tp.portalA)
	published := time.Now()
	for {
		var got string
		if got = revision(); got != before {
			t.Logf("B elected on revision %s %s after A published", got, time.Since(published).Round(time.Millisecond))
			break
		}
		if time.Since(published) > 5*time.Second {
			t.Fatalf("B still elects on revision %s after A's publication", got)
		}
		time.Sleep(20 * time.Millisecond)
	}
	var body struct {
		Candidates []struct {
			ID         string
			InputPrice float64
		}
	}
	res := apiCall(t, srvB.URL, "POST", "/api/v1/elect", tok, `{"model":"`+model+`","at":"2026-12-02T20:00:00Z"}`)
	json.Unmarshal([]byte(res.body), &body)
	for _, c := range body.Candidates {
		if c.ID == "nebula/"+model && c.InputPrice != 0.41 {
			t.Errorf("B elects nebula at input %v, want the published 0.41", c.InputPrice)
		}
	}
}
