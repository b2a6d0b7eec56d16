package web_test

import (
	"context"
	"fmt"
	"io"
	"log/slog"
	"math"
	"net/http"
	"net/http/httptest"
	"regexp"
	"slices"
	"strconv"
	"strings"
	"testing"
	"time"

	"github.com/airside/airside/cmd/airside/wire"
	"github.com/airside/airside/internal/apitoken"
	"github.com/airside/airside/internal/catalogue"
	"github.com/airside/airside/internal/demo"
	"github.com/airside/airside/internal/store"
)

// TestTheProjectionCacheChangesNothing: the hours a traffic page projects
// that can no longer change are kept per model and revision; a page read
// with them kept, and later carried on from where they ended, shows the
// same projection, hour by hour, as one worked out from nothing on another
// portal over the same database.
func TestTheProjectionCacheChangesNothing(t *testing.T) {
	p := newPortal(t, store.SQLite)
	if err := demo.SeedHistory(context.Background(), p.store, 4); err != nil {
		t.Fatal(err)
	}
	listing := listingOf(t, p.store, "nebula", "kimi-k2.5")
	path := fmt.Sprintf("/traffic/listings/%d?period=day", listing.ID)
	table := func(c *client) string {
		t.Helper()
		res := c.get(path)
		wantStatus(t, "listing traffic", res, http.StatusOK)
		tab := regexp.MustCompile(`(?s)data-testid="share-chart-table".*?</table>`).FindString(res.body)
		if !regexp.MustCompile(`<td>[0-9.]+ %</td><td>[0-9.]+ %</td>`).MatchString(tab) {
			t.Fatalf("no day with a served and a projected share:\n%s", tab)
		}
		return tab
	}
	c := p.client()
	c.login("admin@nebula.example")
	now := time.Now().UTC()
	p.store.Now = func() time.Time { return now }
	cold := table(c)
	if warm := table(c); warm != cold {
		t.Errorf("read again with the old hours kept:\n%s\nfirst:\n%s", warm, cold)
	}
	// Three hours on, the kept hours are carried on from where they ended
	// (three more freeze); a portal with none works the window out whole.
	now = now.Add(3 * time.Hour)
	cold = table(c)
	if got := table(nothingKeptOn(t, p, "admin@nebula.example")); got != cold {
		t.Errorf("worked out from nothing on another portal:\n%s\nwith the hours kept:\n%s", got, cold)
	}

	// The live hours are kept too, until a metric batch is recorded: the
	// carrier's overview read again runs none of the projection's reads,
	// and after new metrics shows what a portal with nothing kept shows.
	overview := func(c *client) (string, int64) {
		t.Helper()
		before := p.store.Statements()
		res := c.get("/traffic?period=hour")
		wantStatus(t, "traffic overview", res, http.StatusOK)
		// The whole table: requests, served and projected shares.
		tab := regexp.MustCompile(`(?s)data-testid="traffic-listings".*?</table>`).FindString(res.body)
		if !strings.Contains(tab, `data-testid="projected-share">`) {
			t.Fatalf("the overview has no projected share:\n%s", res.body)
		}
		return tab, p.store.Statements() - before
	}
	first, cost := overview(c)
	again, kept := overview(c)
	if again != first || kept >= cost {
		t.Errorf("read again with nothing new: %s in %d statements; first %s in %d", again, kept, first, cost)
	}
	// Half an hour of heavy traffic in each live hour at the model's other
	// listings, most of it failing: their health falls, and nebula's
	// projected share rises.
	all, err := p.store.FindListings(context.Background(), catalogue.ListingFilter{})
	if err != nil {
		t.Fatal(err)
	}
	var minutes []catalogue.Bucket
	for _, other := range all {
		if other.Model.Slug != listing.Model.Slug || other.ID == listing.ID {
			continue
		}
		for k := range 26 {
			for m := range 30 {
				at := now.Truncate(time.Hour).Add(time.Duration(m)*time.Minute - time.Duration(k)*time.Hour)
				if at.Before(now) {
					minutes = append(minutes, catalogue.Bucket{ListingID: other.ID, Minute: at, Source: "cache-test", Counts: catalogue.Counts{Requests: 5000, Errors: 4500,
						TTFTMsSum: 500 * 400, OutputTokens: 500 * 300, DurationMs: 500 * 5000, InputTokens: 5000 * 4000}})
				}
			}
		}
	}
	if err := p.store.RecordBuckets(context.Background(), minutes); err != nil {
		t.Fatal(err)
	}
	after, redone := overview(c)
	if after == first {
		t.Errorf("the overview projects %s after a day of new metrics, as before them", after)
	}
	if redone <= kept {
		t.Errorf("after new metrics the overview ran %d statements, as many as with everything kept (%d)", redone, kept)
	}
	if want, _ := overview(nothingKeptOn(t, p, "admin@nebula.example")); after != want {
		t.Errorf("after new metrics the overview projects %s; a portal with nothing kept %s", after, want)
	}

	// A batch that touches only the hour under way: the portal projects
	// that hour again from the holders it kept at its start, keeping the
	// live hours before it, and shows what a portal with nothing kept
	// shows. A failing minute at nebula moves its projection.
	var recent []catalogue.Bucket
	for _, l := range all {
		if l.Model.Slug == listing.Model.Slug {
			recent = append(recent, catalogue.Bucket{ListingID: l.ID, Minute: now.Truncate(time.Minute), Source: "cache-test-now", Counts: catalogue.Counts{Requests: 9000,
				Errors: 8900, TTFTMsSum: 100 * 400, OutputTokens: 100 * 300, DurationMs: 100 * 5000, InputTokens: 9000 * 4000}})
		}
	}
	if err := p.store.RecordBuckets(context.Background(), recent); err != nil {
		t.Fatal(err)
	}
	hoursBefore := p.server.HoursProjectedForTest()
	latest, _ := overview(c)
	models := map[string]bool{}
	for _, l := range all {
		if l.CarrierSlug == "nebula" {
			models[l.Model.Slug] = true
		}
	}
	if redone := p.server.HoursProjectedForTest() - hoursBefore; redone == 0 || redone > int64(2*len(models)) {
		t.Errorf("after a batch in the hour under way the overview projected %d hours for %d models, want an hour or two each", redone, len(models))
	}
	if want, _ := overview(nothingKeptOn(t, p, "admin@nebula.example")); latest != want {
		t.Errorf("after a batch in the hour under way the overview projects %s; a portal with nothing kept %s", latest, want)
	}
}

