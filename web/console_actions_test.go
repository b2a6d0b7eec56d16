package web_test

import (
	"fmt"
	"html"
	"net/http"
	"net/url"
	"strings"
	"testing"
	"time"

	"github.com/airside/airside/internal/apitoken"
	"github.com/airside/airside/internal/store"
	"github.com/airside/airside/internal/store/storetest"
)

// TestMembersAreToldWhoCanChangeWhatTheySee: a carrier member on the
// profile, people and webhook pages, and on a listing's page (no pause),
// sees no controls and is told only the carrier's admins change them; an
// admin sees the controls and no such word.
func TestMembersAreToldWhoCanChangeWhatTheySee(t *testing.T) {
	p := newPortal(t, store.SQLite)
	member, admin := p.client(), p.client()
	member.login("member@nebula.example")
	admin.login("admin@nebula.example")
	listing := fmt.Sprintf("/listings/%d", listingIDs(t, p.store)["nebula"][0])
	if body := member.get(listing).body; strings.Contains(body, `data-testid="pause"`) {
		t.Error("a member is offered the pause")
	}
	if body := admin.get(listing).body; !strings.Contains(body, `data-testid="pause"`) {
		t.Error("an admin is not offered the pause")
	}
	for _, path := range []string{"/carrier/profile", "/carrier/members", "/alerts", listing} {
		if body := member.get(path).body; !strings.Contains(body, `data-testid="admins-only"`) {
			t.Errorf("%s: a member is not told only admins change it", path)
		}
		if body := admin.get(path).body; strings.Contains(body, `data-testid="admins-only"`) {
			t.Errorf("%s: an admin is told only admins change it", path)
		}
	}
}

// TestDestructiveActionsAskFirst: revoking a token, withdrawing a filing
// and logging out everywhere are behind a confirmation step on the page
// (no JavaScript needed), and the throttles page is reachable from Users.
func TestDestructiveActionsAskFirst(t *testing.T) {
	p := newPortal(t, store.SQLite)
	admin := p.client()
	admin.login("admin@airside.example")
	users := admin.get("/admin/users").body
	if !strings.Contains(users, `href="/admin/throttles"`) {
		t.Error("/admin/throttles is linked from nowhere")
	}
	wantStatus(t, "create a token", admin.post("/admin/tokens", "/admin/tokens", url.Values{"name": {"gw-1"}, "scope": {apitoken.ScopeElect}}), http.StatusSeeOther)
	tokens := admin.get("/admin/tokens").body
	if n := strings.Count(tokens, `/revoke"`); n == 0 || strings.Count(tokens, `data-testid="revoke-confirm-`) != n {
		t.Errorf("%d revoke forms, not each behind a confirmation", n)
	}
	account := admin.get("/account").body
	if !strings.Contains(account, `data-testid="logout-everywhere-confirm"`) || strings.Count(account, `action="/logout/everywhere"`) != 1 {
		t.Error("logging out everywhere does not ask first")
	}
	for _, body := range []string{users, account} {
		if strings.Contains(body, `<button type="submit" class="link" data-testid="logout-everywhere"`) {
			t.Error("the header logs out everywhere in one click")
		}
	}
	// A member withdrawing the admin's filing is asked first, and told it
	// is someone else's (L25); the admin is not told it is someone else's.
	filing := submitFiling(t, p, "admin@nebula.example", listingIDs(t, p.store)["nebula"][0], "0.31")
	member := p.client()
	member.login("member@nebula.example")
	page := member.get(filing).body
	if !strings.Contains(page, `data-testid="withdraw-confirm"`) || !strings.Contains(page, `data-testid="withdraw-others"`) ||
		!strings.Contains(page, "Filed by admin@nebula.example, not you") {
		t.Error("a member withdrawing the admin's filing is not asked first and told whose it is")
	}
	carrierAdmin := p.client()
	carrierAdmin.login("admin@nebula.example")
	if strings.Contains(carrierAdmin.get(filing).body, `data-testid="withdraw-others"`) {
		t.Error("the author is told their own filing is someone else's")
	}
}

