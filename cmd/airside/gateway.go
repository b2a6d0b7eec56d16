package main

import (
	"context"
	crand "crypto/rand"
	"crypto/sha256"
	"encoding/hex"
	"encoding/json"
	"errors"
	"flag"
	"fmt"
	"io"
	"math/rand/v2"
	"net"
	"net/http"
	"os"
	"os/exec"
	"os/signal"
	"path/filepath"
	"strconv"
	"strings"
	"syscall"
	"time"

	"github.com/airside/airside/internal/account"
	"github.com/airside/airside/internal/apitoken"
	"github.com/airside/airside/internal/election"
	"github.com/airside/airside/internal/fleet"
	"github.com/airside/airside/internal/gateway"
	"github.com/airside/airside/internal/gatewayclient"
	"github.com/airside/airside/internal/netguard"
	"github.com/airside/airside/internal/tracing"
	"github.com/airside/airside/internal/trafficdriver"
)

// reportSource is the identity this process reports under: the gateway's
// name (default host:port) and an instance id of its own. A gateway
// restarted under the same name then reports its part of a minute beside
// the old process's part, which the portal adds up, instead of replaying
// the minute with other figures (which the portal refuses).
func reportSource(name, addr string) string {
	if name == "" {
		host, _ := os.Hostname()
		_, port, _ := net.SplitHostPort(addr)
		name = host + ":" + port
	}
	id := make([]byte, 4)
	_, _ = crand.Read(id)
	return name + "/" + hex.EncodeToString(id)
}

// gatewayListener is the socket the gateway serves on: the one handed over
// in file descriptor 3 with LISTEN_FDS=1 (systemd's socket activation, or
// whatever started this process; LISTEN_PID, when set, must be this
// process), else a new one on addr. A handed-over socket outlives each
// process, so a restart refuses no connection: the new process accepts
// from the same queue while the old one drains (or, under systemd, the
// queue holds them while no process runs).
func gatewayListener(addr string) (net.Listener, bool, error) {
	pid := os.Getenv("LISTEN_PID")
	if os.Getenv("LISTEN_FDS") != "1" || pid != "" && pid != strconv.Itoa(os.Getpid()) {
		ln, err := net.Listen("tcp", addr)
		return ln, false, err
	}
	// Not for this process's children.
	for _, name := range []string{"LISTEN_FDS", "LISTEN_PID", "LISTEN_FDNAMES"} {
		os.Unsetenv(name)
	}
	f := os.NewFile(3, "listen")
	defer f.Close()
	ln, err := net.FileListener(f)
	if err != nil {
		return nil, false, fmt.Errorf("the socket handed over in fd 3: %w", err)
	}
	return ln, true, nil
}

// defaultSpool is the user's cache folder's airside/gateway-spool (the
// temporary folder without one).
func defaultSpool() string {
	dir, err := os.UserCacheDir()
	if err != nil {
		dir = os.TempDir()
	}
	return filepath.Join(dir, "airside", "gateway-spool")
}

// portalFolder names a portal's part of the spool.
func portalFolder(portal string) string {
	sum := sha256.Sum256([]byte(strings.TrimSuffix(portal, "/")))
	return hex.EncodeToString(sum[:8])
}

// gatewayClient is the portal's API as a gateway reads it, with its token.
func gatewayClient(portal, token string) (*gatewayclient.ClientWithResponses, error) {
	return gatewayclient.NewClientWithResponses(strings.TrimSuffix(portal, "/")+"/api/v1",
		gatewayclient.WithHTTPClient(gateway.PortalHTTPClient()),
		gatewayclient.WithRequestEditorFn(func(_ context.Context, req *http.Request) error {
			req.Header.Set("Authorization", "Bearer "+token)
			return nil
		}))
}

