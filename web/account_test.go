package web_test

import (
	"net/http"
	"net/url"
	"regexp"
	"strings"
	"testing"

	"github.com/airside/airside/internal/demo"
	"github.com/airside/airside/internal/mailer"
	"github.com/airside/airside/internal/mailer/mailertest"
	"github.com/airside/airside/internal/store"
)

func loginWith(t *testing.T, p *testPortal, email, password string) (*client, int) {
	t.Helper()
	c := p.client()
	res := c.post("/login", "/login", url.Values{"email": {email}, "password": {password}})
	return c, res.status
}

func TestAccountSelfService(t *testing.T) {
	p := newPortal(t, store.SQLite)
	p.server.BaseURL = p.srv.URL
	member := p.client()
	member.login("member@nebula.example")
	other := p.client()
	other.login("member@nebula.example")

	// Change password: the wrong current one is refused by its field.
	res := member.post("/account", "/account/password", url.Values{"current": {"nope"}, "password": {"a brand new passphrase"}, "confirm": {"a brand new passphrase"}})
	wantStatus(t, "wrong current password", res, http.StatusUnprocessableEntity)
	if !strings.Contains(res.body, `data-testid="error-current"`) {
		t.Error("the wrong current password is not explained by its field")
	}
	res = member.post("/account", "/account/password", url.Values{"current": {demo.Password}, "password": {"a brand new passphrase"}, "confirm": {"a brand new passphrase"}})
	wantStatus(t, "change password", res, http.StatusOK)
	wantStatus(t, "this session stays", member.get("/listings"), http.StatusOK)
	wantStatus(t, "the other session ended", other.get("/listings"), http.StatusSeeOther)
	if _, status := loginWith(t, p, "member@nebula.example", "a brand new passphrase"); status != http.StatusSeeOther {
		t.Errorf("login with the new password: %d", status)
	}

	// A carrier admin invites a person, changes their role, removes them.
	admin := p.client()
	admin.login("admin@nebula.example")
	res = admin.post("/carrier/members", "/carrier/members/invite?carrier=nebula", url.Values{"email": {"new@nebula.example"}, "role": {"member"}})
	wantStatus(t, "invite", res, http.StatusOK)
	link := regexp.MustCompile(`/signup/([A-Za-z0-9_-]+)`).FindStringSubmatch(res.body)
	if link == nil {
		t.Fatal("no sign-up link")
	}
	newbie := p.client()
	wantStatus(t, "sign up", newbie.post("/signup/"+link[1], "/signup/"+link[1], url.Values{"name": {"New"}, "password": {"a long passphrase here"}}), http.StatusSeeOther)
	people := admin.get("/carrier/members?carrier=nebula").body
	if !strings.Contains(people, "new@nebula.example") {
		t.Fatal("the new member is not listed")
	}
	newID := regexp.MustCompile(`/carrier/members/(\d+)/role\?carrier=nebula`).FindAllStringSubmatch(people, -1)
	var target string
	for _, m := range newID {
		if strings.Contains(people[strings.Index(people, m[0])-400:strings.Index(people, m[0])], "new@nebula.example") {
			target = m[1]
		}
	}
	if target == "" {
		t.Fatal("cannot find the new member's row")
	}
	wantStatus(t, "make admin", admin.post("/carrier/members", "/carrier/members/"+target+"/role?carrier=nebula", url.Values{"role": {"admin"}}), http.StatusSeeOther)
	wantStatus(t, "remove", admin.post("/carrier/members", "/carrier/members/"+target+"/remove?carrier=nebula", url.Values{}), http.StatusSeeOther)
	wantStatus(t, "the removed person's session", newbie.get("/listings"), http.StatusSeeOther)
	if strings.Contains(admin.get("/carrier/members?carrier=nebula").body, "new@nebula.example") {
		t.Error("the removed member is still listed")
	}

	// The gateway admin deactivates, then issues a reset link.
	gw := p.client()
	gw.login("admin@airside.example")
	users := gw.get("/admin/users").body
	uid := regexp.MustCompile(`/admin/users/(\d+)/deactivate"[^>]*>\s*<input[^>]*>\s*<button[^>]*data-testid="deactivate-member@nebula.example"`).FindStringSubmatch(users)
	if uid == nil {
		t.Fatal("no deactivate button for member@nebula.example")
	}
	wantStatus(t, "deactivate", gw.post("/admin/users", "/admin/users/"+uid[1]+"/deactivate", url.Values{}), http.StatusSeeOther)
	wantStatus(t, "the deactivated user's session", member.get("/listings"), http.StatusSeeOther)
	if _, status := loginWith(t, p, "member@nebula.example", "a brand new passphrase"); status == http.StatusSeeOther {
		t.Error("a deactivated user logged in")
	}
	wantStatus(t, "reactivate", gw.post("/admin/users", "/admin/users/"+uid[1]+"/activate", url.Values{}), http.StatusSeeOther)
	res = gw.post("/admin/users", "/admin/users/"+uid[1]+"/reset", url.Values{})
	wantStatus(t, "issue a reset link", res, http.StatusOK)
	reset := regexp.MustCompile(`/reset/([A-Za-z0-9_-]+)`).FindStringSubmatch(res.body)
	if reset == nil {
		t.Fatal("no reset link shown")
	}
	anon := p.client()
	wantStatus(t, "use the reset link", anon.post("/reset/"+reset[1], "/reset/"+reset[1], url.Values{"password": {"reset passphrase 2026"}, "confirm": {"reset passphrase 2026"}}), http.StatusSeeOther)
	if _, status := loginWith(t, p, "member@nebula.example", "reset passphrase 2026"); status != http.StatusSeeOther {
		t.Errorf("login after the reset: %d", status)
	}
	wantStatus(t, "the link again", anon.get("/reset/"+reset[1]), http.StatusNotFound)

	// The last admin of a carrier stays one.
	me := regexp.MustCompile(`/carrier/members/(\d+)/role\?carrier=nebula`).FindStringSubmatch(admin.get("/carrier/members?carrier=nebula").body)
	res = admin.post("/carrier/members", "/carrier/members/"+me[1]+"/role?carrier=nebula", url.Values{"role": {"member"}})
	if res.status != http.StatusSeeOther || !strings.Contains(admin.get("/carrier/members?carrier=nebula").body, "at least one admin") {
		t.Error("the last admin was demoted, or not told why not")
	}
}

