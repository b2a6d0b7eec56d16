package main

import (
	"bufio"
	"context"
	"encoding/json"
	"io"
	"net"
	"net/http"
	"net/http/httptest"
	"net/http/httputil"
	"net/url"
	"os"
	"os/exec"
	"path/filepath"
	"strconv"
	"strings"
	"sync/atomic"
	"syscall"
	"testing"
	"time"

	"github.com/airside/airside/internal/apitoken"
	"github.com/airside/airside/internal/gateway"
	"github.com/airside/airside/internal/store"
)

// helperArgsEnv carries the arguments of `airside` to run in a child
// process of the test binary (TestHelperProcess): a process the test can
// kill -9.
const helperArgsEnv = "AIRSIDE_TEST_HELPER_ARGS"

// TestHelperProcess is not a test: run as a child with helperArgsEnv set,
// it is `airside` with those arguments.
func TestHelperProcess(t *testing.T) {
	raw := os.Getenv(helperArgsEnv)
	if raw == "" {
		t.Skip("runs only as a child process of another test")
	}
	var args []string
	if err := json.Unmarshal([]byte(raw), &args); err != nil {
		t.Fatal(err)
	}
	code := 0
	if err := run(context.Background(), args, strings.NewReader(""), os.Stdout, os.Stderr); err != nil {
		code = 1
		if e, ok := err.(exitError); ok {
			code = int(e)
		}
	}
	os.Exit(code)
}

// airsideProcess starts `airside args...` as a child process, the files
// given from its descriptor 3 on.
func airsideProcess(t *testing.T, env []string, files []*os.File, args ...string) *exec.Cmd {
	t.Helper()
	raw, _ := json.Marshal(args)
	cmd := exec.Command(os.Args[0], "-test.run=^TestHelperProcess$")
	cmd.Env = append(append(os.Environ(), helperArgsEnv+"="+string(raw)), env...)
	cmd.ExtraFiles = files
	logs, err := os.Create(filepath.Join(t.TempDir(), "log"))
	if err != nil {
		t.Fatal(err)
	}
	cmd.Stdout, cmd.Stderr = logs, logs
	if err := cmd.Start(); err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() {
		_ = cmd.Process.Kill()
		_ = cmd.Wait()
		logs.Close()
		if t.Failed() {
			out, _ := os.ReadFile(logs.Name())
			t.Logf("%s:\n%s", strings.Join(args[:1], " "), out)
		}
	})
	return cmd
}

