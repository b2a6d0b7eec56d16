package web_test

import (
	"bytes"
	"context"
	"fmt"
	"log/slog"
	"net/http"
	"net/http/httptest"
	"net/url"
	"strings"
	"testing"
	"time"

	"github.com/airside/airside/cmd/airside/wire"
	"github.com/airside/airside/internal/apitoken"
	"github.com/airside/airside/internal/audit"
	"github.com/airside/airside/internal/catalogue"
	"github.com/airside/airside/internal/demo"
	"github.com/airside/airside/internal/fakecarrier"
	"github.com/airside/airside/internal/secret"
	"github.com/airside/airside/internal/store"
	"github.com/airside/airside/internal/store/storetest"
	"github.com/airside/airside/internal/workflow"
)

const carrierKey = "sk-live-endpoint-test-SECRET-9876"

// preflightPortal is a portal whose probes may reach loopback (the fake
// carrier), whose first fares wait for preflight, and whose log is kept so
// a test can look for a key in it.
func preflightPortal(t *testing.T) (*testPortal, *bytes.Buffer, string) {
	t.Helper()
	st := storetest.Open(t, store.SQLite)
	if _, err := demo.Seed(context.Background(), st); err != nil {
		t.Fatal(err)
	}
	var logs bytes.Buffer
	key, _ := secret.ParseKey(secret.NewKey())
	box, _ := secret.New(key)
	server := wire.Portal(st, wire.Config{Log: slog.New(slog.NewTextHandler(&logs, &slog.HandlerOptions{Level: slog.LevelDebug})),
		Secrets: box, AllowPrivate: true, RequireReady: true})
	withoutSafeguards(server)
	srv := httptest.NewServer(server.Handler())
	t.Cleanup(srv.Close)
	fake := httptest.NewServer(fakecarrier.New(fakecarrier.Config{Models: []string{"kimi-k2.5"}, APIKey: carrierKey,
		Capabilities: []string{"tools", "json_output", "vision"}, Cache: true}))
	t.Cleanup(fake.Close)
	return &testPortal{t: t, srv: srv, store: st, server: server}, &logs, fake.URL + "/v1"
}

func listingOf(t *testing.T, st *store.Store, carrier, model string) *catalogue.Listing {
	t.Helper()
	ls, err := st.FindListings(context.Background(), catalogue.ListingFilter{ModelSlug: model})
	if err != nil {
		t.Fatal(err)
	}
	for i := range ls {
		if ls[i].CarrierSlug == carrier {
			return &ls[i]
		}
	}
	t.Fatalf("no listing %s/%s", carrier, model)
	return nil
}