// cmdGateway runs the reference gateway: an OpenAI-compatible endpoint in
// front of the carriers of a portal's catalogue.
func cmdGateway(ctx context.Context, args []string, stdout, stderr io.Writer) error {
	fs := flag.NewFlagSet("gateway", flag.ContinueOnError)
	fs.SetOutput(stderr)
	addr := fs.String("addr", env("AIRSIDE_GATEWAY_ADDR", "127.0.0.1:8081"), "listen address")
	portal := fs.String("portal", env("AIRSIDE_PORTAL_URL", "http://127.0.0.1:8080"), "the portal's base URL")
	configPath := fs.String("config", env("AIRSIDE_GATEWAY_CONFIG", ""), "the projects file (JSON; see README)")
	seed := fs.Uint64("seed", 0, "seed of the exploration draws (0: from the clock)")
	reportEvery := fs.Duration("report-every", 10*time.Second, "how often closed minutes are posted to the portal")
	name := fs.String("name", env("AIRSIDE_GATEWAY_NAME", ""), "this gateway's name in its reports (default: host:port); each process adds an instance id of its own")
	cacheTTL := fs.Duration("response-cache-ttl", 0, "answer exact repeats of non-streamed requests from the gateway for this long (0: off)")
	cacheBytes := fs.Int64("response-cache-bytes", gateway.DefaultCacheBytes, "bound the response cache's answers to this many bytes (the oldest go first; shared by the fleet with --redis)")
	metricsAddr := fs.String("metrics-addr", env("AIRSIDE_GATEWAY_METRICS_ADDR", ""),
		"serve Prometheus /metrics on this address, apart from customers (empty: off)")
	redisURL := fs.String("redis", env("AIRSIDE_GATEWAY_REDIS_URL", ""),
		"share the rate-cap windows, sessions, incumbents, limits, learned rates and the response cache with the fleet's other replicas in this Redis (redis://host:6379/0; empty: this process keeps its own)")
	spoolDir := fs.String("spool", env("AIRSIDE_GATEWAY_SPOOL", defaultSpool()),
		"keep every count on disk here until the portal has it, so a killed process loses nothing (posted by the next process of this folder), and the last catalogue and credentials, sealed under the token, so a restart while the portal is away routes (\"off\": memory only)")
	allowPrivate := fs.Bool("allow-private-carriers", env("AIRSIDE_GATEWAY_ALLOW_PRIVATE_CARRIERS", "") == "true",
		"let carriers' endpoints resolve to loopback and private addresses (the demo's carriers run on loopback; never in production)")
	if err := fs.Parse(args); err != nil {
		return exitError(2)
	}
	token := os.Getenv("AIRSIDE_GATEWAY_TOKEN")
	if *configPath == "" || token == "" {
		fmt.Fprintln(stderr, "airside gateway: needs --config FILE (or AIRSIDE_GATEWAY_CONFIG) and AIRSIDE_GATEWAY_TOKEN, an API token with catalogue:read, credentials:read and metrics:write")
		return exitError(2)
	}
	cfg, err := gateway.LoadConfig(*configPath)
	if err != nil {
		return err
	}
	log := newLogger(stderr)
	ctx, stop := signal.NotifyContext(ctx, os.Interrupt, syscall.SIGTERM)
	defer stop()
	flushTraces, err := tracing.Setup(ctx, "airside-gateway")
	if err != nil {
		return err
	}
	defer flushTraces(context.Background())
	api, err := gatewayClient(*portal, token)
	if err != nil {
		return err
	}
	if *seed == 0 {
		*seed = uint64(time.Now().UnixNano())
	}
	rec := gateway.NewRecorder()
	gw := &gateway.Gateway{Config: cfg, Follower: &gateway.Follower{API: api, Log: log}, Creds: &gateway.Credentials{API: api},
		Recorder: rec, HTTP: gateway.CarrierHTTPClient(netguard.New(*allowPrivate)),
		Now: time.Now, Rand: rand.New(rand.NewPCG(*seed, 1)), Log: log}
	if *cacheTTL > 0 {
		gw.Cache = &gateway.ResponseCache{TTL: *cacheTTL, MaxBytes: *cacheBytes}
	}
	state := "in-memory (this replica alone)"
	if *redisURL != "" {
		client, err := fleet.Dial(ctx, *redisURL)
		if err != nil {
			return err
		}
		defer client.Close()
		gw.Fleet = &fleet.State{Client: client, Log: func(msg string, err error) { log.Warn(msg, "err", err) }}
		state = "rate caps, sessions, incumbents, limits, learned rates and the response cache in Redis " + client.Options().Addr + " (shared with the fleet)"
		if gw.Cache != nil {
			gw.Cache.Fleet = gw.Fleet
		}
	}
	source := reportSource(*name, *addr)
	spooled := "off (a killed process loses the minutes it has not posted)"
	if *spoolDir != "off" && *spoolDir != "" {
		// One folder per portal: a spool's counts are posted to the portal
		// they were counted for.
		spool, err := gateway.OpenSpool(filepath.Join(*spoolDir, portalFolder(*portal)), source)
		if err != nil {
			return err
		}
		defer spool.Close()
		rec.Spool = spool
		spooled = spool.Dir()
		// Beside the spool, the last table and its credentials, sealed
		// under the token: a restart while the portal is away routes.
		snap, err := gateway.OpenSnapshot(filepath.Join(*spoolDir, portalFolder(*portal)), token)
		if err != nil {
			return err
		}
		gw.Creds.Snapshot, gw.Creds.Log = snap, log
		switch saved, err := snap.Restore(gw.Follower, gw.Creds); {
		case err == nil:
			log.Info("routing from the saved snapshot until the portal answers", "catalogue_revision", gw.Follower.Current().Revision,
				"saved", saved.Format(time.RFC3339), "age", time.Since(saved).Round(time.Second).String())
		case !errors.Is(err, gateway.ErrNoSnapshot):
			log.Warn("snapshot not restored: routing waits for the portal", "err", err)
		}
	}
	reporter := &gateway.Reporter{API: api, Recorder: rec, Log: log, Now: time.Now, Every: *reportEvery, Grace: 5 * time.Second, Source: source,
		ProjectLabel: gw.ProjectLabel, DeclaredRates: gw.DeclaredRates}
	background, stopBackground := context.WithCancel(context.Background())
	followed := make(chan struct{})
	go func() { gw.Follower.Run(background); close(followed) }()
	go gw.Creds.Keep(background, gw.Follower, log, 0)
	go gw.ShareLearned(background, source, 0)
	reported := make(chan struct{})
	go func() { reporter.Run(background); close(reported) }()

	ln, handedOver, err := gatewayListener(*addr)
	if err != nil {
		stopBackground()
		return fmt.Errorf("gateway: %w", err)
	}
	if handedOver {
		// The socket is shared with a process still serving (or queues
		// connections for this one): accept only once requests can be
		// routed, so nothing taken from the queue waits on a catalogue.
		select {
		case <-gw.Follower.Ready():
		case <-time.After(30 * time.Second):
			log.Warn("gateway: serving before the catalogue is read (the portal did not answer within 30 s)")
		case <-ctx.Done():
		}
	}
	srv := gw.HTTPServer(tracing.PublicHandler(gw.Handler(), "gateway"))
	if *metricsAddr != "" {
		stopMetrics, err := serveMetrics(ctx, *metricsAddr, gw.MetricsHandler(reporter), log)
		if err != nil {
			stopBackground()
			return err
		}
		defer stopMetrics()
	}
	served := make(chan error, 1)
	go func() { served <- srv.Serve(ln) }()
	log.Info("airside gateway listening", "addr", ln.Addr().String(), "socket", map[bool]string{true: "handed over", false: "its own"}[handedOver], "portal", *portal, "projects", len(cfg.Projects),
		"private carriers", *allowPrivate, "state", state, "spool", spooled)
	select {
	case <-ctx.Done():
	case err := <-served:
		stopBackground()
		return fmt.Errorf("gateway: %w", err)
	}
	// Drain: requests in flight finish (streams included), then what was
	// measured is posted once more.
	shutdown, cancel := context.WithTimeout(context.Background(), envDuration("AIRSIDE_SHUTDOWN_GRACE", 10*time.Second))
	defer cancel()
	err = srv.Shutdown(shutdown)
	stopBackground()
	<-followed
	<-reported
	if err != nil {
		return fmt.Errorf("gateway shutdown: %w", err)
	}
	fmt.Fprintln(stdout, "gateway shut down cleanly")
	return nil
}

