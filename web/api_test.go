package web_test

import (
	"context"
	"encoding/json"
	"fmt"
	"io"
	"math"
	"net/http"
	"net/url"
	"regexp"
	"slices"
	"strings"
	"sync/atomic"
	"testing"
	"time"

	"github.com/airside/airside/internal/account"

	"github.com/airside/airside/internal/apitoken"
	"github.com/airside/airside/internal/catalogue"
	"github.com/airside/airside/internal/routing"
	"github.com/airside/airside/internal/store"
	"github.com/airside/airside/web"
)

// testTokens numbers the tokens the tests create.
var testTokens atomic.Int64

func apiToken(t testing.TB, st *store.Store, scopes ...string) string {
	t.Helper()
	admin, err := st.FindUserByEmail(context.Background(), "admin@airside.example")
	if err != nil {
		t.Fatal(err)
	}
	// Live token names are unique: number each test token.
	name := fmt.Sprintf("test %s #%d", strings.Join(scopes, "+"), testTokens.Add(1))
	tok, err := apitoken.NewService(st).Create(context.Background(), &account.Principal{User: *admin}, name, scopes)
	if err != nil {
		t.Fatal(err)
	}
	return tok
}

func apiCall(t *testing.T, base, method, path, token, body string, header ...string) response {
	t.Helper()
	req, _ := http.NewRequest(method, base+path, strings.NewReader(body))
	if token != "" {
		req.Header.Set("Authorization", "Bearer "+token)
	}
	req.Header.Set("Content-Type", "application/json")
	for i := 0; i+1 < len(header); i += 2 {
		req.Header.Set(header[i], header[i+1])
	}
	res, err := http.DefaultClient.Do(req)
	if err != nil {
		t.Fatal(err)
	}
	defer res.Body.Close()
	b, _ := io.ReadAll(res.Body)
	out := response{status: res.StatusCode, body: string(b), header: res.Header}
	checkContract(t, base, method, path, req.Header, body, out)
	return out
}

func TestAPIAuth(t *testing.T) {
	p := newPortal(t, store.SQLite)
	read := apiToken(t, p.store, apitoken.ScopeCatalogueRead)
	for _, test := range []struct {
		name, method, path, token string
		want                      int
	}{
		{"no token", "GET", "/api/v1/catalogue", "", http.StatusUnauthorized},
		{"bad token", "GET", "/api/v1/catalogue", "airside_nope", http.StatusUnauthorized},
		{"right scope", "GET", "/api/v1/catalogue", read, http.StatusOK},
		{"wrong scope for elect", "POST", "/api/v1/elect", read, http.StatusForbidden},
		{"wrong scope for metrics", "POST", "/api/v1/metrics", read, http.StatusForbidden},
		{"unknown endpoint", "GET", "/api/v1/nothing", read, http.StatusNotFound},
	} {
		res := apiCall(t, p.srv.URL, test.method, test.path, test.token, "{}")
		wantStatus(t, test.name, res, test.want)
		if test.want >= 400 {
			var body struct {
				Error struct{ Message string } `json:"error"`
			}
			if err := json.Unmarshal([]byte(res.body), &body); err != nil || body.Error.Message == "" {
				t.Errorf("%s: not a JSON error: %s", test.name, res.body)
			}
		}
		if test.want == http.StatusUnauthorized && res.header.Get("WWW-Authenticate") == "" {
			t.Errorf("%s: no WWW-Authenticate", test.name)
		}
	}
	// A revoked token stops at once.
	tokens, _ := p.store.FindTokens(context.Background(), nil)
	admin, _ := p.store.FindUserByEmail(context.Background(), "admin@airside.example")
	p.store.RevokeToken(context.Background(), admin.ID, nil, tokens[0].ID)
	wantStatus(t, "revoked", apiCall(t, p.srv.URL, "GET", "/api/v1/catalogue", read, ""), http.StatusUnauthorized)
}

func TestAPICatalogue(t *testing.T) {
	p := newPortal(t, store.SQLite)
	tok := apiToken(t, p.store, apitoken.ScopeCatalogueRead)
	res := apiCall(t, p.srv.URL, "GET", "/api/v1/catalogue", tok, "")
	wantStatus(t, "catalogue", res, http.StatusOK)
	var body web.CatalogueResponse
	if err := json.Unmarshal([]byte(res.body), &body); err != nil {
		t.Fatal(err)
	}
	etag := res.header.Get("ETag")
	if body.Revision != 26 || len(body.Listings) != 26 || etag != `W/"26"` {
		t.Fatalf("revision %d, %d listings, ETag %s", body.Revision, len(body.Listings), etag)
	}
	first := body.Listings[0]
	if first.ID == "" || first.Fare.InputPrice == "" || first.Fare.LandingFee == "" || first.Metrics != nil || body.HealthAsOf != nil {
		t.Errorf("listing %+v (health is served apart)", first)
	}
	wantStatus(t, "If-None-Match", apiCall(t, p.srv.URL, "GET", "/api/v1/catalogue", tok, "", "If-None-Match", etag), http.StatusNotModified)
	wantStatus(t, "stale ETag", apiCall(t, p.srv.URL, "GET", "/api/v1/catalogue", tok, "", "If-None-Match", `W/"25"`), http.StatusOK)
	wantStatus(t, "include something unknown", apiCall(t, p.srv.URL, "GET", "/api/v1/catalogue?include=fares", tok, ""), http.StatusUnprocessableEntity)
	one := apiCall(t, p.srv.URL, "GET", "/api/v1/catalogue?include=health", tok, "")
	json.Unmarshal([]byte(one.body), &body)
	if !strings.HasPrefix(one.header.Get("ETag"), `W/"26-`) || body.HealthAsOf == nil || body.Listings[0].Metrics == nil || body.Listings[0].Metrics.Uptime == nil {
		t.Errorf("the one-document form: ETag %s, %.300s", one.header.Get("ETag"), one.body)
	}
	glm := apiCall(t, p.srv.URL, "GET", "/api/v1/catalogue?model=glm-5", tok, "")
	json.Unmarshal([]byte(glm.body), &body)
	if len(body.Listings) != 3 || body.Listings[0].Model != "glm-5" {
		t.Errorf("?model=glm-5 gave %d listings", len(body.Listings))
	}
	// Only verified capabilities are published.
	for _, l := range body.Listings {
		if len(l.Capabilities) != 0 {
			t.Errorf("%s publishes unverified capabilities %v", l.ID, l.Capabilities)
		}
	}
}

