package gateway

import (
	"io"
	"net/http"
	"net/http/httptest"
	"strings"
	"testing"

	"github.com/prometheus/client_golang/prometheus/testutil"
)

// TestTheGatewaysMetricsAreCleanAndAddUp: after a request that fell back
// from a failing listing, the gateway's /metrics has the listings' attempts
// by outcome and how served tries came, the tries the request took, the
// catalogue's revision, and passes Prometheus' own lint (promtool's rules).
func TestTheGatewaysMetricsAreCleanAndAddUp(t *testing.T) {
	h := newHarness(t, threeCarriers()...)
	h.carriers["a"].SetStatus(500)
	if res := h.chat(hello); res.status != http.StatusOK {
		t.Fatalf("%d %s", res.status, res.body)
	}
	srv := httptest.NewServer(h.gw.MetricsHandler(&Reporter{}))
	defer srv.Close()
	res, err := http.Get(srv.URL)
	if err != nil {
		t.Fatal(err)
	}
	body, _ := io.ReadAll(res.Body)
	res.Body.Close()
	text := string(body)
	for _, want := range []string{
		`airside_gateway_attempts_total{listing="a/m",outcome="counted"} 1`,
		`airside_gateway_attempts_total{listing="b/m",outcome="served"} 1`,
		`airside_gateway_served_total{kind="fallback",listing="b/m"} 1`,
		`airside_gateway_catalogue_revision 1`,
		`airside_gateway_report_buckets_waiting 0`,
		`airside_gateway_tries_per_request_bucket{le="1"}`,
		`airside_gateway_routing_seconds_count`,
		`airside_gateway_chat_requests_total{code="2xx"}`,
	} {
		if !strings.Contains(text, want) {
			t.Errorf("the exposition lacks %s", want)
		}
	}
	// Prometheus' own lint (promtool check metrics' rules) finds nothing.
	problems, err := testutil.GatherAndLint(h.gw.metricsRegistry(&Reporter{}))
	if err != nil {
		t.Fatal(err)
	}
	for _, p := range problems {
		t.Errorf("lint: %s: %s", p.Metric, p.Text)
	}
}
