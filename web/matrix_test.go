package web_test

import (
	"context"
	"fmt"
	"io"
	"log/slog"
	"net/http"
	"net/http/httptest"
	"net/url"
	"os"
	"path/filepath"
	"slices"
	"sort"
	"strings"
	"testing"
	"time"

	"github.com/airside/airside/internal/account"

	"github.com/airside/airside/cmd/airside/wire"
	"github.com/airside/airside/internal/apitoken"
	"github.com/airside/airside/internal/catalogue"
	"github.com/airside/airside/internal/demo"
	"github.com/airside/airside/internal/fare"
	"github.com/airside/airside/internal/store"
	"github.com/airside/airside/internal/workflow"
	"github.com/airside/airside/web"
)

// The roles of the matrix.
const (
	anon      = "anonymous"
	memberA   = "member@nebula.example"
	adminA    = "admin@nebula.example"
	memberB   = "member@orbit.example"
	adminB    = "admin@orbit.example"
	reviewer  = "reviewer@airside.example"
	admin     = "admin@airside.example"
	tokCat    = "token:" + apitoken.ScopeCatalogueRead
	tokMet    = "token:" + apitoken.ScopeMetricsWrite
	tokElect  = "token:" + apitoken.ScopeElect
	tokCreds  = "token:" + apitoken.ScopeCredentialsRead
	tokScrape = "token:" + apitoken.ScopeMetricsRead
	// tokNebula is a carrier's token: Nebula's, fares:read and fares:write.
	tokNebula = "token:nebula"
)

var roles = []string{anon, memberA, adminA, memberB, adminB, reviewer, admin, tokCat, tokMet, tokElect, tokCreds, tokScrape, tokNebula}

// Secrets planted in carrier B's (Orbit's) private data: none may reach a
// page or body served to carrier A's users.
// carrierBSecrets are carrier B's private values: its landing fee (47.77 %),
// and a draft's prices, discount (23.45 %) and note. Its published discount
// (12.34 %) is public: the public model card shows approved discounts.
var carrierBSecrets = []string{"47.77", "0.4777", "23.45", "ORBIT-SECRET-NOTE", "ORBIT-DRAFT-0.987654", "0.987654"}

// fixture is the template database every request of the matrix runs on a
// copy of.
type fixture struct {
	path     string
	listingA int64 // Nebula's Kimi listing
	filingA  int64 // a submitted filing of Nebula's
	// versionA and revisionA are what the filing's and the listing's pages
	// show, which decision and verification forms carry.
	versionA, revisionA int64
	tokenID             int64
	carrierTokenID      int64  // Nebula's token
	addModel            string // a "carrier:model" Nebula does not list yet
	sessions            map[string]string
	csrf                map[string]string // each session's CSRF token, bound at login
	apiSecrets          map[string]string
}

