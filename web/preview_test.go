package web_test

import (
	"context"
	"fmt"
	"html"
	"math"
	"net/http"
	"net/url"
	"regexp"
	"slices"
	"strconv"
	"strings"
	"testing"
	"time"

	"github.com/airside/airside/internal/apitoken"
	"github.com/airside/airside/internal/catalogue"
	"github.com/airside/airside/internal/fare"
	"github.com/airside/airside/internal/money"
	"github.com/airside/airside/internal/store"
	"github.com/airside/airside/internal/workflow"
	"github.com/airside/airside/templates"
)

// TestPreviewShowsNoCompetitorsPrivateValues gives Orbit's Kimi listing a
// landing fee, a discount and a draft with values found nowhere else, and
// checks Nebula's preview of Kimi shows Orbit without any of them.
func TestPreviewShowsNoCompetitorsPrivateValues(t *testing.T) {
	p := newPortal(t, store.SQLite)
	ctx := context.Background()
	all, _ := p.store.FindListings(ctx, catalogue.ListingFilter{})
	var nebulaKimi, orbitKimi catalogue.Listing
	for _, l := range all {
		if l.Model.Slug == "kimi-k2.5" && l.CarrierSlug == "nebula" {
			nebulaKimi = l
		}
		if l.Model.Slug == "kimi-k2.5" && l.CarrierSlug == "orbit" {
			orbitKimi = l
		}
	}
	secret := *orbitKimi.Published
	secret.LandingFee, secret.Discount = 4777, 1234
	if _, err := p.store.PublishSeedFare(ctx, &secret); err != nil {
		t.Fatal(err)
	}
	draft := secret
	draft.Discount = 3333
	draft.Input = money.Micros(987654)
	orbitAdmin, _ := p.store.FindUserByEmail(ctx, "admin@orbit.example")
	if _, err := p.store.CreateFiling(ctx, orbitAdmin.ID, workflow.NewFiling{ListingID: orbitKimi.ID, Fare: &draft, Justification: "ORBIT-SECRET-PLAN"}); err != nil {
		t.Fatal(err)
	}
	c := p.client()
	c.login("admin@nebula.example")
	page := fmt.Sprintf("/listings/%d/preview", nebulaKimi.ID)
	fragment := func(values url.Values) response {
		token := csrfField.FindStringSubmatch(c.get(page).body)[1]
		values.Set("_csrf", token)
		req, _ := http.NewRequest("POST", c.base+page, strings.NewReader(values.Encode()))
		req.Header.Set("Content-Type", "application/x-www-form-urlencoded")
		req.Header.Set("X-Preview", "fragment")
		return c.do(req)
	}
	bodies := map[string]string{
		"page":        c.get(page).body,
		"fragment":    fragment(url.Values{"input": {"0.40"}, "landing_fee": {"30"}, "discount": {"5"}}).body,
		"file form":   c.get(fmt.Sprintf("/listings/%d/file", nebulaKimi.ID)).body,
		"custom, all": fragment(url.Values{"custom_prompt": {"12000"}, "custom_workload": {"coding"}, "custom_routing": {"price"}}).body,
	}
	for name, body := range bodies {
		if !strings.Contains(body, "Orbit Compute") {
			t.Errorf("%s: Orbit is not on the ballot, so the test proves nothing", name)
		}
		for _, private := range []string{"47.77", "0.4777", "12.34", "0.1234", "33.33", "ORBIT-SECRET-PLAN", "0.987654"} {
			if strings.Contains(body, private) {
				t.Errorf("%s shows Orbit's private value %q", name, private)
			}
		}
	}
	if !strings.Contains(bodies["custom, all"], "Custom: 12000 tokens, coding, price") {
		t.Error("the custom scenario is not shown")
	}
	// Its result stands under its inputs, not only in the table far above.
	custom := bodies["custom, all"]
	if at, inputs := strings.Index(custom, `data-testid="custom-result"`), strings.Index(custom, `id="custom_prompt"`); inputs < 0 || at < inputs {
		t.Error("the custom scenario's result is not under its inputs")
	}
	// Orbit cannot preview Nebula's listing.
	o := p.client()
	o.login("member@orbit.example")
	wantStatus(t, "orbit previews nebula", o.get(page), http.StatusNotFound)
}