// TestLinksAreMailedWithSMTP: with AIRSIDE_SMTP_URL set, a member invite and
// a reset link are also e-mailed to the person, and the page says so; a relay
// that is down leaves the link shown and says to pass it on.
func TestLinksAreMailedWithSMTP(t *testing.T) {
	p := newPortal(t, store.SQLite)
	p.server.BaseURL = p.srv.URL
	relay := mailertest.Start(t)
	m, err := mailer.FromURL("smtp://" + relay.Addr + "?from=portal@airside.example")
	if err != nil {
		t.Fatal(err)
	}
	p.server.Mail = m
	admin := p.client()
	admin.login("admin@nebula.example")
	res := admin.post("/carrier/members", "/carrier/members/invite?carrier=nebula", url.Values{"email": {"mailme@nebula.example"}, "role": {"member"}})
	wantStatus(t, "invite", res, http.StatusOK)
	link := regexp.MustCompile(`https?://[^<\s]+/signup/[A-Za-z0-9_-]+`).FindString(res.body)
	if link == "" || !strings.Contains(res.body, "Also e-mailed to mailme@nebula.example.") {
		t.Fatalf("invite page: link %q, mailed note missing", link)
	}
	msgs := relay.Messages()
	if len(msgs) != 1 || msgs[0].To != "mailme@nebula.example" || !strings.Contains(msgs[0].Data, link) {
		t.Fatalf("relay got %+v, want one message to the invitee with %s", msgs, link)
	}

	gw := p.client()
	gw.login("admin@airside.example")
	uid := regexp.MustCompile(`/admin/users/(\d+)/deactivate"[^>]*>\s*<input[^>]*>\s*<button[^>]*data-testid="deactivate-member@nebula.example"`).FindStringSubmatch(gw.get("/admin/users").body)
	if uid == nil {
		t.Fatal("no row for member@nebula.example")
	}
	res = gw.post("/admin/users", "/admin/users/"+uid[1]+"/reset", url.Values{})
	reset := regexp.MustCompile(`https?://[^<\s]+/reset/[A-Za-z0-9_-]+`).FindString(res.body)
	if msgs := relay.Messages(); len(msgs) != 2 || msgs[1].To != "member@nebula.example" || reset == "" || !strings.Contains(msgs[1].Data, reset) {
		t.Fatalf("reset link %q not mailed to the member: %+v", reset, msgs)
	}

	down, _ := mailer.FromURL("smtp://127.0.0.1:1?from=portal@airside.example")
	p.server.Mail = down
	res = gw.post("/admin/users", "/admin/users/"+uid[1]+"/reset", url.Values{})
	wantStatus(t, "reset with the relay down", res, http.StatusOK)
	if !strings.Contains(res.body, "/reset/") || !strings.Contains(res.body, "could not be sent; pass the link on yourself") {
		t.Error("with the relay down the link is not shown with a note to pass it on")
	}
}

// TestAlertEmailSetting: a carrier admin gets a daily digest by default
// and can choose each alert, or none, from the account page; a member gets
// none by default; a choice not offered is refused next to the field; staff
// have no such setting.
func TestAlertEmailSetting(t *testing.T) {
	p := newPortal(t, store.SQLite)
	radio := regexp.MustCompile(`<input type="radio" name="alert_email"(?: id="alert_email")? value="(\w+)" checked`)
	mode := func(c *client) string {
		t.Helper()
		m := radio.FindStringSubmatch(c.get("/account").body)
		if m == nil {
			t.Fatal("no alert e-mail choice checked on the account page")
		}
		return m[1]
	}
	admin := p.client()
	admin.login("admin@nebula.example")
	if got := mode(admin); got != "digest" {
		t.Errorf("a carrier admin's alert e-mails are %q by default, want the digest", got)
	}
	for _, want := range []string{"off", "each", "digest"} {
		wantStatus(t, "choose "+want, admin.post("/account", "/account/alert-email", url.Values{"alert_email": {want}}), http.StatusOK)
		if got := mode(admin); got != want {
			t.Errorf("chose %s, the page says %s", want, got)
		}
	}
	res := admin.post("/account", "/account/alert-email", url.Values{"alert_email": {"on"}})
	wantStatus(t, "a choice not offered", res, http.StatusUnprocessableEntity)
	if !strings.Contains(res.body, `data-testid="error-alert_email"`) {
		t.Error("a refused choice is not explained by its field")
	}
	member := p.client()
	member.login("member@nebula.example")
	if got := mode(member); got != "off" {
		t.Errorf("a member's alert e-mails are %q by default", got)
	}
	staff := p.client()
	staff.login("reviewer@airside.example")
	if strings.Contains(staff.get("/account").body, `data-testid="alert-email"`) {
		t.Error("staff are offered carriers' alert e-mails")
	}
}
