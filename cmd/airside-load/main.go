// Command airside-load measures the gateway-facing API under load, the way a
// gateway meets it: a catalogue of models x listings with a day of per-minute
// metrics for every listing, served by a separately started `airside serve`
// process, driven from this process through the client generated from
// docs/openapi.yaml. It measures, one after the other, /healthz (the
// baseline through the same middleware), the catalogue answered 304, the
// catalogue 200 (gzip), elect and metrics ingest, and prints req/s, p50 and
// p99 for each and its throughput as a ratio of /healthz measured in the same
// run (this machine is shared and noisy; ratios travel, raw numbers do not).
//
// It only ever talks to loopback: the server it starts on 127.0.0.1, or the
// one named by --target (which must be a loopback URL).
package main

import (
	"bytes"
	"context"
	"errors"
	"flag"
	"fmt"
	"io"
	"math/rand/v2"
	"net"
	"net/http"
	"net/http/cookiejar"
	"net/url"
	"os"
	"os/exec"
	"path/filepath"
	"regexp"
	"slices"
	"strconv"
	"strings"
	"sync"
	"sync/atomic"
	"time"

	"github.com/airside/airside/internal/account"
	"github.com/airside/airside/internal/apitoken"
	"github.com/airside/airside/internal/catalogue"
	"github.com/airside/airside/internal/election"
	"github.com/airside/airside/internal/fare"
	"github.com/airside/airside/internal/gatewayclient"
	"github.com/airside/airside/internal/money"
	"github.com/airside/airside/internal/procmem"
	"github.com/airside/airside/internal/secret"
	"github.com/airside/airside/internal/store"
)

type config struct {
	duration     time.Duration // per endpoint
	concurrency  int
	dbURL        string
	models       int
	perModel     int
	metricsHours int
	target       string
	token        string
	binary       string
	gateways     int
	// ingestEvery, when set, has the gateways post a batch that often
	// while the pages are timed, as a live fleet does.
	ingestEvery time.Duration
	// holders has each live batch followed by holder rows with moves.
	holders bool
	// projects has each live batch name two API projects in its demand
	// and post their minutes on each listing.
	projects bool
	// goMemLimit, when set, is the serve process's GOMEMLIMIT.
	goMemLimit string
}

func main() {
	var cfg config
	flag.DurationVar(&cfg.duration, "duration", 5*time.Second, "how long to drive each endpoint (at most 2m)")
	flag.IntVar(&cfg.concurrency, "concurrency", 32, "concurrent clients")
	flag.StringVar(&cfg.dbURL, "database", "", "database URL to seed and serve (default: a temporary SQLite file)")
	flag.IntVar(&cfg.models, "models", 50, "models in the catalogue")
	flag.IntVar(&cfg.perModel, "listings", 10, "listings per model")
	flag.IntVar(&cfg.metricsHours, "metrics-hours", 24, "hours of per-minute metrics seeded for every listing")
	flag.StringVar(&cfg.target, "target", "", "drive an already running portal at this loopback URL instead of seeding and starting one")
	flag.StringVar(&cfg.token, "token", "", "API token with every scope, with --target")
	flag.StringVar(&cfg.binary, "airside", "", "the airside binary to start (default: built from ./cmd/airside)")
	flag.IntVar(&cfg.gateways, "gateways", 8, "gateway processes posting their per-minute batches (each its share of the listings)")
	flag.BoolVar(&cfg.holders, "holders", true, "with --ingest-every, each batch is followed by its gateway's holder rows, a shape of every model moving half way through the minute (false: the baseline without them)")
	flag.BoolVar(&cfg.projects, "projects", true, "with --ingest-every, each batch's demand names two API projects and is followed by their minutes on each of its listings, one resending its prompts (nine tenths cached) and one not (false: the baseline without them)")
	flag.DurationVar(&cfg.ingestEvery, "ingest-every", 0, "while the pages are timed, post one gateway's report of the minute just closed this often (0: none; 60 gateways reporting once a minute is 1s)")
	flag.StringVar(&cfg.goMemLimit, "gomemlimit", "", "the serve process's GOMEMLIMIT (e.g. 256MiB; default: none), whose memory the tool reports around the fleet's burst")
	flag.Parse()
	if cfg.duration > 2*time.Minute || cfg.concurrency < 1 || cfg.concurrency > 1024 || cfg.metricsHours < 0 || cfg.metricsHours > 24 {
		fmt.Fprintln(os.Stderr, "airside-load: --duration at most 2m, --concurrency 1-1024, --metrics-hours 0-24")
		os.Exit(2)
	}
	if err := run(context.Background(), cfg); err != nil {
		fmt.Fprintln(os.Stderr, "airside-load:", err)
		os.Exit(1)
	}
}

var firstFailure atomic.Bool

// The staff login the pages are measured with (set when this tool seeds).
var loadEmail string

// servePID is the serve process this tool started (0 with --target): its
// memory is read from /proc around the fleet's burst.
var servePID int

// serveMemory is the serve process's resident memory now and at its peak
// (in MB); ok false when it cannot be read.
func serveMemory() (rss, peak float64, ok bool) {
	if servePID == 0 {
		return 0, 0, false
	}
	rss, peak, err := procmem.Resident(servePID)
	return rss, peak, err == nil
}

// goHeap is the serve process's Go heap in use and held idle (not yet
// returned to the system), from its Prometheus metrics.
func goHeap(base, token string) string {
	req, _ := http.NewRequest("GET", base+"/metrics", nil)
	req.Header.Set("Authorization", "Bearer "+token)
	res, err := http.DefaultClient.Do(req)
	if err != nil {
		return "?"
	}
	defer res.Body.Close()
	body, _ := io.ReadAll(res.Body)
	v := map[string]float64{}
	for _, line := range strings.Split(string(body), "\n") {
		if name, value, ok := strings.Cut(line, " "); ok && strings.HasPrefix(name, "go_memstats_heap_") {
			v[name], _ = strconv.ParseFloat(value, 64)
		}
	}
	const mb = 1 << 20
	return fmt.Sprintf("%.0f / %.0f MB", v["go_memstats_heap_inuse_bytes"]/mb, (v["go_memstats_heap_idle_bytes"]-v["go_memstats_heap_released_bytes"])/mb)
}

