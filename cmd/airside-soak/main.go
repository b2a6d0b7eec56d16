// Command airside-soak drives a realistic mix against a portal it starts on
// a loopback port, for a bounded time at a fixed concurrency: carriers
// previewing and filing fares, reviewers deciding, gateways polling the
// catalogue and posting metrics. Then it checks the invariants: no 5xx, no
// lost or duplicated filing, one audit row per decision, and a catalogue
// revision equal to the number of publications. It prints throughput and
// p50/p99 per endpoint.
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
	"net/http/cookiejar"
	"net/url"
	"os"
	"path/filepath"
	"regexp"
	"slices"
	"sort"
	"strings"
	"sync"
	"time"

	"github.com/airside/airside/internal/account"
	"github.com/airside/airside/internal/apitoken"
	"github.com/airside/airside/internal/audit"
	"github.com/airside/airside/internal/gatewayclient"

	"github.com/airside/airside/cmd/airside/wire"
	"github.com/airside/airside/internal/catalogue"
	"github.com/airside/airside/internal/demo"
	"github.com/airside/airside/internal/store"
	"github.com/airside/airside/internal/workflow"
)

func main() {
	duration := flag.Duration("duration", 2*time.Minute, "how long to drive load (at most 30m)")
	concurrency := flag.Int("concurrency", 8, "concurrent actors")
	dbURL := flag.String("database", "", "database URL (default: a temporary SQLite file)")
	flag.Parse()
	if *duration > 30*time.Minute || *concurrency < 4 || *concurrency > 256 {
		fmt.Fprintln(os.Stderr, "airside-soak: --duration at most 30m, --concurrency 4-256")
		os.Exit(2)
	}
	report, err := Run(context.Background(), Config{Duration: *duration, Concurrency: *concurrency, DatabaseURL: *dbURL})
	fmt.Print(report)
	if err != nil {
		fmt.Fprintln(os.Stderr, "airside-soak:", err)
		os.Exit(1)
	}
}

// Config is one soak run.
type Config struct {
	Duration    time.Duration
	Concurrency int
	DatabaseURL string
}

// stats records every request by endpoint.
type stats struct {
	mu        sync.Mutex
	latencies map[string][]time.Duration
	statuses  map[string]map[int]int
	// filed are the filings the portal said it created; decided the
	// decisions it said it made.
	filed    []int64
	decided  int
	approved int
	serverEr []string
}

func (s *stats) record(endpoint string, status int, d time.Duration) {
	s.mu.Lock()
	defer s.mu.Unlock()
	s.latencies[endpoint] = append(s.latencies[endpoint], d)
	if s.statuses[endpoint] == nil {
		s.statuses[endpoint] = map[int]int{}
	}
	s.statuses[endpoint][status]++
	if status >= 500 {
		s.serverEr = append(s.serverEr, fmt.Sprintf("%s: %d", endpoint, status))
	}
}

// Run starts the portal, drives the mix, checks the invariants and returns a
// printable report; the error lists broken invariants.
func Run(ctx context.Context, cfg Config) (string, error) {
	if cfg.DatabaseURL == "" {
		dir, err := os.MkdirTemp("", "airside-soak")
		if err != nil {
			return "", err
		}
		defer os.RemoveAll(dir)
		cfg.DatabaseURL = "sqlite:" + filepath.Join(dir, "soak.db")
	}
	st, err := store.Open(ctx, cfg.DatabaseURL)
	if err != nil {
		return "", err
	}
	defer st.Close()
	if err := st.Migrate(ctx); err != nil {
		return "", err
	}
	if _, err := demo.Seed(ctx, st); err != nil {
		return "", err
	}
	startRevision, err := st.CatalogueRevision(ctx)
	if err != nil {
		return "", err
	}
	admin, err := st.FindUserByEmail(ctx, "admin@airside.example")
	if err != nil {
		return "", err
	}
	token, err := apitoken.NewService(st).Create(ctx, &account.Principal{User: *admin}, "soak gateway "+time.Now().UTC().Format(time.RFC3339Nano), apitoken.Scopes)
	if err != nil {
		return "", err
	}
	listings, err := st.FindListings(ctx, catalogue.ListingFilter{})
	if err != nil {
		return "", err
	}

	ln, err := net.Listen("tcp", "127.0.0.1:0")
	if err != nil {
		return "", err
	}
	portal := wire.Portal(st, wire.Config{Log: slog.New(slog.NewTextHandler(io.Discard, nil))})
	portal.LongPollRecheck = time.Second
	portal.APILimits = nil // several gateway actors share one token at a soak's pace, not a gateway's
	srv := &http.Server{Handler: portal.Handler()}
	go srv.Serve(ln)
	defer srv.Close()
	base := "http://" + ln.Addr().String()

	s := &stats{latencies: map[string][]time.Duration{}, statuses: map[string]map[int]int{}}
	deadline := time.Now().Add(cfg.Duration)
	var wg sync.WaitGroup
	actors := []func(int){}
	for i := range cfg.Concurrency {
		switch i % 4 {
		case 0, 1:
			carrier := []string{"admin@nebula.example", "admin@orbit.example", "member@nebula.example", "member@orbit.example"}[(i/2)%4]
			slug := strings.TrimSuffix(strings.Split(carrier, "@")[1], ".example")
			var own []int64
			for _, l := range listings {
				if l.CarrierSlug == slug {
					own = append(own, l.ID)
				}
			}
			actors = append(actors, func(seed int) { carrierActor(base, carrier, own, s, deadline, seed) })
		case 2:
			who := []string{"reviewer@airside.example", "admin@airside.example"}[(i/4)%2]
			actors = append(actors, func(seed int) { reviewerActor(base, who, s, deadline, seed) })
		case 3:
			actors = append(actors, func(seed int) { gatewayActor(base, token, listings, s, deadline, seed) })
		}
	}
	for i, act := range actors {
		wg.Add(1)
		go func() { defer wg.Done(); act(i + 1) }()
	}
	wg.Wait()
	return s.report(ctx, st, cfg, startRevision)
}

