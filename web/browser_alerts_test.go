package web_test

import (
	"testing"

	"github.com/chromedp/chromedp"

	"github.com/airside/airside/internal/demo"
	"github.com/airside/airside/internal/store"
)

// TestBrowserAlertRulesAndMute: a carrier admin opens Alerts, types a cap
// threshold outside its bounds and is told beside the field with the
// value kept, saves a good one and sees it in the rule's sentence, then
// mutes a listing's cap alerts and ends the mute.
func TestBrowserAlertRulesAndMute(t *testing.T) {
	p := newPortal(t, store.SQLite)
	ctx := newBrowser(t)
	err := chromedp.Do(ctx, browserLogin(p.srv.URL, "admin@nebula.example", demo.Password),
		chromedp.Click(chromedp.CSS(`[data-testid="nav-alerts"]`)),
		chromedp.WaitVisible(chromedp.CSS(`[data-testid="rule-at_cap"]`)),
		chromedp.SetValue(chromedp.ID("at_cap-threshold"), "70"),
		chromedp.Click(chromedp.CSS(`[data-testid="save-rules"]`)),
		chromedp.WaitVisible(chromedp.CSS(`[data-testid="error-at_cap-threshold"]`)),
	)
	if err != nil {
		t.Fatalf("a threshold out of bounds: %v", err)
	}
	if err := waitJS(ctx, `document.getElementById("at_cap-threshold").value === "70" && document.getElementById("at_cap-threshold").getAttribute("aria-invalid") === "true"`,
		"the refused value kept and marked"); err != nil {
		t.Fatal(err)
	}
	err = chromedp.Do(ctx, chromedp.SetValue(chromedp.ID("at_cap-threshold"), "5"),
		chromedp.Click(chromedp.CSS(`[data-testid="save-rules"]`)),
	)
	if err != nil {
		t.Fatal(err)
	}
	if err := waitText(ctx, `[data-testid="rule-at_cap"]`, "in 5 minutes of the last hour"); err != nil {
		t.Fatal(err)
	}
	screenshot(t, ctx, "alert-rules")
	err = chromedp.Do(ctx, chromedp.SetValue(chromedp.ID("mute-kind"), "at_cap"),
		chromedp.SetValue(chromedp.ID("mute-for"), "1h"),
		chromedp.Click(chromedp.CSS(`[data-testid="mute"]`)),
		chromedp.WaitVisible(chromedp.CSS(`[data-testid="mute-list"]`)),
	)
	if err != nil {
		t.Fatalf("mute: %v", err)
	}
	if err := waitText(ctx, `[data-testid="mute-list"]`, "at its rate cap, until"); err != nil {
		t.Fatal(err)
	}
	err = chromedp.Do(ctx, chromedp.Click(chromedp.CSS(`[data-testid="mute-list"] button`)),
		chromedp.WaitVisible(chromedp.CSS(`[data-testid="no-mutes"]`)))
	if err != nil {
		t.Fatalf("unmute: %v", err)
	}
}