func buildFixture(t *testing.T) fixture {
	t.Helper()
	ctx := context.Background()
	dir := t.TempDir()
	fx := fixture{path: filepath.Join(dir, "template.db"), sessions: map[string]string{}, csrf: map[string]string{}, apiSecrets: map[string]string{}}
	st, err := store.Open(ctx, "sqlite:"+fx.path)
	if err != nil {
		t.Fatal(err)
	}
	if err := st.Migrate(ctx); err != nil {
		t.Fatal(err)
	}
	if _, err := demo.Seed(ctx, st); err != nil {
		t.Fatal(err)
	}
	all, _ := st.FindListings(ctx, catalogue.ListingFilter{})
	var orbitKimi catalogue.Listing
	for _, l := range all {
		switch {
		case l.CarrierSlug == "nebula" && l.Model.Slug == "kimi-k2.5":
			fx.listingA = l.ID
		case l.CarrierSlug == "orbit" && l.Model.Slug == "kimi-k2.5":
			orbitKimi = l
		}
	}
	secret := *orbitKimi.Published
	secret.LandingFee, secret.Discount = 4777, 1234
	if _, err := st.PublishSeedFare(ctx, &secret); err != nil {
		t.Fatal(err)
	}
	orbitAdmin, _ := st.FindUserByEmail(ctx, adminB)
	draft := secret
	draft.Input, draft.Discount = 987654, 2345
	if _, err := st.CreateFiling(ctx, orbitAdmin.ID, workflow.NewFiling{ListingID: orbitKimi.ID, Fare: &draft, Justification: "ORBIT-SECRET-NOTE"}); err != nil {
		t.Fatal(err)
	}
	nebulaMember, _ := st.FindUserByEmail(ctx, memberA)
	proposal := *all[0].Published
	for _, l := range all {
		if l.ID == fx.listingA {
			proposal = *l.Published
		}
	}
	proposal.Input++
	if fx.filingA, err = st.CreateFiling(ctx, nebulaMember.ID, workflow.NewFiling{ListingID: fx.listingA, Fare: &proposal, Submit: true, Justification: "nebula note"}); err != nil {
		t.Fatal(err)
	}
	if f, err := st.FindFiling(ctx, fx.filingA, nil); err == nil {
		fx.versionA = f.LockVersion
	}
	if l, err := st.FindListing(ctx, fx.listingA, nil); err == nil {
		fx.revisionA = l.Revision
	}
	models, _ := st.FindModels(ctx)
	nebula, _ := st.FindCarrierBySlug(ctx, "nebula")
	for _, m := range models {
		if m.Slug == "glm-5" {
			fx.addModel = fmt.Sprintf("%d:%d", nebula.ID, m.ID)
		}
	}
	siteAdmin, _ := st.FindUserByEmail(ctx, admin)
	for _, scope := range apitoken.Scopes {
		tok, err := apitoken.NewService(st).Create(ctx, &account.Principal{User: *siteAdmin}, "matrix "+scope, []string{scope})
		if err != nil {
			t.Fatal(err)
		}
		fx.apiSecrets["token:"+scope] = tok
	}
	tokens, _ := st.FindTokens(ctx, nil)
	fx.tokenID = tokens[0].ID
	nebulaAdmin, _ := st.FindUserByEmail(ctx, adminA)
	nebulaPrincipal, _ := st.FindPrincipal(ctx, nebulaAdmin.ID)
	if fx.apiSecrets[tokNebula], err = apitoken.NewService(st).CreateForCarrier(ctx, nebulaPrincipal, nebula.ID, "matrix nebula",
		apitoken.CarrierScopes); err != nil {
		t.Fatal(err)
	}
	carrierTokens, _ := st.FindTokens(ctx, &nebula.ID)
	fx.carrierTokenID = carrierTokens[0].ID
	// Log every person in once; the sessions live in the database and so in
	// every copy of it.
	srv := httptest.NewServer(wire.Portal(st, wire.Config{Log: slog.New(slog.NewTextHandler(io.Discard, nil))}).Handler())
	p := &testPortal{t: t, srv: srv, store: st}
	for _, r := range roles {
		if r == anon || strings.HasPrefix(r, "token:") {
			continue
		}
		c := p.client()
		c.login(r)
		fx.sessions[r] = c.cookie(web.SessionCookie).Value
		fx.csrf[r] = c.cookie("airside_csrf").Value
	}
	srv.Close()
	if err := st.ExecForTest(ctx, "PRAGMA wal_checkpoint(TRUNCATE)"); err != nil {
		t.Fatal(err)
	}
	st.Close()
	return fx
}

// request builds the request of a route for a role.
func (fx fixture) request(method, path, role string) *http.Request {
	r := strings.NewReplacer(":token", "no-such-invite", ":month", time.Now().UTC().Format("2006-01"), ":wid", "999999")
	if strings.HasPrefix(path, "/models/:slug") {
		path = strings.Replace(path, ":slug", "kimi-k2.5", 1)
	}
	path = strings.Replace(path, ":slug", "nebula", 1)
	switch {
	case strings.HasPrefix(path, "/listings/:id"), strings.HasPrefix(path, "/traffic/listings/:id"):
		path = strings.Replace(path, ":id", fmt.Sprint(fx.listingA), 1)
	case strings.HasPrefix(path, "/api/v1/listings/:listingId"), strings.HasPrefix(path, "/api/v1/carrier/listings/:listingId"):
		path = strings.Replace(path, ":listingId", fmt.Sprint(fx.listingA), 1)
	case strings.HasPrefix(path, "/api/v1/carrier/filings/:filingId"):
		path = strings.Replace(path, ":filingId", fmt.Sprint(fx.filingA), 1)
	case strings.HasPrefix(path, "/carrier/tokens/:id"):
		path = strings.Replace(path, ":id", fmt.Sprint(fx.carrierTokenID), 1)
	case strings.HasPrefix(path, "/filings/:id"):
		path = strings.Replace(path, ":id", fmt.Sprint(fx.filingA), 1)
	case strings.HasPrefix(path, "/admin/tokens/:id"):
		path = strings.Replace(path, ":id", fmt.Sprint(fx.tokenID), 1)
	case path == "/static*":
		path = "/static/css/airside.css"
	case path == "/api/v1/catalogue/changes":
		path += "?since=0"
	}
	path = r.Replace(path)
	path = strings.Replace(path, ":id", "999999", 1) // an object that does not exist
	body, contentType := fx.body(method, path)
	req := httptest.NewRequest(method, path, strings.NewReader(body))
	if contentType != "" {
		req.Header.Set("Content-Type", contentType)
	}
	csrfToken := "matrix-csrf-token-matrix-csrf-token-0123456"
	if t := fx.csrf[role]; t != "" {
		csrfToken = t // a session's forms carry the token it was given
	}
	req.AddCookie(&http.Cookie{Name: "airside_csrf", Value: csrfToken})
	req.Header.Set("X-CSRF-Token", csrfToken)
	if s := fx.sessions[role]; s != "" {
		req.AddCookie(&http.Cookie{Name: web.SessionCookie, Value: s})
	}
	if s := fx.apiSecrets[role]; s != "" {
		req.Header.Set("Authorization", "Bearer "+s)
	}
	return req
}

