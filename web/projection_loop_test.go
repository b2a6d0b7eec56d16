package web_test

import (
	"bytes"
	"context"
	"fmt"
	"io"
	"log/slog"
	"math"
	"math/rand/v2"
	"net/http"
	"net/http/httptest"
	"net/url"
	"regexp"
	"slices"
	"strconv"
	"strings"
	"sync"
	"sync/atomic"
	"testing"
	"time"

	"github.com/airside/airside/cmd/airside/wire"
	"github.com/airside/airside/internal/apitoken"
	"github.com/airside/airside/internal/catalogue"
	"github.com/airside/airside/internal/demo"
	"github.com/airside/airside/internal/election"
	"github.com/airside/airside/internal/fleet"
	"github.com/airside/airside/internal/fleet/fleettest"
	"github.com/airside/airside/internal/gateway"
	"github.com/airside/airside/internal/gatewayclient"
	"github.com/airside/airside/internal/preview"
	"github.com/airside/airside/internal/secret"
	"github.com/airside/airside/internal/store"
	"github.com/airside/airside/internal/store/storetest"
	"github.com/airside/airside/internal/trafficdriver"
	"github.com/airside/airside/web"
)

// TestTheProjectionAgreesWithWhatTheGatewayRouted closes the loop the
// carrier reads on its traffic page: the real portal (demo catalogue, its
// fake carriers), the reference gateway reading the public API, and a
// seeded driver sending a bounded number of requests through it. Then, for
// every listing of the models driven, the share the portal projects from the
// fares, health and workload mix in force (the preview's rules, hour by
// hour) is within 3 points of the share the gateway measured and reported,
// and every part of a gap of more than a point is named (routingLoop says
// how the run stays in one hour with health still under the gateway).
//
// The driver sends every kind of customer: coding agents (tool calls,
// verified for every listing here), large prompts, and small one-shots
// sent streamed or not, some asking for JSON or carrying an image (which
// narrow the ballot to the listings with the flag verified). The gateway
// keeps one incumbent for all of a shape's kinds; the demand it reports
// says each kind apart, and the projection elects each on its own ballot
// under that one incumbent (preview.KindsFromDemand). No listing here has
// vision verified: the gateway refuses the image requests, and the
// projection, finding no one to elect for them, leaves them out of the
// shares as routing's figures do.
func TestTheProjectionAgreesWithWhatTheGatewayRouted(t *testing.T) {
	projectionAgrees(t, startRoutingLoop(t))
}

// TestTheProjectionHoldsAcrossTwoReplicas: the same loop with the
// customers' requests spread over two gateway replicas sharing their state
// in Redis, each reporting its own part: the projection, which does not
// know how many replicas there are, keeps its promise.
func TestTheProjectionHoldsAcrossTwoReplicas(t *testing.T) {
	projectionAgrees(t, startRoutingLoopWith(t, loopOptions{Database: store.SQLite, Start: 20*time.Hour + 10*time.Minute, Replicas: 2}))
}

// TestTheProjectionHoldsUnderTheSharePolicy: the same loop with a project
// on the share policy beside the one on the election (election.md sec. 8,
// seed 004): its requests are drawn by share among the listings, with
// carriers of different speeds, error rates and 429s, and the projection,
// which replays the part of each hour routed under each policy, keeps
// every listing within 3 points.
func TestTheProjectionHoldsUnderTheSharePolicy(t *testing.T) {
	projectionAgrees(t, startRoutingLoopWith(t, loopOptions{Database: store.SQLite, Start: 20*time.Hour + 10*time.Minute, Share: 600}))
}

// TestTheProjectionHoldsWithPreferences: the same loop with three projects
// whose requests carry preferences (election.md sec. 7), about a third of
// the requests: zero data retention (one listing of each model is), data
// residency in Germany (a few are) and a provider order. The gateway
// reports each request's set of preferences with its demand, and the
// projection, which elects each set on a ballot of its own as the gateway
// routes it, keeps every listing within 3 points.
func TestTheProjectionHoldsWithPreferences(t *testing.T) {
	loop := startRoutingLoopWith(t, loopOptions{Database: store.SQLite, Start: 20*time.Hour + 10*time.Minute, Preferences: 950})
	projectionAgrees(t, loop)
	// The run is the workload the issue asks for: about a third of the
	// requests carried preferences, reported as their sets.
	var requests, preferring int64
	for _, m := range []string{"gpt-oss-120b", "deepseek-v3.2"} {
		sums, err := loop.st.DemandAsked(context.Background(), m, loop.t0.Add(-time.Hour), loop.now().Add(time.Hour))
		if err != nil {
			t.Fatal(err)
		}
		requests += sums.Requests
		for key, n := range sums.Asked {
			if catalogue.IsPreferenceSet(key) {
				preferring += n
			}
		}
	}
	t.Logf("%d of %d requests carried preferences", preferring, requests)
	if requests == 0 || preferring*4 < requests || preferring*2 > requests {
		t.Errorf("%d of %d requests carried preferences: want about a third", preferring, requests)
	}
}