func TestEndpointRegistrationPreflightAndCredentials(t *testing.T) {
	p, logs, fakeURL := preflightPortal(t)
	ctx := context.Background()
	l := listingOf(t, p.store, "nebula", "kimi-k2.5")
	page := fmt.Sprintf("/listings/%d", l.ID)
	carrier := p.client()
	carrier.login("admin@nebula.example")

	// Bad input: messages by the fields, what was typed kept, the key not echoed.
	res := carrier.post(page, page+"/endpoint", url.Values{"base_url": {"ftp://api.nebula.example"}, "upstream_model": {"kimi k2"},
		"api_key": {carrierKey}})
	wantStatus(t, "bad endpoint", res, http.StatusUnprocessableEntity)
	for _, want := range []string{`data-testid="error-base_url"`, `data-testid="error-upstream_model"`, `value="ftp://api.nebula.example"`, `aria-invalid="true"`} {
		if !strings.Contains(res.body, want) {
			t.Errorf("bad endpoint page lacks %s", want)
		}
	}
	if strings.Contains(res.body, carrierKey) {
		t.Fatal("the refused form echoed the key")
	}

	// A member may not register; the admin may.
	member := p.client()
	member.login("member@nebula.example")
	wantStatus(t, "member registers", member.post(page, page+"/endpoint", url.Values{"base_url": {fakeURL}, "upstream_model": {"kimi-k2.5"}, "api_key": {carrierKey}}), http.StatusForbidden)
	res = carrier.post(page, page+"/endpoint", url.Values{"base_url": {fakeURL}, "upstream_model": {"kimi-k2.5"}, "api_key": {carrierKey}})
	wantStatus(t, "register", res, http.StatusSeeOther)
	listing := carrier.get(page).body
	if !strings.Contains(listing, `data-testid="endpoint-pending"`) || !strings.Contains(listing, "sk-...9876") || !strings.Contains(listing, `data-busy="true"`) {
		t.Errorf("listing page after registering: pending endpoint, key hint and a polling panel expected")
	}

	// The worker probes the endpoint under review.
	if n, err := p.server.PreflightForTest().Drain(ctx); err != nil || n != 1 {
		t.Fatalf("drain: %d runs, %v", n, err)
	}
	if st := p.server.Preflight.Stats(); st.Runs != 1 || st.Passed == 0 || st.Failed == 0 {
		t.Errorf("the worker counted %+v, want one run with passed and failed probes", st)
	}
	panel := carrier.get(page + "/preflight").body
	for probe, state := range map[string]string{"reachable": "passed", "chat": "passed", "tools": "passed", "json_schema": "failed", "cached_input": "passed"} {
		if !strings.Contains(panel, fmt.Sprintf(`data-testid="probe-%s" data-state="%s"`, probe, state)) {
			t.Errorf("probe %s is not %s in the panel", probe, state)
		}
	}
	if strings.Contains(panel, `hx-trigger`) {
		t.Error("a finished run's panel still polls")
	}
	if !strings.Contains(panel, "How to fix") {
		t.Error("a failed probe does not say how to fix it")
	}

	// The reviewer sees the evidence on the filing and approves it.
	filings, _ := p.store.FindFilings(ctx, filingFilterOf(l.ID))
	filing := fmt.Sprintf("/filings/%d", filings[0].ID)
	rev := p.client()
	rev.login("reviewer@airside.example")
	review := rev.get(filing).body
	if !strings.Contains(review, `data-testid="probe-tools" data-state="passed"`) || !strings.Contains(review, "Endpoint URL") {
		t.Error("the reviewer's filing page lacks the endpoint diff or the probe evidence")
	}
	wantStatus(t, "approve endpoint", rev.post(filing, filing+"/approve", url.Values{}), http.StatusSeeOther)

	// The catalogue serves the endpoint and the earned flags; never the key.
	cat := apiCall(t, p.srv.URL, "GET", "/api/v1/catalogue?model=kimi-k2.5", apiToken(t, p.store, apitoken.ScopeCatalogueRead), "")
	wantStatus(t, "catalogue", cat, http.StatusOK)
	if !strings.Contains(cat.body, `"baseUrl":"`+fakeURL+`"`) {
		t.Errorf("catalogue lacks the endpoint: %.300s", cat.body)
	}
	if !strings.Contains(cat.body, `"id":"nebula/kimi-k2.5"`) || !strings.Contains(strings.SplitAfter(cat.body, `"id":"nebula/kimi-k2.5"`)[1][:600], `"capabilities":["tools","json_output"]`) {
		t.Errorf("nebula's earned flags are not in the catalogue")
	}
	elect := apiCall(t, p.srv.URL, "POST", "/api/v1/elect", apiToken(t, p.store, apitoken.ScopeElect), `{"model":"kimi-k2.5","requires":["tools"]}`, "Content-Type", "application/json")
	if !strings.Contains(elect.body, `"winner":"nebula/kimi-k2.5"`) {
		t.Errorf("an election requiring tools is not won by the only listing that earned it: %.300s", elect.body)
	}

	// The key: only to the credentials scope, audited.
	credsPath := fmt.Sprintf("/api/v1/listings/%d/credentials", l.ID)
	wantStatus(t, "credentials with catalogue:read", apiCall(t, p.srv.URL, "GET", credsPath, apiToken(t, p.store, apitoken.ScopeCatalogueRead), ""), http.StatusForbidden)
	creds := apiCall(t, p.srv.URL, "GET", credsPath, apiToken(t, p.store, apitoken.ScopeCredentialsRead), "")
	wantStatus(t, "credentials", creds, http.StatusOK)
	if !strings.Contains(creds.body, carrierKey) || creds.header.Get("Cache-Control") != "no-store" {
		t.Errorf("credentials: %s (Cache-Control %q)", creds.body, creds.header.Get("Cache-Control"))
	}
	events, _ := p.store.FindAuditEvents(ctx, audit.Filter{Action: "credentials.read"})
	if len(events) != 1 {
		t.Errorf("%d credentials reads audited, want 1", len(events))
	}

	// Nowhere else: pages, the audit log and its CSV, the catalogue, the logs.
	admin := p.client()
	admin.login("admin@airside.example")
	for what, body := range map[string]string{
		"listing": carrier.get(page).body, "filing": rev.get(filing).body, "audit": admin.get("/audit").body,
		"audit.csv": admin.get("/audit.csv").body, "catalogue": cat.body, "logs": logs.String(), "form": carrier.get(page + "/file").body,
	} {
		if strings.Contains(body, carrierKey) {
			t.Errorf("the key appears in the %s", what)
		}
	}

	// On demand: at most one a minute, one run at a time.
	res = carrier.post(page, page+"/preflight", url.Values{})
	wantStatus(t, "run preflight moments after the last", res, http.StatusSeeOther)
	if !strings.Contains(carrier.get(page).body, "ran moments ago") {
		t.Errorf("a run moments after the last is not refused with a message")
	}
	clock := p.store.Now
	p.store.Now = func() time.Time { return clock().Add(2 * time.Minute) }
	defer func() { p.store.Now = clock }()
	res = carrier.post(page, page+"/preflight", url.Values{})
	wantStatus(t, "run preflight", res, http.StatusSeeOther)
	res = carrier.post(page, page+"/preflight", url.Values{})
	if !strings.Contains(carrier.get(page).body, "already queued") {
		t.Errorf("a second run while one is queued is not refused with a message")
	}
}

