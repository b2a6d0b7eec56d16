// Command airside-load measures the gateway-facing API under load: it builds
// a catalogue of 50 models x 10 listings in a fresh database, serves it on a
// loopback port, and drives GET /api/v1/catalogue (with ETags, as gateways
// poll) and POST /api/v1/elect at a fixed concurrency for a bounded time,
// then prints throughput and p50/p99 latency per endpoint.
//
// It only ever talks to the server it started on 127.0.0.1.
package main

import (
	"context"
	"flag"
	"fmt"
	"io"
	"log/slog"
	"math/rand/v2"
	"net"
	"net/http"
	"os"
	"path/filepath"
	"slices"
	"sync"
	"time"

	"github.com/airside/airside/internal/account"
	"github.com/airside/airside/internal/apitoken"
	"github.com/airside/airside/internal/gatewayclient"

	"github.com/airside/airside/internal/catalogue"
	"github.com/airside/airside/internal/election"
	"github.com/airside/airside/internal/fare"
	"github.com/airside/airside/internal/money"
	"github.com/airside/airside/internal/store"
	"github.com/airside/airside/web"
)

func main() {
	duration := flag.Duration("duration", 10*time.Second, "how long to drive load (at most 10m)")
	concurrency := flag.Int("concurrency", 32, "concurrent clients")
	dbURL := flag.String("database", "", "database URL (default: a temporary SQLite file)")
	models := flag.Int("models", 50, "models in the catalogue")
	perModel := flag.Int("listings", 10, "listings per model")
	flag.Parse()
	if *duration > 10*time.Minute || *concurrency < 1 || *concurrency > 1024 {
		fmt.Fprintln(os.Stderr, "airside-load: --duration at most 10m, --concurrency 1-1024")
		os.Exit(2)
	}
	if err := run(*duration, *concurrency, *dbURL, *models, *perModel); err != nil {
		fmt.Fprintln(os.Stderr, "airside-load:", err)
		os.Exit(1)
	}
}

func run(duration time.Duration, concurrency int, dbURL string, models, perModel int) error {
	ctx := context.Background()
	if dbURL == "" {
		dir, err := os.MkdirTemp("", "airside-load")
		if err != nil {
			return err
		}
		defer os.RemoveAll(dir)
		dbURL = "sqlite:" + filepath.Join(dir, "load.db")
	}
	st, err := store.Open(ctx, dbURL)
	if err != nil {
		return err
	}
	defer st.Close()
	if err := st.Migrate(ctx); err != nil {
		return err
	}
	start := time.Now()
	slugs, err := buildCatalogue(ctx, st, models, perModel)
	if err != nil {
		return err
	}
	admin, err := account.NewService(st).CreateUser(ctx, nil, account.NewUser{Email: "load@airside.example", Password: "load-test-password", Staff: "admin"})
	if err != nil {
		return err
	}
	token, err := apitoken.NewService(st).Create(ctx, &account.Principal{User: *admin}, "load", apitoken.Scopes)
	if err != nil {
		return err
	}
	fmt.Printf("catalogue: %d models x %d listings built in %s (%s)\n", models, perModel, time.Since(start).Round(time.Millisecond), st.Dialect())

	ln, err := net.Listen("tcp", "127.0.0.1:0")
	if err != nil {
		return err
	}
	srv := &http.Server{Handler: web.New(st, slog.New(slog.NewTextHandler(io.Discard, nil))).Handler()}
	go srv.Serve(ln)
	defer srv.Close()
	base := "http://" + ln.Addr().String()

	// The load speaks through the client generated from docs/openapi.yaml,
	// as a gateway would.
	client, err := gatewayclient.NewClientWithResponses(base+"/api/v1",
		gatewayclient.WithHTTPClient(&http.Client{Transport: &http.Transport{MaxIdleConnsPerHost: concurrency}, Timeout: 30 * time.Second}),
		gatewayclient.WithRequestEditorFn(func(_ context.Context, req *http.Request) error {
			req.Header.Set("Authorization", "Bearer "+token)
			return nil
		}))
	if err != nil {
		return err
	}
	var mu sync.Mutex
	latencies := map[string][]time.Duration{}
	failures := map[string]int{}
	deadline := time.Now().Add(duration)
	var wg sync.WaitGroup
	for w := range concurrency {
		wg.Add(1)
		go func() {
			defer wg.Done()
			rng := rand.New(rand.NewPCG(uint64(w), 99))
			etag := ""
			for time.Now().Before(deadline) {
				var name string
				var status int
				var err error
				t0 := time.Now()
				if rng.IntN(2) == 0 {
					name = "GET /catalogue"
					params := &gatewayclient.GetCatalogueParams{}
					if etag != "" {
						params.IfNoneMatch = &etag
					}
					var res *gatewayclient.GetCatalogueResponse
					if res, err = client.GetCatalogueWithResponse(ctx, params); err == nil {
						status = res.StatusCode()
						if status == http.StatusOK {
							etag = res.HTTPResponse.Header.Get("ETag")
						}
					}
				} else {
					name = "POST /elect"
					prompt, streaming, workload := int64(1000+rng.IntN(50000)), true, gatewayclient.Coding
					var res *gatewayclient.ElectResponse
					if res, err = client.ElectWithResponse(ctx, gatewayclient.ElectRequest{Model: slugs[rng.IntN(len(slugs))],
						PromptTokens: &prompt, Streaming: &streaming, Workload: &workload}); err == nil {
						status = res.StatusCode()
					}
				}
				elapsed := time.Since(t0)
				ok := err == nil && (status == http.StatusOK || status == http.StatusNotModified)
				mu.Lock()
				if ok {
					latencies[name] = append(latencies[name], elapsed)
				} else {
					failures[name]++
				}
				mu.Unlock()
			}
		}()
	}
	wg.Wait()
	fmt.Printf("concurrency %d for %s on loopback\n", concurrency, duration)
	fmt.Printf("%-16s %10s %10s %10s %10s %8s\n", "endpoint", "requests", "req/s", "p50", "p99", "failed")
	total := 0
	for _, name := range []string{"GET /catalogue", "POST /elect"} {
		l := latencies[name]
		slices.Sort(l)
		total += len(l)
		fmt.Printf("%-16s %10d %10.0f %10s %10s %8d\n", name, len(l), float64(len(l))/duration.Seconds(), pctl(l, 0.50), pctl(l, 0.99), failures[name])
	}
	fmt.Printf("%-16s %10d %10.0f\n", "all", total, float64(total)/duration.Seconds())
	if failures["GET /catalogue"]+failures["POST /elect"] > 0 {
		return fmt.Errorf("%d requests failed", failures["GET /catalogue"]+failures["POST /elect"])
	}
	return nil
}