// loadDB is the database the tool seeded and the portal serves ("" when
// --target names a portal of its own): the ingest baseline writes to it.
var loadDB string

const loadPassword = "load-test-password"

func run(ctx context.Context, cfg config) error {
	base, token, models := cfg.target, cfg.token, []string{}
	if base == "" {
		var stop func()
		var err error
		base, token, models, stop, err = seedAndServe(ctx, cfg)
		if err != nil {
			return err
		}
		defer stop()
	} else if err := requireLoopback(base); err != nil {
		return err
	}
	client, err := apiClient(base, token, cfg.concurrency)
	if err != nil {
		return err
	}
	first, err := client.GetCatalogueWithResponse(ctx, &gatewayclient.GetCatalogueParams{})
	if err != nil || first.JSON200 == nil {
		return fmt.Errorf("read the catalogue: %v (status %d)", err, statusOf(first))
	}
	etag := first.HTTPResponse.Header.Get("ETag")
	listings := first.JSON200.Listings
	if len(models) == 0 {
		for _, l := range listings {
			if !slices.Contains(models, l.Model) {
				models = append(models, l.Model)
			}
		}
	}
	plain := &http.Client{Transport: &http.Transport{MaxIdleConnsPerHost: cfg.concurrency, DisableCompression: true}, Timeout: 30 * time.Second}
	endpoints := []endpoint{
		{name: "GET /healthz", call: func(*rand.Rand) (int, error) {
			res, err := plain.Get(base + "/healthz")
			if err != nil {
				return 0, err
			}
			drain(res) // read to the end, so the connection is reused
			return res.StatusCode, nil
		}},
		{name: "GET /catalogue (304)", call: func(*rand.Rand) (int, error) {
			res, err := client.GetCatalogueWithResponse(ctx, &gatewayclient.GetCatalogueParams{IfNoneMatch: &etag})
			return statusOf(res), err
		}},
		{name: "GET /catalogue (200, gzip)", call: func(*rand.Rand) (int, error) {
			req, _ := http.NewRequest("GET", base+"/api/v1/catalogue", nil)
			req.Header.Set("Authorization", "Bearer "+token)
			req.Header.Set("Accept-Encoding", "gzip")
			res, err := plain.Do(req)
			if err != nil {
				return 0, err
			}
			drain(res)
			return res.StatusCode, nil
		}},
		{name: "POST /elect", call: func(rng *rand.Rand) (int, error) {
			prompt, streaming, workload := int64(1000+rng.IntN(50000)), true, gatewayclient.Coding
			res, err := client.ElectWithResponse(ctx, gatewayclient.ElectRequest{Model: models[rng.IntN(len(models))],
				PromptTokens: &prompt, Streaming: &streaming, Workload: &workload})
			return statusOf(res), err
		}},
		{name: "POST /elect/winner", call: func(rng *rand.Rand) (int, error) {
			prompt, streaming, workload := int64(1000+rng.IntN(50000)), true, gatewayclient.Coding
			res, err := client.ElectWinnerWithResponse(ctx, gatewayclient.ElectRequest{Model: models[rng.IntN(len(models))],
				PromptTokens: &prompt, Streaming: &streaming, Workload: &workload})
			return statusOf(res), err
		}},
		{name: "POST /metrics", call: func(rng *rand.Rand) (int, error) {
			l := listings[rng.IntN(len(listings))]
			at := time.Now().UTC().Truncate(time.Minute)
			// Each (listing, minute) carries the same figures from every
			// client, as a gateway's retries do: the first write wins.
			fig := rand.New(rand.NewPCG(uint64(l.ListingId), uint64(at.Unix())))
			requests := int64(50 + fig.IntN(100))
			ok := requests - 1
			errs := int64(1)
			res, err := client.PostMetricsWithResponse(ctx, nil, gatewayclient.PostMetricsJSONRequestBody{Buckets: []gatewayclient.Bucket{{
				ListingId: &l.ListingId, Minute: at, Requests: requests, Errors: &errs, TtftMsSum: ptr(ok * 400),
				OutputTokens: ptr(ok * 300), DurationMs: ptr(ok * 5000), InputTokens: ptr(requests * 4000), CachedInputTokens: ptr(requests * 1000)}}})
			if res != nil && res.StatusCode() != http.StatusAccepted && firstFailure.CompareAndSwap(false, true) {
				fmt.Fprintf(os.Stderr, "metrics: %d %s\n", res.StatusCode(), res.Body)
			}
			return statusOf(res), err
		}},
	}
	// Warm the connections and the server before the baseline is measured.
	drive(config{duration: time.Second, concurrency: cfg.concurrency}, endpoints[0].call)
	fmt.Printf("concurrency %d, %s per endpoint, load generator in its own process, loopback\n", cfg.concurrency, cfg.duration)
	fmt.Printf("%-28s %9s %9s %9s %9s %7s %13s\n", "endpoint", "requests", "req/s", "p50", "p99", "failed", "vs /healthz")
	var baseline float64
	failedTotal := 0
	timeEach := func(endpoints []endpoint) error {
		for _, e := range endpoints {
			lat, failed := drive(cfg, e.call)
			slices.Sort(lat)
			rate := float64(len(lat)) / cfg.duration.Seconds()
			if e.name == "GET /healthz" {
				baseline = rate
			}
			fmt.Printf("%-28s %9d %9.0f %9s %9s %7d %12.0f%%\n", e.name, len(lat), rate, pctl(lat, 0.50), pctl(lat, 0.99), failed, 100*rate/max(baseline, 1))
			failedTotal += failed
			if strings.Contains(e.name, "async") {
				// Answered before folding: the backlog is folded now,
				// before anything else is timed, and how fast is what a
				// fleet can send for good.
				took, err := waitForFolding(base, token, 30*time.Minute)
				if err != nil {
					return err
				}
				buckets := postedBuckets.Swap(0)
				folded := float64(buckets) / (cfg.duration + took).Seconds()
				fmt.Printf("%-28s every batch new rows, answered before folding; %d buckets folded %.1f s after the last answer\n", "", buckets, took.Seconds())
				fmt.Printf("%-28s (%.0f buckets/s from the first answer to the last fold)\n", "", folded)
				if batch := e.batchBuckets; batch > 0 && loadDB != "" {
					plain, err := plainInsertRate(ctx, listings, int(buckets), batch)
					if err != nil {
						return err
					}
					mark := "met"
					if folded < plain/2 {
						mark = "NOT met"
					}
					fmt.Printf("%-28s a plain batched insert of the same %d rows (%d a transaction) into the same database: %.0f buckets/s;\n", "", buckets, batch, plain)
					fmt.Printf("%-28s the portal's fold is %.0f %% of it (mark: at least 50 %%, %s)\n", "", 100*folded/plain, mark)
				}
			}
		}
		return nil
	}
	if err := timeEach(endpoints); err != nil {
		return err
	}
	if loadEmail != "" {
		stopIngest := make(chan struct{})
		ingested := make(chan int)
		go func() {
			n := 0
			defer func() { ingested <- n }()
			if cfg.ingestEvery <= 0 {
				<-stopIngest
				return
			}
			live := liveBatches(ctx, cfg, base, token, listings)
			tick := time.NewTicker(cfg.ingestEvery)
			defer tick.Stop()
			for k := 0; ; k++ {
				select {
				case <-stopIngest:
					return
				case <-tick.C:
					if code, err := live(k); err == nil && code == http.StatusAccepted {
						n++
					}
				}
			}
		}()
		failed, err := measurePages(cfg, base, listings)
		close(stopIngest)
		if n := <-ingested; cfg.ingestEvery > 0 {
			fmt.Printf("while the pages were timed, the gateways posted %d batches (one every %s)\n", n, cfg.ingestEvery)
		}
		if err != nil {
			return err
		}
		failedTotal += failed
	}
	// The fleet's burst last: it leaves a million more buckets behind, and
	// the pages above are timed on the seeded day. /healthz is measured
	// again beside it, for its ratios.
	fmt.Printf("a fleet of %d gateways posting minute batches (%d buckets each):\n", max(cfg.gateways, 1), len(listings)/max(cfg.gateways, 1))
	rssBefore, peakBefore, memory := serveMemory()
	heapBefore := goHeap(base, token)
	if err := timeEach(append(endpoints[:1:1], gatewayBatches(cfg, base, token, listings)...)); err != nil {
		return err
	}
	if memory {
		// Read once the burst is folded, and again after the serve
		// process's background work has had a minute to settle.
		rssAfter, peak, _ := serveMemory()
		heapAfter := goHeap(base, token)
		time.Sleep(time.Minute)
		rssSettled, _, _ := serveMemory()
		heapSettled := goHeap(base, token)
		limit := cfg.goMemLimit
		if limit == "" {
			limit = "none"
		}
		fmt.Printf("serve's resident memory (GOMEMLIMIT %s): %.0f MB before the fleet's burst (peak so far %.0f MB), peak %.0f MB during it, %.0f MB once folded, %.0f MB a minute later\n",
			limit, rssBefore, peakBefore, peak, rssAfter, rssSettled)
		fmt.Printf("  of which the Go heap in use / held idle: %s before, %s once folded, %s a minute later\n", heapBefore, heapAfter, heapSettled)
		if limitMB, err := procmem.ParseLimit(cfg.goMemLimit); err == nil && limitMB > 0 {
			// The bound the deploy artifacts promise: the Go runtime keeps
			// its memory under GOMEMLIMIT; the rest (the binary, SQLite's
			// own allocations, stacks) was about 80 MB at 500 listings.
			bound := procmem.BoundMB(limitMB)
			mark := "met"
			if peak > bound {
				mark = "NOT met"
			}
			fmt.Printf("  peak %.0f MB against the bound of GOMEMLIMIT + %d MB = %.0f MB: %s\n", peak, procmem.HeadroomMB, bound, mark)
		}
	}
	if n := backPressured.Load(); n > 0 {
		fmt.Printf("the inbox's back-pressure answered %d batches 503 with Retry-After; each was posted again after it, as a gateway does\n", n)
	}
	if failedTotal > 0 {
		return fmt.Errorf("%d requests failed", failedTotal)
	}
	return nil
}