// TestFirstFareWaitsForPreflight: a listing goes into service only with an
// approved endpoint that passed the reachability, chat and streaming probes.
func TestFirstFareWaitsForPreflight(t *testing.T) {
	p, _, fakeURL := preflightPortal(t)
	ctx := context.Background()
	carrier := p.client()
	carrier.login("admin@nebula.example")
	models, _ := p.store.FindModels(ctx)
	var glm int64
	for _, m := range models {
		if m.Slug == "glm-5" {
			glm = m.ID
		}
	}
	nebula, _ := p.store.FindCarrierBySlug(ctx, "nebula")
	res := carrier.post("/listings", "/listings", url.Values{"model": {fmt.Sprintf("%d:%d", nebula.ID, glm)}})
	wantStatus(t, "add listing", res, http.StatusSeeOther)
	page := res.location
	file := carrier.post(page+"/file", page+"/file", fareValuesWith("op", "submit"))
	wantStatus(t, "file first fare", file, http.StatusSeeOther)
	rev := p.client()
	rev.login("reviewer@airside.example")
	res = rev.post(file.location, file.location+"/approve", url.Values{})
	if res.status != http.StatusConflict || !strings.Contains(res.body, "no approved endpoint") {
		t.Fatalf("approve a first fare without an endpoint: %d %.300s", res.status, res.body)
	}
	wantStatus(t, "withdraw", carrier.post(file.location, file.location+"/withdraw", url.Values{}), http.StatusSeeOther)
	wantStatus(t, "register", carrier.post(page, page+"/endpoint", url.Values{"base_url": {fakeURL}, "upstream_model": {"kimi-k2.5"},
		"api_key": {carrierKey}}), http.StatusSeeOther)
	var listingID int64
	fmt.Sscanf(page, "/listings/%d", &listingID)
	endpointFiling, _ := p.store.FindFilings(ctx, filingFilterOf(listingID))
	approve := fmt.Sprintf("/filings/%d", endpointFiling[0].ID)
	wantStatus(t, "approve endpoint", rev.post(approve, approve+"/approve", url.Values{}), http.StatusSeeOther)
	if _, err := p.server.PreflightForTest().Drain(ctx); err != nil {
		t.Fatal(err)
	}
	// The upstream name is kimi-k2.5 on the fake, so reachability passes.
	file = carrier.post(page+"/file", page+"/file", fareValuesWith("op", "submit"))
	wantStatus(t, "file again", file, http.StatusSeeOther)
	wantStatus(t, "approve with a passing preflight", rev.post(file.location, file.location+"/approve", url.Values{}), http.StatusSeeOther)
	l, _ := p.store.FindListing(ctx, listingID, nil)
	if l.Status != catalogue.StatusInService {
		t.Errorf("listing is %s after approval, want in service", l.Status)
	}
}

func fareValuesWith(kv ...string) url.Values {
	v := fareValues()
	for i := 0; i+1 < len(kv); i += 2 {
		v.Set(kv[i], kv[i+1])
	}
	return v
}

func filingFilterOf(listingID int64) workflow.FilingFilter {
	return workflow.FilingFilter{ListingID: listingID}
}
