// Command airside is the Airside fare portal: it serves the portal, migrates
// and seeds its database, adds accounts, and runs elections from JSON.
//
// This is the only place that reads flags and the environment and wires the
// pieces together.
package main

import (
	"context"
	"encoding/json"
	"errors"
	"flag"
	"fmt"
	"io"
	"log/slog"
	"net"
	"net/http"
	"os"
	"os/signal"
	"strconv"
	"strings"
	"syscall"
	"time"

	"github.com/airside/airside/cmd/airside/wire"
	"github.com/airside/airside/internal/account"
	"github.com/airside/airside/internal/apperr"
	"github.com/airside/airside/internal/demo"
	"github.com/airside/airside/internal/election"
	"github.com/airside/airside/internal/mailer"
	"github.com/airside/airside/internal/store"
	"github.com/airside/airside/internal/tracing"
	"github.com/airside/airside/internal/workflow"
	"github.com/airside/airside/web"
)

const usage = `airside: the carrier-facing fare portal of the LLM gateway.

Usage:
  airside demo [--database URL] [--rate 2]                 what make run starts: the portal with the demo catalogue,
                                                           the reference gateway and simulated customers, on loopback
  airside serve [--addr :8080] [--database URL] [--demo]   run the portal (migrates first)
  airside gateway --config FILE [--addr 127.0.0.1:8081] [--portal URL]   the reference gateway (OpenAI-compatible;
                                                           AIRSIDE_GATEWAY_TOKEN: catalogue:read, credentials:read, metrics:write)
  airside drive [--gateway URL] [--keys K1,K2] [--rate 2] [--duration 1m] [--seed 1]
                                                           simulated customers sending real requests through a gateway
  airside migrate [up|down|status] [--database URL]        apply every pending migration (up), roll back the
                                                           newest one (down), or print the version (status)
  airside seed --demo [--database URL]                     seed the demo catalogue (once)
  airside backup --to FILE [--database URL]                a consistent copy while serving (SQLite: VACUUM INTO;
                                                           PostgreSQL: pg_dump --format=custom)
  airside restore --from FILE [--database URL]             replace the database with a backup (SQLite: serve stopped)
  airside user add --email E --password P (--role reviewer|admin | --carrier SLUG --carrier-role admin|member)
  airside elect < input.json > result.json                 run one election (see docs/election.md)
  airside fake-carrier [--addr 127.0.0.1:9001] [--models m1,m2] [--capabilities tools,json_output,...] [--ttft 300ms]
                       [--tokens-per-second 80] [--error-rate 0.01] [--cache] [--dialect openai|deepseek] [--key K]
                                                           an OpenAI-compatible server to probe (see README)
  airside healthcheck [--url URL]                          exit 0 when the portal's /healthz answers 200 (the
                                                           container's HEALTHCHECK; default from AIRSIDE_ADDR)
  airside rotate-secret-key [--database URL]               re-seal every endpoint key with AIRSIDE_SECRET_KEY,
                                                           reading old ones with AIRSIDE_SECRET_KEY_OLD

Environment (flags win):
  AIRSIDE_ADDR          listen address (default :8080)
  AIRSIDE_DATABASE_URL  postgres://... or sqlite:PATH (default sqlite:data/airside.db)
  AIRSIDE_BASE_URL      public URL used in links sent by email, e.g. https://airside.example
  AIRSIDE_LOG_FORMAT    text or json (default text)
  AIRSIDE_LOG_LEVEL     debug, info, warn or error (default info)
  AIRSIDE_METRICS_ADDR  a private listener serving GET /metrics without authentication (unset: none)
  OTEL_EXPORTER_OTLP_ENDPOINT  export OpenTelemetry traces over OTLP/HTTP there (unset: no export; the
                        other OTEL_* variables apply)
  AIRSIDE_API_LIMITS    off lifts the API's per-token quotas (load tests)
  AIRSIDE_SHUTDOWN_GRACE  how long SIGTERM waits for requests in flight before exiting (default 10s)
  AIRSIDE_REQUEST_DEADLINE  how long one request may work before it answers 503 (default 30s)
  AIRSIDE_GATEWAY_ADDR   the gateway's listen address (default 127.0.0.1:8081)
  AIRSIDE_PORTAL_URL     the portal the gateway reads (default http://127.0.0.1:8080)
  AIRSIDE_GATEWAY_CONFIG the gateway's projects file
  AIRSIDE_GATEWAY_TOKEN  the gateway's API token (catalogue:read, credentials:read, metrics:write)
  AIRSIDE_GATEWAY_NAME   the gateway's name in its metric reports (default host:port)
  AIRSIDE_SCHEDULE_EVERY  how often serve publishes filings that reached their effective date (default 30s)
  AIRSIDE_SECRET_KEY    32 random bytes in base64 that seal carriers' API keys (openssl rand -base64 32);
                        required by serve, except with --demo, which keeps one in data/secret.key
  AIRSIDE_SECRET_KEY_OLD  comma-separated older keys, still read while a rotation re-seals
  AIRSIDE_PREFLIGHT_ALLOW_PRIVATE  true lets probes reach loopback and private addresses (demo and tests only)
  AIRSIDE_REQUIRE_PREFLIGHT  false lets a listing go into service without a passing preflight (default true)
  AIRSIDE_PROBE_FRESHNESS  how long a passed probe earns its flag (default 168h)
  AIRSIDE_OVERRIDE_FOR  how long a reviewer's override of a probe verdict counts (default 720h)
  AIRSIDE_NOTICE_PERIOD  how long ahead a price increase must be filed (default 168h)
  AIRSIDE_QUARANTINE_FACTOR  a price moved by this factor or more needs two reviewers (default 3)
`