// TestTheProjectionHoldsForProjectsThatCacheDifferently: the same loop
// with a second API project whose customers send large prompts no one sent
// before, beside the first one's coding agents (a long prefix every turn
// repeats) and large prompts drawn from a thousand. The gateway learns
// cache-hit rates per project: the first learns the carriers' caches, the
// second none, and their large prompts are elected on different rates. The
// gateway reports each project's minutes and names the project in its
// demand; the projection, which learns each project's rates as routing did
// and elects each project's part on them, keeps every listing within 3
// points.
func TestTheProjectionHoldsForProjectsThatCacheDifferently(t *testing.T) {
	loop := startRoutingLoopWith(t, loopOptions{Database: store.SQLite, Start: 20*time.Hour + 10*time.Minute, Fresh: 400})
	projectionAgrees(t, loop)
	// The run is the workload it says: both projects' minutes reported,
	// the second's input cached a third as much as the first's or less.
	fresh, loopLabel := loop.gw.ProjectLabel("loop-fresh"), loop.gw.ProjectLabel("loop")
	for _, m := range []string{"gpt-oss-120b", "deepseek-v3.2"} {
		hours, err := loop.st.ProjectHours(context.Background(), []string{m}, loop.t0.Add(-time.Hour), loop.now().Add(time.Hour))
		if err != nil {
			t.Fatal(err)
		}
		input, cached := map[string]int64{}, map[string]int64{}
		for _, pm := range hours[m] {
			input[pm.Project] += pm.InputTokens
			cached[pm.Project] += pm.CachedInputTokens
		}
		t.Logf("%s: the first project's input %.0f %% cached, the second's %.0f %%", m, 100*float64(cached[loopLabel])/float64(max(input[loopLabel], 1)),
			100*float64(cached[fresh])/float64(max(input[fresh], 1)))
		// (A fresh prompt is cached only when it is sent twice: a caller's
		// retry after a timeout.)
		if input[fresh] == 0 || input[loopLabel] == 0 || 3*float64(cached[fresh])/float64(input[fresh]) > float64(cached[loopLabel])/float64(input[loopLabel]) {
			t.Errorf("%s: the projects' minutes say %d of %d input tokens cached for the fresh prompts and %d of %d for the rest: not the workload the test needs",
				m, cached[fresh], input[fresh], cached[loopLabel], input[loopLabel])
		}
	}
}

// TestTheProjectionHoldsForAProjectThatDeclaresItsRates: the same loop
// with a project that declares a cache-hit rate of 95 % in the gateway's
// configuration (seed 001's Enterprise override) and sends large prompts
// never sent before, and orbit's fare whose cached price pays only at such
// a rate. Routing elects the project's requests on the declared rate,
// before anything it learns (none of them hits a cache): they go to orbit,
// which the rates learned of the project do not say (elected on them, the
// projection gave fathom 18 points too many). The gateway reports the
// declared rate with the project's minutes, and the projection, which
// elects the project's part on it, keeps every listing within 3 points.
func TestTheProjectionHoldsForAProjectThatDeclaresItsRates(t *testing.T) {
	loop := startRoutingLoopWith(t, loopOptions{Database: store.Postgres, Start: 20*time.Hour + 10*time.Minute, Declared: 400})
	projectionAgrees(t, loop)
	declared := loop.gw.ProjectLabel("loop-declared")
	for _, m := range []string{"gpt-oss-120b", "deepseek-v3.2"} {
		hours, err := loop.st.ProjectHours(context.Background(), []string{m}, loop.t0.Add(-time.Hour), loop.now().Add(time.Hour))
		if err != nil {
			t.Fatal(err)
		}
		rows := 0
		for _, pm := range hours[m] {
			if pm.Project != declared {
				continue
			}
			t.Logf("%s: the declaring project on listing %d: %d answers, %d of %d input tokens cached", m, pm.ListingID, pm.Answers,
				pm.CachedInputTokens, pm.InputTokens)
			rows++
			if pm.CacheHitRate == nil || *pm.CacheHitRate != declaredHitRate {
				t.Errorf("%s: the declaring project's hour on listing %d keeps %v, want the declared %v", m, pm.ListingID, pm.CacheHitRate, declaredHitRate)
			}
		}
		if rows == 0 {
			t.Errorf("%s: no hour of the declaring project reported", m)
		}
	}
}