func TestPreviewWithoutJavaScript(t *testing.T) {
	p := newPortal(t, store.SQLite)
	listing := listingIDs(t, p.store)["nebula"][0]
	c := p.client()
	c.login("member@nebula.example")
	form := fmt.Sprintf("/listings/%d/file", listing)
	v := fareValues()
	v.Set("op", "preview")
	v.Set("full_form", "1")
	v.Set("landing_fee", "45")
	before := countFilings(t, p.store, listing)
	res := c.post(form, form, v)
	wantStatus(t, "preview button", res, http.StatusOK)
	if !strings.Contains(res.body, `data-testid="scenarios"`) || !strings.Contains(res.body, `value="45"`) {
		t.Error("the Preview button does not show the preview of what was typed")
	}
	if countFilings(t, p.store, listing) != before {
		t.Error("previewing saved a filing")
	}
	v.Set("landing_fee", "70")
	bad := c.post(form, form, v)
	if !strings.Contains(bad.body, `data-testid="preview-error"`) || !strings.Contains(bad.body, "landing fee") {
		t.Error("a preview of an invalid fare does not say which field to fix")
	}
	page := c.post(fmt.Sprintf("/listings/%d/preview", listing), fmt.Sprintf("/listings/%d/preview", listing),
		url.Values{"input": {"0.10"}, "landing_fee": {"20"}, "mix_small": {"100"}, "mix_large": {"0"}, "mix_coding": {"0"}, "mix_chat": {"0"}})
	wantStatus(t, "standalone preview", page, http.StatusOK)
	if !strings.Contains(page.body, `name="mix_small" value="100"`) || !strings.Contains(page.body, `name="mix_chat" value="0"`) {
		t.Errorf("the workload mix was not kept:\n%.3000s", page.body)
	}
	_ = fare.Form{}
}

// TestPreviewNamesBadFieldsAsTheFormDoes: a preview of a form that does not
// parse names the fields by their labels, in form order, counting rows from
// 1, and gives the first message (a decimal comma's hint).
func TestPreviewNamesBadFieldsAsTheFormDoes(t *testing.T) {
	p := newPortal(t, store.SQLite)
	listing := listingIDs(t, p.store)["nebula"][0]
	c := p.client()
	c.login("admin@nebula.example")
	page := fmt.Sprintf("/listings/%d/preview", listing)
	values := url.Values{"full_form": {"1"}, "output": {"2.00"}, "cap_scope": {"global"}, "input": {"1,50"}, "landing_fee": {"20"}, "tier_above": {"32768"}, "tier_input": {"abc"}, "tier_output": {"2.00"}}
	values.Set("_csrf", csrfField.FindStringSubmatch(c.get(page).body)[1])
	req, _ := http.NewRequest("POST", c.base+page, strings.NewReader(values.Encode()))
	req.Header.Set("Content-Type", "application/x-www-form-urlencoded")
	req.Header.Set("X-Preview", "fragment")
	body := html.UnescapeString(c.do(req).body)
	if !strings.Contains(body, "Fix the marked fields to see the preview: Input price, Tier 1 input price. Input price: Use a decimal point, not a comma: 1.50") {
		t.Errorf("the preview does not name the fields as the form does:\n%.3000s", body)
	}
	if strings.Contains(body, "tier.0") || strings.Contains(body, "tier 0") {
		t.Error("the preview names an internal key")
	}
}

