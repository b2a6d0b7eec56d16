package web_test

import (
	"context"
	"net/http"
	"net/url"
	"strings"
	"testing"
	"time"

	"github.com/airside/airside/internal/demo"
	"github.com/airside/airside/internal/store"
	"github.com/airside/airside/internal/store/storetest"
)

// TestASessionAloneCannotChangeTwoFactor: with only a session (someone at a
// browser left open), new recovery codes and turning two-factor off are
// refused: each takes a current code or the password, and a recovery code
// is refused without being spent. Before, new codes took nothing and the
// disable form took a recovery code: a session minted codes, then disabled.
func TestASessionAloneCannotChangeTwoFactor(t *testing.T) {
	for _, d := range storetest.Dialects {
		t.Run(string(d), func(t *testing.T) {
			p := newPortal(t, d)
			now := time.Date(2026, 12, 2, 9, 0, 0, 0, time.UTC)
			p.store.Now = func() time.Time { return now }
			c := p.client()
			c.login("member@nebula.example")
			secret, codes := enrolTwoFactor(t, p, c)

			for _, test := range []struct{ name, proof, says string }{
				{"nothing", "", "Type the code your authenticator app shows now, or your password"},
				{"a recovery code", codes[0], "A recovery code signs you in; it does not change two-factor"},
				{"a wrong password", "not-my-password-at-all", "neither the code your app shows now nor your password"},
				{"a wrong code", "000000", "neither the code your app shows now nor your password"},
			} {
				res := c.post("/account/two-factor", "/account/two-factor/recovery-codes", url.Values{"codes_proof": {test.proof}})
				wantStatus(t, "new codes with "+test.name, res, http.StatusUnauthorized)
				if !strings.Contains(res.body, `data-testid="error-codes_proof"`) || !strings.Contains(res.body, test.says) {
					t.Errorf("new codes with %s: the field does not say %q:\n%.1500s", test.name, test.says, res.body)
				}
				res = c.post("/account/two-factor", "/account/two-factor/disable", url.Values{"disable_code": {test.proof}})
				wantStatus(t, "turn off with "+test.name, res, http.StatusUnauthorized)
				if !strings.Contains(res.body, `data-testid="error-disable_code"`) || !strings.Contains(res.body, test.says) {
					t.Errorf("turn off with %s: the field does not say %q", test.name, test.says)
				}
				// The refused tries were throttled guesses: clear them so
				// the next proof is judged, not held back.
				p.clearThrottles(t)
			}
			page := c.get("/account/two-factor").body
			if !strings.Contains(page, "10 recovery codes left") || !strings.Contains(page, `data-testid="two-factor-on"`) {
				t.Fatalf("after refused tries two-factor should be on with every recovery code unspent:\n%.2000s", page)
			}

			// The password makes new codes; a current code turns it off.
			res := c.post("/account/two-factor", "/account/two-factor/recovery-codes", url.Values{"codes_proof": {demo.Password}})
			wantStatus(t, "new codes with the password", res, http.StatusOK)
			if recoveryCodeItem.FindString(res.body) == "" {
				t.Error("no new codes shown")
			}
			now = now.Add(30 * time.Second)
			res = c.post("/account/two-factor", "/account/two-factor/disable", url.Values{"disable_code": {codeAt(t, secret, now)}})
			wantStatus(t, "turn off with a current code", res, http.StatusOK)
			if !strings.Contains(res.body, `data-testid="two-factor-off"`) {
				t.Error("two-factor still on after a current code turned it off")
			}
		})
	}
}

// TestADisableThePolicyRefusesSpendsNothing: where the site requires
// two-factor of a role, turning it off is refused before the code is
// checked, so the code typed is still good (before, it was spent).
func TestADisableThePolicyRefusesSpendsNothing(t *testing.T) {
	p := newPortal(t, store.SQLite)
	now := time.Date(2026, 12, 2, 9, 0, 0, 0, time.UTC)
	p.store.Now = func() time.Time { return now }
	admin := p.client()
	admin.login("admin@airside.example")
	enrolTwoFactor(t, p, admin)
	c := p.client()
	c.login("admin@nebula.example")
	secret, _ := enrolTwoFactor(t, p, c)
	wantStatus(t, "require two-factor", admin.post("/admin/users", "/admin/two-factor-policy", url.Values{"require": {"on"}}), http.StatusSeeOther)

	now = now.Add(30 * time.Second)
	code := codeAt(t, secret, now)
	res := c.post("/account/two-factor", "/account/two-factor/disable", url.Values{"disable_code": {code}})
	wantStatus(t, "turn off where it is required", res, http.StatusForbidden)
	res = c.post("/account/two-factor", "/account/two-factor/recovery-codes", url.Values{"codes_proof": {code}})
	wantStatus(t, "the same code, still unspent, makes new codes", res, http.StatusOK)
}

