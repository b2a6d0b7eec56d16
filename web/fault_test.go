package web_test

import (
	"context"
	"encoding/json"
	"net/http"
	"net/url"
	"strconv"
	"strings"
	"testing"
	"time"

	"github.com/airside/airside/internal/apitoken"
	"github.com/airside/airside/internal/workflow"
	"github.com/airside/airside/web"
)

// TestDatabaseOutage cuts every connection to the database in the middle of
// filings and approvals and refuses new ones, then lets it back.
func TestDatabaseOutage(t *testing.T) {
	tp := newTwoProcesses(t)
	outage := pgOutage(t, tp.dbURL)

	ctx := context.Background()
	stA, srvA, srvB := tp.stA, tp.srvA, tp.srvB
	p := tp.portalA
	ids := listingIDs(t, stA)
	tok := apiToken(t, stA, apitoken.ScopeElect)
	readTok := apiToken(t, stA, apitoken.ScopeCatalogueRead)

	// Work committed before the fault.
	approved := submitFiling(t, p, "member@nebula.example", ids["nebula"][0], "0.21")
	rev := p.client()
	rev.login("reviewer@airside.example")
	wantStatus(t, "approve before the fault", rev.post(approved, approved+"/approve", url.Values{}), http.StatusSeeOther)
	pending := submitFiling(t, p, "member@orbit.example", ids["orbit"][0], "0.22")
	carrier := p.client()
	carrier.login("admin@nebula.example")
	form := "/listings/" + itoa(ids["nebula"][1]) + "/file"
	page := carrier.get(form) // the form is open when the database goes away
	token := csrfField.FindStringSubmatch(page.body)[1]

	revToken := csrfField.FindStringSubmatch(rev.get(pending).body)[1]
	// Routing has read the catalogue once before the fault.
	wantStatus(t, "elect before the fault", apiCall(t, srvA.URL, "POST", "/api/v1/elect", tok, `{"model":"kimi-k2.5"}`), http.StatusOK)
	outage(true)
	for name, res := range map[string]response{
		"listings page":   carrier.get("/listings"),
		"filing page":     rev.get(pending),
		"approve":         rev.postRaw(pending+"/approve", url.Values{"_csrf": {revToken}}),
		"submit a filing": carrier.postRaw(form, withCSRF(fareValues(), token, "submit")),
		"readyz":          carrier.get("/readyz"),
	} {
		if res.status != http.StatusServiceUnavailable {
			t.Errorf("%s during the outage: status %d, want 503\n%.300s", name, res.status, res.body)
		}
		if name != "readyz" && !strings.Contains(res.body, "cannot reach its database") {
			t.Errorf("%s during the outage: no clear message", name)
		}
		if name != "readyz" && res.header.Get("Retry-After") == "" {
			t.Errorf("%s during the outage: a 503 without Retry-After", name)
		}
	}
	// Routing answers from the snapshot in memory, saying how old its
	// health figures are.
	api := apiCall(t, srvA.URL, "POST", "/api/v1/elect", tok, `{"model":"kimi-k2.5"}`)
	var result struct {
		Winner *string `json:"winner"`
	}
	if api.status != http.StatusOK || json.Unmarshal([]byte(api.body), &result) != nil || result.Winner == nil {
		t.Errorf("elect during the outage: %d %s, want a winner from memory", api.status, api.body)
	}
	if api.header.Get("Airside-Health-Age") == "" {
		t.Error("elect during the outage does not say how old its figures are")
	}
	whole := apiCall(t, srvA.URL, "GET", "/api/v1/catalogue", readTok, "")
	wantStatus(t, "catalogue during the outage", whole, http.StatusOK)
	wantStatus(t, "catalogue revalidated during the outage",
		apiCall(t, srvA.URL, "GET", "/api/v1/catalogue", readTok, "", "If-None-Match", whole.header.Get("ETag")), http.StatusNotModified)
	// The change feed answers what it has: everything since 0 at once, and
	// a poll at the current revision is held for its wait, then answered
	// with the same revision (no error, no revision going back).
	var feed web.CatalogueResponse
	everything := apiCall(t, srvA.URL, "GET", "/api/v1/catalogue/changes?since=0", readTok, "")
	if everything.status != http.StatusOK || json.Unmarshal([]byte(everything.body), &feed) != nil || len(feed.Listings) == 0 {
		t.Errorf("change feed since 0 during the outage: %d %.300s, want every listing from memory", everything.status, everything.body)
	}
	held := apiCall(t, srvA.URL, "GET", "/api/v1/catalogue/changes?since="+strconv.FormatInt(feed.Revision, 10)+"&wait=1s", readTok, "")
	var heldFeed web.CatalogueResponse
	if held.status != http.StatusOK || json.Unmarshal([]byte(held.body), &heldFeed) != nil || heldFeed.Revision != feed.Revision {
		t.Errorf("a held poll during the outage: %d %.300s, want revision %d", held.status, held.body, feed.Revision)
	}
	if _, err := stA.PublishDue(ctx); err == nil {
		t.Error("the scheduler claims success without a database")
	}
	healthz := carrier.get("/healthz")
	wantStatus(t, "healthz (process up) during the outage", healthz, http.StatusOK)

	outage(false)
	// The app recovers by itself: the pool reconnects on the next request.
	var back response
	for range 50 {
		if back = carrier.get("/listings"); back.status == http.StatusOK {
			break
		}
		time.Sleep(100 * time.Millisecond)
	}
	wantStatus(t, "listings after the outage", back, http.StatusOK)
	wantStatus(t, "readyz after the outage", carrier.get("/readyz"), http.StatusOK)
	f, err := stA.FindFiling(ctx, mustID(t, approved), nil)
	if err != nil || f.State != workflow.Published {
		t.Errorf("the approval committed before the fault: %v %v", f, err)
	}
	if n := countFilings(t, stA, ids["nebula"][1]); n != 0 {
		t.Errorf("the submit refused during the outage left %d filings", n)
	}
	if f, _ := stA.FindFiling(ctx, mustID(t, pending), nil); f.State != workflow.Submitted {
		t.Errorf("the pending filing is %s after the outage", f.State)
	}
	if _, err := stA.PublishDue(ctx); err != nil {
		t.Errorf("the scheduler did not recover: %v", err)
	}
	// Long polls recover too: B's listener reconnects and is woken by A.
	done := make(chan int)
	go func() {
		r := apiCall(t, srvB.URL, "GET", "/api/v1/catalogue/changes?since=27&wait=60s", readTok, "")
		var body web.CatalogueResponse
		json.Unmarshal([]byte(r.body), &body)
		done <- len(body.Listings)
	}()
	time.Sleep(3 * time.Second) // the listener retries every 2 s
	wantStatus(t, "approve after the outage", rev.post(pending, pending+"/approve", url.Values{}), http.StatusSeeOther)
	select {
	case n := <-done:
		if n != 1 {
			t.Errorf("the long poll after the outage returned %d listings", n)
		}
	case <-time.After(45 * time.Second):
		t.Error("the long poll on the other server was not woken after the outage")
	}
}

func withCSRF(v url.Values, token, op string) url.Values {
	v.Set("_csrf", token)
	v.Set("op", op)
	return v
}

func itoa(v int64) string { return strconv.FormatInt(v, 10) }