func (fx fixture) body(method, path string) (string, string) {
	if method != "POST" {
		return "", ""
	}
	if strings.HasPrefix(path, "/api/v1/elect") {
		return `{"model":"kimi-k2.5"}`, "application/json"
	}
	if strings.HasPrefix(path, "/api/v1/carrier/listings/") && strings.HasSuffix(path, "/endpoint") {
		return `{"baseUrl":"https://api.nebula.example/v1","upstreamModel":"kimi-k2.5","apiKey":"sk-matrix-0123456789","justification":"matrix"}`, "application/json"
	}
	if strings.HasPrefix(path, "/api/v1/carrier/listings/") {
		return `{"fare":{"input":"0.123","justification":"matrix"}}`, "application/json"
	}
	if path == "/api/v1/metrics/holders" {
		minute := time.Now().UTC().Truncate(time.Minute).Format(time.RFC3339)
		return fmt.Sprintf(`{"holders":[{"model":"kimi-k2.5","workload":"general","cacheRelevant":false,"listingId":%d,"minute":%q}]}`, fx.listingA, minute), "application/json"
	}
	if path == "/api/v1/metrics/organisations" {
		minute := time.Now().UTC().Truncate(time.Minute).Format(time.RFC3339)
		return fmt.Sprintf(`{"organisations":[{"listingId":%d,"minute":%q,"organisation":"org-00000001","requests":1}]}`, fx.listingA, minute), "application/json"
	}
	if path == "/api/v1/metrics/projects" {
		minute := time.Now().UTC().Truncate(time.Minute).Format(time.RFC3339)
		return fmt.Sprintf(`{"projects":[{"project":"prj-000000000001","listingId":%d,"minute":%q,"answers":1,"inputTokens":10,"cachedInputTokens":0,"outputTokens":1}]}`,
			fx.listingA, minute), "application/json"
	}
	if strings.HasPrefix(path, "/api/v1/metrics") {
		minute := time.Now().UTC().Truncate(time.Minute).Format(time.RFC3339)
		return `{"buckets":[{"listing":"nebula/kimi-k2.5","minute":"` + minute + `","requests":1}]}`, "application/json"
	}
	form := url.Values{}
	switch {
	case strings.HasSuffix(path, "/file"), strings.HasSuffix(path, "/edit"), strings.HasSuffix(path, "/preview"):
		form = fareValues()
		form.Set("op", "save")
		form.Set("lock_version", "1")
	case strings.HasSuffix(path, "/comment"):
		form.Set("body", "a question")
	case strings.HasSuffix(path, "/maintenance"):
		start := time.Now().UTC().Add(24 * time.Hour)
		form = url.Values{"start": {start.Format(fare.TimeLayout)}, "end": {start.Add(time.Hour).Format(fare.TimeLayout)}, "reason": {"matrix"}}
	case strings.HasSuffix(path, "/pause"):
		form = url.Values{"reason": {"an incident"}, "confirm": {"yes"}}
	case strings.HasSuffix(path, "/decline"):
		form.Set("action", "reject")
		form.Set("note", "no")
		form.Set("seen_version", fmt.Sprint(fx.versionA))
	case strings.HasSuffix(path, "/approve"):
		form.Set("seen_version", fmt.Sprint(fx.versionA))
	case path == "/apply":
		form = url.Values{"company": {"Zephyr Compute"}, "website": {"https://zephyr.example"}, "contact_name": {"Zoe"},
			"contact_email": {"zoe@zephyr.example"}, "models": {"kimi-k2.5"}, "description": {"H100s in Frankfurt."}}
	case path == "/proposals":
		form = url.Values{"name": {"Qwen3 Coder"}, "slug": {"qwen3-coder"}, "context_tokens": {"262144"}, "max_output_tokens": {"65536"},
			"input_modalities": {"text"}, "output_modalities": {"text"}}
	case path == "/carrier/profile":
		form = url.Values{"description": {"Fast."}, "website": {"https://nebula.example"}}
	case path == "/carrier/domain":
		form = url.Values{"domain": {"nebula.example"}}
	case path == "/alerts/webhook":
		form.Set("url", "https://hooks.nebula.example/airside")
	case path == "/account/alert-email":
		form.Set("alert_email", "digest")
	case strings.HasSuffix(path, "/endpoint"):
		form = url.Values{"base_url": {"https://api.nebula.example/v1"}, "upstream_model": {"kimi-k2.5"}, "api_key": {"sk-matrix-0123456789"}}
	case strings.HasSuffix(path, "/priority"):
		form.Set("priority", "0.5")
	case strings.HasSuffix(path, "/delist"):
		form.Set("reason", "matrix")
	case strings.HasSuffix(path, "/capabilities"):
		form.Set("capability", "tools")
		form.Set("state", "verified")
		form.Set("seen_revision", fmt.Sprint(fx.revisionA))
	case path == "/listings":
		form.Set("model", fx.addModel)
	case path == "/admin/carriers/invite":
		form = url.Values{"name": {"Zephyr"}, "slug": {"zephyr"}, "email": {"first@zephyr.example"}}
	case path == "/admin/tokens":
		form = url.Values{"name": {"gw"}, "scope": {apitoken.ScopeElect}}
	case path == "/carrier/feed":
		form = url.Values{"url": {"https://feeds.nebula.example/openrouter/models"}, "mode": {"draft"}}
	case path == "/carrier/tokens":
		form = url.Values{"name": {"repricer"}, "scope": {apitoken.ScopeFaresRead}}
	case path == "/login":
		form = url.Values{"email": {"nobody@example.com"}, "password": {"wrong password"}}
	}
	return form.Encode(), "application/x-www-form-urlencoded"
}