// TestABatchOfTheHourUnderWayRereadsThatHourAlone: staff's operations
// page reads the day up to the next hour's start; after a gateway's batch
// of the minute under way it reads that hour of the rollups again, not the
// day (it read the whole window again after every batch: 120 ms at 500
// listings under a live fleet), and shows what a portal that kept nothing
// shows.
func TestABatchOfTheHourUnderWayRereadsThatHourAlone(t *testing.T) {
	p := newPortal(t, store.SQLite)
	ctx := context.Background()
	if err := demo.SeedHistory(ctx, p.store, 2); err != nil {
		t.Fatal(err)
	}
	now := time.Now().UTC()
	p.store.Now = func() time.Time { return now }
	all, err := p.store.FindListings(ctx, catalogue.ListingFilter{})
	if err != nil {
		t.Fatal(err)
	}
	// A day of traffic before now, a minute of each hour at each listing.
	var day []catalogue.Bucket
	for i, l := range all {
		for k := 1; k <= 24; k++ {
			day = append(day, catalogue.Bucket{ListingID: l.ID, Minute: now.Truncate(time.Minute).Add(-time.Duration(k) * time.Hour), Source: "ops-test", Counts: catalogue.Counts{Requests: int64(100 + 10*(i%5)), TTFTMsSum: 100 * 400, OutputTokens: 100 * 300, DurationMs: 100 * 5000, InputTokens: 100 * 4000}})
		}
	}
	if err := p.store.RecordBuckets(ctx, day); err != nil {
		t.Fatal(err)
	}
	c := p.client()
	c.login("reviewer@airside.example")
	// Each listing's measured and projected share (health and the
	// winners now come from the routing snapshot, refreshed on its own).
	row := regexp.MustCompile(`(?s)href="/listings/(\d+)".*?data-testid="ops-share">([^<]*)<.*?data-testid="ops-projected">([^<]*)<`)
	operations := func(c *client) (string, int64) {
		t.Helper()
		before := p.server.MetricPointsReadForTest()
		res := c.get("/operations")
		wantStatus(t, "operations", res, http.StatusOK)
		var shares []string
		for _, m := range row.FindAllStringSubmatch(res.body, -1) {
			shares = append(shares, fmt.Sprintf("listing %s: %s measured, %s projected", m[1], m[2], m[3]))
		}
		if len(shares) == 0 {
			t.Fatalf("no operations table:\n%s", res.body)
		}
		return strings.Join(shares, "\n"), p.server.MetricPointsReadForTest() - before
	}
	cold, coldPoints := operations(c)
	if again, points := operations(c); again != cold || points != 0 {
		t.Errorf("read again with nothing new: %d points read (first read %d)", points, coldPoints)
	}
	// A gateway's report of the minute under way, failing most requests
	// at every listing: shares and projections move.
	var batch []catalogue.Bucket
	for i, l := range all {
		batch = append(batch, catalogue.Bucket{ListingID: l.ID, Minute: now.Truncate(time.Minute), Source: "ops-test", Counts: catalogue.Counts{Requests: int64(1000 + 500*(i%3)),
			Errors: 900, TTFTMsSum: 100 * 400, OutputTokens: 100 * 300, DurationMs: 100 * 5000, InputTokens: 1000 * 4000}})
	}
	if err := p.store.RecordBuckets(ctx, batch); err != nil {
		t.Fatal(err)
	}
	after, points := operations(c)
	// The hour under way, once for each of the page's three rollups (the
	// day's totals, the incident hours, the projection's hours): about a
	// point a listing each, where the first read took a day of hours.
	if points == 0 || points > int64(4*len(all)) || points*4 > coldPoints {
		t.Errorf("after a batch of the minute under way the page read %d rollup points for %d listings (the first read %d), want the hour under way alone",
			points, len(all), coldPoints)
	}
	if after == cold {
		t.Errorf("the operations page is the same after a batch that moved every listing:\n%s", after)
	}
	if want, _ := operations(nothingKeptOn(t, p, "reviewer@airside.example")); after != want {
		t.Errorf("after a batch the operations page shows\n%s\na portal that kept nothing shows\n%s", after, want)
	}
}

