package web

import (
	"context"
	"net/http"
	"strconv"
	"strings"
	"time"

	"github.com/labstack/echo/v4"
	"github.com/prometheus/client_golang/prometheus"
	"github.com/prometheus/client_golang/prometheus/collectors"
	"github.com/prometheus/client_golang/prometheus/promhttp"

	"github.com/airside/airside/internal/alerting"
	"github.com/airside/airside/internal/apitoken"
	"github.com/airside/airside/internal/apperr"
	"github.com/airside/airside/internal/catalogue"
	"github.com/airside/airside/internal/preflight"
)

// telemetry is what the portal exports to Prometheus at /metrics: every
// request by route, method and status (the route pattern, never the raw
// path, so no token in a URL becomes a label), their durations, the long
// polls held, and the routing catalogue's revision and health age. It is
// fed by the request log middleware, the one place every request passes.
type telemetry struct {
	registry *prometheus.Registry
	requests *prometheus.CounterVec
	duration *prometheus.HistogramVec
	polls    prometheus.Gauge
	// elections counts the API's elections by the path they took: the
	// full ballot (elect), the compiled winner, or a full ballot for a
	// winner with custom weights.
	elections *prometheus.CounterVec
}

func newTelemetry(s *Server) *telemetry {
	reg := prometheus.NewRegistry()
	t := &telemetry{
		registry: reg,
		requests: prometheus.NewCounterVec(prometheus.CounterOpts{Name: "airside_http_requests_total",
			Help: "HTTP requests answered, by route pattern, method and status code."}, []string{"route", "method", "code"}),
		duration: prometheus.NewHistogramVec(prometheus.HistogramOpts{Name: "airside_http_request_duration_seconds",
			Help:    "Time to answer an HTTP request (a long poll includes its wait), by route pattern and method.",
			Buckets: []float64{.001, .0025, .005, .01, .025, .05, .1, .25, .5, 1, 2.5, 5, 10, 30, 60}}, []string{"route", "method"}),
		polls: prometheus.NewGauge(prometheus.GaugeOpts{Name: "airside_long_polls_held",
			Help: "Catalogue change long polls being held now."}),
		elections: prometheus.NewCounterVec(prometheus.CounterOpts{Name: "airside_elections_total",
			Help: "Elections the API ran, by path: full (POST /elect), winner_compiled (the snapshot's compiled ballot), winner_full (custom weights)."},
			[]string{"path"}),
	}
	for _, path := range []string{"full", "winner_compiled", "winner_full"} {
		t.elections.WithLabelValues(path) // every path is a series from the start
	}
	reg.MustRegister(t.requests, t.duration, t.polls, t.elections, s.watchGauge(),
		prometheus.NewCounterFunc(prometheus.CounterOpts{Name: "airside_snapshot_builds_total",
			Help: "Routing snapshots swapped in (each health refresh and each publication)."}, func() float64 {
			return float64(s.Routing.Stats().Builds)
		}),
		prometheus.NewCounterFunc(prometheus.CounterOpts{Name: "airside_snapshot_rereads_total",
			Help: "Routing snapshots that read listings, fares and tokens again (after a publication)."}, func() float64 {
			return float64(s.Routing.Stats().Rereads)
		}),
		prometheus.NewGaugeFunc(prometheus.GaugeOpts{Name: "airside_snapshot_build_seconds",
			Help: "How long the last routing snapshot (health refresh or publication) took to build."}, func() float64 {
			return s.Routing.Stats().LastBuild.Seconds()
		}),
		collectors.NewGoCollector(), collectors.NewProcessCollector(collectors.ProcessCollectorOpts{}),
		prometheus.NewGaugeFunc(prometheus.GaugeOpts{Name: "airside_catalogue_revision",
			Help: "The catalogue revision this process answers from (0 before its first snapshot)."}, func() float64 {
			rev, _ := s.Routing.Revision()
			return float64(rev)
		}),
		prometheus.NewGaugeFunc(prometheus.GaugeOpts{Name: "airside_routing_health_age_seconds",
			Help: "How old the health figures this process serves are."}, func() float64 { return s.Routing.Age().Seconds() }),
		prometheus.NewGaugeFunc(prometheus.GaugeOpts{Name: "airside_draining",
			Help: "1 while the process drains for shutdown (readyz answers 503)."}, func() float64 {
			if s.Draining() {
				return 1
			}
			return 0
		}),
	)
	inbox := func() catalogue.InboxStats {
		if s.Metrics == nil {
			return catalogue.InboxStats{}
		}
		return s.Metrics.Inbox.Stats()
	}
	reg.MustRegister(
		prometheus.NewGaugeFunc(prometheus.GaugeOpts{Name: "airside_metric_inbox_waiting",
			Help: "Metric batches posted with respond-async waiting to be folded, as this process knows."}, func() float64 {
			return float64(inbox().Waiting)
		}),
		prometheus.NewCounterFunc(prometheus.CounterOpts{Name: "airside_metric_inbox_received_total",
			Help: "Metric batches this process wrote to the inbox (answered before folding)."}, func() float64 {
			return float64(inbox().Received)
		}),
		prometheus.NewCounterFunc(prometheus.CounterOpts{Name: "airside_metric_inbox_folded_total",
			Help: "Inbox batches this process folded into the metrics."}, func() float64 {
			return float64(inbox().Folded)
		}),
		prometheus.NewCounterFunc(prometheus.CounterOpts{Name: "airside_metric_inbox_refused_total",
			Help: "Inbox batches refused when folded: they replay recorded minutes with other figures (the first write stands; each is logged)."}, func() float64 {
			return float64(inbox().Refused)
		}),
	)
	reg.MustRegister(&queueCollector{s: s},
		prometheus.NewCounterFunc(prometheus.CounterOpts{Name: "airside_preflight_runs_total",
			Help: "Preflight runs this process carried out."}, func() float64 {
			return float64(s.workerStats().Runs)
		}),
		prometheus.NewCounterFunc(prometheus.CounterOpts{Name: "airside_preflight_probes_total",
			Help: "Preflight probe verdicts of this process's runs.", ConstLabels: prometheus.Labels{"verdict": "passed"}}, func() float64 {
			return float64(s.workerStats().Passed)
		}),
		prometheus.NewCounterFunc(prometheus.CounterOpts{Name: "airside_preflight_probes_total",
			Help: "Preflight probe verdicts of this process's runs.", ConstLabels: prometheus.Labels{"verdict": "failed"}}, func() float64 {
			return float64(s.workerStats().Failed)
		}),
	)
	for outcome, read := range map[string]func(alerting.SenderStats) int64{
		"delivered": func(st alerting.SenderStats) int64 { return st.Delivered },
		"retried":   func(st alerting.SenderStats) int64 { return st.Retried },
		"gave_up":   func(st alerting.SenderStats) int64 { return st.GaveUp },
	} {
		reg.MustRegister(prometheus.NewCounterFunc(prometheus.CounterOpts{Name: "airside_webhook_attempts_total",
			Help:        "Webhook delivery attempts by outcome: delivered (2xx), retried (failed, another attempt queued), gave_up (the last attempt failed).",
			ConstLabels: prometheus.Labels{"outcome": outcome}}, func() float64 {
			if s.Webhooks == nil {
				return 0
			}
			return float64(read(s.Webhooks.Stats()))
		}))
	}
	reg.MustRegister(s.collectors...)
	return t
}