// TestHealthMovesWithoutTheFares: after only health moved, a gateway
// revalidating the catalogue gets 304 and downloads only the health
// document, which has the new figures and a validator of its own.
func TestHealthMovesWithoutTheFares(t *testing.T) {
	ctx := context.Background()
	p := newPortal(t, store.SQLite)
	p.server.KeeperForTest().HealthEvery = time.Hour // moved by hand below
	tok := apiToken(t, p.store, apitoken.ScopeCatalogueRead, apitoken.ScopeMetricsWrite)
	uptimeOf := func(res response, id string) *float64 {
		t.Helper()
		var doc routing.HealthDocument
		if err := json.Unmarshal([]byte(res.body), &doc); err != nil {
			t.Fatal(err)
		}
		for _, l := range doc.Listings {
			if l.ID == id {
				return l.Metrics.Uptime
			}
		}
		t.Fatalf("%s is not in the health document", id)
		return nil
	}
	fares := apiCall(t, p.srv.URL, "GET", "/api/v1/catalogue", tok, "")
	health := apiCall(t, p.srv.URL, "GET", "/api/v1/catalogue/health", tok, "")
	wantStatus(t, "health", health, http.StatusOK)
	before := uptimeOf(health, "nebula/kimi-k2.5")

	minute := time.Now().UTC().Truncate(time.Minute)
	batch := fmt.Sprintf(`{"buckets":[{"listing":"nebula/kimi-k2.5","minute":%q,"requests":400,"errors":200,"ttftMsSum":80000,"outputTokens":5000,"durationMs":50000}]}`,
		minute.Format(time.RFC3339))
	wantStatus(t, "metrics", apiCall(t, p.srv.URL, "POST", "/api/v1/metrics", tok, batch), http.StatusAccepted)
	if _, err := p.server.KeeperForTest().Refresh(ctx); err != nil {
		t.Fatal(err)
	}

	wantStatus(t, "the fares after only health moved", apiCall(t, p.srv.URL, "GET", "/api/v1/catalogue", tok, "", "If-None-Match", fares.header.Get("ETag")), http.StatusNotModified)
	moved := apiCall(t, p.srv.URL, "GET", "/api/v1/catalogue/health", tok, "", "If-None-Match", health.header.Get("ETag"))
	wantStatus(t, "health after it moved", moved, http.StatusOK)
	if after := uptimeOf(moved, "nebula/kimi-k2.5"); after == nil || (before != nil && *after >= *before) {
		t.Errorf("uptime %v, then %v after half the requests failed", deref(before), deref(after))
	}
	if moved.header.Get("ETag") == health.header.Get("ETag") {
		t.Error("health moved and its ETag stayed")
	}
	wantStatus(t, "health unchanged since", apiCall(t, p.srv.URL, "GET", "/api/v1/catalogue/health", tok, "", "If-None-Match", moved.header.Get("ETag")), http.StatusNotModified)

	// Asked as a delta from the figures held before, only what moved.
	delta := apiCall(t, p.srv.URL, "GET", "/api/v1/catalogue/health?delta=true", tok, "", "If-None-Match", health.header.Get("ETag"))
	var doc routing.HealthDocument
	if err := json.Unmarshal([]byte(delta.body), &doc); err != nil {
		t.Fatal(err)
	}
	if !doc.Delta || len(doc.Listings) != 1 || doc.Listings[0].ID != "nebula/kimi-k2.5" {
		t.Errorf("delta since the figures before: %.500s", delta.body)
	}
	whole := apiCall(t, p.srv.URL, "GET", "/api/v1/catalogue/health?delta=true", tok, "", "If-None-Match", `W/"26-0000000000000000"`)
	if err := json.Unmarshal([]byte(whole.body), &doc); err != nil || doc.Delta || len(doc.Listings) != 26 {
		t.Errorf("delta from figures never served: delta %v, %d listings, want the whole document", doc.Delta, len(doc.Listings))
	}
	wantStatus(t, "delta not a boolean", apiCall(t, p.srv.URL, "GET", "/api/v1/catalogue/health?delta=yes", tok, ""), http.StatusUnprocessableEntity)
	glm := apiCall(t, p.srv.URL, "GET", "/api/v1/catalogue/health?model=glm-5", tok, "", "Accept-Encoding", "gzip")
	if glm.header.Get("Content-Encoding") != "gzip" {
		t.Errorf("health of one model, gzip asked: Content-Encoding %q", glm.header.Get("Content-Encoding"))
	}
	wantStatus(t, "health without the scope", apiCall(t, p.srv.URL, "GET", "/api/v1/catalogue/health", apiToken(t, p.store, apitoken.ScopeElect), ""), http.StatusForbidden)
}

func TestAPIChangesFeed(t *testing.T) {
	p := newPortal(t, store.SQLite)
	tok := apiToken(t, p.store, apitoken.ScopeCatalogueRead)
	var body web.CatalogueResponse
	res := apiCall(t, p.srv.URL, "GET", "/api/v1/catalogue/changes?since=20", tok, "")
	json.Unmarshal([]byte(res.body), &body)
	if body.Revision != 26 || len(body.Listings) != 6 {
		t.Errorf("since 20: revision %d, %d listings (want 26, 6)", body.Revision, len(body.Listings))
	}
	res = apiCall(t, p.srv.URL, "GET", "/api/v1/catalogue/changes?since=26", tok, "")
	json.Unmarshal([]byte(res.body), &body)
	if len(body.Listings) != 0 {
		t.Errorf("since the current revision: %d listings", len(body.Listings))
	}
	wantStatus(t, "bad since", apiCall(t, p.srv.URL, "GET", "/api/v1/catalogue/changes?since=x", tok, ""), http.StatusUnprocessableEntity)
	if res := apiCall(t, p.srv.URL, "GET", "/api/v1/catalogue/changes?since=999999&wait=30s", tok, ""); res.status != http.StatusBadRequest ||
		!strings.Contains(res.body, "ahead of the catalogue") {
		t.Errorf("a since from the future: %d %s, want 400 at once", res.status, res.body)
	}
	wantStatus(t, "bad wait", apiCall(t, p.srv.URL, "GET", "/api/v1/catalogue/changes?since=1&wait=2h", tok, ""), http.StatusUnprocessableEntity)

	// A held request is answered by a publication.
	done := make(chan web.CatalogueResponse)
	go func() {
		r := apiCall(t, p.srv.URL, "GET", "/api/v1/catalogue/changes?since=26&wait=30s", tok, "")
		var b web.CatalogueResponse
		json.Unmarshal([]byte(r.body), &b)
		done <- b
	}()
	time.Sleep(200 * time.Millisecond)
	publishOne(t, p)
	got := <-done
	if got.Revision != 27 || len(got.Listings) != 1 {
		t.Errorf("long poll answered revision %d with %d listings", got.Revision, len(got.Listings))
	}
}

// publishOne files and approves a fare through the portal.
func publishOne(t *testing.T, p *testPortal) {
	t.Helper()
	filing := submitFiling(t, p, "member@nebula.example", listingIDs(t, p.store)["nebula"][0], "0.41")
	rev := p.client()
	rev.login("reviewer@airside.example")
	wantStatus(t, "approve", rev.post(filing, filing+"/approve", url.Values{}), http.StatusSeeOther)
}

// TestAPILongPollAcrossServers: two serve processes on one PostgreSQL; a
// publication on one wakes a waiter on the other through LISTEN/NOTIFY (the
// periodic recheck is off, so nothing else could).
func TestAPILongPollAcrossServers(t *testing.T) {
	tp := newTwoProcesses(t)
	stA, srvB := tp.stA, tp.srvB

	tok := apiToken(t, stA, apitoken.ScopeCatalogueRead)
	done := make(chan web.CatalogueResponse)
	go func() {
		r := apiCall(t, srvB.URL, "GET", "/api/v1/catalogue/changes?since=26&wait=60s", tok, "")
		var body web.CatalogueResponse
		json.Unmarshal([]byte(r.body), &body)
		done <- body
	}()
	time.Sleep(300 * time.Millisecond)
	publishOne(t, tp.portalA)
	select {
	case got := <-done:
		if got.Revision != 27 || len(got.Listings) != 1 {
			t.Errorf("server B answered revision %d with %d listings", got.Revision, len(got.Listings))
		}
	case <-time.After(45 * time.Second):
		t.Fatal("server B's waiter was not woken by server A's publication")
	}
}

