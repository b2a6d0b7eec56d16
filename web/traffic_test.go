package web_test

import (
	"context"
	"encoding/csv"
	"fmt"
	"net/http"
	"net/url"
	"regexp"
	"strconv"
	"strings"
	"testing"
	"time"

	"github.com/airside/airside/internal/alerting"
	"github.com/airside/airside/internal/apitoken"
	"github.com/airside/airside/internal/catalogue"
	"github.com/airside/airside/internal/demo"
	"github.com/airside/airside/internal/earnings"
	"github.com/airside/airside/internal/money"
	"github.com/airside/airside/internal/store"
	"github.com/airside/airside/templates"
)

func TestTrafficEarningsStatementsAndOperations(t *testing.T) {
	p := newPortal(t, store.SQLite)
	if err := demo.SeedHistory(context.Background(), p.store, 40); err != nil {
		t.Fatal(err)
	}
	nebula := p.client()
	nebula.login("admin@nebula.example")
	for _, period := range []string{"", "?period=hour", "?period=month"} {
		res := nebula.get("/traffic" + period)
		wantStatus(t, "traffic "+period, res, http.StatusOK)
		if !strings.Contains(res.body, "Nebula Inference") || strings.Contains(res.body, "Orbit Compute") {
			t.Errorf("traffic%s: shows another carrier or not its own", period)
		}
		if !strings.Contains(res.body, `data-testid="earnings-chart"`) || !strings.Contains(res.body, "The figures as a table") {
			t.Errorf("traffic%s: no earnings chart with its table", period)
		}
	}
	wantStatus(t, "another carrier's traffic", nebula.get("/traffic?carrier=orbit"), http.StatusNotFound)
	local := nebula.get("/traffic?period=day&tz=-5")
	if !strings.Contains(local.body, "(UTC-05:00)") || !strings.Contains(local.body, `<option value="-5" selected>`) {
		t.Error("the chosen zone is not applied to the traffic page")
	}
	// Half- and quarter-hour zones: India, Nepal, Newfoundland.
	for tz, name := range map[string]string{"5:30": "UTC+05:30", "5:45": "UTC+05:45", "-3:30": "UTC-03:30"} {
		page := nebula.get("/traffic?period=hour&tz=" + tz)
		if !strings.Contains(page.body, "("+name+")") || !strings.Contains(page.body, `<option value="`+tz+`" selected>`) ||
			!strings.Contains(page.body, "tz="+tz) {
			t.Errorf("the zone %s is not applied to the traffic page, or its links", tz)
		}
	}

	kimi := listingOf(t, p.store, "nebula", "kimi-k2.5")
	orbit := listingOf(t, p.store, "orbit", "kimi-k2.5")
	res := nebula.get(fmt.Sprintf("/traffic/listings/%d?period=day", kimi.ID))
	wantStatus(t, "listing traffic", res, http.StatusOK)
	for _, want := range []string{`data-testid="requests-chart"`, `data-testid="share-chart"`, `data-testid="uptime-chart"`,
		`data-testid="listing-earnings-chart"`, "95 %: the uptime penalty starts", `data-testid="fig-kept"`,
		`data-testid="fare-changes"`, `data-testid="projected"`} {
		if !strings.Contains(res.body, want) {
			t.Errorf("listing traffic lacks %s", want)
		}
	}
	if strings.Contains(res.body, "orbit") {
		t.Error("a carrier's traffic page names a competitor")
	}
	wantStatus(t, "another carrier's listing traffic", nebula.get(fmt.Sprintf("/traffic/listings/%d", orbit.ID)), http.StatusNotFound)

	// The planted daily outage of Fathom (which holds gpt-oss-120b's
	// traffic) shows as incidents; staff see it.
	staff := p.client()
	staff.login("reviewer@airside.example")
	fathom := listingOf(t, p.store, "fathom", "gpt-oss-120b")
	if body := staff.get(fmt.Sprintf("/traffic/listings/%d?period=day", fathom.ID)).body; !strings.Contains(body, `data-testid="incidents"`) {
		t.Error("the planted outage shows no incident")
	}

	// Last month's statement: closed, and its CSV adds up and is the same twice.
	last := time.Now().UTC().AddDate(0, -1, 0).Format("2006-01")
	res = nebula.get("/traffic/statements/" + last)
	wantStatus(t, "statement", res, http.StatusOK)
	// Issued a day after the month ends (closed and provisional on the
	// first day of a month).
	if !regexp.MustCompile(`data-testid="statement-state">(issued|closed)`).MatchString(res.body) {
		t.Error("last month's statement is neither issued nor closed")
	}
	csv1 := nebula.get("/traffic/statements/" + last + ".csv")
	wantStatus(t, "statement csv", csv1, http.StatusOK)
	if csv2 := nebula.get("/traffic/statements/" + last + ".csv"); csv2.body != csv1.body {
		t.Error("the same closed month gave two CSVs")
	}
	if !strings.HasPrefix(csv1.header.Get("Content-Type"), "text/csv") {
		t.Errorf("CSV content type %q", csv1.header.Get("Content-Type"))
	}
	rows, err := csv.NewReader(strings.NewReader(csv1.body)).ReadAll()
	if err != nil || len(rows) < 3 {
		t.Fatalf("statement CSV: %v, %d rows", err, len(rows))
	}
	var sum money.Micros
	for _, r := range rows[1 : len(rows)-1] {
		kept, err := money.ParsePrice(r[11])
		if err != nil {
			t.Fatal(err)
		}
		sum += kept
	}
	total, _ := money.ParsePrice(rows[len(rows)-1][11])
	if sum != total || total <= 0 {
		t.Errorf("lines keep %s, the total says %s", sum, total)
	}
	wantStatus(t, "a statement of the future", nebula.get("/traffic/statements/2099-01"), http.StatusNotFound)

	// Caps: a listing the routed history pushes past its cap gets the advice.
	found := false
	all, _ := p.store.FindListings(context.Background(), catalogue.ListingFilter{})
	for _, x := range all {
		if strings.Contains(staff.get(fmt.Sprintf("/traffic/listings/%d?period=day", x.ID)).body, `data-testid="cap-note"`) {
			found = true
			break
		}
	}
	if !found {
		t.Error("no listing shows what its cap turned away")
	}

	// Operations: staff only, filterable.
	wantStatus(t, "carrier opens operations", nebula.get("/operations"), http.StatusForbidden)
	ops := staff.get("/operations?model=kimi-k2.5&sort=share")
	wantStatus(t, "operations", ops, http.StatusOK)
	if !strings.Contains(ops.body, "Orbit Compute") || strings.Contains(ops.body, "GLM-5</td>") {
		t.Error("operations filtered by model shows the wrong listings")
	}
	if !strings.Contains(ops.body, "(auto)") {
		t.Error("operations shows no scenario winners")
	}
	if !strings.Contains(ops.body, `<option value="nebula">Nebula Inference</option>`) || !strings.Contains(ops.body, `<option value="kimi-k2.5" selected>Kimi K2.5</option>`) {
		t.Error("the operations filters offer slugs, not names")
	}
}