// cmdDrive sends simulated customers' traffic through a gateway.
func cmdDrive(ctx context.Context, args []string, stdout, stderr io.Writer) error {
	fs := flag.NewFlagSet("drive", flag.ContinueOnError)
	fs.SetOutput(stderr)
	gw := fs.String("gateway", env("AIRSIDE_GATEWAY_URL", "http://127.0.0.1:8081"), "the gateway's base URL")
	keys := fs.String("keys", env("AIRSIDE_DRIVER_KEYS", demoProjectKey), "the projects' API keys, comma-separated")
	rate := fs.Float64("rate", 2, "arrivals per second at the day's peak (at most 50)")
	duration := fs.Duration("duration", time.Minute, "how long to drive (0: until interrupted)")
	seed := fs.Uint64("seed", 1, "seed: the same seed sends the same requests")
	if err := fs.Parse(args); err != nil {
		return exitError(2)
	}
	ctx, stop := signal.NotifyContext(ctx, os.Interrupt, syscall.SIGTERM)
	defer stop()
	var stats trafficdriver.Stats
	if err := trafficdriver.Run(ctx, trafficdriver.Config{GatewayURL: *gw, APIKeys: strings.Split(*keys, ","), Rate: *rate,
		Duration: *duration, Seed: *seed, Log: newLogger(stderr)}, &stats); err != nil {
		return err
	}
	fmt.Fprintf(stdout, "sent %d requests (%d answered, %d failed, %d skipped at the in-flight bound): %v\n",
		stats.Sent.Load(), stats.OK.Load(), stats.Failed.Load(), stats.Skipped.Load(), stats.ByKind)
	return nil
}

