// Package web is Airside's HTTP side: the echo server, its middleware
// (sessions, CSRF, authentication, roles), one error handler, and the handlers
// that turn requests into calls on the domain and pages out of templates.
package web

import (
	"context"
	"errors"
	"fmt"
	"log/slog"
	"net"
	"net/http"
	"slices"
	"strings"
	"sync"
	"sync/atomic"
	"time"

	"github.com/labstack/echo/v4"
	"github.com/labstack/echo/v4/middleware"
	"github.com/prometheus/client_golang/prometheus"

	"github.com/airside/airside/internal/account"
	"github.com/airside/airside/internal/alerting"
	"github.com/airside/airside/internal/apitoken"
	"github.com/airside/airside/internal/apperr"
	"github.com/airside/airside/internal/catalogue"
	"github.com/airside/airside/internal/feed"
	"github.com/airside/airside/internal/mailer"
	"github.com/airside/airside/internal/payout"
	"github.com/airside/airside/internal/preflight"
	"github.com/airside/airside/internal/ratelimit"
	"github.com/airside/airside/internal/routing"
	"github.com/airside/airside/internal/storefront"
	"github.com/airside/airside/internal/workflow"
	"github.com/airside/airside/static"
	"github.com/airside/airside/templates"
)

// HealthReads is what the probes of the portal itself read.
type HealthReads interface {
	Ping(ctx context.Context) error
	CheckWrite(ctx context.Context) error
	CatalogueRevision(ctx context.Context) (int64, error)
	// QueueDepths is the work waiting by queue, for /metrics.
	QueueDepths(ctx context.Context) (map[string]int64, error)
}

// MaxBodyBytes bounds every request body.
const MaxBodyBytes = "4M"

// Server is the portal. Handlers change things only through the services;
// pages and the API read through Reads.
type Server struct {
	// proxies are the networks X-Forwarded-* is believed from (TrustProxies).
	proxies atomic.Pointer[[]*net.IPNet]
	// What pages and the API read, resource by resource (each interface is
	// declared beside the handlers that use it).
	HealthReads     HealthReads
	AccountReads    AccountReads
	ListingReads    ListingReads
	FilingReads     FilingReads
	TrafficReads    TrafficReads
	StorefrontReads StorefrontReads
	AlertReads      AlertReads
	OnCallReads     OnCallReads
	OrgReads        OrgReads
	Accounts        AccountService
	Filings         FilingService
	Tokens          TokenService
	Metrics         *catalogue.Ingest
	// Holders keeps the shape holders gateways report (checked by Metrics).
	Holders catalogue.HolderStore
	// OrgUsage keeps what gateways report per customer organisation.
	OrgUsage catalogue.OrgStore
	// ProjectMinutes keeps what gateways report per API project (checked
	// by Metrics).
	ProjectMinutes catalogue.ProjectStore
	// Endpoints registers carriers' deployments and queues preflights;
	// Preflight is the worker that runs them (started with the background
	// work).
	Endpoints EndpointService
	Preflight PreflightRunner
	// Maintenance plans carriers' maintenance windows and applies them on
	// time (with the scheduler).
	Maintenance MaintenanceService
	// Alerts opens and resolves carriers' alerts; Webhooks sends them out;
	// Hooks manages carriers' webhooks.
	Alerts   AlertRunner
	Webhooks WebhookSender
	Hooks    HookService
	// Tuning changes carriers' alert rules and mutes.
	Tuning TuningService
	// Payouts builds, issues and corrects carriers' monthly statements.
	Payouts PayoutService
	// Feeds reads carriers' provider feeds into filings.
	Feeds FeedService
	// Self lets people manage their own accounts and their carrier's people.
	Self SelfService
	// AlertEmails is each person's choice about alert e-mails.
	AlertEmails AlertEmailChoice
	// TwoFactor runs two-factor enrolment and the code step of sign-in.
	TwoFactor TwoFactorService
	// Storefront runs applications, profiles, domains and model proposals.
	Storefront StorefrontService
	// Publications wakes long polls when any process publishes a revision.
	Publications Publications
	// Routing is the routing catalogue in memory: the catalogue, elect and
	// API tokens answer from it without SQL.
	Routing RoutingCatalogue
	// Projector projects listings' shares and keeps the traffic pages'
	// reads: every page's projected figure comes from it.
	Projector Projections
	// Now is the one clock of the portal; tests move it without sleeping.
	Now func() time.Time
	Log *slog.Logger
	// BaseURL is the portal's public address, used for links handed out
	// (invites). RequireBaseURL (production) refuses to make such links
	// without it.
	BaseURL        string
	RequireBaseURL bool
	// ScheduleEvery is how often serve publishes filings whose effective date
	// has come (default 30 s).
	ScheduleEvery time.Duration
	// LongPollRecheck is how often a held changes request looks again even
	// without a wake-up (default 5 s): a safety net under LISTEN/NOTIFY.
	LongPollRecheck time.Duration

	sessions  *dbSessionStore
	expensive *userLimiter
	// Mail sends sign-up and reset links when AIRSIDE_SMTP_URL is set (nil:
	// the pages show the links to pass on).
	Mail mailer.Mailer
	// touched is when each API token's use was last recorded from here.
	touchedMu  sync.Mutex
	touched    map[int64]time.Time
	echo       *echo.Echo
	telemetry  *telemetry
	collectors []prometheus.Collector
	// APILimits are the API's quotas per token, by scope (default
	// DefaultAPILimits; empty: none).
	APILimits  map[string]ratelimit.Policy
	apiLimiter *ratelimit.Limiter
	// ShutdownGrace is how long a drain waits for requests in flight before
	// it gives up (default 10 s; AIRSIDE_SHUTDOWN_GRACE).
	ShutdownGrace time.Duration
	// RequestDeadline bounds the work of one request (default 30 s;
	// AIRSIDE_REQUEST_DEADLINE); a long poll gets its wait on top. A
	// database that stops answering becomes a 503 the person can retry, not
	// a request that hangs and a transaction that holds a lock meanwhile.
	RequestDeadline time.Duration
	// drain is closed when the process starts shutting down: /readyz turns
	// 503 and long polls answer at once (see Drain).
	drainOnce sync.Once
	drain     chan struct{}
	// watch sees background work that never finishes its turn; StuckAfter
	// (default the package's StuckAfter) is how long a turn may take.
	watch      watchdog
	StuckAfter time.Duration
	// background is the work startBackground started; Run waits for it.
	background sync.WaitGroup
}

