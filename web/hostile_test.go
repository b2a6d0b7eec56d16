package web_test

import (
	"bytes"
	"fmt"
	"io"
	"log/slog"
	"net/http"
	"net/http/httptest"
	"net/url"
	"strings"
	"testing"

	"github.com/airside/airside/internal/account"
	"github.com/airside/airside/internal/apitoken"
	"github.com/airside/airside/internal/csvsafe"

	"github.com/airside/airside/cmd/airside/wire"
	"github.com/airside/airside/internal/store"
	"github.com/airside/airside/internal/store/storetest"
	"github.com/airside/airside/web"
)

// nastyStrings are typed into every text field.
var nastyStrings = map[string]string{
	"html":         `<script>alert("x")</script><img src=x onerror=alert(1)>`,
	"sql":          `'); DROP TABLE users; --`,
	"1 MB":         strings.Repeat("A", 1<<20),
	"NUL":          "before\x00after",
	"not UTF-8":    "caf\xe9",
	"RTL override": "\u202egnp.exe",
	"CSV formula":  `=cmd|' /C calc'!A0`,
	// F4: a formula that is also a valid e-mail address, so it is stored.
	"formula e-mail": `=cmd|'/ccalc'!a0@x.example`,
	// F6: an SVG-ish url() list whose second entry leaves the document.
	"url list": `url(#m), url(https://evil.example/x)`,
}

// textFields are every place a person types free text: what to post where,
// and the page where an accepted value would be shown back.
type textField struct {
	name, who, formPage, post string
	values                    func(nasty string) url.Values
	showPage                  string
}

func textFields(p *testPortal) []textField {
	ids := listingIDs(p.t, p.store)
	listing := fmt.Sprintf("/listings/%d", ids["nebula"][0])
	filing := submitFiling(p.t, p, "member@nebula.example", ids["nebula"][1], "0.31")
	fareWith := func(field string) func(string) url.Values {
		return func(s string) url.Values {
			v := fareValues()
			v.Set(field, s)
			v.Set("op", "save")
			return v
		}
	}
	return []textField{
		{"justification", "member@nebula.example", listing + "/file", listing + "/file", fareWith("justification"), ""},
		{"fare price", "member@nebula.example", listing + "/file", listing + "/file", fareWith("input"), ""},
		{"comment", "member@nebula.example", filing, filing + "/comment", func(s string) url.Values { return url.Values{"body": {s}} }, filing},
		{"decision reason", "reviewer@airside.example", filing, filing + "/decline", func(s string) url.Values {
			return url.Values{"action": {"request_changes"}, "note": {s}}
		}, filing},
		{"capability note", "reviewer@airside.example", listing, listing + "/capabilities", func(s string) url.Values {
			return url.Values{"capability": {"tools"}, "state": {"verified"}, "note": {s}}
		}, ""},
		{"carrier name", "admin@airside.example", "/admin/carriers", "/admin/carriers/invite", func(s string) url.Values {
			return url.Values{"name": {s}, "slug": {"nasty-co"}, "email": {"x@nasty.example"}}
		}, "/admin/carriers"},
		{"carrier slug", "admin@airside.example", "/admin/carriers", "/admin/carriers/invite", func(s string) url.Values {
			return url.Values{"name": {"Nasty"}, "slug": {s}, "email": {"x@nasty.example"}}
		}, "/admin/carriers"},
		{"invite email", "admin@airside.example", "/admin/carriers", "/admin/carriers/invite", func(s string) url.Values {
			return url.Values{"name": {"Nasty"}, "slug": {"nasty-co"}, "email": {s}}
		}, "/admin/carriers"},
		{"token name", "admin@airside.example", "/admin/tokens", "/admin/tokens", func(s string) url.Values {
			return url.Values{"name": {s}, "scope": {apitoken.ScopeElect}}
		}, "/admin/tokens"},
		{"login email", "", "/login", "/login", func(s string) url.Values { return url.Values{"email": {s}, "password": {"whatever pw"}} }, ""},
		{"review filter", "reviewer@airside.example", "/review", "", nil, ""},
	}
}