func TestAlertsPageAndWebhookForm(t *testing.T) {
	p := newPortal(t, store.SQLite)
	// The evaluator runs on the demo: ranks come from the routing snapshot.
	if err := p.server.AlertsForTest().Once(context.Background()); err != nil {
		t.Fatalf("evaluate alerts on the demo: %v", err)
	}
	ranks, err := p.store.ListingRanks(context.Background())
	if err != nil || len(ranks) < 20 {
		t.Fatalf("ranks of %d listings saved (%v), want every listing in service", len(ranks), err)
	}
	admin := p.client()
	admin.login("admin@nebula.example")
	res := admin.get("/alerts")
	wantStatus(t, "alerts", res, http.StatusOK)
	if !strings.Contains(res.body, `data-testid="no-alerts"`) {
		t.Error("a quiet demo shows alerts")
	}
	// The portal's address rule is on: loopback is refused next to the field.
	res = admin.post("/alerts", "/alerts/webhook?carrier=nebula", url.Values{"url": {"https://127.0.0.1/hook"}})
	wantStatus(t, "loopback webhook", res, http.StatusUnprocessableEntity)
	if !strings.Contains(res.body, `data-testid="error-url"`) || !strings.Contains(res.body, `value="https://127.0.0.1/hook"`) {
		t.Error("the refused address is not explained by its field, or was not kept")
	}
	res = admin.post("/alerts", "/alerts/webhook?carrier=nebula", url.Values{"url": {"https://hooks.nebula.example/airside"}})
	wantStatus(t, "set webhook", res, http.StatusOK)
	if !strings.Contains(res.body, `data-testid="webhook-secret"`) || !strings.Contains(res.body, "whsec_") {
		t.Fatal("the new secret is not shown")
	}
	again := admin.get("/alerts")
	if strings.Contains(again.body, "whsec_") || !strings.Contains(again.body, "hooks.nebula.example") {
		t.Error("the secret shows twice, or the address is not shown")
	}
	first := regexp.MustCompile(`whsec_[A-Za-z0-9+/=]+`).FindString(res.body)
	// Rotating shows a new secret once and says until when the old one
	// still signs.
	res = admin.post("/alerts", "/alerts/webhook/rotate?carrier=nebula", url.Values{})
	wantStatus(t, "rotate the secret", res, http.StatusOK)
	second := regexp.MustCompile(`whsec_[A-Za-z0-9+/=]+`).FindString(res.body)
	if second == "" || second == first {
		t.Errorf("rotation showed %q after %q", second, first)
	}
	if !strings.Contains(admin.get("/alerts").body, `data-testid="previous-secret"`) {
		t.Error("the page does not say the previous secret still signs")
	}
	res = admin.post("/alerts", "/alerts/webhook/test?carrier=nebula", url.Values{})
	wantStatus(t, "test event", res, http.StatusSeeOther)
	if !strings.Contains(admin.get("/alerts").body, `data-testid="deliveries"`) {
		t.Error("the test delivery is not listed")
	}
	member := p.client()
	member.login("member@nebula.example")
	wantStatus(t, "member sets the webhook", member.post("/alerts", "/alerts/webhook?carrier=nebula", url.Values{"url": {"https://x.example/h"}}), http.StatusForbidden)
	wantStatus(t, "member rotates the secret", member.post("/alerts", "/alerts/webhook/rotate?carrier=nebula", url.Values{}), http.StatusForbidden)
}

