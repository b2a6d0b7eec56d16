package web_test

import (
	"context"
	"html"
	"net/http"
	"net/url"
	"regexp"
	"strings"
	"testing"
	"time"

	"github.com/airside/airside/internal/account"
	"github.com/airside/airside/internal/demo"
	"github.com/airside/airside/internal/store"
	"github.com/airside/airside/internal/store/storetest"
)

var (
	totpSecretField  = regexp.MustCompile(`data-testid="totp-secret">([A-Z2-7 ]+)<`)
	recoveryCodeItem = regexp.MustCompile(`data-testid="recovery-code">([a-z2-9-]+)<`)
)

// enrolTwoFactor sets up two-factor sign-in for c's person at the portal's
// clock and returns the secret and the recovery codes the page showed once.
func enrolTwoFactor(t *testing.T, p *testPortal, c *client) (secret string, codes []string) {
	t.Helper()
	res := c.post("/account/two-factor", "/account/two-factor/begin", url.Values{})
	wantStatus(t, "begin", res, http.StatusOK)
	m := totpSecretField.FindStringSubmatch(res.body)
	if m == nil || !strings.Contains(res.body, `src="data:image/png;base64,`) {
		t.Fatalf("the enrolment page shows no key or no QR code:\n%.2000s", res.body)
	}
	secret = strings.ReplaceAll(m[1], " ", "")
	// A reload shows the same key: the one the app scanned still works.
	if again := totpSecretField.FindStringSubmatch(c.get("/account/two-factor").body); again == nil || again[1] != m[1] {
		t.Fatal("a reload of the enrolment page shows another key")
	}
	res = c.post("/account/two-factor", "/account/two-factor/confirm", url.Values{"code": {"000000"}})
	wantStatus(t, "a wrong first code", res, http.StatusUnprocessableEntity)
	if !strings.Contains(res.body, `data-testid="error-code"`) {
		t.Error("a wrong first code is not explained by its field")
	}
	code := codeAt(t, secret, p.store.Now())
	res = c.post("/account/two-factor", "/account/two-factor/confirm", url.Values{"code": {code}})
	wantStatus(t, "confirm", res, http.StatusOK)
	for _, m := range recoveryCodeItem.FindAllStringSubmatch(res.body, -1) {
		codes = append(codes, m[1])
	}
	if len(codes) != account.RecoveryCodeCount {
		t.Fatalf("%d recovery codes shown, want %d", len(codes), account.RecoveryCodeCount)
	}
	if strings.Contains(c.get("/account/two-factor").body, codes[0]) {
		t.Error("recovery codes are shown again after the page that made them")
	}
	return secret, codes
}

func codeAt(t *testing.T, secret string, at time.Time) string {
	t.Helper()
	code, err := account.CodeAt(secret, at)
	if err != nil {
		t.Fatal(err)
	}
	return code
}

// passwordStep logs in with the password and expects to be asked for the
// code (or not).
func passwordStep(t *testing.T, c *client, email string, wantCode bool) {
	t.Helper()
	res := c.post("/login", "/login", url.Values{"email": {email}, "password": {demo.Password}, "next": {"/account"}})
	want := "/account"
	if wantCode {
		want = "/login/two-factor"
	}
	if res.status != http.StatusSeeOther || res.location != want {
		t.Fatalf("password step: %d to %q, want 303 to %q", res.status, res.location, want)
	}
}