// TestNastyStrings types each nasty string into each text field: it is either
// refused with a message (4xx, never 5xx) or stored and shown back escaped.
func TestNastyStrings(t *testing.T) {
	for _, d := range storetest.Dialects {
		t.Run(string(d), func(t *testing.T) {
			p := newPortal(t, d)
			for _, field := range textFields(p) {
				for label, nasty := range nastyStrings {
					c := p.client()
					if field.who != "" {
						c.login(field.who)
					}
					var res response
					if field.post == "" {
						res = c.get(field.formPage + "?kind=" + url.QueryEscape(nasty) + "&carrier=" + url.QueryEscape(nasty))
					} else {
						res = c.post(field.formPage, field.post, field.values(nasty))
					}
					if res.status >= 500 {
						t.Errorf("%s with %s: status %d\n%.300s", field.name, label, res.status, res.body)
						continue
					}
					shown := res.body
					if field.showPage != "" && res.status < 400 {
						shown += c.get(field.showPage).body
					}
					if strings.Contains(shown, "<script>alert") || strings.Contains(shown, "<img src=x") {
						t.Errorf("%s with %s: the HTML came back unescaped", field.name, label)
					}
					// 431 is Go's HTTP server refusing a URL over 1 MB before Airside sees it.
					if res.status >= 400 && res.status != 401 && res.status != 404 && res.status != 431 && !strings.Contains(res.body, "field-error") &&
						!strings.Contains(res.body, "form-error") && !strings.Contains(res.body, "error-page") {
						t.Errorf("%s with %s: refused (%d) without a message", field.name, label, res.status)
					}
				}
			}
			// The database survived: people still log in and the listings are there.
			c := p.client()
			c.login("admin@nebula.example")
			if res := c.get("/listings"); res.status != 200 || !strings.Contains(res.body, "Kimi K2.5") {
				t.Error("the portal is broken after the nasty strings")
			}
			// Whatever was stored, the audit export opens inert (F4).
			admin := p.client()
			admin.login("admin@airside.example")
			for i, rec := range mustCSV(t, admin.get("/audit.csv").body) {
				for j, cell := range rec {
					if csvsafe.IsFormula(cell) {
						t.Errorf("audit export row %d column %d opens as a formula: %.80q", i, j, cell)
					}
				}
			}
		})
	}
}

func TestBodyLimitAndSecretsNotLogged(t *testing.T) {
	var logs bytes.Buffer
	st := storetest.Open(t, store.SQLite)
	p := &testPortal{t: t, store: st}
	if _, err := account.NewService(st).CreateUser(t.Context(), nil, account.NewUser{Email: "admin@airside.example", Password: "a secret password 1", Staff: "admin"}); err != nil {
		t.Fatal(err)
	}
	server := wire.Portal(st, wire.Config{Log: slog.New(slog.NewJSONHandler(&logs, nil))})
	withoutSafeguards(server)
	p.srv = httptest.NewServer(server.Handler())
	defer p.srv.Close()
	c := p.client()
	res := c.post("/login", "/login", url.Values{"email": {"admin@airside.example"}, "password": {"a secret password 1"}})
	wantStatus(t, "login", res, http.StatusSeeOther)
	created := c.post("/admin/carriers", "/admin/carriers/invite", url.Values{"name": {"Log Co"}, "slug": {"log-co"}, "email": {"first@log.example"}})
	link := inviteLink.FindString(created.body)
	created2 := c.post("/admin/tokens", "/admin/tokens", url.Values{"name": {"gw"}, "scope": {apitoken.ScopeElect}})
	wantStatus(t, "create a token", created2, http.StatusSeeOther) // post, redirect, get
	// F8: the secret waits for its one page view in a cookie for that page
	// only, for at most two minutes, never in the session row.
	var reveal *http.Cookie
	for _, ck := range created2.cookies {
		if ck.Name == "airside_reveal" {
			reveal = ck
		}
		if ck.Name == web.SessionCookie {
			t.Error("creating a token re-saved the session")
		}
	}
	if reveal == nil || reveal.Path != "/admin/tokens" || reveal.MaxAge < 1 || reveal.MaxAge > 120 || !reveal.HttpOnly || reveal.SameSite != http.SameSiteStrictMode {
		t.Errorf("the new token's secret is carried by %+v", reveal)
	}
	tokenPage := c.get(created2.location)
	token := strings.TrimSpace(strings.Split(strings.Split(tokenPage.body, `<code id="new-token-value">`)[1], "</code>")[0])
	if again := c.get(created2.location); strings.Contains(again.body, token) {
		t.Error("the new token is shown twice")
	}
	apiCall(t, p.srv.URL, "POST", "/api/v1/elect", token, `{"model":"x"}`)
	c.get(link)
	session := c.cookie(web.SessionCookie).Value
	for _, secret := range []string{"a secret password 1", strings.TrimPrefix(link, "/signup/"), token, session} {
		if secret == "" || strings.Contains(logs.String(), secret) {
			t.Errorf("a secret reached the logs (or was empty): %.20s...", secret)
		}
	}
	if !strings.Contains(logs.String(), `"route":"/signup/:token"`) {
		t.Error("requests are not logged by route")
	}
	big := strings.NewReader("email=" + strings.Repeat("x", 5<<20))
	req, _ := http.NewRequest("POST", p.srv.URL+"/login", big)
	req.Header.Set("Content-Type", "application/x-www-form-urlencoded")
	r, err := http.DefaultClient.Do(req)
	if err != nil {
		t.Fatal(err)
	}
	body, _ := io.ReadAll(r.Body)
	r.Body.Close()
	if r.StatusCode != http.StatusRequestEntityTooLarge || !strings.Contains(string(body), "larger than Airside accepts") {
		t.Errorf("a 5 MB form: %d %.200s", r.StatusCode, body)
	}
}
