package web_test

import (
	"fmt"
	"net"
	"net/http"
	"net/url"
	"strings"
	"sync"
	"testing"
	"time"

	"github.com/airside/airside/internal/account"
	"github.com/airside/airside/internal/demo"
	"github.com/airside/airside/internal/store"
	"github.com/airside/airside/web"
)

func TestLogin(t *testing.T) {
	p := newPortal(t, store.SQLite)
	for _, test := range []struct {
		name, email, password string
		wantStatus            int
		wantBody              string
	}{
		{"wrong password", "admin@nebula.example", "not-the-password", http.StatusUnauthorized, "do not match an account"},
		{"unknown account gets the same message", "ghost@nebula.example", demo.Password, http.StatusUnauthorized, "do not match an account"},
		{"right password", "admin@nebula.example", demo.Password, http.StatusSeeOther, ""},
		{"email is case-insensitive", "ADMIN@nebula.example", demo.Password, http.StatusSeeOther, ""},
	} {
		t.Run(test.name, func(t *testing.T) {
			c := p.client()
			res := c.post("/login", "/login", url.Values{"email": {test.email}, "password": {test.password}})
			wantStatus(t, "login", res, test.wantStatus)
			if !strings.Contains(res.body, test.wantBody) {
				t.Errorf("body lacks %q", test.wantBody)
			}
			if test.wantStatus == http.StatusUnauthorized && !strings.Contains(res.body, `value="`+test.email+`"`) {
				t.Error("the typed email was not kept")
			}
			if test.wantStatus == http.StatusSeeOther && res.location != "/listings" {
				t.Errorf("redirect to %q", res.location)
			}
		})
	}
}

// TestSessionCookieFlags: cookies are Secure, and HSTS is sent, over HTTPS
// only; X-Forwarded-Proto says so only from a trusted proxy (F8), never from
// any client.
func TestSessionCookieFlags(t *testing.T) {
	p := newPortal(t, store.SQLite)
	for _, test := range []struct {
		name       string
		proto      string
		trusted    bool
		wantSecure bool
	}{
		{"plain HTTP", "", false, false},
		{"a client claiming TLS", "https", false, false},
		{"behind a trusted proxy's TLS", "https", true, true},
	} {
		t.Run(test.name, func(t *testing.T) {
			if test.trusted {
				_, loopback, _ := net.ParseCIDR("127.0.0.0/8")
				p.server.TrustProxies([]*net.IPNet{loopback})
				t.Cleanup(func() { p.server.TrustProxies(nil) })
			}
			c := p.client()
			if test.proto != "" {
				c.header.Set("X-Forwarded-Proto", test.proto)
			}
			res := c.post("/login", "/login", url.Values{"email": {"admin@nebula.example"}, "password": {demo.Password}})
			var session *http.Cookie
			for _, ck := range res.cookies {
				if ck.Name == web.SessionCookie {
					session = ck
				}
			}
			if session == nil {
				t.Fatal("no session cookie set at login")
			}
			if !session.HttpOnly || session.SameSite != http.SameSiteLaxMode || session.Secure != test.wantSecure {
				t.Errorf("cookie HttpOnly=%v SameSite=%v Secure=%v", session.HttpOnly, session.SameSite, session.Secure)
			}
			if hsts := res.header.Get("Strict-Transport-Security"); (hsts != "") != test.wantSecure {
				t.Errorf("Strict-Transport-Security %q", hsts)
			}
		})
	}
}

func TestLoginThrottledPerAccount(t *testing.T) {
	p := newPortal(t, store.SQLite)
	c := p.client()
	for range account.AccountThrottle.Free {
		c.post("/login", "/login", url.Values{"email": {"admin@orbit.example"}, "password": {"wrong"}})
	}
	res := c.post("/login", "/login", url.Values{"email": {"admin@orbit.example"}, "password": {demo.Password}})
	wantStatus(t, "login after failures", res, http.StatusTooManyRequests)
	if !strings.Contains(res.body, "Too many attempts") || res.header.Get("Retry-After") == "" {
		t.Error("no throttling message")
	}
	// Another account from the same address is not locked by these.
	other := p.client()
	other.login("admin@nebula.example")
}

func TestLogoutEndsTheSessionEverywhere(t *testing.T) {
	p := newPortal(t, store.SQLite)
	c := p.client()
	c.login("member@nebula.example")
	copied := *c.cookie(web.SessionCookie)
	wantStatus(t, "listings while logged in", c.get("/listings"), http.StatusOK)

	wantStatus(t, "logout", c.post("/listings", "/logout", url.Values{}), http.StatusSeeOther)

	thief := p.client()
	req, _ := http.NewRequest("GET", thief.base+"/listings", nil)
	req.AddCookie(&copied)
	res := thief.do(req)
	if res.status != http.StatusSeeOther || !strings.HasPrefix(res.location, "/login") {
		t.Errorf("replayed cookie after logout: status %d location %q", res.status, res.location)
	}
}

