package web_test

import (
	"context"
	"fmt"
	"strings"
	"testing"

	"github.com/chromedp/chromedp"

	"github.com/airside/airside/internal/demo"
	"github.com/airside/airside/internal/store"
)

func TestBrowserReviewFlow(t *testing.T) {
	p := newPortal(t, store.SQLite)
	listing := listingIDs(t, p.store)["nebula"][0]
	ctx := newBrowser(t)
	base := p.srv.URL
	text := func(sel string) string {
		t.Helper()
		return pageText(t, ctx, sel)
	}
	login := func(email string) chromedp.Action[chromedp.Void] { return browserLogin(base, email, demo.Password) }
	logout := browserLogout()
	retype := func(id, value string) chromedp.Action[chromedp.Void] {
		return chromedp.Steps(
			chromedp.Func(func(ctx context.Context, _ *chromedp.Target) error {
				_, err := chromedp.Run(ctx, chromedp.Evaluate[bool](`document.getElementById("`+id+`").select() || true`))
				return err
			}),
			chromedp.SendKeys(chromedp.ID(id), value),
		)
	}

	// The carrier files.
	err := chromedp.Do(ctx,
		login("admin@nebula.example"),
		chromedp.Navigate(fmt.Sprintf("%s/listings/%d/file", base, listing)),
		chromedp.WaitVisible(chromedp.ID("fare-form")),
		chromedp.Focus(chromedp.ID("input")), retype("input", "0.19"),
		chromedp.SendKeys(chromedp.ID("justification"), "Matching the market."),
		chromedp.Click(chromedp.CSS(`[data-testid="submit"]`)),
	)
	if err != nil {
		t.Fatalf("carrier files: %v", err)
	}
	if err := waitText(ctx, `[data-testid="filing-state"]`, "pending review"); err != nil {
		t.Fatal(err)
	}
	filingURL, _ := chromedp.Run(ctx, chromedp.Location())

	// The reviewer asks for changes.
	err = chromedp.Do(ctx, logout, login("reviewer@airside.example"),
		chromedp.Navigate(base+"/review"),
		chromedp.Click(chromedp.CSS(`[data-testid="queue"] tbody tr a`)),
		chromedp.WaitVisible(chromedp.CSS(`[data-testid="decide"]`)),
		chromedp.SendKeys(chromedp.ID("reason"), "Please also file a cached price."),
		chromedp.Click(chromedp.CSS(`[data-testid="request-changes"]`)),
	)
	if err != nil {
		t.Fatalf("reviewer asks for changes: %v", err)
	}
	if err := waitText(ctx, `[data-testid="filing-state"]`, "changes requested"); err != nil {
		t.Fatal(err)
	}
	screenshot(t, ctx, "reviewer")

	// The carrier edits and resubmits the same filing.
	err = chromedp.Do(ctx, logout, login("admin@nebula.example"),
		chromedp.Navigate(filingURL),
		chromedp.Click(chromedp.CSS(`[data-testid="edit"]`)),
		chromedp.WaitVisible(chromedp.ID("fare-form")),
		chromedp.Focus(chromedp.ID("cached_input")), retype("cached_input", "0.015"),
		chromedp.Click(chromedp.CSS(`[data-testid="submit"]`)),
	)
	if err != nil {
		t.Fatalf("carrier resubmits: %v", err)
	}
	if err := waitText(ctx, `[data-testid="filing-state"]`, "pending review"); err != nil {
		t.Fatal(err)
	}

	// The reviewer approves.
	err = chromedp.Do(ctx, logout, login("reviewer@airside.example"),
		chromedp.Navigate(filingURL),
		chromedp.WaitVisible(chromedp.CSS(`[data-testid="decide"]`)),
		chromedp.Click(chromedp.CSS(`[data-testid="approve-open"]`)), // the confirmation
		chromedp.WaitVisible(chromedp.CSS(`[data-testid="publish-note"]`)),
		chromedp.Click(chromedp.CSS(`[data-testid="approve"]`)),
	)
	if err != nil {
		t.Fatalf("reviewer approves: %v", err)
	}
	if err := waitText(ctx, `[data-testid="filing-state"]`, "published"); err != nil {
		t.Fatal(err)
	}

	// The carrier sees the new published fare and an inbox message.
	err = chromedp.Do(ctx, logout, login("admin@nebula.example"),
		chromedp.Navigate(fmt.Sprintf("%s/listings/%d", base, listing)),
		chromedp.WaitVisible(chromedp.CSS(`dl.kv`)),
	)
	if err != nil {
		t.Fatal(err)
	}
	fare := text(`dl.kv`)
	if !strings.Contains(fare, "$0.19") || !strings.Contains(fare, "$0.015") {
		t.Errorf("the listing does not show the new fare:\n%s", fare)
	}
	if unread := text(`[data-testid="unread"]`); unread == "" || unread == "0" {
		t.Errorf("unread count %q", unread)
	}
	err = chromedp.Do(ctx, chromedp.Click(chromedp.CSS(`[data-testid="nav-inbox"]`)), chromedp.WaitVisible(chromedp.CSS(`[data-testid="inbox"]`)))
	if err != nil {
		t.Fatal(err)
	}
	if inbox := text(`[data-testid="inbox"]`); !strings.Contains(inbox, "approved and is now published") || !strings.Contains(inbox, "Changes were requested") {
		t.Errorf("inbox:\n%s", inbox)
	}
	screenshot(t, ctx, "inbox")
}