// TestAlertRulesAndMutesFromThePage: an admin sets a rule's threshold and
// times, sees a bad field named with everything as typed and nothing
// saved, mutes a listing and ends the mute; a member sees the rules and
// cannot change them.
func TestAlertRulesAndMutesFromThePage(t *testing.T) {
	p := newPortal(t, store.SQLite)
	admin := p.client()
	admin.login("admin@nebula.example")
	page := admin.get("/alerts?carrier=nebula")
	wantStatus(t, "alerts", page, http.StatusOK)
	if !strings.Contains(page.body, `data-testid="rule-at_cap"`) || !strings.Contains(page.body, "in 15 minutes of the last hour") {
		t.Fatal("the rules table does not show the cap rule with its default")
	}
	form := url.Values{}
	for _, k := range alerting.Kinds {
		set := alerting.DefaultSetting(k)
		form.Set(string(k)+"-on", "on")
		form.Set(string(k)+"-open", fmt.Sprint(int(set.OpenAfter.Minutes())))
		form.Set(string(k)+"-close", fmt.Sprint(int(set.CloseAfter.Minutes())))
		if alerting.ThresholdOf(k).Label != "" {
			form.Set(string(k)+"-threshold", strconv.FormatFloat(set.Threshold, 'f', -1, 64))
		}
	}
	form.Set("at_cap-threshold", "5")
	form.Del("rank_moved-on")
	form.Set("ttft_jump-threshold", "fast")
	res := admin.post("/alerts?carrier=nebula", "/alerts/rules?carrier=nebula", form)
	wantStatus(t, "a bad threshold", res, http.StatusUnprocessableEntity)
	if !strings.Contains(res.body, `data-testid="error-ttft_jump-threshold"`) || !strings.Contains(res.body, `value="fast"`) ||
		!strings.Contains(res.body, `name="at_cap-threshold" id="at_cap-threshold" value="5"`) {
		t.Error("the bad field is not named, or the form lost what was typed")
	}
	kimi := listingOf(t, p.store, "nebula", "kimi-k2.5")
	if rules, _ := p.store.CarrierAlertRules(context.Background(), kimi.CarrierID); len(rules) != 0 {
		t.Errorf("a refused form saved %+v", rules)
	}
	form.Set("ttft_jump-threshold", "2")
	wantStatus(t, "save rules", admin.post("/alerts?carrier=nebula", "/alerts/rules?carrier=nebula", form), http.StatusSeeOther)
	page = admin.get("/alerts?carrier=nebula")
	if !strings.Contains(page.body, "in 5 minutes of the last hour") || !strings.Contains(page.body, "Default: on, holds for 5 min, clears after 15 min, threshold 15 min.") ||
		regexp.MustCompile(`name="rank_moved-on" id="rank_moved-on" checked`).MatchString(page.body) {
		t.Error("the saved rules do not show: the cap at 5 minutes with its default beside it, the rank rule off")
	}
	res = admin.post("/alerts?carrier=nebula", "/alerts/mute?carrier=nebula", url.Values{"listing": {fmt.Sprint(kimi.ID)}, "kind": {"at_cap"}, "for": {"forever"}})
	wantStatus(t, "a duration not offered", res, http.StatusUnprocessableEntity)
	if !strings.Contains(res.body, `data-testid="error-for"`) || !regexp.MustCompile(`<option value="at_cap" selected`).MatchString(res.body) {
		t.Error("the refused mute is not explained, or the form lost its choices")
	}
	res = admin.post("/alerts?carrier=nebula", "/alerts/mute?carrier=nebula", url.Values{"listing": {fmt.Sprint(kimi.ID)}, "kind": {"at_cap"}, "for": {"8h"}})
	wantStatus(t, "mute", res, http.StatusSeeOther)
	page = admin.get("/alerts?carrier=nebula")
	if !strings.Contains(page.body, `data-testid="mute-list"`) || !strings.Contains(page.body, "Kimi K2.5</strong>: at its rate cap, until") {
		t.Fatal("the mute is not listed")
	}
	muteID := regexp.MustCompile(`data-testid="unmute-(\d+)"`).FindStringSubmatch(page.body)
	member := p.client()
	member.login("member@nebula.example")
	wantStatus(t, "member saves rules", member.post("/alerts?carrier=nebula", "/alerts/rules?carrier=nebula", form), http.StatusForbidden)
	wantStatus(t, "member mutes", member.post("/alerts?carrier=nebula", "/alerts/mute?carrier=nebula",
		url.Values{"listing": {fmt.Sprint(kimi.ID)}, "kind": {""}, "for": {"1h"}}), http.StatusForbidden)
	if body := member.get("/alerts?carrier=nebula").body; !strings.Contains(body, "in 5 minutes of the last hour") || strings.Contains(body, `data-testid="save-rules"`) {
		t.Error("a member does not see the rules, or is offered to save them")
	}
	wantStatus(t, "unmute", admin.post("/alerts?carrier=nebula", "/alerts/mutes/"+muteID[1]+"/end?carrier=nebula", url.Values{}), http.StatusSeeOther)
	if !strings.Contains(admin.get("/alerts?carrier=nebula").body, `data-testid="no-mutes"`) {
		t.Error("the mute is still listed after it ended")
	}
}