func main() {
	if err := run(context.Background(), os.Args[1:], os.Stdin, os.Stdout, os.Stderr); err != nil {
		var exit exitError
		if errors.As(err, &exit) {
			os.Exit(int(exit))
		}
		fmt.Fprintln(os.Stderr, "airside:", oneLine(err))
		os.Exit(1)
	}
}

// exitError is an exit status whose message was already printed.
type exitError int

func (e exitError) Error() string { return fmt.Sprintf("exit status %d", int(e)) }

func oneLine(err error) string { return strings.ReplaceAll(err.Error(), "\n", " ") }

func env(name, def string) string {
	if v := os.Getenv(name); v != "" {
		return v
	}
	return def
}

func run(ctx context.Context, args []string, stdin io.Reader, stdout, stderr io.Writer) error {
	if len(args) == 0 {
		fmt.Fprint(stderr, usage)
		return exitError(2)
	}
	switch args[0] {
	case "serve":
		return cmdServe(ctx, args[1:], stdout, stderr)
	case "migrate":
		return cmdMigrate(ctx, args[1:], stdout, stderr)
	case "seed":
		return cmdSeed(ctx, args[1:], stdout, stderr)
	case "backup":
		return cmdBackup(ctx, args[1:], stdout, stderr)
	case "restore":
		return cmdRestore(ctx, args[1:], stdout, stderr)
	case "user":
		if len(args) < 2 || args[1] != "add" {
			return errors.New("usage: airside user add --email E --password P (see airside help)")
		}
		return cmdUserAdd(ctx, args[2:], stdout, stderr)
	case "elect":
		return cmdElect(stdin, stdout, stderr)
	case "fake-carrier":
		return cmdFakeCarrier(ctx, args[1:], stderr)
	case "gateway":
		return cmdGateway(ctx, args[1:], stdout, stderr)
	case "drive":
		return cmdDrive(ctx, args[1:], stdout, stderr)
	case "demo":
		return cmdDemo(ctx, args[1:], stdout, stderr)
	case "rotate-secret-key":
		return cmdRotateSecretKey(ctx, args[1:], stdout, stderr)
	case "healthcheck":
		return cmdHealthcheck(ctx, args[1:], stderr)
	case "help", "-h", "--help":
		fmt.Fprint(stdout, usage)
		return nil
	}
	fmt.Fprintf(stderr, "airside: unknown command %q\n\n%s", args[0], usage)
	return exitError(2)
}