// TestEveryResponseCarriesARequestID: each answer names its request, the
// log line says the same id, and an id a load balancer sent is kept when
// plain (and replaced when not).
func TestEveryResponseCarriesARequestID(t *testing.T) {
	var logs lockedBuffer
	p := portalOn(t, storetest.Open(t, store.SQLite), &logs)
	res, err := http.Get(p.srv.URL + "/healthz")
	if err != nil {
		t.Fatal(err)
	}
	res.Body.Close()
	id := res.Header.Get("X-Request-Id")
	if len(id) < 16 {
		t.Fatalf("X-Request-Id %q", id)
	}
	for sent, kept := range map[string]bool{"lb-4f2a.9": true, "bad id; <script>": false, strings.Repeat("x", 65): false} {
		req, _ := http.NewRequest("GET", p.srv.URL+"/healthz", nil)
		req.Header.Set("X-Request-Id", sent)
		res, err := http.DefaultClient.Do(req)
		if err != nil {
			t.Fatal(err)
		}
		res.Body.Close()
		if got := res.Header.Get("X-Request-Id"); (got == sent) != kept || got == "" {
			t.Errorf("sent %q, answered %q", sent, got)
		}
	}
	// The line is written as the handler returns, which may be just after
	// the answer arrived: wait for it, with a deadline.
	for deadline := time.Now().Add(10 * time.Second); !strings.Contains(logs.String(), "id="+id); time.Sleep(10 * time.Millisecond) {
		if time.Now().After(deadline) {
			t.Fatalf("the log does not carry the id %s", id)
		}
	}
}

// TestTokenNamesAreUniqueAndScopesExplained: a second live token of the
// same name is refused beside the name field (case aside), and each scope
// says what it lets a token do, credentials:read included.
func TestTokenNamesAreUniqueAndScopesExplained(t *testing.T) {
	p := newPortal(t, store.SQLite)
	admin := p.client()
	admin.login("admin@airside.example")
	page := admin.get("/admin/tokens").body
	for _, scope := range apitoken.Scopes {
		if !strings.Contains(page, "<strong>"+scope+"</strong>: "+html.EscapeString(apitoken.ScopeMeanings[scope])) {
			t.Errorf("scope %s is not explained on the page", scope)
		}
	}
	wantStatus(t, "a first token", admin.post("/admin/tokens", "/admin/tokens", url.Values{"name": {"edge-gw"}, "scope": {apitoken.ScopeElect}}), http.StatusSeeOther)
	res := admin.post("/admin/tokens", "/admin/tokens", url.Values{"name": {"Edge-GW"}, "scope": {apitoken.ScopeCatalogueRead}})
	if res.status != http.StatusUnprocessableEntity || !strings.Contains(res.body, "already named edge-gw") {
		t.Errorf("a second live token of the same name: %d", res.status)
	}
}

// TestTheProposalsLinkSaysWhatItOpens: the navigation link to /proposals
// is named for what it opens (issue 29 L8: it said "Models").
func TestTheProposalsLinkSaysWhatItOpens(t *testing.T) {
	p := newPortal(t, store.SQLite)
	for _, who := range []string{"admin@nebula.example", "reviewer@airside.example"} {
		c := p.client()
		c.login(who)
		if body := c.get("/listings").body; !strings.Contains(body, `data-testid="nav-proposals">Model proposals</a>`) {
			t.Errorf("%s: the link to /proposals is not named for it", who)
		}
	}
}

// TestACarriersListingsSearchIsForModels: a carrier sees only its own
// listings, so its search asks for a model and it is not offered a sort by
// carrier; staff, who see every carrier, are (issue 29 L20).
func TestACarriersListingsSearchIsForModels(t *testing.T) {
	p := newPortal(t, store.SQLite)
	for who, staff := range map[string]bool{"member@nebula.example": false, "reviewer@airside.example": true} {
		c := p.client()
		c.login(who)
		body := c.get("/listings").body
		if got := strings.Contains(body, `placeholder="carrier or model"`); got != staff {
			t.Errorf("%s: search for carriers %v, want %v", who, got, staff)
		}
		if got := strings.Contains(body, "sort=carrier"); got != staff {
			t.Errorf("%s: offered a sort by carrier %v, want %v", who, got, staff)
		}
	}
}
