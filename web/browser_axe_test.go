package web_test

import (
	"context"
	_ "embed"
	"encoding/json"
	"fmt"
	"strings"
	"sync"
	"testing"
	"time"

	"github.com/chromedp/cdproto/cdp"
	cdplog "github.com/chromedp/cdproto/log"
	"github.com/chromedp/cdproto/runtime"
	"github.com/chromedp/chromedp"

	"github.com/airside/airside/internal/demo"
	"github.com/airside/airside/internal/store"
	"github.com/airside/airside/internal/workflow"
)

// axeSource is axe-core 4.14.1 from the npm registry (MPL-2.0, see
// testdata/axe-LICENSE), injected into every page the walk visits.
//
//go:embed testdata/axe-4.14.1.min.js
var axeSource string

type axeViolation struct {
	ID    string `json:"id"`
	Help  string `json:"help"`
	Nodes []struct {
		Target []string `json:"target"`
	} `json:"nodes"`
}

// axeCheck runs axe-core on the current page and returns its violations as
// lines ("rule: help at selector").
func axeCheck(ctx context.Context) ([]string, error) {
	if _, err := chromedp.Run(ctx, chromedp.Evaluate[chromedp.Void](`window.axe || (function(){`+axeSource+`}).call(window)`)); err != nil {
		return nil, fmt.Errorf("inject axe: %w", err)
	}
	raw, err := chromedp.Run(ctx, chromedp.Evaluate[string](`axe.run(document, {resultTypes: ["violations"]}).then(r => JSON.stringify(r.violations))`, chromedp.EvalAwaitPromise))
	if err != nil {
		return nil, fmt.Errorf("run axe: %w", err)
	}
	var vs []axeViolation
	if err := json.Unmarshal([]byte(raw), &vs); err != nil {
		return nil, err
	}
	var out []string
	for _, v := range vs {
		var where []string
		for _, n := range v.Nodes {
			where = append(where, strings.Join(n.Target, " "))
		}
		out = append(out, fmt.Sprintf("%s: %s at %s", v.ID, v.Help, strings.Join(where, ", ")))
	}
	return out, nil
}

// checkAxe reports every axe violation of the current page as an error.
func checkAxe(t *testing.T, ctx context.Context, where string) error {
	t.Helper()
	violations, err := axeCheck(ctx)
	for _, v := range violations {
		t.Errorf("%s: %s", where, v)
	}
	return err
}

