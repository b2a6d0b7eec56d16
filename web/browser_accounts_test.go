package web_test

import (
	"strings"
	"testing"

	"github.com/chromedp/chromedp"

	"github.com/airside/airside/internal/demo"
	"github.com/airside/airside/internal/store"
)

// TestBrowserAccountsAndAudit: a carrier admin changes their password and
// invites a member, who signs up through the link; a gateway admin issues a
// reset link that sets a new password; the audit log, filtered to password
// changes, shows those events as sentences and keeps the filter in the URL.
func TestBrowserAccountsAndAudit(t *testing.T) {
	p := newPortal(t, store.SQLite)
	p.server.BaseURL = p.srv.URL
	base := p.srv.URL
	ctx := newBrowser(t)
	text := func(sel string) string {
		t.Helper()
		return strings.TrimSpace(pageText(t, ctx, sel))
	}
	logout := browserLogout()
	const fresh = "a fresh passphrase for ada"

	err := chromedp.Do(ctx, chromedp.EmulateViewport(1400, 900),
		browserLogin(base, "admin@nebula.example", demo.Password),
		chromedp.Navigate(base+"/account"),
		chromedp.WaitVisible(chromedp.CSS(`[data-testid="password-form"]`)),
		chromedp.SendKeys(chromedp.ID("current"), demo.Password),
		chromedp.SendKeys(chromedp.ID("password"), fresh),
		chromedp.SendKeys(chromedp.ID("confirm"), fresh),
		chromedp.Click(chromedp.CSS(`[data-testid="change-password"]`)),
		chromedp.WaitVisible(chromedp.CSS(`[data-testid="account-done"]`)),
		chromedp.Navigate(base+"/carrier/members?carrier=nebula"),
		chromedp.WaitVisible(chromedp.CSS(`[data-testid="invite-member"]`)),
		chromedp.SendKeys(chromedp.ID("email"), "newcomer@nebula.example"),
		chromedp.Click(chromedp.CSS(`[data-testid="invite"]`)),
		chromedp.WaitVisible(chromedp.CSS(`[data-testid="member-invite-link"]`)),
	)
	if err != nil {
		t.Fatalf("change password and invite: %v", err)
	}
	link := text(`[data-testid="member-invite-link"] code`)
	if !strings.HasPrefix(link, base+"/signup/") {
		t.Fatalf("invite link %q", link)
	}
	err = chromedp.Do(ctx, logout, chromedp.Navigate(link),
		chromedp.WaitVisible(chromedp.CSS(`[data-testid="signup-role"]`)))
	if err != nil {
		t.Fatalf("open the invite: %v", err)
	}
	if role := text(`[data-testid="signup-role"]`); !strings.Contains(role, "a member of Nebula") || !strings.Contains(role, "newcomer@nebula.example") {
		t.Errorf("the sign-up page says %q", role)
	}
	if err := checkAxe(t, ctx, "the sign-up page"); err != nil {
		t.Error(err)
	}
	err = chromedp.Do(ctx,
		chromedp.SendKeys(chromedp.ID("name"), "Newcomer"),
		chromedp.SendKeys(chromedp.ID("password"), "a long passphrase here"),
		chromedp.Submit(chromedp.ID("password")),
		chromedp.WaitVisible(chromedp.CSS(`[data-testid="who"]`)),
	)
	if err != nil {
		t.Fatalf("sign up: %v", err)
	}
	if who := text(`[data-testid="who"]`); who != "newcomer@nebula.example" {
		t.Errorf("signed up as %q", who)
	}

	// The old password no longer works; the new one does.
	err = chromedp.Do(ctx, logout,
		chromedp.SendKeys(chromedp.ID("email"), "admin@nebula.example"),
		chromedp.SendKeys(chromedp.ID("password"), demo.Password),
		chromedp.Submit(chromedp.ID("password")),
		chromedp.WaitVisible(chromedp.CSS(`.error, [role="alert"]`)),
		browserLogin(base, "admin@nebula.example", fresh),
	)
	if err != nil {
		t.Fatalf("log in with the changed password: %v", err)
	}

	// A gateway admin issues a reset link; it sets a new password once.
	err = chromedp.Do(ctx, logout, browserLogin(base, "admin@airside.example", demo.Password),
		chromedp.Navigate(base+"/admin/users"),
		chromedp.Click(chromedp.CSS(`[data-testid="reset-member@nebula.example"]`)),
		chromedp.WaitVisible(chromedp.CSS(`[data-testid="reset-link"]`)),
	)
	if err != nil {
		t.Fatalf("issue a reset link: %v", err)
	}
	reset := text(`[data-testid="reset-link"] code`)
	err = chromedp.Do(ctx, logout, chromedp.Navigate(reset),
		chromedp.WaitVisible(chromedp.CSS(`[data-testid="reset"]`)))
	if err != nil {
		t.Fatalf("open the reset link: %v", err)
	}
	if err := checkAxe(t, ctx, "the reset page"); err != nil {
		t.Error(err)
	}
	err = chromedp.Do(ctx,
		chromedp.SendKeys(chromedp.ID("password"), "the reset passphrase"),
		chromedp.SendKeys(chromedp.ID("confirm"), "the reset passphrase"),
		chromedp.Click(chromedp.CSS(`[data-testid="reset"]`)),
		chromedp.WaitVisible(chromedp.CSS(`form[action="/login"]`)),
		browserLogin(base, "member@nebula.example", "the reset passphrase"),
	)
	if err != nil {
		t.Fatalf("use the reset link: %v", err)
	}

	// The audit log, filtered to password changes.
	err = chromedp.Do(ctx, logout, browserLogin(base, "admin@airside.example", demo.Password),
		chromedp.Navigate(base+"/audit"),
		chromedp.WaitVisible(chromedp.CSS(`[data-testid="audit-filters"]`)),
		chromedp.SetValue(chromedp.ID("what"), "user.password"),
		chromedp.Click(chromedp.CSS(`[data-testid="audit-filters"] button[type="submit"]`)),
	)
	if err != nil {
		t.Fatalf("filter the audit log: %v", err)
	}
	if err := waitJS(ctx, `location.search.includes("what=user.password") && document.getElementById("what").value === "user.password"`, "the filter kept in the URL and the form"); err != nil {
		t.Fatal(err)
	}
	rows, err := chromedp.Run(ctx, chromedp.Evaluate[[]string](`[...document.querySelectorAll('[data-testid="audit"] tbody tr')].map(r => r.textContent.replace(/\s+/g, " ").trim())`))
	if err != nil {
		t.Fatal(err)
	}
	if len(rows) != 1 || !strings.Contains(rows[0], "admin@nebula.example changed the password of user") {
		t.Errorf("password changes in the audit log: %q, want the one change as a sentence", rows)
	}
	err = chromedp.Do(ctx, chromedp.SetValue(chromedp.ID("what"), "user.reset.issue"),
		chromedp.Click(chromedp.CSS(`[data-testid="audit-filters"] button[type="submit"]`)))
	if err != nil {
		t.Fatal(err)
	}
	if err := waitJS(ctx, `[...document.querySelectorAll('[data-testid="audit"] tbody tr')].length === 1 &&
		document.querySelector('[data-testid="audit"] tbody tr').textContent.includes("admin@airside.example issued a password reset link for user")`, "the reset link in the audit log"); err != nil {
		t.Fatal(err)
	}
	if err := checkAxe(t, ctx, "the filtered audit log"); err != nil {
		t.Error(err)
	}
	screenshot(t, ctx, "audit-filtered")
}