// Drain starts a graceful shutdown's first step: from now on /readyz answers
// 503, so a load balancer or Kubernetes stops sending new work, and every
// long poll, held or new, answers at once with the current revision (a poll
// is idempotent, so the gateway just polls again, elsewhere). It is safe to
// call more than once.
func (s *Server) Drain() { s.drainOnce.Do(func() { close(s.drain) }) }

// Draining reports whether Drain was called.
func (s *Server) Draining() bool {
	select {
	case <-s.drain:
		return true
	default:
		return false
	}
}

// Services are what the portal works with, built elsewhere (cmd/airside/wire
// on a store): web reads through small interfaces and changes things only
// through the services.
type Services struct {
	Reads        Reads
	Publications Publications
	Sessions     sessionRecords
	Routing      *routing.Keeper
	Projector    Projections
	Accounts     *account.Service
	Self         *account.SelfService
	AlertEmails  *account.AlertEmails
	TwoFactor    *account.TwoFactor
	Filings      *workflow.Service
	Tokens       *apitoken.Service
	Metrics      *catalogue.Ingest
	Holders      catalogue.HolderStore
	OrgUsage     catalogue.OrgStore
	Projects     catalogue.ProjectStore
	Endpoints    *workflow.Endpoints
	Preflight    *preflight.Worker
	Maintenance  *workflow.Maintenance
	Alerts       *alerting.Evaluator
	Webhooks     *alerting.Sender
	Hooks        *alerting.Hooks
	Tuning       *alerting.Tuning
	Payouts      *payout.Service
	Feeds        *feed.Syncer
	Storefront   *storefront.Service
	Mail         mailer.Mailer
	// Collectors are more Prometheus figures for /metrics (the database
	// pool's, from the store).
	Collectors []prometheus.Collector
	// Now is the one clock of the portal.
	Now func() time.Time
}