// TestBrowserAxeWalk visits the main pages as each role, at 1400 and 390
// px, and fails on any axe-core violation.
func TestBrowserAxeWalk(t *testing.T) {
	p := newPortal(t, store.SQLite)
	if err := demo.SeedProfiles(context.Background(), p.store); err != nil {
		t.Fatal(err)
	}
	listing := listingIDs(t, p.store)["nebula"][0]
	// A month and more of traffic (tables of thirteen-digit token counts)
	// and messages in every inbox: the pages as they are after a while,
	// not empty, are the ones that must fit the screen.
	if err := demo.SeedHistory(context.Background(), p.store, 35); err != nil {
		t.Fatal(err)
	}
	filing := fmt.Sprintf("/filings/%d", messagesInTheInboxes(t, p.store, listing))
	statement := "/traffic/statements/" + time.Now().UTC().AddDate(0, -1, 0).Format("2006-01")
	ctx := newBrowser(t)
	base := p.srv.URL
	// Every console error, uncaught exception and browser log error (CSP
	// violations land there) across the walk.
	var mu sync.Mutex
	var problems []string
	if err := chromedp.Listen(ctx, func(ev any) {
		var msg string
		switch e := ev.(type) {
		case *runtime.EventConsoleAPICalled:
			if e.Type == runtime.ConsoleAPICalledTypeError {
				msg = "console error"
			}
		case *runtime.EventExceptionThrown:
			msg = "exception: " + e.ExceptionDetails.Text
		case *cdplog.EventEntryAdded:
			// The refused form answers 422 on purpose; Chromium logs the status.
			if e.Entry.Level == cdplog.EntryLevelError && !strings.Contains(e.Entry.Text, "status of 422") {
				msg = "log: " + e.Entry.Text
			}
		}
		if msg != "" {
			mu.Lock()
			problems = append(problems, msg)
			mu.Unlock()
		}
	}); err != nil {
		t.Fatal(err)
	}
	if _, err := chromedp.Call(ctx, cdplog.Enable, cdp.Empty{}); err != nil {
		t.Fatal(err)
	}
	walks := []struct {
		who   string
		pages []string
	}{
		{"", []string{"/login", "/apply", "/models", "/carriers/nebula", "/models/kimi-k2.5", "/glossary"}},
		{"admin@nebula.example", []string{"/listings", fmt.Sprintf("/listings/%d", listing), fmt.Sprintf("/listings/%d/file", listing),
			fmt.Sprintf("/listings/%d/preview", listing), "/filings", "/traffic", fmt.Sprintf("/traffic/listings/%d", listing), "/alerts", "/oncall",
			"/carrier/profile", "/carrier/members", "/carrier/tokens", "/carrier/feed", "/proposals", "/account", "/account/two-factor", "/inbox", "/audit", "/fares/bulk",
			"/traffic?period=hour", "/traffic?period=month", statement, filing, filing + "/edit", fmt.Sprintf("/listings/%d/prices", listing)}},
		{"member@nebula.example", []string{"/listings", fmt.Sprintf("/listings/%d", listing), "/filings", "/traffic", "/alerts", "/oncall",
			"/carrier/profile", "/carrier/members", "/account", "/inbox", statement, filing, fmt.Sprintf("/listings/%d/prices", listing)}},
		{"reviewer@airside.example", []string{"/review", "/operations", "/applications", fmt.Sprintf("/listings/%d", listing), "/inbox",
			"/traffic?carrier=nebula", "/oncall?carrier=nebula", statement + "?carrier=nebula", filing, "/audit"}},
		{"admin@airside.example", []string{"/admin/users", "/admin/carriers", "/admin/tokens", "/admin/throttles", "/inbox"}},
	}
	for _, width := range []int64{1400, 390} {
		for _, w := range walks {
			steps := []chromedp.Action[chromedp.Void]{chromedp.EmulateViewport(width, 900)}
			if w.who != "" {
				steps = append(steps, chromedp.Navigate(base+"/login"), chromedp.WaitVisible(chromedp.ID("email")),
					chromedp.SendKeys(chromedp.ID("email"), w.who), chromedp.SendKeys(chromedp.ID("password"), demo.Password),
					chromedp.Submit(chromedp.ID("password")), chromedp.WaitVisible(chromedp.CSS(`[data-testid="who"]`)))
			}
			if err := chromedp.Do(ctx, steps...); err != nil {
				t.Fatalf("log in as %s: %v", w.who, err)
			}
			for _, page := range w.pages {
				if err := chromedp.Do(ctx, chromedp.Navigate(base+page), chromedp.WaitReady(chromedp.CSS("main"))); err != nil {
					t.Fatalf("%s: %v", page, err)
				}
				if err := checkAxe(t, ctx, fmt.Sprintf("%d px, %s as %q", width, page, w.who)); err != nil {
					t.Fatalf("%s: %v", page, err)
				}
				if wide := pageOverflow(t, ctx); wide != "" {
					t.Errorf("%d px, %s as %q scrolls sideways as a whole: %s", width, page, w.who, wide)
				}
				if width == 1400 {
					if wrapped := navWraps(t, ctx); wrapped != "" {
						t.Errorf("1400 px, %s as %q: the top bar wraps (%s)", page, w.who, wrapped)
					}
				}
				if artifactsWanted() { // every main page at both widths, for a reviewer of the change
					who := strings.ReplaceAll(w.who, "@", "_at_")
					if who == "" {
						who = "anonymous"
					}
					screenshot(t, ctx, fmt.Sprintf("%d-%s%s", width, who, strings.NewReplacer("/", "_", "?", "_").Replace(page)))
				}
			}
			if w.who == "admin@nebula.example" {
				// A form after a 422, and the preview after a live update.
				form := fmt.Sprintf("%s/listings/%d/file", base, listing)
				err := chromedp.Do(ctx, chromedp.Navigate(form), chromedp.WaitVisible(chromedp.ID("fare-form")),
					chromedp.SetValue(chromedp.ID("input"), "1,50"), chromedp.Click(chromedp.CSS(`[data-testid="submit"]`)),
					chromedp.WaitVisible(chromedp.CSS(`[data-testid="form-errors"]`)))
				if err != nil {
					t.Fatalf("a refused form: %v", err)
				}
				if err := checkAxe(t, ctx, fmt.Sprintf("%d px, the refused fare form", width)); err != nil {
					t.Fatal(err)
				}
				// A fresh GET (the same URL would re-post the refused form).
				if err := chromedp.Do(ctx, chromedp.Navigate(base+"/listings"), chromedp.Navigate(form),
					chromedp.WaitVisible(chromedp.CSS(`[data-testid="summary-effective"]`))); err != nil {
					t.Fatal(err)
				}
				before, _ := chromedp.Run(ctx, chromedp.Text(chromedp.CSS(`[data-testid="summary-effective"]`)))
				err = chromedp.Do(ctx, chromedp.Focus(chromedp.ID("landing_fee")), chromedp.Evaluate[chromedp.Void](`document.getElementById("landing_fee").select()`),
					chromedp.SendKeys(chromedp.ID("landing_fee"), "45"))
				if err != nil {
					t.Fatal(err)
				}
				// The summary is swapped out of band, before the panel itself:
				// axe checks the page once htmx has swapped and settled all of
				// it (checked mid-swap, it once saw the scenarios table
				// half-laid-out as a scrollable region).
				if err := waitJS(ctx, fmt.Sprintf(`document.querySelector('[data-testid="summary-effective"]').textContent !== %q && `+
					`!document.querySelector('.htmx-request, .htmx-swapping, .htmx-settling, .htmx-added')`, before), "a live preview update"); err != nil {
					t.Fatal(err)
				}
				if err := checkAxe(t, ctx, fmt.Sprintf("%d px, the preview after a live update", width)); err != nil {
					t.Fatal(err)
				}
			}
			if w.who != "" {
				if err := chromedp.Do(ctx, browserLogout()); err != nil {
					t.Fatalf("log out %s: %v", w.who, err)
				}
			}
		}
	}
	mu.Lock()
	defer mu.Unlock()
	for _, p := range problems {
		t.Errorf("during the walk: %s", p)
	}
}

