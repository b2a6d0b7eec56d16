// Package wire builds the portal: every service on one store, with one
// clock, one secret box and one outbound guard, handed to web.New. It is
// the only place the services meet the store (web depends on the services
// and on small read interfaces, never on internal/store). cmd/airside calls
// it; so do the web tests and the soak tool, so they test the portal as it
// runs.
package wire

import (
	"context"
	"fmt"
	"log/slog"
	"net"
	"os"
	"time"

	"github.com/prometheus/client_golang/prometheus"
	"github.com/prometheus/client_golang/prometheus/collectors"

	"github.com/airside/airside/internal/account"
	"github.com/airside/airside/internal/alerting"
	"github.com/airside/airside/internal/apitoken"
	"github.com/airside/airside/internal/catalogue"
	"github.com/airside/airside/internal/feed"
	"github.com/airside/airside/internal/mailer"
	"github.com/airside/airside/internal/netguard"
	"github.com/airside/airside/internal/payout"
	"github.com/airside/airside/internal/preflight"
	"github.com/airside/airside/internal/projection"
	"github.com/airside/airside/internal/routing"
	"github.com/airside/airside/internal/secret"
	"github.com/airside/airside/internal/store"
	"github.com/airside/airside/internal/storefront"
	"github.com/airside/airside/internal/workflow"
	"github.com/airside/airside/web"
)

// Config is what differs between deployments, the demo and tests.
type Config struct {
	// Secrets seals endpoint keys and webhook secrets; nil is a random key
	// for this process only (tests).
	Secrets *secret.Box
	// AllowPrivate lets probes, webhooks and domain checks reach private
	// addresses (the demo and tests).
	AllowPrivate bool
	// RequireReady makes a listing's first fare wait for a passing
	// preflight.
	RequireReady bool
	// ProbeFreshness is how long a passed probe vouches for a capability
	// (default 7 days): the store's verdicts and the worker read this one
	// value.
	ProbeFreshness time.Duration
	// OverrideFor is how long a reviewer's capability override lasts
	// (default workflow.DefaultOverrideFor).
	OverrideFor time.Duration
	// Notice is the notice period of a raise (default workflow.DefaultNotice);
	// QuarantineFactor the price move needing two reviewers (default 3).
	Notice           time.Duration
	QuarantineFactor float64
	// Mail sends sign-up and reset links (nil: pages show them).
	Mail mailer.Mailer
	Log  *slog.Logger
	// ProjectionStaleFor lets a page take the projection made before the
	// last metric batches while the next is worked out in the background,
	// for at most this long (projection.Projector.StaleFor; zero: every
	// page after a batch projects anew, as tests that post and read at once
	// need).
	ProjectionStaleFor time.Duration
}

