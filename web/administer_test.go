package web_test

import (
	"context"
	"fmt"
	"net/http"
	"net/url"
	"strings"
	"testing"

	"github.com/airside/airside/internal/apitoken"
	"github.com/airside/airside/internal/catalogue"
	"github.com/airside/airside/internal/store"
	"github.com/airside/airside/internal/workflow"
)

func TestAdminSetsPriorityAndDelists(t *testing.T) {
	p := newPortal(t, store.SQLite)
	ctx := context.Background()
	ids := listingIDs(t, p.store)
	listing := ids["nebula"][0]
	page := fmt.Sprintf("/listings/%d", listing)
	admin := p.client()
	admin.login("admin@airside.example")
	before, _ := p.store.CatalogueRevision(ctx)

	bad := admin.post(page, page+"/priority", url.Values{"priority": {"eleven"}})
	wantStatus(t, "bad priority", bad, http.StatusUnprocessableEntity)
	if !strings.Contains(bad.body, `data-testid="error-priority"`) || !strings.Contains(bad.body, `value="eleven"`) {
		t.Error("a bad priority has no message next to it, or lost what was typed")
	}
	wantStatus(t, "priority 0", admin.post(page, page+"/priority", url.Values{"priority": {"0"}}), http.StatusSeeOther)
	l, _ := p.store.FindListing(ctx, listing, nil)
	if l.PriorityBP != 0 {
		t.Fatalf("priority %d bp, want 0", l.PriorityBP)
	}
	if rev, _ := p.store.CatalogueRevision(ctx); rev != before+1 {
		t.Errorf("revision %d after a priority change, want %d", rev, before+1)
	}
	tok := apiToken(t, p.store, apitoken.ScopeElect)
	res := apiCall(t, p.srv.URL, "POST", "/api/v1/elect", tok, fmt.Sprintf(`{"model":%q}`, l.Model.Slug))
	if !strings.Contains(res.body, `"id":"nebula/`+l.Model.Slug+`","eligible":false,"excluded":["priority"]`) {
		t.Errorf("priority 0 did not take the listing off the ballot: %.400s", res.body)
	}

	filing := submitFiling(t, p, "member@nebula.example", listing, "0.31")
	wantStatus(t, "delist without reason", admin.post(page, page+"/delist", url.Values{"reason": {" "}}), http.StatusUnprocessableEntity)
	wantStatus(t, "delist", admin.post(page, page+"/delist", url.Values{"reason": {"end of contract"}}), http.StatusSeeOther)
	l, _ = p.store.FindListing(ctx, listing, nil)
	f, _ := p.store.FindFiling(ctx, mustID(t, filing), nil)
	if l.Status != catalogue.StatusDelisted || f.State != workflow.Withdrawn {
		t.Errorf("after delisting: listing %s, filing %s", l.Status, f.State)
	}
	carrier := p.client()
	carrier.login("member@nebula.example")
	if inbox := carrier.get("/inbox").body; !strings.Contains(inbox, "delisted by the gateway: end of contract") {
		t.Error("the carrier was not told")
	}
	wantStatus(t, "filing on a delisted listing", carrier.get(page+"/file"), http.StatusConflict)
	reviewer := p.client()
	reviewer.login("reviewer@airside.example")
	wantStatus(t, "reviewer sets priority", reviewer.post(page, page+"/priority", url.Values{"priority": {"1"}}), http.StatusForbidden)
}