func TestAPIElect(t *testing.T) {
	p := newPortal(t, store.SQLite)
	tok := apiToken(t, p.store, apitoken.ScopeElect)
	res := apiCall(t, p.srv.URL, "POST", "/api/v1/elect", tok, `{"model":"kimi-k2.5","promptTokens":20000,"streaming":true,"workload":"coding"}`)
	wantStatus(t, "elect", res, http.StatusOK)
	var out struct {
		Winner     *string
		Candidates []struct {
			ID       string
			Eligible bool
			Rank     int
		}
	}
	if err := json.Unmarshal([]byte(res.body), &out); err != nil || out.Winner == nil || len(out.Candidates) != 6 {
		t.Fatalf("result %s (%v)", res.body, err)
	}
	if res.header.Get("X-Airside-Revision") != "26" {
		t.Errorf("revision header %q", res.header.Get("X-Airside-Revision"))
	}
	// Requiring tools excludes everyone: no capability is verified yet.
	res = apiCall(t, p.srv.URL, "POST", "/api/v1/elect", tok, `{"model":"kimi-k2.5","requires":["tools"]}`)
	json.Unmarshal([]byte(res.body), &out)
	if out.Winner != nil {
		t.Errorf("an unverified capability won: %s", *out.Winner)
	}
	// Usage at a cap takes a listing off the ballot.
	capped := apiCall(t, p.srv.URL, "POST", "/api/v1/elect", tok, `{"model":"kimi-k2.5","usage":{"nebula/kimi-k2.5":{"rpm":100000}}}`)
	if !strings.Contains(capped.body, "rate_cap:rpm") {
		t.Errorf("usage over the cap did not exclude: %.300s", capped.body)
	}
	// Keyed by listing id, the same; a listing of another model is no key.
	nebula := listingOf(t, p.store, "nebula", "kimi-k2.5")
	byID := apiCall(t, p.srv.URL, "POST", "/api/v1/elect", tok, fmt.Sprintf(`{"model":"kimi-k2.5","usage":{"%d":{"rpm":100000}}}`, nebula.ID))
	if !strings.Contains(byID.body, "rate_cap:rpm") {
		t.Errorf("usage keyed by listing id did not exclude: %.300s", byID.body)
	}
	all, err := p.store.FindListings(context.Background(), catalogue.ListingFilter{})
	if err != nil {
		t.Fatal(err)
	}
	other := all[0]
	for _, l := range all {
		if l.Model.Slug != "kimi-k2.5" {
			other = l
			break
		}
	}
	wrong := apiCall(t, p.srv.URL, "POST", "/api/v1/elect", tok, fmt.Sprintf(`{"model":"kimi-k2.5","usage":{"%d":{"rpm":1}}}`, other.ID))
	wantStatus(t, "usage keyed by another model's listing", wrong, http.StatusUnprocessableEntity)
	for _, bad := range []struct {
		body string
		want int
		msg  string
	}{
		{`{"model":"no-such-model"}`, http.StatusNotFound, "Unknown model"},
		{`{"model":"kimi-k2.5","routing":"fastest"}`, http.StatusUnprocessableEntity, "routing"},
		{`{"model":`, http.StatusBadRequest, "not valid JSON"},
		{`{}`, http.StatusUnprocessableEntity, "model"},
	} {
		res := apiCall(t, p.srv.URL, "POST", "/api/v1/elect", tok, bad.body)
		wantStatus(t, bad.body, res, bad.want)
		if !strings.Contains(res.body, bad.msg) {
			t.Errorf("%s: %s", bad.body, res.body)
		}
	}
	big := `{"model":"kimi-k2.5","pad":"` + strings.Repeat("x", 5<<20) + `"}`
	wantStatus(t, "oversized body", apiCall(t, p.srv.URL, "POST", "/api/v1/elect", tok, big), http.StatusRequestEntityTooLarge)
}

func TestAPIMetrics(t *testing.T) {
	p := newPortal(t, store.SQLite)
	tok := apiToken(t, p.store, apitoken.ScopeMetricsWrite)
	minute := time.Now().UTC().Truncate(time.Minute)
	batch := func(requests, errors int, extra string) string {
		return fmt.Sprintf(`{"buckets":[
			{"listing":"nebula/kimi-k2.5","minute":%q,"requests":%d,"errors":%d,"ttftMsSum":%d,"outputTokens":5000,"durationMs":50000,"inputTokens":40000,"cachedInputTokens":20000},
			{"listing":"orbit/glm-5","minute":%q,"requests":10,"errors":0,"ttftMsSum":3000,"outputTokens":1000,"durationMs":10000,"inputTokens":5000,"cachedInputTokens":0}%s]}`,
			minute.Format(time.RFC3339), requests, errors, (requests-errors)*400, minute.Add(-time.Minute).Format(time.RFC3339), extra)
	}
	wantStatus(t, "batch", apiCall(t, p.srv.URL, "POST", "/api/v1/metrics", tok, batch(50, 5, "")), http.StatusAccepted)
	wantStatus(t, "retried batch", apiCall(t, p.srv.URL, "POST", "/api/v1/metrics", tok, batch(50, 5, "")), http.StatusAccepted)
	health := func() catalogue.Health {
		ls, _ := p.store.FindListings(context.Background(), catalogue.ListingFilter{ModelSlug: "kimi-k2.5"})
		for _, l := range ls {
			if l.CarrierSlug == "nebula" {
				return l.Health
			}
		}
		return catalogue.Health{}
	}
	h := health()
	if h.UptimePct == nil || *h.UptimePct != 90 {
		t.Fatalf("uptime after a retried batch: %v (want 90: retries must not double count)", deref(h.UptimePct))
	}
	if h.CacheHitRate == nil || *h.CacheHitRate != 0.5 {
		t.Errorf("observed hit rate %v, want 0.5 (45 successes, 40,000 input tokens pass the gates)", deref(h.CacheHitRate))
	}
	// A batch with one bad bucket stores nothing and names the bucket and field.
	bad := apiCall(t, p.srv.URL, "POST", "/api/v1/metrics", tok, batch(50, 0, `,{"listing":"nebula/kimi-k2.5","minute":"2026-01-01T00:00:30Z","requests":-1}`))
	wantStatus(t, "bad bucket", bad, http.StatusUnprocessableEntity)
	for _, field := range []string{"buckets[2].requests", "buckets[2].minute"} {
		if !strings.Contains(bad.body, field) {
			t.Errorf("error does not name %s: %s", field, bad.body)
		}
	}
	if h := health(); *h.UptimePct != 90 {
		t.Errorf("a refused batch changed the metrics: uptime %v", *h.UptimePct)
	}
	for _, test := range []struct{ name, body, want string }{
		{"unknown listing", `{"buckets":[{"listing":"nobody/x","minute":"` + minute.Format(time.RFC3339) + `","requests":1}]}`, "buckets[0].listing"},
		{"duplicate bucket", `{"buckets":[{"listing":"orbit/glm-5","minute":"` + minute.Format(time.RFC3339) + `","requests":1},{"listing":"orbit/glm-5","minute":"` + minute.Format(time.RFC3339) + `","requests":2}]}`, "buckets[1].minute"},
		{"empty", `{"buckets":[]}`, "buckets"},
		{"listing not named", `{"buckets":[{"minute":"` + minute.Format(time.RFC3339) + `","requests":1}]}`, "name the listing exactly once"},
		{"listing named twice", `{"buckets":[{"listing":"orbit/glm-5","listingId":1,"minute":"` + minute.Format(time.RFC3339) + `","requests":1}]}`, "name the listing exactly once"},
	} {
		res := apiCall(t, p.srv.URL, "POST", "/api/v1/metrics", tok, test.body)
		wantStatus(t, test.name, res, http.StatusUnprocessableEntity)
		if !strings.Contains(res.body, test.want) {
			t.Errorf("%s: %s", test.name, res.body)
		}
	}
	wantStatus(t, "bad JSON", apiCall(t, p.srv.URL, "POST", "/api/v1/metrics", tok, `{"buckets":`), http.StatusBadRequest)

	// Listings are named from the routing snapshot's memory; one created
	// after the snapshot was built is found in the database instead.
	ctx := context.Background()
	orbit, _ := p.store.FindCarrierBySlug(ctx, "orbit")
	m, err := p.store.CreateModel(ctx, nil, catalogue.Model{Slug: "fresh-model", Name: "Fresh Model", ContextTokens: 8192})
	if err != nil {
		t.Fatal(err)
	}
	id, err := p.store.CreateListing(ctx, nil, orbit.ID, m.ID)
	if err != nil {
		t.Fatal(err)
	}
	if snap, _ := p.server.Routing.Current(ctx); snap.Listings() == nil {
		t.Fatal("no listing index in the snapshot")
	}
	fresh := fmt.Sprintf(`{"buckets":[{"listing":"orbit/fresh-model","minute":%q,"requests":3},{"listingId":%d,"minute":%q,"requests":4}]}`,
		minute.Format(time.RFC3339), id, minute.Add(-time.Minute).Format(time.RFC3339))
	wantStatus(t, "a listing newer than the snapshot", apiCall(t, p.srv.URL, "POST", "/api/v1/metrics", tok, fresh), http.StatusAccepted)
}