// Portal builds the portal's services on st and the server over them.
func Portal(st *store.Store, cfg Config) *web.Server {
	log := cfg.Log
	if log == nil {
		log = slog.New(slog.DiscardHandler)
	}
	box := cfg.Secrets
	if box == nil {
		box = throwawayBox()
	}
	freshness := cfg.ProbeFreshness
	if freshness <= 0 {
		freshness = 7 * 24 * time.Hour
	}
	st.ProbeFreshness = freshness
	if cfg.OverrideFor > 0 {
		st.OverrideFor = cfg.OverrideFor
	}
	now := func() time.Time { return st.Now() } // follows the store's clock, which tests move
	keeper := routing.NewKeeper(st, now)
	keeper.OnError = func(err error) { log.Warn("routing snapshot refresh", "err", err) }
	st.OnPublished(keeper.Invalidate)

	guard := netguard.New(cfg.AllowPrivate)
	endpoints := &workflow.Endpoints{Store: st, Secrets: box, Outbound: guard}
	worker := &preflight.Worker{Store: st, OpenKey: endpoints.OpenKey, Name: workerName(), Log: log, Freshness: freshness,
		Runner: &preflight.Runner{HTTP: guard.Client(2 * time.Minute), Now: now}}
	endpoints.Queued = worker.Wake
	// A resume skips review only after a preflight passed since the pause,
	// whether or not approvals require a passed preflight.
	filings := &workflow.Service{Store: st, Now: now, Approvals: st, Notice: cfg.Notice, QuarantineFactor: cfg.QuarantineFactor,
		PassedPreflightSince: endpoints.PassedPreflightSince}
	maintenance := &workflow.Maintenance{Store: st, Now: now}
	if cfg.RequireReady {
		filings.ReadyForService = endpoints.ReadyForService
		maintenance.ReadyForService = endpoints.ReadyForService
	}
	hooks := &alerting.Hooks{Store: st, Secrets: box, Outbound: guard}
	alerts := &alerting.Evaluator{Store: st, Now: now, Log: log, Recipients: (&account.AlertEmails{Store: st}).Recipients, Ranks: func(ctx context.Context, at time.Time) (alerting.Ranks, error) {
		snap, err := keeper.Current(ctx)
		if err != nil {
			return alerting.Ranks{}, err
		}
		return alerting.RanksOf(snap, at), nil
	}}
	if cfg.Mail != nil {
		alerts.Mail, alerts.Outbox = cfg.Mail, st // alerts by e-mail only where a relay is configured
		alerts.Digest = &alerting.Digest{Store: st, Mail: cfg.Mail, Outbox: st, Now: now, Log: log,
			Recipients: (&account.AlertEmails{Store: st}).DigestRecipients}
	}
	projector := &projection.Projector{Reads: st, Routing: keeper, Now: now, Recorder: st, StaleFor: cfg.ProjectionStaleFor, Log: log}
	// Another serve process's metric writes (announced on PostgreSQL) make
	// this one's kept demand stale as its own would.
	st.OnRemoteMetrics(projector.ForgetAllDemand)
	return web.New(web.Services{
		Reads:        st,
		Publications: st,
		Sessions:     st,
		Routing:      keeper,
		Projector:    projector,
		Accounts:     &account.Service{Store: st, Now: now},
		Self:         &account.SelfService{Store: st, Now: now},
		AlertEmails:  &account.AlertEmails{Store: st},
		TwoFactor:    &account.TwoFactor{Store: st, Secrets: box, Now: now},
		Filings:      filings,
		Tokens:       &apitoken.Service{Store: st, Now: now},
		Holders:      st,
		OrgUsage:     st,
		Projects:     st,
		Metrics: &catalogue.Ingest{Store: st, Now: now, Inbox: &catalogue.Inbox{Store: st, Log: log}, Index: func(ctx context.Context) (*catalogue.ListingIndex, error) {
			snap, err := keeper.Current(ctx)
			if err != nil {
				return nil, err
			}
			return snap.Listings(), nil
		}},
		Endpoints:   endpoints,
		Preflight:   worker,
		Maintenance: maintenance,
		Alerts:      alerts,
		Webhooks: &alerting.Sender{Store: st, HTTP: guard.Client(30 * time.Second), OpenSecret: hooks.OpenSecret, Now: now, Log: log,
			IDKey: box.MAC("webhook-id", "")},
		Tuning:  &alerting.Tuning{Store: st, Now: now},
		Payouts: &payout.Service{Listings: st, Projections: projector, Store: st, Now: now, Log: log},
		Feeds: &feed.Syncer{Store: st, Reads: st, Filer: filings, HTTP: guard.Client(30 * time.Second), Now: now,
			Check: func(raw string) error { _, err := guard.CheckURL(raw); return err }},
		Hooks: hooks,
		Storefront: &storefront.Service{Store: st, Secrets: box, Now: now,
			Verify: &storefront.DomainVerifier{Resolver: net.DefaultResolver, HTTP: guard.Client(15 * time.Second)}},
		Mail:       cfg.Mail,
		Collectors: poolCollectors(st),
		Now:        now,
	}, log)
}

// throwawayBox seals with a random key: what it seals does not outlive the
// process.
func throwawayBox() *secret.Box {
	k, err := secret.ParseKey(secret.NewKey())
	if err != nil {
		panic(err) // a fresh random key always parses
	}
	box, err := secret.New(k)
	if err != nil {
		panic(err)
	}
	return box
}

// workerName names this process in preflight claims.
func workerName() string {
	host, _ := os.Hostname()
	return fmt.Sprintf("%s/%d", host, os.Getpid())
}

// poolCollectors export the database pools' figures (connections open, in
// use, idle, waits) as airside_db_* with a pool label.
func poolCollectors(st *store.Store) []prometheus.Collector {
	var out []prometheus.Collector
	for role, db := range st.Pools() {
		out = append(out, prometheus.WrapCollectorWith(prometheus.Labels{"pool": role}, collectors.NewDBStatsCollector(db, "airside")))
	}
	return out
}
