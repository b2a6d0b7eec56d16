package web_test

import (
	"context"
	"encoding/csv"
	"errors"
	"fmt"
	"net/http"
	"net/url"
	"regexp"
	"strings"
	"testing"
	"time"

	"github.com/labstack/echo/v4"

	"github.com/airside/airside/internal/account"
	"github.com/airside/airside/internal/catalogue"
	"github.com/airside/airside/internal/csvsafe"
	"github.com/airside/airside/internal/demo"
	"github.com/airside/airside/internal/store"
	"github.com/airside/airside/internal/store/storetest"
)

// listingIDs returns each carrier's listing ids.
func listingIDs(t *testing.T, st *store.Store) map[string][]int64 {
	t.Helper()
	all, err := st.FindListings(context.Background(), catalogue.ListingFilter{})
	if err != nil {
		t.Fatal(err)
	}
	ids := map[string][]int64{}
	for _, l := range all {
		ids[l.CarrierSlug] = append(ids[l.CarrierSlug], l.ID)
	}
	return ids
}

func TestCarrierSeesOnlyItsOwnListings(t *testing.T) {
	for _, d := range storetest.Dialects {
		t.Run(string(d), func(t *testing.T) {
			p := newPortal(t, d)
			ids := listingIDs(t, p.store)
			for _, test := range []struct {
				who        string
				carrier    string
				wantOwn    int
				wantOthers int
			}{
				{"member@nebula.example", "nebula", http.StatusOK, http.StatusNotFound},
				{"admin@orbit.example", "orbit", http.StatusOK, http.StatusNotFound},
				{"reviewer@airside.example", "", http.StatusOK, http.StatusOK},
				{"admin@airside.example", "", http.StatusOK, http.StatusOK},
			} {
				c := p.client()
				c.login(test.who)
				for slug, listingIDs := range ids {
					want := test.wantOthers
					if slug == test.carrier {
						want = test.wantOwn
					}
					res := c.get(fmt.Sprintf("/listings/%d", listingIDs[0]))
					wantStatus(t, test.who+" reads a listing of "+slug, res, want)
				}
				page := c.get("/listings")
				for slug, listingIDs := range ids {
					shown := strings.Contains(page.body, fmt.Sprintf(`href="/listings/%d"`, listingIDs[0]))
					if wantShown := test.carrier == "" || slug == test.carrier; shown != wantShown {
						t.Errorf("%s: listing of %s shown=%v", test.who, slug, shown)
					}
				}
			}
		})
	}
}

func TestAnotherCarriersListingLooksMissing(t *testing.T) {
	p := newPortal(t, store.SQLite)
	ids := listingIDs(t, p.store)
	c := p.client()
	c.login("member@nebula.example")
	foreign := c.get(fmt.Sprintf("/listings/%d", ids["orbit"][0]))
	missing := c.get("/listings/999999")
	if foreign.status != http.StatusNotFound || missing.status != http.StatusNotFound {
		t.Fatalf("foreign %d, missing %d", foreign.status, missing.status)
	}
	if strings.Contains(foreign.body, "Orbit") {
		t.Error("the 404 for a foreign listing names its carrier")
	}
}

func TestRoles(t *testing.T) {
	p := newPortal(t, store.SQLite)
	for _, test := range []struct {
		who, path string
		want      int
	}{
		{"", "/listings", http.StatusSeeOther},
		{"", "/admin/users", http.StatusSeeOther},
		{"admin@nebula.example", "/admin/users", http.StatusForbidden},
		{"reviewer@airside.example", "/admin/carriers", http.StatusForbidden},
		{"admin@airside.example", "/admin/users", http.StatusOK},
		{"admin@airside.example", "/admin/carriers", http.StatusOK},
		{"member@nebula.example", "/audit", http.StatusOK},
		{"member@nebula.example", "/nowhere", http.StatusNotFound},
		{"member@nebula.example", "/listings/not-a-number", http.StatusNotFound},
	} {
		c := p.client()
		if test.who != "" {
			c.login(test.who)
		}
		res := c.get(test.path)
		wantStatus(t, test.who+" GET "+test.path, res, test.want)
		if test.want >= 400 && !strings.Contains(res.body, `data-testid="error-page"`) {
			t.Errorf("%s GET %s: no error page", test.who, test.path)
		}
	}
}