func deref(v *float64) float64 {
	if v == nil {
		return -1
	}
	return *v
}

func TestCarrierSeesItsOwnTraffic(t *testing.T) {
	p := newPortal(t, store.SQLite)
	tok := apiToken(t, p.store, apitoken.ScopeMetricsWrite)
	minute := time.Now().UTC().Truncate(time.Minute).Add(-10 * time.Minute)
	body := fmt.Sprintf(`{"buckets":[{"listing":"nebula/kimi-k2.5","minute":%q,"requests":120,"errors":12,"ttftMsSum":43200,"outputTokens":30000,"durationMs":400000,"inputTokens":100000,"cachedInputTokens":1000}]}`,
		minute.Format(time.RFC3339))
	wantStatus(t, "metrics", apiCall(t, p.srv.URL, "POST", "/api/v1/metrics", tok, body), http.StatusAccepted)
	var kimi int64
	ls, _ := p.store.FindListings(context.Background(), catalogue.ListingFilter{ModelSlug: "kimi-k2.5"})
	for _, l := range ls {
		if l.CarrierSlug == "nebula" {
			kimi = l.ID
		}
	}
	c := p.client()
	c.login("member@nebula.example")
	page := c.get(fmt.Sprintf("/listings/%d", kimi))
	if !strings.Contains(page.body, `data-testid="traffic-chart"`) || !strings.Contains(page.body, "90.00 %") {
		t.Errorf("the carrier does not see its live metrics and chart:\n%.2000s", page.body)
	}
	other := p.client()
	other.login("member@orbit.example")
	wantStatus(t, "another carrier's metrics", other.get(fmt.Sprintf("/listings/%d", kimi)), http.StatusNotFound)
}

// TestAPIErrorRules: one error rule for the API. 400 for a body that is not
// JSON or has a value of the wrong type (naming the field, in plain words),
// 422 for a value out of range, 405 with Allow, 413 for any oversized body,
// 415 for a body that is not JSON; the bearer scheme is case-insensitive and
// If-None-Match is read as RFC 9110 says.
func TestAPIErrorRules(t *testing.T) {
	p := newPortal(t, store.SQLite)
	all := apiToken(t, p.store, apitoken.Scopes...)
	minute := time.Now().UTC().Truncate(time.Minute).Format(time.RFC3339)
	for _, test := range []struct {
		name, method, path, body string
		want                     int
		field                    string // a field error.fields must name
		text                     string // in the message or a field's message
	}{
		{"a string for a number in elect", "POST", "/api/v1/elect", `{"model":"kimi-k2.5","promptTokens":"20000"}`, 400, "promptTokens", "a whole number"},
		{"a string for a number in metrics", "POST", "/api/v1/metrics", `{"buckets":[{"listing":"nebula/kimi-k2.5","minute":"` + minute + `","requests":"5"}]}`, 400, "buckets.requests", "a whole number"},
		{"a string inside observed", "POST", "/api/v1/elect", `{"model":"kimi-k2.5","observed":{"cacheHitRate":"half"}}`, 400, "observed.cacheHitRate", "a number"},
		{"a string for a weight", "POST", "/api/v1/elect", `{"model":"kimi-k2.5","weights":{"price":"1"}}`, 400, "weights.price", "a number"},
		{"an unknown routing mode", "POST", "/api/v1/elect", `{"model":"kimi-k2.5","routing":"fastest"}`, 422, "routing", "unknown routing mode"},
		{"an object for a list", "POST", "/api/v1/elect", `{"model":"kimi-k2.5","requires":{"tools":true}}`, 400, "requires", "a list"},
		{"a negative usage", "POST", "/api/v1/elect", `{"model":"kimi-k2.5","usage":{"nebula/kimi-k2.5":{"rpm":-1}}}`, 422, "usage.nebula/kimi-k2.5.rpm", "must not be negative"},
		{"usage of an unknown listing", "POST", "/api/v1/elect", `{"model":"kimi-k2.5","usage":{"999999":{"rpm":1}}}`, 422, "usage.999999", "not a listing"},
		{"weights with none positive", "POST", "/api/v1/elect", `{"model":"kimi-k2.5","weights":{}}`, 422, "weights", ""},
		{"a key twice (F8)", "POST", "/api/v1/elect", `{"model":"kimi-k2.5","promptTokens":10,"promptTokens":200000}`, 400, "promptTokens", "more than once"},
		{"a key twice in a bucket (F8)", "POST", "/api/v1/metrics", `{"buckets":[{"listing":"nebula/kimi-k2.5","minute":"` + minute + `","requests":5,"requests":500}]}`, 400, "buckets[0].requests", "more than once"},
		{"a key twice in the second bucket, once escaped", "POST", "/api/v1/metrics", `{"buckets":[{"listing":"nebula/kimi-k2.5","minute":"` + minute + `","requests":5},{"listing":"nebula/kimi-k2.5","minute":"` + minute + `","requests":5,"requ\u0065sts":6}]}`, 400, "buckets[1].requests", "more than once"},
		{"a key twice under a numeric name", "POST", "/api/v1/elect", `{"model":"kimi-k2.5","usage":{"7":{"rpm":1,"rpm":2}}}`, 400, "usage.7.rpm", "more than once"},
		{"invalid UTF-8", "POST", "/api/v1/elect", "{\"model\":\"kimi-k2.5\xff\"}", 400, "", "not valid JSON"},
		{"an unknown field, a typo", "POST", "/api/v1/elect", `{"model":"kimi-k2.5","promptToken":20000}`, 400, "promptToken", "unknown field"},
		{"an unknown field in a bucket", "POST", "/api/v1/metrics", `{"buckets":[{"listing":"nebula/kimi-k2.5","minute":"` + minute + `","requests":5,"request":7}]}`, 400, "request", "unknown field"},
		{"a body nested too deep", "POST", "/api/v1/elect", `{"model":"kimi-k2.5","observed":{"x":` + strings.Repeat("[", 40) + strings.Repeat("]", 40) + `}}`, 400, "", "deeper"},
		{"weights overflowing their sum (F7)", "POST", "/api/v1/elect", `{"model":"kimi-k2.5","weights":{"price":1e308,"uptime":1e308}}`, 422, "weights", "relative"},
		{"a bucket without requests", "POST", "/api/v1/metrics", `{"buckets":[{"listing":"nebula/kimi-k2.5","minute":"` + minute + `"}]}`, 422, "buckets[0].requests", "required"},
		{"an empty batch", "POST", "/api/v1/metrics", `{"buckets":[]}`, 422, "buckets", ""},
		{"a model name too long", "GET", "/api/v1/catalogue?model=" + strings.Repeat("m", 201), "", 422, "model", ""},
		{"an unknown model in the catalogue", "GET", "/api/v1/catalogue?model=no-such-model", "", 404, "", "Unknown model"},
		{"an unknown model in health", "GET", "/api/v1/catalogue/health?model=no-such-model", "", 404, "", "Unknown model"},
		{"an unknown model in elect", "POST", "/api/v1/elect", `{"model":"no-such-model"}`, 404, "", "Unknown model"},
		{"a wait as a bare number of seconds", "GET", "/api/v1/catalogue/changes?since=0&wait=1", "", 200, "", ""},
		{"a wait too long", "GET", "/api/v1/catalogue/changes?since=0&wait=2m", "", 422, "wait", ""},
	} {
		res := apiCall(t, p.srv.URL, test.method, test.path, all, test.body)
		wantStatus(t, test.name, res, test.want)
		if test.want < 400 {
			continue
		}
		var body struct {
			// RFC 9457 problem details...
			Type, Title, Detail string
			Status              int
			Fields              map[string]string
			// ...and the 1.x envelope beside them, for one version.
			Error struct {
				Status  int
				Message string
				Fields  map[string]string
			}
		}
		if err := json.Unmarshal([]byte(res.body), &body); err != nil || body.Error.Status != test.want {
			t.Errorf("%s: not the error envelope: %s", test.name, res.body)
			continue
		}
		if ct := res.header.Get("Content-Type"); ct != "application/problem+json" || !strings.HasPrefix(body.Type, web.ProblemTypeBase) ||
			body.Status != test.want || body.Detail != body.Error.Message || body.Title == "" || len(body.Fields) != len(body.Error.Fields) {
			t.Errorf("%s: not problem details (%s): %s", test.name, ct, res.body)
		}
		if test.field != "" && body.Error.Fields[test.field] == "" {
			t.Errorf("%s: fields %v do not name %s", test.name, body.Error.Fields, test.field)
		}
		if test.text != "" && !strings.Contains(res.body, test.text) {
			t.Errorf("%s: %s lacks %q", test.name, res.body, test.text)
		}
		for _, goName := range []string{"int64", "float64", "[]string", "json:", "Go value"} {
			if strings.Contains(res.body, goName) {
				t.Errorf("%s: the message shows Go's words (%s): %s", test.name, goName, res.body)
			}
		}
	}

	wrongMethod := apiCall(t, p.srv.URL, "DELETE", "/api/v1/catalogue", all, "")
	wantStatus(t, "a wrong method", wrongMethod, http.StatusMethodNotAllowed)
	if wrongMethod.header.Get("Allow") != "GET" {
		t.Errorf("Allow %q", wrongMethod.header.Get("Allow"))
	}
	plain := apiCall(t, p.srv.URL, "POST", "/api/v1/elect", all, `{"model":"kimi-k2.5"}`, "Content-Type", "text/plain")
	wantStatus(t, "a body that is not JSON by its type", plain, http.StatusUnsupportedMediaType)

	// An oversized body sent chunked (no Content-Length) is 413 too.
	req, _ := http.NewRequest("POST", p.srv.URL+"/api/v1/metrics", io.MultiReader(strings.NewReader(`{"buckets":[`), strings.NewReader(strings.Repeat(" ", 5<<20)), strings.NewReader(`]}`)))
	req.ContentLength = -1
	req.Header.Set("Authorization", "Bearer "+all)
	req.Header.Set("Content-Type", "application/json")
	chunked, err := http.DefaultClient.Do(req)
	if err != nil {
		t.Fatal(err)
	}
	chunked.Body.Close()
	if chunked.StatusCode != http.StatusRequestEntityTooLarge {
		t.Errorf("an oversized chunked body: %d", chunked.StatusCode)
	}

	lower := apiCall(t, p.srv.URL, "GET", "/api/v1/catalogue", "", "", "Authorization", "bearer "+all)
	wantStatus(t, "a lower-case bearer scheme", lower, http.StatusOK)
	etag := lower.header.Get("ETag")
	for _, inm := range []string{etag, strings.TrimPrefix(etag, "W/"), `"1", ` + etag, "*"} {
		wantStatus(t, "If-None-Match: "+inm, apiCall(t, p.srv.URL, "GET", "/api/v1/catalogue", all, "", "If-None-Match", inm), http.StatusNotModified)
	}
	wantStatus(t, "If-None-Match of another revision", apiCall(t, p.srv.URL, "GET", "/api/v1/catalogue", all, "", "If-None-Match", `"1", W/"2"`), http.StatusOK)
}