func TestTwoFactorSignIn(t *testing.T) {
	for _, d := range storetest.Dialects {
		t.Run(string(d), func(t *testing.T) {
			p := newPortal(t, d)
			now := time.Date(2026, 12, 2, 9, 0, 0, 0, time.UTC)
			p.store.Now = func() time.Time { return now }
			const email = "admin@nebula.example"
			c := p.client()
			c.login(email)
			secret, codes := enrolTwoFactor(t, p, c)

			// A new browser: the password alone is not a login.
			b := p.client()
			passwordStep(t, b, email, true)
			wantStatus(t, "pages before the code", b.get("/listings"), http.StatusSeeOther)
			res := b.post("/login/two-factor", "/login/two-factor", url.Values{"code": {"123456"}})
			wantStatus(t, "a wrong code", res, http.StatusUnauthorized)
			if !strings.Contains(res.body, `data-testid="second-step-error"`) {
				t.Error("a wrong code is not explained")
			}
			// The code that enrolled is spent: it does not sign in again.
			res = b.post("/login/two-factor", "/login/two-factor", url.Values{"code": {codeAt(t, secret, now)}})
			wantStatus(t, "the enrolling code again", res, http.StatusUnauthorized)
			if !strings.Contains(res.body, "used already") {
				t.Errorf("a replayed code is not named as such:\n%.600s", res.body)
			}
			now = now.Add(30 * time.Second)
			res = b.post("/login/two-factor", "/login/two-factor", url.Values{"code": {codeAt(t, secret, now)}})
			if res.status != http.StatusSeeOther || res.location != "/account" {
				t.Fatalf("the right code: %d to %q\n%.600s", res.status, res.location, res.body)
			}
			wantStatus(t, "signed in", b.get("/listings"), http.StatusOK)

			// A recovery code, typed in capitals without its dash, works once.
			r := p.client()
			passwordStep(t, r, email, true)
			typed := strings.ToUpper(strings.ReplaceAll(codes[3], "-", ""))
			res = r.post("/login/two-factor", "/login/two-factor", url.Values{"code": {typed}})
			wantStatus(t, "a recovery code", res, http.StatusSeeOther)
			// The first screen after it says how many are left, once.
			first := r.get(res.location)
			if !strings.Contains(first.body, "You signed in with a recovery code: 9 codes left") {
				t.Errorf("the first screen after a recovery code does not say how many are left:\n%.2000s", first.body)
			}
			if strings.Contains(r.get(res.location).body, "You signed in with a recovery code") {
				t.Error("the count is said again on the next screen")
			}
			if !strings.Contains(r.get("/account/two-factor").body, "9 recovery codes left") {
				t.Error("the page does not count the spent recovery code")
			}
			again := p.client()
			passwordStep(t, again, email, true)
			res = again.post("/login/two-factor", "/login/two-factor", url.Values{"code": {codes[3]}})
			wantStatus(t, "a spent recovery code", res, http.StatusUnauthorized)

			// "Remember this browser": the same browser skips the code for
			// 30 days, then is asked again.
			now = now.Add(time.Minute)
			m := p.client()
			passwordStep(t, m, email, true)
			res = m.post("/login/two-factor", "/login/two-factor", url.Values{"code": {codeAt(t, secret, now)}, "remember": {"on"}})
			wantStatus(t, "remember", res, http.StatusSeeOther)
			wantStatus(t, "log out", m.post("/account", "/logout", url.Values{}), http.StatusSeeOther)
			passwordStep(t, m, email, false)
			wantStatus(t, "log out", m.post("/account", "/logout", url.Values{}), http.StatusSeeOther)
			now = now.Add(account.RememberDeviceFor + time.Hour)
			passwordStep(t, m, email, true)

			// The code step waits 5 minutes at most.
			now = now.Add(6 * time.Minute)
			res = m.post("/login", "/login/two-factor", url.Values{"code": {codeAt(t, secret, now)}})
			wantStatus(t, "a late code", res, http.StatusUnauthorized)
			if !strings.Contains(res.body, "waited too long") {
				t.Error("a late code step is not explained")
			}

			// Turning it off takes a current code. (The first session has
			// outlived its 7 days: sign in again.)
			now = now.Add(time.Minute)
			c = p.client()
			passwordStep(t, c, email, true)
			wantStatus(t, "sign in again", c.post("/login/two-factor", "/login/two-factor", url.Values{"code": {codeAt(t, secret, now)}}), http.StatusSeeOther)
			res = c.post("/account/two-factor", "/account/two-factor/disable", url.Values{"disable_code": {"111111"}})
			wantStatus(t, "turn off with a wrong code", res, http.StatusUnauthorized)
			if !strings.Contains(res.body, `data-testid="error-disable_code"`) {
				t.Error("a wrong code to turn off is not explained by its field")
			}
			now = now.Add(time.Minute)
			res = c.post("/account/two-factor", "/account/two-factor/disable", url.Values{"disable_code": {codeAt(t, secret, now)}})
			wantStatus(t, "turn off", res, http.StatusOK)
			passwordStep(t, p.client(), email, false)
			events := auditActions(t, p, email)
			for _, want := range []string{"two_factor.begin", "two_factor.enable", "login.two_factor", "login.two_factor_fail",
				"two_factor.recovery_used", "two_factor.disable"} {
				if !events[want] {
					t.Errorf("no %s in the audit trail (have %v)", want, events)
				}
			}
		})
	}
}