// session is one person's browser: cookies and the CSRF token of the pages.
type session struct {
	base   string
	client *http.Client
	stats  *stats
	csrf   string
}

var csrfField = regexp.MustCompile(`name="_csrf" value="([^"]+)"`)

func newSession(base string, s *stats) *session {
	jar, _ := cookiejar.New(nil)
	return &session{base: base, stats: s, client: &http.Client{Jar: jar, Timeout: 30 * time.Second,
		CheckRedirect: func(*http.Request, []*http.Request) error { return http.ErrUseLastResponse }}}
}

func (x *session) do(endpoint, method, path string, form url.Values) (int, string, string) {
	var body io.Reader
	if form != nil {
		form.Set("_csrf", x.csrf)
		body = strings.NewReader(form.Encode())
	}
	req, _ := http.NewRequest(method, x.base+path, body)
	if form != nil {
		req.Header.Set("Content-Type", "application/x-www-form-urlencoded")
	}
	start := time.Now()
	res, err := x.client.Do(req)
	if err != nil {
		x.stats.record(endpoint, 599, time.Since(start))
		return 599, "", ""
	}
	b, _ := io.ReadAll(res.Body)
	res.Body.Close()
	x.stats.record(endpoint, res.StatusCode, time.Since(start))
	if m := csrfField.FindSubmatch(b); m != nil {
		x.csrf = string(m[1])
	}
	return res.StatusCode, string(b), res.Header.Get("Location")
}

func (x *session) login(email string) {
	x.do("GET /login", "GET", "/login", nil)
	x.do("POST /login", "POST", "/login", url.Values{"email": {email}, "password": {demo.Password}})
}

var filingURL = regexp.MustCompile(`^/filings/(\d+)$`)

func carrierActor(base, who string, own []int64, s *stats, deadline time.Time, seed int) {
	rng := rand.New(rand.NewPCG(uint64(seed), 1))
	x := newSession(base, s)
	x.login(who)
	for time.Now().Before(deadline) {
		listing := own[rng.IntN(len(own))]
		path := fmt.Sprintf("/listings/%d", listing)
		x.do("GET /listings/:id/file", "GET", path+"/file", nil)
		price := fmt.Sprintf("0.%02d", 10+rng.IntN(80))
		form := url.Values{"input": {price}, "output": {"1.50"}, "landing_fee": {fmt.Sprint(5 + rng.IntN(46))}, "discount": {"0"},
			"cap_scope": {"global"}, "justification": {"soak"}, "full_form": {"1"}}
		x.do("POST /listings/:id/preview", "POST", path+"/preview", cloneForm(form))
		form.Set("op", "submit")
		status, _, location := x.do("POST /listings/:id/file", "POST", path+"/file", form)
		if status == http.StatusSeeOther {
			if m := filingURL.FindStringSubmatch(location); m != nil {
				var id int64
				fmt.Sscan(m[1], &id)
				s.mu.Lock()
				s.filed = append(s.filed, id)
				s.mu.Unlock()
			}
		}
		x.do("GET /listings", "GET", "/listings", nil)
	}
}

func cloneForm(v url.Values) url.Values {
	c := url.Values{}
	for k, vs := range v {
		c[k] = append([]string(nil), vs...)
	}
	return c
}