// The demo's gateway projects. sk-demo-project is in the README, so anyone
// can send a request right away.
const demoProjectKey = "sk-demo-project"

var demoProjects = gateway.Config{Projects: []gateway.Project{
	{Name: "demo", APIKey: demoProjectKey, Organisation: "demo"},
	{Name: "acme-agents", APIKey: "sk-demo-acme-agents", Organisation: "acme"},
	{Name: "bigco-enterprise", APIKey: "sk-demo-bigco", Organisation: "bigco", CacheHitRate: ptrFloat(0.6), CacheOutputRatio: ptrFloat(0.05)},
	// A European health company: its data stays in the EU and trains no
	// one's model (election.md sec. 7), so carriers see on their preview
	// the part of the demand they cannot serve (Quarry declares no data
	// policy; most carriers serve from the US only).
	{Name: "eu-health", APIKey: "sk-demo-eu-health", Organisation: "euhealth", Regions: []string{"DE", "FR"},
		Provider: &election.ProviderInput{DataCollection: ptrString("deny")}},
	// A team that spreads its traffic by share (election.md sec. 8, seed
	// 004) rather than sending it all to the winner: the demo's carriers
	// differ in speed (lumen fast, tessera slow in the afternoon) and
	// reliability (vantage's 429s and errors), so a carrier sees on its
	// traffic page and preview what each costs it in share.
	{Name: "spread-api", APIKey: "sk-demo-spread", Organisation: "spread", Policy: "share"},
}}

func ptrString(v string) *string { return &v }

func ptrFloat(v float64) *float64 { return &v }

