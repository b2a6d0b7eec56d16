package main

import (
	"bytes"
	"context"
	"encoding/json"
	"fmt"
	"io"
	"net/http"
	"net/url"
	"os"
	"path/filepath"
	"regexp"
	"strconv"
	"strings"
	"testing"
	"time"

	"github.com/airside/airside/internal/apitoken"
	"github.com/airside/airside/internal/catalogue"
	"github.com/airside/airside/internal/gateway"
	"github.com/airside/airside/internal/money"
	"github.com/airside/airside/internal/store"
	"github.com/airside/airside/internal/trafficdriver"
)

// TestTheGatewayRoutesWhatThePortalPublishes runs the whole loop on
// loopback, each part as it runs in `make run`: the portal with the demo
// catalogue and its fake carriers, the reference gateway reading the
// portal's public API, and simulated customers sending real requests
// through it. A carrier files a fare far below the model's winner, a
// reviewer approves it, and within a bounded time the gateway routes the
// model's traffic to that listing; the traffic the gateway reports shows up
// in the portal's figures for it.
func TestTheGatewayRoutesWhatThePortalPublishes(t *testing.T) {
	t.Setenv("AIRSIDE_LOG_LEVEL", "error")
	t.Setenv("AIRSIDE_QUARANTINE_FACTOR", "1000") // a tenfold cut is one reviewer's decision here
	dir := t.TempDir()
	t.Chdir(dir)
	dbURL := "sqlite:" + filepath.Join(dir, "airside.db")
	token := seededWithScopes(t, dbURL, apitoken.ScopeCatalogueRead, apitoken.ScopeCredentialsRead, apitoken.ScopeMetricsWrite)
	const model = "kimi-k2.5"
	listings := modelListings(t, dbURL, model)

	ctx, cancel := context.WithCancel(context.Background())
	defer cancel()
	portal := "http://" + freeAddr(t)
	served := make(chan error, 1)
	go func() {
		served <- run(ctx, []string{"serve", "--demo", "--addr", strings.TrimPrefix(portal, "http://"), "--database", dbURL},
			strings.NewReader(""), io.Discard, io.Discard)
	}()
	waitFor(t, "the portal to answer /readyz", func() bool { return status(portal+"/readyz", "") == http.StatusOK })

	config := filepath.Join(dir, "gateway.json")
	data, _ := json.Marshal(gateway.Config{Projects: []gateway.Project{{Name: "e2e", APIKey: "sk-e2e-project", Organisation: "e2e"}}})
	if err := os.WriteFile(config, data, 0o600); err != nil {
		t.Fatal(err)
	}
	t.Setenv("AIRSIDE_GATEWAY_TOKEN", token)
	gw := "http://" + freeAddr(t)
	gwCtx, stopGateway := context.WithCancel(ctx)
	defer stopGateway()
	gatewayDone := make(chan error, 1)
	go func() {
		gatewayDone <- run(gwCtx, []string{"gateway", "--addr", strings.TrimPrefix(gw, "http://"), "--portal", portal, "--config", config,
			"--report-every", "1s", "--seed", "1", "--allow-private-carriers"}, strings.NewReader(""), io.Discard, io.Discard)
	}()
	waitFor(t, "the gateway to read the catalogue", func() bool { return status(gw+"/healthz", "") == http.StatusOK })

	// Customers send traffic the whole time.
	driverCtx, stopDriver := context.WithCancel(ctx)
	var stats trafficdriver.Stats
	driven := make(chan struct{})
	go func() {
		defer close(driven)
		if err := trafficdriver.Run(driverCtx, trafficdriver.Config{GatewayURL: gw, APIKeys: []string{"sk-e2e-project"},
			Models: []string{model}, Rate: 20, Seed: 1}, &stats); err != nil {
			t.Errorf("traffic driver: %v", err)
		}
	}()

	before := servedBy(t, gw, model)
	// The filer: a listing of a carrier with logins, not the one serving,
	// whose fare the form can restate whole (no tiers or schedule to keep).
	var filer *catalogue.Listing
	for i := range listings {
		l := &listings[i]
		if (l.CarrierSlug == "nebula" || l.CarrierSlug == "orbit") && before != l.CarrierSlug+"/"+model &&
			len(l.Published.Tiers) == 0 && l.Published.TimeBased == nil {
			filer = l
			break
		}
	}
	if filer == nil {
		t.Fatalf("no nebula or orbit listing of %s other than the one serving (%s)", model, before)
	}
	approvedAt := refile(t, portal, filer, farCheaper(listings, filer))

	want := filer.CarrierSlug + "/" + model
	waitFor(t, "the gateway to route "+model+" to "+want, func() bool { return servedBy(t, gw, model) == want })
	// Customers' requests after the switch.
	answered := stats.OK.Load()
	waitFor(t, "customers' requests through the new fare", func() bool { return stats.OK.Load() >= answered+10 })

	// The gateway's figures reach the portal: stop the customers, then the
	// gateway, which posts what it measured on the way out.
	stopDriver()
	<-driven
	stopGateway()
	if err := <-gatewayDone; err != nil {
		t.Fatalf("gateway: %v", err)
	}
	if stats.OK.Load() == 0 {
		t.Fatalf("the driver's requests all failed: %d sent, %d failed", stats.Sent.Load(), stats.Failed.Load())
	}
	st, err := store.Open(context.Background(), dbURL)
	if err != nil {
		t.Fatal(err)
	}
	defer st.Close()
	// The gateway posts with respond-async: its last batch is answered once
	// durable and folded in the portal's background, in milliseconds.
	folded := func() bool {
		hours, err := st.HourlyTraffic(context.Background(), []int64{filer.ID}, approvedAt.Truncate(time.Hour), time.Now().Add(time.Hour))
		if err != nil {
			t.Fatal(err)
		}
		var requests int64
		for _, h := range hours[filer.ID] {
			requests += h.Requests
		}
		return requests > 0
	}
	waitFor(t, fmt.Sprintf("the portal to show traffic for %s after its fare was approved (the driver sent %d requests)", want, stats.Sent.Load()), folded)
	// The carrier's traffic page sets, hour by hour, the share the preview
	// projected from what was in force beside the share served: this
	// hour's projection holds the approval (the hour is projected in parts,
	// before and after it, weighed by the model's requests in each), and
	// the listing served part of the hour. Over the 48 hours the page names
	// what makes the difference.
	member, err := logIn(portal, "member@"+filer.CarrierSlug+".example")
	if err != nil {
		t.Fatal(err)
	}
	res, err := member.Get(portal + fmt.Sprintf("/traffic/listings/%d?period=hour", filer.ID))
	if err != nil {
		t.Fatal(err)
	}
	page, _ := io.ReadAll(res.Body)
	res.Body.Close()
	table := regexp.MustCompile(`(?s)data-testid="share-chart-table".*?</table>`).Find(page)
	rows := regexp.MustCompile(`<tr><th scope="row">[^<]*</th><td>([0-9.]+) %</td><td>([0-9.]+) %</td>`).FindAllSubmatch(table, -1)
	if len(rows) == 0 {
		t.Fatalf("the share table has no hour with both a served and a projected share:\n%s", table)
	}
	last := rows[len(rows)-1]
	m, _ := strconv.ParseFloat(string(last[1]), 64)
	p, _ := strconv.ParseFloat(string(last[2]), 64)
	if p <= 0 || m <= 0 {
		t.Errorf("the hour of the approval projects %v %% and shows %v %% served; want both above zero", p, m)
	}
	gap := regexp.MustCompile(`(?s)data-testid="share-gap".*?</section>`).Find(page)
	if !regexp.MustCompile(`data-testid="gap-projected">[0-9.]+ %`).Match(gap) || !regexp.MustCompile(`data-testid="gap-measured">[0-9.]+ %`).Match(gap) {
		t.Fatalf("the traffic page has no projected-beside-measured section:\n%.3000s", page)
	}
	cancel()
	if err := <-served; err != nil {
		t.Errorf("serve: %v", err)
	}
}

