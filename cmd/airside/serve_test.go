package main

import (
	"context"
	"encoding/json"
	"fmt"
	"io"
	"net"
	"net/http"
	"net/http/cookiejar"
	"net/url"
	"path/filepath"
	"regexp"
	"strings"
	"sync"
	"testing"
	"time"

	"github.com/airside/airside/internal/account"
	"github.com/airside/airside/internal/apitoken"
	"github.com/airside/airside/internal/demo"
	"github.com/airside/airside/internal/store"
)

// opDeadline is how long any one request of the start-up burst may take
// before the test calls it stuck. A healthy portal answers in milliseconds;
// the frozen one never answered, so the bound is generous for a busy 2-core
// machine without being a hang.
const opDeadline = 20 * time.Second

// TestDemoStartUpNeverFreezes runs what `make run` runs, in this process:
// serve --demo --simulate on a fresh embedded database, so every background
// worker starts together (the demo's preflight burst of 26 runs, the
// scheduler, alerts, webhook deliveries, the session sweep, the health
// refresh, the traffic simulation), while people log in and file and a
// gateway reads the catalogue. On the main of 2026-12-01 (gorm's statement
// cache on the single SQLite writer) this froze in most fresh starts: every
// request then waits past opDeadline and the test fails. Then it drains as on
// SIGTERM with a long poll open: the poll is answered at once and serve
// returns nil (exit 0).
func TestDemoStartUpNeverFreezes(t *testing.T) {
	t.Setenv("AIRSIDE_LOG_LEVEL", "error")
	dir := t.TempDir()
	t.Chdir(dir) // the demo keeps its secret key in ./data
	dbURL := "sqlite:" + filepath.Join(dir, "airside.db")
	token := seededWithToken(t, dbURL)
	addr := freeAddr(t)
	base := "http://" + addr

	ctx, cancel := context.WithCancel(context.Background())
	defer cancel()
	served := make(chan error, 1)
	go func() {
		served <- run(ctx, []string{"serve", "--demo", "--simulate", "--addr", addr, "--database", dbURL, "--schedule-every", "1s"},
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

	// The drain: a long poll held open, then the signal.
	var rev struct {
		Revision int64 `json:"revision"`
	}
	if err := getJSON(base+"/api/v1/catalogue/changes?since=0", token, &rev); err != nil {
		t.Fatal(err)
	}
	polled := make(chan int, 1)
	go func() {
		polled <- status(fmt.Sprintf("%s/api/v1/catalogue/changes?since=%d&wait=60s", base, rev.Revision+1000), token)
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

func seededWithToken(t *testing.T, dbURL string) string {
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
	tok, err := apitoken.NewService(st).Create(context.Background(), &account.Principal{User: *admin}, "gateway", []string{apitoken.ScopeCatalogueRead})
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