// nothingKeptOn is a client of another portal on p's database, logged in
// as email: one that has kept nothing yet.
func nothingKeptOn(t *testing.T, p *testPortal, email string) *client {
	t.Helper()
	other := wire.Portal(p.store, wire.Config{Log: slog.New(slog.NewTextHandler(io.Discard, nil))})
	srv := httptest.NewServer(other.Handler())
	t.Cleanup(srv.Close)
	c := (&testPortal{t: t, srv: srv, store: p.store, server: other}).client()
	c.login(email)
	return c
}

// TestThePreviewOfAPublishedFareIsTheTrafficPagesNow: the fare preview
// elects on where routing stands (learned rates, each shape's holder), as
// the traffic page's projection of now does, so for the fare as published
// the two pages say the same share. Before, the demo's deepseek-v3.2 read
// 0.2 % for nebula and 99.0 % for orbit on the preview and 49.6 % for each
// on the traffic page: the preview took the winner with the published fares
// as every shape's incumbent, and the catalogue's cache-hit rate. Part of
// the small requests carry sets of preferences (zero data retention, a
// provider order), which both pages elect on ballots of their own.
func TestThePreviewOfAPublishedFareIsTheTrafficPagesNow(t *testing.T) {
	p := newPortal(t, store.SQLite)
	ctx := context.Background()
	if err := demo.SeedHistory(ctx, p.store, 10); err != nil {
		t.Fatal(err)
	}
	all, err := p.store.FindListings(ctx, catalogue.ListingFilter{Published: true})
	if err != nil {
		t.Fatal(err)
	}
	tok := apiToken(t, p.store, apitoken.ScopeMetricsWrite)
	minute := p.server.Now().UTC().Truncate(time.Minute).Add(-10 * time.Minute).Format(time.RFC3339)
	var demand []string
	for _, model := range slices.Compact(slices.Sorted(func(yield func(string) bool) {
		for _, l := range all {
			if !yield(l.Model.Slug) {
				return
			}
		}
	})) {
		demand = append(demand, fmt.Sprintf(`{"model":%q,"workload":"general","minute":%q,"source":"gw","requests":2000,"promptTokens":2000000,
			"asked":{"zdr":300,"prefs:zdr":300,"prefs:order:orbit":500}}`, model, minute))
	}
	wantStatus(t, "post demand with preferences", apiCall(t, p.srv.URL, "POST", "/api/v1/metrics", tok,
		`{"buckets":[],"demand":[`+strings.Join(demand, ",")+`]}`), http.StatusAccepted)
	compared := 0
	for _, carrier := range []string{"nebula", "orbit"} {
		c := p.client()
		c.login("admin@" + carrier + ".example")
		for _, l := range all {
			if l.CarrierSlug != carrier || l.Status != catalogue.StatusInService {
				continue
			}
			previewPage := c.get(fmt.Sprintf("/listings/%d/preview", l.ID)).body
			trafficPage := c.get(fmt.Sprintf("/traffic/listings/%d", l.ID)).body
			previewed := regexp.MustCompile(`data-testid="share-total">([^<]*)<`).FindStringSubmatch(previewPage)
			now := regexp.MustCompile(`data-testid="projected">[^<]*<strong>([^<]*)<`).FindStringSubmatch(trafficPage)
			if previewed == nil || now == nil {
				t.Fatalf("%s/%s: preview share %v, traffic page's now %v", carrier, l.Model.Slug, previewed, now)
			}
			if previewed[1] != now[1] {
				t.Errorf("%s/%s: the preview projects %s, the traffic page %s now", carrier, l.Model.Slug, previewed[1], now[1])
			}
			// For projects on the share policy, scenario by scenario, the
			// same figures on both pages.
			var underShare, policyNow []string
			for _, m := range regexp.MustCompile(`<td><strong>([^<]*) of its requests</strong>`).FindAllStringSubmatch(
				regexp.MustCompile(`(?s)data-testid="under-share".*?</table>`).FindString(previewPage), -1) {
				underShare = append(underShare, m[1])
			}
			for _, m := range regexp.MustCompile(`data-testid="share-policy-[a-z]+-auto">([^<]*)<`).FindAllStringSubmatch(trafficPage, -1) {
				if m[1] != "not eligible" {
					policyNow = append(policyNow, m[1])
				}
			}
			if len(underShare) == 0 || !slices.Equal(underShare, policyNow) {
				t.Errorf("%s/%s: under the share policy the preview says %v, the traffic page %v", carrier, l.Model.Slug, underShare, policyNow)
			}
			// What it takes to win says where the listing stands with each
			// set: orbit's order sends those requests to orbit whatever the
			// prices, where orbit serves the model.
			win := regexp.MustCompile(`(?s)data-testid="win".*?</table>`).FindString(previewPage)
			if !strings.Contains(win, "asking for zero data retention</th>") {
				t.Errorf("%s/%s: what it takes to win has no row for the zero-data-retention requests:\n%s", carrier, l.Model.Slug, win)
			}
			order := regexp.MustCompile(`asking for the provider order orbit</th>\s*<td><strong>([^<]*)<`).FindStringSubmatch(win)
			orbitServes := slices.ContainsFunc(all, func(o catalogue.Listing) bool {
				return o.CarrierSlug == "orbit" && o.Model.Slug == l.Model.Slug && o.Status == catalogue.StatusInService
			})
			want := map[bool]string{true: "You win", false: "Cannot win by price"}[carrier == "orbit"]
			if order == nil || (orbitServes && order[1] != want) {
				t.Errorf("%s/%s: the row for orbit's provider order says %v, want %q", carrier, l.Model.Slug, order, want)
			}
			compared++
		}
	}
	if compared < 6 {
		t.Errorf("compared %d listings, want the demo's nebula and orbit listings in service", compared)
	}
	// "Wins now" on /operations follows the same sets: where orbit does
	// not hold the small one-shots, it takes the part whose provider order
	// names it first, and the holder's win says that part went elsewhere.
	staff := p.client()
	staff.login("admin@airside.example")
	ops := staff.get("/operations")
	wantStatus(t, "operations", ops, http.StatusOK)
	winsOf := operationsWins(ops.body)
	const small = "Small one-shot (auto)"
	holdsSmall := regexp.MustCompile(`(^|, )` + regexp.QuoteMeta(small) + `(,|$| \(not)`)
	taken := 0
	for _, l := range all {
		if l.CarrierSlug != "orbit" || l.Status != catalogue.StatusInService || holdsSmall.MatchString(winsOf[l.ID]) {
			continue
		}
		taken++
		if set := small + ": the 25.0 % asking for the provider order orbit"; !strings.Contains(winsOf[l.ID], set) {
			t.Errorf("orbit/%s wins %q now, want %q", l.Model.Slug, winsOf[l.ID], set)
		}
		if !slices.ContainsFunc(all, func(o catalogue.Listing) bool {
			return o.Model.Slug == l.Model.Slug && strings.Contains(winsOf[o.ID], small+" (not the ")
		}) {
			t.Errorf("%s: no listing's %q says what part went elsewhere", l.Model.Slug, small)
		}
	}
	if taken == 0 {
		t.Error("orbit holds every model's small one-shots: the test needs one it does not")
	}
}