// farCheaper edits a refiling of filer to a tenth of the model's cheapest
// input and output prices: far past the incumbent's margin (a short
// request's token price is mostly output), so it wins the model.
func farCheaper(listings []catalogue.Listing, filer *catalogue.Listing) func(url.Values) {
	cheapest, cheapestOut := listings[0].Published.Input, listings[0].Published.Output
	for _, l := range listings {
		cheapest, cheapestOut = min(cheapest, l.Published.Input), min(cheapestOut, l.Published.Output)
	}
	return func(values url.Values) {
		values.Set("input", money.Micros(int64(cheapest)/10).String())
		values.Set("output", money.Micros(int64(cheapestOut)/10).String())
		values.Set("justification", "A far cheaper fare.")
		if f := filer.Published; f.CachedInput != nil {
			values.Set("cached_input", money.Micros(min(int64(*f.CachedInput), int64(cheapest)/10)).String())
		}
	}
}

// refile files a new fare for a demo listing of nebula or orbit (the
// carriers with logins) as its member, the published fare restated whole
// with edit's changes (only the fields the form shows: no tiers or
// schedule), and has the reviewer approve it; it returns when.
func refile(t *testing.T, portal string, l *catalogue.Listing, edit func(url.Values)) time.Time {
	t.Helper()
	member, err := logIn(portal, "member@"+l.CarrierSlug+".example")
	if err != nil {
		t.Fatal(err)
	}
	form := fmt.Sprintf("/listings/%d/file", l.ID)
	f := l.Published
	values := url.Values{"input": {f.Input.String()}, "output": {f.Output.String()}, "landing_fee": {f.LandingFee.Percent()},
		"discount": {f.Discount.Percent()}, "cap_scope": {string(f.CapScope)}, "justification": {"A new fare."}, "op": {"submit"}}
	for field, p := range map[string]*money.Micros{"cache_read": f.CacheRead, "cache_write": f.CacheWrite, "cached_input": f.CachedInput} {
		if p != nil {
			values.Set(field, p.String())
		}
	}
	for _, c := range f.Capabilities {
		values.Add("capability", c.String())
	}
	if f.MaxRPM != nil {
		values.Set("max_rpm", fmt.Sprint(*f.MaxRPM))
	}
	if f.MaxRPD != nil {
		values.Set("max_rpd", fmt.Sprint(*f.MaxRPD))
	}
	edit(values)
	filing, code := submitForm(t, member, portal, form, form, values)
	if code != http.StatusOK || !regexp.MustCompile(`/filings/\d+$`).MatchString(filing) {
		t.Fatalf("filing: status %d at %s", code, filing)
	}
	reviewer, err := logIn(portal, "reviewer@airside.example")
	if err != nil {
		t.Fatal(err)
	}
	approvedAt := time.Now().UTC()
	if _, code := submitForm(t, reviewer, portal, filing, filing+"/approve", url.Values{}); code != http.StatusOK {
		t.Fatalf("approve: status %d", code)
	}
	return approvedAt
}