// TestTheTrafficPageShowsWhatRoutingDid: the figures a gateway reports
// beyond health (how requests came, failures by class, 429s, caps, tool
// calls) show on the listing's traffic page, and the projection beside the
// served share says which workload mix it assumed.
func TestTheTrafficPageShowsWhatRoutingDid(t *testing.T) {
	p := newPortal(t, store.SQLite)
	kimi := listingOf(t, p.store, "nebula", "kimi-k2.5")
	peer := listingOf(t, p.store, "orbit", "kimi-k2.5")
	tok := apiToken(t, p.store, apitoken.ScopeMetricsWrite)
	minute := time.Now().UTC().Truncate(time.Minute).Add(-time.Minute).Format(time.RFC3339)
	body := fmt.Sprintf(`{"buckets":[{"listingId":%d,"minute":%q,"source":"gw-1","requests":50,"errors":2,"clientErrors":3,"capped":4,
		"routed":38,"pinned":3,"exploration":1,"fallback":3,"rateLimited":6,"toolCalls":20,"malformedToolCalls":1,"heldBack":7,
		"inputTokens":50000,"outputTokens":5000,"ttftMsSum":19980,"durationMs":90000},
		{"listingId":%d,"minute":%q,"source":"gw-1","requests":100,"errors":1,"routed":99,"ttftMsSum":29700,"outputTokens":19800,"durationMs":99000}],
		"demand":[{"model":"kimi-k2.5","workload":"coding","minute":%q,"source":"gw-1","requests":75,"promptTokens":3000000},
		{"model":"kimi-k2.5","workload":"general","minute":%q,"source":"gw-1","requests":25,"promptTokens":25000}]}`, kimi.ID, minute, peer.ID, minute, minute, minute)
	wantStatus(t, "metrics", apiCall(t, p.srv.URL, "POST", "/api/v1/metrics", tok, body), http.StatusAccepted)
	c := p.client()
	c.login("admin@nebula.example")
	res := c.get(fmt.Sprintf("/traffic/listings/%d?period=day", kimi.ID))
	wantStatus(t, "listing traffic", res, http.StatusOK)
	for id, want := range map[string]string{"routed": "38", "pinned": "3", "exploration": "1", "fallback": "3", "counted-errors": "2",
		"client-errors": "3", "rate-limited": "6", "capped": "4", "tool-calls": "20", "malformed-tool-calls": "5.0 %", "held-back": "7",
		// Beside the peers: 2 of 47 failed (1 of 100), 6 of 56 tries were 429s (none), 19,980 ms over 45 successes (300 ms).
		// 5,000 output tokens over 90 s of answers (the peer: 19,800 over 99 s).
		"failure-rate": "4.3 %", "rate-limited-rate": "10.7 %", "ttft-vs-peers": "444 ms", "speed-vs-peers": "55.6 tok/s"} {
		if !regexp.MustCompile(`data-testid="` + id + `"><strong>` + regexp.QuoteMeta(want) + `</strong>`).MatchString(res.body) {
			t.Errorf("%s does not show %s", id, want)
		}
	}
	for _, peerText := range []string{"end-to-end speed, output tokens a second of the whole answer", "the model&#39;s other listings 1.0 %", "the model&#39;s other listings 0.0 %", "the model&#39;s other listings 300 ms", "the model&#39;s other listings 200.0 tok/s"} {
		if !strings.Contains(res.body, peerText) {
			t.Errorf("the page lacks %q", peerText)
		}
	}
	overview := c.get("/traffic")
	if !regexp.MustCompile(`(?s)data-testid="demand-mix".*Kimi K2\.5</td><td class="num">100</td><td class="num">25 %</td><td class="num">0 %</td><td class="num">75 %</td><td class="num">0 %</td>`).MatchString(overview.body) {
		t.Errorf("the carrier's traffic page does not show the model's measured mix:\n%s", regexp.MustCompile(`(?s)data-testid="demand-mix".{0,800}`).FindString(overview.body))
	}
	if !strings.Contains(res.body, "workload mix the gateway measured over the last 7 days (small one-shot 25 %, large prompt 0 %, coding agent session 75 %, chat 0 %)") {
		t.Errorf("the projection does not say it used the measured mix:\n%s", regexp.MustCompile(`(?s)data-testid="projected".{0,400}`).FindString(res.body))
	}
	// Projected beside measured: 50 of the model's 150 requests, and the
	// parts the gateway counted, each of at least a point, named: 3 pinned
	// and 3 fallbacks of 150 (2 points each), 5 failed (3.3).
	gap := regexp.MustCompile(`(?s)data-testid="share-gap".*?</section>`).FindString(res.body)
	if !strings.Contains(gap, `data-testid="gap-measured">33.3 %`) {
		t.Errorf("the measured share is not 33.3 %%:\n%s", gap)
	}
	for cause, points := range map[string]string{"pins": "+2.0 points", "fallbacks": "+2.0 points", "failures": "+3.3 points"} {
		if !regexp.MustCompile(`data-testid="cause-` + cause + `"><td>[^<]+</td><td class="num">` + regexp.QuoteMeta(points)).MatchString(gap) {
			t.Errorf("the gap does not name %s at %s:\n%s", cause, points, gap)
		}
	}
	if strings.Contains(gap, "gap-on-model-rates") {
		t.Errorf("the gap names requests replayed on the model's rates where demand named no project:\n%s", gap)
	}
	// A gateway that names API projects, and requests with a set of
	// preferences (10) or under the share policy (5): routing elected them
	// on their project's learned rates, the replay on the model's. The gap
	// says so, with their number and share of the model's 150 requests.
	earlier := time.Now().UTC().Truncate(time.Minute).Add(-2 * time.Minute).Format(time.RFC3339)
	asked := fmt.Sprintf(`{"buckets":[],"demand":[{"model":"kimi-k2.5","workload":"general","minute":%q,"source":"gw-1","requests":20,"promptTokens":20000,
		"asked":{"prefs:zdr":10,"zdr":10,"policy:share":5,"project:prj-3f9a2c1b04d2":5}}]}`, earlier)
	wantStatus(t, "demand naming a project", apiCall(t, p.srv.URL, "POST", "/api/v1/metrics", tok, asked), http.StatusAccepted)
	gap = regexp.MustCompile(`(?s)data-testid="share-gap".*?</section>`).FindString(c.get(fmt.Sprintf("/traffic/listings/%d?period=day", kimi.ID)).body)
	if !regexp.MustCompile(`data-testid="gap-on-model-rates">[^<]*<strong>15 requests \(10\.0 % of the model`).MatchString(gap) {
		t.Errorf("the gap does not name the 15 requests replayed on the model's rates:\n%s", gap)
	}
}