var (
	queueLink   = regexp.MustCompile(`href="(/filings/\d+)"`)
	seenVersion = regexp.MustCompile(`name="seen_version" value="(\d+)"`)
)

func reviewerActor(base, who string, s *stats, deadline time.Time, seed int) {
	rng := rand.New(rand.NewPCG(uint64(seed), 2))
	x := newSession(base, s)
	x.login(who)
	for time.Now().Before(deadline) {
		_, queue, _ := x.do("GET /review", "GET", "/review", nil)
		links := queueLink.FindAllStringSubmatch(queue, -1)
		if len(links) == 0 {
			time.Sleep(50 * time.Millisecond)
			continue
		}
		filing := links[rng.IntN(len(links))][1]
		_, page, _ := x.do("GET /filings/:id", "GET", filing, nil)
		// Decide the version the page showed, as a reviewer does.
		seen := ""
		if m := seenVersion.FindStringSubmatch(page); m != nil {
			seen = m[1]
		}
		var status int
		approve := rng.IntN(5) != 0
		if approve {
			status, _, _ = x.do("POST /filings/:id/approve", "POST", filing+"/approve", url.Values{"seen_version": {seen}})
		} else {
			status, _, _ = x.do("POST /filings/:id/decline", "POST", filing+"/decline", url.Values{"action": {"reject"}, "note": {"soak says no"}, "seen_version": {seen}})
		}
		if status == http.StatusSeeOther {
			s.mu.Lock()
			s.decided++
			if approve {
				s.approved++
			}
			s.mu.Unlock()
		}
	}
}

func gatewayActor(base, token string, listings []catalogue.Listing, s *stats, deadline time.Time, seed int) {
	rng := rand.New(rand.NewPCG(uint64(seed), 3))
	// The gateway speaks through the client generated from docs/openapi.yaml,
	// as a real gateway would.
	client, err := gatewayclient.NewClientWithResponses(base+"/api/v1",
		gatewayclient.WithHTTPClient(&http.Client{Timeout: 30 * time.Second}),
		gatewayclient.WithRequestEditorFn(func(_ context.Context, req *http.Request) error {
			req.Header.Set("Authorization", "Bearer "+token)
			return nil
		}))
	if err != nil {
		panic(err)
	}
	ctx := context.Background()
	timed := func(endpoint string, call func() (int, error)) {
		start := time.Now()
		status, err := call()
		if err != nil {
			status = 599
		}
		s.record(endpoint, status, time.Since(start))
	}
	var etag string
	var since int64
	for time.Now().Before(deadline) {
		switch rng.IntN(4) {
		case 0:
			timed("GET /api/v1/catalogue", func() (int, error) {
				params := &gatewayclient.GetCatalogueParams{}
				if etag != "" {
					params.IfNoneMatch = &etag
				}
				res, err := client.GetCatalogueWithResponse(ctx, params)
				if err != nil {
					return 0, err
				}
				if res.JSON200 != nil {
					etag, since = res.HTTPResponse.Header.Get("ETag"), res.JSON200.Revision
				}
				return res.StatusCode(), nil
			})
		case 1:
			timed("GET /api/v1/catalogue/changes", func() (int, error) {
				wait := "1s"
				res, err := client.GetCatalogueChangesWithResponse(ctx, &gatewayclient.GetCatalogueChangesParams{Since: since, Wait: &wait})
				if err != nil {
					return 0, err
				}
				if res.JSON200 != nil {
					since = res.JSON200.Revision
				}
				return res.StatusCode(), nil
			})
		case 2:
			l := listings[rng.IntN(len(listings))]
			prompt, streaming := int64(1000+rng.IntN(40000)), true
			timed("POST /api/v1/elect", func() (int, error) {
				res, err := client.ElectWithResponse(ctx, gatewayclient.ElectRequest{Model: l.Model.Slug, PromptTokens: &prompt, Streaming: &streaming})
				if err != nil {
					return 0, err
				}
				return res.StatusCode(), nil
			})
		case 3:
			l := listings[rng.IntN(len(listings))]
			at := time.Now().UTC().Truncate(time.Minute)
			// A gateway reports each (listing, minute) once; actors that pick
			// the same one send the same figures, as a retry would.
			fig := rand.New(rand.NewPCG(uint64(l.ID), uint64(at.Unix())))
			requests := int64(50 + fig.IntN(100))
			errs := int64(fig.IntN(3))
			ok := requests - errs
			name := l.CarrierSlug + "/" + l.Model.Slug
			bucket := gatewayclient.Bucket{Listing: &name, Minute: at, Requests: requests, Errors: &errs,
				TtftMsSum: ptr(ok * 400), OutputTokens: ptr(ok * 300), DurationMs: ptr(ok * 5000),
				InputTokens: ptr(requests * 4000), CachedInputTokens: ptr(requests * 1000)}
			timed("POST /api/v1/metrics", func() (int, error) {
				res, err := client.PostMetricsWithResponse(ctx, nil, gatewayclient.PostMetricsJSONRequestBody{Buckets: []gatewayclient.Bucket{bucket}})
				if err != nil {
					return 0, err
				}
				return res.StatusCode(), nil
			})
		}
	}
}