// TestTheProjectionHoldsWhereProjectsLearnApart: the loop with the
// second project's fresh large prompts and orbit's fare whose cached price
// pays only at a high hit rate, driven twice. In the second drive routing
// elects on what it learned in the first (it works a project's rates out
// again each minute): the first project learned orbit's cache from its
// coding agents' sessions and its large prompts follow, the second learned
// no hit anywhere and its large prompts stay on fathom, where the rates
// learned of the whole model would send them to orbit too. The
// projection, electing each project on its own learned rates, keeps every
// listing within 3 points.
func TestTheProjectionHoldsWhereProjectsLearnApart(t *testing.T) {
	loop := startRoutingLoopWith(t, loopOptions{Database: store.SQLite, Start: 20*time.Hour + 10*time.Minute, Fresh: 400, CachePrice: true, Drives: 2})
	projectionAgrees(t, loop)
	// The run is the workload it says: the first project's input on
	// orbit mostly cached, the second's nowhere.
	hours, err := loop.st.ProjectHours(context.Background(), []string{"gpt-oss-120b"}, loop.t0.Add(-time.Hour), loop.now().Add(time.Hour))
	if err != nil {
		t.Fatal(err)
	}
	orbit := listingOf(t, loop.st, "orbit", "gpt-oss-120b")
	fresh, first := loop.gw.ProjectLabel("loop-fresh"), loop.gw.ProjectLabel("loop")
	for _, pm := range hours["gpt-oss-120b"] {
		t.Logf("project %s on listing %d: %d answers, %d of %d input tokens cached", pm.Project, pm.ListingID, pm.Answers, pm.CachedInputTokens, pm.InputTokens)
		switch {
		case pm.Project == fresh && pm.CachedInputTokens*10 > pm.InputTokens:
			t.Errorf("the fresh project's input on listing %d is %d of %d cached: not the workload the test needs", pm.ListingID, pm.CachedInputTokens, pm.InputTokens)
		case pm.Project == first && pm.ListingID == orbit.ID && pm.CachedInputTokens*2 < pm.InputTokens:
			t.Errorf("the first project's input on orbit is %d of %d cached: not the workload the test needs", pm.CachedInputTokens, pm.InputTokens)
		}
	}
}

// declaredHitRate is the cache-hit rate the loop's declaring project
// declares (loopOptions.Declared).
const declaredHitRate = 0.95