// expect maps "METHOD path" to the status each role gets. A page for
// logged-in people sends the anonymous to log in (303 for GET, 401 for
// POST); another carrier's objects are 404; the wrong role is 403; API
// routes want a token with the scope.
func expect() map[string]map[string]int {
	page := func(anonStatus, a, b, staff, siteAdmin int) map[string]int {
		return map[string]int{anon: anonStatus, memberA: a, adminA: a, memberB: b, adminB: b, reviewer: staff, admin: siteAdmin}
	}
	api := func(scope string, ok int) map[string]int {
		m := map[string]int{}
		for _, r := range roles {
			switch {
			case r == "token:"+scope:
				m[r] = ok
			case strings.HasPrefix(r, "token:"):
				m[r] = 403
			default:
				m[r] = 401
			}
		}
		return m
	}
	carrierAPI := func(ok int) map[string]int {
		m := api("", 0)
		m[tokNebula] = ok
		return m
	}
	all := func(status int) map[string]int { return page(status, status, status, status, status) }
	everyone := func(status int) map[string]int {
		m := map[string]int{}
		for _, r := range roles {
			m[r] = status
		}
		return m
	}
	e := map[string]map[string]int{
		"GET /":                           all(303),
		"GET /healthz":                    all(200),
		"GET /readyz":                     all(200),
		"GET /static*":                    all(200),
		"GET /favicon.ico":                all(301),
		"GET /login":                      page(200, 303, 303, 303, 303),
		"POST /login":                     all(401),
		"POST /logout":                    all(303),
		"POST /logout/everywhere":         page(401, 303, 303, 303, 303),
		"GET /signup/:token":              all(404),
		"POST /signup/:token":             all(404),
		"GET /listings":                   page(303, 200, 200, 200, 200),
		"POST /listings":                  {anon: 401, memberA: 403, adminA: 303, memberB: 404, adminB: 404, reviewer: 404, admin: 404},
		"GET /listings/:id":               page(303, 200, 404, 200, 200),
		"GET /listings/:id/file":          page(303, 200, 404, 403, 403),
		"POST /listings/:id/file":         page(401, 303, 404, 403, 403),
		"GET /listings/:id/preview":       page(303, 200, 404, 200, 200),
		"GET /listings/:id/prices":        page(303, 200, 404, 200, 200),
		"POST /listings/:id/preview":      page(401, 200, 404, 200, 200),
		"POST /listings/:id/pause":        {anon: 401, memberA: 403, adminA: 303, memberB: 404, adminB: 404, reviewer: 403, admin: 403},
		"POST /listings/:id/resume":       {anon: 401, memberA: 403, adminA: 303, memberB: 404, adminB: 404, reviewer: 403, admin: 403},
		"POST /listings/:id/capabilities": page(401, 403, 403, 303, 303),
		"POST /listings/:id/endpoint":     {anon: 401, memberA: 403, adminA: 303, memberB: 404, adminB: 404, reviewer: 404, admin: 404},
		"GET /listings/:id/preflight":     page(303, 200, 404, 200, 200),
		"POST /listings/:id/preflight":    page(401, 303, 404, 303, 303),
		"POST /listings/:id/priority":     page(401, 403, 403, 403, 303),
		"POST /listings/:id/delist":       page(401, 403, 403, 403, 303),
		"GET /filings":                    page(303, 200, 200, 200, 200),
		"POST /filings/submit":            page(401, 303, 303, 303, 303), // nothing selected: nothing submitted
		"GET /filings/:id":                page(303, 200, 404, 200, 200),
		"GET /filings/:id/edit":           page(303, 409, 404, 403, 403),
		"POST /filings/:id/edit":          page(401, 409, 404, 403, 403),
		"POST /filings/:id/submit":        page(401, 409, 404, 403, 403),
		"POST /filings/:id/refresh":       page(401, 409, 404, 403, 403),
		"POST /filings/:id/withdraw":      page(401, 303, 404, 403, 403),
		"POST /filings/:id/comment":       page(401, 303, 404, 303, 303),
		"POST /filings/:id/approve":       page(401, 403, 403, 303, 303),
		"POST /filings/:id/decline":       page(401, 403, 403, 303, 303),
		// A GET of an action's URL (a reloaded refusal) leads back to the
		// filing for whoever may see it.
		"GET /filings/:id/submit":                page(303, 303, 404, 303, 303),
		"GET /filings/:id/withdraw":              page(303, 303, 404, 303, 303),
		"GET /filings/:id/refresh":               page(303, 303, 404, 303, 303),
		"GET /filings/:id/comment":               page(303, 303, 404, 303, 303),
		"GET /filings/:id/approve":               page(303, 303, 404, 303, 303),
		"GET /filings/:id/decline":               page(303, 303, 404, 303, 303),
		"GET /review":                            page(303, 403, 403, 200, 200),
		"GET /traffic":                           page(303, 200, 200, 200, 200),
		"GET /traffic/listings/:id":              page(303, 200, 404, 200, 200),
		"GET /traffic/statements/:month":         page(303, 200, 200, 200, 200),
		"GET /operations":                        page(303, 403, 403, 200, 200),
		"GET /alerts":                            page(303, 200, 200, 200, 200),
		"GET /oncall":                            page(303, 200, 200, 200, 200),
		"GET /apply":                             all(200),
		"GET /glossary":                          all(200),
		"GET /reset/:token":                      all(404),
		"POST /reset/:token":                     all(404),
		"GET /account":                           page(303, 200, 200, 200, 200),
		"POST /account/password":                 page(401, 422, 422, 422, 422), // no current password given
		"GET /carrier/members":                   page(303, 200, 200, 200, 200),
		"POST /carrier/members/invite":           {anon: 401, memberA: 403, adminA: 422, memberB: 403, adminB: 422, reviewer: 404, admin: 404},
		"POST /carrier/members/:id/role":         {anon: 401, memberA: 403, adminA: 303, memberB: 403, adminB: 303, reviewer: 404, admin: 404},
		"POST /carrier/members/:id/remove":       {anon: 401, memberA: 403, adminA: 404, memberB: 403, adminB: 404, reviewer: 404, admin: 404},
		"POST /admin/users/:id/deactivate":       page(401, 403, 403, 403, 404),
		"POST /admin/users/:id/activate":         page(401, 403, 403, 403, 404),
		"POST /admin/users/:id/reset":            page(401, 403, 403, 403, 404),
		"POST /apply":                            all(201),
		"GET /apply/status/:token":               all(404),
		"POST /apply/status/:token":              all(404),
		"GET /carriers/:slug":                    all(200),
		"GET /carriers/:slug/logo":               all(404), // the matrix carrier has no logo
		"GET /models/:slug":                      all(200),
		"GET /exports/openrouter/models.json":    all(200),
		"GET /exports/litellm/model_prices.json": all(200),
		"GET /applications":                      page(303, 403, 403, 200, 200),
		"GET /applications/:id":                  page(303, 403, 403, 404, 404),
		"POST /applications/:id/ask":             page(401, 403, 403, 404, 404),
		// Only admins approve: a reviewer is refused before the lookup.
		"POST /applications/:id/approve": page(401, 403, 403, 403, 404),
		"POST /applications/:id/decline": page(401, 403, 403, 404, 404),
		"GET /carrier/profile":           page(303, 200, 200, 200, 200),
		"POST /carrier/profile":          {anon: 401, memberA: 403, adminA: 303, memberB: 403, adminB: 303, reviewer: 404, admin: 404},
		"POST /carrier/domain":           {anon: 401, memberA: 403, adminA: 303, memberB: 403, adminB: 303, reviewer: 404, admin: 404},
		"POST /carrier/domain/check":     {anon: 401, memberA: 404, adminA: 303, memberB: 404, adminB: 303, reviewer: 404, admin: 404},
		"POST /profiles/:id/approve":     page(401, 403, 403, 404, 404),
		"POST /profiles/:id/decline":     page(401, 403, 403, 404, 404),
		"GET /profiles/:id/logo":         page(303, 403, 403, 404, 404),
		"GET /proposals":                 page(303, 200, 200, 200, 200),
		"POST /proposals":                {anon: 401, memberA: 403, adminA: 303, memberB: 403, adminB: 303, reviewer: 404, admin: 404},
		"POST /proposals/:id/accept":     page(401, 403, 403, 404, 404),
		"POST /proposals/:id/decline":    page(401, 403, 403, 404, 404),
		// Staff belong to no carrier: a webhook is its admins' to set.
		"POST /alerts/webhook":      {anon: 401, memberA: 403, adminA: 200, memberB: 403, adminB: 200, reviewer: 404, admin: 404},
		"POST /alerts/webhook/test": {anon: 401, memberA: 403, adminA: 303, memberB: 403, adminB: 303, reviewer: 404, admin: 404},
		// No webhook in the matrix: a rotation is refused with a flash.
		"POST /alerts/webhook/rotate": {anon: 401, memberA: 403, adminA: 303, memberB: 403, adminB: 303, reviewer: 404, admin: 404},
		// The matrix's id matches no delivery: admins get as far as "not found".
		"POST /alerts/deliveries/:id/resend": {anon: 401, memberA: 403, adminA: 404, memberB: 403, adminB: 404, reviewer: 404, admin: 404},
		"POST /alerts/webhook/delete":        {anon: 401, memberA: 403, adminA: 303, memberB: 403, adminB: 303, reviewer: 404, admin: 404},
		// Rules and mutes are the carrier admins' too; the matrix posts an
		// empty form (refused beside its fields) and an id that matches no mute.
		"POST /alerts/rules":         {anon: 401, memberA: 403, adminA: 422, memberB: 403, adminB: 422, reviewer: 404, admin: 404},
		"POST /alerts/mute":          {anon: 401, memberA: 403, adminA: 422, memberB: 403, adminB: 422, reviewer: 404, admin: 404},
		"POST /alerts/mutes/:id/end": {anon: 401, memberA: 403, adminA: 404, memberB: 403, adminB: 404, reviewer: 404, admin: 404},
		"GET /inbox":                 page(303, 200, 200, 200, 200),
		// Alert e-mails are for carriers' people; staff belong to none.
		"POST /account/alert-email": page(401, 200, 200, 403, 403),
		// Two-factor: everyone signed in manages their own; the code step
		// needs a password step first (401 without one).
		"GET /account/two-factor":                    page(303, 200, 200, 200, 200),
		"POST /account/two-factor/begin":             page(401, 200, 200, 200, 200),
		"POST /account/two-factor/confirm":           page(401, 422, 422, 422, 422),
		"POST /account/two-factor/recovery-codes":    page(401, 409, 409, 409, 409),
		"POST /account/two-factor/disable":           page(401, 409, 409, 409, 409),
		"POST /account/two-factor/forget-browsers":   page(401, 200, 200, 200, 200),
		"GET /login/two-factor":                      all(401),
		"POST /login/two-factor":                     all(401),
		"POST /admin/two-factor-policy":              page(401, 403, 403, 403, 303),
		"POST /admin/users/:id/two-factor-reset":     page(401, 403, 403, 403, 404),
		"GET /models":                                all(200),
		"POST /listings/:id/maintenance":             {anon: 401, memberA: 403, adminA: 303, memberB: 404, adminB: 404, reviewer: 403, admin: 403},
		"POST /listings/:id/maintenance/:wid/cancel": {anon: 401, memberA: 403, adminA: 404, memberB: 404, adminB: 404, reviewer: 403, admin: 403},
		"GET /audit":                    page(303, 200, 200, 200, 200),
		"GET /audit.csv":                page(303, 200, 200, 200, 200),
		"GET /fares/bulk":               page(303, 200, 200, 403, 403),
		"POST /fares/bulk":              page(401, 422, 422, 403, 403),
		"GET /fares/bulk/template.csv":  page(303, 200, 200, 403, 403),
		"GET /admin/users":              page(303, 403, 403, 403, 200),
		"GET /admin/throttles":          page(303, 403, 403, 403, 200),
		"POST /admin/throttles/clear":   page(401, 403, 403, 403, 303),
		"GET /admin/carriers":           page(303, 403, 403, 403, 200),
		"POST /admin/carriers/invite":   page(401, 403, 403, 403, 200),
		"GET /admin/tokens":             page(303, 403, 403, 403, 200),
		"POST /admin/tokens":            page(401, 403, 403, 403, 303),
		"POST /admin/tokens/:id/revoke": page(401, 403, 403, 403, 303),
		// A carrier's tokens: its admins only (each sees its own carrier's;
		// Orbit's admin cannot revoke Nebula's token).
		// A carrier's provider feed: its admins only; no feed is set in
		// the fixture, so reading or removing it finds nothing.
		"GET /carrier/feed":               {anon: 303, memberA: 403, adminA: 200, memberB: 403, adminB: 200, reviewer: 403, admin: 403},
		"POST /carrier/feed":              {anon: 401, memberA: 403, adminA: 303, memberB: 403, adminB: 303, reviewer: 403, admin: 403},
		"POST /carrier/feed/read":         {anon: 401, memberA: 403, adminA: 404, memberB: 403, adminB: 404, reviewer: 403, admin: 403},
		"POST /carrier/feed/mapping":      {anon: 401, memberA: 403, adminA: 404, memberB: 403, adminB: 404, reviewer: 403, admin: 403},
		"POST /carrier/feed/remove":       {anon: 401, memberA: 403, adminA: 404, memberB: 403, adminB: 404, reviewer: 403, admin: 403},
		"GET /carrier/tokens":             {anon: 303, memberA: 403, adminA: 200, memberB: 403, adminB: 200, reviewer: 403, admin: 403},
		"POST /carrier/tokens":            {anon: 401, memberA: 403, adminA: 303, memberB: 403, adminB: 303, reviewer: 403, admin: 403},
		"POST /carrier/tokens/:id/revoke": {anon: 401, memberA: 403, adminA: 303, memberB: 403, adminB: 404, reviewer: 403, admin: 403},
		// The carrier API: a carrier's token only, on its own listings.
		"GET /api/v1/carrier/traffic":                      carrierAPI(200),
		"GET /api/v1/carrier/earnings":                     carrierAPI(200),
		"GET /api/v1/carrier/statements/:month":            carrierAPI(200),
		"GET /api/v1/carrier/filings":                      carrierAPI(200),
		"GET /api/v1/carrier/listings":                     carrierAPI(200),
		"POST /api/v1/carrier/listings/:listingId/filings": carrierAPI(201),
		"POST /api/v1/carrier/listings/:listingId/preview": carrierAPI(200),
		// The scope admits; the matrix listing has a filing pending and no
		// endpoint yet, so both conflict.
		"POST /api/v1/carrier/listings/:listingId/endpoint":  carrierAPI(409),
		"POST /api/v1/carrier/listings/:listingId/preflight": carrierAPI(409),
		"GET /api/v1/carrier/listings/:listingId/preflight":  carrierAPI(200),
		"GET /api/v1/carrier/filings/:filingId":              carrierAPI(200),
		"POST /api/v1/carrier/filings/:filingId/withdraw":    carrierAPI(200),
		// The API's own description is public, to people and tokens alike.
		"GET /api/v1/openapi.yaml": everyone(200),
		"GET /api/v1/openapi.json": everyone(200),
		// The portal's own figures: a gateway admin's session or a
		// metrics:read token (TestPrometheusMetrics scrapes them).
		"GET /metrics":                       api(apitoken.ScopeMetricsRead, 200),
		"GET /api/v1/catalogue":              api(apitoken.ScopeCatalogueRead, 200),
		"GET /api/v1/catalogue/changes":      api(apitoken.ScopeCatalogueRead, 200),
		"GET /api/v1/catalogue/health":       api(apitoken.ScopeCatalogueRead, 200),
		"POST /api/v1/elect":                 api(apitoken.ScopeElect, 200),
		"POST /api/v1/elect/winner":          api(apitoken.ScopeElect, 200),
		"POST /api/v1/metrics":               api(apitoken.ScopeMetricsWrite, 202),
		"POST /api/v1/metrics/holders":       api(apitoken.ScopeMetricsWrite, 202),
		"POST /api/v1/metrics/organisations": api(apitoken.ScopeMetricsWrite, 202),
		"POST /api/v1/metrics/projects":      api(apitoken.ScopeMetricsWrite, 202),
		// The matrix listing has no endpoint: the scope admits, the listing
		// has nothing to hand out (TestCredentials covers the 200).
		"GET /api/v1/listings/:listingId/credentials": api(apitoken.ScopeCredentialsRead, 404),
	}
	// A token on a page is no login: tokens get what the anonymous get.
	for _, r := range []string{memberA, adminA, memberB, adminB, reviewer} {
		e["GET /metrics"][r] = 403
	}
	e["GET /metrics"][admin] = 200
	for route, m := range e {
		if strings.Contains(route, "/api/") || route == "GET /metrics" {
			continue
		}
		for _, r := range roles {
			if strings.HasPrefix(r, "token:") {
				m[r] = m[anon]
			}
		}
	}
	return e
}