// New builds the portal's HTTP side over built services.
func New(svc Services, log *slog.Logger) *Server {
	now := svc.Now
	s := &Server{
		HealthReads:     svc.Reads,
		AccountReads:    svc.Reads,
		ListingReads:    svc.Reads,
		FilingReads:     svc.Reads,
		TrafficReads:    svc.Reads,
		StorefrontReads: svc.Reads,
		AlertReads:      svc.Reads,
		OnCallReads:     svc.Reads,
		OrgReads:        svc.Reads,
		Publications:    svc.Publications,
		Projector:       svc.Projector,
		Accounts:        svc.Accounts,
		Self:            svc.Self,
		TwoFactor:       svc.TwoFactor,
		Filings:         svc.Filings,
		Tokens:          svc.Tokens,
		Metrics:         svc.Metrics,
		Holders:         svc.Holders,
		OrgUsage:        svc.OrgUsage,
		ProjectMinutes:  svc.Projects,
		Endpoints:       svc.Endpoints,
		Maintenance:     svc.Maintenance,
		Alerts:          svc.Alerts,
		Hooks:           svc.Hooks,
		Storefront:      svc.Storefront,
		Mail:            svc.Mail,
		Now:             now,
		Log:             log,
		RequestDeadline: DefaultRequestDeadline,
		sessions:        &dbSessionStore{store: svc.Sessions, now: now},
		expensive:       newUserLimiter(MaxExpensivePerUser),
		APILimits:       DefaultAPILimits,
		drain:           make(chan struct{}),
		touched:         map[int64]time.Time{},
		collectors:      svc.Collectors,
	} // Set only when built: a nil service in an interface would not be nil.
	if svc.Routing != nil {
		s.Routing = svc.Routing
	}
	if svc.AlertEmails != nil {
		s.AlertEmails = svc.AlertEmails
	}
	if svc.Tuning != nil {
		s.Tuning = svc.Tuning
	}
	if svc.Payouts != nil {
		s.Payouts = svc.Payouts
	}
	if svc.Feeds != nil {
		s.Feeds = svc.Feeds
	}
	if svc.Preflight != nil {
		s.Preflight = svc.Preflight
	}
	if svc.Webhooks != nil {
		s.Webhooks = svc.Webhooks
	}

	if s.Metrics != nil && s.Metrics.Inbox != nil && s.Metrics.Inbox.Folded == nil {
		s.Metrics.Inbox.Folded = func(res catalogue.Folded) {
			for _, m := range res.Models {
				s.Projector.ForgetDemand(m)
			}
		}
	}
	s.telemetry = newTelemetry(s)
	s.apiLimiter = ratelimit.New(func() time.Time { return s.Now() }) // tests move s.Now after New
	e := echo.New()
	e.HideBanner, e.HidePort = true, true
	e.HTTPErrorHandler = s.handleError
	e.IPExtractor = echo.ExtractIPDirect() // X-Forwarded-For is believed only from trusted proxies
	s.echo = e
	s.routes()
	return s
}

// Handler is the portal as an http.Handler (for tests and servers).
func (s *Server) Handler() http.Handler { return s.echo }

// Echo exposes the router, for tests that walk every route.
func (s *Server) Echo() *echo.Echo { return s.echo }

// DefaultRequestDeadline is RequestDeadline unless configured.
const DefaultRequestDeadline = 30 * time.Second

// changesRoute is the long poll, whose deadline is RequestDeadline past its
// longest wait.
const changesRoute = "/api/v1/catalogue/changes"

// requestDeadline gives every request's context a deadline, which the store
// passes to each statement: past it the statement is cancelled and its
// transaction rolled back, and the request fails with a 503 saying the
// database was too slow. The error is answered (by the middleware outside)
// on the request's own context, not the expired one, so the page is written.
func (s *Server) requestDeadline(next echo.HandlerFunc) echo.HandlerFunc {
	return func(c echo.Context) error {
		d := s.RequestDeadline
		if d <= 0 {
			return next(c)
		}
		if c.Path() == changesRoute {
			d += MaxWait
		}
		orig := c.Request()
		ctx, cancel := context.WithTimeout(orig.Context(), d)
		c.SetRequest(orig.WithContext(ctx))
		err := next(c)
		pastDeadline := errors.Is(ctx.Err(), context.DeadlineExceeded)
		c.SetRequest(orig)
		cancel()
		if err != nil && pastDeadline && apperr.Code(err) == apperr.EINTERNAL {
			s.requestLogger(c).Error("request past its deadline", "method", orig.Method, "route", c.Path(), "deadline", d, "err", err)
			return &apperr.Error{Code: apperr.EUNAVAILABLE, RetryAfter: 5, Message: fmt.Sprintf(
				"Airside's database took longer than %s to answer. Nothing you submitted was half-saved; please try again in a moment.", d)}
		}
		return err
	}
}

