package web_test

import (
	"context"
	"fmt"
	"testing"
	"time"

	"github.com/chromedp/chromedp"

	"github.com/airside/airside/internal/apperr"
	"github.com/airside/airside/internal/catalogue"
	"github.com/airside/airside/internal/demo"
	"github.com/airside/airside/internal/preflight"
	"github.com/airside/airside/internal/secret"
	"github.com/airside/airside/internal/store"
	"github.com/airside/airside/internal/workflow"
)

// TestBrowserStopNowAndResume: a carrier admin stops routing to a listing
// at once from its page (a reason and a confirmation are asked first), the
// listing is out of the catalogue's routing as paused, and coming back with
// the same fare takes a preflight passed since the pause, not a reviewer.
func TestBrowserStopNowAndResume(t *testing.T) {
	p := newPortal(t, store.SQLite)
	withEndpoints(t, p, "nebula")
	listing := listingIDs(t, p.store)["nebula"][0]
	page := fmt.Sprintf("%s/listings/%d", p.srv.URL, listing)
	ctx := newBrowser(t)
	err := chromedp.Do(ctx, chromedp.EmulateViewport(1400, 900),
		browserLogin(p.srv.URL, "admin@nebula.example", demo.Password),
		chromedp.Navigate(page),
		chromedp.Click(chromedp.CSS(`[data-testid="pause"]`)),
		chromedp.WaitVisible(chromedp.CSS(`[data-testid="pause-submit"]`)),
		// Without a reason or the confirmation nothing stops.
		chromedp.Click(chromedp.CSS(`[data-testid="pause-submit"]`)),
	)
	if err != nil {
		t.Fatal(err)
	}
	// Waited for through the DOM (not a script): the refusal is a new
	// document, and typing into the old one's nodes fails ("could not find
	// node") once chromedp has not yet seen the navigation.
	if err := chromedp.Do(ctx, chromedp.WaitVisible(chromedp.CSS(`[data-testid="error-confirm"]`)),
		chromedp.WaitVisible(chromedp.CSS(`[data-testid="error-reason"]`))); err != nil {
		t.Fatalf("the refused stop is not explained: %v", err)
	}
	if l, _ := p.store.FindListing(context.Background(), listing, nil); l.Status != catalogue.StatusInService {
		t.Fatalf("a stop without reason and confirmation changed the status to %s", l.Status)
	}
	err = chromedp.Do(ctx,
		chromedp.SendKeys(chromedp.ID("reason"), "Upstream outage in our region."),
		chromedp.Click(chromedp.CSS(`[data-testid="pause-confirm"]`)),
		chromedp.Click(chromedp.CSS(`[data-testid="pause-submit"]`)),
	)
	if err != nil {
		t.Fatal(err)
	}
	if err := waitJS(ctx, `document.querySelector('[data-testid="listing-status"]') && document.querySelector('[data-testid="listing-status"]').textContent.trim() === "paused"`, "the listing shown paused"); err != nil {
		t.Fatal(err)
	}
	if l, _ := p.store.FindListing(context.Background(), listing, nil); l.Status != catalogue.StatusPaused {
		t.Errorf("after stop-now the listing is %s, want paused", l.Status)
	}
	snap, err := p.server.Routing.Current(context.Background())
	if err != nil {
		t.Fatal(err)
	}
	found := false
	for _, l := range snap.Changes("", 0).Listings {
		if l.ListingID == listing {
			found = true
			if l.Status != string(catalogue.StatusPaused) {
				t.Errorf("the routing catalogue has the listing %s, want paused", l.Status)
			}
		}
	}
	if !found {
		t.Error("the routing catalogue does not carry the paused listing (gateways would not learn of it)")
	}

	// Coming back with the same fare needs no reviewer, but a preflight
	// passed since the pause: without one the page says so and nothing
	// changes.
	clickThrough(t, ctx, `[data-testid="resume"]`, fmt.Sprintf("/listings/%d", listing))
	if err := waitText(ctx, `[data-testid="flash"]`, "has not passed"); err != nil {
		t.Fatal(err)
	}
	if l, _ := p.store.FindListing(context.Background(), listing, nil); l.Status != catalogue.StatusPaused {
		t.Fatalf("a resume without a fresh preflight changed the status to %s", l.Status)
	}
	passPreflight(t, p, listing)
	clickThrough(t, ctx, `[data-testid="resume"]`, fmt.Sprintf("/listings/%d", listing))
	if err := waitText(ctx, `[data-testid="flash"]`, "no review was needed"); err != nil {
		t.Fatal(err)
	}
	screenshot(t, ctx, "resumed-without-review")
	if l, _ := p.store.FindListing(context.Background(), listing, nil); l.Status != catalogue.StatusInService {
		t.Errorf("after a resume with the same fare and a fresh preflight the listing is %s", l.Status)
	}
	filings, err := p.store.FindFilings(context.Background(), workflow.FilingFilter{ListingID: listing})
	if err != nil {
		t.Fatal(err)
	}
	for _, f := range filings {
		if f.TargetStatus == catalogue.StatusInService {
			t.Errorf("a resume that needed no review was filed anyway: %+v", f)
		}
	}
}

