package web_test

import (
	"fmt"
	"math"
	"regexp"
	"strconv"
	"testing"

	"github.com/chromedp/chromedp"

	"github.com/airside/airside/internal/catalogue"
	"github.com/airside/airside/internal/demo"
	"github.com/airside/airside/internal/preview"
)

// TestBrowserThePagesAgreeOnTheProjection: after real routing (routingLoop:
// the portal, the reference gateway and seeded customers), what a carrier
// and staff read in Chromium is one number per question on every page. The
// fare form's live preview of the fare as published is the listing's
// traffic page's projection now; the hour's projected and served shares on
// the listing's traffic page are those of the carrier's overview and of
// /operations.
func TestBrowserThePagesAgreeOnTheProjection(t *testing.T) {
	// Orbit holds most of DeepSeek V3.2 and files it with peak and
	// off-peak prices: a fare the pages must read alike too.
	const model = "deepseek-v3.2"
	loop := startRoutingLoop(t)
	loop.drive([]string{model}, 200, 3)
	loop.report()
	var listings []catalogue.Listing
	for _, l := range loop.listings() {
		if l.CarrierSlug == "orbit" && l.Model.Slug == model {
			listings = append(listings, l)
		}
	}
	if len(listings) != 1 {
		t.Fatalf("%d orbit listings of %s, want 1", len(listings), model)
	}
	l := listings[0]
	base := loop.portal.URL
	ctx := newBrowser(t)
	// read is the share a selector shows, in percent.
	read := func(what, js string) float64 {
		t.Helper()
		text, err := chromedp.Run(ctx, chromedp.Evaluate[string](js))
		if err != nil {
			t.Fatalf("%s: %v", what, err)
		}
		m := regexp.MustCompile(`([0-9]+(?:\.[0-9]+)?) ?%`).FindStringSubmatch(text)
		if m == nil {
			t.Fatalf("%s: no share in %q", what, text)
		}
		v, _ := strconv.ParseFloat(m[1], 64)
		return v
	}
	text := func(sel string) string {
		return fmt.Sprintf(`(document.querySelector(%q) || {textContent: ""}).textContent`, sel)
	}
	// inRow reads a cell of the table row that links to href.
	inRow := func(href, cell string) string {
		return fmt.Sprintf(`(() => { const a = document.querySelector('a[href=%q]'); const r = a && a.closest('tr');
			const c = r && r.querySelector('[data-testid=%q]'); return c ? c.textContent : ""; })()`, href, cell)
	}

	err := chromedp.Do(ctx, chromedp.EmulateViewport(1400, 900),
		browserLogin(base, "admin@orbit.example", demo.Password),
		chromedp.Navigate(fmt.Sprintf("%s/listings/%d/file", base, l.ID)),
		chromedp.WaitVisible(chromedp.CSS(`[data-testid="share-total"]`)),
	)
	if err != nil {
		t.Fatal(err)
	}
	form := read("the form's projected share", text(`[data-testid="share-total"]`))
	listingPage := fmt.Sprintf("/traffic/listings/%d?period=hour", l.ID)
	if err := chromedp.Do(ctx, chromedp.Navigate(base+listingPage), chromedp.WaitVisible(chromedp.CSS(`[data-testid="share-gap"]`))); err != nil {
		t.Fatal(err)
	}
	now := read("the traffic page's projection now", text(`[data-testid="projected"] strong`))
	projected := read("the traffic page's projected share", text(`[data-testid="gap-projected"]`))
	served := read("the traffic page's served share", text(`[data-testid="gap-measured"]`))
	screenshot(t, ctx, "pages-agree-listing-traffic")
	if err := chromedp.Do(ctx, chromedp.Navigate(base+"/traffic?period=hour"), chromedp.WaitVisible(chromedp.CSS(`[data-testid="projected-share"]`))); err != nil {
		t.Fatal(err)
	}
	overview := read("the overview's projected share", inRow(listingPage, "projected-share"))
	err = chromedp.Do(ctx, browserLogout(), browserLogin(base, "admin@airside.example", demo.Password),
		chromedp.Navigate(base+"/operations?model="+model), chromedp.WaitVisible(chromedp.CSS(`[data-testid="ops-projected"]`)))
	if err != nil {
		t.Fatal(err)
	}
	opsProjected := read("operations' projected share", inRow(fmt.Sprintf("/listings/%d", l.ID), "ops-projected"))
	opsServed := read("operations' served share", inRow(fmt.Sprintf("/listings/%d", l.ID), "ops-share"))
	screenshot(t, ctx, "pages-agree-operations")

	t.Logf("%s: form %.1f %%, now %.1f %%; the hour projected %.1f %% (overview %.1f %%, operations %.1f %%), served %.1f %% (operations %.1f %%)",
		preview.CandidateID(&l), form, now, projected, overview, opsProjected, served, opsServed)
	same := func(what string, a, b float64) {
		if math.Abs(a-b) > 0.05 {
			t.Errorf("%s: %.1f %% and %.1f %%", what, a, b)
		}
	}
	same("the form's preview of the fare as published and the traffic page's projection now", form, now)
	same("the listing's traffic page and the carrier's overview project the hour", projected, overview)
	same("the listing's traffic page and operations project the hour", projected, opsProjected)
	same("the listing's traffic page and operations served in the hour", served, opsServed)
	if served < 1 && projected < 1 {
		t.Errorf("orbit served %.1f %% and was projected %.1f %%: the test needs a listing with traffic", served, projected)
	}
}
