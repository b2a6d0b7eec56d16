package web_test

import (
	"fmt"
	"net/http"
	"net/url"
	"strings"
	"testing"
	"time"

	"github.com/chromedp/chromedp"

	"github.com/airside/airside/internal/account"
	"github.com/airside/airside/internal/demo"
	"github.com/airside/airside/internal/store"
)

// TestBrowserTwoFactorEnrolAndRecoveryCode: a carrier admin sets up
// two-factor sign-in from their account page (the key read off the page,
// the code computed as their phone would), keeps a recovery code, logs out,
// and signs in again with the password and that recovery code.
func TestBrowserTwoFactorEnrolAndRecoveryCode(t *testing.T) {
	p := newPortal(t, store.SQLite)
	base := p.srv.URL
	ctx := newBrowser(t)
	err := chromedp.Do(ctx, chromedp.EmulateViewport(1400, 900),
		browserLogin(base, "admin@nebula.example", demo.Password),
		chromedp.Navigate(base+"/account"),
	)
	if err != nil {
		t.Fatal(err)
	}
	clickThrough(t, ctx, `[data-testid="manage-two-factor"]`, "/account/two-factor")
	clickThrough(t, ctx, `[data-testid="two-factor-begin"]`, "/account/two-factor/begin")
	if err := chromedp.Do(ctx, chromedp.WaitVisible(chromedp.CSS(`[data-testid="totp-secret"]`))); err != nil {
		t.Fatal(err)
	}
	if err := waitJS(ctx, `(() => { const i = document.querySelector('[data-testid="two-factor-enrol"] img'); return !!i && i.complete && i.naturalWidth > 0; })()`,
		"the QR code drawn"); err != nil {
		t.Fatal(err)
	}
	key, err := chromedp.Run(ctx, chromedp.Text(chromedp.CSS(`[data-testid="totp-secret"]`)))
	if err != nil {
		t.Fatal(err)
	}
	code, err := account.CodeAt(strings.ReplaceAll(key, " ", ""), time.Now())
	if err != nil {
		t.Fatal(err)
	}
	if err := chromedp.Do(ctx, chromedp.SendKeys(chromedp.ID("code"), code)); err != nil {
		t.Fatal(err)
	}
	clickThrough(t, ctx, `[data-testid="two-factor-confirm"]`, "/account/two-factor/confirm")
	if err := chromedp.Do(ctx, chromedp.WaitVisible(chromedp.CSS(`[data-testid="recovery-codes"]`))); err != nil {
		t.Fatal(err)
	}
	screenshot(t, ctx, "two-factor-recovery-codes")
	recovery, err := chromedp.Run(ctx, chromedp.Text(chromedp.CSS(`[data-testid="recovery-code"]`)))
	if err != nil {
		t.Fatal(err)
	}
	clickThrough(t, ctx, `form[action="/logout"] button`, "/login")
	err = chromedp.Do(ctx,
		chromedp.SendKeys(chromedp.ID("email"), "admin@nebula.example"),
		chromedp.SendKeys(chromedp.ID("password"), demo.Password),
	)
	if err != nil {
		t.Fatal(err)
	}
	clickThrough(t, ctx, `form[action="/login"] button[type="submit"]`, "/login/two-factor")
	if err := chromedp.Do(ctx, chromedp.WaitVisible(chromedp.CSS(`[data-testid="second-step-form"]`))); err != nil {
		t.Fatal(err)
	}
	// The password alone opened nothing.
	if who, _ := chromedp.Run(ctx, chromedp.Evaluate[bool](`!!document.querySelector('[data-testid="who"]')`)); who {
		t.Fatal("the code step already shows a signed-in top bar")
	}
	if err := chromedp.Do(ctx, chromedp.SendKeys(chromedp.ID("code"), recovery)); err != nil {
		t.Fatal(err)
	}
	clickThrough(t, ctx, `[data-testid="second-step-submit"]`, "/listings")
	if err := chromedp.Do(ctx, chromedp.WaitVisible(chromedp.CSS(`[data-testid="who"]`)), chromedp.Navigate(base+"/account/two-factor")); err != nil {
		t.Fatal(err)
	}
	if err := waitText(ctx, `[data-testid="two-factor-on"]`, "9 recovery codes left"); err != nil {
		t.Fatal(err)
	}
	// Signed in with a recovery code, the person cannot use another one to
	// make new codes: the field says so and asks for a current code or the
	// password, which then works.
	err = chromedp.Do(ctx,
		chromedp.Click(chromedp.CSS(`[data-testid="new-codes-confirm"] summary`)),
		chromedp.WaitVisible(chromedp.ID("codes_proof")),
		chromedp.SendKeys(chromedp.ID("codes_proof"), recovery),
	)
	if err != nil {
		t.Fatal(err)
	}
	clickThrough(t, ctx, `[data-testid="new-codes"]`, "/account/two-factor/recovery-codes")
	if err := waitText(ctx, `[data-testid="error-codes_proof"]`, "A recovery code signs you in"); err != nil {
		t.Fatal(err)
	}
	screenshot(t, ctx, "two-factor-new-codes-refused")
	if err := chromedp.Do(ctx, chromedp.SendKeys(chromedp.ID("codes_proof"), demo.Password)); err != nil {
		t.Fatal(err)
	}
	clickThrough(t, ctx, `[data-testid="new-codes"]`, "/account/two-factor/recovery-codes")
	if err := chromedp.Do(ctx, chromedp.WaitVisible(chromedp.CSS(`[data-testid="recovery-codes"]`))); err != nil {
		t.Fatal(err)
	}
}

