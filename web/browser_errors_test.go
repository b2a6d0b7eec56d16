package web_test

import (
	"fmt"
	"testing"

	"github.com/chromedp/chromedp"

	"github.com/airside/airside/internal/demo"
	"github.com/airside/airside/internal/store"
)

// TestBrowserInvalidFieldsAreMarked: a refused fare form opens at a summary
// linking to each field, and each invalid field is exposed as invalid
// (aria-invalid="true", a red border) and described by its message.
func TestBrowserInvalidFieldsAreMarked(t *testing.T) {
	p := newPortal(t, store.SQLite)
	listing := listingIDs(t, p.store)["nebula"][0]
	ctx := newBrowser(t)
	base := p.srv.URL
	err := chromedp.Do(ctx,
		chromedp.Navigate(base+"/login"),
		chromedp.WaitVisible(chromedp.ID("email")),
		chromedp.SendKeys(chromedp.ID("email"), "admin@nebula.example"),
		chromedp.SendKeys(chromedp.ID("password"), demo.Password),
		chromedp.Submit(chromedp.ID("password")),
		chromedp.WaitVisible(chromedp.CSS(`[data-testid="who"]`)),
		chromedp.Navigate(fmt.Sprintf("%s/listings/%d/file", base, listing)),
		chromedp.WaitVisible(chromedp.ID("fare-form")),
		chromedp.SetValue(chromedp.ID("input"), "1,50"),
		chromedp.SetValue(chromedp.ID("landing_fee"), "70"),
		chromedp.Click(chromedp.CSS(`[data-testid="submit"]`)),
		chromedp.WaitVisible(chromedp.CSS(`[data-testid="form-errors"]`)),
	)
	if err != nil {
		t.Fatalf("submit a bad fare: %v", err)
	}
	checks := map[string]string{
		"the summary has focus":               `document.activeElement && document.activeElement.id === "error-summary"`,
		"the summary links to the input":      `!!document.querySelector('#error-summary a[href="#input"]') && document.querySelector('#error-summary').textContent.includes("Input price")`,
		"the summary links to the fee":        `!!document.querySelector('#error-summary a[href="#landing_fee"]')`,
		"the input is invalid":                `document.getElementById("input").getAttribute("aria-invalid") === "true"`,
		"the input is described by its error": `document.getElementById(document.getElementById("input").getAttribute("aria-describedby")) !== null`,
		"the input's border is red":           `getComputedStyle(document.getElementById("input")).borderTopColor === "rgb(180, 35, 24)"`,
		"a valid field is not marked":         `document.getElementById("output").getAttribute("aria-invalid") === "false"`,
		"what was typed is kept":              `document.getElementById("input").value === "1,50"`,
	}
	for what, js := range checks {
		if err := waitJS(ctx, js, what); err != nil {
			t.Error(err)
		}
	}
	screenshot(t, ctx, "fare-form-errors")
}

// TestBrowserErrorPageAndSelectsLookRight: an error page's heading is
// centred under its status, and a select outside a form card (the custom
// scenario's) is styled like the inputs beside it.
func TestBrowserErrorPageAndSelectsLookRight(t *testing.T) {
	p := newPortal(t, store.SQLite)
	listing := listingIDs(t, p.store)["nebula"][0]
	ctx := newBrowser(t)
	err := chromedp.Do(ctx, chromedp.EmulateViewport(1400, 900),
		browserLogin(p.srv.URL, "admin@nebula.example", demo.Password),
		chromedp.Navigate(p.srv.URL+"/listings/999999"),
		chromedp.WaitVisible(chromedp.CSS(`[data-testid="error-page"]`)),
	)
	if err != nil {
		t.Fatal(err)
	}
	centred := `(() => { const c = e => { const r = document.querySelector(e).getBoundingClientRect(); return r.left + r.width / 2; };
		const h = document.querySelector(".error-page h1 span, .error-page h1"); const range = document.createRange(); range.selectNodeContents(h);
		const text = range.getBoundingClientRect(); return Math.abs((text.left + text.width / 2) - c(".error-page .status")) < 4; })()`
	if err := waitJS(ctx, centred, "the error heading centred under its status"); err != nil {
		t.Error(err)
	}
	err = chromedp.Do(ctx, chromedp.Navigate(fmt.Sprintf("%s/listings/%d/preview", p.srv.URL, listing)),
		chromedp.WaitVisible(chromedp.ID("custom_workload")))
	if err != nil {
		t.Fatal(err)
	}
	styled := `(() => { const s = getComputedStyle(document.getElementById("custom_workload")), i = getComputedStyle(document.getElementById("custom_prompt"));
		return s.borderTopLeftRadius === i.borderTopLeftRadius && s.borderTopColor === i.borderTopColor && s.fontSize === i.fontSize &&
			Math.abs(document.getElementById("custom_workload").offsetHeight - document.getElementById("custom_prompt").offsetHeight) <= 2; })()`
	if err := waitJS(ctx, styled, "the select styled like the input beside it"); err != nil {
		t.Error(err)
	}
}