func newLogger(w io.Writer) *slog.Logger {
	level := slog.LevelInfo
	_ = level.UnmarshalText([]byte(env("AIRSIDE_LOG_LEVEL", "info")))
	opts := &slog.HandlerOptions{Level: level}
	if env("AIRSIDE_LOG_FORMAT", "text") == "json" {
		return slog.New(slog.NewJSONHandler(w, opts))
	}
	return slog.New(slog.NewTextHandler(w, opts))
}

func databaseFlag(fs *flag.FlagSet) *string {
	return fs.String("database", env("AIRSIDE_DATABASE_URL", "sqlite:data/airside.db"), "database URL: postgres://... or sqlite:PATH")
}

func openStore(ctx context.Context, url string, migrate bool) (*store.Store, error) {
	st, err := store.Open(ctx, url)
	if err != nil {
		return nil, err
	}
	if migrate {
		if err := st.Migrate(ctx); err != nil {
			st.Close()
			return nil, err
		}
	}
	return st, nil
}

func cmdServe(ctx context.Context, args []string, stdout, stderr io.Writer) error {
	fs := flag.NewFlagSet("serve", flag.ContinueOnError)
	fs.SetOutput(stderr)
	addr := fs.String("addr", env("AIRSIDE_ADDR", ":8080"), "listen address")
	dbURL := databaseFlag(fs)
	withDemo := fs.Bool("demo", false, "seed the demo catalogue the first time and print the demo logins")
	scheduleEvery := fs.Duration("schedule-every", envDuration("AIRSIDE_SCHEDULE_EVERY", 30*time.Second), "how often to publish filings whose effective date has come")
	if err := fs.Parse(args); err != nil {
		return exitError(2)
	}
	log := newLogger(stderr)
	slog.SetDefault(log)
	ctx, stop := signal.NotifyContext(ctx, os.Interrupt, syscall.SIGTERM)
	defer stop()
	flushTraces, err := tracing.Setup(ctx, "airside")
	if err != nil {
		return err
	}
	defer flushTraces(context.Background())
	st, err := openStore(ctx, *dbURL, true)
	if err != nil {
		return err
	}
	defer st.Close()
	release, err := st.HoldSQLiteFile()
	if err != nil {
		return err
	}
	defer release()
	box, err := secretBox(*withDemo)
	if err != nil {
		return err
	}
	if *withDemo {
		if err := seedDemo(ctx, st, stdout); err != nil {
			return err
		}
		urls := demo.StartCarriersWith(ctx, func(format string, args ...any) { log.Warn(fmt.Sprintf(format, args...)) },
			demo.CarrierOptions{Feed: demo.FeedOf(st)})
		if n, err := demo.SeedEndpoints(ctx, st, box, urls); err != nil {
			return err
		} else if n > 0 {
			fmt.Fprintf(stdout, "Registered %d demo endpoints; preflight runs in the background.\n", n)
		}
		if err := demo.SeedFeeds(ctx, st, urls); err != nil {
			return err
		}
	}
	cfg := wire.Config{Secrets: box, Log: log,
		AllowPrivate:   *withDemo || os.Getenv("AIRSIDE_PREFLIGHT_ALLOW_PRIVATE") == "true",
		RequireReady:   os.Getenv("AIRSIDE_REQUIRE_PREFLIGHT") != "false",
		ProbeFreshness: envDuration("AIRSIDE_PROBE_FRESHNESS", 7*24*time.Hour),
		OverrideFor:    envDuration("AIRSIDE_OVERRIDE_FOR", workflow.DefaultOverrideFor),
		Notice:         envDuration("AIRSIDE_NOTICE_PERIOD", workflow.DefaultNotice),
		// A page read after every batch of a live fleet answers from the
		// projection of the batch before while the next is worked out.
		ProjectionStaleFor: envDuration("AIRSIDE_PROJECTION_STALE_FOR", time.Minute),
	}
	if os.Getenv("AIRSIDE_PROJECTION_STALE_FOR") == "off" {
		cfg.ProjectionStaleFor = 0
	}
	if f, err := strconv.ParseFloat(os.Getenv("AIRSIDE_QUARANTINE_FACTOR"), 64); err == nil && f > 1 {
		cfg.QuarantineFactor = f
	}
	if raw := os.Getenv("AIRSIDE_SMTP_URL"); raw != "" {
		m, err := mailer.FromURL(raw)
		if err != nil {
			return err
		}
		cfg.Mail = m
	}
	srv := wire.Portal(st, cfg)
	srv.BaseURL = os.Getenv("AIRSIDE_BASE_URL")
	if srv.BaseURL == "" && *withDemo {
		srv.BaseURL = displayAddr(*addr) // the demo's links point at where it listens
	}
	srv.RequireBaseURL = !*withDemo
	if os.Getenv("AIRSIDE_API_LIMITS") == "off" {
		srv.APILimits = nil // load tests drive one token far past a gateway's pace
	}
	if metricsAddr := os.Getenv("AIRSIDE_METRICS_ADDR"); metricsAddr != "" {
		stop, err := serveMetrics(ctx, metricsAddr, srv.MetricsHandler(), log)
		if err != nil {
			return err
		}
		defer stop()
	}
	srv.SetSessionLimits(envDuration("AIRSIDE_SESSION_IDLE", web.SessionIdle), envDuration("AIRSIDE_SESSION_LIFETIME", web.SessionLifetime))
	if nets, err := parseCIDRs(os.Getenv("AIRSIDE_TRUSTED_PROXIES")); err != nil {
		return fmt.Errorf("AIRSIDE_TRUSTED_PROXIES: %w", err)
	} else {
		srv.TrustProxies(nets)
	}
	srv.ScheduleEvery = *scheduleEvery
	srv.ShutdownGrace = envDuration("AIRSIDE_SHUTDOWN_GRACE", 10*time.Second)
	srv.RequestDeadline = envDuration("AIRSIDE_REQUEST_DEADLINE", web.DefaultRequestDeadline)
	log.Info("airside listening", "addr", *addr, "database", string(st.Dialect()), "url", displayAddr(*addr))
	return srv.Run(ctx, *addr)
}

