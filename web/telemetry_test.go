package web_test

import (
	"net/http"
	"net/http/httptest"
	"strings"
	"testing"
	"time"

	dto "github.com/prometheus/client_model/go"
	"github.com/prometheus/common/expfmt"
	"github.com/prometheus/common/model"

	"github.com/airside/airside/internal/apitoken"
	"github.com/airside/airside/internal/store"
)

// scrape reads /metrics as Prometheus would and parses the exposition.
func scrape(t *testing.T, base, path, token string) map[string]*dto.MetricFamily {
	t.Helper()
	req, _ := http.NewRequest("GET", base+path, nil)
	if token != "" {
		req.Header.Set("Authorization", "Bearer "+token)
	}
	res, err := http.DefaultClient.Do(req)
	if err != nil {
		t.Fatal(err)
	}
	defer res.Body.Close()
	if res.StatusCode != http.StatusOK {
		t.Fatalf("GET %s: %d", path, res.StatusCode)
	}
	parser := expfmt.NewTextParser(model.UTF8Validation)
	families, err := parser.TextToMetricFamilies(res.Body)
	if err != nil {
		t.Fatalf("the exposition does not parse: %v", err)
	}
	return families
}

// scrapeUntil scrapes until ok holds, up to a deadline that holds on a busy
// machine, and returns that scrape.
func scrapeUntil(t *testing.T, base, token, what string, ok func(map[string]*dto.MetricFamily) bool) map[string]*dto.MetricFamily {
	t.Helper()
	deadline := time.Now().Add(30 * time.Second)
	for {
		families := scrape(t, base, "/metrics", token)
		if ok(families) {
			return families
		}
		if time.Now().After(deadline) {
			t.Fatalf("gave up waiting for %s", what)
		}
		time.Sleep(20 * time.Millisecond)
	}
}

// sample is the value of family's series whose labels include want.
func sample(families map[string]*dto.MetricFamily, family string, want map[string]string) (float64, bool) {
	f := families[family]
	if f == nil {
		return 0, false
	}
next:
	for _, m := range f.GetMetric() {
		for name, value := range want {
			found := false
			for _, l := range m.GetLabel() {
				found = found || l.GetName() == name && l.GetValue() == value
			}
			if !found {
				continue next
			}
		}
		switch {
		case m.Counter != nil:
			return m.GetCounter().GetValue(), true
		case m.Gauge != nil:
			return m.GetGauge().GetValue(), true
		case m.Histogram != nil:
			return float64(m.GetHistogram().GetSampleCount()), true
		}
	}
	return 0, false
}