// TestWhatEachFareDidIsProjectedToo: the listing's table of fare changes
// sets, beside the share served the week before and after each, the share
// projected for the same weeks from what was in force; a change whose week
// before is past the projection's reach shows none.
func TestWhatEachFareDidIsProjectedToo(t *testing.T) {
	p := newPortal(t, store.SQLite)
	ctx := context.Background()
	if err := demo.SeedHistory(ctx, p.store, 40); err != nil {
		t.Fatal(err)
	}
	kimi := listingOf(t, p.store, "nebula", "kimi-k2.5")
	// Ten days ago nebula cut its kimi price to a tenth (published as the
	// demo seeds, at a clock set back).
	now := time.Now().UTC()
	cut := now.Add(-10 * 24 * time.Hour)
	p.store.Now = func() time.Time { return cut }
	cheap := *kimi.Published
	cheap.ID, cheap.Input, cheap.Output, cheap.CachedInput = 0, kimi.Published.Input/10, kimi.Published.Output/10, nil
	if _, err := p.store.PublishSeedFare(ctx, &cheap); err != nil {
		t.Fatal(err)
	}
	p.store.Now = func() time.Time { return now }

	nebula := p.client()
	nebula.login("admin@nebula.example")
	for _, period := range []string{"day", "hour"} { // the day view's projection reaches back far enough; the hour view's does not
		res := nebula.get(fmt.Sprintf("/traffic/listings/%d?period=%s", kimi.ID, period))
		wantStatus(t, "listing traffic", res, http.StatusOK)
		rows := regexp.MustCompile(`<tr><td>([0-9-]+ [0-9:]+)</td>.*?data-testid="change-projected-before">([^<]*)<.*?data-testid="change-projected-after">([^<]*)<`).
			FindAllStringSubmatch(regexp.MustCompile(`(?s)data-testid="fare-changes".*?</table>`).FindString(res.body), -1)
		if len(rows) != 2 {
			t.Fatalf("%s: %d fare changes listed, want the cut and the seed fare", period, len(rows))
		}
		if rows[0][1] != cut.Format("2006-01-02 15:04") || rows[1][2] != "–" || rows[1][3] != "–" {
			t.Errorf("%s: rows %q: want the cut first and nothing projected for the seed fare 40 days back", period, rows)
		}
		before, errB := strconv.ParseFloat(strings.TrimSuffix(rows[0][2], " %"), 64)
		after, errA := strconv.ParseFloat(strings.TrimSuffix(rows[0][3], " %"), 64)
		t.Logf("%s: projected %v %% the week before the cut, %v %% after", period, before, after)
		if errB != nil || errA != nil || after < before+20 {
			t.Errorf("%s: the cut to a tenth projects %q the week before and %q after, want a move of more than 20 points", period, rows[0][2], rows[0][3])
		}
	}
}