// cmdDemo is what `make run` starts: the portal with its demo catalogue and
// fake carriers, the reference gateway in a process of its own reading the
// portal's public API, and simulated customers sending real requests
// through it, all on loopback.
func cmdDemo(ctx context.Context, args []string, stdout, stderr io.Writer) error {
	fs := flag.NewFlagSet("demo", flag.ContinueOnError)
	fs.SetOutput(stderr)
	dbURL := databaseFlag(fs)
	addr := fs.String("addr", env("AIRSIDE_ADDR", ":8080"), "the portal's listen address")
	gwAddr := fs.String("gateway-addr", env("AIRSIDE_GATEWAY_ADDR", "127.0.0.1:8081"), "the gateway's listen address")
	rate := fs.Float64("rate", 2, "the simulated customers' arrivals per second at the day's peak (0: none)")
	logPath := fs.String("log", env("AIRSIDE_DEMO_LOG", filepath.Join("data", "demo.log")),
		"where the portal's, the gateway's and the simulated customers' logs go (\"-\": this console)")
	if err := fs.Parse(args); err != nil {
		return exitError(2)
	}
	ctx, stop := signal.NotifyContext(ctx, os.Interrupt, syscall.SIGTERM)
	defer stop()
	self, err := os.Executable()
	if err != nil {
		return err
	}
	// The gateway's token is made before the portal starts, so the portal's
	// first routing snapshot knows it.
	token, err := demoGatewayToken(ctx, *dbURL, stdout)
	if err != nil {
		return err
	}
	configPath := filepath.Join("data", "gateway-demo.json")
	data, _ := json.MarshalIndent(demoProjects, "", "  ")
	if err := os.WriteFile(configPath, data, 0o600); err != nil {
		return fmt.Errorf("write the demo gateway's projects: %w", err)
	}
	portalURL := "http://" + loopback(*addr)
	gatewayURL := "http://" + loopback(*gwAddr)

	// The processes' logs (a line a request) go to a file, so the console
	// keeps what a person needs: the logins, the URLs, and why the demo
	// stopped, with the log's last lines when it did.
	logs, closeLogs, err := demoLog(*logPath, stderr)
	if err != nil {
		return err
	}
	defer closeLogs()
	failed := func(err error) error {
		if *logPath != "-" {
			return fmt.Errorf("%w\nthe last lines of %s:\n%s", err, *logPath, logTail(*logPath, 15))
		}
		return err
	}
	children := &childProcesses{stdout: stdout, stderr: logs}
	defer children.stop()
	if err := children.start(ctx, self, nil, "serve", "--demo", "--addr", *addr, "--database", *dbURL); err != nil {
		return err
	}
	if err := waitHTTP(ctx, portalURL+"/readyz", 5*time.Minute, children); err != nil {
		return failed(fmt.Errorf("the portal did not become ready: %w", err))
	}
	// The demo's fake carriers listen on loopback: only here is the
	// gateway let reach private addresses.
	if err := children.start(ctx, self, []string{"AIRSIDE_GATEWAY_TOKEN=" + token}, "gateway", "--addr", *gwAddr,
		"--portal", portalURL, "--config", configPath, "--allow-private-carriers"); err != nil {
		return err
	}
	if err := waitHTTP(ctx, gatewayURL+"/healthz", time.Minute, children); err != nil {
		return failed(fmt.Errorf("the gateway did not become ready: %w", err))
	}
	fmt.Fprintf(stdout, `
Airside is running. Open %s in your browser and log in with a demo login above.
  Portal:   %s
  Gateway:  %s/v1   (OpenAI-compatible; API key %s)

  curl %s/v1/chat/completions -H 'Authorization: Bearer %s' \
       -H 'Content-Type: application/json' -d '{"model":"kimi-k2.5","messages":[{"role":"user","content":"hi"}]}'

`, displayAddr(*addr), displayAddr(*addr), gatewayURL, demoProjectKey, gatewayURL, demoProjectKey)
	if *rate > 0 {
		fmt.Fprintf(stdout, "Simulated customers are sending about %.1f requests a second through the gateway (a daily cycle).\n", *rate)
		go func() {
			keys := make([]string, 0, len(demoProjects.Projects))
			for _, p := range demoProjects.Projects {
				keys = append(keys, p.APIKey)
			}
			log := newLogger(logs).With("component", "traffic driver")
			if err := trafficdriver.Run(ctx, trafficdriver.Config{GatewayURL: gatewayURL, APIKeys: keys, Rate: *rate,
				Seed: uint64(time.Now().UnixNano()), Log: log}, &trafficdriver.Stats{}); err != nil {
				log.Warn("traffic driver stopped", "err", err)
			}
		}()
	}
	if *logPath != "-" {
		fmt.Fprintf(stdout, "Logs (every request, the gateway, the simulated customers): %s   (tail -f %s)\n", *logPath, *logPath)
	}
	fmt.Fprintln(stdout, "Press Ctrl-C to stop.")
	select {
	case <-ctx.Done():
		return nil
	case err := <-children.exited:
		return failed(fmt.Errorf("a demo process stopped: %w", err))
	}
}

// demoLog opens the demo's log file afresh ("-": the console's stderr).
func demoLog(path string, console io.Writer) (io.Writer, func(), error) {
	if path == "-" {
		return console, func() {}, nil
	}
	if err := os.MkdirAll(filepath.Dir(path), 0o750); err != nil {
		return nil, nil, fmt.Errorf("the demo's log: %w", err)
	}
	f, err := os.OpenFile(path, os.O_CREATE|os.O_TRUNC|os.O_WRONLY, 0o600)
	if err != nil {
		return nil, nil, fmt.Errorf("the demo's log: %w", err)
	}
	return f, func() { _ = f.Close() }, nil
}