// TestAPIElectsAtTheServersTime: without "at" the API elects at the server's
// time, so the peak prices in force apply; the CLI stays pure.
func TestAPIElectsAtTheServersTime(t *testing.T) {
	p := newPortal(t, store.SQLite)
	tok := apiToken(t, p.store, apitoken.ScopeElect)
	inputPrices := func(body string) map[string]float64 {
		res := apiCall(t, p.srv.URL, "POST", "/api/v1/elect", tok, body)
		wantStatus(t, body, res, http.StatusOK)
		var out struct {
			Candidates []struct {
				ID         string
				InputPrice float64
			}
		}
		json.Unmarshal([]byte(res.body), &out)
		m := map[string]float64{}
		for _, c := range out.Candidates {
			m[c.ID] = c.InputPrice
		}
		return m
	}
	for _, hour := range []int{3, 20} { // inside and outside the demo's 01-16 UTC peak window
		at := time.Date(2026, 12, 2, hour, 0, 0, 0, time.UTC)
		p.store.Now = func() time.Time { return at }
		implicit := inputPrices(`{"model":"deepseek-v3.2"}`)
		explicit := inputPrices(`{"model":"deepseek-v3.2","at":"` + at.Format(time.RFC3339) + `"}`)
		if fmt.Sprint(implicit) != fmt.Sprint(explicit) {
			t.Errorf("at %02d:00 without at %v, with it %v", hour, implicit, explicit)
		}
	}
	p.store.Now = func() time.Time { return time.Date(2026, 12, 2, 3, 0, 0, 0, time.UTC) }
	peak := inputPrices(`{"model":"deepseek-v3.2"}`)
	p.store.Now = func() time.Time { return time.Date(2026, 12, 2, 20, 0, 0, 0, time.UTC) }
	if off := inputPrices(`{"model":"deepseek-v3.2"}`); fmt.Sprint(peak) == fmt.Sprint(off) {
		t.Errorf("peak and off-peak elections priced alike (%v): the server's time was not applied", peak)
	}
}