// routes registers every route of the portal, in one place.
func (s *Server) routes() {
	e := s.echo
	e.Use(requestID)
	e.Use(traceRequests)
	e.Use(middleware.RecoverWithConfig(middleware.RecoverConfig{
		DisablePrintStack: true,
		LogErrorFunc: func(c echo.Context, err error, stack []byte) error {
			s.Log.Error("panic", "id", c.Response().Header().Get(echo.HeaderXRequestID), "route", c.Path(), "err", err, "stack", string(stack))
			return err
		},
	}))
	e.Use(requestLog(s.Log, s.telemetry))
	e.Use(s.requestDeadline)
	e.Use(s.forwardedOnlyFromProxies)
	e.Use(securityHeaders)
	e.Use(middleware.BodyLimit(MaxBodyBytes))

	e.GET("/healthz", s.handleHealthz)
	e.GET("/readyz", s.handleReadyz)
	e.StaticFS("/static", static.FS)
	// Browsers ask for /favicon.ico whatever the page says: point them at it.
	e.GET("/favicon.ico", func(c echo.Context) error {
		return c.Redirect(http.StatusMovedPermanently, "/static/img/favicon.svg")
	})

	e.GET("/metrics", s.handleMetrics(), s.loadPrincipal)

	api := e.Group("/api/v1")
	api.GET("/catalogue", s.handleAPICatalogue, s.apiAuth(apitoken.ScopeCatalogueRead))
	api.GET(strings.TrimPrefix(changesRoute, "/api/v1"), s.handleAPIChanges, s.apiAuth(apitoken.ScopeCatalogueRead))
	api.GET("/catalogue/health", s.handleAPIHealth, s.apiAuth(apitoken.ScopeCatalogueRead))
	api.POST("/elect", s.handleAPIElect, s.apiAuth(apitoken.ScopeElect))
	api.POST("/elect/winner", s.handleAPIElectWinner, s.apiAuth(apitoken.ScopeElect))
	api.POST("/metrics", s.handleAPIMetrics, s.apiAuth(apitoken.ScopeMetricsWrite))
	api.POST("/metrics/holders", s.handleAPIShapeHolders, s.apiAuth(apitoken.ScopeMetricsWrite))
	api.POST("/metrics/organisations", s.handleAPIOrgUsage, s.apiAuth(apitoken.ScopeMetricsWrite))
	api.POST("/metrics/projects", s.handleAPIProjectMinutes, s.apiAuth(apitoken.ScopeMetricsWrite))
	api.GET("/listings/:listingId/credentials", s.handleAPICredentials, s.apiAuth(apitoken.ScopeCredentialsRead))
	// A carrier's automation, by a token its admin issued.
	api.GET("/carrier/listings", s.handleCarrierListings, s.carrierAuth(apitoken.ScopeFaresRead))
	api.POST("/carrier/listings/:listingId/filings", s.handleCarrierFile, s.carrierAuth(apitoken.ScopeFaresWrite))
	api.POST("/carrier/listings/:listingId/preview", s.handleCarrierPreview, s.carrierAuth(apitoken.ScopeFaresRead))
	api.POST("/carrier/listings/:listingId/endpoint", s.handleCarrierEndpoint, s.carrierAuth(apitoken.ScopeEndpointsWrite))
	api.POST("/carrier/listings/:listingId/preflight", s.handleCarrierRunPreflight, s.carrierAuth(apitoken.ScopeEndpointsWrite))
	api.GET("/carrier/listings/:listingId/preflight", s.handleCarrierPreflight, s.carrierAuth(apitoken.ScopeFaresRead))
	api.GET("/carrier/filings", s.handleCarrierFilings, s.carrierAuth(apitoken.ScopeFaresRead))
	api.GET("/carrier/traffic", s.handleCarrierTraffic, s.carrierAuth(apitoken.ScopeTrafficRead))
	api.GET("/carrier/earnings", s.handleCarrierEarnings, s.carrierAuth(apitoken.ScopeTrafficRead))
	api.GET("/carrier/statements/:month", s.handleCarrierStatement, s.carrierAuth(apitoken.ScopeTrafficRead))
	api.GET("/carrier/filings/:filingId", s.handleCarrierFiling, s.carrierAuth(apitoken.ScopeFaresRead))
	api.POST("/carrier/filings/:filingId/withdraw", s.handleCarrierWithdraw, s.carrierAuth(apitoken.ScopeFaresWrite))
	api.GET("/openapi.yaml", s.handleOpenAPI("yaml"))
	api.GET("/openapi.json", s.handleOpenAPI("json"))
	api.RouteNotFound("/*", s.handleAPINotFound)

	pages := e.Group("", csrf, s.loadPrincipal)
	pages.GET("/", s.handleHome)
	pages.GET("/login", s.handleLoginForm)
	pages.POST("/login", s.handleLogin)
	pages.GET("/login/two-factor", s.handleSecondStepForm)
	pages.POST("/login/two-factor", s.handleSecondStep)
	pages.POST("/logout", s.handleLogout)
	pages.POST("/logout/everywhere", s.handleLogoutEverywhere, requireLogin)
	pages.GET("/signup/:token", s.handleSignupForm)
	pages.POST("/signup/:token", s.handleSignup)
	// The storefront: public pages and the application to carry.
	pages.GET("/reset/:token", s.handleResetForm)
	pages.POST("/reset/:token", s.handleReset)
	pages.GET("/glossary", func(c echo.Context) error {
		return render(c, http.StatusOK, templates.Glossary(s.page(c, "Glossary", "glossary")))
	})
	pages.GET("/apply", s.handleApplyForm)
	pages.POST("/apply", s.handleApply)
	pages.GET("/apply/status/:token", s.handleApplicationStatus)
	pages.POST("/apply/status/:token", s.handleApplicationReply)
	pages.GET("/carriers/:slug", s.handlePublicCarrier)
	pages.GET("/carriers/:slug/logo", s.handlePublicLogo)
	pages.GET("/models", s.handlePublicModels)
	pages.GET("/models/:slug", s.handlePublicModel)
	// The published catalogue in other tools' shapes (internal/export).
	pages.GET("/exports/openrouter/models.json", s.handleExport(routing.ExportOpenRouter))
	pages.GET("/exports/litellm/model_prices.json", s.handleExport(routing.ExportLiteLLM))

	member := pages.Group("", requireLogin, requireTwoFactorEnrolment)
	member.GET("/listings", s.handleListings)
	member.POST("/listings", s.handleAddListing)
	member.GET("/listings/:id", s.handleListing)
	member.GET("/listings/:id/prices", s.handlePriceHistory)
	member.GET("/listings/:id/file", s.handleFileForm, s.limitExpensive)
	member.POST("/listings/:id/file", s.handleFile, s.limitExpensive)
	member.GET("/listings/:id/preview", s.handlePreviewPage, s.limitExpensive)
	member.POST("/listings/:id/preview", s.handlePreview, s.limitExpensive)
	member.POST("/listings/:id/pause", s.handlePause)
	member.POST("/listings/:id/maintenance", s.handlePlanMaintenance)
	member.POST("/listings/:id/maintenance/:wid/cancel", s.handleCancelMaintenance)
	member.POST("/listings/:id/endpoint", s.handleRegisterEndpoint)
	member.GET("/listings/:id/preflight", s.handlePreflightPanel)
	member.POST("/listings/:id/preflight", s.handleRunPreflight)
	member.POST("/listings/:id/resume", s.handleResume)
	member.GET("/filings", s.handleFilings)
	member.POST("/filings/submit", s.handleSubmitFilings)
	member.GET("/filings/:id", s.handleFilingPage)
	member.GET("/filings/:id/edit", s.handleFilingEditForm, s.limitExpensive)
	member.POST("/filings/:id/edit", s.handleFilingEdit, s.limitExpensive)
	member.POST("/filings/:id/submit", s.handleFilingSubmit)
	member.POST("/filings/:id/withdraw", s.handleFilingWithdraw)
	member.POST("/filings/:id/refresh", s.handleRefresh)
	member.POST("/filings/:id/comment", s.handleComment)
	member.POST("/filings/:id/approve", s.handleApprove, requireReviewer)
	member.POST("/filings/:id/decline", s.handleDecline, requireReviewer)
	// A refused action re-renders the filing at its action's URL; reloading
	// or sharing that URL leads back to the filing instead of a 404.
	for _, action := range []string{"submit", "withdraw", "refresh", "comment", "approve", "decline"} {
		member.GET("/filings/:id/"+action, s.handleBackToFiling)
	}
	member.POST("/listings/:id/capabilities", s.handleVerifyCapability, requireReviewer)
	member.POST("/listings/:id/priority", s.handleSetPriority, requireAdmin)
	member.POST("/listings/:id/delist", s.handleDelist, requireAdmin)
	member.GET("/review", s.handleQueue, requireReviewer)
	member.GET("/inbox", s.handleInbox)
	member.GET("/fares/bulk", s.handleBulkForm)
	member.POST("/fares/bulk", s.handleBulkUpload, s.limitExpensive)
	member.GET("/fares/bulk/template.csv", s.handleBulkTemplate)
	member.GET("/audit", s.handleAudit)
	member.GET("/traffic", s.handleTraffic)
	member.GET("/traffic/listings/:id", s.handleListingTraffic)
	member.GET("/traffic/statements/:month", s.handleStatement)
	member.GET("/operations", s.handleOperations, requireReviewer)
	member.GET("/alerts", s.handleAlerts)
	member.GET("/oncall", s.handleOnCall)
	member.POST("/alerts/webhook", s.handleSetWebhook)
	member.POST("/alerts/webhook/test", s.handleTestWebhook)
	member.POST("/alerts/webhook/rotate", s.handleRotateWebhookSecret)
	member.POST("/alerts/deliveries/:id/resend", s.handleResendDelivery)
	member.POST("/alerts/webhook/delete", s.handleDeleteWebhook)
	member.POST("/alerts/rules", s.handleSetAlertRules)
	member.POST("/alerts/mute", s.handleMuteAlerts)
	member.POST("/alerts/mutes/:id/end", s.handleUnmute)
	member.GET("/audit.csv", s.handleAuditCSV)
	member.GET("/applications", s.handleApplications, requireReviewer)
	member.GET("/applications/:id", s.handleApplication, requireReviewer)
	member.POST("/applications/:id/ask", s.handleApplicationAsk, requireReviewer)
	member.POST("/applications/:id/approve", s.handleApplicationApprove, requireReviewer)
	member.POST("/applications/:id/decline", s.handleApplicationDecline, requireReviewer)
	member.GET("/account", s.handleAccount)
	member.POST("/account/password", s.handleChangePassword)
	member.POST("/account/alert-email", s.handleAlertEmail)
	member.GET("/account/two-factor", s.handleTwoFactor)
	member.POST("/account/two-factor/begin", s.handleTwoFactorBegin)
	member.POST("/account/two-factor/confirm", s.handleTwoFactorConfirm)
	member.POST("/account/two-factor/recovery-codes", s.handleTwoFactorRecoveryCodes)
	member.POST("/account/two-factor/disable", s.handleTwoFactorDisable)
	member.POST("/account/two-factor/forget-browsers", s.handleTwoFactorForgetBrowsers)
	member.GET("/carrier/members", s.handleMembers)
	member.POST("/carrier/members/invite", s.handleInviteMember)
	member.POST("/carrier/members/:id/role", s.handleMemberRole)
	member.POST("/carrier/members/:id/remove", s.handleRemoveMember)
	member.GET("/carrier/feed", s.handleFeed)
	member.POST("/carrier/feed", s.handleSetFeed)
	member.POST("/carrier/feed/read", s.handleReadFeed)
	member.POST("/carrier/feed/mapping", s.handleMapFeed)
	member.POST("/carrier/feed/remove", s.handleRemoveFeed)
	member.GET("/carrier/tokens", s.handleTokens)
	member.POST("/carrier/tokens", s.handleCreateToken)
	member.POST("/carrier/tokens/:id/revoke", s.handleRevokeToken)
	member.GET("/carrier/profile", s.handleProfile)
	member.POST("/carrier/profile", s.handleSubmitProfile)
	member.POST("/carrier/domain", s.handleSetDomain)
	member.POST("/carrier/domain/check", s.handleCheckDomain)
	member.POST("/profiles/:id/approve", s.handleProfileDecision(true), requireReviewer)
	member.POST("/profiles/:id/decline", s.handleProfileDecision(false), requireReviewer)
	member.GET("/profiles/:id/logo", s.handleProfileChangeLogo, requireReviewer)
	member.GET("/proposals", s.handleProposals)
	member.POST("/proposals", s.handlePropose)
	member.POST("/proposals/:id/accept", s.handleProposalDecision(true), requireReviewer)
	member.POST("/proposals/:id/decline", s.handleProposalDecision(false), requireReviewer)

	admin := member.Group("/admin", requireAdmin)
	admin.GET("/users", s.handleAdminUsers)
	admin.POST("/users/:id/deactivate", s.handleSetActive(false))
	admin.POST("/users/:id/activate", s.handleSetActive(true))
	admin.POST("/users/:id/reset", s.handleIssueReset)
	admin.POST("/users/:id/two-factor-reset", s.handleTwoFactorReset)
	admin.POST("/two-factor-policy", s.handleTwoFactorPolicy)
	admin.GET("/throttles", s.handleAdminThrottles)
	admin.POST("/throttles/clear", s.handleClearThrottle)
	admin.GET("/carriers", s.handleAdminCarriers)
	admin.POST("/carriers/invite", s.handleInviteCarrier)
	admin.GET("/tokens", s.handleTokens)
	admin.POST("/tokens", s.handleCreateToken)
	admin.POST("/tokens/:id/revoke", s.handleRevokeToken)
}