// TestTheHourUnderWayIsShownAsItComes: the listing's traffic page shows
// the hour under way so far, marked partial, and a batch the gateway posts
// moves it at the next read (no wait for the hour to close).
func TestTheHourUnderWayIsShownAsItComes(t *testing.T) {
	p := newPortal(t, store.SQLite)
	now := time.Now().UTC().Truncate(time.Hour).Add(-time.Hour).Add(30 * time.Minute)
	p.store.Now = func() time.Time { return now }
	kimi := listingOf(t, p.store, "nebula", "kimi-k2.5")
	peer := listingOf(t, p.store, "orbit", "kimi-k2.5")
	tok := apiToken(t, p.store, apitoken.ScopeMetricsWrite)
	post := func(minute time.Time, mine, theirs int) {
		t.Helper()
		m := minute.Format(time.RFC3339)
		body := fmt.Sprintf(`{"buckets":[{"listingId":%d,"minute":%q,"source":"gw-1","requests":%d,"routed":%d},
			{"listingId":%d,"minute":%q,"source":"gw-1","requests":%d,"routed":%d}]}`, kimi.ID, m, mine, mine, peer.ID, m, theirs, theirs)
		wantStatus(t, "metrics", apiCall(t, p.srv.URL, "POST", "/api/v1/metrics", tok, body), http.StatusAccepted)
	}
	c := p.client()
	c.login("admin@nebula.example")
	page := fmt.Sprintf("/traffic/listings/%d?period=hour", kimi.ID)
	if res := c.get(page); strings.Contains(res.body, `data-testid="this-hour"`) {
		t.Error("the hour under way is shown before any request in it")
	}
	served := func() string {
		t.Helper()
		res := c.get(page)
		wantStatus(t, "listing traffic", res, http.StatusOK)
		m := regexp.MustCompile(`data-testid="this-hour">This hour so far \(from ([0-9:]+) UTC, partial[^"]*?served <strong data-testid="this-hour-served">([^<]+)</strong> of the model(?:'|&#39;)s ([0-9,]+) requests; projected <strong data-testid="this-hour-projected">([^<]+)</strong>`).FindStringSubmatch(res.body)
		if m == nil {
			t.Fatalf("no hour under way on the page:\n%s", regexp.MustCompile(`(?s)data-testid="this-hour".{0,600}`).FindString(res.body))
		}
		if m[1] != now.Truncate(time.Hour).Format("15:04") {
			t.Errorf("the hour under way starts at %s", m[1])
		}
		return m[2] + " of " + m[3]
	}
	post(now.Add(-2*time.Minute), 30, 70)
	if got := served(); got != "30.0 % of 100" {
		t.Errorf("after the first batch: %s", got)
	}
	post(now.Add(-time.Minute), 70, 30)
	if got := served(); got != "50.0 % of 200" {
		t.Errorf("after the second batch, read at once: %s", got)
	}
	// The carrier's overview says the same, in its own column.
	overview := c.get("/traffic?period=hour")
	row := regexp.MustCompile(fmt.Sprintf(`(?s)href="/traffic/listings/%d\?period=hour".*?data-testid="this-hour-share">([^<]+)<`, kimi.ID)).FindStringSubmatch(overview.body)
	if row == nil || !strings.HasPrefix(row[1], "50.0 %") {
		t.Errorf("the overview's hour under way: %v", row)
	}
}