// TestTheTrafficPageWeighsEachPolicyByItsDemand: demand the gateway reports
// as routed under the share policy makes the listing's traffic page say
// which part of the model's requests that policy carried, and the share
// with each policy weighed by its demand: the election's projection and
// the share policy's, blended in that proportion.
func TestTheTrafficPageWeighsEachPolicyByItsDemand(t *testing.T) {
	p := newPortal(t, store.SQLite)
	l := nebulaListing(t, p.store, "kimi-k2.5")
	c := p.client()
	c.login("admin@nebula.example")
	page := fmt.Sprintf("/traffic/listings/%d", l.ID)
	if body := c.get(page).body; strings.Contains(body, `data-testid="share-blended"`) {
		t.Fatal("a blend is shown before any request came under the share policy")
	}
	tok := apiToken(t, p.store, apitoken.ScopeMetricsWrite)
	minute := p.server.Now().UTC().Truncate(time.Minute).Add(-10 * time.Minute).Format(time.RFC3339)
	body := fmt.Sprintf(`{"buckets":[],"demand":[{"model":%q,"workload":"general","minute":%q,"source":"gw","requests":200,"promptTokens":200000,
		"asked":{"policy:share":50}}]}`, l.Model.Slug, minute)
	wantStatus(t, "post demand", apiCall(t, p.srv.URL, "POST", "/api/v1/metrics", tok, body), http.StatusAccepted)
	got := c.get(page).body
	pct := func(testid string) float64 {
		m := regexp.MustCompile(`data-testid="` + testid + `">([0-9.]+) %<`).FindStringSubmatch(got)
		if m == nil {
			t.Fatalf("no %s on the page:\n%.4000s", testid, got)
		}
		v, err := strconv.ParseFloat(m[1], 64)
		if err != nil {
			t.Fatal(err)
		}
		return v
	}
	election := regexp.MustCompile(`data-testid="projected">[^<]*<strong>([0-9.]+) %<`).FindStringSubmatch(got)
	policy := regexp.MustCompile(`data-testid="share-policy-now">[^<]*<strong>([0-9.]+) %<`).FindStringSubmatch(got)
	if election == nil || policy == nil {
		t.Fatalf("no projection or share-policy figure on the page:\n%.4000s", got)
	}
	e, _ := strconv.ParseFloat(election[1], 64)
	s, _ := strconv.ParseFloat(policy[1], 64)
	demand, blended := pct("share-policy-demand"), pct("share-blended-value")
	if demand != 25 {
		t.Errorf("the share policy carried %v %% of the model's requests; 50 of 200 were posted", demand)
	}
	// Each figure is shown to a tenth of a point.
	if want := 0.75*e + 0.25*s; math.Abs(blended-want) > 0.15 {
		t.Errorf("blended %v %%; 0.75 x %v + 0.25 x %v = %.2f", blended, e, s, want)
	}
}