// TestNewListingPreviewInvitesRatherThanErrs: a listing with no fare opens
// its filing form with a preview that asks for prices, not one that reports
// errors before anything was typed.
func TestNewListingPreviewInvitesRatherThanErrs(t *testing.T) {
	p := newPortal(t, store.SQLite)
	admin := p.client()
	admin.login("admin@nebula.example")
	opt := regexp.MustCompile(`<option value="(\d+:\d+)">GLM-5</option>`).FindStringSubmatch(admin.get("/listings").body)
	if opt == nil {
		t.Fatal("no model to add")
	}
	added := admin.post("/listings", "/listings", url.Values{"model": {opt[1]}})
	page := admin.get(added.location + "/file").body
	if strings.Contains(page, `data-testid="preview-error"`) || !strings.Contains(page, `data-testid="preview-waiting"`) {
		t.Error("a new listing's preview reports errors before anything is typed")
	}
}

// TestLivePreviewCarriesTheServersChecks: the live preview's answer carries,
// out of band, a message slot for every checked field the form renders (no
// more, no fewer), the server's message on a bad field that has something in
// it, nothing on an empty one, and on the filing form the effective prices
// and cents kept computed by the fare rules.
func TestLivePreviewCarriesTheServersChecks(t *testing.T) {
	p := newPortal(t, store.SQLite)
	listing := listingIDs(t, p.store)["nebula"][0]
	c := p.client()
	c.login("admin@nebula.example")
	preview := fmt.Sprintf("/listings/%d/preview", listing)
	slots := regexp.MustCompile(`<div id="([a-z_]+)-check" class="field-check"( hx-swap-oob="true")?>`)
	slotIDs := func(body string, oob bool) []string {
		var out []string
		for _, m := range slots.FindAllStringSubmatch(body, -1) {
			if (m[2] != "") == oob {
				out = append(out, m[1])
			}
		}
		slices.Sort(out)
		return out
	}
	fragment := func(values url.Values) string {
		values.Set("_csrf", csrfField.FindStringSubmatch(c.get(preview).body)[1])
		req, _ := http.NewRequest("POST", c.base+preview, strings.NewReader(values.Encode()))
		req.Header.Set("Content-Type", "application/x-www-form-urlencoded")
		req.Header.Set("X-Preview", "fragment")
		res := c.do(req)
		wantStatus(t, "live preview", res, http.StatusOK)
		return html.UnescapeString(res.body)
	}
	for _, form := range []struct {
		name, page string
		values     url.Values
	}{
		{"filing form", fmt.Sprintf("/listings/%d/file", listing), func() url.Values {
			v := fareValues()
			v.Set("full_form", "1")
			return v
		}()},
		{"preview page", preview, url.Values{"input": {"0.40"}}},
	} {
		onPage := slotIDs(c.get(form.page).body, false)
		if len(onPage) < 5 {
			t.Fatalf("%s: only %v checked fields on the page", form.name, onPage)
		}
		v := form.values
		v.Set("input", "1,50")
		v.Set("landing_fee", "70")
		v.Set("discount", "")
		body := fragment(v)
		if sent := slotIDs(body, true); !slices.Equal(sent, onPage) {
			t.Errorf("%s: the answer fills slots %v, the page has %v", form.name, sent, onPage)
		}
		for field, want := range map[string]string{"input": "Use a decimal point, not a comma: 1.50, not 1,50.", "landing_fee": "Enter a percentage from 5 to 50."} {
			if !strings.Contains(body, `<p class="field-error" id="`+field+`-error" data-testid="error-`+field+`">`+want+`</p>`) {
				t.Errorf("%s: no message %q for %s", form.name, want, field)
			}
		}
		if strings.Contains(body, `id="discount-error"`) || strings.Contains(body, `id="output-error"`) {
			t.Errorf("%s: a message on an empty or good field", form.name)
		}
	}
	// The filing form's effective prices: 1.00 at a 30 % fee and a 10 %
	// discount routes at 0.81; the fare keeps 63 cents.
	v := fareValues()
	v.Set("full_form", "1")
	v.Set("input", "1.00")
	v.Set("landing_fee", "30")
	v.Set("discount", "10")
	body := fragment(v)
	for _, want := range []string{`<strong id="effective-input" data-testid="effective-input" hx-swap-oob="true">$0.8100</strong>`,
		`<strong id="kept" data-testid="kept" hx-swap-oob="true">63</strong>`} {
		if !strings.Contains(body, want) {
			t.Errorf("the answer lacks %s", want)
		}
	}
	if strings.Contains(fragment(url.Values{"input": {"0.40"}}), `id="kept"`) {
		t.Error("the preview page, which shows no effective prices, was sent some")
	}
}

