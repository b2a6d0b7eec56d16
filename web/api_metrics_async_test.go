package web_test

import (
	"context"
	"fmt"
	"net/http"
	"strings"
	"testing"
	"time"

	"github.com/airside/airside/internal/apitoken"
	"github.com/airside/airside/internal/store"
)

// runPortalInbox runs the portal's metrics inbox until the test ends (the
// handler tests do not start the background work Run starts).
func runPortalInbox(t *testing.T, p *testPortal) {
	t.Helper()
	ctx, cancel := context.WithCancel(context.Background())
	done := make(chan struct{})
	go func() { p.server.Metrics.Inbox.Run(ctx, 20*time.Millisecond); close(done) }()
	t.Cleanup(func() { cancel(); <-done })
	waitUntil(t, "the metrics inbox runs", p.server.Metrics.Inbox.Running)
}

// TestAPIMetricsRespondAsync: a batch posted with Prefer: respond-async is
// checked whole as before (a bad row is still answered, naming it), then
// answered 202 queued before its rows are stored, and folded by the inbox;
// a conflicting replay posted so has its conflicting row refused when
// folded (the first write stands; the batch's other rows are stored) and
// counted, not answered 409; without the preference the answer waits for
// the rows, as it always did. On both databases.
func TestAPIMetricsRespondAsync(t *testing.T) {
	for _, d := range []store.Dialect{store.SQLite, store.Postgres} {
		t.Run(string(d), func(t *testing.T) {
			p := newPortal(t, d)
			runPortalInbox(t, p)
			tok := apiToken(t, p.store, apitoken.ScopeMetricsWrite)
			ctx := context.Background()
			ids, err := p.store.ListingIDsBySlug(ctx)
			if err != nil {
				t.Fatal(err)
			}
			listing := ids["nebula/kimi-k2.5"]
			minute := time.Now().UTC().Truncate(time.Minute).Add(-5 * time.Minute)
			at := func(i int) string { return minute.Add(time.Duration(i) * time.Minute).Format(time.RFC3339) }
			batch := func(i, requests int) string {
				return fmt.Sprintf(`{"buckets":[{"listing":"nebula/kimi-k2.5","minute":%q,"source":"gw","requests":%d}],
					"demand":[{"model":"kimi-k2.5","workload":"chat","minute":%q,"source":"gw","requests":%d,"promptTokens":100}]}`, at(i), requests, at(i), requests)
			}
			requests := func() int64 {
				series, err := p.store.MetricSeries(ctx, listing, minute, time.Minute)
				if err != nil {
					t.Fatal(err)
				}
				var n int64
				for _, pt := range series {
					n += pt.Requests
				}
				return n
			}
			before := requests()
			async := []string{"Prefer", "respond-async"}

			res := apiCall(t, p.srv.URL, "POST", "/api/v1/metrics", tok, batch(0, 7), async...)
			wantStatus(t, "a batch with respond-async", res, http.StatusAccepted)
			if res.header.Get("Preference-Applied") != "respond-async" || !strings.Contains(res.body, `"queued":true`) ||
				!strings.Contains(res.body, `"accepted":1`) {
				t.Errorf("answer %s (Preference-Applied %q), want queued with the preference applied", res.body, res.header.Get("Preference-Applied"))
			}
			waitUntil(t, "the queued batch is folded", func() bool { return requests() == before+7 })
			mix, err := p.store.DemandMix(ctx, "kimi-k2.5", minute)
			if err != nil || mix["chat"].Requests < 7 {
				t.Errorf("the queued batch's demand: %+v %v", mix, err)
			}

			bad := apiCall(t, p.srv.URL, "POST", "/api/v1/metrics", tok,
				`{"buckets":[{"listing":"nobody/x","minute":"`+at(1)+`","requests":1}]}`, async...)
			wantStatus(t, "a bad batch with respond-async", bad, http.StatusUnprocessableEntity)
			if !strings.Contains(bad.body, "buckets[0].listing") {
				t.Errorf("the bad batch's answer does not name the row: %s", bad.body)
			}

			// Other figures for the folded minute, beside a new minute: the
			// replay alone is refused when folded, the new minute stored.
			conflicting := fmt.Sprintf(`{"buckets":[{"listing":"nebula/kimi-k2.5","minute":%q,"source":"gw","requests":9},
				{"listing":"nebula/kimi-k2.5","minute":%q,"source":"gw","requests":100}]}`, at(0), at(2))
			refusedBefore := p.server.Metrics.Inbox.Stats().Refused
			wantStatus(t, "a conflicting replay with respond-async", apiCall(t, p.srv.URL, "POST", "/api/v1/metrics", tok, conflicting, async...), http.StatusAccepted)
			waitUntil(t, "the conflicting batch is refused", func() bool { return p.server.Metrics.Inbox.Stats().Refused == refusedBefore+1 })
			if got := requests(); got != before+107 {
				t.Errorf("requests after the batch refused in part: %d, want %d (its new minute's 100 stored)", got, before+107)
			}

			res = apiCall(t, p.srv.URL, "POST", "/api/v1/metrics", tok, batch(3, 4))
			wantStatus(t, "a batch without the preference", res, http.StatusAccepted)
			if res.header.Get("Preference-Applied") != "" || !strings.Contains(res.body, `"queued":false`) {
				t.Errorf("answer %s, want stored before the answer", res.body)
			}
			if got := requests(); got != before+111 {
				t.Errorf("requests right after a synchronous batch: %d, want %d", got, before+111)
			}
			res = apiCall(t, p.srv.URL, "POST", "/api/v1/metrics", tok, conflicting)
			wantStatus(t, "a conflicting replay without the preference", res, http.StatusConflict)
			if !strings.Contains(res.body, "buckets[0]") || !strings.Contains(res.body, "every other row of the batch was stored") {
				t.Errorf("the 409 does not name the refused row and say the rest was stored: %s", res.body)
			}

			// What the inbox did, as Prometheus sees it.
			families := scrape(t, p.srv.URL, "/metrics", apiToken(t, p.store, apitoken.ScopeMetricsRead))
			for name, want := range map[string]float64{"airside_metric_inbox_received_total": 2, "airside_metric_inbox_folded_total": 2,
				"airside_metric_inbox_refused_total": 1, "airside_metric_inbox_waiting": 0} {
				if got, ok := sample(families, name, nil); !ok || got != want {
					t.Errorf("%s = %v (%v), want %v", name, got, ok, want)
				}
			}
		})
	}
}
