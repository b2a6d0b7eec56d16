package web

import (
	"crypto/subtle"
	"net"
	"net/http"
	"strconv"
	"strings"
	"time"

	"github.com/labstack/echo/v4"
	"github.com/prometheus/client_golang/prometheus"
	"github.com/prometheus/client_golang/prometheus/collectors"
	"github.com/prometheus/client_golang/prometheus/promhttp"
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
	}
	reg.MustRegister(t.requests, t.duration, t.polls,
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
	return t
}

// observe records one answered request.
func (t *telemetry) observe(route, method string, status int, took time.Duration) {
	if t == nil {
		return
	}
	t.requests.WithLabelValues(route, method, strconv.Itoa(status)).Inc()
	t.duration.WithLabelValues(route, method).Observe(took.Seconds())
}

// handleMetrics serves the Prometheus exposition. With MetricsToken set a
// scraper sends it as a bearer token; without one only loopback may scrape
// (a sidecar or an SSH tunnel), so a deployment never exposes its figures
// by accident.
func (s *Server) handleMetrics() echo.HandlerFunc {
	serve := promhttp.HandlerFor(s.telemetry.registry, promhttp.HandlerOpts{})
	return func(c echo.Context) error {
		if !s.mayScrape(c.Request()) {
			return echo.NewHTTPError(http.StatusNotFound)
		}
		serve.ServeHTTP(c.Response(), c.Request())
		return nil
	}
}

func (s *Server) mayScrape(r *http.Request) bool {
	if s.MetricsToken != "" {
		got, ok := strings.CutPrefix(r.Header.Get("Authorization"), "Bearer ")
		return ok && subtle.ConstantTimeCompare([]byte(got), []byte(s.MetricsToken)) == 1
	}
	host, _, err := net.SplitHostPort(r.RemoteAddr)
	if err != nil {
		return false
	}
	ip := net.ParseIP(host)
	return ip != nil && ip.IsLoopback() && r.Header.Get("X-Forwarded-For") == ""
}
