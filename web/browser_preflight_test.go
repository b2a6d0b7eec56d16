package web_test

import (
	"context"
	"fmt"
	"testing"
	"time"

	"github.com/chromedp/chromedp"

	"github.com/airside/airside/internal/demo"
)

// TestBrowserPreflightFlow: a carrier registers an endpoint, watches the
// probes finish (the panel polls itself), the reviewer approves the
// endpoint, the carrier files a capability the probes earned, and the
// reviewer sees the evidence on that filing.
func TestBrowserPreflightFlow(t *testing.T) {
	p, _, fakeURL := preflightPortal(t)
	workerCtx, stop := context.WithCancel(context.Background())
	t.Cleanup(stop)
	go p.server.Preflight.Run(workerCtx) // the worker serve runs
	l := listingOf(t, p.store, "nebula", "kimi-k2.5")
	ctx := newBrowser(t)
	base := p.srv.URL
	login := func(email string) chromedp.Action[chromedp.Void] { return browserLogin(base, email, demo.Password) }
	logout := browserLogout()
	listing := fmt.Sprintf("%s/listings/%d", base, l.ID)

	err := chromedp.Do(ctx, login("admin@nebula.example"),
		chromedp.Navigate(listing),
		chromedp.WaitVisible(chromedp.CSS(`[data-testid="endpoint-form"]`)),
		chromedp.SendKeys(chromedp.ID("base_url"), fakeURL),
		chromedp.SendKeys(chromedp.ID("api_key"), carrierKey),
		chromedp.Click(chromedp.CSS(`[data-testid="register-endpoint"]`)),
		chromedp.WaitVisible(chromedp.CSS(`[data-testid="endpoint-pending"]`)),
	)
	if err != nil {
		t.Fatalf("register the endpoint: %v", err)
	}
	// The panel refreshes itself until the run is done.
	if err := waitAttr(ctx, `[data-testid="probe-vision"]`, "data-state", "passed"); err != nil {
		t.Fatal(err)
	}
	if err := waitAttr(ctx, `[data-testid="preflight"]`, "data-busy", "false"); err != nil {
		t.Fatal(err)
	}
	screenshot(t, ctx, "preflight")

	err = chromedp.Do(ctx, logout, login("reviewer@airside.example"),
		chromedp.Navigate(listing),
		chromedp.Click(chromedp.CSS(`[data-testid="in-flight"] a`)),
		chromedp.WaitVisible(chromedp.CSS(`[data-testid="decide"]`)),
		chromedp.Click(chromedp.CSS(`[data-testid="approve-open"]`)), // the confirmation
		chromedp.WaitVisible(chromedp.CSS(`[data-testid="publish-note"]`)),
		chromedp.Click(chromedp.CSS(`[data-testid="approve"]`)),
	)
	if err != nil {
		t.Fatalf("reviewer approves the endpoint: %v", err)
	}
	if err := waitText(ctx, `[data-testid="filing-state"]`, "published"); err != nil {
		t.Fatal(err)
	}

	err = chromedp.Do(ctx, logout, login("admin@nebula.example"),
		chromedp.Navigate(listing+"/file"),
		chromedp.WaitVisible(chromedp.ID("fare-form")),
	)
	if err != nil {
		t.Fatal(err)
	}
	if err := waitText(ctx, `[data-testid="verify-vision"]`, "verified"); err != nil {
		t.Fatal(err)
	}
	err = chromedp.Do(ctx,
		chromedp.Click(chromedp.CSS(`input[name="capability"][value="vision"]`)),
		chromedp.SendKeys(chromedp.ID("justification"), "Vision is live and probed."),
		chromedp.Click(chromedp.CSS(`[data-testid="submit"]`)),
	)
	if err != nil {
		t.Fatalf("file the capability: %v", err)
	}
	if err := waitText(ctx, `[data-testid="filing-state"]`, "pending review"); err != nil {
		t.Fatal(err)
	}
	filingURL, _ := chromedp.Run(ctx, chromedp.Location())

	err = chromedp.Do(ctx, logout, login("reviewer@airside.example"), chromedp.Navigate(filingURL),
		chromedp.WaitVisible(chromedp.CSS(`[data-testid="decide"]`)))
	if err != nil {
		t.Fatal(err)
	}
	if err := waitAttr(ctx, `[data-testid="probe-vision"]`, "data-state", "passed"); err != nil {
		t.Fatalf("the reviewer does not see the vision probe's evidence: %v", err)
	}
	screenshot(t, ctx, "preflight-review")
}

// waitAttr waits until the element's attribute has the value.
func waitAttr(ctx context.Context, sel, attr, want string) error {
	return waitJS(ctx, fmt.Sprintf(`(document.querySelector(%q)||{getAttribute(){return ""}}).getAttribute(%q) === %q`, sel, attr, want),
		fmt.Sprintf("%s[%s=%q]", sel, attr, want))
}

// waitJS waits, within browserWait, until the expression is true.
func waitJS(ctx context.Context, expr, what string) error {
	deadline := time.Now().Add(browserWait)
	for {
		ok, err := chromedp.Run(ctx, chromedp.Evaluate[bool](expr))
		if err == nil && ok {
			return nil
		}
		if time.Now().After(deadline) {
			return fmt.Errorf("%s never came (last error %v)", what, err)
		}
		time.Sleep(100 * time.Millisecond)
	}
}