func pctl(sorted []time.Duration, q float64) string {
	if len(sorted) == 0 {
		return "-"
	}
	return sorted[int(q*float64(len(sorted)-1))].Round(10 * time.Microsecond).String()
}

// buildCatalogue publishes models x perModel listings with varied fares and
// health.
func buildCatalogue(ctx context.Context, st *store.Store, models, perModel int) ([]string, error) {
	rng := rand.New(rand.NewPCG(1, 2))
	var slugs []string
	carriers := make([]int64, perModel)
	for i := range perModel {
		c, err := st.CreateCarrier(ctx, nil, fmt.Sprintf("carrier-%02d", i), fmt.Sprintf("Carrier %02d", i))
		if err != nil {
			return nil, err
		}
		carriers[i] = c.ID
	}
	for m := range models {
		model, err := st.CreateModel(ctx, nil, catalogue.Model{Slug: fmt.Sprintf("model-%02d", m), Name: fmt.Sprintf("Model %02d", m), ContextTokens: 131072})
		if err != nil {
			return nil, err
		}
		slugs = append(slugs, model.Slug)
		for i := range perModel {
			id, err := st.CreateListing(ctx, nil, carriers[i], model.ID)
			if err != nil {
				return nil, err
			}
			in := money.Micros(100000 + rng.IntN(900000))
			cached := in / 4
			f := &fare.Fare{ListingID: id, Input: in, Output: in * 4, CachedInput: &cached, LandingFee: money.BasisPoints(500 + 500*rng.IntN(9)),
				CapScope: fare.ScopeGlobal, Capabilities: []election.Capability{election.CapTools}}
			if i%3 == 0 {
				f.Tiers = []fare.Tier{{AboveTokens: 32768, Prices: fare.Prices{Input: &f.Output}}}
			}
			if _, err := st.PublishSeedFare(ctx, f); err != nil {
				return nil, err
			}
			up, ttft, tps := 95+5*rng.Float64(), 200+800*rng.Float64(), 30+150*rng.Float64()
			if err := st.UpsertHealth(ctx, id, catalogue.Health{UptimePct: &up, LatencyMs: &ttft, ThroughputTPS: &tps}); err != nil {
				return nil, err
			}
		}
	}
	return slugs, nil
}
