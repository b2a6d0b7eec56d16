package web_test

import (
	"context"
	"flag"
	"fmt"
	"os"
	"path/filepath"
	"strconv"
	"strings"
	"testing"
	"time"

	"github.com/chromedp/chromedp"

	"github.com/airside/airside/internal/demo"
	"github.com/airside/airside/internal/store"
)

// chromiumPath is Debian's Chromium; AIRSIDE_CHROMIUM overrides it.
func chromiumPath() string {
	if p := os.Getenv("AIRSIDE_CHROMIUM"); p != "" {
		return p
	}
	return "/usr/bin/chromium"
}

// newBrowser starts a headless Chromium tab for the test. Without Chromium the
// test is skipped, except under CI=true where that is a failure.
func newBrowser(t *testing.T) context.Context {
	t.Helper()
	if _, err := os.Stat(chromiumPath()); err != nil {
		if os.Getenv("CI") == "true" {
			t.Fatalf("Chromium is required with CI=true: %v", err)
		}
		t.Skipf("Chromium not found at %s; set CI=true to make this a failure", chromiumPath())
	}
	opts := append(chromedp.DefaultExecAllocatorOptions[:],
		chromedp.ExecPath(chromiumPath()),
		chromedp.NoSandbox,
		chromedp.WindowSize(1300, 900),
		chromedp.Flag("disable-quic", true),
		chromedp.Flag("disable-component-update", true),
		chromedp.UserDataDir(t.TempDir()),
	)
	allocCtx, cancelAlloc := chromedp.NewExecAllocator(context.Background(), opts...)
	ctx, cancelCtx := chromedp.NewContext(allocCtx)
	ctx, cancelTimeout := context.WithTimeout(ctx, 3*time.Minute)
	t.Cleanup(func() { cancelTimeout(); cancelCtx(); cancelAlloc() })
	return ctx
}

// artifactsWanted reports `go test -artifacts`: screenshots that are only
// for people (not asserted on) are taken then.
func artifactsWanted() bool {
	f := flag.Lookup("test.artifacts")
	return f != nil && f.Value.String() == "true"
}

// screenshot saves the page under the test's artifact folder (kept with
// `go test -artifacts`).
func screenshot(t *testing.T, ctx context.Context, name string) {
	t.Helper()
	// A page still loading has no size to capture.
	if err := waitJS(ctx, `document.readyState === "complete" && document.documentElement.clientWidth > 0`, "a laid-out page"); err != nil {
		t.Fatalf("screenshot %s: %v", name, err)
	}
	png, err := chromedp.Run(ctx, chromedp.FullScreenshot(100))
	if err != nil {
		t.Fatalf("screenshot %s: %v", name, err)
	}
	path := filepath.Join(t.ArtifactDir(), name+".png")
	if err := os.WriteFile(path, png, 0o644); err != nil {
		t.Fatal(err)
	}
	t.Logf("screenshot: %s", path)
}

func TestBrowserLoginSeeListingsLogout(t *testing.T) {
	p := newPortal(t, store.SQLite)
	ctx := newBrowser(t)

	// A deep link sends the visitor to log in and back.
	err := chromedp.Do(ctx,
		chromedp.Navigate(p.srv.URL+"/listings"),
		chromedp.WaitVisible(chromedp.ID("email")),
		chromedp.SendKeys(chromedp.ID("email"), "admin@nebula.example"),
		chromedp.SendKeys(chromedp.ID("password"), "wrong password"),
		chromedp.Submit(chromedp.ID("password")),
		chromedp.WaitVisible(chromedp.CSS(`[data-testid="login-error"]`)),
	)
	if err != nil {
		t.Fatalf("wrong password: %v", err)
	}
	typed, err := chromedp.Run(ctx, chromedp.Value(chromedp.ID("email")))
	if err != nil || typed != "admin@nebula.example" {
		t.Errorf("after a failed login the email field holds %q (%v)", typed, err)
	}

	err = chromedp.Do(ctx,
		chromedp.SendKeys(chromedp.ID("password"), demo.Password),
		chromedp.Submit(chromedp.ID("password")),
		chromedp.WaitVisible(chromedp.CSS(`[data-testid="listings"]`)),
	)
	if err != nil {
		t.Fatalf("log in: %v", err)
	}
	who, _ := chromedp.Run(ctx, chromedp.Text(chromedp.CSS(`[data-testid="who"]`)))
	if who != "admin@nebula.example" {
		t.Errorf("logged in as %q", who)
	}
	table, _ := chromedp.Run(ctx, chromedp.Text(chromedp.CSS(`[data-testid="listings"]`)))
	if !strings.Contains(table, "Kimi K2.5") || strings.Contains(table, "GLM-5") {
		t.Errorf("Nebula's listings table shows the wrong models:\n%s", table)
	}
	screenshot(t, ctx, "listings")

	err = chromedp.Do(ctx,
		chromedp.Click(chromedp.CSS(`[data-testid="listing-kimi-k2.5"] a`)),
		chromedp.WaitVisible(chromedp.CSS(`dl.kv`)),
	)
	if err != nil {
		t.Fatalf("open a listing: %v", err)
	}
	heading, _ := chromedp.Run(ctx, chromedp.Text(chromedp.CSS("h1")))
	if !strings.Contains(heading, "Kimi K2.5") {
		t.Errorf("listing page heading %q", heading)
	}
	screenshot(t, ctx, "listing")

	err = chromedp.Do(ctx,
		chromedp.Click(chromedp.CSS(`button.link`)),
		chromedp.WaitVisible(chromedp.ID("email")),
		chromedp.Navigate(p.srv.URL+"/listings"),
		chromedp.WaitVisible(chromedp.ID("email")),
	)
	if err != nil {
		t.Fatalf("after logout /listings should ask to log in again: %v", err)
	}
}