// Run serves on addr until ctx ends, then shuts down gracefully, giving
// requests in flight up to 10 seconds.
func (s *Server) Run(ctx context.Context, addr string) error {
	srv := s.httpServer(addr)
	s.startBackground(ctx)
	if s.Routing != nil {
		// Build the routing snapshot now rather than on the first request;
		// /readyz says ready only once it is built.
		go func() {
			if _, err := s.Routing.Current(ctx); err != nil && ctx.Err() == nil {
				s.Log.Warn("routing snapshot at start", "err", err)
			}
		}()
	}
	errc := make(chan error, 1)
	go func() { errc <- srv.ListenAndServe() }()
	select {
	case err := <-errc:
		return fmt.Errorf("serve %s: %w", addr, err)
	case <-ctx.Done():
	}
	grace := s.ShutdownGrace
	if grace <= 0 {
		grace = 10 * time.Second
	}
	s.Log.Info("draining: readyz answers 503, long polls answer now", "grace", grace)
	s.Drain()
	shutdownCtx, cancel := context.WithTimeout(context.Background(), grace)
	defer cancel()
	if err := srv.Shutdown(shutdownCtx); err != nil {
		return fmt.Errorf("shutdown: requests still in flight after the %s grace: %w", grace, err)
	}
	if err := s.waitBackground(shutdownCtx); err != nil {
		return fmt.Errorf("shutdown: %w", err)
	}
	s.Log.Info("shut down cleanly")
	if err := <-errc; err != nil && !errors.Is(err, http.ErrServerClosed) {
		return err
	}
	return nil
}