// TestThePreviewWeighsTheMeasuredMix: with no mix typed, the preview weighs
// its scenarios by the model's demand the gateway reported over the last
// week, and says so; a typed mix wins and is said to be typed; the measured
// mix shown in the fields and posted back (as every live update does) is
// still the measured one.
func TestThePreviewWeighsTheMeasuredMix(t *testing.T) {
	p := newPortal(t, store.SQLite)
	listing := listingIDs(t, p.store)["nebula"][0]
	l, err := p.store.FindListing(context.Background(), listing, nil)
	if err != nil {
		t.Fatal(err)
	}
	c := p.client()
	c.login("member@nebula.example")
	page := fmt.Sprintf("/listings/%d/preview", listing)
	if res := c.get(page); !strings.Contains(res.body, "has measured no demand for this model yet") {
		t.Errorf("before any demand the preview does not say its mix is even for want of it")
	}
	tok := apiToken(t, p.store, apitoken.ScopeMetricsWrite)
	minute := time.Now().UTC().Truncate(time.Minute).Add(-time.Minute).Format(time.RFC3339)
	body := fmt.Sprintf(`{"buckets":[],"demand":[
		{"model":%q,"workload":"coding","minute":%q,"requests":60,"promptTokens":2400000},
		{"model":%q,"workload":"general","minute":%q,"requests":40,"promptTokens":40000}]}`, l.Model.Slug, minute, l.Model.Slug, minute)
	wantStatus(t, "demand", apiCall(t, p.srv.URL, "POST", "/api/v1/metrics", tok, body), http.StatusAccepted)
	res := c.get(page)
	if !strings.Contains(res.body, "what the gateway measured for this model over the last 7 days (100 requests)") {
		t.Errorf("the preview does not say its mix is measured:\n%.2000s", res.body)
	}
	for field, want := range map[string]string{"mix_small": "40", "mix_large": "0", "mix_coding": "60", "mix_chat": "0"} {
		if !strings.Contains(res.body, fmt.Sprintf(`name=%q value=%q`, field, want)) {
			t.Errorf("%s is not %s%% (the measured mix)", field, want)
		}
	}
	// Posted back as shown: still the measured mix.
	again := c.post(page, page, url.Values{"input": {"0.10"}, "landing_fee": {"20"}, "mix_small": {"40"}, "mix_large": {"0"}, "mix_coding": {"60"}, "mix_chat": {"0"}})
	if !strings.Contains(again.body, "what the gateway measured") {
		t.Error("the measured mix posted back as shown was taken for a typed one")
	}
	typed := c.post(page, page, url.Values{"input": {"0.10"}, "landing_fee": {"20"}, "mix_small": {"100"}, "mix_large": {"0"}, "mix_coding": {"0"}, "mix_chat": {"0"}})
	if !strings.Contains(typed.body, "The mix is the one typed here") || !strings.Contains(typed.body, `name="mix_small" value="100"`) {
		t.Error("a typed mix does not win")
	}
	for name, body := range map[string]string{"measured": res.body, "typed": typed.body} {
		headlineIsTheRowsWeighed(t, name, body)
	}
}

