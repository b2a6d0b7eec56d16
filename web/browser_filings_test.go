package web_test

import (
	"context"
	"fmt"
	"net/url"
	"os"
	"path/filepath"
	"strings"
	"testing"

	"github.com/chromedp/chromedp"

	"github.com/airside/airside/internal/catalogue"
	"github.com/airside/airside/internal/demo"
	"github.com/airside/airside/internal/fare"
	"github.com/airside/airside/internal/money"
	"github.com/airside/airside/internal/store"
	"github.com/airside/airside/internal/workflow"
)

// TestBrowserBulkUploadLeadsToItsFilings: a carrier uploads a CSV of two
// fares, lands on the page of that batch's drafts, and submits them both at
// once.
func TestBrowserBulkUploadLeadsToItsFilings(t *testing.T) {
	p := newPortal(t, store.SQLite)
	base := p.srv.URL
	c := p.client()
	c.login("admin@nebula.example")
	// A file in the format before the market's columns: its rows keep the
	// listings' published market.
	header := strings.Join(fare.LegacyCSVHeader, ",")
	file := filepath.Join(t.TempDir(), "fares.csv")
	content := header + "\nnebula,kimi-k2.5,0.40,2.00,,,,20,0,,,global,,,Quarterly repricing,\nnebula,gpt-oss-120b,0.10,0.40,,,,20,0,,,global,,,,\n"
	if err := os.WriteFile(file, []byte(content), 0o600); err != nil {
		t.Fatal(err)
	}
	ctx := newBrowser(t)
	err := chromedp.Do(ctx, chromedp.EmulateViewport(1400, 900),
		browserLogin(base, "admin@nebula.example", demo.Password),
		chromedp.Navigate(base+"/fares/bulk"),
		chromedp.SetUploadFiles(chromedp.ID("file"), []string{file}),
		chromedp.Click(chromedp.CSS(`form[action="/fares/bulk"] button[type="submit"]`)),
		chromedp.WaitVisible(chromedp.CSS(`[data-testid="filings"]`)),
	)
	if err != nil {
		t.Fatalf("upload: %v", err)
	}
	if err := waitJS(ctx, `location.pathname === "/filings" && location.search.includes("batch=") &&
		document.querySelectorAll('[data-testid="filings"] input[name="id"]:checked').length === 2`, "the batch's two drafts, selected"); err != nil {
		t.Fatal(err)
	}
	if flash, _ := chromedp.Run(ctx, chromedp.Text(chromedp.CSS(`[data-testid="flash"]`))); !strings.Contains(flash, "2 draft filings") {
		t.Errorf("the upload says %q", flash)
	}
	// The list says it is filtered to the upload, and how to see the rest.
	if err := waitText(ctx, `[data-testid="batch-filter"]`, "Showing only the 2 filings of the file you uploaded"); err != nil {
		t.Error(err)
	}
	if err := checkAxe(t, ctx, "a bulk batch"); err != nil {
		t.Error(err)
	}
	screenshot(t, ctx, "bulk-batch")
	err = chromedp.Do(ctx, chromedp.Click(chromedp.CSS(`[data-testid="submit-selected"]`)),
		chromedp.WaitVisible(chromedp.CSS(`[data-testid="flash"]`)))
	if err != nil {
		t.Fatalf("submit the batch: %v", err)
	}
	if err := waitJS(ctx, `location.search.includes("state=pending") && document.querySelectorAll('[data-testid="filings"] tbody tr').length === 2`, "both filings pending review"); err != nil {
		t.Fatal(err)
	}
	fs, err := p.store.FindFilings(context.Background(), workflow.FilingFilter{})
	if err != nil || len(fs) != 2 {
		t.Fatalf("%d filings, %v", len(fs), err)
	}
	for _, f := range fs {
		if f.State != workflow.Submitted {
			t.Errorf("filing %d is %s after submitting the batch", f.ID, f.State)
		}
	}
}

