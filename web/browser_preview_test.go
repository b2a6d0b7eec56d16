package web_test

import (
	"context"
	"fmt"
	"strings"
	"testing"

	"github.com/chromedp/chromedp"

	"github.com/airside/airside/internal/demo"
	"github.com/airside/airside/internal/store"
)

// TestBrowserPreviewFollowsTheLandingFee: on the preview page, changing the
// landing fee updates the ranks and the chart without a reload.
func TestBrowserPreviewFollowsTheLandingFee(t *testing.T) {
	p := newPortal(t, store.SQLite)
	listing := listingIDs(t, p.store)["nebula"]
	ctx := newBrowser(t)
	err := chromedp.Do(ctx,
		chromedp.Navigate(p.srv.URL+"/login"),
		chromedp.SendKeys(chromedp.ID("email"), "admin@nebula.example"),
		chromedp.SendKeys(chromedp.ID("password"), demo.Password),
		chromedp.Submit(chromedp.ID("password")),
		chromedp.WaitVisible(chromedp.CSS(`[data-testid="listings"]`)),
	)
	if err != nil {
		t.Fatal(err)
	}
	// Use the listing whose ranks move most between 5 % and 50 %.
	var chosen string
	var before []string
	ranks := func() []string {
		var out []string
		for _, key := range []string{"small", "large", "coding", "chat"} {
			for _, mode := range []string{"auto", "price"} {
				s, _ := chromedp.Run(ctx, chromedp.Text(chromedp.CSS(`[data-testid="rank-`+key+`-`+mode+`"]`)))
				out = append(out, s)
			}
		}
		return out
	}
	chartMarker := func() string {
		s, _ := chromedp.Run(ctx, chromedp.Evaluate[string](`document.querySelector('[data-testid="fee-chart"] line.current').getAttribute("x1")`))
		return s
	}
	for _, id := range listing {
		url := fmt.Sprintf("%s/listings/%d/preview", p.srv.URL, id)
		if err := chromedp.Do(ctx, chromedp.Navigate(url), chromedp.WaitVisible(chromedp.CSS(`[data-testid="scenarios"]`))); err != nil {
			t.Fatal(err)
		}
		r := ranks()
		for _, rank := range r {
			if !strings.HasPrefix(rank, "1 of") {
				chosen, before = url, r
			}
		}
		if chosen != "" {
			break
		}
	}
	if chosen == "" {
		t.Fatal("no Nebula listing loses anywhere: the demo catalogue is not interesting")
	}
	markerBefore := chartMarker()
	err = chromedp.Do(ctx,
		chromedp.Focus(chromedp.ID("landing_fee")),
		chromedp.Func(func(ctx context.Context, _ *chromedp.Target) error {
			_, err := chromedp.Run(ctx, chromedp.Evaluate[bool](`document.getElementById("landing_fee").select() || true`))
			return err
		}),
		chromedp.SendKeys(chromedp.ID("landing_fee"), "50"),
	)
	if err != nil {
		t.Fatal(err)
	}
	// The panel is replaced after a pause in typing.
	var after []string
	for range 100 {
		after = ranks()
		if strings.Join(after, "|") != strings.Join(before, "|") && chartMarker() != markerBefore {
			break
		}
		chromedp.Do(ctx, chromedp.Sleep(50e6))
	}
	if strings.Join(after, "|") == strings.Join(before, "|") {
		t.Errorf("ranks did not change with a 50 %% landing fee: %v", after)
	}
	if chartMarker() == markerBefore {
		t.Errorf("the chart's landing-fee marker did not move (%s)", markerBefore)
	}
	err = chromedp.Do(ctx, chromedp.Click(chromedp.CSS(`[data-testid="ballot-small-auto"] summary`)))
	if err != nil {
		t.Fatal(err)
	}
	screenshot(t, ctx, "preview")
}
