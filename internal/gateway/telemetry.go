package gateway

import (
	"net/http"
	"strconv"
	"sync"
	"time"

	"github.com/prometheus/client_golang/prometheus"
	"github.com/prometheus/client_golang/prometheus/collectors"
	"github.com/prometheus/client_golang/prometheus/promhttp"
)

// telemetry is what the gateway measures of itself for Prometheus, beside
// what it reports to the portal: how many tries a request took and how long
// the gateway spent before its first carrier call.
type telemetry struct {
	tries   prometheus.Histogram
	routing prometheus.Histogram
	answers *prometheus.CounterVec
}

var (
	telemetryOnce sync.Once
	sharedMetrics *telemetry
)

// metrics is the process's telemetry (one set however many gateways a test
// builds; a registry takes each collector once).
func (g *Gateway) metrics() *telemetry {
	telemetryOnce.Do(func() {
		sharedMetrics = &telemetry{
			tries: prometheus.NewHistogram(prometheus.HistogramOpts{Name: "airside_gateway_tries_per_request",
				Help: "Carriers tried per chat request that reached one (fallback makes it more than 1).", Buckets: []float64{1, 2, 3}}),
			routing: prometheus.NewHistogram(prometheus.HistogramOpts{Name: "airside_gateway_routing_seconds",
				Help:    "Time from a chat request's arrival to its first carrier call: reading, checking and electing, the gateway's own added latency.",
				Buckets: []float64{.0001, .00025, .0005, .001, .0025, .005, .01, .025, .05, .1}}),
			answers: prometheus.NewCounterVec(prometheus.CounterOpts{Name: "airside_gateway_chat_requests_total",
				Help: "Chat requests answered, by the answer's status class (2xx, 4xx, 5xx)."}, []string{"code"}),
		}
	})
	return sharedMetrics
}

// answered counts a chat request's answer by its status class.
func (t *telemetry) answered(status int) {
	class := "none" // nothing was written: the caller left first
	if status > 0 {
		class = strconv.Itoa(status/100) + "xx"
	}
	t.answers.WithLabelValues(class).Inc()
}

// MetricsHandler serves the gateway's Prometheus exposition: chat requests
// by answer, tries per request, the gateway's added latency, and, read from
// the recorder at each scrape, every listing's attempts by outcome, served
// requests by how they came, capped requests; the catalogue's revision and
// age; the reporter's waiting and refused batches. It belongs on a listener
// of its own (--metrics-addr): per-listing traffic is not the customers'
// to read.
func (g *Gateway) MetricsHandler(reporter *Reporter) http.Handler {
	return promhttp.HandlerFor(g.metricsRegistry(reporter), promhttp.HandlerOpts{})
}

// metricsRegistry holds what MetricsHandler serves.
func (g *Gateway) metricsRegistry(reporter *Reporter) *prometheus.Registry {
	reg := prometheus.NewRegistry()
	t := g.metrics()
	reg.MustRegister(t.tries, t.routing, t.answers, &listingCollector{g: g},
		collectors.NewGoCollector(), collectors.NewProcessCollector(collectors.ProcessCollectorOpts{}),
		prometheus.NewGaugeFunc(prometheus.GaugeOpts{Name: "airside_gateway_fleet_redis_down",
			Help: "1 while the fleet's Redis does not answer and the replica routes on its own state (0 without a fleet)."}, func() float64 {
			if g.Fleet != nil && g.Fleet.Down() {
				return 1
			}
			return 0
		}),
		prometheus.NewGaugeFunc(prometheus.GaugeOpts{Name: "airside_gateway_catalogue_revision",
			Help: "The catalogue revision the gateway routes by (0 before the first read)."}, func() float64 {
			if cur := g.Follower.Current(); cur != nil {
				return float64(cur.Revision)
			}
			return 0
		}),
		prometheus.NewGaugeFunc(prometheus.GaugeOpts{Name: "airside_gateway_catalogue_age_seconds",
			Help: "Seconds since the portal last answered a catalogue read (-1 before the first)."}, func() float64 {
			at := g.Follower.CheckedAt()
			if at.IsZero() {
				return -1
			}
			return time.Since(at).Seconds()
		}))
	if reporter != nil {
		reg.MustRegister(
			prometheus.NewGaugeFunc(prometheus.GaugeOpts{Name: "airside_gateway_report_buckets_waiting",
				Help: "Closed listing-minutes waiting to be posted to the portal."}, func() float64 { return float64(reporter.Waiting()) }),
			prometheus.NewCounterFunc(prometheus.CounterOpts{Name: "airside_gateway_report_batches_refused_total",
				Help: "Metric batches the portal refused (409 or 422) and the gateway dropped."}, func() float64 { return float64(reporter.Refused()) }),
			prometheus.NewCounterFunc(prometheus.CounterOpts{Name: "airside_gateway_spool_adopted_counts_total",
				Help: "Counts that ended gateway processes left in the spool, read back and posted by this one."}, func() float64 { return float64(reporter.Adopted()) }),
			prometheus.NewCounterFunc(prometheus.CounterOpts{Name: "airside_gateway_spool_failed_writes_total",
				Help: "Counts the spool could not write (a full disk): lost if this process is killed before posting them."},
				func() float64 { return float64(g.Recorder.Spool.Failed()) }))
	}
	return reg
}

