package web_test

import (
	"context"
	"database/sql"
	"io"
	"log/slog"
	"net/http"
	"net/http/cookiejar"
	"net/http/httptest"
	"net/url"
	"regexp"
	"strings"
	"testing"
	"time"

	"github.com/airside/airside/cmd/airside/wire"
	"github.com/airside/airside/internal/demo"
	"github.com/airside/airside/internal/store"
	"github.com/airside/airside/internal/store/storetest"
	"github.com/airside/airside/web"
)

// testPortal is the real portal on a fresh, demo-seeded database.
type testPortal struct {
	t      *testing.T
	srv    *httptest.Server
	store  *store.Store
	server *web.Server
}

func newPortal(t *testing.T, d store.Dialect) *testPortal {
	t.Helper()
	return portalOn(t, storetest.Open(t, d), io.Discard)
}

// portalOn is the real portal on st, demo-seeded, logging to log.
func portalOn(t *testing.T, st *store.Store, log io.Writer) *testPortal {
	t.Helper()
	if _, err := demo.Seed(context.Background(), st); err != nil {
		t.Fatal(err)
	}
	server := wire.Portal(st, wire.Config{Log: slog.New(slog.NewTextHandler(log, nil))})
	withoutSafeguards(server)
	srv := httptest.NewServer(server.Handler())
	t.Cleanup(srv.Close)
	return &testPortal{t: t, srv: srv, store: st, server: server}
}

// withoutSafeguards turns off the notice period and the quarantine for the
// tests of other rules, whose fares move prices freely on demo listings;
// safeguard_test.go tests them with the defaults.
func withoutSafeguards(s *web.Server) {
	s.FilingsForTest().Notice, s.FilingsForTest().QuarantineFactor = -1, -1
}

// client is one browser: it keeps cookies and never follows redirects, so
// tests see every 303.
type client struct {
	t    *testing.T
	base string
	http *http.Client
	// header is added to every request (e.g. Sec-Fetch-Site).
	header http.Header
}

func (p *testPortal) client() *client {
	jar, _ := cookiejar.New(nil)
	return &client{t: p.t, base: p.srv.URL, header: http.Header{}, http: &http.Client{
		Jar:           jar,
		CheckRedirect: func(*http.Request, []*http.Request) error { return http.ErrUseLastResponse },
	}}
}

type response struct {
	status   int
	body     string
	location string
	header   http.Header
	cookies  []*http.Cookie
}

func (c *client) do(req *http.Request) response {
	c.t.Helper()
	for k, v := range c.header {
		req.Header[k] = v
	}
	res, err := c.http.Do(req)
	if err != nil {
		c.t.Fatal(err)
	}
	defer res.Body.Close()
	body, _ := io.ReadAll(res.Body)
	return response{status: res.StatusCode, body: string(body), location: res.Header.Get("Location"), header: res.Header, cookies: res.Cookies()}
}

func (c *client) get(path string) response {
	c.t.Helper()
	req, _ := http.NewRequest("GET", c.base+path, nil)
	return c.do(req)
}

// postRaw posts a form as is, with no CSRF token added.
func (c *client) postRaw(path string, form url.Values) response {
	c.t.Helper()
	req, _ := http.NewRequest("POST", c.base+path, strings.NewReader(form.Encode()))
	req.Header.Set("Content-Type", "application/x-www-form-urlencoded")
	return c.do(req)
}

var (
	csrfField = regexp.MustCompile(`name="_csrf" value="([^"]+)"`)
	seenField = regexp.MustCompile(`name="(seen_[a-z]+)" value="(\d+)"`)
)

// post submits a form the way a person would: it loads formPage first and
// sends the CSRF token found there, and the version the page shows (the
// seen_* fields of decision and verification forms) unless form sets one.
func (c *client) post(formPage, path string, form url.Values) response {
	c.t.Helper()
	page := c.get(formPage)
	m := csrfField.FindStringSubmatch(page.body)
	if m == nil {
		c.t.Fatalf("no CSRF token on %s (status %d)", formPage, page.status)
	}
	form.Set("_csrf", m[1])
	for _, seen := range seenField.FindAllStringSubmatch(page.body, -1) {
		if form.Get(seen[1]) == "" {
			form.Set(seen[1], seen[2])
		}
	}
	return c.postRaw(path, form)
}