// projectionAgrees drives two models through the loop and checks every
// listing's projected share against the share served.
func projectionAgrees(t *testing.T, loop *routingLoop) {
	// Two models with several listings each, one with a different holder
	// per shape, and no rate cap the run's pace reaches (a cap's spill is
	// named, not projected); a few hundred sessions each, so the 1 % of
	// session openers that explore (and keep their whole session where
	// they landed) stay a small part of a listing's share.
	models := []string{"gpt-oss-120b", "deepseek-v3.2"}
	listings := slices.DeleteFunc(loop.listings(), func(l catalogue.Listing) bool { return !slices.Contains(models, l.Model.Slug) })
	for seed := range uint64(loop.drives) {
		loop.drive(models, 600, 1+seed)
		loop.report()
	}
	if loop.now().Hour() != loop.t0.Hour() {
		t.Fatalf("the run took %v, past its hour: the projection of one hour no longer describes it", time.Since(loop.began))
	}

	c := (&testPortal{t: t, srv: loop.portal, store: loop.st, server: loop.server}).client()
	c.login("admin@airside.example")
	number := func(page, id string) float64 {
		m := regexp.MustCompile(`data-testid="` + id + `">([+-]?[0-9.]+)`).FindStringSubmatch(page)
		if m == nil {
			t.Fatalf("no %s on the page:\n%.4000s", id, page)
		}
		v, _ := strconv.ParseFloat(m[1], 64)
		return v
	}
	served, projected, now := map[string]float64{}, map[string]float64{}, map[string]float64{}
	overview := c.get("/traffic?carrier=orbit&period=hour")
	wantStatus(t, "orbit's traffic", overview, http.StatusOK)
	operations := map[string]string{}
	for _, m := range models {
		res := c.get("/operations?model=" + m)
		wantStatus(t, "operations", res, http.StatusOK)
		operations[m] = res.body
	}
	for _, l := range listings {
		res := c.get(fmt.Sprintf("/traffic/listings/%d?period=hour", l.ID))
		wantStatus(t, "listing traffic", res, http.StatusOK)
		gap := regexp.MustCompile(`(?s)data-testid="share-gap".*?</section>`).FindString(res.body)
		p, m, points := number(gap, "gap-projected"), number(gap, "gap-measured"), number(gap, "gap-points")
		causes := regexp.MustCompile(`data-testid="cause-([a-z-]+)"><td>[^<]+</td><td class="num">([+-][0-9.]+) points`).FindAllStringSubmatch(gap, -1)
		t.Logf("%s: projected %.1f %%, served %.1f %%, %+.1f points; causes %v", preview.CandidateID(&l), p, m, points, causes)
		served[l.Model.Slug] += m
		projected[l.Model.Slug] += p
		// The carrier's overview sets the same projection beside each share.
		if l.CarrierSlug == "orbit" {
			row := regexp.MustCompile(fmt.Sprintf(`(?s)href="/traffic/listings/%d\?period=hour".*?data-testid="projected-share">([0-9.]+) %%`, l.ID)).FindStringSubmatch(overview.body)
			if row == nil {
				t.Errorf("%s: orbit's traffic page has no projected share for it", preview.CandidateID(&l))
			} else if v, _ := strconv.ParseFloat(row[1], 64); math.Abs(v-p) > 0.05 {
				t.Errorf("%s: orbit's traffic page projects %v %%, the listing's page %v %%", preview.CandidateID(&l), v, p)
			}
		}
		// The sentence on what is in force now carries on from the run's
		// hour by the same rule (the holders the hour left, with the health
		// and learned rates the run measured) and shares out the model too.
		if m := regexp.MustCompile(`data-testid="projected">[^<]*<strong>([0-9.]+) %`).FindStringSubmatch(res.body); m == nil {
			t.Errorf("%s: no projection of now on its traffic page", preview.CandidateID(&l))
		} else {
			v, _ := strconv.ParseFloat(m[1], 64)
			now[l.Model.Slug] += v
			t.Logf("%s: projected now %.1f %%", preview.CandidateID(&l), v)
		}
		// So does operations, over the last 24 hours (the run's one hour).
		row := regexp.MustCompile(fmt.Sprintf(`(?s)href="/listings/%d".*?data-testid="ops-share">([0-9.]+) %%.*?data-testid="ops-projected">([0-9.]+) %%`, l.ID)).FindStringSubmatch(operations[l.Model.Slug])
		if row == nil {
			t.Errorf("%s: operations has no served and projected share for it", preview.CandidateID(&l))
		} else if v, _ := strconv.ParseFloat(row[2], 64); math.Abs(v-p) > 0.05 {
			t.Errorf("%s: operations projects %v %%, the listing's page %v %%", preview.CandidateID(&l), v, p)
		} else if v, _ := strconv.ParseFloat(row[1], 64); math.Abs(v-m) > 0.05 {
			t.Errorf("%s: operations shows %v %% served, the listing's page %v %%", preview.CandidateID(&l), v, m)
		}
		if math.Abs(points) > 3 {
			t.Errorf("%s: projected %.1f %% of the model's requests, the gateway routed it %.1f %%", preview.CandidateID(&l), p, m)
		}
		// The run is the hour under way: its "so far" figures are the
		// gap's, one number under both labels.
		if hour := regexp.MustCompile(`data-testid="this-hour-served">([0-9.]+) %.*?data-testid="this-hour-projected">([0-9.]+) %`).FindStringSubmatch(res.body); hour == nil {
			t.Errorf("%s: no hour under way on its traffic page", preview.CandidateID(&l))
		} else if s, _ := strconv.ParseFloat(hour[1], 64); math.Abs(s-m) > 0.05 {
			t.Errorf("%s: this hour so far served %v %%, the gap %v %%", preview.CandidateID(&l), s, m)
		} else if pr, _ := strconv.ParseFloat(hour[2], 64); math.Abs(pr-p) > 0.05 {
			t.Errorf("%s: this hour so far projected %v %%, the gap %v %%", preview.CandidateID(&l), pr, p)
		}
		if math.Abs(points) > 1 && len(causes) == 0 {
			t.Errorf("%s: a gap of %+.1f points and no cause named", preview.CandidateID(&l), points)
		}
	}
	// The pages share out each whole model, both ways (each figure rounded
	// to a tenth).
	for _, m := range models {
		if math.Abs(served[m]-100) > 0.5 || math.Abs(projected[m]-100) > 0.5 || math.Abs(now[m]-100) > 0.5 {
			t.Errorf("%s: the listings' pages add up to %.1f %% served, %.1f %% projected and %.1f %% projected now, want 100 each", m, served[m], projected[m], now[m])
		}
	}
	if t.Failed() {
		loop.fleetMu.Lock()
		defer loop.fleetMu.Unlock()
		t.Logf("what the replicas' shared state said of Redis during the run: %q", loop.fleetSaid)
	}
}