// serveMetrics serves the Prometheus exposition without authentication on
// its own listener, for a scraper on a private network; stop closes it.
func serveMetrics(ctx context.Context, addr string, h http.Handler, log *slog.Logger) (stop func(), err error) {
	ln, err := net.Listen("tcp", addr)
	if err != nil {
		return nil, fmt.Errorf("metrics listener %s: %w", addr, err)
	}
	mux := http.NewServeMux()
	mux.Handle("GET /metrics", h)
	hs := &http.Server{Handler: mux, ReadHeaderTimeout: 10 * time.Second, BaseContext: func(net.Listener) context.Context { return ctx }}
	go func() {
		if err := hs.Serve(ln); err != nil && !errors.Is(err, http.ErrServerClosed) {
			log.Error("metrics listener stopped", "err", err)
		}
	}()
	log.Info("metrics listening", "addr", ln.Addr().String())
	return func() { hs.Close() }, nil
}

func envDuration(name string, def time.Duration) time.Duration {
	if d, err := time.ParseDuration(os.Getenv(name)); err == nil && d > 0 {
		return d
	}
	return def
}

func displayAddr(addr string) string {
	if strings.HasPrefix(addr, ":") {
		return "http://localhost" + addr
	}
	return "http://" + addr
}

// cmdMigrate moves the schema: up (the default) applies every pending
// migration, down rolls back the newest one, status prints the version. The
// direction may come before or after the flags; anything else is refused.
func cmdMigrate(ctx context.Context, args []string, stdout, stderr io.Writer) error {
	fs := flag.NewFlagSet("migrate", flag.ContinueOnError)
	fs.SetOutput(stderr)
	dbURL := databaseFlag(fs)
	direction := ""
	if len(args) > 0 && !strings.HasPrefix(args[0], "-") {
		direction, args = args[0], args[1:]
	}
	if err := fs.Parse(args); err != nil {
		return exitError(2)
	}
	if rest := fs.Args(); direction == "" && len(rest) > 0 {
		direction = rest[0]
		if err := fs.Parse(rest[1:]); err != nil {
			return exitError(2)
		}
	}
	if rest := fs.Args(); len(rest) > 0 {
		fmt.Fprintf(stderr, "airside migrate: unexpected %q (usage: airside migrate [up|down|status] [--database URL])\n", strings.Join(rest, " "))
		return exitError(2)
	}
	if direction == "" {
		direction = "up"
	}
	switch direction {
	case "up", "down", "status":
	default:
		fmt.Fprintf(stderr, "airside migrate: unknown direction %q: say up, down or status\n", direction)
		return exitError(2)
	}
	st, err := openStore(ctx, *dbURL, false)
	if err != nil {
		return err
	}
	defer st.Close()
	switch direction {
	case "down":
		from, to, err := st.MigrateDown(ctx)
		if err != nil {
			return err
		}
		fmt.Fprintf(stdout, "rolled back migration %d: %s database now at version %d\n", from, st.Dialect(), to)
	case "status":
		v, err := st.MigrationVersion(ctx)
		if err != nil {
			return err
		}
		fmt.Fprintf(stdout, "%s database at migration version %d\n", st.Dialect(), v)
	default:
		if err := st.Migrate(ctx); err != nil {
			return err
		}
		v, err := st.MigrationVersion(ctx)
		if err != nil {
			return err
		}
		fmt.Fprintf(stdout, "database migrated (%s, version %d)\n", st.Dialect(), v)
	}
	return nil
}