// stuckAfter is how long a background turn may take before the watchdog
// calls it stuck.
func (s *Server) stuckAfter() time.Duration {
	if s.StuckAfter <= 0 {
		return StuckAfter
	}
	return s.StuckAfter
}

// handleHealthz says whether the process is alive: it fails (and a
// supervisor should restart the process) only when the watchdog sees a
// background loop or the write check stuck past StuckAfter, the sign of a
// wedged process; a database outage leaves it at 200 (restarting would not
// help) and turns /readyz to 503 instead.
func (s *Server) handleHealthz(c echo.Context) error {
	if stuck := s.watch.stuck(s.stuckAfter()); len(stuck) > 0 {
		return c.String(http.StatusServiceUnavailable, "stuck: "+strings.Join(stuck, ", ")+"\n")
	}
	return c.String(http.StatusOK, "ok\n")
}

// handleReadyz says whether this process should be sent work, and if not
// why, in one line: not while it drains, not while the database cannot take
// a write (a ping answers on a full disk or a read-only file), and not before
// the routing snapshot is built, so a rolling deploy never sends a gateway's
// first requests to a process that still has to read every listing.
func (s *Server) handleReadyz(c echo.Context) error {
	if s.Draining() {
		return c.String(http.StatusServiceUnavailable, "draining: this process is shutting down\n")
	}
	ctx := c.Request().Context()
	if err := s.HealthReads.Ping(ctx); err != nil {
		s.Log.Warn("not ready", "err", err)
		return c.String(http.StatusServiceUnavailable, "database unavailable: "+oneLine(err)+"\n")
	}
	if err := s.HealthReads.CheckWrite(ctx); err != nil {
		s.Log.Warn("not ready", "err", err)
		return c.String(http.StatusServiceUnavailable, "not ready: "+oneLine(err)+"\n")
	}
	if s.Routing != nil {
		if _, err := s.Routing.Current(ctx); err != nil {
			s.Log.Warn("not ready", "err", err)
			return c.String(http.StatusServiceUnavailable, "routing catalogue not built: "+oneLine(err)+"\n")
		}
	}
	return c.String(http.StatusOK, "ready\n")
}