func TestLoginStartsANewSession(t *testing.T) {
	p := newPortal(t, store.SQLite)
	c := p.client()
	c.login("member@nebula.example")
	first := *c.cookie(web.SessionCookie)
	// Logging in as someone else from a logged-in page.
	res := c.post("/listings", "/login", url.Values{"email": {"admin@orbit.example"}, "password": {demo.Password}})
	wantStatus(t, "second login", res, http.StatusSeeOther)
	second := c.cookie(web.SessionCookie)
	if first.Value == second.Value {
		t.Fatal("the session id did not change at login")
	}
	old := p.client()
	req, _ := http.NewRequest("GET", old.base+"/listings", nil)
	req.AddCookie(&first)
	if res := old.do(req); res.status != http.StatusSeeOther {
		t.Errorf("the pre-login session still works: %d", res.status)
	}
}

func TestCSRF(t *testing.T) {
	p := newPortal(t, store.SQLite)
	creds := url.Values{"email": {"admin@nebula.example"}, "password": {demo.Password}}
	t.Run("no token is refused", func(t *testing.T) {
		c := p.client()
		c.get("/login")
		wantStatus(t, "post without token", c.postRaw("/login", creds), http.StatusForbidden)
	})
	t.Run("a wrong token is refused", func(t *testing.T) {
		c := p.client()
		c.get("/login")
		form := url.Values{"_csrf": {strings.Repeat("x", 43)}}
		for k, v := range creds {
			form[k] = v
		}
		wantStatus(t, "post with a forged token", c.postRaw("/login", form), http.StatusForbidden)
	})
	t.Run("a browser's cross-site post is refused even with a token", func(t *testing.T) {
		c := p.client()
		c.header.Set("Sec-Fetch-Site", "cross-site")
		wantStatus(t, "cross-site post", c.post("/login", "/login", creds), http.StatusForbidden)
	})
	t.Run("another origin is refused", func(t *testing.T) {
		c := p.client()
		c.header.Set("Origin", "https://evil.example")
		wantStatus(t, "foreign origin", c.post("/login", "/login", creds), http.StatusForbidden)
	})
	t.Run("a browser's same-origin post with the token passes", func(t *testing.T) {
		c := p.client()
		c.header.Set("Sec-Fetch-Site", "same-origin")
		c.header.Set("Origin", c.base)
		wantStatus(t, "same-origin post", c.post("/login", "/login", creds), http.StatusSeeOther)
	})
	t.Run("a script's post with the header token passes", func(t *testing.T) {
		c := p.client()
		page := c.get("/login")
		token := csrfField.FindStringSubmatch(page.body)[1]
		req, _ := http.NewRequest("POST", c.base+"/login", strings.NewReader(creds.Encode()))
		req.Header.Set("Content-Type", "application/x-www-form-urlencoded")
		req.Header.Set("X-CSRF-Token", token)
		wantStatus(t, "header token", c.do(req), http.StatusSeeOther)
	})
}

func TestSafeRedirectAfterLogin(t *testing.T) {
	p := newPortal(t, store.SQLite)
	for next, want := range map[string]string{"/listings/3": "/listings/3", "//evil.example": "/listings", "https://evil.example": "/listings"} {
		c := p.client()
		res := c.post("/login", "/login", url.Values{"email": {"admin@nebula.example"}, "password": {demo.Password}, "next": {next}})
		if res.location != want {
			t.Errorf("next=%q redirected to %q, want %q", next, res.location, want)
		}
	}
}

// TestSessionLifetimes: a session ends after the idle timeout without use,
// and after its absolute lifetime however busy it is.
func TestSessionLifetimes(t *testing.T) {
	p := newPortal(t, store.SQLite)
	start := time.Now().UTC()
	at := start
	p.store.Now = func() time.Time { return at }

	idle := p.client()
	idle.login("member@nebula.example")
	at = start.Add(web.SessionIdle + time.Minute)
	if res := idle.get("/listings"); res.status != http.StatusSeeOther || !strings.HasPrefix(res.location, "/login") {
		t.Errorf("a session idle for %s still works: %d", web.SessionIdle, res.status)
	}

	at = start
	busy := p.client()
	busy.login("member@nebula.example")
	for at.Before(start.Add(web.SessionLifetime - 4*time.Hour)) {
		at = at.Add(4 * time.Hour)
		wantStatus(t, "a session in use at "+at.Sub(start).String(), busy.get("/listings"), http.StatusOK)
	}
	at = start.Add(web.SessionLifetime + time.Minute)
	if res := busy.get("/listings"); res.status != http.StatusSeeOther {
		t.Errorf("a session past its lifetime still works: %d", res.status)
	}
}

func TestLogOutEverywhere(t *testing.T) {
	p := newPortal(t, store.SQLite)
	laptop, phone := p.client(), p.client()
	laptop.login("member@nebula.example")
	phone.login("member@nebula.example")
	wantStatus(t, "log out everywhere", laptop.post("/listings", "/logout/everywhere", url.Values{}), http.StatusSeeOther)
	for name, c := range map[string]*client{"laptop": laptop, "phone": phone} {
		if res := c.get("/listings"); res.status != http.StatusSeeOther || !strings.HasPrefix(res.location, "/login") {
			t.Errorf("the %s is still logged in: %d", name, res.status)
		}
	}
}

