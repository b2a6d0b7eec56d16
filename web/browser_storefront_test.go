package web_test

import (
	"context"
	"os"
	"path/filepath"
	"regexp"
	"testing"

	"github.com/chromedp/chromedp"

	"github.com/airside/airside/internal/demo"
	"github.com/airside/airside/internal/store"
)

// TestBrowserApplyToStorefront: a company applies, staff approve, the
// applicant signs up, proposes a model, uploads a logo, a reviewer approves
// the profile, and the public carrier page shows the logo and its badges,
// kept as a phone-width screenshot.
func TestBrowserApplyToStorefront(t *testing.T) {
	p := newPortal(t, store.SQLite)
	p.server.BaseURL = p.srv.URL
	ctx := newBrowser(t)
	base := p.srv.URL
	login := func(email, password string) chromedp.Action[chromedp.Void] {
		return browserLogin(base, email, password)
	}
	logout := browserLogout()

	err := chromedp.Do(ctx,
		chromedp.Navigate(base+"/login"),
		chromedp.Click(chromedp.CSS(`[data-testid="apply-link"]`)),
		chromedp.WaitVisible(chromedp.CSS(`[data-testid="apply-form"]`)),
		chromedp.SendKeys(chromedp.ID("company"), "Zephyr Compute"),
		chromedp.SendKeys(chromedp.ID("website"), "https://zephyr.example"),
		chromedp.SendKeys(chromedp.ID("contact_name"), "Zoe"),
		chromedp.SendKeys(chromedp.ID("contact_email"), "zoe@zephyr.example"),
		chromedp.SendKeys(chromedp.ID("models"), "kimi-k2.5"),
		chromedp.SendKeys(chromedp.ID("description"), "H100s in Frankfurt."),
		chromedp.Click(chromedp.CSS(`[data-testid="apply"]`)),
		chromedp.WaitVisible(chromedp.CSS(`[data-testid="status-link"]`)),
	)
	if err != nil {
		t.Fatalf("apply: %v", err)
	}
	statusURL, err := chromedp.Run(ctx, chromedp.Text(chromedp.CSS(`[data-testid="status-link"] a`)))
	if err != nil || statusURL == "" {
		t.Fatalf("status link: %q, %v", statusURL, err)
	}

	// Each click that navigates goes through clickThrough, which waits for
	// the page it leads to: a click queried while the previous document is
	// being replaced finds a node that is gone ("Could not find node with
	// given id", seen under a loaded make test and once in CI).
	if err := chromedp.Do(ctx, login("admin@airside.example", demo.Password)); err != nil {
		t.Fatalf("log in to approve: %v", err)
	}
	clickThrough(t, ctx, `[data-testid="nav-applications"]`, "/applications")
	row := `[data-testid="applications"] tbody tr a`
	application := linkPath(t, ctx, row)
	clickThrough(t, ctx, row, application)
	clickThrough(t, ctx, `[data-testid="approve-application"]`, application)
	if err := waitText(ctx, `[data-testid="application-state"]`, "approved"); err != nil {
		t.Fatal(err)
	}
	err = chromedp.Do(ctx, logout, chromedp.Navigate(statusURL), chromedp.WaitVisible(chromedp.CSS(`[data-testid="signup-link"]`)),
		chromedp.Click(chromedp.CSS(`[data-testid="signup-link"] a`)),
		chromedp.WaitVisible(chromedp.ID("password")),
		chromedp.SendKeys(chromedp.ID("name"), "Zoe"),
		chromedp.SendKeys(chromedp.ID("password"), "a long passphrase for zoe"),
		chromedp.Submit(chromedp.ID("password")),
		chromedp.WaitVisible(chromedp.CSS(`[data-testid="who"]`)),
	)
	if err != nil {
		t.Fatalf("sign up: %v", err)
	}

	logo := filepath.Join(t.TempDir(), "logo.png")
	if err := os.WriteFile(logo, logoPNG(), 0o600); err != nil {
		t.Fatal(err)
	}
	err = chromedp.Do(ctx,
		chromedp.Click(chromedp.CSS(`[data-testid="nav-proposals"]`)),
		chromedp.WaitVisible(chromedp.CSS(`[data-testid="propose-form"]`)),
		chromedp.SendKeys(chromedp.ID("name"), "Qwen3 Coder"),
		chromedp.SendKeys(chromedp.ID("slug"), "qwen3-coder"),
		chromedp.SendKeys(chromedp.ID("context_tokens"), "262144"),
		chromedp.SendKeys(chromedp.ID("max_output_tokens"), "65536"),
		chromedp.Click(chromedp.CSS(`[data-testid="propose"]`)),
		chromedp.WaitVisible(chromedp.CSS(`[data-testid="proposals"]`)),
		chromedp.Click(chromedp.CSS(`[data-testid="nav-profile"]`)),
		chromedp.WaitVisible(chromedp.CSS(`[data-testid="profile-form"]`)),
		chromedp.SendKeys(chromedp.ID("description"), "Fast H100s in Frankfurt."),
		chromedp.SetUploadFiles(chromedp.ID("logo"), []string{logo}),
		chromedp.Click(chromedp.CSS(`[data-testid="submit-profile"]`)),
		chromedp.WaitVisible(chromedp.CSS(`[data-testid="profile-pending"]`)),
	)
	if err != nil {
		t.Fatalf("propose and upload: %v", err)
	}
	if props, err := p.store.FindProposals(context.Background(), nil); err != nil || len(props) != 1 || props[0].Slug != "qwen3-coder" {
		t.Fatalf("the proposal was not filed: %+v, %v", props, err)
	}

	err = chromedp.Do(ctx, logout, login("reviewer@airside.example", demo.Password),
		chromedp.Navigate(base+"/review"),
		chromedp.WaitVisible(chromedp.CSS(`[data-testid="profile-changes"]`)),
		chromedp.Click(chromedp.CSS(`[data-testid="profile-changes"] button.primary`)),
		chromedp.WaitVisible(chromedp.CSS(`[data-testid="who"]`)),
	)
	if err != nil {
		t.Fatalf("approve the profile: %v", err)
	}
	if err := waitJS(ctx, `!document.querySelector('[data-testid="profile-changes"]')`, "the profile change decided"); err != nil {
		flash, _ := chromedp.Run(ctx, chromedp.Text(chromedp.CSS("body")))
		t.Fatalf("%v\n%.600s", err, flash)
	}
	if prof, err := p.store.FindProfileBySlug(context.Background(), "zephyr-compute"); err != nil || prof.LogoType != "image/png" || prof.Description == "" {
		t.Fatalf("after approval the profile is %+v, %v; want the uploaded PNG and the description", prof, err)
	}
	err = chromedp.Do(ctx,
		logout,
		chromedp.EmulateViewport(390, 844),
		chromedp.Navigate(base+"/carriers/zephyr-compute"),
		chromedp.WaitVisible(chromedp.CSS(`[data-testid="public-logo"]`)),
	)
	if err != nil {
		t.Fatalf("review and open the public page: %v", err)
	}
	if err := waitJS(ctx, `document.querySelector('[data-testid="public-logo"]').naturalWidth === 64`, "the logo loaded"); err != nil {
		t.Fatal(err)
	}
	body, _ := chromedp.Run(ctx, chromedp.Text(chromedp.CSS("main, body")))
	if !regexp.MustCompile(`Fast H100s in Frankfurt\.`).MatchString(body) {
		t.Errorf("the public page lacks the approved description")
	}
	if err := waitJS(ctx, `document.documentElement.scrollWidth <= window.innerWidth + 1`, "no sideways scroll at phone width"); err != nil {
		t.Error(err)
	}
	screenshot(t, ctx, "public-carrier-phone")

	// A carrier in service: its logo, its verified domain and its models.
	if err := demo.SeedProfiles(context.Background(), p.store); err != nil {
		t.Fatal(err)
	}
	if err := chromedp.Do(ctx, chromedp.Navigate(base+"/carriers/nebula"), chromedp.WaitVisible(chromedp.CSS(`[data-testid="public-listings"]`))); err != nil {
		t.Fatal(err)
	}
	if err := waitText(ctx, `[data-testid="badges"]`, "domain nebula.example"); err != nil {
		t.Fatal(err)
	}
	if err := waitJS(ctx, `document.querySelector('[data-testid="public-logo"]').naturalWidth > 0`, "the SVG logo loaded"); err != nil {
		t.Fatal(err)
	}
	screenshot(t, ctx, "public-nebula-phone")
}
