package main

import (
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"io"
	"net"
	"net/http"
	"net/http/cookiejar"
	"net/url"
	"regexp"
	"strings"
	"sync"
	"testing"
	"time"

	"github.com/airside/airside/internal/account"
	"github.com/airside/airside/internal/apitoken"
	"github.com/airside/airside/internal/catalogue"
	"github.com/airside/airside/internal/demo"
	"github.com/airside/airside/internal/store"
	"github.com/airside/airside/internal/store/storetest"
)

// opDeadline is how long any one request of the start-up burst may take
// before the test calls it stuck. A healthy portal answers in milliseconds;
// the frozen one never answered, so the bound is generous for a busy 2-core
// machine without being a hang.
const opDeadline = 20 * time.Second

// TestDemoStartUpNeverFreezes runs what `make run` runs, in this process:
// serve --demo on a fresh database, so every background worker starts
// together (the demo's preflight burst of 26 registration runs, and
// on-demand runs queued again as each finishes, well over 30 in all; the
// scheduler, alerts, webhook deliveries, the session sweep, the health
// refresh), while people log in and browse and gateways read the catalogue
// and post metrics. It runs on the embedded SQLite and on
// PostgreSQL, each with the store's settings as shipped. On the main of
// 2026-12-01 (gorm's statement cache on the single SQLite writer) this froze
// in most fresh starts: every request then waits past opDeadline and the
// test fails (TestATransactionNeverWaitsOnALoneStatement in internal/store
// replays that interleaving step by step). It also fails if any preflight
// run is left unfinished once the burst is over. Then it drains as on
// SIGTERM with a long poll open: the poll is answered at once and serve
// returns nil (exit 0).
func TestDemoStartUpNeverFreezes(t *testing.T) {
	t.Setenv("AIRSIDE_LOG_LEVEL", "error")
	// Its workers post metrics as fast as the portal answers, one token far
	// past a gateway's pace: the API quotas would turn them away (429),
	// which is right for such a client but not what this test measures.
	t.Setenv("AIRSIDE_API_LIMITS", "off")
	for _, d := range storetest.Dialects {
		t.Run(string(d), func(t *testing.T) { demoStartUpNeverFreezes(t, storetest.URL(t, d)) })
	}
}

func demoStartUpNeverFreezes(t *testing.T, dbURL string) {
	dir := t.TempDir()
	t.Chdir(dir) // the demo keeps its secret key in ./data
	token := seededWithScopes(t, dbURL, apitoken.ScopeCatalogueRead, apitoken.ScopeMetricsWrite)
	addr := freeAddr(t)
	base := "http://" + addr

	ctx, cancel := context.WithCancel(context.Background())
	defer cancel()
	served := make(chan error, 1)
	go func() {
		served <- run(ctx, []string{"serve", "--demo", "--addr", addr, "--database", dbURL, "--schedule-every", "1s"},
			strings.NewReader(""), io.Discard, io.Discard)
	}()
	waitFor(t, "the portal to answer /readyz", func() bool { return status(base+"/readyz", "") == http.StatusOK })

	// The burst: people logging in (one at a time: the address throttle is
	// on) and opening pages, a gateway reading the catalogue, for long enough
	// to span the preflight burst.
	people := map[int]*http.Client{}
	for w := 0; w < 6; w += 2 {
		c, err := logIn(base, demo.Logins[w%len(demo.Logins)].Email)
		if err != nil {
			t.Fatal(err)
		}
		people[w] = c
	}
	burstEnds := time.Now().Add(25 * time.Second)
	var wg sync.WaitGroup
	errs := make(chan error, 64)
	// A carrier admin asks for preflight again whenever a listing's run has
	// finished, through a second handle on the database (as the portal's
	// own button does): the preflight workers stay busy for the whole burst.
	probes := probeAgainAndAgain(t, dbURL, burstEnds)
	for w := range 6 {
		wg.Add(1)
		go func() {
			defer wg.Done()
			for time.Now().Before(burstEnds) {
				var err error
				if person := people[w]; person != nil {
					err = browse(person, base)
				} else if code := status(base+"/api/v1/catalogue", token); code != http.StatusOK && code != http.StatusNotModified {
					err = fmt.Errorf("catalogue: status %d", code)
				} else {
					err = postMetrics(base, token, w)
				}
				if err != nil {
					errs <- fmt.Errorf("worker %d: %w", w, err)
					return
				}
			}
		}()
	}
	wg.Wait()
	close(errs)
	for err := range errs {
		t.Error(err)
	}
	if code := status(base+"/readyz", ""); code != http.StatusOK {
		t.Fatalf("/readyz after the burst: %d", code)
	}
	probes.wait(t)

	// The drain: a long poll held open, then the signal.
	var rev struct {
		Revision int64 `json:"revision"`
	}
	if err := getJSON(base+"/api/v1/catalogue/changes?since=0", token, &rev); err != nil {
		t.Fatal(err)
	}
	polled := make(chan int, 1)
	go func() {
		// At the current revision: held until something is published (a
		// revision ahead of the catalogue would be refused at once).
		polled <- status(fmt.Sprintf("%s/api/v1/catalogue/changes?since=%d&wait=60s", base, rev.Revision), token)
	}()
	time.Sleep(300 * time.Millisecond) // let the poll be held (it answers 200 either way)
	cancel()
	select {
	case code := <-polled:
		if code != http.StatusOK {
			t.Errorf("long poll during the drain: status %d, want 200", code)
		}
	case <-time.After(opDeadline):
		t.Fatal("the long poll was not answered when the process drained")
	}
	select {
	case err := <-served:
		if err != nil {
			t.Errorf("serve after the drain: %v, want a clean exit", err)
		}
	case <-time.After(30 * time.Second):
		t.Fatal("serve did not return after the drain")
	}
}