// auditActions are the actions recorded about a person.
func auditActions(t *testing.T, p *testPortal, email string) map[string]bool {
	t.Helper()
	u, err := p.store.FindUserByEmail(context.Background(), email)
	if err != nil {
		t.Fatal(err)
	}
	return auditOf(t, p, "user", u.ID)
}

// TestTwoFactorGuessesAreThrottled: six digits fall to guessing unless
// guesses wait like password guesses.
func TestTwoFactorGuessesAreThrottled(t *testing.T) {
	p := newPortal(t, store.SQLite)
	now := time.Date(2026, 12, 2, 9, 0, 0, 0, time.UTC)
	p.store.Now = func() time.Time { return now }
	c := p.client()
	c.login("member@nebula.example")
	secret, _ := enrolTwoFactor(t, p, c)
	b := p.client()
	passwordStep(t, b, "member@nebula.example", true)
	throttled := false
	for i := 0; i < account.AccountThrottle.Free+2 && !throttled; i++ {
		res := b.post("/login/two-factor", "/login/two-factor", url.Values{"code": {"000000"}})
		throttled = res.status == http.StatusTooManyRequests
	}
	if !throttled {
		t.Fatal("wrong codes are never held back")
	}
	// Even the right code waits its turn.
	res := b.post("/login/two-factor", "/login/two-factor", url.Values{"code": {codeAt(t, secret, now.Add(30*time.Second))}})
	wantStatus(t, "the right code while held back", res, http.StatusTooManyRequests)
}

// TestTwoFactorRequiredByPolicy: once a gateway admin requires it, staff and
// carrier admins set it up before any other page; members are free; an
// admin resets a lost one.
func TestTwoFactorRequiredByPolicy(t *testing.T) {
	p := newPortal(t, store.SQLite)
	now := time.Date(2026, 12, 2, 9, 0, 0, 0, time.UTC)
	p.store.Now = func() time.Time { return now }
	admin := p.client()
	admin.login("admin@airside.example")
	res := admin.post("/admin/users", "/admin/two-factor-policy", url.Values{"require": {"on"}})
	wantStatus(t, "require without one's own", res, http.StatusConflict)
	enrolTwoFactor(t, p, admin)
	res = admin.post("/admin/users", "/admin/two-factor-policy", url.Values{"require": {"on"}})
	wantStatus(t, "require", res, http.StatusSeeOther)

	carrierAdmin := p.client()
	carrierAdmin.login("admin@orbit.example")
	res = carrierAdmin.get("/listings")
	if res.status != http.StatusSeeOther || res.location != "/account/two-factor" {
		t.Fatalf("a carrier admin without a second factor: %d to %q, want the enrolment page", res.status, res.location)
	}
	page := carrierAdmin.get("/account/two-factor")
	wantStatus(t, "enrolment page", page, http.StatusOK)
	if !strings.Contains(page.body, `data-testid="two-factor-required"`) {
		t.Error("the enrolment page does not say it is required")
	}
	member := p.client()
	member.login("member@orbit.example")
	wantStatus(t, "a member is free", member.get("/listings"), http.StatusOK)

	enrolTwoFactor(t, p, carrierAdmin)
	wantStatus(t, "after enrolment", carrierAdmin.get("/listings"), http.StatusOK)
	page = carrierAdmin.get("/account/two-factor")
	if strings.Contains(page.body, `data-testid="disable-two-factor"`) {
		t.Error("someone it is required of is offered to turn it off")
	}

	// Lost phone: the admin resets it; the next page asks to set it up again.
	users := admin.get("/admin/users")
	id := regexp.MustCompile(`/admin/users/(\d+)/two-factor-reset`).FindStringSubmatch(users.body)
	if id == nil || !strings.Contains(users.body, `data-testid="two-factor-admin@orbit.example">`) {
		t.Fatalf("the users page offers no two-factor reset:\n%.1500s", html.UnescapeString(users.body))
	}
	res = admin.post("/admin/users", "/admin/users/"+id[1]+"/two-factor-reset", url.Values{})
	wantStatus(t, "reset", res, http.StatusSeeOther)
	res = carrierAdmin.get("/listings")
	if res.status != http.StatusSeeOther || res.location != "/account/two-factor" {
		t.Errorf("after a reset: %d to %q, want the enrolment page", res.status, res.location)
	}
	if !auditActions(t, p, "admin@orbit.example")["two_factor.reset"] {
		t.Error("the reset is not audited")
	}
}