// TestRememberedBrowsersAreListedAndForgotten: the account's two-factor
// page lists the browsers that skip the code; logging out everywhere, a
// password change and "Forget them all" each make them ask again (before,
// a remembered browser outlived all three).
func TestRememberedBrowsersAreListedAndForgotten(t *testing.T) {
	for _, d := range storetest.Dialects {
		t.Run(string(d), func(t *testing.T) {
			p := newPortal(t, d)
			now := time.Date(2026, 12, 2, 9, 0, 0, 0, time.UTC)
			p.store.Now = func() time.Time { return now }
			const email = "member@orbit.example"
			c := p.client()
			c.login(email)
			secret, _ := enrolTwoFactor(t, p, c)
			b := p.client()
			remember := func(step string) {
				t.Helper()
				now = now.Add(30 * time.Second)
				passwordStep(t, b, email, true)
				res := b.post("/login/two-factor", "/login/two-factor", url.Values{"code": {codeAt(t, secret, now)}, "remember": {"on"}})
				wantStatus(t, step, res, http.StatusSeeOther)
				wantStatus(t, "log out", b.post("/account", "/logout", url.Values{}), http.StatusSeeOther)
				passwordStep(t, b, email, false) // remembered: no code asked
			}

			remember("remember the browser")
			page := b.get("/account/two-factor").body
			if strings.Count(page, `data-testid="remembered-browser"`) != 1 || !strings.Contains(page, "this browser") {
				t.Fatalf("the remembered browser is not listed as this one:\n%s", page[strings.Index(page, "remembered-browsers"):])
			}
			if strings.Contains(c.get("/account/two-factor").body, "this browser") {
				t.Error("another browser is shown as this one")
			}
			if account := b.get("/account").body; !strings.Contains(account, `data-testid="account-remembered-browsers"`) ||
				!strings.Contains(account, "1 browser skips the code") {
				t.Errorf("the account page does not list the remembered browser:\n%.3000s", account)
			}

			wantStatus(t, "log out everywhere", c.post("/account", "/logout/everywhere", url.Values{}), http.StatusSeeOther)
			wantStatus(t, "b's session ended too", b.get("/account"), http.StatusSeeOther)
			passwordStep(t, b, email, true)
			c = p.client()
			now = now.Add(30 * time.Second)
			passwordStep(t, c, email, true)
			wantStatus(t, "sign in", c.post("/login/two-factor", "/login/two-factor", url.Values{"code": {codeAt(t, secret, now)}}), http.StatusSeeOther)

			b = p.client()
			remember("remember again")
			res := c.post("/account/two-factor", "/account/two-factor/forget-browsers", url.Values{})
			wantStatus(t, "forget them all", res, http.StatusOK)
			if !strings.Contains(res.body, "1 remembered browser forgotten") || strings.Contains(res.body, `data-testid="remembered-browser"`) {
				t.Errorf("forgetting is not confirmed, or a browser is still listed:\n%.2000s", res.body)
			}
			wantStatus(t, "log out", b.post("/account", "/logout", url.Values{}), http.StatusSeeOther)
			passwordStep(t, b, email, true)

			b = p.client()
			remember("remember once more")
			const next = "a-new-password-for-orbit-1"
			res = c.post("/account", "/account/password", url.Values{"current": {demo.Password}, "password": {next}, "confirm": {next}})
			wantStatus(t, "change the password", res, http.StatusOK)
			wantStatus(t, "b's session ended with the change", b.get("/account"), http.StatusSeeOther)
			res = b.post("/login", "/login", url.Values{"email": {email}, "password": {next}, "next": {"/account"}})
			if res.status != http.StatusSeeOther || res.location != "/login/two-factor" {
				t.Errorf("a browser remembered before the password changed skipped the code: %d to %q", res.status, res.location)
			}
			if !auditActions(t, p, email)["two_factor.forget_browsers"] {
				t.Error("forgetting browsers is not audited")
			}
		})
	}
}

// clearThrottles lets every held-back subject try again, as a gateway admin
// can from the users page.
func (p *testPortal) clearThrottles(t *testing.T) {
	t.Helper()
	ctx := context.Background()
	held, err := p.store.FindLoginThrottles(ctx)
	if err != nil {
		t.Fatal(err)
	}
	for _, h := range held {
		if err := p.store.ClearLoginThrottle(ctx, h.Subject); err != nil {
			t.Fatal(err)
		}
	}
}