// TestInviteLinksComeFromTheBaseURL: a link handed out never takes its host
// from the request; in production without a base URL none is made.
func TestInviteLinksComeFromTheBaseURL(t *testing.T) {
	p := newPortal(t, store.SQLite)
	admin := p.client()
	admin.login("admin@airside.example")
	admin.header.Set("X-Forwarded-Host", "evil.example")
	invite := func(slug string) response {
		page := admin.get("/admin/carriers")
		token := csrfField.FindStringSubmatch(page.body)[1]
		req, _ := http.NewRequest("POST", admin.base+"/admin/carriers/invite", strings.NewReader(url.Values{"_csrf": {token},
			"name": {"Zephyr " + slug}, "slug": {slug}, "email": {"first@" + slug + ".example"}}.Encode()))
		req.Header.Set("Content-Type", "application/x-www-form-urlencoded")
		return admin.do(req)
	}
	p.server.RequireBaseURL = true
	refused := invite("zephyr-one")
	wantStatus(t, "invite without a base URL in production", refused, http.StatusConflict)
	if !strings.Contains(refused.body, "AIRSIDE_BASE_URL") {
		t.Errorf("the refusal does not say what to set:\n%.1200s", refused.body)
	}
	p.server.BaseURL = "https://airside.example"
	ok := invite("zephyr-two")
	wantStatus(t, "invite with a base URL", ok, http.StatusOK)
	if !strings.Contains(ok.body, "https://airside.example/signup/") || strings.Contains(ok.body, "evil.example/signup") {
		t.Errorf("the link does not come from the base URL:\n%.2000s", ok.body)
	}
}

// TestLoginBurstLeavesThePortalAnswering: a burst of failed logins (each a
// 19 MiB hash) runs a bounded number of hashes at once, and a logged-in
// user's page still answers during it.
func TestLoginBurstLeavesThePortalAnswering(t *testing.T) {
	p := newPortal(t, store.SQLite)
	user := p.client()
	user.login("member@nebula.example")
	var wg sync.WaitGroup
	statuses := make(chan int, 40)
	for i := range 40 {
		wg.Add(1)
		go func() {
			defer wg.Done()
			c := p.client()
			req, _ := http.NewRequest("POST", c.base+"/login", strings.NewReader(url.Values{"email": {fmt.Sprintf("nobody%d@example.com", i)}, "password": {"wrong password"}}.Encode()))
			req.Header.Set("Content-Type", "application/x-www-form-urlencoded")
			statuses <- c.do(req).status
		}()
	}
	wantStatus(t, "a logged-in page during the burst", user.get("/listings"), http.StatusOK)
	wg.Wait()
	close(statuses)
	for s := range statuses {
		if s != http.StatusUnauthorized && s != http.StatusTooManyRequests && s != http.StatusForbidden {
			t.Errorf("a failed login in the burst answered %d", s)
		}
	}
}

// TestCSRFTokenRotatesAtLogin (F8): the token a browser had before logging in
// is refused after it; the page's new one works.
func TestCSRFTokenRotatesAtLogin(t *testing.T) {
	p := newPortal(t, store.SQLite)
	c := p.client()
	c.get("/login")
	before := c.cookie("airside_csrf")
	if before == nil {
		t.Fatal("no CSRF cookie before login")
	}
	c.login("admin@nebula.example")
	after := c.cookie("airside_csrf")
	if after == nil || after.Value == before.Value {
		t.Fatal("the CSRF token did not change at login")
	}
	res := c.postRaw("/logout", url.Values{"_csrf": {before.Value}})
	wantStatus(t, "a form with the token from before login", res, http.StatusForbidden)
}

// TestCSRFTokenIsBoundToTheSession (F8): a CSRF cookie planted after login
// (a sibling subdomain can set one), with a form carrying the planted
// token, is refused; a page view restores the session's token, and its
// forms work.
func TestCSRFTokenIsBoundToTheSession(t *testing.T) {
	p := newPortal(t, store.SQLite)
	c := p.client()
	c.login("admin@nebula.example")
	bound := c.cookie("airside_csrf").Value
	u, _ := url.Parse(p.srv.URL)
	c.http.Jar.SetCookies(u, []*http.Cookie{{Name: "airside_csrf", Value: strings.Repeat("p", 43), Path: "/"}})
	res := c.postRaw("/account/password", url.Values{"_csrf": {strings.Repeat("p", 43)}, "current": {"x"}, "password": {"y"}, "confirm": {"y"}})
	wantStatus(t, "a form with a planted token", res, http.StatusForbidden)
	c.get("/account")
	if got := c.cookie("airside_csrf").Value; got != bound {
		t.Errorf("a page view left the planted token in place: %q", got)
	}
	res = c.post("/account", "/account/password", url.Values{"current": {"wrong password"}, "password": {"a new long password"}, "confirm": {"a new long password"}})
	if res.status == http.StatusForbidden {
		t.Errorf("the session's own token is refused: %d", res.status)
	}
}