func TestAuditLogIsScoped(t *testing.T) {
	p := newPortal(t, store.SQLite)
	c := p.client()
	c.login("member@nebula.example")
	body := c.get("/audit").body
	if !strings.Contains(body, "nebula") || strings.Contains(body, ">orbit<") {
		t.Error("a carrier's audit log shows another carrier's events, or none of its own")
	}
}

var inviteLink = regexp.MustCompile(`/signup/[A-Za-z0-9_-]+`)

func TestInviteCarrierAndSignUp(t *testing.T) {
	p := newPortal(t, store.SQLite)
	admin := p.client()
	admin.login("admin@airside.example")

	bad := admin.post("/admin/carriers", "/admin/carriers/invite", url.Values{"name": {"Zephyr <em>AI</em>"}, "slug": {"Bad Slug"}, "email": {"not-an-email"}})
	wantStatus(t, "invalid invite", bad, http.StatusUnprocessableEntity)
	for _, want := range []string{`data-testid="error-slug"`, `value="Bad Slug"`, `value="Zephyr &lt;em&gt;AI&lt;/em&gt;"`} {
		if !strings.Contains(bad.body, want) {
			t.Errorf("invalid invite page lacks %s", want)
		}
	}
	if strings.Contains(bad.body, "<em>AI</em>") {
		t.Error("typed HTML came back unescaped")
	}

	ok := admin.post("/admin/carriers", "/admin/carriers/invite", url.Values{"name": {"Zephyr AI"}, "slug": {"zephyr"}, "email": {"first@zephyr.example"}})
	wantStatus(t, "invite", ok, http.StatusOK)
	link := inviteLink.FindString(ok.body)
	if link == "" {
		t.Fatal("no sign-up link shown")
	}

	newcomer := p.client()
	form := newcomer.get(link)
	wantStatus(t, "sign-up form", form, http.StatusOK)
	short := newcomer.post(link, link, url.Values{"name": {"Zoe"}, "password": {"short"}})
	wantStatus(t, "short password", short, http.StatusUnprocessableEntity)
	if !strings.Contains(short.body, `data-testid="error-password"`) || !strings.Contains(short.body, `value="Zoe"`) {
		t.Error("short password: no message next to the field, or the name was lost")
	}
	done := newcomer.post(link, link, url.Values{"name": {"Zoe"}, "password": {"a long enough password"}})
	wantStatus(t, "sign up", done, http.StatusSeeOther)
	page := newcomer.get("/listings")
	if !strings.Contains(page.body, "Welcome to Airside, Zoe") || !strings.Contains(page.body, "Zephyr AI") {
		t.Errorf("after sign-up the new admin does not see their carrier:\n%.500s", page.body)
	}
	again := p.client()
	wantStatus(t, "reused link", again.get(link), http.StatusNotFound)
}

func TestHealthEndpoints(t *testing.T) {
	p := newPortal(t, store.SQLite)
	c := p.client()
	wantStatus(t, "healthz", c.get("/healthz"), http.StatusOK)
	wantStatus(t, "readyz", c.get("/readyz"), http.StatusOK)
	p.store.Close()
	wantStatus(t, "readyz with the database closed", c.get("/readyz"), http.StatusServiceUnavailable)
}

func TestSecurityHeaders(t *testing.T) {
	p := newPortal(t, store.SQLite)
	res := p.client().get("/login")
	for header, want := range map[string]string{
		"Content-Security-Policy": "frame-ancestors 'none'",
		"X-Content-Type-Options":  "nosniff",
		"Referrer-Policy":         "same-origin",
	} {
		if !strings.Contains(res.header.Get(header), want) {
			t.Errorf("%s = %q, want it to contain %q", header, res.header.Get(header), want)
		}
	}
	if strings.Contains(res.header.Get("Content-Security-Policy"), "unsafe-inline") {
		t.Error("CSP allows inline script")
	}
}