func TestAuthorizationMatrix(t *testing.T) {
	fx := buildFixture(t)
	template, err := os.ReadFile(fx.path)
	if err != nil {
		t.Fatal(err)
	}
	expected := expect()
	probe := wire.Portal(mustOpen(t, fx.path), wire.Config{Log: slog.New(slog.NewTextHandler(io.Discard, nil))})
	var routes []string
	for _, r := range probe.Echo().Routes() {
		if slices.Contains([]string{"GET", "POST", "PUT", "PATCH", "DELETE"}, r.Method) {
			routes = append(routes, r.Method+" "+r.Path)
		}
	}
	sort.Strings(routes)
	for _, route := range routes {
		want, ok := expected[route]
		if !ok {
			t.Errorf("route %s is missing from the authorization matrix: add what each role gets", route)
			continue
		}
		method, path, _ := strings.Cut(route, " ")
		t.Run(strings.ReplaceAll(route, "/", "_"), func(t *testing.T) {
			for _, role := range roles {
				copyPath := filepath.Join(t.TempDir(), "copy.db")
				if err := os.WriteFile(copyPath, template, 0o600); err != nil {
					t.Fatal(err)
				}
				st := mustOpen(t, copyPath)
				srv := wire.Portal(st, wire.Config{Log: slog.New(slog.NewTextHandler(io.Discard, nil))})
				rec := httptest.NewRecorder()
				srv.Handler().ServeHTTP(rec, fx.request(method, path, role))
				if rec.Code != want[role] {
					t.Errorf("%s as %s: status %d, want %d\n%.300s", route, role, rec.Code, want[role], rec.Body.String())
				}
				if role == memberA || role == adminA || role == tokNebula {
					for _, secret := range carrierBSecrets {
						if strings.Contains(rec.Body.String(), secret) {
							t.Errorf("%s as %s shows carrier B's private value %q", route, role, secret)
						}
					}
				}
				st.Close()
			}
		})
	}
	for route := range expected {
		if !slices.Contains(routes, route) {
			t.Errorf("the matrix lists %s, which the router does not have", route)
		}
	}
}

func mustOpen(t *testing.T, path string) *store.Store {
	t.Helper()
	st, err := store.Open(context.Background(), "sqlite:"+path)
	if err != nil {
		t.Fatal(err)
	}
	return st
}
