package web_test

import (
	"context"
	"fmt"
	"strings"
	"testing"

	"github.com/chromedp/chromedp"

	"github.com/airside/airside/internal/demo"
	"github.com/airside/airside/internal/store"
	"github.com/airside/airside/internal/workflow"
)

// TestBrowserFileAFare: a carrier files a fare with a tier and a peak window,
// watches the effective price follow the landing fee, saves a draft, submits
// it and sees it pending review.
func TestBrowserFileAFare(t *testing.T) {
	p := newPortal(t, store.SQLite)
	ids := listingIDs(t, p.store)
	listing := ids["nebula"][0]
	ctx := newBrowser(t)

	text := func(sel string) string {
		t.Helper()
		return pageText(t, ctx, sel)
	}
	// retype replaces a field's value the way a person would: select all, type.
	retype := func(id, value string) chromedp.Action[chromedp.Void] {
		return chromedp.Steps(
			chromedp.Focus(chromedp.ID(id)),
			chromedp.Func(func(ctx context.Context, _ *chromedp.Target) error {
				_, err := chromedp.Run(ctx, chromedp.Evaluate[bool](`document.getElementById("`+id+`").select() || true`))
				return err
			}),
			chromedp.SendKeys(chromedp.ID(id), value),
		)
	}
	err := chromedp.Do(ctx,
		chromedp.Navigate(p.srv.URL+"/login"),
		chromedp.SendKeys(chromedp.ID("email"), "admin@nebula.example"),
		chromedp.SendKeys(chromedp.ID("password"), demo.Password),
		chromedp.Submit(chromedp.ID("password")),
		chromedp.WaitVisible(chromedp.CSS(`[data-testid="listings"]`)),
		chromedp.Navigate(fmt.Sprintf("%s/listings/%d", p.srv.URL, listing)),
		chromedp.Click(chromedp.CSS(`[data-testid="file-fare"]`)),
		chromedp.WaitVisible(chromedp.ID("fare-form")),
		retype("input", "1.00"),
		retype("landing_fee", "20"),
		retype("discount", "0"),
	)
	if err != nil {
		t.Fatalf("open the form: %v", err)
	}
	// The server computes the effective price as the carrier types (the
	// live preview's answer carries it).
	if err := waitJS(ctx, `document.querySelector('[data-testid="effective-input"]').textContent === "$1.0000"`, "the effective input at the baseline"); err != nil {
		t.Errorf("%v: it is %q", err, text(`[data-testid="effective-input"]`))
	}
	err = chromedp.Do(ctx,
		retype("landing_fee", "30"),
		retype("discount", "10"),
	)
	if err != nil {
		t.Fatal(err)
	}
	if err := waitJS(ctx, `document.querySelector('[data-testid="effective-input"]').textContent === "$0.8100"`, "the effective input at 30 % and a 10 % discount"); err != nil {
		t.Errorf("%v: it is %q", err, text(`[data-testid="effective-input"]`))
	}
	if err := waitJS(ctx, `document.querySelector('[data-testid="kept"]').textContent === "63"`, "63 cents kept"); err != nil {
		t.Errorf("%v: it is %q", err, text(`[data-testid="kept"]`))
	}

	// A tier and a peak window, added on the page.
	err = chromedp.Do(ctx,
		chromedp.Click(chromedp.CSS(`[data-add-row="tier"]`)),
		chromedp.SendKeys(chromedp.CSS(`[data-rows="tier"] tr:last-child input[name="tier_above"]`), "200000"),
		chromedp.SendKeys(chromedp.CSS(`[data-rows="tier"] tr:last-child input[name="tier_input"]`), "2.00"),
		chromedp.Click(chromedp.CSS(`[data-add-row="window"]`)),
		chromedp.SendKeys(chromedp.CSS(`[data-rows="window"] tr:last-child input[name="peak_start"]`), "8"),
		chromedp.SendKeys(chromedp.CSS(`[data-rows="window"] tr:last-child input[name="peak_end"]`), "18"),
		chromedp.SendKeys(chromedp.ID("peak_input"), "1.20"),
		chromedp.SendKeys(chromedp.ID("off_peak_input"), "0.80"),
		chromedp.SendKeys(chromedp.ID("justification"), "New H200 cluster; peak pricing for business hours."),
	)
	if err != nil {
		t.Fatalf("fill tiers and windows: %v", err)
	}
	// What the listing offers besides price: a bad quantization is
	// explained beside it as it is typed, then fixed; the rest filed.
	err = chromedp.Do(ctx,
		chromedp.ScrollIntoView(chromedp.CSS(`[data-testid="market-section"]`)),
		retype("quantization", "q4"),
	)
	if err != nil {
		t.Fatalf("type a quantization: %v", err)
	}
	if err := waitJS(ctx, `(() => { const m = document.getElementById("quantization-error");
		return !!m && m.textContent.includes("fp8") && document.getElementById("quantization").getAttribute("aria-invalid") === "true"; })()`,
		"the unknown quantization explained as it is typed"); err != nil {
		t.Error(err)
	}
	err = chromedp.Do(ctx,
		retype("quantization", "bf16"),
		retype("retention_days", "0"),
		chromedp.Click(chromedp.CSS(`input[name="trains_on_prompts"][value="no"]`)),
		retype("regions", "fr, de"),
		retype("request_price", "0.0001"),
	)
	if err != nil {
		t.Fatalf("fill the market: %v", err)
	}
	if err := waitJS(ctx, `!document.getElementById("quantization-error")`, "the fixed quantization cleared"); err != nil {
		t.Error(err)
	}
	screenshot(t, ctx, "fare-form")
	if err := chromedp.Do(ctx, chromedp.Click(chromedp.CSS(`[data-testid="save-draft"]`))); err != nil {
		t.Fatalf("save draft: %v", err)
	}
	if err := waitText(ctx, `[data-testid="filing-state"]`, "draft"); err != nil {
		t.Fatalf("after saving: %v", err)
	}
	changes := text(`[data-testid="changes"]`)
	for _, want := range []string{"Input", "$1.00", "Landing fee", "30 %", "Context tiers", "Peak / off-peak",
		"Quantization", "bf16", "Prompts kept", "not kept", "Regions", "DE, FR", "Price per request", "$0.0001"} {
		if !strings.Contains(changes, want) {
			t.Errorf("change summary lacks %q:\n%s", want, changes)
		}
	}
	if err := chromedp.Do(ctx, chromedp.Click(chromedp.CSS(`[data-testid="submit"]`))); err != nil {
		t.Fatalf("submit: %v", err)
	}
	if err := waitText(ctx, `[data-testid="filing-state"]`, "pending review"); err != nil {
		t.Errorf("after submitting: %v", err)
	}
	screenshot(t, ctx, "filing")

	filings, err := p.store.FindFilings(t.Context(), workflow.FilingFilter{ListingID: listing, States: []workflow.State{workflow.Submitted}})
	if err != nil || len(filings) != 1 {
		t.Fatalf("submitted filings: %v, %v", filings, err)
	}
	f := filings[0].Fare
	if f.Input.String() != "1.00" || f.LandingFee != 3000 || len(f.Tiers) == 0 || f.Tiers[len(f.Tiers)-1].AboveTokens != 200000 ||
		f.TimeBased == nil || f.TimeBased.PeakHours[len(f.TimeBased.PeakHours)-1].Start != 8 {
		t.Errorf("stored fare %+v", f)
	}
	if m := f.Market; m.Quantization != "bf16" || !m.ZDR() || strings.Join(m.Regions, ",") != "DE,FR" || m.RequestPrice == nil || m.RequestPrice.String() != "0.0001" {
		t.Errorf("stored market %+v", m)
	}
	err = chromedp.Do(ctx,
		chromedp.Navigate(p.srv.URL+"/listings"),
		chromedp.WaitVisible(chromedp.CSS(`[data-testid="listings"]`)),
	)
	if err != nil {
		t.Fatal(err)
	}
	if !strings.Contains(text(`[data-testid="listings"]`), "pending review") {
		t.Error("the listings page does not show the filing pending")
	}
}