func TestErrorPages(t *testing.T) {
	p := newPortal(t, store.SQLite)
	p.server.Echo().GET("/test/fail", func(echo.Context) error { return errors.New("secret detail: dsn=postgres://x") })
	p.server.Echo().GET("/test/panic", func(echo.Context) error { panic("boom") })
	c := p.client()
	for _, path := range []string{"/test/fail", "/test/panic"} {
		res := c.get(path)
		wantStatus(t, path, res, http.StatusInternalServerError)
		if !strings.Contains(res.body, "Something went wrong") || strings.Contains(res.body, "secret detail") || strings.Contains(res.body, "boom") {
			t.Errorf("%s: the 500 page leaks or lacks its message:\n%.400s", path, res.body)
		}
	}
	// With the database gone, pages answer 503 and say it is passing.
	c.login("member@nebula.example")
	p.store.Close()
	res := c.get("/listings")
	wantStatus(t, "listings without a database", res, http.StatusServiceUnavailable)
	if !strings.Contains(res.body, "cannot reach its database") {
		t.Errorf("503 page lacks its message:\n%.400s", res.body)
	}
}

// TestAuditLogReadsAndFilters: the audit log reads as sentences with links,
// filters by who, what, carrier, listing and period, pages, and exports what
// the filters select as CSV; a carrier exports only its own events.
func TestAuditLogReadsAndFilters(t *testing.T) {
	p := newPortal(t, store.SQLite)
	ids := listingIDs(t, p.store)
	filing := submitFiling(t, p, "member@nebula.example", ids["nebula"][0], "0.41")
	rev := p.client()
	rev.login("reviewer@airside.example")
	wantStatus(t, "approve", rev.post(filing, filing+"/approve", url.Values{}), http.StatusSeeOther)

	admin := p.client()
	admin.login("admin@airside.example")
	page := admin.get("/audit?what=filing.approve")
	wantStatus(t, "filtered audit", page, http.StatusOK)
	if !strings.Contains(page.body, "reviewer@airside.example approved filing #") || !strings.Contains(page.body, `href="`+filing+`"`) {
		t.Errorf("the approval is not a sentence with a link:\n%.3000s", page.body)
	}
	if strings.Contains(page.body, "submitted filing #") {
		t.Error("the action filter let other actions through")
	}
	if body := admin.get("/audit?who=nobody@example.com").body; !strings.Contains(body, `data-testid="audit-empty"`) {
		t.Error("filtering by an unknown person still lists events")
	}
	tomorrow := time.Now().UTC().AddDate(0, 0, 1).Format(time.DateOnly)
	if body := admin.get("/audit?from=" + tomorrow).body; !strings.Contains(body, `data-testid="audit-empty"`) {
		t.Error("a period in the future still lists events")
	}
	if body := admin.get(fmt.Sprintf("/audit?what=listing.&listing=%d", ids["orbit"][0])).body; strings.Contains(body, "nebula") {
		t.Error("the listing filter let another listing's events through")
	}
	// Enough events for more than a page.
	for i := range 40 {
		wantStatus(t, "comment", rev.post(filing, filing+"/comment", url.Values{"body": {fmt.Sprintf("note %d", i)}}), http.StatusSeeOther)
	}
	first := admin.get("/audit")
	if !strings.Contains(first.body, `data-testid="audit-next"`) {
		t.Fatal("no next page on a long log")
	}
	if second := admin.get("/audit?page=2"); second.status != http.StatusOK || second.body == first.body {
		t.Error("page 2 is page 1")
	}

	csvRes := admin.get("/audit.csv?what=filing.")
	wantStatus(t, "csv", csvRes, http.StatusOK)
	if !strings.HasPrefix(csvRes.header.Get("Content-Type"), "text/csv") {
		t.Errorf("content type %q", csvRes.header.Get("Content-Type"))
	}
	records, err := csv.NewReader(strings.NewReader(csvRes.body)).ReadAll()
	if err != nil || len(records) < 3 || records[0][0] != "at_utc" {
		t.Fatalf("csv %v, %v", records, err)
	}
	for _, r := range records[1:] {
		if !strings.HasPrefix(r[3], "filing.") {
			t.Errorf("the csv holds %s outside the filter", r[3])
		}
	}
	orbit := p.client()
	orbit.login("admin@orbit.example")
	for _, r := range mustCSV(t, orbit.get("/audit.csv").body)[1:] {
		if r[2] != "orbit" && r[2] != "" {
			t.Errorf("orbit's export holds %s's event", r[2])
		}
	}
}