func oneLine(err error) string { return strings.ReplaceAll(err.Error(), "\n", " ") }

func (s *Server) handleHome(c echo.Context) error {
	if principal(c) == nil {
		return c.Redirect(http.StatusSeeOther, "/login")
	}
	return c.Redirect(http.StatusSeeOther, "/listings")
}

// TrustProxies believes X-Forwarded-For only from these networks (the
// reverse proxies in front of the portal); with none, the client address is
// the connection's, so no client can choose its throttling address.
func (s *Server) TrustProxies(nets []*net.IPNet) {
	s.proxies.Store(&nets)
	if len(nets) == 0 {
		s.echo.IPExtractor = echo.ExtractIPDirect()
		return
	}
	opts := []echo.TrustOption{echo.TrustLoopback(false), echo.TrustLinkLocal(false), echo.TrustPrivateNet(false)}
	for _, n := range nets {
		opts = append(opts, echo.TrustIPRange(n))
	}
	s.echo.IPExtractor = echo.ExtractIPFromXFFHeader(opts...)
}

// forwardedOnlyFromProxies drops X-Forwarded-Proto from a request that did
// not come through a trusted proxy: otherwise any client could say it came
// over HTTPS and have its cookies marked Secure (and HSTS sent) on a plain
// connection.
func (s *Server) forwardedOnlyFromProxies(next echo.HandlerFunc) echo.HandlerFunc {
	return func(c echo.Context) error {
		r := c.Request()
		if r.Header.Get("X-Forwarded-Proto") != "" && !s.fromProxy(r.RemoteAddr) {
			r.Header.Del("X-Forwarded-Proto")
		}
		return next(c)
	}
}