// waitUntil waits for ok, with a deadline a busy machine meets.
func waitUntil(t *testing.T, what string, ok func() bool) {
	t.Helper()
	deadline := time.Now().Add(60 * time.Second)
	for !ok() {
		if time.Now().After(deadline) {
			t.Fatalf("timed out waiting for %s", what)
		}
		time.Sleep(20 * time.Millisecond)
	}
}

// routingLoop is the whole loop on loopback, in this process: the real
// portal on the demo catalogue with its fake carriers' endpoints, the
// reference gateway reading the portal's public API, and a seeded driver.
// One clock serves all three: it starts at the current hour's tenth minute
// and runs with real time (plus the minutes report adds), so a run stays
// in one hour. The gateway reports only when asked: health does not move
// under it while it routes, as the projection of one hour assumes.
type routingLoop struct {
	t              *testing.T
	st             *store.Store
	server         *web.Server
	portal, routes *httptest.Server
	gw             *gateway.Gateway // the first replica
	replicas       []*gateway.Gateway
	reporters      []*gateway.Reporter
	began, t0      time.Time
	skew           atomic.Int64 // nanoseconds added to the clock
	// shareArrivals are one-shot customers of a project on the share
	// policy that drive sends beside the others (loopOptions.Share), and
	// preferenceArrivals those of the projects with preferences, and
	// freshArrivals those of the project whose large prompts are never
	// cached, and declaredArrivals those of the project that declares its
	// cache-hit rate.
	shareArrivals, preferenceArrivals, freshArrivals, declaredArrivals int
	// drives is how many times projectionAgrees drives (loopOptions).
	drives int
	// fleetSaid is what the replicas' shared state said of Redis during
	// the run (an outage or a round trip past its timeout makes a replica
	// route on its own incumbents and sessions for a while, which no
	// report carries): printed when the projection is off.
	fleetMu   sync.Mutex
	fleetSaid []string
}

func (l *routingLoop) now() time.Time {
	return l.t0.Add(time.Since(l.began) + time.Duration(l.skew.Load()))
}

func startRoutingLoop(t *testing.T) *routingLoop {
	t.Helper()
	return startRoutingLoopWith(t, loopOptions{Database: store.SQLite, Start: 20*time.Hour + 10*time.Minute})
}

// loopOptions set a routing loop up.
type loopOptions struct {
	Database store.Dialect
	// Start is the time of day (UTC) the run's clock starts at.
	Start time.Duration
	// HealthWait is how long the gateway's change-feed poll is held, so
	// also how soon it reads moved health (0: the gateway's default, which
	// a run within one report never meets).
	HealthWait time.Duration
	// TokenPace speeds the carriers' streaming up (demo.CarrierOptions).
	TokenPace float64
	// Replicas is how many gateways share the customers' requests (0 or
	// 1: one), in turn, sharing their state in Redis.
	Replicas int
	// Share adds a project on the share policy (election.md sec. 8) and
	// this many one-shot customers of it to every drive.
	Share int
	// Preferences adds three projects whose requests carry preferences
	// (election.md sec. 7: zero data retention, residency in Germany, an
	// order), and this many one-shot customers of them to every drive.
	Preferences int
	// Fresh adds a project whose customers send large prompts never sent
	// before (no carrier's cache holds them, so routing learns no cache
	// hit of that project), and this many of them to every drive.
	Fresh int
	// Declared adds a project that declares a cache-hit rate
	// (declaredHitRate) in the gateway's configuration (seed 001's
	// Enterprise override) and sends large prompts never sent before, and
	// this many of them to every drive: routing elects them on the
	// declared rate, which nothing it learns of them bears out.
	Declared int
	// CachePrice has orbit file a gpt-oss-120b fare whose cached price
	// pays only at a high hit rate (Declared sets it too).
	CachePrice bool
	// Drives is how many times projectionAgrees drives the customers,
	// reporting after each (the clock moves 3 minutes past each report,
	// so routing works its learned rates out again); 0 is once.
	Drives int
}