// TestBrowserStaleDraftIsRefreshedAndApproved: a draft whose base fare was
// replaced meanwhile offers Refresh instead of Submit; refreshed, it is
// submitted and a reviewer approves it.
func TestBrowserStaleDraftIsRefreshedAndApproved(t *testing.T) {
	p := newPortal(t, store.SQLite)
	base := p.srv.URL
	listing := listingIDs(t, p.store)["nebula"][0]
	author := p.client()
	author.login("admin@nebula.example")
	form := fmt.Sprintf("/listings/%d/file", listing)
	v := fareValues()
	v.Set("op", "save")
	draft := author.post(form, form, v).location
	other := submitFiling(t, p, "member@nebula.example", listing, "0.39")
	rev := p.client()
	rev.login("reviewer@airside.example")
	wantStatus(t, "approve the other filing", rev.post(other, other+"/approve", url.Values{}), 303)

	ctx := newBrowser(t)
	err := chromedp.Do(ctx, chromedp.EmulateViewport(1400, 900),
		browserLogin(base, "admin@nebula.example", demo.Password),
		chromedp.Navigate(base+draft),
		chromedp.WaitVisible(chromedp.CSS(`[data-testid="stale"]`)),
	)
	if err != nil {
		t.Fatalf("open the stale draft: %v", err)
	}
	if err := waitJS(ctx, `!document.querySelector('[data-testid="submit"]') && !!document.querySelector('[data-testid="refresh"]')`, "Refresh offered instead of Submit"); err != nil {
		t.Fatal(err)
	}
	err = chromedp.Do(ctx, chromedp.Click(chromedp.CSS(`[data-testid="refresh"]`)),
		chromedp.WaitVisible(chromedp.CSS(`[data-testid="submit"]`)))
	if err != nil {
		t.Fatalf("refresh: %v", err)
	}
	if err := waitJS(ctx, `!document.querySelector('[data-testid="stale"]') && document.body.textContent.includes("$0.39")`, "the draft refreshed against the new published $0.39"); err != nil {
		t.Fatal(err)
	}
	err = chromedp.Do(ctx, chromedp.Click(chromedp.CSS(`[data-testid="submit"]`)))
	if err != nil {
		t.Fatal(err)
	}
	if err := waitText(ctx, `[data-testid="filing-state"]`, "pending review"); err != nil {
		t.Fatal(err)
	}
	if err := chromedp.Do(ctx, browserApprove(base, base+draft)); err != nil {
		t.Fatalf("the reviewer approves: %v", err)
	}
	if err := waitText(ctx, `[data-testid="filing-state"]`, "published"); err != nil {
		t.Fatal(err)
	}
}

// TestBrowserNineCarriersChartLabelsDoNotOverlap: with nine carriers on a
// model at nearly the same price, the fee chart's line-end labels are all
// drawn and no two overlap (their bounding boxes in the page), and each
// carrier has its own colour.
func TestBrowserNineCarriersChartLabelsDoNotOverlap(t *testing.T) {
	p := newPortal(t, store.SQLite)
	ctx := context.Background()
	nebula := listingOf(t, p.store, "nebula", "kimi-k2.5")
	names := []string{"Halcyon Systems", "Fathom AI", "Vantage Serve", "Lumen Grid", "Quarry Compute", "Tessel Labs", "Brightwater", "Cobalt Run"}
	have, _ := p.store.FindListings(ctx, catalogue.ListingFilter{ModelSlug: "kimi-k2.5"})
	for i, name := range names[:max(0, 9-len(have))] {
		c, err := p.store.CreateCarrier(ctx, nil, fmt.Sprintf("extra-%d", i), name)
		if err != nil {
			t.Fatal(err)
		}
		id, err := p.store.CreateListing(ctx, nil, c.ID, nebula.Model.ID)
		if err != nil {
			t.Fatal(err)
		}
		in, _ := money.ParsePrice(fmt.Sprintf("0.5%d", i))
		out, _ := money.ParsePrice("2.00")
		if _, err := p.store.PublishSeedFare(ctx, &fare.Fare{ListingID: id, Input: in, Output: out, LandingFee: 2000, CapScope: fare.ScopeGlobal}); err != nil {
			t.Fatal(err)
		}
	}
	if all, _ := p.store.FindListings(ctx, catalogue.ListingFilter{ModelSlug: "kimi-k2.5"}); len(all) < 9 {
		t.Fatalf("%d carriers on the model, want 9", len(all))
	}
	b := newBrowser(t)
	err := chromedp.Do(b, chromedp.EmulateViewport(1400, 900),
		browserLogin(p.srv.URL, "admin@nebula.example", demo.Password),
		chromedp.Navigate(fmt.Sprintf("%s/listings/%d/preview", p.srv.URL, nebula.ID)),
		chromedp.WaitVisible(chromedp.CSS(`[data-testid="fee-chart"]`)),
	)
	if err != nil {
		t.Fatal(err)
	}
	type box struct {
		Text                     string
		Left, Top, Right, Bottom float64
		Colour                   string
	}
	labels, err := chromedp.Run(b, chromedp.Evaluate[[]box](`[...document.querySelectorAll('[data-testid="fee-chart"] text.legend')].map(t => {
		const r = t.getBoundingClientRect();
		return {text: t.textContent, left: r.left, top: r.top, right: r.right, bottom: r.bottom, colour: getComputedStyle(t).fill};
	})`))
	if err != nil {
		t.Fatal(err)
	}
	if len(labels) < 9 {
		t.Fatalf("%d line labels drawn, want one per carrier (9)", len(labels))
	}
	colours := map[string]string{}
	for i, a := range labels {
		if a.Right <= a.Left || a.Bottom <= a.Top {
			t.Errorf("label %q has no size", a.Text)
		}
		if other, dup := colours[a.Colour]; dup {
			t.Errorf("%q and %q share the colour %s", other, a.Text, a.Colour)
		}
		colours[a.Colour] = a.Text
		for _, c := range labels[i+1:] {
			if a.Left < c.Right && c.Left < a.Right && a.Top < c.Bottom && c.Top < a.Bottom {
				t.Errorf("labels %q and %q overlap: %+v and %+v", a.Text, c.Text, a, c)
			}
		}
	}
	screenshot(t, b, "nine-carriers-fee-chart")
}