// modelListings are the demo listings of a model, read before serving.
func modelListings(t *testing.T, dbURL, model string) []catalogue.Listing {
	t.Helper()
	st, err := store.Open(context.Background(), dbURL)
	if err != nil {
		t.Fatal(err)
	}
	defer st.Close()
	ls, err := st.FindListings(context.Background(), catalogue.ListingFilter{ModelSlug: model, Published: true})
	if err != nil || len(ls) < 2 {
		t.Fatalf("listings of %s: %d, %v", model, len(ls), err)
	}
	return ls
}

// servedBy sends one chat request through the gateway and says which
// listing served it.
func servedBy(t *testing.T, gw, model string) string {
	t.Helper()
	served, err := chatVia(gw, model, "hello")
	if err != nil {
		t.Fatal(err)
	}
	return served
}

// chatVia sends one chat request with prompt through a gateway, with
// headers given in pairs, and says which listing served it ("" for none).
// Safe to call from any goroutine.
func chatVia(gw, model, prompt string, header ...string) (string, error) {
	body, _ := json.Marshal(map[string]any{"model": model, "messages": []map[string]string{{"role": "user", "content": prompt}}})
	req, _ := http.NewRequest(http.MethodPost, gw+"/v1/chat/completions", bytes.NewReader(body))
	req.Header.Set("Authorization", "Bearer sk-e2e-project")
	req.Header.Set("Content-Type", "application/json")
	for i := 0; i+1 < len(header); i += 2 {
		req.Header.Set(header[i], header[i+1])
	}
	res, err := client.Do(req)
	if err != nil {
		return "", err
	}
	io.Copy(io.Discard, res.Body)
	res.Body.Close()
	return res.Header.Get(gateway.ListingHeader), nil
}

var seenField = regexp.MustCompile(`name="(seen_[a-z]+)" value="(\d+)"`)

// submitForm loads formPage, then posts form to path with its CSRF token
// and the version fields the page shows, following the redirect; it
// returns the final path and status.
func submitForm(t *testing.T, c *http.Client, base, formPage, path string, form url.Values) (string, int) {
	t.Helper()
	res, err := c.Get(base + formPage)
	if err != nil {
		t.Fatal(err)
	}
	page, _ := io.ReadAll(res.Body)
	res.Body.Close()
	m := csrfField.FindSubmatch(page)
	if m == nil {
		t.Fatalf("no CSRF token on %s (status %d)", formPage, res.StatusCode)
	}
	form.Set("_csrf", string(m[1]))
	for _, seen := range seenField.FindAllSubmatch(page, -1) {
		if form.Get(string(seen[1])) == "" {
			form.Set(string(seen[1]), string(seen[2]))
		}
	}
	req, _ := http.NewRequest(http.MethodPost, base+path, strings.NewReader(form.Encode()))
	req.Header.Set("Content-Type", "application/x-www-form-urlencoded")
	req.Header.Set("Origin", base)
	res, err = c.Do(req)
	if err != nil {
		t.Fatal(err)
	}
	body, _ := io.ReadAll(res.Body)
	res.Body.Close()
	if res.StatusCode != http.StatusOK {
		t.Logf("%s answered %d: %s", path, res.StatusCode, regexp.MustCompile(`(?s)<(?:p|span|div|li)[^>]*class="[^"]*(?:error|field-message|alert)[^"]*"[^>]*>.*?</(?:p|span|div|li)>`).FindAll(body, 8))
	}
	return res.Request.URL.Path, res.StatusCode
}