// messagesInTheInboxes files a fare for the listing as its carrier's admin
// and has a reviewer send it back with a long note: messages in the
// reviewers' and the carrier's inboxes.
func messagesInTheInboxes(t *testing.T, st *store.Store, listing int64) int64 {
	t.Helper()
	ctx := context.Background()
	l, err := st.FindListing(ctx, listing, nil)
	if err != nil {
		t.Fatal(err)
	}
	admin, err := st.FindUserByEmail(ctx, "admin@nebula.example")
	if err != nil {
		t.Fatal(err)
	}
	reviewer, err := st.FindUserByEmail(ctx, "reviewer@airside.example")
	if err != nil {
		t.Fatal(err)
	}
	draft := *l.Published
	draft.Input += 1000
	id, err := st.CreateFiling(ctx, admin.ID, workflow.NewFiling{ListingID: listing, Fare: &draft, Justification: "A new input price for the quarter."})
	if err != nil {
		t.Fatal(err)
	}
	if err := st.SubmitFiling(ctx, admin.ID, id); err != nil {
		t.Fatal(err)
	}
	f, err := st.FindFiling(ctx, id, nil)
	if err != nil {
		t.Fatal(err)
	}
	note := "Please say why the input price moves while the output price stays: https://docs.example/pricing-policy/very-long-anchor-without-breaks"
	if _, err := st.DecideFiling(ctx, reviewer.ID, id, workflow.RequestChanges, note, f.LockVersion); err != nil {
		t.Fatal(err)
	}
	return id
}

// pageOverflow says why a page is wider than the viewport ("" when it is
// not): the outermost elements sticking out past its right edge. Wide
// content belongs in a box of its own that scrolls (.scroll), with the
// page itself fitting the screen.
// navWraps says how the top bar breaks onto a second line, or "": every
// item of the navigation and the who-block share one row (L7).
func navWraps(t *testing.T, ctx context.Context) string {
	t.Helper()
	const js = `(() => {
		const items = [...document.querySelectorAll(".topbar > .brand, .topbar > .nav > *, .topbar > .who > *")].filter(e => e.getBoundingClientRect().height > 0);
		if (items.length === 0) return "";
		const mid = e => { const r = e.getBoundingClientRect(); return r.top + r.height / 2; };
		const first = mid(items[0]);
		const off = items.filter(e => Math.abs(mid(e) - first) > 12);
		return off.length === 0 ? "" : off.slice(0, 3).map(e => e.textContent.trim().slice(0, 30)).join(", ") + " on another line";
	})()`
	got, err := chromedp.Run(ctx, chromedp.Evaluate[string](js))
	if err != nil {
		t.Fatalf("measure the top bar: %v", err)
	}
	return got
}

func pageOverflow(t *testing.T, ctx context.Context) string {
	t.Helper()
	const js = `(() => {
		const vw = document.documentElement.clientWidth;
		if (document.documentElement.scrollWidth <= vw + 1) return "";
		const out = [];
		for (const el of document.querySelectorAll("body *")) {
			const r = el.getBoundingClientRect();
			if (r.width === 0 || r.right <= vw + 1) continue;
			let inside = false;
			for (let p = el.parentElement; p && p !== document.body; p = p.parentElement) {
				const pr = p.getBoundingClientRect();
				const ox = getComputedStyle(p).overflowX;
				if (pr.right > vw + 1 || ox === "auto" || ox === "scroll" || ox === "hidden") { inside = true; break; }
			}
			if (!inside) out.push(el.tagName.toLowerCase() + (el.className && typeof el.className === "string" ? "." + el.className.trim().split(/\s+/).join(".") : "") + (el.id ? "#" + el.id : "") + " to " + Math.round(r.right) + " px");
			if (out.length >= 4) break;
		}
		return "page " + document.documentElement.scrollWidth + " px for a " + vw + " px viewport; " + out.join(", ");
	})()`
	got, err := chromedp.Run(ctx, chromedp.Evaluate[string](js))
	if err != nil {
		t.Fatal(err)
	}
	return got
}