// endpoint is a request the tool times.
type endpoint struct {
	name string
	call func(rng *rand.Rand) (int, error)
	// batchBuckets, for a fleet's full batches answered before folding,
	// is the buckets a batch carries: the ingest is then compared with a
	// plain batched insert of as many rows in batches of that size.
	batchBuckets int
}

// plainInsertRate is how fast the database takes n buckets shaped like the
// fleet's (a listing each, batch a transaction) in a plain batched insert
// (store.InsertBucketsPlain: no first-write check, no rollup), in buckets
// a second; the rows are removed again.
func plainInsertRate(ctx context.Context, listings []gatewayclient.Listing, n, batch int) (float64, error) {
	if n == 0 {
		return 0, errors.New("no buckets to compare with")
	}
	st, err := store.Open(ctx, loadDB)
	if err != nil {
		return 0, err
	}
	defer st.Close()
	const prefix = "load-baseline-"
	minute := time.Now().UTC().Truncate(time.Minute).Add(-time.Hour)
	rows := make([]catalogue.Bucket, n)
	for i := range rows {
		l := listings[i%len(listings)]
		requests := int64(50 + i%100)
		ok := requests - 1
		rows[i] = catalogue.Bucket{ListingID: l.ListingId, Minute: minute, Source: prefix + strconv.Itoa(i/len(listings)),
			Counts: catalogue.Counts{Requests: requests, Errors: 1, TTFTMsSum: ok * 400, OutputTokens: ok * 300, DurationMs: ok * 5000,
				InputTokens: requests * 4000, CachedInputTokens: requests * 1000,
				GatewayCounts: catalogue.GatewayCounts{Routed: ok - 1, Exploration: 1}}}
	}
	start := time.Now()
	if err := st.InsertBucketsPlain(ctx, rows, batch); err != nil {
		return 0, err
	}
	rate := float64(n) / time.Since(start).Seconds()
	if _, err := st.DeleteBucketsOfSources(ctx, prefix); err != nil {
		return 0, err
	}
	return rate, nil
}