// withEndpoints gives a carrier's demo listings an approved endpoint (at an
// address nothing listens on: the tests record probe results themselves).
func withEndpoints(t *testing.T, p *testPortal, carrier string) {
	t.Helper()
	key, err := secret.ParseKey(secret.NewKey())
	if err != nil {
		t.Fatal(err)
	}
	box, err := secret.New(key)
	if err != nil {
		t.Fatal(err)
	}
	if _, err := demo.SeedEndpoints(context.Background(), p.store, box, map[string]string{carrier: "http://127.0.0.1:9/v1"}); err != nil {
		t.Fatal(err)
	}
}

// passPreflight records a preflight of the listing's endpoint with the
// probes a listing needs in service passed, as the worker would after
// probing it (the demo endpoints are not served in tests).
func passPreflight(t *testing.T, p *testPortal, listing int64) {
	t.Helper()
	ctx := context.Background()
	if _, err := p.store.RequestPreflight(ctx, 1, listing, 0); err != nil && apperr.Code(err) != apperr.ECONFLICT { // already queued is fine
		t.Fatal(err)
	}
	// Other listings' runs may be queued first (SeedEndpoints queues one
	// for each): claim until this listing's comes.
	var job *preflight.Job
	for range 100 {
		j, err := p.store.ClaimPreflight(ctx, "test", 100, time.Hour)
		if err != nil || j == nil {
			t.Fatalf("claim the preflight: %+v %v", j, err)
		}
		if j.ListingID == listing {
			job = j
			break
		}
	}
	if job == nil {
		t.Fatal("the listing's preflight was never claimed")
	}
	for _, probe := range []string{preflight.ProbeReachable, preflight.ProbeChat, preflight.ProbeStreaming} {
		if err := p.store.RecordProbe(ctx, job, preflight.Result{Probe: probe, State: preflight.Passed, At: p.store.Now()}); err != nil {
			t.Fatal(err)
		}
	}
	if err := p.store.FinishPreflight(ctx, job, 24*time.Hour); err != nil {
		t.Fatal(err)
	}
}

// TestBrowserResubmissionDiff: the reviewer opens a resubmitted filing in
// the browser and sees what changed since it was sent back, beside the
// history's record of the edit, on a page that passes axe.
func TestBrowserResubmissionDiff(t *testing.T) {
	p := newPortal(t, store.SQLite)
	filing := sentBackFiling(t, p)
	resubmit(t, p, filing, "0.43")

	ctx := newBrowser(t)
	err := chromedp.Do(ctx, chromedp.EmulateViewport(1400, 900),
		browserLogin(p.srv.URL, "reviewer@airside.example", demo.Password),
		chromedp.Navigate(p.srv.URL+filing),
		chromedp.WaitVisible(chromedp.CSS(`[data-testid="since-sent-back"]`)),
	)
	if err != nil {
		t.Fatal(err)
	}
	diff := `(() => { const s = document.querySelector('[data-testid="since-sent-back"]'); const rows = s.querySelectorAll('tbody tr');
		return rows.length === 1 && rows[0].textContent.includes("Input price") && rows[0].textContent.includes("$0.41") && rows[0].textContent.includes("$0.43"); })()`
	if err := waitJS(ctx, diff, "the diff since it was sent back"); err != nil {
		t.Error(err)
	}
	if err := waitJS(ctx, `document.body.textContent.includes("resubmitted it for review, changing Input price $0.4100 → $0.4300")`, "the edit in the history"); err != nil {
		t.Error(err)
	}
	if err := checkAxe(t, ctx, "a resubmitted filing"); err != nil {
		t.Error(err)
	}
}
