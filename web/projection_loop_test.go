package web_test

import (
	"context"
	"fmt"
	"io"
	"log/slog"
	"math"
	"math/rand/v2"
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
	"github.com/airside/airside/internal/gateway"
	"github.com/airside/airside/internal/gatewayclient"
	"github.com/airside/airside/internal/preview"
	"github.com/airside/airside/internal/secret"
	"github.com/airside/airside/internal/store"
	"github.com/airside/airside/internal/store/storetest"
	"github.com/airside/airside/internal/trafficdriver"
)

// TestTheProjectionAgreesWithWhatTheGatewayRouted closes the loop the
// carrier reads on its traffic page: the real portal (demo catalogue, its
// fake carriers), the reference gateway reading the public API, and a
// seeded driver sending a bounded number of requests through it. Then, for
// every listing of the model, the share the portal projects from the
// fares, health and workload mix in force (the preview's rules, hour by
// hour) is within 3 points of the share the gateway measured and reported,
// and every part of a gap of more than a point is named.
//
// The clock of the portal, the gateway and the driver starts at the hour's
// tenth minute and runs with real time, so the run stays in one hour
// wherever the wall clock is. The gateway reports once, at the end: health
// does not move under it during the run, as the projection of one hour
// assumes. Every listing of the models driven is checked.
//
// The driver sends the kinds of customer whose requests the demand series
// describes as the projection's shapes: coding agents (tool calls, verified
// for every listing here) and large prompts. Left out, and named in the
// README as what the projection cannot see yet: image requests (they
// narrow the ballot to listings with vision, and demand does not record
// what requests require); streamed small chats sent as the general
// workload (demand does not record streaming, which moves the election's
// weights, so they read as the non-streamed small shape); and small
// one-shots in the same minutes as large prompts (demand reports a
// workload's minute as one average prompt, so a minute of both reads as
// all small or all large).
func TestTheProjectionAgreesWithWhatTheGatewayRouted(t *testing.T) {
	ctx, cancel := context.WithCancel(context.Background())
	defer cancel()
	st := storetest.Open(t, store.SQLite)
	began := time.Now()
	t0 := began.UTC().Truncate(time.Hour).Add(10 * time.Minute)
	st.Now = func() time.Time { return t0.Add(-2 * time.Hour) } // the demo's fares are in force before the hour
	if _, err := demo.Seed(ctx, st); err != nil {
		t.Fatal(err)
	}
	now := func() time.Time { return t0.Add(time.Since(began)) }
	st.Now = now
	box, err := secret.New([]byte(strings.Repeat("k", secret.KeySize)))
	if err != nil {
		t.Fatal(err)
	}
	quiet := slog.New(slog.NewTextHandler(io.Discard, nil))
	server := wire.Portal(st, wire.Config{Log: quiet, Secrets: box})
	portal := httptest.NewServer(server.Handler())
	defer portal.Close()
	if _, err := demo.SeedEndpoints(ctx, st, box, demo.StartCarriers(ctx, t.Logf)); err != nil {
		t.Fatal(err)
	}
	listings, err := st.FindListings(ctx, catalogue.ListingFilter{})
	if err != nil {
		t.Fatal(err)
	}
	// Two models with several listings each, one with a different holder
	// per shape, and no rate cap the run's pace reaches (a cap's spill is
	// named, not projected); a few hundred sessions each, so the 1 % of
	// session openers that explore (and keep their whole session where
	// they landed) stay a small part of a listing's share.
	models := []string{"gpt-oss-120b", "deepseek-v3.2"}
	listings = slices.DeleteFunc(listings, func(l catalogue.Listing) bool { return !slices.Contains(models, l.Model.Slug) })
	reviewer, err := st.FindUserByEmail(ctx, "reviewer@airside.example")
	if err != nil {
		t.Fatal(err)
	}
	for _, l := range listings {
		for _, capability := range []string{"tools", "json_output"} {
			if err := st.SetCapabilityCheck(ctx, reviewer.ID, l.ID, capability, "verified", "the loop test's customers need it"); err != nil {
				t.Fatal(err)
			}
		}
	}

	token := apiToken(t, st, apitoken.ScopeCatalogueRead, apitoken.ScopeCredentialsRead, apitoken.ScopeMetricsWrite)
	api, err := gatewayclient.NewClientWithResponses(portal.URL+"/api/v1", gatewayclient.WithRequestEditorFn(func(_ context.Context, req *http.Request) error {
		req.Header.Set("Authorization", "Bearer "+token)
		return nil
	}))
	if err != nil {
		t.Fatal(err)
	}
	rec := gateway.NewRecorder()
	gw := &gateway.Gateway{Config: &gateway.Config{Projects: []gateway.Project{{Name: "loop", APIKey: "sk-loop", Organisation: "loop"}}},
		Follower: &gateway.Follower{API: api, Log: quiet}, Creds: &gateway.Credentials{API: api}, Recorder: rec, HTTP: &http.Client{},
		Now: now, Rand: rand.New(rand.NewPCG(7, 1)), Log: quiet}
	following, stopFollowing := context.WithCancel(ctx)
	followed := make(chan struct{})
	go func() { gw.Follower.Run(following); close(followed) }()
	defer func() { stopFollowing(); <-followed }()
	routes := httptest.NewServer(gw.Handler())
	defer routes.Close()
	waitUntil(t, "the gateway to read the catalogue", func() bool {
		res, err := http.Get(routes.URL + "/healthz")
		if err != nil {
			return false
		}
		res.Body.Close()
		return res.StatusCode == http.StatusOK
	})

	var stats trafficdriver.Stats
	if err := trafficdriver.Run(ctx, trafficdriver.Config{GatewayURL: routes.URL, APIKeys: []string{"sk-loop"}, Models: models,
		Kinds: []string{"coding", "large"}, Rate: 30, MaxArrivals: 600, MaxInFlight: 64, TurnPause: 100 * time.Millisecond,
		Seed: 1, Now: now, Log: quiet}, &stats); err != nil {
		t.Fatal(err)
	}
	if stats.OK.Load() < 400 {
		t.Fatalf("the driver's requests: %d sent, %d answered, %d failed, %d skipped", stats.Sent.Load(), stats.OK.Load(), stats.Failed.Load(), stats.Skipped.Load())
	}
	reporter := &gateway.Reporter{API: api, Recorder: rec, Log: quiet, Now: now, Source: "loop"}
	if err := reporter.Report(ctx, now().Add(2*time.Minute)); err != nil {
		t.Fatalf("the gateway's report: %v", err)
	}
	if now().Hour() != t0.Hour() {
		t.Fatalf("the run took %v, past its hour: the projection of one hour no longer describes it", time.Since(began))
	}

	c := (&testPortal{t: t, srv: portal, store: st, server: server}).client()
	c.login("admin@airside.example")
	number := func(page, id string) float64 {
		m := regexp.MustCompile(`data-testid="` + id + `">([+-]?[0-9.]+)`).FindStringSubmatch(page)
		if m == nil {
			t.Fatalf("no %s on the page:\n%.4000s", id, page)
		}
		v, _ := strconv.ParseFloat(m[1], 64)
		return v
	}
	served, projected := map[string]float64{}, map[string]float64{}
	for _, l := range listings {
		res := c.get(fmt.Sprintf("/traffic/listings/%d?period=hour", l.ID))
		wantStatus(t, "listing traffic", res, http.StatusOK)
		gap := regexp.MustCompile(`(?s)data-testid="share-gap".*?</section>`).FindString(res.body)
		p, m, points := number(gap, "gap-projected"), number(gap, "gap-measured"), number(gap, "gap-points")
		causes := regexp.MustCompile(`data-testid="cause-([a-z-]+)"><td>[^<]+</td><td class="num">([+-][0-9.]+) points`).FindAllStringSubmatch(gap, -1)
		t.Logf("%s: projected %.1f %%, served %.1f %%, %+.1f points; causes %v", preview.CandidateID(&l), p, m, points, causes)
		served[l.Model.Slug] += m
		projected[l.Model.Slug] += p
		if math.Abs(points) > 3 {
			t.Errorf("%s: projected %.1f %% of the model's requests, the gateway routed it %.1f %%", preview.CandidateID(&l), p, m)
		}
		if math.Abs(points) > 1 && len(causes) == 0 {
			t.Errorf("%s: a gap of %+.1f points and no cause named", preview.CandidateID(&l), points)
		}
	}
	// The pages share out each whole model, both ways (each figure rounded
	// to a tenth).
	for _, m := range models {
		if math.Abs(served[m]-100) > 0.5 || math.Abs(projected[m]-100) > 0.5 {
			t.Errorf("%s: the listings' pages add up to %.1f %% served and %.1f %% projected, want 100 each", m, served[m], projected[m])
		}
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