// postMetrics posts one bucket for a demo listing, as a gateway does each
// minute (the same figures for a minute, so a repeat is a harmless replay).
func postMetrics(base, token string, worker int) error {
	minute := time.Now().UTC().Truncate(time.Minute).Format(time.RFC3339)
	body := fmt.Sprintf(`{"buckets":[{"listingId":%d,"minute":%q,"requests":3,"errors":0,"ttftMsSum":900,"outputTokens":300,"durationMs":3000,"inputTokens":3000}]}`,
		1+worker, minute)
	req, _ := http.NewRequest(http.MethodPost, base+"/api/v1/metrics", strings.NewReader(body))
	req.Header.Set("Authorization", "Bearer "+token)
	req.Header.Set("Content-Type", "application/json")
	res, err := client.Do(req)
	if err != nil {
		return fmt.Errorf("metrics: %w", err)
	}
	io.Copy(io.Discard, res.Body)
	res.Body.Close()
	if res.StatusCode != http.StatusAccepted {
		return fmt.Errorf("metrics: status %d", res.StatusCode)
	}
	return nil
}

// preflightBurst is the test's stream of on-demand preflight runs.
type preflightBurst struct {
	st       *store.Store
	listings []catalogue.Listing
	queued   chan int
}

// probeAgainAndAgain queues an on-demand preflight of every demo listing
// whose last run is done, over and over until the burst ends.
func probeAgainAndAgain(t *testing.T, dbURL string, until time.Time) *preflightBurst {
	t.Helper()
	st, err := store.Open(context.Background(), dbURL)
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { st.Close() })
	admin, err := st.FindUserByEmail(context.Background(), "admin@airside.example")
	if err != nil {
		t.Fatal(err)
	}
	b := &preflightBurst{st: st, queued: make(chan int, 1)}
	go func() {
		queued := 0
		defer func() { b.queued <- queued }()
		for time.Now().Before(until) {
			ctx, cancel := context.WithTimeout(context.Background(), opDeadline)
			listings, err := st.FindListings(ctx, catalogue.ListingFilter{StoredHealth: true})
			cancel()
			if err != nil {
				t.Errorf("listings: %v", err)
				return
			}
			b.listings = listings
			for _, l := range listings {
				ctx, cancel := context.WithTimeout(context.Background(), opDeadline)
				id, err := st.RequestPreflight(ctx, admin.ID, l.ID, 0)
				cancel()
				if errors.Is(err, context.DeadlineExceeded) {
					t.Errorf("queueing a preflight of listing %d waited past %s", l.ID, opDeadline)
					return
				}
				if err == nil && id > 0 {
					queued++
				}
			}
			time.Sleep(200 * time.Millisecond)
		}
	}()
	return b
}

// wait checks that the burst held at least 30 runs in all (the demo's 26
// registrations and those queued here) and that every listing's last run
// finishes: none is left running with its verdicts unapplied.
func (b *preflightBurst) wait(t *testing.T) {
	t.Helper()
	queued := <-b.queued
	t.Logf("preflight burst: %d registration runs and %d on demand", demoRegistrations, queued)
	if got := demoRegistrations + queued; got < 30 {
		t.Errorf("the preflight burst held %d runs, want at least 30", got)
	}
	waitFor(t, "every preflight run to finish", func() bool {
		for _, l := range b.listings {
			if l.Endpoint == nil {
				continue
			}
			run, _, err := b.st.FindPreflightRuns(context.Background(), l.ID, l.Endpoint.ID)
			if err != nil || run.Busy() {
				return false
			}
		}
		return true
	})
}

