package web_test

import (
	"context"
	"fmt"
	"regexp"
	"strconv"
	"testing"
	"time"

	"github.com/chromedp/chromedp"

	"github.com/airside/airside/internal/demo"
	"github.com/airside/airside/internal/money"
)

// TestBrowserShareMovesWithTheProjection: through the whole loop (the
// portal, the reference gateway and seeded customers, routingLoop), a
// carrier reads its traffic page, files a far cheaper fare in the browser,
// a reviewer approves it in the browser, customers keep sending, and the
// carrier's traffic page shows the hour's served share moving with the
// projected share beside it.
func TestBrowserShareMovesWithTheProjection(t *testing.T) {
	const model = "gpt-oss-120b"
	loop := startRoutingLoop(t)
	// Orbit's listing: a carrier with logins, holding no shape of the model
	// (the demo gives it no per-minute cap for the run to meet).
	var listing int64
	var input, output, cached money.Micros
	for _, l := range loop.listings() {
		if l.CarrierSlug == "orbit" && l.Model.Slug == model {
			listing, input, output = l.ID, l.Published.Input, l.Published.Output
			if l.Published.CachedInput != nil {
				cached = *l.Published.CachedInput
			}
		}
	}
	if listing == 0 {
		t.Fatalf("no orbit listing of %s", model)
	}
	base, page := loop.portal.URL, fmt.Sprintf("%s/traffic/listings/%d?period=hour", loop.portal.URL, listing)
	ctx := newBrowser(t)
	// hourShares reads the last hour of the share chart's table: served and
	// projected, in percent.
	hourShares := func() (served, projected float64) {
		t.Helper()
		rows, err := chromedp.Run(ctx, chromedp.Evaluate[[][]string](
			`[...document.querySelectorAll('[data-testid="share-chart-table"] tbody tr')].map(r => [...r.children].map(c => c.textContent.trim()))`))
		if err != nil || len(rows) == 0 {
			t.Fatalf("the share table: %v %v", rows, err)
		}
		last := rows[len(rows)-1]
		pct := func(s string) float64 {
			m := regexp.MustCompile(`^([0-9.]+) %$`).FindStringSubmatch(s)
			if m == nil {
				t.Fatalf("the hour's share %q in row %v", s, last)
			}
			v, _ := strconv.ParseFloat(m[1], 64)
			return v
		}
		return pct(last[1]), pct(last[2])
	}

	loop.drive([]string{model}, 150, 1)
	loop.report()
	err := chromedp.Do(ctx, chromedp.EmulateViewport(1400, 900),
		browserLogin(base, "admin@orbit.example", demo.Password),
		chromedp.Navigate(page),
		chromedp.WaitVisible(chromedp.CSS(`[data-testid="share-gap"]`)),
	)
	if err != nil {
		t.Fatal(err)
	}
	servedBefore, projectedBefore := hourShares()
	if servedBefore > 5 || projectedBefore > 5 {
		t.Fatalf("before the filing orbit already serves %.1f %% (projected %.1f %%): the test needs it to hold nothing", servedBefore, projectedBefore)
	}

	// A tenth of every token price: past the incumbent's margin everywhere.
	retype := func(id string, v money.Micros) chromedp.Action[chromedp.Void] {
		return chromedp.Steps(chromedp.Func(func(ctx context.Context, _ *chromedp.Target) error {
			_, err := chromedp.Run(ctx, chromedp.Evaluate[bool](`document.getElementById("`+id+`").select() || true`))
			return err
		}), chromedp.SendKeys(chromedp.ID(id), money.Micros(int64(v)/10).String()))
	}
	steps := []chromedp.Action[chromedp.Void]{chromedp.Navigate(fmt.Sprintf("%s/listings/%d/file", base, listing)),
		chromedp.WaitVisible(chromedp.ID("fare-form")), retype("input", input), retype("output", output)}
	if cached > 0 {
		steps = append(steps, retype("cached_input", cached))
	}
	steps = append(steps, chromedp.SendKeys(chromedp.ID("justification"), "A far cheaper fare."), chromedp.Click(chromedp.CSS(`[data-testid="submit"]`)))
	if err := chromedp.Do(ctx, steps...); err != nil {
		t.Fatalf("the carrier files: %v", err)
	}
	if err := waitText(ctx, `[data-testid="filing-state"]`, "pending review"); err != nil {
		t.Fatal(err)
	}
	filing, _ := chromedp.Run(ctx, chromedp.Location())
	if err := chromedp.Do(ctx, browserApprove(base, filing)); err != nil {
		t.Fatalf("the reviewer approves: %v", err)
	}
	if err := waitText(ctx, `[data-testid="filing-state"]`, "published"); err != nil {
		t.Fatal(err)
	}

	// Customers keep coming, from the next minute on (the clock runs with
	// real time: without the step they could share the approval's minute,
	// whose requests the projection spreads over it evenly); the gateway
	// routes on the new revision.
	loop.skew.Add(int64(time.Minute))
	loop.caughtUp()
	loop.drive([]string{model}, 150, 2)
	loop.report()
	err = chromedp.Do(ctx, browserLogout(), browserLogin(base, "admin@orbit.example", demo.Password),
		chromedp.Navigate(page),
		chromedp.WaitVisible(chromedp.CSS(`[data-testid="share-gap"]`)),
	)
	if err != nil {
		t.Fatal(err)
	}
	servedAfter, projectedAfter := hourShares()
	screenshot(t, ctx, "share-moves-with-the-projection")
	t.Logf("orbit's share of the hour: served %.1f %% then %.1f %%, projected %.1f %% then %.1f %%", servedBefore, servedAfter, projectedBefore, projectedAfter)
	// About half the hour's requests came after the approval, nearly all
	// of them to orbit: both figures move by tens of points, together.
	if servedAfter < servedBefore+20 || projectedAfter < projectedBefore+20 {
		t.Errorf("the hour's share did not move: served %.1f → %.1f %%, projected %.1f → %.1f %%", servedBefore, servedAfter, projectedBefore, projectedAfter)
	}
	if d := servedAfter - projectedAfter; d > 5 || d < -5 {
		t.Errorf("after the approval the hour shows %.1f %% served beside %.1f %% projected: more than 5 points apart", servedAfter, projectedAfter)
	}
	// The chart draws the projection beside the served bars.
	legend, err := chromedp.Run(ctx, chromedp.Evaluate[string](`document.querySelector('[data-testid="share-chart"]').closest('figure').textContent`))
	if err != nil {
		t.Fatal(err)
	}
	if !regexp.MustCompile(`% projected`).MatchString(legend) || !regexp.MustCompile(`% served`).MatchString(legend) {
		t.Errorf("the share chart does not name served and projected:\n%s", legend)
	}
}