// TestAGatewayRestartedOrKilledLosesNoReport: a gateway serves, is
// restarted under the same name in the middle of a minute (SIGTERM: it
// posts its part), serves again and is killed with SIGKILL (it posts
// nothing); the next process on the same spool posts what the killed one
// counted. The portal then stores exactly the requests the customers had
// answered, each once (before the spool, the kill lost every minute not
// yet posted).
func TestAGatewayRestartedOrKilledLosesNoReport(t *testing.T) {
	dir, portal, config, dbURL, token := gatewayFixture(t)
	const model = "kimi-k2.5"
	var ids []int64
	for _, l := range modelListings(t, dbURL, model) {
		ids = append(ids, l.ID)
	}
	spool := filepath.Join(dir, "spool")
	gw, metrics := "http://"+freeAddr(t), freeAddr(t)
	start := func() *exec.Cmd {
		cmd := airsideProcess(t, []string{"AIRSIDE_GATEWAY_TOKEN=" + token, "AIRSIDE_LOG_LEVEL=warn"}, nil,
			"gateway", "--addr", strings.TrimPrefix(gw, "http://"), "--portal", portal, "--config", config, "--name", "gw-kill",
			"--spool", spool, "--report-every", "1s", "--seed", "1", "--allow-private-carriers", "--metrics-addr", metrics)
		waitFor(t, "the gateway to read the catalogue", func() bool { return status(gw+"/healthz", "") == http.StatusOK })
		return cmd
	}
	answered := 0
	send := func(n int) {
		for range n {
			if servedBy(t, gw, model) != "" {
				answered++
			}
		}
	}

	// What the portal holds already (the demo's history) is not ours.
	began := time.Now()
	storedBefore := storedRequests(t, dbURL, ids, began)
	first := start()
	send(15)
	if err := first.Process.Signal(syscall.SIGTERM); err != nil {
		t.Fatal(err)
	}
	if err := first.Wait(); err != nil {
		t.Fatalf("the first gateway did not stop cleanly: %v", err)
	}
	second := start()
	before := answered
	send(25)
	// Every answer the customers have is counted (the count follows the
	// answer by microseconds): then the kill.
	waitFor(t, "the second gateway to count its answers", func() bool { return answeredCount(metrics) == answered-before })
	if err := second.Process.Kill(); err != nil {
		t.Fatal(err)
	}
	_ = second.Wait()
	if left, _ := os.ReadDir(spool); len(left) == 0 {
		t.Fatal("the killed gateway left nothing in the spool")
	}

	third := start()
	stored := func() int64 { return storedRequests(t, dbURL, ids, began) - storedBefore }
	waitFor(t, "the portal to store every answered request", func() bool { return stored() >= int64(answered) })
	// The counts come first; the killed process's other reports (demand,
	// holders, organisations) follow, and its folder goes once all are
	// posted. A stop before that leaves them for a later process, rightly:
	// wait for it, rather than racing it on a busy machine.
	waitFor(t, "the third gateway to post everything the killed one left", func() bool {
		portals, _ := os.ReadDir(spool)
		return len(portals) == 1 && processFolders(t, filepath.Join(spool, portals[0].Name())) <= 1
	})
	if err := third.Process.Signal(syscall.SIGTERM); err != nil {
		t.Fatal(err)
	}
	_ = third.Wait()
	if requests := stored(); requests != int64(answered) || answered != 40 {
		t.Errorf("the portal stores %d requests, want the %d answered (of 40)", requests, answered)
	}
	if left, _ := os.ReadDir(filepath.Join(spool)); len(left) != 1 {
		t.Errorf("%d portal folders in the spool, want 1", len(left))
	} else if folders := processFolders(t, filepath.Join(spool, left[0].Name())); folders != 0 {
		t.Errorf("%d process folders left in the spool after every count was posted", folders)
	}
}

// processFolders counts the process folders in a portal's spool folder
// (beside them lies the routing snapshot).
func processFolders(t *testing.T, dir string) int {
	t.Helper()
	entries, err := os.ReadDir(dir)
	if err != nil {
		t.Fatal(err)
	}
	n := 0
	for _, e := range entries {
		if e.IsDir() {
			n++
		}
	}
	return n
}

// TestAGatewayRestartedWhileThePortalIsAwayRoutes: a gateway follows the
// portal through a front the test can close, holds every listing's
// credentials and is stopped; with the portal away (the front answers
// 503), a new process on the same spool routes every listing of the
// model from the sealed snapshot the first one left, each pinned in turn
// (before, it answered 503 "no catalogue read yet" until the portal came
// back). The portal back, it follows it again.
func TestAGatewayRestartedWhileThePortalIsAwayRoutes(t *testing.T) {
	dir, portal, config, dbURL, token := gatewayFixture(t)
	const model = "kimi-k2.5"
	listings := modelListings(t, dbURL, model)
	target, err := url.Parse(portal)
	if err != nil {
		t.Fatal(err)
	}
	var away atomic.Bool
	proxy := httputil.NewSingleHostReverseProxy(target)
	front := httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		if away.Load() {
			http.Error(w, "the portal is away", http.StatusServiceUnavailable)
			return
		}
		proxy.ServeHTTP(w, r)
	}))
	t.Cleanup(front.Close)
	spool := filepath.Join(dir, "spool")
	gw := "http://" + freeAddr(t)
	start := func() *exec.Cmd {
		return airsideProcess(t, []string{"AIRSIDE_GATEWAY_TOKEN=" + token, "AIRSIDE_LOG_LEVEL=warn"}, nil,
			"gateway", "--addr", strings.TrimPrefix(gw, "http://"), "--portal", front.URL, "--config", config,
			"--spool", spool, "--allow-private-carriers")
	}
	first := start()
	waitFor(t, "the gateway to read the catalogue", func() bool { return status(gw+"/healthz", "") == http.StatusOK })
	waitFor(t, "the snapshot to be saved", func() bool {
		saved, _ := filepath.Glob(filepath.Join(spool, "*", "routing.sealed"))
		return len(saved) == 1
	})
	if err := first.Process.Signal(syscall.SIGTERM); err != nil {
		t.Fatal(err)
	}
	_ = first.Wait()

	away.Store(true)
	start()
	waitFor(t, "the restarted gateway to route from its snapshot", func() bool { return status(gw+"/healthz", "") == http.StatusOK })
	if body := getText(t, gw+"/healthz"); !strings.Contains(body, "from the saved snapshot") || strings.Contains(body, "without credentials") {
		t.Errorf("healthz with the portal away: %q", body)
	}
	for _, l := range listings {
		id := l.CarrierSlug + "/" + model
		if got := servedBy(t, gw, id); got != id {
			t.Errorf("pinned to %s with the portal away: served by %q", id, got)
		}
	}
	if got := servedBy(t, gw, model); got == "" {
		t.Errorf("%s with the portal away: not served", model)
	}
	away.Store(false)
	waitFor(t, "the gateway to follow the portal again", func() bool {
		return !strings.Contains(getText(t, gw+"/healthz"), "from the saved snapshot")
	})
}

