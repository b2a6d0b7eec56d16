package web_test

import (
	"fmt"
	"testing"

	"github.com/chromedp/chromedp"
	"github.com/chromedp/chromedp/kb"

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
	// Typing the landing fee far down the phone's form, the strip stays in
	// sight and follows what is typed.
	before, _ = chromedp.Run(ctx, chromedp.Text(chromedp.CSS(`[data-testid="summary-effective"]`)))
	err = chromedp.Do(ctx,
		chromedp.ScrollIntoView(chromedp.ID("landing_fee")),
		chromedp.Focus(chromedp.ID("landing_fee")),
		chromedp.Evaluate[chromedp.Void](`document.getElementById("landing_fee").select()`),
		chromedp.SendKeys(chromedp.ID("landing_fee"), "45"),
	)
	if err != nil {
		t.Fatal(err)
	}
	if err := waitJS(ctx, fmt.Sprintf(`document.querySelector('[data-testid="summary-effective"]').textContent !== %q`, before), "the strip following the landing fee at 390 px"); err != nil {
		t.Fatal(err)
	}
	if err := waitJS(ctx, inView, "the summary strip in sight while typing at 390 px"); err != nil {
		t.Fatal(err)
	}
	screenshot(t, ctx, "file-form-390")
}

// TestBrowserKeyboardThroughTheFareFormKeepsFocus: a person tabbing through
// the fare form and typing, while the preview refreshes after each change,
// keeps focus (and the caret) where they were, in the form's fields and in
// the workload-mix inputs inside the refreshed panel itself.
func TestBrowserKeyboardThroughTheFareFormKeepsFocus(t *testing.T) {
	p := newPortal(t, store.SQLite)
	listing := listingIDs(t, p.store)["nebula"][0]
	ctx := newBrowser(t)
	err := chromedp.Do(ctx,
		chromedp.EmulateViewport(1400, 900),
		browserLogin(p.srv.URL, "admin@nebula.example", demo.Password),
		chromedp.Navigate(fmt.Sprintf("%s/listings/%d/file", p.srv.URL, listing)),
		chromedp.WaitVisible(chromedp.CSS(`[data-testid="preview"]`)),
		chromedp.Focus(chromedp.ID("input")),
	)
	if err != nil {
		t.Fatal(err)
	}
	type focused struct {
		Key   string // the id, or the name of a field without one
		Text  bool
		Caret int
	}
	const where = `(() => { const a = document.activeElement;
		return {key: a.id || a.name || a.tagName, caret: typeof a.selectionStart === "number" ? a.selectionStart : -1,
			text: a.tagName === "INPUT" && ["text", "number", "decimal", ""].includes(a.getAttribute("type") || "") && !a.readOnly && !a.disabled}; })()`
	// typeAndWait types a digit into the focused field and waits for the
	// preview panel to be replaced by the answer.
	typeAndWait := func(what string) focused {
		t.Helper()
		before, err := chromedp.Run(ctx, chromedp.Evaluate[focused](where))
		if err != nil {
			t.Fatal(err)
		}
		if _, err := chromedp.Run(ctx, chromedp.Evaluate[bool](`window.__panel = document.getElementById("preview-panel"); true`)); err != nil {
			t.Fatal(err)
		}
		if err := chromedp.Do(ctx, chromedp.KeyEvent("0")); err != nil {
			t.Fatal(err)
		}
		if err := waitJS(ctx, `document.getElementById("preview-panel") !== window.__panel`, "the preview refreshed after typing in "+what); err != nil {
			t.Fatal(err)
		}
		after, err := chromedp.Run(ctx, chromedp.Evaluate[focused](where))
		if err != nil {
			t.Fatal(err)
		}
		if after.Key != before.Key || after.Caret != before.Caret+1 {
			t.Errorf("typing in %s (%s, caret %d): after the refresh focus is on %q, caret %d", what, before.Key, before.Caret, after.Key, after.Caret)
		}
		return before
	}
	typed := 0
	for step := 0; step < 20 && typed < 5; step++ {
		now, err := chromedp.Run(ctx, chromedp.Evaluate[focused](where))
		if err != nil {
			t.Fatal(err)
		}
		if now.Text {
			typeAndWait("the form's field " + now.Key)
			typed++
		}
		if err := chromedp.Do(ctx, chromedp.KeyEvent(kb.Tab)); err != nil {
			t.Fatal(err)
		}
	}
	if typed < 5 {
		t.Fatalf("tabbing reached %d text fields, want 5", typed)
	}
	// Inside the panel that is replaced: a workload-mix input.
	if err := chromedp.Do(ctx, chromedp.ScrollIntoView(chromedp.CSS(`#preview-panel input.mix`)), chromedp.Focus(chromedp.CSS(`#preview-panel input.mix`))); err != nil {
		t.Fatal(err)
	}
	if _, err := chromedp.Run(ctx, chromedp.Evaluate[bool](`(() => { const a = document.activeElement; a.setSelectionRange(a.value.length, a.value.length); return true; })()`)); err != nil {
		t.Fatal(err)
	}
	typeAndWait("a workload-mix input")
	if err := checkAxe(t, ctx, "the fare form after live updates"); err != nil {
		t.Error(err)
	}
}