// headlineIsTheRowsWeighed checks a preview's headline share against its
// rows as printed: the sum of each row's weight times its share, within
// the rounding of the figures shown (a tenth of a point each).
func headlineIsTheRowsWeighed(t *testing.T, name, body string) {
	t.Helper()
	pct := func(s string) float64 {
		v, err := strconv.ParseFloat(s, 64)
		if err != nil {
			t.Fatalf("%s: %q is not a percentage", name, s)
		}
		return v
	}
	total := regexp.MustCompile(`data-testid="share-total">([0-9.]+) %`).FindStringSubmatch(body)
	weights := regexp.MustCompile(`data-testid="share-weight-([a-z_]+)">([0-9.]+) %</td><td class="num" data-testid="share-row-([a-z_]+)">([0-9.]+) %`).FindAllStringSubmatch(body, -1)
	if total == nil || len(weights) != 4 {
		t.Fatalf("%s: no headline or not four rows (%d):\n%.3000s", name, len(weights), body)
	}
	var sum, weight float64
	for _, w := range weights {
		sum += pct(w[2]) * pct(w[4]) / 100
		weight += pct(w[2])
	}
	if math.Abs(sum-pct(total[1])) > 0.3 || math.Abs(weight-100) > 0.3 {
		t.Errorf("%s: headline %s %%, the rows weigh to %.2f %% (weights sum to %.1f %%)", name, total[1], sum, weight)
	}
}

// TestThePreviewShowsWhatAScheduleCharges (console defect 1): for a fare with
// peak and off-peak prices the preview shows each block's prices and what
// they route at, and the input line (which the summary repeats) says the
// filed input is the base price, paid at no hour once the schedule is in
// force.
func TestThePreviewShowsWhatAScheduleCharges(t *testing.T) {
	p := newPortal(t, store.SQLite)
	ctx := context.Background()
	var scheduled *catalogue.Listing
	for _, carrier := range []string{"nebula", "orbit"} {
		for _, id := range listingIDs(t, p.store)[carrier] {
			l, err := p.store.FindListing(ctx, id, nil)
			if err == nil && l.Published != nil && l.Published.TimeBased != nil {
				scheduled = l
			}
		}
	}
	if scheduled == nil {
		t.Fatal("no demo listing of nebula or orbit files peak and off-peak prices")
	}
	c := p.client()
	c.login("admin@" + scheduled.CarrierSlug + ".example")
	page := c.get(fmt.Sprintf("/listings/%d/preview", scheduled.ID))
	wantStatus(t, "preview", page, http.StatusOK)
	f := scheduled.Published
	peak, off := f.BlockPrices(time.Now())
	for name, b := range map[string]*fare.Resolved{"Peak hours": peak, "Off-peak hours": off} {
		if b == nil {
			t.Fatalf("the demo schedule has no %s", name)
		}
		want := "input $" + b.Input.Fixed(4)
		routes := "route at " + templates.RoutesAt(f.Effective(b.Input))
		if !strings.Contains(page.body, name) || !strings.Contains(page.body, want) || !strings.Contains(page.body, routes) {
			t.Errorf("the preview does not show %s: %s, %s", name, want, routes)
		}
	}
	if !strings.Contains(page.body, "as the base price, which applies at no hour: every hour of the schedule is peak or off-peak; peak hours $"+peak.Input.Fixed(4)) {
		t.Error("the input line does not say the filed input's base price applies at no hour, or lacks the peak price")
	}
}

// TestThePreviewExplainsTheSharePolicy: the preview says, per auto
// scenario, a listing's share for projects on the share policy and why,
// and the adjusted price's parts it shows add up to it.
func TestThePreviewExplainsTheSharePolicy(t *testing.T) {
	p := newPortal(t, store.SQLite)
	c := p.client()
	c.login("admin@nebula.example")
	kimi := listingOf(t, p.store, "nebula", "kimi-k2.5")
	page := c.get(fmt.Sprintf("/listings/%d/preview", kimi.ID))
	wantStatus(t, "preview", page, http.StatusOK)
	table := regexp.MustCompile(`(?s)data-testid="under-share".*?</table>`).FindString(page.body)
	if table == "" {
		t.Fatal("the preview says nothing of the share policy")
	}
	lines := regexp.MustCompile(`adjusted price \$([\d.]+) = routing price \$([\d.]+)((?:\s*\+ \$[\d.]+ for [^<+]+)*)`).FindAllStringSubmatch(table, -1)
	if len(lines) == 0 || !strings.Contains(table, "of its requests") || !strings.Contains(table, "edge") {
		t.Fatalf("no adjusted price, share or edge in:\n%s", table)
	}
	for _, l := range lines {
		adjusted, _ := strconv.ParseFloat(l[1], 64)
		sum, _ := strconv.ParseFloat(l[2], 64)
		for _, part := range regexp.MustCompile(`\+ \$([\d.]+)`).FindAllStringSubmatch(l[3], -1) {
			v, _ := strconv.ParseFloat(part[1], 64)
			sum += v
		}
		if math.Abs(sum-adjusted) > 0.0005 {
			t.Errorf("%q: the parts add up to %.4f", l[0], sum)
		}
	}
}