// gatewayBatches is the ingest a fleet of gateways makes: each of
// cfg.gateways gateways routes its share of the listings (listing i goes to
// gateway i mod n) and posts, per closed minute, one batch with a bucket for
// each of its listings and its demand row, with Prefer: respond-async, as
// the reference gateway does (and, timed first for comparison, without it:
// answered once the rows are stored). Each gateway has a connection pool
// of its own, as a separate process would. Every batch is new work for the portal (rows
// inserted, hours rolled up once folded): a gateway walks back the minutes
// the seeded metrics leave free (--metrics-hours back to the 25 hours the
// portal accepts), and each time it has walked them it reports under a new
// source name, as another gateway of a growing fleet would. The body is
// written by hand (strconv, no reflection): what is timed is the portal's
// work, not this generator's.
func gatewayBatches(cfg config, base, token string, listings []gatewayclient.Listing) []endpoint {
	n := max(cfg.gateways, 1)
	type gw struct {
		client   *http.Client
		listings []gatewayclient.Listing
		next     atomic.Int64
	}
	fleet := make([]*gw, n)
	for g := range fleet {
		fleet[g] = &gw{client: &http.Client{Transport: &http.Transport{MaxIdleConnsPerHost: cfg.concurrency}, Timeout: 30 * time.Second}}
	}
	for i, l := range listings {
		fleet[i%n].listings = append(fleet[i%n].listings, l)
	}
	// The band: from the newest minute the seeded metrics leave free (with
	// a margin: seeding took minutes, and they ended at its own "now") back
	// to five minutes short of the 25 hours the portal accepts.
	const margin = 15
	band := time.Now().UTC().Truncate(time.Minute).Add(-time.Duration(cfg.metricsHours*60+margin) * time.Minute)
	bandMinutes := int64(max(1, 25*60-5-cfg.metricsHours*60-margin))
	// post is one batch, answered once folded or (async) once queued; the
	// modes report under sources of their own, so each inserts rows. A
	// single batch carries one bucket (listing k of the gateway's, in
	// turn) instead of all the gateway's: the cost of an answer apart from
	// the batch's size.
	post := func(async, single bool) func(rng *rand.Rand) (int, error) {
		mode := "stored"
		if async {
			mode = "queued"
		}
		if single {
			mode += "-single"
		}
		return func(rng *rand.Rand) (int, error) {
			g := rng.IntN(n)
			gateway := fleet[g]
			k := gateway.next.Add(1) - 1
			at := band.Add(-time.Duration(k%bandMinutes) * time.Minute)
			source := fmt.Sprintf("load-gateway-%s-%d-%d", mode, g, k/bandMinutes)
			listings := gateway.listings
			if single {
				listings = listings[k%int64(len(listings)):][:1]
			}
			body := batchBody(listings, at, source)
			send := func() (*http.Response, error) {
				req, _ := http.NewRequest("POST", base+"/api/v1/metrics", bytes.NewReader(body))
				req.Header.Set("Authorization", "Bearer "+token)
				req.Header.Set("Content-Type", "application/json")
				if async {
					req.Header.Set("Prefer", "respond-async")
				}
				return gateway.client.Do(req)
			}
			res, err := send()
			for tries := 1; err == nil && res.StatusCode == http.StatusServiceUnavailable && res.Header.Get("Retry-After") != "" && tries < 10; tries++ {
				// The inbox's back-pressure (full): not a failure but a
				// request to post again later, which a gateway honours.
				backPressured.Add(1)
				wait, _ := strconv.Atoi(res.Header.Get("Retry-After"))
				drain(res)
				time.Sleep(time.Duration(max(wait, 1)) * time.Second)
				res, err = send()
			}
			if err != nil {
				return 0, err
			}
			if res.StatusCode != http.StatusAccepted && firstFailure.CompareAndSwap(false, true) {
				b, _ := io.ReadAll(res.Body)
				fmt.Fprintf(os.Stderr, "gateway batch: %d %s\n", res.StatusCode, b)
			}
			drain(res)
			if async {
				postedBuckets.Add(int64(len(listings)))
			}
			return res.StatusCode, nil
		}
	}
	return []endpoint{
		{name: fmt.Sprintf("POST /metrics (%d gw, stored)", n), call: post(false, false)},
		{name: fmt.Sprintf("POST /metrics (%d gw, async)", n), call: post(true, false), batchBuckets: len(fleet[0].listings)},
		{name: fmt.Sprintf("... 1 bucket (%d gw, async)", n), call: post(true, true)},
	}
}

// backPressured counts the fleet's batches the inbox answered 503 with
// Retry-After (each posted again after it).
var backPressured atomic.Int64

// postedBuckets counts the buckets the fleet's batches carried.
var postedBuckets atomic.Int64

// batchBody is a gateway's report of one minute for its listings: a bucket
// each (the same listing and minute always carry the same figures) and its
// demand row, as JSON.
func batchBody(listings []gatewayclient.Listing, at time.Time, source string) []byte {
	minute := at.Format(time.RFC3339)
	out := make([]byte, 0, 64+len(listings)*300)
	out = append(out, `{"buckets":[`...)
	prompts := int64(0)
	for i, l := range listings {
		requests := 20 + int64(mix(uint64(l.ListingId), uint64(at.Unix()))%100)
		ok := requests - 1
		if i > 0 {
			out = append(out, ',')
		}
		out = append(out, `{"listingId":`...)
		out = strconv.AppendInt(out, l.ListingId, 10)
		out = append(out, `,"minute":"`...)
		out = append(out, minute...)
		out = append(out, `","source":`...)
		out = strconv.AppendQuote(out, source)
		for _, f := range []struct {
			name  string
			value int64
		}{{"requests", requests}, {"errors", 1}, {"ttftMsSum", ok * 400}, {"outputTokens", ok * 300}, {"durationMs", ok * 5000},
			{"inputTokens", requests * 4000}, {"cachedInputTokens", requests * 1000}, {"routed", ok - 1}, {"exploration", 1}} {
			out = append(out, `,"`...)
			out = append(out, f.name...)
			out = append(out, `":`...)
			out = strconv.AppendInt(out, f.value, 10)
		}
		out = append(out, '}')
		prompts += requests * 4000
	}
	out = append(out, `],"demand":[{"model":`...)
	out = strconv.AppendQuote(out, listings[0].Model)
	out = append(out, `,"workload":"coding","minute":"`...)
	out = append(out, minute...)
	out = append(out, `","source":`...)
	out = strconv.AppendQuote(out, source)
	out = append(out, `,"requests":100,"promptTokens":`...)
	out = strconv.AppendInt(out, prompts, 10)
	return append(out, `}]}`...)
}