// TestAPIElectWinnerEqualsElect: the winner-only endpoint, served from the
// compiled ballot, names the same winner with the same score as the full
// election, across modes, workloads, caps, capabilities, custom weights and
// times; its errors are the full election's.
func TestAPIElectWinnerEqualsElect(t *testing.T) {
	p := newPortal(t, store.SQLite)
	tok := apiToken(t, p.store, apitoken.ScopeElect)
	for _, body := range []string{
		`{"model":"kimi-k2.5"}`,
		`{"model":"kimi-k2.5","promptTokens":20000,"streaming":true,"workload":"coding"}`,
		`{"model":"kimi-k2.5","promptTokens":120000,"routing":"price","sessionOpening":true}`,
		`{"model":"kimi-k2.5","routing":"latency","streaming":true}`,
		`{"model":"kimi-k2.5","routing":"throughput","workload":"chat","cacheHitRate":0.7,"cacheOutputRatio":0.05}`,
		`{"model":"kimi-k2.5","promptTokens":9000,"observed":{"cacheHitRate":0.2}}`,
		`{"model":"kimi-k2.5","usage":{"nebula/kimi-k2.5":{"rpm":100000}}}`,
		`{"model":"kimi-k2.5","weights":{"price":1,"uptime":0.1}}`,
		`{"model":"kimi-k2.5","at":"2026-12-02T12:00:00Z","streaming":true}`,
		`{"model":"kimi-k2.5","requires":["tools"]}`,
		`{"model":"glm-5","promptTokens":40000}`,
	} {
		var full struct {
			Winner     *string
			Candidates []struct {
				ID    string
				Score *float64
			}
		}
		res := apiCall(t, p.srv.URL, "POST", "/api/v1/elect", tok, body)
		wantStatus(t, body, res, http.StatusOK)
		if err := json.Unmarshal([]byte(res.body), &full); err != nil {
			t.Fatal(err)
		}
		var quick struct {
			Winner *string
			Score  *float64
		}
		res = apiCall(t, p.srv.URL, "POST", "/api/v1/elect/winner", tok, body)
		wantStatus(t, body, res, http.StatusOK)
		if err := json.Unmarshal([]byte(res.body), &quick); err != nil {
			t.Fatal(err)
		}
		switch {
		case (full.Winner == nil) != (quick.Winner == nil):
			t.Errorf("%s: winner %v, the full election %v", body, quick.Winner, full.Winner)
		case full.Winner != nil:
			var want float64
			for _, c := range full.Candidates {
				if c.ID == *full.Winner {
					want = *c.Score
				}
			}
			if *quick.Winner != *full.Winner || quick.Score == nil || *quick.Score != want {
				t.Errorf("%s: winner %s at %v, the full election %s at %v", body, *quick.Winner, quick.Score, *full.Winner, want)
			}
		}
		if res.header.Get("X-Airside-Revision") == "" {
			t.Error("no revision header")
		}
	}
	wantStatus(t, "unknown model", apiCall(t, p.srv.URL, "POST", "/api/v1/elect/winner", tok, `{"model":"nope"}`), http.StatusNotFound)
	wantStatus(t, "bad routing", apiCall(t, p.srv.URL, "POST", "/api/v1/elect/winner", tok, `{"model":"kimi-k2.5","routing":"fastest"}`), http.StatusUnprocessableEntity)
}

// TestAPIMetricsGatewayFiguresAndDemand: the reference gateway's further
// figures and its demand rows go through the contract (checked against
// docs/openapi.yaml by apiCall), are named by row and field when wrong, and
// a batch may carry demand alone.
func TestAPIMetricsGatewayFiguresAndDemand(t *testing.T) {
	p := newPortal(t, store.SQLite)
	tok := apiToken(t, p.store, apitoken.ScopeMetricsWrite)
	minute := time.Now().UTC().Truncate(time.Minute).Format(time.RFC3339)
	body := fmt.Sprintf(`{"buckets":[{"listing":"nebula/kimi-k2.5","minute":%q,"requests":12,"errors":1,"routed":8,"pinned":1,"exploration":1,
		"fallback":1,"rateLimited":2,"inputTokens":5000,"cachedInputTokens":1000,"cacheReadTokens":900,"cacheWriteTokens":100,"toolCalls":3,"malformedToolCalls":1}],
		"demand":[{"model":"kimi-k2.5","workload":"coding","minute":%q,"requests":9,"promptTokens":90000},
		{"model":"kimi-k2.5","workload":"general","minute":%q,"requests":3,"promptTokens":300}]}`, minute, minute, minute)
	res := apiCall(t, p.srv.URL, "POST", "/api/v1/metrics", tok, body)
	wantStatus(t, "a batch with the gateway's figures and demand", res, http.StatusAccepted)
	if !strings.Contains(res.body, `"demand":2`) || !strings.Contains(res.body, `"accepted":1`) {
		t.Errorf("answer %s, want 1 bucket and 2 demand rows accepted", res.body)
	}
	mix, err := p.store.DemandMix(context.Background(), "kimi-k2.5", time.Now().Add(-time.Hour))
	if err != nil || mix["coding"].Requests != 9 || mix["general"].Requests != 3 {
		t.Errorf("the stored mix: %+v %v", mix, err)
	}
	onlyDemand := fmt.Sprintf(`{"buckets":[],"demand":[{"model":"glm-5","workload":"chat","minute":%q,"requests":1}]}`, minute)
	wantStatus(t, "demand alone", apiCall(t, p.srv.URL, "POST", "/api/v1/metrics", tok, onlyDemand), http.StatusAccepted)
	// A row that replays a recorded one with other figures is refused
	// alone: the new bucket beside it is stored, and the 409 says so.
	next := time.Now().UTC().Truncate(time.Minute).Add(-time.Minute).Format(time.RFC3339)
	conflicting := fmt.Sprintf(`{"buckets":[{"listing":"nebula/kimi-k2.5","minute":%q,"requests":5}],
		"demand":[{"model":"glm-5","workload":"chat","minute":%q,"requests":2}]}`, next, minute)
	res = apiCall(t, p.srv.URL, "POST", "/api/v1/metrics", tok, conflicting)
	if res.status != http.StatusConflict || !strings.Contains(res.body, "demand[0]") {
		t.Errorf("a batch whose demand replays with other figures: %d %s, want 409 naming demand[0]", res.status, res.body)
	}
	ids, err := p.store.ListingIDsBySlug(context.Background())
	if err != nil {
		t.Fatal(err)
	}
	series, err := p.store.MetricSeries(context.Background(), ids["nebula/kimi-k2.5"], time.Now().Add(-3*time.Minute), time.Minute)
	if err != nil {
		t.Fatal(err)
	}
	var requests int64
	for _, pt := range series {
		requests += pt.Requests
	}
	if requests != 17 {
		t.Errorf("nebula's minutes hold %d requests after the batch refused in part, want the first batch's 12 and its new minute's 5", requests)
	}
	// The gateway admin sees the refusal on /operations.
	staff := p.client()
	staff.login("reviewer@airside.example")
	ops := staff.get("/operations").body
	if !strings.Contains(ops, `data-testid="ops-refusals"`) || !strings.Contains(ops, "0 bucket(s) and 1 demand row(s) refused, the batch&#39;s other rows stored") {
		t.Errorf("operations does not show the refused row:\n%s", regexp.MustCompile(`(?s)data-testid="ops-refusals".{0,600}`).FindString(ops))
	}
	for _, test := range []struct {
		name, body, field string
	}{
		{"more served than succeeded", fmt.Sprintf(`{"buckets":[{"listing":"nebula/kimi-k2.5","minute":%q,"requests":2,"routed":3}]}`, minute), "buckets[0].routed"},
		{"an unknown workload", fmt.Sprintf(`{"buckets":[],"demand":[{"model":"m","workload":"agents","minute":%q,"requests":1}]}`, minute), "demand[0].workload"},
		{"nothing at all", `{"buckets":[]}`, "buckets"},
	} {
		bad := apiCall(t, p.srv.URL, "POST", "/api/v1/metrics", tok, test.body)
		if bad.status != http.StatusUnprocessableEntity || !strings.Contains(bad.body, test.field) {
			t.Errorf("%s: %d %s, want 422 naming %s", test.name, bad.status, bad.body, test.field)
		}
	}
}