func getText(t *testing.T, u string) string {
	t.Helper()
	res, err := client.Get(u)
	if err != nil {
		return err.Error()
	}
	defer res.Body.Close()
	body, _ := io.ReadAll(res.Body)
	return string(body)
}

// answeredCount reads the gateway's answered chat requests (2xx) off its
// metrics endpoint.
func answeredCount(addr string) int {
	res, err := client.Get("http://" + addr + "/metrics")
	if err != nil {
		return -1
	}
	defer res.Body.Close()
	lines := bufio.NewScanner(res.Body)
	for lines.Scan() {
		if rest, ok := strings.CutPrefix(lines.Text(), `airside_gateway_chat_requests_total{code="2xx"} `); ok {
			n, _ := strconv.ParseFloat(rest, 64)
			return int(n)
		}
	}
	return 0
}

// storedRequests is the requests the portal stores for the listings in the
// hours around since.
func storedRequests(t *testing.T, dbURL string, ids []int64, since time.Time) (requests int64) {
	t.Helper()
	st, err := store.Open(context.Background(), dbURL)
	if err != nil {
		t.Fatal(err)
	}
	defer st.Close()
	hours, err := st.HourlyTraffic(context.Background(), ids, since.Add(-time.Hour), time.Now().Add(time.Hour))
	if err != nil {
		t.Fatal(err)
	}
	for _, points := range hours {
		for _, h := range points {
			requests += h.Requests
		}
	}
	return requests
}

// gatewayFixture is a demo portal with its fake carriers (in this process)
// and what a gateway needs to follow it: its folder, the portal's URL, a
// projects file (key sk-e2e-project), the database and an API token.
func gatewayFixture(t *testing.T) (dir, portal, config, dbURL, token string) {
	return gatewayFixtureOn(t, "")
}

// gatewayFixtureOn is gatewayFixture on the database at dbURL (empty: a
// SQLite file in the folder).
func gatewayFixtureOn(t *testing.T, dbURL string) (dir, portal, config, _, token string) {
	t.Setenv("AIRSIDE_LOG_LEVEL", "error")
	dir = t.TempDir()
	t.Chdir(dir)
	if dbURL == "" {
		dbURL = "sqlite:" + filepath.Join(dir, "airside.db")
	}
	token = seededWithScopes(t, dbURL, apitoken.ScopeCatalogueRead, apitoken.ScopeCredentialsRead, apitoken.ScopeMetricsWrite)
	ctx, cancel := context.WithCancel(context.Background())
	portal = "http://" + freeAddr(t)
	served := make(chan error, 1)
	go func() {
		served <- run(ctx, []string{"serve", "--demo", "--addr", strings.TrimPrefix(portal, "http://"), "--database", dbURL},
			strings.NewReader(""), io.Discard, io.Discard)
	}()
	t.Cleanup(func() { cancel(); <-served })
	waitFor(t, "the portal to answer /readyz", func() bool { return status(portal+"/readyz", "") == http.StatusOK })
	config = filepath.Join(dir, "gateway.json")
	data, _ := json.Marshal(gateway.Config{Projects: []gateway.Project{{Name: "e2e", APIKey: "sk-e2e-project", Organisation: "e2e"}}})
	if err := os.WriteFile(config, data, 0o600); err != nil {
		t.Fatal(err)
	}
	return dir, portal, config, dbURL, token
}