// mix hashes two numbers (splitmix64's finaliser): a listing's figures for
// a minute, the same every time, without a generator to allocate.
func mix(a, b uint64) uint64 {
	z := a*0x9e3779b97f4a7c15 + b
	z = (z ^ z>>30) * 0xbf58476d1ce4e5b9
	z = (z ^ z>>27) * 0x94d049bb133111eb
	return z ^ z>>31
}

// waitForFolding waits until the portal's metrics inbox is empty (its
// airside_metric_inbox_waiting gauge, read from /metrics with the token),
// and returns how long that took.
func waitForFolding(base, token string, limit time.Duration) (time.Duration, error) {
	start := time.Now()
	for {
		req, _ := http.NewRequest("GET", base+"/metrics", nil)
		req.Header.Set("Authorization", "Bearer "+token)
		res, err := http.DefaultClient.Do(req)
		if err != nil {
			return 0, err
		}
		body, _ := io.ReadAll(res.Body)
		res.Body.Close()
		m := regexp.MustCompile(`(?m)^airside_metric_inbox_waiting ([0-9.e+]+)$`).FindSubmatch(body)
		if m == nil {
			return 0, fmt.Errorf("no airside_metric_inbox_waiting in /metrics (status %d)", res.StatusCode)
		}
		if string(m[1]) == "0" {
			return time.Since(start), nil
		}
		if time.Since(start) > limit {
			return 0, fmt.Errorf("the inbox still holds %s batches after %s", m[1], limit)
		}
		time.Sleep(200 * time.Millisecond)
	}
}

// liveBatches is a live fleet's ingest, as the pages see it: batch k is
// gateway k mod 60's report of the minute just closed, for its share of
// the listings (listing i goes to gateway i mod cfg.gateways), under a
// source of its own, so every batch is new rows for the minute under way.
func liveBatches(ctx context.Context, cfg config, base, token string, listings []gatewayclient.Listing) func(k int) (int, error) {
	client, err := apiClient(base, token, 1)
	if err != nil {
		panic(err) // only a bad base URL, already used above
	}
	n := max(cfg.gateways, 1)
	return func(k int) (int, error) {
		at := time.Now().UTC().Truncate(time.Minute).Add(-time.Minute)
		source := fmt.Sprintf("live-gateway-%d", k%60)
		var buckets []gatewayclient.Bucket
		for i, l := range listings {
			if i%n != k%n {
				continue
			}
			id := l.ListingId
			buckets = append(buckets, gatewayclient.Bucket{ListingId: &id, Minute: at, Source: &source, Requests: 40, Errors: ptr(int64(1)),
				TtftMsSum: ptr(int64(39 * 400)), OutputTokens: ptr(int64(39 * 300)), DurationMs: ptr(int64(39 * 5000)), InputTokens: ptr(int64(40 * 4000)),
				Routed: ptr(int64(38)), Exploration: ptr(int64(1))})
		}
		prompts := int64(100 * 4000)
		demand := []gatewayclient.Demand{{Model: listings[0].Model, Workload: gatewayclient.Coding, Minute: at, Source: &source, Requests: 100, PromptTokens: &prompts}}
		if cfg.projects {
			// As the reference gateway names them: the projection elects
			// each project's part on the rates learned of it.
			asked := map[string]int64{"project:prj-load-resends": 60, "project:prj-load-fresh": 40}
			demand[0].Asked = &asked
		}
		res, err := client.PostMetricsWithResponse(ctx, &gatewayclient.PostMetricsParams{Prefer: new("respond-async")}, gatewayclient.PostMetricsJSONRequestBody{Buckets: buckets, Demand: &demand})
		if res != nil && res.StatusCode() != http.StatusAccepted && firstFailure.CompareAndSwap(false, true) {
			fmt.Fprintf(os.Stderr, "live gateway batch: %d %s\n", res.StatusCode(), res.Body)
		}
		if err != nil || statusOf(res) != http.StatusAccepted {
			return statusOf(res), err
		}
		// Then, as the reference gateway does, who held each model's small
		// requests in the minute: moved between two of its listings half
		// way through, each row with its elections (so every model's hour
		// under way is cut, as a shape that moves makes it).
		if holders := movedHolders(listings, k, n, at, source); cfg.holders && len(holders) > 0 {
			hres, err := client.PostShapeHoldersWithResponse(ctx, gatewayclient.PostShapeHoldersJSONRequestBody{Holders: holders})
			if err != nil {
				return 0, err
			}
			if code := hres.StatusCode(); code != http.StatusAccepted && firstFailure.CompareAndSwap(false, true) {
				fmt.Fprintf(os.Stderr, "live gateway holders: %d %s\n", code, hres.Body)
			}
		}
		// And each project's minute on each listing of the part.
		if projects := projectMinutes(listings, k, n, at, source); cfg.projects && len(projects) > 0 {
			pres, err := client.PostProjectMinutesWithResponse(ctx, gatewayclient.PostProjectMinutesJSONRequestBody{Projects: projects})
			if err != nil {
				return 0, err
			}
			if code := pres.StatusCode(); code != http.StatusAccepted && firstFailure.CompareAndSwap(false, true) {
				fmt.Fprintf(os.Stderr, "live gateway projects: %d %s\n", code, pres.Body)
			}
		}
		return statusOf(res), err
	}
}