func startRoutingLoopWith(t *testing.T, o loopOptions) *routingLoop {
	t.Helper()
	ctx, cancel := context.WithCancel(context.Background())
	t.Cleanup(cancel)
	l := &routingLoop{t: t, st: storetest.Open(t, o.Database), began: time.Now(), shareArrivals: o.Share, preferenceArrivals: o.Preferences,
		freshArrivals: o.Fresh, declaredArrivals: o.Declared, drives: max(o.Drives, 1)}
	// The run's clock starts on the last Wednesday at o.Start, whatever
	// the hour it runs at: the driver's daily cycle (its pace at 02:00 is a
	// sixth of its pace at 15:00), the demo's off-peak fare and its weekend
	// prices, and the carriers' slow afternoons make a run's traffic depend
	// on the hour and the day, and the test must not (it failed by 0.3
	// points when run at night). Carriers, gateway and portal share it.
	day := l.began.UTC().Truncate(24 * time.Hour)
	for day.Weekday() != time.Wednesday || day.Add(o.Start).After(l.began) {
		day = day.Add(-24 * time.Hour)
	}
	l.t0 = day.Add(o.Start)
	l.st.Now = func() time.Time { return l.t0.Add(-2 * time.Hour) } // the demo's fares are in force before the hour
	if _, err := demo.Seed(ctx, l.st); err != nil {
		t.Fatal(err)
	}
	l.st.Now = l.now
	box, err := secret.New([]byte(strings.Repeat("k", secret.KeySize)))
	if err != nil {
		t.Fatal(err)
	}
	quiet := slog.New(slog.NewTextHandler(io.Discard, nil))
	// The follower's warnings (a failed read of the catalogue, the wait
	// before the next) go to the test's log, shown when it fails: what
	// kept a gateway from a revision is then on record.
	following := slog.New(slog.NewTextHandler(testLog{t}, &slog.HandlerOptions{Level: slog.LevelWarn}))
	l.server = wire.Portal(l.st, wire.Config{Log: quiet, Secrets: box})
	withoutSafeguards(l.server)
	// The loop's gateways follow the catalogue with a long poll of
	// HealthWait (200 ms, to keep the test short) on one token: with two
	// replicas that is about the catalogue quota of 1,200 a minute, and a
	// 429 held a replica on a stale table for up to 30 s (seen in CI). A
	// gateway at production pace is far below it; the quota is lifted
	// here, as the load tool lifts it.
	l.server.APILimits = nil
	l.portal = httptest.NewServer(l.server.Handler())
	t.Cleanup(l.portal.Close)
	if _, err := demo.SeedEndpoints(ctx, l.st, box, demo.StartCarriersWith(ctx, t.Logf, demo.CarrierOptions{Now: l.now, TokenPace: o.TokenPace})); err != nil {
		t.Fatal(err)
	}
	// Coding agents send tools and JSON customers ask for JSON: verified
	// for every listing, so no request narrows a ballot.
	reviewer, err := l.st.FindUserByEmail(ctx, "reviewer@airside.example")
	if err != nil {
		t.Fatal(err)
	}
	for _, listing := range l.listings() {
		for _, capability := range []string{"tools", "json_output"} {
			if err := l.st.SetCapabilityCheck(ctx, reviewer.ID, listing.ID, capability, "verified", "the loop test's customers need it"); err != nil {
				t.Fatal(err)
			}
		}
	}
	token := apiToken(t, l.st, apitoken.ScopeCatalogueRead, apitoken.ScopeCredentialsRead, apitoken.ScopeMetricsWrite)
	api, err := gatewayclient.NewClientWithResponses(l.portal.URL+"/api/v1", gatewayclient.WithRequestEditorFn(func(_ context.Context, req *http.Request) error {
		req.Header.Set("Authorization", "Bearer "+token)
		return nil
	}))
	if err != nil {
		t.Fatal(err)
	}
	states := []*fleet.State{nil}
	if o.Replicas > 1 {
		states = fleettest.States(t, fleettest.Redis(t), o.Replicas, true)
		for i, st := range states {
			st.Log = func(msg string, err error) {
				l.fleetMu.Lock()
				defer l.fleetMu.Unlock()
				l.fleetSaid = append(l.fleetSaid, fmt.Sprintf("%s replica %d: %s (%v)", time.Now().Format("15:04:05.000"), i, msg, err))
			}
		}
	}
	var handlers []http.Handler
	for i, state := range states {
		rec := gateway.NewRecorder()
		projects := []gateway.Project{{Name: "loop", APIKey: "sk-loop", Organisation: "loop"}}
		if o.Share > 0 {
			projects = append(projects, gateway.Project{Name: "loop-share", APIKey: "sk-loop-share", Organisation: "loop", Policy: "share"})
		}
		if o.Preferences > 0 {
			// Fathom alone is zero data retention, three carriers serve
			// from Germany, and halcyon is asked for first (demo.go).
			yes := true
			projects = append(projects,
				gateway.Project{Name: "loop-zdr", APIKey: "sk-loop-zdr", Organisation: "loop", Provider: &election.ProviderInput{ZDR: &yes}},
				gateway.Project{Name: "loop-de", APIKey: "sk-loop-de", Organisation: "loop", Regions: []string{"DE"}},
				gateway.Project{Name: "loop-order", APIKey: "sk-loop-order", Organisation: "loop", Provider: &election.ProviderInput{Order: []string{"halcyon"}}})
		}
		if o.Fresh > 0 {
			projects = append(projects, gateway.Project{Name: "loop-fresh", APIKey: "sk-loop-fresh", Organisation: "loop"})
		}
		if o.Declared > 0 {
			declared := declaredHitRate
			projects = append(projects, gateway.Project{Name: "loop-declared", APIKey: "sk-loop-declared", Organisation: "loop", CacheHitRate: &declared})
		}
		gw := &gateway.Gateway{Config: &gateway.Config{Projects: projects},
			Follower: &gateway.Follower{API: api, Log: following, Wait: o.HealthWait}, Creds: &gateway.Credentials{API: api}, Recorder: rec, HTTP: &http.Client{},
			Now: l.now, Rand: rand.New(rand.NewPCG(7, uint64(1+i))), Log: quiet}
		source := "loop"
		if state != nil {
			gw.Fleet = state
			source = fmt.Sprintf("loop-%d", i+1)
		}
		followed := make(chan struct{})
		go func() { gw.Follower.Run(ctx); close(followed) }()
		t.Cleanup(func() { cancel(); <-followed })
		if state != nil {
			// As airside gateway does: each replica publishes the hours
			// it learned from to the fleet, at the command's pace, and
			// learns from every replica's (without it, a replica reading
			// the fleet's hours would learn nothing at all).
			shared := make(chan struct{})
			go func() { gw.ShareLearned(ctx, source, 0); close(shared) }()
			t.Cleanup(func() { cancel(); <-shared })
		}
		l.replicas = append(l.replicas, gw)
		l.reporters = append(l.reporters, &gateway.Reporter{API: api, Recorder: rec, Log: quiet, Now: l.now, Source: source, ProjectLabel: gw.ProjectLabel,
			DeclaredRates: gw.DeclaredRates})
		handlers = append(handlers, gw.Handler())
	}
	l.gw = l.replicas[0]
	if o.Declared > 0 || o.CachePrice {
		// Orbit files a gpt-oss-120b fare whose cached price pays only at
		// a high hit rate: at the declared rate (or what routing learns
		// of a coding agent's sessions) its large prompts cost a fifth of
		// fathom's, at none twice as much. Routing sends the declaring
		// project's large prompts there, where nothing it learns of the
		// project (none of its prompts hits a cache) would.
		i := slices.IndexFunc(l.listings(), func(c catalogue.Listing) bool { return c.CarrierSlug == "orbit" && c.Model.Slug == "gpt-oss-120b" })
		portal := &testPortal{t: t, srv: l.portal, store: l.st, server: l.server}
		fileAndApprove(t, portal, l.listings()[i], "admin@orbit.example", "A cache that pays for prompts sent again.", func(form url.Values) {
			form.Set("input", "0.12")
			form.Set("cached_input", "0.0001")
			form.Set("output", "0.25")
			form.Set("landing_fee", "20")
			form.Set("discount", "0")
		})
	}
	var turn atomic.Int64
	l.routes = httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		handlers[int(turn.Add(1))%len(handlers)].ServeHTTP(w, r) // a load balancer, in turn
	}))
	t.Cleanup(l.routes.Close)
	l.caughtUp()
	return l
}