// TestARestartRefusesNoConnection: the gateway takes its listening socket
// from whoever started it (LISTEN_FDS, as systemd's socket activation
// hands it); a new process starts on the same socket, the old one is sent
// SIGTERM and drains, and customers sending one request after another,
// each on a new connection, see not one refused or failed request.
func TestARestartRefusesNoConnection(t *testing.T) {
	_, portal, config, _, token := gatewayFixture(t)
	ln, err := net.Listen("tcp", "127.0.0.1:0")
	if err != nil {
		t.Fatal(err)
	}
	defer ln.Close()
	socket, err := ln.(*net.TCPListener).File()
	if err != nil {
		t.Fatal(err)
	}
	defer socket.Close()
	gw := "http://" + ln.Addr().String()
	start := func(metrics string) *exec.Cmd {
		return airsideProcess(t, []string{"AIRSIDE_GATEWAY_TOKEN=" + token, "AIRSIDE_LOG_LEVEL=warn", "LISTEN_FDS=1"}, []*os.File{socket},
			"gateway", "--portal", portal, "--config", config, "--spool", "off", "--allow-private-carriers", "--metrics-addr", metrics)
	}
	oldMetrics, newMetrics := freeAddr(t), freeAddr(t)
	old := start(oldMetrics)
	waitFor(t, "the first gateway to read the catalogue", func() bool { return status(gw+"/healthz", "") == http.StatusOK })

	// Each request on a new connection: a refused connect would show.
	c := runCustomers(&http.Client{Timeout: time.Minute, Transport: &http.Transport{DisableKeepAlives: true}}, "kimi-k2.5",
		func(int) (string, func(bool), bool) { return gw, nil, true })
	defer c.halt()
	ok, failed, lastFailure := &c.answered, &c.failed, &c.lastFailure
	waitFor(t, "customers' requests through the first gateway", func() bool { return ok.Load() >= 20 })
	_ = start(newMetrics)
	waitFor(t, "the second gateway to serve", func() bool { return answeredCount(newMetrics) > 0 })
	if err := old.Process.Signal(syscall.SIGTERM); err != nil {
		t.Fatal(err)
	}
	if err := old.Wait(); err != nil {
		t.Fatalf("the first gateway did not stop cleanly: %v", err)
	}
	after := ok.Load()
	waitFor(t, "customers' requests after the first gateway stopped", func() bool { return ok.Load() >= after+20 })
	c.halt()
	if n := failed.Load(); n > 0 {
		t.Errorf("%d of %d requests failed over the restart (the last: %v)", n, n+ok.Load(), lastFailure.Load())
	}
}

// customerRun is customers sending one chat request after another until
// halted, counting what was answered and what failed.
type customerRun struct {
	answered, failed atomic.Int64
	lastFailure      atomic.Value
	stop, sent       chan struct{}
}

// runCustomers sends requests for model, the n-th to the gateway next
// names (ok false: none this turn), calling settle, when given, once it is
// answered (true) or failed.
func runCustomers(client *http.Client, model string, next func(n int) (base string, settle func(answered bool), ok bool)) *customerRun {
	c := &customerRun{stop: make(chan struct{}), sent: make(chan struct{})}
	go func() {
		defer close(c.sent)
		for n := 0; ; n++ {
			select {
			case <-c.stop:
				return
			default:
			}
			base, settle, ok := next(n)
			if !ok {
				continue
			}
			answered := c.send(client, base, model)
			if settle != nil {
				settle(answered)
			}
		}
	}()
	return c
}

func (c *customerRun) send(client *http.Client, base, model string) bool {
	req, _ := http.NewRequest(http.MethodPost, base+"/v1/chat/completions",
		strings.NewReader(`{"model":"`+model+`","messages":[{"role":"user","content":"hello"}]}`))
	req.Header.Set("Authorization", "Bearer sk-e2e-project")
	req.Header.Set("Content-Type", "application/json")
	res, err := client.Do(req)
	if err != nil {
		c.failed.Add(1)
		c.lastFailure.Store(err.Error())
		return false
	}
	io.Copy(io.Discard, res.Body)
	res.Body.Close()
	if res.StatusCode != http.StatusOK {
		c.failed.Add(1)
		c.lastFailure.Store(res.Status)
		return false
	}
	c.answered.Add(1)
	return true
}

// halt stops the customers and waits for the last request (idempotent).
func (c *customerRun) halt() {
	select {
	case <-c.stop:
	default:
		close(c.stop)
	}
	<-c.sent
}