func ptr[T any](v T) *T { return &v }

func pctl(sorted []time.Duration, q float64) time.Duration {
	if len(sorted) == 0 {
		return 0
	}
	return sorted[int(q*float64(len(sorted)-1))]
}

// report prints the figures and checks the invariants against the database.
func (s *stats) report(ctx context.Context, st *store.Store, cfg Config, startRevision int64) (string, error) {
	var b strings.Builder
	fmt.Fprintf(&b, "soak: %s at concurrency %d on loopback (%s)\n", cfg.Duration, cfg.Concurrency, st.Dialect())
	fmt.Fprintf(&b, "%-32s %8s %8s %10s %10s  %s\n", "endpoint", "requests", "req/s", "p50", "p99", "statuses")
	endpoints := make([]string, 0, len(s.latencies))
	for e := range s.latencies {
		endpoints = append(endpoints, e)
	}
	sort.Strings(endpoints)
	total := 0
	for _, e := range endpoints {
		l := s.latencies[e]
		slices.Sort(l)
		total += len(l)
		var codes []string
		for code, n := range s.statuses[e] {
			codes = append(codes, fmt.Sprintf("%d:%d", code, n))
		}
		sort.Strings(codes)
		fmt.Fprintf(&b, "%-32s %8d %8.1f %10s %10s  %s\n", e, len(l), float64(len(l))/cfg.Duration.Seconds(),
			pctl(l, 0.5).Round(10*time.Microsecond), pctl(l, 0.99).Round(10*time.Microsecond), strings.Join(codes, " "))
	}
	fmt.Fprintf(&b, "%-32s %8d %8.1f\n", "all", total, float64(total)/cfg.Duration.Seconds())

	var broken []string
	if len(s.serverEr) > 0 {
		broken = append(broken, fmt.Sprintf("%d server errors, first: %s", len(s.serverEr), s.serverEr[0]))
	}
	filings, err := st.FindFilings(ctx, workflow.FilingFilter{})
	if err != nil {
		return b.String(), err
	}
	inDB := map[int64]workflow.Filing{}
	for _, f := range filings {
		inDB[f.ID] = f
	}
	seen := map[int64]bool{}
	for _, id := range s.filed {
		if seen[id] {
			broken = append(broken, fmt.Sprintf("filing %d reported created twice", id))
		}
		seen[id] = true
		if _, ok := inDB[id]; !ok {
			broken = append(broken, fmt.Sprintf("filing %d was reported created but is lost", id))
		}
	}
	if len(filings) != len(s.filed) {
		broken = append(broken, fmt.Sprintf("%d filings in the database, %d reported created", len(filings), len(s.filed)))
	}
	decisions, published := 0, 0
	for _, f := range filings {
		switch f.State {
		case workflow.Published:
			decisions++
			published++
		case workflow.Rejected:
			decisions++
		}
	}
	events, err := st.FindAuditEvents(ctx, audit.Filter{SubjectType: "", Limit: 1_000_000})
	if err != nil {
		return b.String(), err
	}
	audited, publishEvents := 0, 0
	for _, e := range events {
		switch e.Action {
		case "filing.approve", "filing.reject":
			audited++
		case "filing.publish":
			publishEvents++
		}
	}
	if decisions != s.decided || audited != s.decided {
		broken = append(broken, fmt.Sprintf("decisions: %d reported, %d in filings, %d audit rows", s.decided, decisions, audited))
	}
	rev, err := st.CatalogueRevision(ctx)
	if err != nil {
		return b.String(), err
	}
	if rev-startRevision != int64(published) || publishEvents != published {
		broken = append(broken, fmt.Sprintf("catalogue revision rose by %d, %d filings published, %d publish audit rows", rev-startRevision, published, publishEvents))
	}
	fmt.Fprintf(&b, "filings created %d, decisions %d (%d approved and published), catalogue revision %d -> %d\n",
		len(s.filed), s.decided, published, startRevision, rev)
	if len(broken) > 0 {
		return b.String(), fmt.Errorf("invariants broken:\n  %s", strings.Join(broken, "\n  "))
	}
	b.WriteString("invariants hold: no 5xx, no lost or duplicated filing, one audit row per decision, revision = publications\n")
	return b.String(), nil
}
