package web_test

import (
	"fmt"
	"testing"

	"github.com/chromedp/chromedp"

	"github.com/airside/airside/internal/demo"
	"github.com/airside/airside/internal/store"
)

// TestBrowserListingColumnsLineUp: on a listing's page the two rows of
// cards (fare and routing; endpoint and preflight) share their columns'
// widths, whatever the cards hold: the preflight card is no wider than the
// routing card above it.
func TestBrowserListingColumnsLineUp(t *testing.T) {
	p := newPortal(t, store.SQLite)
	ctx := newBrowser(t)
	listing := listingIDs(t, p.store)["nebula"][0]
	err := chromedp.Do(ctx, browserLogin(p.srv.URL, "admin@nebula.example", demo.Password),
		chromedp.Navigate(fmt.Sprintf("%s/listings/%d", p.srv.URL, listing)),
		chromedp.WaitVisible(chromedp.CSS(`[data-testid="preflight"]`)))
	if err != nil {
		t.Fatal(err)
	}
	// A probe's message with a long unbroken address (as a carrier's
	// failing endpoint gives) must wrap inside its card, not widen it.
	widths, err := chromedp.Run(ctx, chromedp.Evaluate[[]float64](`(() => {
		const p = document.createElement("p");
		p.textContent = "connect to https://" + "very-long-subdomain-".repeat(12) + "example.com/v1/chat/completions failed";
		document.querySelector('[data-testid="preflight"]').appendChild(p);
		return [...document.querySelectorAll("main .columns")].filter(c => c.children.length === 2)
			.slice(0, 2).map(c => c.children[1].getBoundingClientRect().width);
	})()`))
	if err != nil {
		t.Fatal(err)
	}
	if len(widths) != 2 || widths[0] < 100 || widths[1]-widths[0] > 1 || widths[0]-widths[1] > 1 {
		t.Errorf("the second column's cards are %v px wide, want the routing card's width for the preflight card", widths)
	}
}