// TestTheListingPageSaysWhoServesEachWorkload: a published listing's page
// names, for each standard workload under auto routing, who serves it now
// as the gateway decides (the incumbent kept within its margin).
func TestTheListingPageSaysWhoServesEachWorkload(t *testing.T) {
	p := newPortal(t, store.SQLite)
	kimi := listingOf(t, p.store, "nebula", "kimi-k2.5")
	c := p.client()
	c.login("admin@nebula.example")
	res := c.get(fmt.Sprintf("/listings/%d", kimi.ID))
	wantStatus(t, "listing", res, http.StatusOK)
	card := regexp.MustCompile(`(?s)data-testid="holding".*?</section>`).FindString(res.body)
	lines := regexp.MustCompile(`<li>([^<]*\(auto\): [^<]+)</li>`).FindAllStringSubmatch(card, -1)
	if len(lines) != 4 {
		t.Fatalf("%d workloads on the holding card, want the 4 standard ones:\n%s", len(lines), card)
	}
	for _, l := range lines {
		if !regexp.MustCompile(`serves it|keeps it as the incumbent|no listing is eligible`).MatchString(l[1]) {
			t.Errorf("a line says no holder: %s", l[1])
		}
	}
	if !strings.Contains(card, "0.15 points of the election") {
		t.Errorf("the card does not give the margin:\n%s", card)
	}
}