// TestAPIElectTakesAPolicyAndTheLimits: POST /api/v1/elect answers under
// the share policy (shares adding to 1, ranked by share, the order of
// tries), excludes a listing the asking gateway holds back, refuses an
// unknown policy or breaker state naming the field, and its winner-only
// twin agrees (the contract's document checks every answer).
func TestAPIElectTakesAPolicyAndTheLimits(t *testing.T) {
	p := newPortal(t, store.SQLite)
	tok := apiToken(t, p.store, apitoken.ScopeElect)
	res := apiCall(t, p.srv.URL, "POST", "/api/v1/elect", tok, `{"model":"kimi-k2.5","policy":"share"}`)
	wantStatus(t, "share", res, http.StatusOK)
	var out struct {
		Winner     *string
		Policy     string
		Order      []string
		Candidates []struct {
			ID       string
			Eligible bool
			Excluded []string
			Rank     int
			Share    float64
		}
	}
	if err := json.Unmarshal([]byte(res.body), &out); err != nil || out.Winner == nil || out.Policy != "share" {
		t.Fatalf("result %.600s (%v)", res.body, err)
	}
	var sum float64
	byRank := map[int]float64{}
	for _, c := range out.Candidates {
		if c.Eligible {
			sum += c.Share
			byRank[c.Rank] = c.Share
		}
	}
	if math.Abs(sum-1) > 1e-9 || byRank[1] < byRank[2] || len(out.Order) == 0 || out.Order[0] != *out.Winner {
		t.Errorf("shares %v adding to %v, order %v, winner %s", byRank, sum, out.Order, *out.Winner)
	}
	winner := *out.Winner
	held := apiCall(t, p.srv.URL, "POST", "/api/v1/elect", tok, `{"model":"kimi-k2.5","state":{"`+winner+`":{"backoff":true}}}`)
	wantStatus(t, "state", held, http.StatusOK)
	if err := json.Unmarshal([]byte(held.body), &out); err != nil || out.Winner == nil || *out.Winner == winner || out.Policy != "election" {
		t.Fatalf("held back: %.600s", held.body)
	}
	for _, c := range out.Candidates {
		if c.ID == winner && (c.Eligible || len(c.Excluded) != 1 || c.Excluded[0] != "backoff") {
			t.Errorf("the listing in backoff: %+v", c)
		}
	}
	quick := apiCall(t, p.srv.URL, "POST", "/api/v1/elect/winner", tok, `{"model":"kimi-k2.5","state":{"`+winner+`":{"backoff":true}}}`)
	if !strings.Contains(quick.body, `"winner":"`+*out.Winner+`"`) {
		t.Errorf("the winner-only answer %s, the full one %s", quick.body, *out.Winner)
	}
	for body, field := range map[string]string{
		`{"model":"kimi-k2.5","policy":"lottery"}`:                            "policy",
		`{"model":"kimi-k2.5","state":{"` + winner + `":{"breaker":"ajar"}}}`: "state." + winner + ".breaker",
		`{"model":"kimi-k2.5","state":{"nobody/kimi-k2.5":{"backoff":true}}}`: "state.nobody/kimi-k2.5",
	} {
		bad := apiCall(t, p.srv.URL, "POST", "/api/v1/elect", tok, body)
		if bad.status != http.StatusUnprocessableEntity || !strings.Contains(bad.body, field) {
			t.Errorf("%s: %d %s, want 422 naming %s", body, bad.status, bad.body, field)
		}
	}
}

// TestAPIShapeHolders: a gateway's report of shape holders is stored once
// per shape, minute and source (a retry counts none new), refused whole
// naming the row and field when one row is wrong, and needs metrics:write.
func TestAPIShapeHolders(t *testing.T) {
	p := newPortal(t, store.SQLite)
	tok := apiToken(t, p.store, apitoken.ScopeMetricsWrite)
	ids := listingIDs(t, p.store)
	nebula := listingOf(t, p.store, "nebula", "kimi-k2.5")
	minute := time.Now().UTC().Truncate(time.Minute).Add(-time.Minute)
	row := func(listing int64, model string, m time.Time) string {
		return fmt.Sprintf(`{"model":%q,"workload":"general","cacheRelevant":false,"listingId":%d,"minute":%q,"source":"gw-1"}`, model, listing, m.Format(time.RFC3339))
	}
	orbit := listingOf(t, p.store, "orbit", "kimi-k2.5")
	moved := strings.Replace(row(orbit.ID, "kimi-k2.5", minute.Add(-2*time.Minute)), `"source"`, `"second":40,"source"`, 1)
	good := `{"holders":[` + row(nebula.ID, "kimi-k2.5", minute) + `,` + moved + `,` + row(nebula.ID, "kimi-k2.5", minute.Add(-time.Minute)) + `]}`
	res := apiCall(t, p.srv.URL, "POST", "/api/v1/metrics/holders", tok, good)
	wantStatus(t, "holders", res, http.StatusAccepted)
	if !strings.Contains(res.body, `"accepted":3`) {
		t.Errorf("first report: %s", res.body)
	}
	if res := apiCall(t, p.srv.URL, "POST", "/api/v1/metrics/holders", tok, good); !strings.Contains(res.body, `"accepted":0`) {
		t.Errorf("a retried report: %d %s, want accepted and nothing new", res.status, res.body)
	}
	stored, err := p.store.ShapeHolders(context.Background(), []string{"kimi-k2.5"}, minute.Add(-time.Hour), minute.Add(time.Hour))
	got := stored["kimi-k2.5"]
	if err != nil || len(got) != 3 || got[2].ListingID != nebula.ID || got[2].Source != "gw-1" || got[0].ListingID != orbit.ID ||
		!got[0].At().Equal(minute.Add(-2*time.Minute+40*time.Second)) {
		t.Errorf("stored holders %+v %v, want orbit from the 40th second two minutes back, then nebula", got, err)
	}
	other := ids["orbit"][0]
	bad := `{"holders":[` + row(nebula.ID, "kimi-k2.5", minute.Add(-2*time.Minute)) + `,` + row(nebula.ID, "glm-5", minute) + `]}`
	res = apiCall(t, p.srv.URL, "POST", "/api/v1/metrics/holders", tok, bad)
	wantStatus(t, "another model's listing", res, http.StatusUnprocessableEntity)
	if !strings.Contains(res.body, "holders[1].listingId") {
		t.Errorf("the refusal does not name the row and field: %s", res.body)
	}
	if stored, _ := p.store.ShapeHolders(context.Background(), []string{"kimi-k2.5"}, minute.Add(-time.Hour), minute.Add(time.Hour)); len(stored["kimi-k2.5"]) != 3 {
		t.Errorf("a refused report stored %d rows, want the 3 before it", len(got))
	}
	wantStatus(t, "without metrics:write", apiCall(t, p.srv.URL, "POST", "/api/v1/metrics/holders", apiToken(t, p.store, apitoken.ScopeCatalogueRead),
		`{"holders":[`+row(other, "glm-5", minute)+`]}`), http.StatusForbidden)
	wantStatus(t, "an unknown member", apiCall(t, p.srv.URL, "POST", "/api/v1/metrics/holders", tok, `{"holders":[],"extra":1}`), http.StatusBadRequest)
}