// listingCollector reads the recorder's totals at each scrape.
type listingCollector struct{ g *Gateway }

var (
	attemptsDesc = prometheus.NewDesc("airside_gateway_attempts_total",
		"Tries sent to a listing, by outcome: served, counted (its failure), not_counted (the caller's), rate_limited (429).",
		[]string{"listing", "outcome"}, nil)
	servedDesc = prometheus.NewDesc("airside_gateway_served_total",
		"Tries a listing served, by how they came: routed, pinned, exploration, fallback.", []string{"listing", "kind"}, nil)
	cappedDesc = prometheus.NewDesc("airside_gateway_capped_total",
		"Requests a listing could not take at its rate cap.", []string{"listing"}, nil)
	learnedDesc = prometheus.NewDesc("airside_gateway_learned_cache_hit_rate",
		"The cache-hit rate routing last learned for a project's model (from its last 24 hours, the whole fleet's with --redis; looked up again after 60 s), for the pairs routed in the last hour and past the learning gates.",
		[]string{"project", "model"}, nil)
)

func (c *listingCollector) Describe(ch chan<- *prometheus.Desc) {
	ch <- attemptsDesc
	ch <- servedDesc
	ch <- cappedDesc
	ch <- learnedDesc
}

func (c *listingCollector) Collect(ch chan<- prometheus.Metric) {
	names := map[int64]string{}
	if t := c.g.Follower.Current(); t != nil {
		for _, m := range t.Models {
			for _, l := range m.Listings {
				names[l.ListingID] = l.ID
			}
		}
	}
	for id, s := range c.g.Recorder.Totals() {
		name := names[id]
		if name == "" {
			name = "listing-" + strconv.FormatInt(id, 10) // no longer in the catalogue
		}
		counter := func(d *prometheus.Desc, v int64, labels ...string) {
			ch <- prometheus.MustNewConstMetric(d, prometheus.CounterValue, float64(v), append([]string{name}, labels...)...)
		}
		counter(attemptsDesc, s.Served(), "served")
		counter(attemptsDesc, s.Errors, "counted")
		counter(attemptsDesc, s.ClientErrors, "not_counted")
		counter(attemptsDesc, s.RateLimited, "rate_limited")
		counter(servedDesc, s.Routed, "routed")
		counter(servedDesc, s.Pinned, "pinned")
		counter(servedDesc, s.Exploration, "exploration")
		counter(servedDesc, s.Fallback, "fallback")
		counter(cappedDesc, s.Capped)
	}
	now := c.g.Now()
	c.g.rates.mu.Lock()
	defer c.g.rates.mu.Unlock()
	for k, e := range c.g.rates.by {
		if e.Combined != nil && now.Sub(e.at) < time.Hour {
			ch <- prometheus.MustNewConstMetric(learnedDesc, prometheus.GaugeValue, *e.Combined, k[0], k[1])
		}
	}
}