// browserWait is how long a browser test waits for a condition: long enough
// for a loaded 2-core machine (go test runs packages side by side, the soak
// among them), far inside the browser context's own timeout.
const browserWait = 30 * time.Second

// waitText polls until the element's text contains want (navigation after a
// click can briefly leave the previous page's elements in place).
func waitText(ctx context.Context, sel, want string) error {
	deadline := time.Now().Add(browserWait)
	for {
		got, err := chromedp.Run(ctx, chromedp.Text(chromedp.CSS(sel), chromedp.AtLeast(0)))
		if err == nil && strings.Contains(got, want) {
			return nil
		}
		if time.Now().After(deadline) {
			return fmt.Errorf("%s never showed %q (last %q, %v)", sel, want, got, err)
		}
		time.Sleep(50 * time.Millisecond)
	}
}

// pageText is the visible text (innerText) of the first element sel
// matches, once there is one, read in the page by one script rather than
// through a node chromedp looked up first: a form's POST answer can replace
// the document between the lookup and the read ("No node with given id
// found"), which failed TestBrowserAccountsAndAudit once in CI.
func pageText(t *testing.T, ctx context.Context, sel string) string {
	t.Helper()
	js := `(() => { const e = document.querySelector(` + strconv.Quote(sel) + `); return e === null ? null : e.innerText })()`
	if err := chromedp.Do(ctx, chromedp.WaitReady(chromedp.CSS(sel))); err != nil {
		t.Fatalf("wait for %s: %v", sel, err)
	}
	s, err := chromedp.Run(ctx, chromedp.Evaluate[*string](js))
	if err != nil || s == nil {
		t.Fatalf("read %s: %v (found: %v)", sel, err, s != nil)
	}
	return *s
}

// browserLogin logs in through the login form and waits for the top bar.
func browserLogin(base, email, password string) chromedp.Action[chromedp.Void] {
	return chromedp.Steps(
		chromedp.Navigate(base+"/login"),
		chromedp.WaitVisible(chromedp.ID("email")),
		chromedp.SendKeys(chromedp.ID("email"), email),
		chromedp.SendKeys(chromedp.ID("password"), password),
		chromedp.Submit(chromedp.ID("password")),
		chromedp.WaitVisible(chromedp.CSS(`[data-testid="who"]`)),
	)
}

// browserApprove signs the reviewer in and approves the filing at url
// (absolute) through its confirmation.
func browserApprove(base, url string) chromedp.Action[chromedp.Void] {
	return chromedp.Steps(browserLogout(), browserLogin(base, "reviewer@airside.example", demo.Password),
		chromedp.Navigate(url),
		chromedp.WaitVisible(chromedp.CSS(`[data-testid="decide"]`)),
		chromedp.Click(chromedp.CSS(`[data-testid="approve-open"]`)),
		chromedp.WaitVisible(chromedp.CSS(`[data-testid="publish-note"]`)),
		chromedp.Click(chromedp.CSS(`[data-testid="approve"]`)),
	)
}

// browserLogout logs out from the top bar and waits for the login form
// itself (the page being left may have an e-mail field of its own).
func browserLogout() chromedp.Action[chromedp.Void] {
	return chromedp.Steps(
		chromedp.Click(chromedp.CSS(`form[action="/logout"] button`)),
		chromedp.WaitVisible(chromedp.CSS(`form[action="/login"]`)),
	)
}

// clickThrough clicks what leads to another page and waits, by script, for
// that page (its path) to have loaded, before any further query. Both the
// wait for the element and the click run in the page by script: chromedp's
// own view of the DOM can lag a navigation, and a click through it then
// goes to a node of the replaced document ("Could not find node with given
// id", which failed TestBrowserApplyToStorefront once in CI).
func clickThrough(t *testing.T, ctx context.Context, sel, path string) {
	t.Helper()
	q := strconv.Quote(sel)
	if err := waitJS(ctx, `(() => { const e = document.querySelector(`+q+`); return e !== null && e.checkVisibility() })()`, sel+" shown"); err != nil {
		t.Fatal(err)
	}
	// The old document is marked, so a page at the same path (a form that
	// redirects back to itself) is not taken for the new one.
	if err := chromedp.Do(ctx, chromedp.Evaluate[chromedp.Void](`window.__leaving = true; document.querySelector(`+q+`).click()`)); err != nil {
		t.Fatalf("click %s: %v", sel, err)
	}
	if err := waitJS(ctx, fmt.Sprintf(`!window.__leaving && location.pathname === %q && document.readyState === "complete"`, path), "the page "+path); err != nil {
		t.Fatal(err)
	}
}

// linkPath is the path the first link sel matches leads to.
func linkPath(t *testing.T, ctx context.Context, sel string) string {
	t.Helper()
	if err := waitJS(ctx, `document.querySelector(`+strconv.Quote(sel)+`) !== null`, sel); err != nil {
		t.Fatal(err)
	}
	path, err := chromedp.Run(ctx, chromedp.Evaluate[string](`new URL(document.querySelector(`+strconv.Quote(sel)+`).href).pathname`))
	if err != nil {
		t.Fatalf("the link %s: %v", sel, err)
	}
	return path
}