// TestThePreviewSaysWhichRequestsTheFareCannotServe: demand posted through
// the metrics API with what its requests asked for (election.md sec. 7)
// becomes the preview's sentences for a listing, and a fare typed with
// what they asked for leaves them out.
func TestThePreviewSaysWhichRequestsTheFareCannotServe(t *testing.T) {
	p := newPortal(t, store.SQLite)
	listing := listingIDs(t, p.store)["nebula"][0]
	l, err := p.store.FindListing(context.Background(), listing, nil)
	if err != nil {
		t.Fatal(err)
	}
	tok := apiToken(t, p.store, apitoken.ScopeMetricsWrite)
	minute := p.server.Now().UTC().Truncate(time.Minute).Add(-10 * time.Minute).Format(time.RFC3339)
	body := fmt.Sprintf(`{"buckets":[],"demand":[{"model":%q,"workload":"general","minute":%q,"source":"gw","requests":200,"promptTokens":200000,
		"asked":{"zdr":62,"context_over:1048576":16}}]}`, l.Model.Slug, minute)
	res := apiCall(t, p.srv.URL, "POST", "/api/v1/metrics", tok, body)
	wantStatus(t, "post demand", res, http.StatusAccepted)
	bad := apiCall(t, p.srv.URL, "POST", "/api/v1/metrics", tok, strings.Replace(body, `"zdr":62`, `"zdr":201`, 1))
	wantStatus(t, "asked past the requests", bad, http.StatusUnprocessableEntity)

	c := p.client()
	c.login("member@nebula.example")
	page := fmt.Sprintf("/listings/%d/preview", listing)
	got := c.get(page).body
	if !strings.Contains(got, `data-testid="unserved"`) || !strings.Contains(got, "31 % asked for zero data retention; this listing: prompts kept 30 days") ||
		!strings.Contains(got, "Declare prompts not kept (0 days) and no training") {
		t.Errorf("the preview does not say which requests the fare cannot serve:\n%s", unservedPart(got))
	}
	if strings.Contains(got, "needed more than 1,048,576") {
		t.Error("a listing that declares 262,144 tokens is told about requests above the line it cannot know of")
	}
	token := csrfField.FindStringSubmatch(got)[1]
	typed := url.Values{"_csrf": {token}, "full_form": {"1"}, "input": {"0.40"}, "output": {"2.00"}, "retention_days": {"0"}, "trains_on_prompts": {"no"}}
	req, _ := http.NewRequest("POST", c.base+page, strings.NewReader(typed.Encode()))
	req.Header.Set("Content-Type", "application/x-www-form-urlencoded")
	req.Header.Set("X-Preview", "fragment")
	frag := c.do(req)
	if frag.status != http.StatusOK || strings.Contains(frag.body, "asked for zero data retention") {
		t.Errorf("a ZDR fare is still told it misses ZDR requests (%d):\n%s", frag.status, unservedPart(frag.body))
	}
}

func unservedPart(body string) string {
	if i := strings.Index(body, `data-testid="unserved"`); i >= 0 {
		return body[i:min(len(body), i+3000)]
	}
	return body[:min(len(body), 1500)]
}