// TestBrowserTwoApprovals: a threefold price cut needs two reviewers. The
// first is told their approval is the first of two and afterwards is not
// offered Approve again; a second reviewer's approval publishes.
func TestBrowserTwoApprovals(t *testing.T) {
	p := newPortal(t, store.SQLite)
	p.server.FilingsForTest().Notice, p.server.FilingsForTest().QuarantineFactor = 0, 0 // the defaults: 7 days, x3
	l := listingOf(t, p.store, "nebula", "deepseek-v3.2")
	form := fmt.Sprintf("/listings/%d/file", l.ID)
	down := url.Values{"input": {l.Published.Input.Scale(1, 4).String()}, "output": {l.Published.Output.String()}, "landing_fee": {"20"},
		"discount": {l.Published.Discount.Percent()}, "cap_scope": {"global"}, "justification": {"Clearance."}, "op": {"submit"}}
	if c := l.Published.CachedInput; c != nil {
		down.Set("cached_input", c.Scale(1, 4).String())
	}
	carrier := p.client()
	carrier.login("admin@nebula.example")
	res := carrier.post(form, form, down)
	wantStatus(t, "a threefold cut", res, http.StatusSeeOther)
	filing := p.srv.URL + res.location

	ctx := newBrowser(t)
	err := chromedp.Do(ctx, chromedp.EmulateViewport(1400, 900),
		browserLogin(p.srv.URL, "reviewer@airside.example", demo.Password),
		chromedp.Navigate(filing),
		chromedp.Click(chromedp.CSS(`[data-testid="approve-open"]`)),
		chromedp.WaitVisible(chromedp.CSS(`[data-testid="approve"]`)),
	)
	if err != nil {
		t.Fatal(err)
	}
	if err := waitText(ctx, `[data-testid="publish-note"]`, "records the first of two approvals"); err != nil {
		t.Fatal(err)
	}
	clickThrough(t, ctx, `[data-testid="approve"]`, res.location)
	if err := waitJS(ctx, `!!document.querySelector('[data-testid="approved-by-you"]') && !document.querySelector('[data-testid="approve-open"]')`,
		"the first approval recorded, Approve no longer offered"); err != nil {
		t.Fatal(err)
	}
	if err := waitText(ctx, `[data-testid="filing-state"]`, "pending review"); err != nil {
		t.Fatal(err)
	}
	err = chromedp.Do(ctx, browserLogout(),
		browserLogin(p.srv.URL, "admin@airside.example", demo.Password),
		chromedp.Navigate(filing),
		chromedp.Click(chromedp.CSS(`[data-testid="approve-open"]`)),
		chromedp.WaitVisible(chromedp.CSS(`[data-testid="approve"]`)),
	)
	if err != nil {
		t.Fatal(err)
	}
	clickThrough(t, ctx, `[data-testid="approve"]`, res.location)
	if err := waitText(ctx, `[data-testid="filing-state"]`, "published"); err != nil {
		t.Fatal(err)
	}
}