func cmdBackup(ctx context.Context, args []string, stdout, stderr io.Writer) error {
	fs := flag.NewFlagSet("backup", flag.ContinueOnError)
	fs.SetOutput(stderr)
	dbURL := databaseFlag(fs)
	to := fs.String("to", "", "the backup file to write (must not exist)")
	if err := fs.Parse(args); err != nil {
		return exitError(2)
	}
	if *to == "" || fs.NArg() > 0 {
		fmt.Fprintln(stderr, "usage: airside backup --to FILE [--database URL]")
		return exitError(2)
	}
	st, err := openStore(ctx, *dbURL, false)
	if err != nil {
		return err
	}
	defer st.Close()
	if err := st.Backup(ctx, *to); err != nil {
		return err
	}
	fmt.Fprintf(stdout, "backed up the %s database to %s (the secret key is not in it: back up AIRSIDE_SECRET_KEY or data/secret.key separately)\n", st.Dialect(), *to)
	return nil
}

func cmdRestore(ctx context.Context, args []string, stdout, stderr io.Writer) error {
	fs := flag.NewFlagSet("restore", flag.ContinueOnError)
	fs.SetOutput(stderr)
	dbURL := databaseFlag(fs)
	from := fs.String("from", "", "the backup file to restore")
	if err := fs.Parse(args); err != nil {
		return exitError(2)
	}
	if *from == "" || fs.NArg() > 0 {
		fmt.Fprintln(stderr, "usage: airside restore --from FILE [--database URL]")
		return exitError(2)
	}
	if err := store.Restore(ctx, *dbURL, *from); err != nil {
		return err
	}
	fmt.Fprintf(stdout, "restored %s into %s; serve with the secret key of the time of the backup\n", *from, *dbURL)
	return nil
}

func cmdSeed(ctx context.Context, args []string, stdout, stderr io.Writer) error {
	fs := flag.NewFlagSet("seed", flag.ContinueOnError)
	fs.SetOutput(stderr)
	dbURL := databaseFlag(fs)
	withDemo := fs.Bool("demo", false, "seed the demo catalogue")
	if err := fs.Parse(args); err != nil {
		return exitError(2)
	}
	if !*withDemo {
		return errors.New("seed: say --demo (the only seed there is)")
	}
	st, err := openStore(ctx, *dbURL, true)
	if err != nil {
		return err
	}
	defer st.Close()
	return seedDemo(ctx, st, stdout)
}