// demoRegistrations is how many preflight runs the demo queues at start-up
// (one per demo listing with a fake endpoint).
const demoRegistrations = 26

// seededWithScopes seeds the demo and makes an API token with the scopes.
func seededWithScopes(t *testing.T, dbURL string, scopes ...string) string {
	t.Helper()
	if _, stderr, err := runCmd(t, "", "seed", "--demo", "--database", dbURL); err != nil {
		t.Fatalf("seed: %v %s", err, stderr)
	}
	st, err := store.Open(context.Background(), dbURL)
	if err != nil {
		t.Fatal(err)
	}
	defer st.Close()
	admin, err := st.FindUserByEmail(context.Background(), "admin@airside.example")
	if err != nil {
		t.Fatal(err)
	}
	// Live token names are unique: one per call.
	tok, err := apitoken.NewService(st).Create(context.Background(), &account.Principal{User: *admin}, fmt.Sprintf("gateway %d", time.Now().UnixNano()), scopes)
	if err != nil {
		t.Fatal(err)
	}
	return tok
}

func freeAddr(t *testing.T) string {
	t.Helper()
	l, err := net.Listen("tcp", "127.0.0.1:0")
	if err != nil {
		t.Fatal(err)
	}
	defer l.Close()
	return l.Addr().String()
}

func waitFor(t *testing.T, what string, ok func() bool) {
	t.Helper()
	deadline := time.Now().Add(2 * time.Minute)
	for !ok() {
		if time.Now().After(deadline) {
			t.Fatalf("gave up waiting for %s", what)
		}
		time.Sleep(100 * time.Millisecond)
	}
}

var client = &http.Client{Timeout: opDeadline}

func status(u, token string) int {
	req, _ := http.NewRequest(http.MethodGet, u, nil)
	if token != "" {
		req.Header.Set("Authorization", "Bearer "+token)
	}
	res, err := client.Do(req)
	if err != nil {
		return 0
	}
	io.Copy(io.Discard, res.Body)
	res.Body.Close()
	return res.StatusCode
}

func getJSON(u, token string, v any) error {
	req, _ := http.NewRequest(http.MethodGet, u, nil)
	req.Header.Set("Authorization", "Bearer "+token)
	res, err := client.Do(req)
	if err != nil {
		return err
	}
	defer res.Body.Close()
	return json.NewDecoder(res.Body).Decode(v)
}

var csrfField = regexp.MustCompile(`name="_csrf" value="([^"]+)"`)

// logIn logs in as a person would (the form, its CSRF token, the POST, which
// writes a session), each step within opDeadline.
func logIn(base, email string) (*http.Client, error) {
	jar, _ := cookiejar.New(nil)
	c := &http.Client{Jar: jar, Timeout: opDeadline}
	res, err := c.Get(base + "/login")
	if err != nil {
		return nil, fmt.Errorf("login page: %w", err)
	}
	page, _ := io.ReadAll(res.Body)
	res.Body.Close()
	m := csrfField.FindSubmatch(page)
	if m == nil {
		return nil, fmt.Errorf("login page without a CSRF field (status %d)", res.StatusCode)
	}
	form := url.Values{"email": {email}, "password": {demo.Password}, "_csrf": {string(m[1])}}
	req, _ := http.NewRequest(http.MethodPost, base+"/login", strings.NewReader(form.Encode()))
	req.Header.Set("Content-Type", "application/x-www-form-urlencoded")
	req.Header.Set("Origin", base)
	res, err = c.Do(req)
	if err != nil {
		return nil, fmt.Errorf("log in: %w", err)
	}
	io.Copy(io.Discard, res.Body)
	res.Body.Close()
	if res.StatusCode != http.StatusOK {
		return nil, fmt.Errorf("log in as %s: status %d", email, res.StatusCode)
	}
	return c, nil
}

// browse opens the pages a person opens first; each read touches the
// session (a write on the one SQLite writer).
func browse(c *http.Client, base string) error {
	for _, page := range []string{"/listings", "/inbox"} {
		res, err := c.Get(base + page)
		if err != nil {
			return fmt.Errorf("%s: %w", page, err)
		}
		io.Copy(io.Discard, res.Body)
		res.Body.Close()
		if res.StatusCode != http.StatusOK {
			return fmt.Errorf("%s: status %d", page, res.StatusCode)
		}
	}
	return nil
}
