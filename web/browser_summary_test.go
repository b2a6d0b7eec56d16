package web_test

import (
	"fmt"
	"testing"

	"github.com/chromedp/chromedp"

	"github.com/airside/airside/internal/demo"
	"github.com/airside/airside/internal/store"
)

// TestBrowserSummaryStaysInSightWhileTyping: at 1400 px the short preview
// stands beside the form and stays in the viewport while the carrier types
// the landing fee far down the form, and it follows what is typed; at
// 390 px it is a strip at the bottom of the screen.
func TestBrowserSummaryStaysInSightWhileTyping(t *testing.T) {
	p := newPortal(t, store.SQLite)
	listing := listingIDs(t, p.store)["nebula"][0]
	ctx := newBrowser(t)
	form := fmt.Sprintf("%s/listings/%d/file", p.srv.URL, listing)
	err := chromedp.Do(ctx,
		chromedp.EmulateViewport(1400, 900),
		chromedp.Navigate(p.srv.URL+"/login"),
		chromedp.SendKeys(chromedp.ID("email"), "admin@nebula.example"),
		chromedp.SendKeys(chromedp.ID("password"), demo.Password),
		chromedp.Submit(chromedp.ID("password")),
		chromedp.WaitVisible(chromedp.CSS(`[data-testid="listings"]`)),
		chromedp.Navigate(form),
		chromedp.WaitVisible(chromedp.CSS(`[data-testid="preview-summary"]`)),
	)
	if err != nil {
		t.Fatal(err)
	}
	inView := `(() => { const r = document.getElementById("preview-summary").getBoundingClientRect();
		return r.top >= 0 && r.bottom <= window.innerHeight && r.width > 0; })()`
	beside := `(() => { const s = document.getElementById("preview-summary").getBoundingClientRect();
		const f = document.getElementById("fare-form").getBoundingClientRect(); return s.left >= f.right; })()`
	if err := waitJS(ctx, beside, "the summary beside the form"); err != nil {
		t.Fatal(err)
	}
	before, _ := chromedp.Run(ctx, chromedp.Text(chromedp.CSS(`[data-testid="summary-effective"]`)))
	err = chromedp.Do(ctx,
		chromedp.ScrollIntoView(chromedp.ID("landing_fee")),
		chromedp.Focus(chromedp.ID("landing_fee")),
		chromedp.Evaluate[chromedp.Void](`document.getElementById("landing_fee").select()`),
		chromedp.SendKeys(chromedp.ID("landing_fee"), "5"),
	)
	if err != nil {
		t.Fatal(err)
	}
	// The routing price moves with the fee, and the summary with it.
	if err := waitJS(ctx, fmt.Sprintf(`document.querySelector('[data-testid="summary-effective"]').textContent !== %q`, before), "the summary following the landing fee"); err != nil {
		t.Fatal(err)
	}
	if err := waitJS(ctx, `document.querySelector('[data-testid="summary-share"]').textContent === document.querySelector('[data-testid="share-total"]').textContent`, "the summary agreeing with the full preview"); err != nil {
		t.Fatal(err)
	}
	if err := waitJS(ctx, inView, "the summary in sight while typing far down the form"); err != nil {
		t.Fatal(err)
	}
	if err := waitJS(ctx, `document.activeElement && document.activeElement.id === "landing_fee"`, "focus kept in the field"); err != nil {
		t.Error(err)
	}
	screenshot(t, ctx, "file-form-1400")

	if err := chromedp.Do(ctx, chromedp.EmulateViewport(390, 844), chromedp.Navigate(form),
		chromedp.WaitVisible(chromedp.CSS(`[data-testid="preview-summary"]`))); err != nil {
		t.Fatal(err)
	}
	if err := waitJS(ctx, inView, "the summary strip in sight at 390 px"); err != nil {
		t.Fatal(err)
	}
	screenshot(t, ctx, "file-form-390")
}