func seedDemo(ctx context.Context, st *store.Store, stdout io.Writer) error {
	res, err := demo.Seed(ctx, st)
	if err != nil {
		return err
	}
	if res.Seeded {
		if err := demo.SeedHistory(ctx, st, 60); err != nil {
			return err
		}
		if err := demo.SeedProfiles(ctx, st); err != nil {
			return err
		}
		fmt.Fprintf(stdout, "Seeded the demo catalogue: %d models, %d listings, 60 days of hourly traffic.\n", res.Models, res.Listings)
	}
	fmt.Fprintf(stdout, "\nDemo logins (password for all: %s)\n", demo.Password)
	for _, l := range demo.Logins {
		fmt.Fprintf(stdout, "  %-28s %s\n", l.Email, l.Role)
	}
	fmt.Fprintln(stdout)
	return nil
}

func cmdUserAdd(ctx context.Context, args []string, stdout, stderr io.Writer) error {
	fs := flag.NewFlagSet("user add", flag.ContinueOnError)
	fs.SetOutput(stderr)
	dbURL := databaseFlag(fs)
	email := fs.String("email", "", "email address (the login)")
	password := fs.String("password", "", "password, at least 10 characters")
	name := fs.String("name", "", "display name")
	role := fs.String("role", "", "staff role: reviewer or admin")
	carrier := fs.String("carrier", "", "carrier slug to join")
	carrierRole := fs.String("carrier-role", "member", "role in the carrier: admin or member")
	if err := fs.Parse(args); err != nil {
		return exitError(2)
	}
	if (*role == "") == (*carrier == "") {
		return errors.New("user add: give either --role reviewer|admin or --carrier SLUG")
	}
	st, err := openStore(ctx, *dbURL, true)
	if err != nil {
		return err
	}
	defer st.Close()
	nu := account.NewUser{Email: *email, Password: *password, Name: *name, Staff: account.StaffRole(*role)}
	if *carrier != "" {
		nu.CarrierSlug, nu.CarrierRole = *carrier, account.CarrierRole(*carrierRole)
	}
	u, err := account.NewService(st).CreateUser(ctx, nil, nu)
	if err != nil {
		if fields := apperr.FieldErrors(err); len(fields) > 0 {
			var parts []string
			for f, msg := range fields {
				parts = append(parts, f+": "+msg)
			}
			return fmt.Errorf("user add: %s", strings.Join(parts, "; "))
		}
		return err
	}
	fmt.Fprintf(stdout, "created user %d %s\n", u.ID, u.Email)
	return nil
}

// cmdElect runs one election from the contract's JSON. Bad input exits 2 with
// one line on stderr naming the field, and nothing on stdout.
func cmdElect(stdin io.Reader, stdout, stderr io.Writer) error {
	ballot, err := election.DecodeBallot(stdin)
	if err != nil {
		fmt.Fprintln(stderr, "airside elect:", oneLine(err))
		return exitError(2)
	}
	out, err := json.Marshal(election.Elect(ballot))
	if err != nil {
		return fmt.Errorf("elect: encode result: %w", err)
	}
	out = append(out, '\n')
	_, err = stdout.Write(out)
	return err
}

// parseCIDRs reads a comma-separated list of CIDRs (a bare address is a /32
// or /128).
func parseCIDRs(list string) ([]*net.IPNet, error) {
	var out []*net.IPNet
	for _, item := range strings.Split(list, ",") {
		item = strings.TrimSpace(item)
		if item == "" {
			continue
		}
		if !strings.Contains(item, "/") {
			if ip := net.ParseIP(item); ip != nil && ip.To4() != nil {
				item += "/32"
			} else {
				item += "/128"
			}
		}
		_, n, err := net.ParseCIDR(item)
		if err != nil {
			return nil, fmt.Errorf("%q is not a CIDR like 10.0.0.0/8: %w", item, err)
		}
		out = append(out, n)
	}
	return out, nil
}