// TestPrometheusMetrics scrapes /metrics with a metrics:read token, checks
// the named series are there, and that they move with the traffic.
func TestPrometheusMetrics(t *testing.T) {
	p := newPortal(t, store.SQLite)
	scraper := apiToken(t, p.store, apitoken.ScopeMetricsRead)
	elect := apiToken(t, p.store, apitoken.ScopeElect)
	if res, err := http.Get(p.srv.URL + "/healthz"); err == nil { // a series appears with its first request
		res.Body.Close()
	}
	healthz := map[string]string{"route": "/healthz", "method": "GET", "code": "200"}
	// A request is counted as its handler returns, which may be just after
	// its answer arrived: scrape until it is, with a deadline.
	before := scrapeUntil(t, p.srv.URL, scraper, "the first /healthz counted", func(f map[string]*dto.MetricFamily) bool {
		_, ok := sample(f, "airside_http_requests_total", healthz)
		return ok
	})
	for _, family := range []string{
		"airside_http_requests_total", "airside_http_request_duration_seconds", "airside_long_polls_held",
		"airside_elections_total", "airside_catalogue_revision", "airside_routing_health_age_seconds",
		"airside_snapshot_builds_total", "airside_snapshot_rereads_total", "airside_snapshot_build_seconds",
		"airside_background_stuck", "airside_draining", "go_sql_open_connections", "go_goroutines",
		"airside_queue_depth", "airside_preflight_runs_total", "airside_preflight_probes_total", "airside_webhook_attempts_total",
	} {
		if before[family] == nil {
			t.Errorf("no %s in the exposition", family)
		}
	}
	if _, ok := sample(before, "go_sql_open_connections", map[string]string{"pool": "write", "db_name": "airside"}); !ok {
		t.Error("the write pool's connections are not exported")
	}

	for _, labels := range []map[string]string{{"queue": "review"}, {"queue": "preflight"}, {"queue": "webhooks"}} {
		if _, ok := sample(before, "airside_queue_depth", labels); !ok {
			t.Errorf("no queue depth for %v", labels)
		}
	}
	for _, outcome := range []string{"delivered", "retried", "gave_up"} {
		if _, ok := sample(before, "airside_webhook_attempts_total", map[string]string{"outcome": outcome}); !ok {
			t.Errorf("no webhook attempts series for %s", outcome)
		}
	}
	wasReview, _ := sample(before, "airside_queue_depth", map[string]string{"queue": "review"})
	submitFiling(t, p, "member@nebula.example", listingIDs(t, p.store)["nebula"][0], "0.41")

	wasHealthz, _ := sample(before, "airside_http_requests_total", healthz)
	wasFull, _ := sample(before, "airside_elections_total", map[string]string{"path": "full"})
	for range 3 {
		res, err := http.Get(p.srv.URL + "/healthz")
		if err != nil {
			t.Fatal(err)
		}
		res.Body.Close()
	}
	for range 2 {
		wantStatus(t, "elect", apiCall(t, p.srv.URL, "POST", "/api/v1/elect", elect, `{"model":"kimi-k2.5"}`), http.StatusOK)
	}
	after := scrapeUntil(t, p.srv.URL, scraper, "three more /healthz and two elections counted", func(f map[string]*dto.MetricFamily) bool {
		n, _ := sample(f, "airside_http_requests_total", healthz)
		durations, _ := sample(f, "airside_http_request_duration_seconds", map[string]string{"route": "/api/v1/elect"})
		return n >= wasHealthz+3 && durations >= 2
	})
	if got, _ := sample(after, "airside_http_requests_total", healthz); got != wasHealthz+3 {
		t.Errorf("/healthz requests counted %v after %v and three more", got, wasHealthz)
	}
	if got, _ := sample(after, "airside_elections_total", map[string]string{"path": "full"}); got != wasFull+2 {
		t.Errorf("full elections counted %v after %v and two more", got, wasFull)
	}
	if n, _ := sample(after, "airside_http_request_duration_seconds", map[string]string{"route": "/api/v1/elect"}); n < 2 {
		t.Errorf("elect durations observed %v times, want at least 2", n)
	}
	if review, _ := sample(after, "airside_queue_depth", map[string]string{"queue": "review"}); review != wasReview+1 {
		t.Errorf("the review queue is %v after %v and one submission", review, wasReview)
	}
	if rev, _ := sample(after, "airside_catalogue_revision", nil); rev < 1 {
		t.Errorf("catalogue revision %v: the demo catalogue is published", rev)
	}

	// A gateway admin's session reads the same figures; others may not.
	c := p.client()
	c.login("admin@airside.example")
	if res := c.get("/metrics"); res.status != http.StatusOK || !strings.Contains(res.body, "airside_http_requests_total") {
		t.Errorf("a gateway admin's session: %d", res.status)
	}
	reviewer := p.client()
	reviewer.login("reviewer@airside.example")
	wantStatus(t, "a reviewer", reviewer.get("/metrics"), http.StatusForbidden)
	wantStatus(t, "no credentials", p.client().get("/metrics"), http.StatusUnauthorized)
	req, _ := http.NewRequest("GET", p.srv.URL+"/metrics", nil)
	req.Header.Set("Authorization", "Bearer "+elect)
	res, err := http.DefaultClient.Do(req)
	if err != nil {
		t.Fatal(err)
	}
	res.Body.Close()
	if res.StatusCode != http.StatusForbidden {
		t.Errorf("a token without metrics:read: %d, want 403", res.StatusCode)
	}

	// The private listener's handler (AIRSIDE_METRICS_ADDR) asks nothing.
	private := httptest.NewServer(p.server.MetricsHandler())
	defer private.Close()
	if open := scrape(t, private.URL, "", ""); open["airside_http_requests_total"] == nil {
		t.Error("the private listener serves no request counts")
	}
}