func (s *Server) workerStats() preflight.WorkerStats {
	if s.Preflight == nil {
		return preflight.WorkerStats{}
	}
	return s.Preflight.Stats()
}

// queueCollector reports the queues' depths at each scrape, in one
// statement with a short deadline: a database that does not answer leaves
// the series out of that scrape rather than hold the scraper.
type queueCollector struct{ s *Server }

var queueDepthDesc = prometheus.NewDesc("airside_queue_depth",
	"Work waiting, by queue: review (filings submitted, undecided), preflight (runs queued), webhooks (deliveries pending).",
	[]string{"queue"}, nil)

func (q *queueCollector) Describe(ch chan<- *prometheus.Desc) { ch <- queueDepthDesc }

func (q *queueCollector) Collect(ch chan<- prometheus.Metric) {
	ctx, cancel := context.WithTimeout(context.Background(), 2*time.Second)
	defer cancel()
	depths, err := q.s.HealthReads.QueueDepths(ctx)
	if err != nil {
		q.s.Log.Warn("metrics: queue depths", "err", err)
		return
	}
	for queue, n := range depths {
		ch <- prometheus.MustNewConstMetric(queueDepthDesc, prometheus.GaugeValue, float64(n), queue)
	}
}

// election counts one API election by its path.
func (t *telemetry) election(path string) {
	if t != nil {
		t.elections.WithLabelValues(path).Inc()
	}
}

// watchGauge exports the deadlock watchdog: background work at its turn
// longer than StuckAfter (what makes /healthz fail).
func (s *Server) watchGauge() prometheus.Collector {
	return prometheus.NewGaugeFunc(prometheus.GaugeOpts{Name: "airside_background_stuck",
		Help: "Background loops at their current turn longer than the watchdog allows (non-zero fails /healthz)."}, func() float64 {
		return float64(len(s.watch.stuck(s.stuckAfter())))
	})
}

// observe records one answered request.
func (t *telemetry) observe(route, method string, status int, took time.Duration) {
	if t == nil {
		return
	}
	t.requests.WithLabelValues(route, method, strconv.Itoa(status)).Inc()
	t.duration.WithLabelValues(route, method).Observe(took.Seconds())
}

// handleMetrics serves the Prometheus exposition to a gateway admin's
// session or to a token with the metrics:read scope (a scraper sends it as a
// bearer token). The figures name routes, volumes and queue depths, so they
// are not public; a scraper on a private network can instead read them
// without authentication from MetricsHandler on its own listener
// (AIRSIDE_METRICS_ADDR).
func (s *Server) handleMetrics() echo.HandlerFunc {
	serve := s.MetricsHandler()
	return func(c echo.Context) error {
		if _, _, bearer := strings.Cut(c.Request().Header.Get("Authorization"), " "); bearer {
			// apiAuth checks the token and its scope, and counts it.
			return s.apiAuth(apitoken.ScopeMetricsRead)(func(c echo.Context) error {
				serve.ServeHTTP(c.Response(), c.Request())
				return nil
			})(c)
		}
		p := principal(c)
		switch {
		case p == nil:
			c.Response().Header().Set("WWW-Authenticate", `Bearer realm="airside"`)
			return apperr.Errorf(apperr.EUNAUTHORIZED, "Sign in as a gateway admin, or send a token with the %s scope: Authorization: Bearer <token>.", apitoken.ScopeMetricsRead)
		case !p.IsAdmin():
			return apperr.Errorf(apperr.EFORBIDDEN, "Only a gateway admin reads the portal's metrics.")
		}
		serve.ServeHTTP(c.Response(), c.Request())
		return nil
	}
}

// MetricsHandler is the Prometheus exposition with no authentication of
// its own, for a listener only a scraper can reach (AIRSIDE_METRICS_ADDR).
func (s *Server) MetricsHandler() http.Handler {
	return promhttp.HandlerFor(s.telemetry.registry, promhttp.HandlerOpts{})
}