// projectMinutes are a gateway's project rows of a minute: on each listing
// of its part (listings i with i%n == k%n), a project resending its prompts
// (24 answers, nine tenths of their input cached) and one never (15, none).
func projectMinutes(listings []gatewayclient.Listing, k, n int, at time.Time, source string) []gatewayclient.ProjectMinute {
	var out []gatewayclient.ProjectMinute
	for i, l := range listings {
		if i%n != k%n {
			continue
		}
		out = append(out,
			gatewayclient.ProjectMinute{Project: "prj-load-resends", ListingId: l.ListingId, Minute: at, Source: &source, Answers: 24,
				InputTokens: 24 * 4000, CachedInputTokens: 24 * 3600, OutputTokens: 24 * 300},
			gatewayclient.ProjectMinute{Project: "prj-load-fresh", ListingId: l.ListingId, Minute: at, Source: &source, Answers: 15,
				InputTokens: 15 * 4000, OutputTokens: 15 * 300})
	}
	return out
}

// movedHolders are a gateway's holder rows of a minute: for each model
// with two listings in its part (listings i with i%n == k%n), the small
// requests' shape held by the first from the minute's start and by the
// second from its 30th second, 20 elections each.
func movedHolders(listings []gatewayclient.Listing, k, n int, at time.Time, source string) []gatewayclient.ShapeHolder {
	mine := map[string][]int64{}
	var models []string
	for i, l := range listings {
		if i%n != k%n {
			continue
		}
		if _, seen := mine[l.Model]; !seen {
			models = append(models, l.Model)
		}
		mine[l.Model] = append(mine[l.Model], l.ListingId)
	}
	var out []gatewayclient.ShapeHolder
	for _, model := range models {
		ids := mine[model]
		if len(ids) < 2 {
			continue
		}
		for j, second := range []int{0, 30} {
			out = append(out, gatewayclient.ShapeHolder{Model: model, Workload: gatewayclient.General, ListingId: ids[j], Minute: at,
				Second: ptr(second), Source: &source, Requests: ptr(int64(20))})
		}
	}
	return out
}

// apiClient is the generated client with its own connection pool and the
// token on every request.
func apiClient(base, token string, conns int) (*gatewayclient.ClientWithResponses, error) {
	return gatewayclient.NewClientWithResponses(base+"/api/v1",
		gatewayclient.WithHTTPClient(&http.Client{Transport: &http.Transport{MaxIdleConnsPerHost: conns}, Timeout: 30 * time.Second}),
		gatewayclient.WithRequestEditorFn(func(_ context.Context, req *http.Request) error {
			req.Header.Set("Authorization", "Bearer "+token)
			return nil
		}))
}

// measurePages times the pages staff read most, logged in, at concurrency 2
// (the per-user bound on expensive requests), on the same catalogue.
func measurePages(cfg config, base string, listings []gatewayclient.Listing) (int, error) {
	jar, _ := cookiejar.New(nil)
	client := &http.Client{Jar: jar, Timeout: 30 * time.Second,
		CheckRedirect: func(*http.Request, []*http.Request) error { return http.ErrUseLastResponse }}
	page, err := client.Get(base + "/login")
	if err != nil {
		return 0, err
	}
	body, _ := io.ReadAll(page.Body)
	page.Body.Close()
	m := regexp.MustCompile(`name="_csrf" value="([^"]+)"`).FindSubmatch(body)
	if m == nil {
		return 0, errors.New("no CSRF token on the login page")
	}
	res, err := client.PostForm(base+"/login", url.Values{"_csrf": {string(m[1])}, "email": {loadEmail}, "password": {loadPassword}})
	if err != nil {
		return 0, err
	}
	res.Body.Close()
	if res.StatusCode != http.StatusSeeOther {
		return 0, fmt.Errorf("log in for the pages: status %d", res.StatusCode)
	}
	get := func(path string) (int, error) {
		res, err := client.Get(base + path)
		if err != nil {
			return 0, err
		}
		drain(res)
		return res.StatusCode, nil
	}
	pages := []struct {
		name string
		path func(*rand.Rand) string
	}{
		{"page /listings", func(*rand.Rand) string { return "/listings" }},
		{"page /listings/:id", func(rng *rand.Rand) string {
			return fmt.Sprintf("/listings/%d", listings[rng.IntN(len(listings))].ListingId)
		}},
		{"page /listings/:id/preview", func(rng *rand.Rand) string {
			return fmt.Sprintf("/listings/%d/preview", listings[rng.IntN(len(listings))].ListingId)
		}},
		{"page /review", func(*rand.Rand) string { return "/review" }},
		{"page /audit", func(*rand.Rand) string { return "/audit" }},
		// What a carrier reads of its traffic (staff see any carrier's).
		{"page /traffic", func(rng *rand.Rand) string {
			return "/traffic?carrier=" + url.QueryEscape(listings[rng.IntN(len(listings))].Carrier)
		}},
		{"page /traffic (48 hours)", func(rng *rand.Rand) string {
			return "/traffic?period=hour&carrier=" + url.QueryEscape(listings[rng.IntN(len(listings))].Carrier)
		}},
		{"page /traffic/listings/:id", func(rng *rand.Rand) string {
			return fmt.Sprintf("/traffic/listings/%d", listings[rng.IntN(len(listings))].ListingId)
		}},
		{"page /traffic/statements/:month", func(rng *rand.Rand) string {
			return "/traffic/statements/" + time.Now().UTC().Format("2006-01") + "?carrier=" + url.QueryEscape(listings[rng.IntN(len(listings))].Carrier)
		}},
		// Staff's view of the whole catalogue: every listing's share of
		// the last 24 hours beside its projection, all 50 models.
		{"page /operations", func(*rand.Rand) string { return "/operations" }},
		{"page /alerts", func(rng *rand.Rand) string {
			return "/alerts?carrier=" + url.QueryEscape(listings[rng.IntN(len(listings))].Carrier)
		}},
	}
	pageCfg := cfg
	pageCfg.concurrency = 2
	// Each page is read once before it is timed, and that first read is
	// reported on its own: the traffic pages' first view after a start (or
	// after a day's window moved) projects every model's month, once per
	// process; the timed reads are what every later view costs.
	fmt.Printf("pages, logged in as staff, concurrency %d, %s each, after one untimed first read (its time last; a carrier's page then once for every carrier):\n", pageCfg.concurrency, cfg.duration)
	failedTotal := 0
	var carriers []string
	for _, l := range listings {
		if !slices.Contains(carriers, l.Carrier) {
			carriers = append(carriers, l.Carrier)
		}
	}
	for _, p := range pages {
		began := time.Now()
		if code, err := get(p.path(rand.New(rand.NewPCG(7, 7)))); err != nil || code != http.StatusOK {
			return 0, fmt.Errorf("first read of %s: status %d, %v", p.name, code, err)
		}
		first := time.Since(began)
		// A page of a carrier is then read once for every carrier, untimed:
		// each carrier's first view projects its models' month once per
		// process (and hour), which the first read above reports; the
		// timed reads are what a view costs after that.
		if probe := p.path(rand.New(rand.NewPCG(7, 7))); strings.Contains(probe, "carrier=") {
			for _, c := range carriers {
				path := regexp.MustCompile(`carrier=[^&]*`).ReplaceAllString(probe, "carrier="+url.QueryEscape(c))
				if code, err := get(path); err != nil || code != http.StatusOK {
					return 0, fmt.Errorf("first read of %s for %s: status %d, %v", p.name, c, code, err)
				}
			}
		}
		lat, failed := drive(pageCfg, func(rng *rand.Rand) (int, error) { return get(p.path(rng)) })
		slices.Sort(lat)
		fmt.Printf("%-28s %9d %9.0f %9s %9s %7d %9s\n", p.name, len(lat), float64(len(lat))/cfg.duration.Seconds(), pctl(lat, 0.50), pctl(lat, 0.99), failed,
			first.Round(10*time.Microsecond))
		failedTotal += failed
	}
	return failedTotal, nil
}