// TestBrowserFieldMessagesAsYouType: a price typed with a decimal comma, or a
// landing fee out of range, is explained next to its field as it is typed
// (the server's words), marked invalid and described by the message; fixed,
// the message and the mark go.
func TestBrowserFieldMessagesAsYouType(t *testing.T) {
	p := newPortal(t, store.SQLite)
	listing := listingIDs(t, p.store)["nebula"][0]
	ctx := newBrowser(t)
	selectAll := func(id string) chromedp.Action[chromedp.Void] {
		return chromedp.Evaluate[chromedp.Void](`document.getElementById("` + id + `").select()`)
	}
	err := chromedp.Do(ctx, chromedp.EmulateViewport(1400, 900),
		browserLogin(p.srv.URL, "admin@nebula.example", demo.Password),
		chromedp.Navigate(fmt.Sprintf("%s/listings/%d/file", p.srv.URL, listing)),
		chromedp.WaitVisible(chromedp.ID("fare-form")),
		chromedp.Focus(chromedp.ID("input")), selectAll("input"), chromedp.SendKeys(chromedp.ID("input"), "1,50"),
		chromedp.Focus(chromedp.ID("landing_fee")), selectAll("landing_fee"), chromedp.SendKeys(chromedp.ID("landing_fee"), "70"),
	)
	if err != nil {
		t.Fatal(err)
	}
	for id, want := range map[string]string{"input": "Use a decimal point, not a comma: 1.50, not 1,50.", "landing_fee": "Enter a percentage from 5 to 50."} {
		marked := fmt.Sprintf(`(() => { const f = document.getElementById(%q), m = document.getElementById(%q);
			return f.getAttribute("aria-invalid") === "true" && !!m && m.textContent === %q && f.getAttribute("aria-describedby").split(" ").includes(m.id); })()`,
			id, id+"-error", want)
		if err := waitJS(ctx, marked, id+" explained as it is typed"); err != nil {
			t.Error(err)
		}
	}
	if err := checkAxe(t, ctx, "the fare form with live messages"); err != nil {
		t.Error(err)
	}
	err = chromedp.Do(ctx, chromedp.Focus(chromedp.ID("input")), selectAll("input"), chromedp.SendKeys(chromedp.ID("input"), "1.50"))
	if err != nil {
		t.Fatal(err)
	}
	if err := waitJS(ctx, `!document.getElementById("input-error") && !document.getElementById("input").hasAttribute("aria-invalid")`, "the fixed price cleared"); err != nil {
		t.Error(err)
	}
	// The preview says the same, by the field's name.
	if err := waitJS(ctx, `document.querySelector('[data-testid="preview-error"]') && document.querySelector('[data-testid="preview-error"]').textContent.includes("Landing fee")`, "the preview naming the landing fee"); err != nil {
		t.Error(err)
	}
}

// TestBrowserRowMessagesAsYouType: a context tier added on the page is
// checked as it is typed like any field: a bad price is explained beside
// its cell, marked invalid, and the mark goes when it is fixed.
func TestBrowserRowMessagesAsYouType(t *testing.T) {
	p := newPortal(t, store.SQLite)
	listing := listingIDs(t, p.store)["nebula"][0]
	ctx := newBrowser(t)
	err := chromedp.Do(ctx, chromedp.EmulateViewport(1400, 900),
		browserLogin(p.srv.URL, "admin@nebula.example", demo.Password),
		chromedp.Navigate(fmt.Sprintf("%s/listings/%d/file", p.srv.URL, listing)),
		chromedp.WaitVisible(chromedp.ID("fare-form")),
		chromedp.Click(chromedp.CSS(`[data-add-row="tier"]`)),
	)
	if err != nil {
		t.Fatal(err)
	}
	// The added row is numbered as the server numbers posted rows.
	ids, err := chromedp.Run(ctx, chromedp.Evaluate[[]string](`(() => { const rows = document.querySelectorAll('[data-rows="tier"] tr'); const last = rows[rows.length - 1];
		return [rows.length - 1, last.querySelector('[data-col="above"]').id, last.querySelector('[data-col="input"]').id]; })().map(String)`))
	if err != nil {
		t.Fatal(err)
	}
	n := ids[0]
	if ids[1] != "tier-"+n+"-above" || ids[2] != "tier-"+n+"-input" {
		t.Fatalf("the added row's inputs are %v, want numbered %s", ids[1:], n)
	}
	err = chromedp.Do(ctx, chromedp.SendKeys(chromedp.ID(ids[1]), "32768"), chromedp.SendKeys(chromedp.ID(ids[2]), "1,10"))
	if err != nil {
		t.Fatal(err)
	}
	marked := fmt.Sprintf(`(() => { const f = document.getElementById(%q), slot = document.getElementById(%q);
		const m = slot && slot.querySelector(".field-error");
		return !!m && m.textContent.includes("decimal point") && f.getAttribute("aria-invalid") === "true" && f.getAttribute("aria-describedby").split(" ").includes(m.id); })()`,
		ids[2], ids[2]+"-check")
	if err := waitJS(ctx, marked, "the tier's price explained as it is typed"); err != nil {
		t.Fatal(err)
	}
	err = chromedp.Do(ctx, chromedp.Evaluate[chromedp.Void](`document.getElementById("`+ids[2]+`").select()`), chromedp.SendKeys(chromedp.ID(ids[2]), "1.10"))
	if err != nil {
		t.Fatal(err)
	}
	cleared := fmt.Sprintf(`!document.getElementById(%q).querySelector(".field-error") && !document.getElementById(%q).hasAttribute("aria-invalid")`, ids[2]+"-check", ids[2])
	if err := waitJS(ctx, cleared, "the fixed tier price cleared"); err != nil {
		t.Error(err)
	}
	// The justification says how much of its limit is used as it is typed.
	if err := chromedp.Do(ctx, chromedp.SendKeys(chromedp.ID("justification"), "A tier for long prompts.")); err != nil {
		t.Fatal(err)
	}
	counted := `document.getElementById("justification-count").textContent === document.getElementById("justification").value.length + " of 4,000 characters used."`
	if err := waitJS(ctx, counted+` && document.getElementById("justification").value.length >= 24`, "the justification's count"); err != nil {
		t.Error(err)
	}
}
