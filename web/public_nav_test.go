package web_test

import (
	"context"
	"net/http"
	"net/url"
	"strings"
	"testing"

	"github.com/airside/airside/internal/demo"
	"github.com/airside/airside/internal/netguard"
	"github.com/airside/airside/internal/store"
)

// TestPublicPagesCanBeNavigated (L6): a visitor on any public page has the
// way to every model and carrier, the glossary, the application and the
// login; /models lists every routed model with its carriers.
func TestPublicPagesCanBeNavigated(t *testing.T) {
	p := newPortal(t, store.SQLite)
	if err := demo.SeedProfiles(context.Background(), p.store); err != nil {
		t.Fatal(err)
	}
	visitor := p.client()
	for _, page := range []string{"/carriers/nebula", "/models/kimi-k2.5", "/glossary", "/apply", "/login"} {
		body := visitor.get(page).body
		for _, want := range []string{`data-testid="public-nav"`, `href="/models"`, `href="/glossary"`, `href="/apply"`} {
			if !strings.Contains(body, want) {
				t.Errorf("%s lacks %s", page, want)
			}
		}
		if page != "/login" && !strings.Contains(body, `data-testid="login-link"`) {
			t.Errorf("%s has no way to log in", page)
		}
	}
	res := visitor.get("/models")
	wantStatus(t, "/models", res, 200)
	kimi := listingOf(t, p.store, "nebula", "kimi-k2.5")
	for _, want := range []string{`href="/models/kimi-k2.5"`, kimi.Model.Name, `href="/carriers/nebula"`} {
		if !strings.Contains(res.body, want) {
			t.Errorf("/models lacks %s", want)
		}
	}
	// The model's slug sits on its own line under the title, not beside it.
	model := visitor.get("/models/kimi-k2.5").body
	if strings.Contains(model, "<h1>"+kimi.Model.Name+" <code>") || !strings.Contains(model, `data-testid="model-slug"`) {
		t.Error("the model page puts the slug beside the title")
	}
	// Logged in, the console's navigation replaces the public one.
	member := p.client()
	member.login("member@nebula.example")
	if strings.Contains(member.get("/models").body, `data-testid="public-nav"`) {
		t.Error("a logged-in person gets the public navigation")
	}
}

// TestNamesAreIsolated (L17): a company name carrying a right-to-left
// override is shown inside <bdi>, so it cannot reverse the text around it
// on the reviewer's list.
func TestNamesAreIsolated(t *testing.T) {
	p := newPortal(t, store.SQLite)
	anon := p.client()
	company := "\u202eSPU Compute"
	app := url.Values{"company": {company}, "website": {"https://rtl.example"}, "contact_name": {"Rae"},
		"contact_email": {"rae@rtl.example"}, "models": {"kimi-k2.5"}, "description": {"GPUs."}}
	wantStatus(t, "apply", anon.post("/apply", "/apply", app), http.StatusCreated)
	reviewer := p.client()
	reviewer.login("reviewer@airside.example")
	if body := reviewer.get("/applications").body; !strings.Contains(body, "<bdi>"+company+"</bdi>") {
		t.Error("the applicant's name is not isolated on the applications list")
	}
}

// TestWebhookLabelSaysWhatIsAccepted (L24): the address field asks for
// https; on a portal that also sends to local http receivers (the demo),
// it says so and why, rather than taking http under an https label.
func TestWebhookLabelSaysWhatIsAccepted(t *testing.T) {
	p := newPortal(t, store.SQLite)
	admin := p.client()
	admin.login("admin@nebula.example")
	body := admin.get("/alerts").body
	if !strings.Contains(body, "Address (https)</label>") || strings.Contains(body, `data-testid="accepts-local"`) {
		t.Error("a production portal's webhook field does not ask for https alone")
	}
	p.server.HooksForTest().Outbound = netguard.New(true)
	body = admin.get("/alerts").body
	if !strings.Contains(body, `data-testid="accepts-local"`) || !strings.Contains(body, "or http on this portal") {
		t.Error("a demo portal takes http under an https label without saying why")
	}
	res := admin.post("/alerts", "/alerts/webhook", url.Values{"url": {"http://127.0.0.1:9999/hook"}})
	if res.status >= 400 {
		t.Errorf("the demo portal refused the local receiver it invites: %d", res.status)
	}
}