func mustCSV(t *testing.T, body string) [][]string {
	t.Helper()
	records, err := csv.NewReader(strings.NewReader(body)).ReadAll()
	if err != nil || len(records) == 0 {
		t.Fatalf("csv: %v", err)
	}
	return records
}

func TestFaviconAndFirstFare(t *testing.T) {
	p := newPortal(t, store.SQLite)
	c := p.client()
	fav := c.get("/favicon.ico")
	wantStatus(t, "favicon", fav, http.StatusMovedPermanently)
	icon := c.get(fav.location)
	wantStatus(t, "favicon target", icon, http.StatusOK)
	if !strings.Contains(icon.body, "<svg") {
		t.Error("the favicon is not the SVG icon")
	}
	admin := p.client()
	admin.login("admin@nebula.example")
	listings := admin.get("/listings")
	opt := regexp.MustCompile(`<option value="(\d+:\d+)">`).FindStringSubmatch(listings.body)
	if opt == nil {
		t.Fatal("no model to add")
	}
	added := admin.post("/listings", "/listings", url.Values{"model": {opt[1]}})
	page := admin.get(added.location)
	if !strings.Contains(page.body, "File the first fare") || strings.Contains(page.body, "File a fare change") {
		t.Error("a listing without a fare offers a fare change")
	}
	if !strings.Contains(page.body, `rel="icon"`) {
		t.Error("pages do not name their icon")
	}
}

// TestEveryCSVExportIsInert (F4): a person whose e-mail is a spreadsheet
// formula acts, and no cell of any export (the audit log, a statement, the
// bulk template) opens as a formula; the e-mail is there, quoted.
func TestEveryCSVExportIsInert(t *testing.T) {
	p := newPortal(t, store.SQLite)
	const hostile = "=cmd|'/ccalc'!a0@x.example"
	if _, err := account.NewService(p.store).CreateUser(context.Background(), nil, account.NewUser{Email: hostile, Name: "@SUM(1+1)",
		Password: demo.Password, Staff: account.StaffReviewer}); err != nil {
		t.Fatal(err)
	}
	rev := p.client()
	rev.login(hostile) // a login is audited with its actor
	admin := p.client()
	admin.login("admin@airside.example")
	carrier := p.client()
	carrier.login("admin@nebula.example")
	exports := map[string]string{
		"audit":     admin.get("/audit.csv").body,
		"statement": carrier.get("/traffic/statements/" + time.Now().UTC().Format("2006-01") + ".csv").body,
		"template":  carrier.get("/fares/bulk/template.csv").body,
	}
	for name, body := range exports {
		records := mustCSV(t, body)
		if len(records) < 2 {
			t.Errorf("%s: %d rows", name, len(records))
		}
		for i, rec := range records {
			for j, cell := range rec {
				if csvsafe.IsFormula(cell) {
					t.Errorf("%s row %d column %s opens as a formula: %q", name, i, records[0][j], cell)
				}
			}
		}
	}
	if !strings.Contains(exports["audit"], "'"+hostile) {
		t.Errorf("the audit export lacks the quoted e-mail:\n%.1000s", exports["audit"])
	}
}