// fromProxy reports whether a connection's peer is a trusted proxy.
func (s *Server) fromProxy(remoteAddr string) bool {
	nets := s.proxies.Load()
	if nets == nil {
		return false
	}
	host, _, err := net.SplitHostPort(remoteAddr)
	if err != nil {
		host = remoteAddr
	}
	ip := net.ParseIP(host)
	for _, n := range *nets {
		if ip != nil && n.Contains(ip) {
			return true
		}
	}
	return false
}

// httpServer is the portal's HTTP server. A body trickled a byte at a time
// cannot hold a connection: the whole request must arrive within
// ReadTimeout, and the longest answer (a long poll of MaxWait) must be
// written within WriteTimeout.
func (s *Server) httpServer(addr string) *http.Server {
	return &http.Server{Addr: addr, Handler: s.echo, ReadHeaderTimeout: 10 * time.Second, ReadTimeout: 30 * time.Second,
		WriteTimeout: MaxWait + 30*time.Second, IdleTimeout: 2 * time.Minute}
}

// handleAPINotFound answers an API path no route took: 405 with Allow when
// the path exists for other methods, 404 otherwise.
func (s *Server) handleAPINotFound(c echo.Context) error {
	var allow []string
	for _, r := range s.echo.Routes() {
		if r.Path == c.Request().URL.Path && r.Method != echo.RouteNotFound {
			allow = append(allow, r.Method)
		}
	}
	if len(allow) == 0 {
		return apperr.Errorf(apperr.ENOTFOUND, "No such API endpoint.")
	}
	slices.Sort(allow)
	c.Response().Header().Set("Allow", strings.Join(allow, ", "))
	return echo.NewHTTPError(http.StatusMethodNotAllowed, "This endpoint answers "+strings.Join(allow, ", ")+".")
}