// drive runs call from cfg.concurrency clients for cfg.duration and returns
// the latencies of the successes and the count of failures.
func drive(cfg config, call func(*rand.Rand) (int, error)) ([]time.Duration, int) {
	var mu sync.Mutex
	var latencies []time.Duration
	failed := 0
	deadline := time.Now().Add(cfg.duration)
	var wg sync.WaitGroup
	for w := range cfg.concurrency {
		wg.Add(1)
		go func() {
			defer wg.Done()
			rng := rand.New(rand.NewPCG(uint64(w), 99))
			var mine []time.Duration
			bad := 0
			for time.Now().Before(deadline) {
				t0 := time.Now()
				status, err := call(rng)
				if err == nil && (status == http.StatusOK || status == http.StatusNotModified || status == http.StatusAccepted) {
					mine = append(mine, time.Since(t0))
				} else {
					bad++
				}
			}
			mu.Lock()
			latencies = append(latencies, mine...)
			failed += bad
			mu.Unlock()
		}()
	}
	wg.Wait()
	return latencies, failed
}

type statuser interface{ StatusCode() int }

func statusOf(r statuser) int {
	if r == nil {
		return 0
	}
	return r.StatusCode()
}

func drain(res *http.Response) {
	io.Copy(io.Discard, res.Body) //nolint:errcheck // only to reuse the connection
	res.Body.Close()
}

func ptr[T any](v T) *T { return &v }

func pctl(sorted []time.Duration, q float64) string {
	if len(sorted) == 0 {
		return "-"
	}
	d := sorted[int(float64(len(sorted)-1)*q)]
	return d.Round(10 * time.Microsecond).String()
}

func requireLoopback(target string) error {
	u, err := url.Parse(target)
	if err != nil {
		return fmt.Errorf("--target %q: %w", target, err)
	}
	ip := net.ParseIP(u.Hostname())
	if u.Hostname() != "localhost" && (ip == nil || !ip.IsLoopback()) {
		return fmt.Errorf("--target %q: load goes to loopback addresses only", target)
	}
	return nil
}