func (c *client) login(email string) {
	c.t.Helper()
	res := c.post("/login", "/login", url.Values{"email": {email}, "password": {demo.Password}})
	if res.status != http.StatusSeeOther {
		c.t.Fatalf("login as %s: status %d\n%s", email, res.status, res.body)
	}
}

func (c *client) cookie(name string) *http.Cookie {
	u, _ := url.Parse(c.base)
	for _, ck := range c.http.Jar.Cookies(u) {
		if ck.Name == name {
			return ck
		}
	}
	return nil
}

func wantStatus(t *testing.T, what string, res response, want int) {
	t.Helper()
	if res.status != want {
		t.Errorf("%s: status %d, want %d\n%.600s", what, res.status, want, res.body)
	}
}

// twoProcesses is two serve processes on one fresh PostgreSQL database with
// the demo seeded: A publishes, B listens (LISTEN/NOTIFY) and only a
// notification may wake or refresh it (its periodic re-checks are off).
type twoProcesses struct {
	dbURL      string
	stA, stB   *store.Store
	a, b       *web.Server
	srvA, srvB *httptest.Server
	portalA    *testPortal
}

func newTwoProcesses(t *testing.T) *twoProcesses {
	t.Helper()
	ctx := context.Background()
	tp := &twoProcesses{dbURL: storetest.URL(t, store.Postgres)}
	open := func() *store.Store {
		st, err := store.Open(ctx, tp.dbURL)
		if err != nil {
			t.Fatal(err)
		}
		t.Cleanup(func() { st.Close() })
		return st
	}
	tp.stA = open()
	if err := tp.stA.Migrate(ctx); err != nil {
		t.Fatal(err)
	}
	if _, err := demo.Seed(ctx, tp.stA); err != nil {
		t.Fatal(err)
	}
	tp.stB = open()
	quiet := slog.New(slog.NewTextHandler(io.Discard, nil))
	tp.a, tp.b = wire.Portal(tp.stA, wire.Config{Log: quiet}), wire.Portal(tp.stB, wire.Config{Log: quiet})
	withoutSafeguards(tp.a)
	withoutSafeguards(tp.b)
	tp.b.LongPollRecheck = time.Hour
	tp.b.KeeperForTest().HealthEvery = time.Hour
	tp.srvA, tp.srvB = httptest.NewServer(tp.a.Handler()), httptest.NewServer(tp.b.Handler())
	t.Cleanup(tp.srvA.Close)
	t.Cleanup(tp.srvB.Close)
	listenCtx, stop := context.WithCancel(ctx)
	t.Cleanup(stop)
	go tp.stB.ListenForPublications(listenCtx, func(err error) { t.Logf("listener: %v", err) })
	time.Sleep(300 * time.Millisecond) // LISTEN established
	tp.portalA = &testPortal{t: t, srv: tp.srvA, store: tp.stA, server: tp.a}
	return tp
}

// pgAdmin is a connection to the PostgreSQL server the test database is on,
// and that database's name, for tests that act on the server (an outage, a
// read-only database); closed when the test ends.
func pgAdmin(t *testing.T, dbURL string) (*sql.DB, string) {
	t.Helper()
	u, _ := url.Parse(dbURL)
	admin, err := sql.Open("pgx", storetest.AdminURL())
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { admin.Close() })
	return admin, strings.TrimPrefix(u.Path, "/")
}

// dropConnections ends every connection to the database but the caller's.
func dropConnections(t *testing.T, admin *sql.DB, name string) {
	t.Helper()
	if _, err := admin.Exec("SELECT pg_terminate_backend(pid) FROM pg_stat_activity WHERE datname = $1 AND pid <> pg_backend_pid()", name); err != nil {
		t.Fatal(err)
	}
}

// pgOutage makes the database refuse connections and drops every open one
// (down), or lets it back; the database is let back when the test ends.
func pgOutage(t *testing.T, dbURL string) func(down bool) {
	t.Helper()
	admin, name := pgAdmin(t, dbURL)
	outage := func(down bool) {
		t.Helper()
		allow := "true"
		if down {
			allow = "false"
		}
		if _, err := admin.Exec("ALTER DATABASE " + name + " WITH ALLOW_CONNECTIONS " + allow); err != nil {
			t.Fatal(err)
		}
		if down {
			dropConnections(t, admin, name)
		}
	}
	t.Cleanup(func() { outage(false) })
	return outage
}