// listings are every listing of the demo catalogue.
func (l *routingLoop) listings() []catalogue.Listing {
	l.t.Helper()
	ls, err := l.st.FindListings(context.Background(), catalogue.ListingFilter{})
	if err != nil {
		l.t.Fatal(err)
	}
	return ls
}

// caughtUp waits for the gateway to route on the portal's current
// catalogue revision.
func (l *routingLoop) caughtUp() {
	l.t.Helper()
	snap, err := l.server.Routing.Current(context.Background())
	if err != nil {
		l.t.Fatal(err)
	}
	for _, gw := range l.replicas {
		waitUntil(l.t, "the gateway to read the catalogue's revision", func() bool {
			cur := gw.Follower.Current()
			return cur != nil && cur.Revision >= snap.Revision
		})
	}
}

// drive sends arrivals of every kind of customer for the models, seeded,
// and waits for them.
func (l *routingLoop) drive(models []string, arrivals int, seed uint64) {
	l.t.Helper()
	var stats, shared, preferring, fresh, declared trafficdriver.Stats
	done := make(chan error, 4)
	// The share project's customers, and those of the projects with
	// preferences, arrive beside the others, all one-shots: a coding
	// session stays where its opener was drawn, so a few sessions would
	// make a listing's share a coin's toss.
	oneShots := func(keys, kinds []string, arrivals int, rate float64, seed uint64, stats *trafficdriver.Stats) {
		if arrivals == 0 {
			done <- nil
			return
		}
		done <- trafficdriver.Run(context.Background(), trafficdriver.Config{GatewayURL: l.routes.URL, APIKeys: keys, Models: models,
			Rate: rate, MaxArrivals: arrivals, MaxInFlight: 32, Kinds: kinds,
			Seed: seed, Now: l.now, Log: slog.New(slog.NewTextHandler(io.Discard, nil))}, stats)
	}
	plain := []string{"chat", "large", "json"}
	go oneShots([]string{"sk-loop-share"}, plain, l.shareArrivals, 15, seed+1000, &shared)
	go oneShots([]string{"sk-loop-zdr", "sk-loop-de", "sk-loop-order"}, plain, l.preferenceArrivals, 30, seed+2000, &preferring)
	go oneShots([]string{"sk-loop-fresh"}, []string{"fresh"}, l.freshArrivals, 10, seed+3000, &fresh)
	go oneShots([]string{"sk-loop-declared"}, []string{"fresh"}, l.declaredArrivals, 10, seed+4000, &declared)
	if err := trafficdriver.Run(context.Background(), trafficdriver.Config{GatewayURL: l.routes.URL, APIKeys: []string{"sk-loop"}, Models: models,
		Rate: 30, MaxArrivals: arrivals, MaxInFlight: 64, TurnPause: 100 * time.Millisecond,
		Seed: seed, Now: l.now, Log: slog.New(slog.NewTextHandler(io.Discard, nil))}, &stats); err != nil {
		l.t.Fatal(err)
	}
	for range 4 {
		if err := <-done; err != nil {
			l.t.Fatal(err)
		}
	}
	for _, s := range []*trafficdriver.Stats{&stats, &shared, &preferring, &fresh, &declared} {
		if s.OK.Load() < s.Sent.Load()*2/3 || s == &stats && s.OK.Load() < int64(arrivals)*2/3 {
			l.t.Fatalf("the driver's requests: %d sent, %d answered, %d failed, %d skipped", s.Sent.Load(), s.OK.Load(), s.Failed.Load(), s.Skipped.Load())
		}
	}
}

// report posts what the gateway measured, the minute under way included,
// and moves the clock past every minute posted: a later request lands in
// a minute of its own (the portal keeps the first report of a minute).
func (l *routingLoop) report() {
	l.t.Helper()
	for _, r := range l.reporters {
		if err := r.Report(context.Background(), l.now().Add(2*time.Minute)); err != nil {
			l.t.Fatalf("the gateway's report: %v", err)
		}
	}
	l.skew.Add(int64(3 * time.Minute))
}

// testLog writes a logger's lines to the test's log.
type testLog struct{ t testing.TB }

func (w testLog) Write(p []byte) (int, error) {
	w.t.Logf("%s", bytes.TrimRight(p, "\n"))
	return len(p), nil
}