// TestAPIProjectMinutes: a gateway's report of projects' minutes is stored
// once per project, listing, minute and source with the listing's model
// (a retry counts none new), refused whole naming the row and field when
// one row is wrong, and needs metrics:write.
func TestAPIProjectMinutes(t *testing.T) {
	p := newPortal(t, store.SQLite)
	tok := apiToken(t, p.store, apitoken.ScopeMetricsWrite)
	nebula := listingOf(t, p.store, "nebula", "kimi-k2.5")
	minute := time.Now().UTC().Truncate(time.Minute).Add(-time.Minute)
	row := func(project string, listing int64, m time.Time, cached int64) string {
		return fmt.Sprintf(`{"project":%q,"listingId":%d,"minute":%q,"source":"gw-1","answers":4,"inputTokens":40000,"cachedInputTokens":%d,"outputTokens":800}`,
			project, listing, m.Format(time.RFC3339), cached)
	}
	good := `{"projects":[` + row("prj-3f9a2c1b04d2", nebula.ID, minute, 36000) + `,` + row("prj-77aa00bb11cc", nebula.ID, minute, 0) + `]}`
	res := apiCall(t, p.srv.URL, "POST", "/api/v1/metrics/projects", tok, good)
	wantStatus(t, "projects", res, http.StatusAccepted)
	if !strings.Contains(res.body, `"accepted":2`) {
		t.Errorf("first report: %s", res.body)
	}
	if res := apiCall(t, p.srv.URL, "POST", "/api/v1/metrics/projects", tok, good); !strings.Contains(res.body, `"accepted":0`) {
		t.Errorf("a retried report: %d %s, want accepted and nothing new", res.status, res.body)
	}
	stored, err := p.store.ProjectHours(context.Background(), []string{"kimi-k2.5"}, minute.Add(-time.Hour), minute.Add(time.Hour))
	got := stored["kimi-k2.5"]
	if err != nil || len(got) != 2 || got[0].Project != "prj-3f9a2c1b04d2" || got[0].CachedInputTokens != 36000 || got[0].ListingID != nebula.ID {
		t.Errorf("stored %+v %v, want the two projects' hours on nebula under kimi-k2.5", got, err)
	}
	for _, c := range []struct{ body, field string }{
		{`{"projects":[` + row("prj-3f9a2c1b04d2", nebula.ID, minute.Add(-time.Minute), 0) + `,` + row("Acme Corp", nebula.ID, minute, 0) + `]}`, "projects[1].project"},
		{`{"projects":[` + row("prj-3f9a2c1b04d2", nebula.ID, minute.Add(-time.Minute), 50000) + `]}`, "projects[0].cachedInputTokens"},
		{`{"projects":[` + row("prj-3f9a2c1b04d2", 999999, minute, 0) + `]}`, "projects[0].listingId"},
		{`{"projects":[` + strings.Replace(row("prj-3f9a2c1b04d2", nebula.ID, minute.Add(-time.Minute), 0), `}`, `,"cacheHitRate":1.5}`, 1) + `]}`,
			"projects[0].cacheHitRate"},
		{`{"projects":[` + strings.Replace(row("prj-3f9a2c1b04d2", nebula.ID, minute.Add(-time.Minute), 0), `}`, `,"cacheOutputRatio":-1}`, 1) + `]}`,
			"projects[0].cacheOutputRatio"},
	} {
		res := apiCall(t, p.srv.URL, "POST", "/api/v1/metrics/projects", tok, c.body)
		if res.status != http.StatusUnprocessableEntity || !strings.Contains(res.body, c.field) {
			t.Errorf("%s: %d %s, want 422 naming %s", c.body, res.status, res.body, c.field)
		}
	}
	if stored, _ := p.store.ProjectHours(context.Background(), []string{"kimi-k2.5"}, minute.Add(-time.Hour), minute.Add(time.Hour)); len(stored["kimi-k2.5"]) != 2 {
		t.Errorf("a refused report stored rows: %d, want the 2 before it", len(stored["kimi-k2.5"]))
	}
	// The rates a project declares are kept with its hour.
	declared := `{"projects":[` + strings.Replace(row("prj-3f9a2c1b04d2", nebula.ID, minute.Add(-time.Minute), 0), `}`,
		`,"cacheHitRate":0.8,"cacheOutputRatio":2.5}`, 1) + `]}`
	wantStatus(t, "a minute declaring rates", apiCall(t, p.srv.URL, "POST", "/api/v1/metrics/projects", tok, declared), http.StatusAccepted)
	stored, _ = p.store.ProjectHours(context.Background(), []string{"kimi-k2.5"}, minute.Add(-time.Hour), minute.Add(time.Hour))
	if i := slices.IndexFunc(stored["kimi-k2.5"], func(h catalogue.ProjectHour) bool {
		return h.Project == "prj-3f9a2c1b04d2" && h.CacheHitRate != nil && *h.CacheHitRate == 0.8 && h.CacheOutputRatio != nil && *h.CacheOutputRatio == 2.5
	}); i < 0 {
		t.Errorf("stored %+v, want the project's hour with its declared 0.8 and 2.5", stored["kimi-k2.5"])
	}
	wantStatus(t, "without metrics:write", apiCall(t, p.srv.URL, "POST", "/api/v1/metrics/projects", apiToken(t, p.store, apitoken.ScopeCatalogueRead), good),
		http.StatusForbidden)
	wantStatus(t, "an unknown member", apiCall(t, p.srv.URL, "POST", "/api/v1/metrics/projects", tok, `{"projects":[],"extra":1}`), http.StatusBadRequest)
}

// TestAPIElectHonoursTheMarket: /elect takes election.md sec. 7's request
// fields on the published catalogue: the demo's one ZDR carrier (Fathom) is
// all a zdr request leaves, so it is pinned; a provider order puts its
// listing first; a bad preference is refused naming it.
func TestAPIElectHonoursTheMarket(t *testing.T) {
	p := newPortal(t, store.SQLite)
	tok := apiToken(t, p.store, apitoken.ScopeElect)
	var out struct {
		Winner     *string
		Pinned     bool
		Order      []string
		Candidates []struct {
			ID       string
			Eligible bool
			Excluded []string
		}
	}
	res := apiCall(t, p.srv.URL, "POST", "/api/v1/elect", tok, `{"model":"kimi-k2.5","promptTokens":2000,"provider":{"zdr":true}}`)
	wantStatus(t, "elect with zdr", res, http.StatusOK)
	if err := json.Unmarshal([]byte(res.body), &out); err != nil {
		t.Fatal(err)
	}
	if out.Winner == nil || *out.Winner != "fathom/kimi-k2.5" || !out.Pinned || len(out.Order) != 1 {
		t.Errorf("zdr: winner %v, pinned %v, order %v", out.Winner, out.Pinned, out.Order)
	}
	for _, c := range out.Candidates {
		if c.ID != "fathom/kimi-k2.5" && (c.Eligible || !slices.Contains(c.Excluded, "preference:zdr")) {
			t.Errorf("%s: eligible %v, excluded %v", c.ID, c.Eligible, c.Excluded)
		}
	}
	res = apiCall(t, p.srv.URL, "POST", "/api/v1/elect", tok, `{"model":"kimi-k2.5","promptTokens":2000,"provider":{"order":["quarry"],"quantizations":["fp8","bf16"]}}`)
	wantStatus(t, "elect with an order", res, http.StatusOK)
	out.Order = nil
	if err := json.Unmarshal([]byte(res.body), &out); err != nil {
		t.Fatal(err)
	}
	if out.Winner == nil || *out.Winner != "quarry/kimi-k2.5" || len(out.Order) < 2 || out.Pinned {
		t.Errorf("order: winner %v, order %v, pinned %v", out.Winner, out.Order, out.Pinned)
	}
	res = apiCall(t, p.srv.URL, "POST", "/api/v1/elect/winner", tok, `{"model":"kimi-k2.5","promptTokens":2000,"provider":{"zdr":true}}`)
	if res.status != http.StatusOK || !strings.Contains(res.body, `"fathom/kimi-k2.5"`) {
		t.Errorf("the winner-only answer: %d %s", res.status, res.body)
	}
	res = apiCall(t, p.srv.URL, "POST", "/api/v1/elect", tok, `{"model":"kimi-k2.5","provider":{"quantizations":["q4"]}}`)
	if res.status != http.StatusUnprocessableEntity && res.status != http.StatusBadRequest || !strings.Contains(res.body, "quantizations") {
		t.Errorf("a bad quantization: %d %s", res.status, res.body)
	}
}