// logTail is the last n lines of the file at path (what there is of them
// in its last 64 KiB: a demo left running for days has a long log).
func logTail(path string, n int) string {
	f, err := os.Open(path)
	if err != nil {
		return "(" + err.Error() + ")"
	}
	defer f.Close()
	const window = 64 << 10
	if info, err := f.Stat(); err == nil && info.Size() > window {
		_, _ = f.Seek(-window, io.SeekEnd)
	}
	data, err := io.ReadAll(f)
	if err != nil {
		return "(" + err.Error() + ")"
	}
	lines := strings.Split(strings.TrimRight(string(data), "\n"), "\n")
	return strings.Join(lines[max(0, len(lines)-n):], "\n")
}

// demoGatewayToken seeds the demo (once) and makes a fresh token for the
// demo gateway, revoking the demo gateways' earlier ones.
func demoGatewayToken(ctx context.Context, dbURL string, stdout io.Writer) (string, error) {
	if err := os.MkdirAll("data", 0o750); err != nil {
		return "", err
	}
	st, err := openStore(ctx, dbURL, true)
	if err != nil {
		return "", err
	}
	defer st.Close()
	if err := seedDemo(ctx, st, io.Discard); err != nil {
		return "", err
	}
	admin, err := st.FindUserByEmail(ctx, "admin@airside.example")
	if err != nil {
		return "", fmt.Errorf("the demo admin: %w", err)
	}
	tokens := apitoken.NewService(st)
	who := &account.Principal{User: *admin}
	earlier, err := tokens.List(ctx, who)
	if err != nil {
		return "", err
	}
	for _, t := range earlier {
		if t.Name == demoGatewayTokenName && t.RevokedAt == nil {
			if err := tokens.Revoke(ctx, who, t.ID); err != nil {
				return "", err
			}
		}
	}
	return tokens.Create(ctx, who, demoGatewayTokenName,
		[]string{apitoken.ScopeCatalogueRead, apitoken.ScopeCredentialsRead, apitoken.ScopeMetricsWrite})
}

const demoGatewayTokenName = "demo gateway (make run)"

// loopback is a listen address as a URL host on this machine.
func loopback(addr string) string {
	if strings.HasPrefix(addr, ":") {
		return "127.0.0.1" + addr
	}
	return addr
}

// childProcesses are the demo's processes: each is this binary with another
// command, sharing the terminal; stopping them sends SIGTERM and waits.
type childProcesses struct {
	stdout, stderr io.Writer
	children       []child
	exited         chan error
}

type child struct {
	cmd  *exec.Cmd
	done chan struct{} // closed once the process has exited
}

func (c *childProcesses) start(ctx context.Context, self string, env []string, args ...string) error {
	if c.exited == nil {
		c.exited = make(chan error, 4)
	}
	cmd := exec.Command(self, args...)
	cmd.Env = append(os.Environ(), env...)
	cmd.Stdout, cmd.Stderr = c.stdout, c.stderr
	if err := cmd.Start(); err != nil {
		return fmt.Errorf("start airside %s: %w", args[0], err)
	}
	ch := child{cmd: cmd, done: make(chan struct{})}
	c.children = append(c.children, ch)
	go func() {
		err := cmd.Wait()
		close(ch.done)
		if ctx.Err() == nil {
			c.exited <- fmt.Errorf("airside %s: %v", args[0], err)
		}
	}()
	return nil
}

func (c *childProcesses) stop() {
	for i := len(c.children) - 1; i >= 0; i-- { // the gateway before the portal
		ch := c.children[i]
		_ = ch.cmd.Process.Signal(syscall.SIGTERM)
		select {
		case <-ch.done:
		case <-time.After(30 * time.Second):
			_ = ch.cmd.Process.Kill()
			<-ch.done
		}
	}
}

// waitHTTP waits until url answers 200, a child exits, or the time is up.
func waitHTTP(ctx context.Context, url string, within time.Duration, children *childProcesses) error {
	deadline := time.Now().Add(within)
	client := &http.Client{Timeout: 5 * time.Second}
	for {
		if res, err := client.Get(url); err == nil {
			res.Body.Close()
			if res.StatusCode == http.StatusOK {
				return nil
			}
		}
		if time.Now().After(deadline) {
			return errors.New("gave up after " + within.String())
		}
		select {
		case <-ctx.Done():
			return ctx.Err()
		case err := <-children.exited:
			return err
		case <-time.After(200 * time.Millisecond):
		}
	}
}