// TestTrafficByCustomerOrganisation: what a gateway reports per customer
// organisation shows on the carrier's traffic page, priced at the fare in
// force (a retry counts once), busiest first; another carrier sees none of
// it; a bad row is refused naming it.
func TestTrafficByCustomerOrganisation(t *testing.T) {
	p := newPortal(t, store.SQLite)
	// Fares in force for days (the demo's are published at start-up).
	if err := p.store.BackdateSeedFares(context.Background(), time.Now().UTC().AddDate(0, 0, -2)); err != nil {
		t.Fatal(err)
	}
	kimi := listingOf(t, p.store, "nebula", "kimi-k2.5")
	tok := apiToken(t, p.store, apitoken.ScopeMetricsWrite)
	minute := time.Now().UTC().Truncate(time.Minute).Add(-time.Minute).Format(time.RFC3339)
	body := fmt.Sprintf(`{"organisations":[{"listingId":%d,"minute":%q,"source":"gw-1","organisation":"org-1a2b3c4d","requests":40,"errors":2,
		"inputTokens":1000000,"cachedInputTokens":250000,"outputTokens":100000},
		{"listingId":%d,"minute":%q,"source":"gw-1","organisation":"org-99aa88bb","requests":3,"inputTokens":30000,"outputTokens":3000}]}`,
		kimi.ID, minute, kimi.ID, minute)
	res := apiCall(t, p.srv.URL, "POST", "/api/v1/metrics/organisations", tok, body)
	wantStatus(t, "organisations", res, http.StatusAccepted)
	if !strings.Contains(res.body, `"accepted":2`) {
		t.Errorf("first report: %s", res.body)
	}
	if again := apiCall(t, p.srv.URL, "POST", "/api/v1/metrics/organisations", tok, body); !strings.Contains(again.body, `"accepted":0`) {
		t.Errorf("a retried report was stored again: %s", again.body)
	}
	bad := fmt.Sprintf(`{"organisations":[{"listingId":%d,"minute":%q,"organisation":"<script>","requests":1}]}`, kimi.ID, minute)
	res = apiCall(t, p.srv.URL, "POST", "/api/v1/metrics/organisations", tok, bad)
	wantStatus(t, "a bad label", res, http.StatusUnprocessableEntity)
	if !strings.Contains(res.body, "organisations[0].organisation") {
		t.Errorf("the refusal does not name the row and field: %s", res.body)
	}
	nebula := p.client()
	nebula.login("admin@nebula.example")
	page := nebula.get("/traffic?period=day").body
	table := regexp.MustCompile(`(?s)data-testid="organisations".*?</table>`).FindString(page)
	first := strings.Index(table, "org-1a2b3c4d")
	if first < 0 || first > strings.Index(table, "org-99aa88bb") || !strings.Contains(table, `<td class="num">1,000,000</td><td class="num">250,000</td><td class="num">100,000</td>`) {
		t.Fatalf("the organisations table does not list the busiest first with its tokens:\n%s", table)
	}
	// Priced at kimi's fare: the kept amount is the statement rule applied to the org's tokens.
	lines := earnings.ByOrganisation(map[int64]map[string][]catalogue.HourlyPoint{kimi.ID: {"x": {{Hour: time.Now().UTC(),
		Counts: catalogue.Counts{Requests: 40, Errors: 2, InputTokens: 1000000, CachedInputTokens: 250000, OutputTokens: 100000}}}}},
		map[int64][]earnings.FareSpan{kimi.ID: {{From: time.Time{}, Fare: kimi.Published}}})
	if want := templates.AmountUSD(lines[0].Kept); lines[0].Kept == 0 || !strings.Contains(table, want) {
		t.Errorf("the busiest organisation's earnings are not %s:\n%s", want, table)
	}
	orbit := p.client()
	orbit.login("member@orbit.example")
	if body := orbit.get("/traffic?period=day").body; strings.Contains(body, "org-1a2b3c4d") || !strings.Contains(body, `data-testid="no-organisations"`) {
		t.Error("another carrier sees nebula's organisations")
	}
}