// seedAndServe builds the catalogue and its metrics in a database, then
// starts `airside serve` on it in its own process.
func seedAndServe(ctx context.Context, cfg config) (base, token string, models []string, stop func(), err error) {
	loadEmail = fmt.Sprintf("load-%d@airside.example", time.Now().UnixNano())
	dir, err := os.MkdirTemp("", "airside-load")
	if err != nil {
		return "", "", nil, nil, err
	}
	cleanup := func() { os.RemoveAll(dir) }
	dbURL := cfg.dbURL
	if dbURL == "" {
		dbURL = "sqlite:" + filepath.Join(dir, "load.db")
	}
	loadDB = dbURL
	st, err := store.Open(ctx, dbURL)
	if err != nil {
		cleanup()
		return "", "", nil, nil, err
	}
	defer st.Close()
	if err := st.Migrate(ctx); err != nil {
		cleanup()
		return "", "", nil, nil, err
	}
	start := time.Now()
	models, ids, err := buildCatalogue(ctx, st, cfg.models, cfg.perModel)
	if err != nil {
		cleanup()
		return "", "", nil, nil, err
	}
	buckets, err := seedMetrics(ctx, st, ids, cfg.metricsHours)
	if err != nil {
		cleanup()
		return "", "", nil, nil, err
	}
	admin, err := account.NewService(st).CreateUser(ctx, nil, account.NewUser{Email: loadEmail, Password: loadPassword, Staff: "admin"})
	if err != nil {
		cleanup()
		return "", "", nil, nil, err
	}
	token, err = apitoken.NewService(st).Create(ctx, &account.Principal{User: *admin}, "load "+time.Now().UTC().Format(time.RFC3339Nano), apitoken.Scopes)
	if err != nil {
		cleanup()
		return "", "", nil, nil, err
	}
	fmt.Printf("catalogue: %d models x %d listings, %d metric buckets (%d h per listing), seeded in %s on %s\n",
		cfg.models, cfg.perModel, buckets, cfg.metricsHours, time.Since(start).Round(time.Millisecond), st.Dialect())

	binary := cfg.binary
	if binary == "" {
		binary = filepath.Join(dir, "airside")
		build := exec.Command("go", "build", "-o", binary, "./cmd/airside")
		build.Stdout, build.Stderr = os.Stderr, os.Stderr
		if err := build.Run(); err != nil {
			cleanup()
			return "", "", nil, nil, fmt.Errorf("build airside: %w", err)
		}
	}
	ln, err := net.Listen("tcp", "127.0.0.1:0")
	if err != nil {
		cleanup()
		return "", "", nil, nil, err
	}
	addr := ln.Addr().String()
	ln.Close()
	serve := exec.Command(binary, "serve", "--addr", addr, "--database", dbURL)
	serve.Env = append(os.Environ(), "AIRSIDE_BASE_URL=http://"+addr, "AIRSIDE_LOG_LEVEL=error", "AIRSIDE_SECRET_KEY="+secret.NewKey(),
		"AIRSIDE_API_LIMITS=off") // one token drives every endpoint far past a gateway's pace
	if cfg.goMemLimit != "" {
		serve.Env = append(serve.Env, "GOMEMLIMIT="+cfg.goMemLimit)
	}
	serve.Stderr = os.Stderr
	started := time.Now()
	if err := serve.Start(); err != nil {
		cleanup()
		return "", "", nil, nil, err
	}
	servePID = serve.Process.Pid
	stop = func() {
		serve.Process.Signal(os.Interrupt)
		serve.Wait()
		cleanup()
	}
	base = "http://" + addr
	for deadline := time.Now().Add(60 * time.Second); ; {
		res, err := http.Get(base + "/readyz")
		if err == nil {
			res.Body.Close()
			if res.StatusCode == http.StatusOK {
				break
			}
		}
		if time.Now().After(deadline) {
			stop()
			return "", "", nil, nil, errors.New("airside serve did not become ready within a minute")
		}
		time.Sleep(100 * time.Millisecond)
	}
	ready := time.Since(started)
	// Ready means ready: the first routing answers after /readyz said so
	// must not pay for building the snapshot.
	first := func(method, path, body string) time.Duration {
		req, _ := http.NewRequest(method, base+path, strings.NewReader(body))
		req.Header.Set("Authorization", "Bearer "+token)
		req.Header.Set("Content-Type", "application/json")
		t0 := time.Now()
		if res, err := http.DefaultClient.Do(req); err == nil {
			io.Copy(io.Discard, res.Body)
			res.Body.Close()
		}
		return time.Since(t0)
	}
	catalogue := first(http.MethodGet, "/api/v1/catalogue", "")
	elect := first(http.MethodPost, "/api/v1/elect", `{"model":"`+models[0]+`"}`)
	fmt.Printf("serve: ready %s after start; then the first catalogue read took %s and the first election %s\n",
		ready.Round(time.Millisecond), catalogue.Round(time.Microsecond), elect.Round(time.Microsecond))
	return base, token, models, stop, nil
}

func buildCatalogue(ctx context.Context, st *store.Store, models, perModel int) ([]string, []int64, error) {
	rng := rand.New(rand.NewPCG(1, 2))
	var slugs []string
	var ids []int64
	carriers := make([]int64, perModel)
	for i := range perModel {
		c, err := st.CreateCarrier(ctx, nil, fmt.Sprintf("carrier-%02d", i), fmt.Sprintf("Carrier %02d", i))
		if err != nil {
			return nil, nil, err
		}
		carriers[i] = c.ID
	}
	for m := range models {
		model, err := st.CreateModel(ctx, nil, catalogue.Model{Slug: fmt.Sprintf("model-%03d", m), Name: fmt.Sprintf("Model %03d", m), ContextTokens: 131072})
		if err != nil {
			return nil, nil, err
		}
		slugs = append(slugs, model.Slug)
		for i := range perModel {
			id, err := st.CreateListing(ctx, nil, carriers[i], model.ID)
			if err != nil {
				return nil, nil, err
			}
			ids = append(ids, id)
			in := money.Micros(100000 + rng.IntN(900000))
			cached := in / 4
			f := &fare.Fare{ListingID: id, Input: in, Output: in * 4, CachedInput: &cached, LandingFee: money.BasisPoints(500 + 500*rng.IntN(9)),
				CapScope: fare.ScopeGlobal, Capabilities: []election.Capability{election.CapTools}}
			if i%3 == 0 {
				f.Tiers = []fare.Tier{{AboveTokens: 32768, Prices: fare.Prices{Input: &f.Output}}}
			}
			if _, err := st.PublishSeedFare(ctx, f); err != nil {
				return nil, nil, err
			}
		}
	}
	return slugs, ids, nil
}

// seedMetrics writes hours of per-minute buckets for every listing, ending at
// the minute before the current one, in batches.
func seedMetrics(ctx context.Context, st *store.Store, ids []int64, hours int) (int, error) {
	now := time.Now().UTC().Truncate(time.Minute)
	rng := rand.New(rand.NewPCG(3, 4))
	total := 0
	var batch []catalogue.Bucket
	flush := func() error {
		if len(batch) == 0 {
			return nil
		}
		if err := st.RecordBuckets(ctx, batch); err != nil {
			return err
		}
		total += len(batch)
		batch = batch[:0]
		return nil
	}
	for _, id := range ids {
		for m := hours * 60; m >= 1; m-- { // up to the minute before: the load reports the current one
			requests := int64(20 + rng.IntN(100))
			errs := int64(rng.IntN(3))
			ok := requests - errs
			batch = append(batch, catalogue.Bucket{ListingID: id, Minute: now.Add(-time.Duration(m) * time.Minute), Counts: catalogue.Counts{Requests: requests,
				Errors: errs, TTFTMsSum: ok * int64(200+rng.IntN(600)), OutputTokens: ok * 300, DurationMs: ok * 4000,
				InputTokens: requests * 5000, CachedInputTokens: requests * 1500}})
			if len(batch) == 5000 {
				if err := flush(); err != nil {
					return total, err
				}
			}
		}
	}
	return total, flush()
}
