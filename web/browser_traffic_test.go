package web_test

import (
	"context"
	"testing"
	"time"

	"github.com/chromedp/chromedp"

	"github.com/airside/airside/internal/demo"
	"github.com/airside/airside/internal/store"
)

// TestBrowserTrafficFlow: a carrier opens its traffic, switches period,
// downloads last month's statement; staff open operations.
func TestBrowserTrafficFlow(t *testing.T) {
	p := newPortal(t, store.SQLite)
	if err := demo.SeedHistory(context.Background(), p.store, 40); err != nil {
		t.Fatal(err)
	}
	ctx := newBrowser(t)
	base := p.srv.URL
	login := func(email string) chromedp.Action[chromedp.Void] { return browserLogin(base, email, demo.Password) }
	err := chromedp.Do(ctx, login("admin@nebula.example"),
		chromedp.Click(chromedp.CSS(`[data-testid="nav-traffic"]`)),
		chromedp.WaitVisible(chromedp.CSS(`[data-testid="earnings-chart"]`)),
		chromedp.Click(chromedp.CSS(`[data-testid="periods"] a[href$="period=month"]`)),
	)
	if err != nil {
		t.Fatalf("open traffic: %v", err)
	}
	if err := waitJS(ctx, `document.readyState === "complete" && location.search.includes("period=month") && !!document.querySelector('[data-testid="periods"] a.active[href$="period=month"]')`, "the month view"); err != nil {
		t.Fatal(err)
	}
	if err := chromedp.Do(ctx, chromedp.WaitVisible(chromedp.CSS(`[data-testid="earnings-chart"]`))); err != nil {
		t.Fatal(err)
	}
	screenshot(t, ctx, "traffic")
	last := time.Now().UTC().AddDate(0, -1, 0).Format("January 2006")
	err = chromedp.Do(ctx,
		chromedp.Click(chromedp.CSS(`[data-testid="statements"] li:nth-child(2) a`)),
		chromedp.WaitVisible(chromedp.CSS(`[data-testid="statement-total"]`)),
	)
	if err != nil {
		t.Fatalf("open the statement: %v", err)
	}
	if err := waitText(ctx, "h1", last); err != nil {
		t.Fatal(err)
	}
	// The download link serves the CSV the page shows.
	ok, err := chromedp.Run(ctx, chromedp.Evaluate[bool](`(async () => {
		const a = document.querySelector('[data-testid="statement-csv"]');
		const r = await fetch(a.href);
		const text = await r.text();
		return a.hasAttribute("download") && r.headers.get("content-type").startsWith("text/csv") && text.startsWith("month,carrier,model");
	})()`, chromedp.EvalAwaitPromise))
	if err != nil || !ok {
		t.Fatalf("statement CSV download: %v, %v", ok, err)
	}
	err = chromedp.Do(ctx, chromedp.Click(chromedp.CSS(`button.link`)), chromedp.WaitVisible(chromedp.ID("email")),
		login("reviewer@airside.example"),
		chromedp.Click(chromedp.CSS(`[data-testid="nav-operations"]`)),
		chromedp.WaitVisible(chromedp.CSS(`[data-testid="operations"]`)),
	)
	if err != nil {
		t.Fatalf("staff open operations: %v", err)
	}
	if err := waitText(ctx, `[data-testid="operations"]`, "Nebula Inference"); err != nil {
		t.Fatal(err)
	}
	screenshot(t, ctx, "operations")
}
