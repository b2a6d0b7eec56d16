package web_test

import (
	"bytes"
	"context"
	"encoding/json"
	"fmt"
	"mime/multipart"
	"net/http"
	"net/url"
	"regexp"
	"strings"
	"testing"

	"github.com/airside/airside/internal/apitoken"
	"github.com/airside/airside/internal/audit"
	"github.com/airside/airside/internal/catalogue"
	"github.com/airside/airside/internal/fare"
	"github.com/airside/airside/internal/store"
	"github.com/airside/airside/internal/workflow"
)

// fareValues is a valid filing form.
func fareValues() url.Values {
	return url.Values{
		"input": {"0.50"}, "output": {"2.00"}, "cached_input": {"0.10"}, "landing_fee": {"25"}, "discount": {"5"},
		"cap_scope": {"global"}, "capability": {"tools"}, "justification": {"Lower prices on new hardware."},
	}
}

func countFilings(t *testing.T, st *store.Store, listingID int64) int {
	t.Helper()
	fs, err := st.FindFilings(context.Background(), workflow.FilingFilter{ListingID: listingID})
	if err != nil {
		t.Fatal(err)
	}
	return len(fs)
}

var filingLocation = regexp.MustCompile(`^/filings/(\d+)$`)

func TestFilingRulesThroughTheRouter(t *testing.T) {
	p := newPortal(t, store.SQLite)
	listing := listingIDs(t, p.store)["nebula"][0]
	c := p.client()
	c.login("member@nebula.example")
	formPage := fmt.Sprintf("/listings/%d/file", listing)
	for _, test := range []struct {
		name       string
		edit       func(v url.Values)
		field      string
		typedValue string
	}{
		{"landing fee above 50", func(v url.Values) { v.Set("landing_fee", "60") }, "landing_fee", "60"},
		{"cached above input", func(v url.Values) { v.Set("cached_input", "0.75") }, "cached_input", "0.75"},
		{"too many decimals", func(v url.Values) { v.Set("input", "0.1234567") }, "input", "0.1234567"},
		{"missing output", func(v url.Values) { v.Set("output", "") }, "output", ""},
		{"discount above 50", func(v url.Values) { v.Set("discount", "75") }, "discount", "75"},
		{"cap not a number", func(v url.Values) { v.Set("max_rpm", "lots") }, "max_rpm", "lots"},
		{"tiers going down", func(v url.Values) {
			v["tier_above"] = []string{"64000", "32000"}
			v["tier_input"] = []string{"1", "2"}
		}, "tier.1.above", "32000"},
		{"overlapping peak windows", func(v url.Values) {
			v["peak_start"] = []string{"1", "3"}
			v["peak_end"] = []string{"5", "8"}
			v.Set("peak_input", "0.9")
		}, "peak_window.1.start", "3"},
		{"weekday out of range", func(v url.Values) { v["off_peak_day"] = []string{"9"}; v.Set("off_peak_input", "0.2") }, "off_peak_days", ""},
		{"offset out of range", func(v url.Values) {
			v["off_peak_day"] = []string{"0"}
			v.Set("off_peak_input", "0.2")
			v.Set("utc_offset", "-800")
		}, "utc_offset", "-800"},
		{"effective date in the past", func(v url.Values) { v.Set("effective_at", "2020-01-01") }, "effective_at", "2020-01-01"},
	} {
		t.Run(test.name, func(t *testing.T) {
			before := countFilings(t, p.store, listing)
			v := fareValues()
			test.edit(v)
			v.Set("op", "submit")
			res := c.post(formPage, formPage, v)
			wantStatus(t, "invalid filing", res, http.StatusUnprocessableEntity)
			if !strings.Contains(res.body, `data-testid="error-`+fare.FieldID(test.field)+`"`) {
				t.Errorf("no message next to %s", test.field)
			}
			if test.typedValue != "" && !strings.Contains(res.body, `value="`+test.typedValue+`"`) {
				t.Errorf("the typed %q was not kept", test.typedValue)
			}
			if !strings.Contains(res.body, `value="Lower prices on new hardware."`) && !strings.Contains(res.body, ">Lower prices on new hardware.</textarea>") {
				t.Error("the justification was lost")
			}
			if after := countFilings(t, p.store, listing); after != before {
				t.Errorf("a rejected form saved something: %d -> %d filings", before, after)
			}
		})
	}
}

func TestFilingRoles(t *testing.T) {
	p := newPortal(t, store.SQLite)
	ids := listingIDs(t, p.store)
	nebula, orbit := ids["nebula"][0], ids["orbit"][0]

	author := p.client()
	author.login("member@nebula.example")
	form := fmt.Sprintf("/listings/%d/file", nebula)
	v := fareValues()
	v.Set("justification", "SECRET-NEBULA-NOTE")
	v.Set("op", "save")
	res := author.post(form, form, v)
	wantStatus(t, "member saves a draft", res, http.StatusSeeOther)
	m := filingLocation.FindStringSubmatch(res.location)
	if m == nil {
		t.Fatalf("redirect to %q", res.location)
	}
	filing := "/filings/" + m[1]

	for _, test := range []struct {
		who, method, path string
		want              int
	}{
		{"member@orbit.example", "GET", form, http.StatusNotFound},
		{"member@orbit.example", "POST", form, http.StatusNotFound},
		{"member@orbit.example", "GET", filing, http.StatusNotFound},
		{"admin@orbit.example", "POST", filing + "/withdraw", http.StatusNotFound},
		{"admin@orbit.example", "POST", filing + "/submit", http.StatusNotFound},
		{"member@orbit.example", "GET", filing + "/edit", http.StatusNotFound},
		{"reviewer@airside.example", "GET", form, http.StatusForbidden},
		{"reviewer@airside.example", "GET", filing, http.StatusOK},
		{"reviewer@airside.example", "POST", filing + "/submit", http.StatusForbidden},
		{"admin@nebula.example", "GET", filing + "/edit", http.StatusOK},
		{"member@nebula.example", "POST", fmt.Sprintf("/listings/%d/pause", nebula), http.StatusForbidden},
		{"member@nebula.example", "GET", fmt.Sprintf("/listings/%d/file", orbit), http.StatusNotFound},
		{"reviewer@airside.example", "GET", "/fares/bulk", http.StatusForbidden},
	} {
		c := p.client()
		c.login(test.who)
		var got response
		if test.method == "GET" {
			got = c.get(test.path)
		} else {
			got = c.post("/listings", test.path, fareValues())
		}
		wantStatus(t, test.who+" "+test.method+" "+test.path, got, test.want)
		if strings.Contains(got.body, "SECRET-NEBULA-NOTE") && !strings.HasSuffix(test.who, "@nebula.example") && !strings.HasPrefix(test.who, "reviewer") {
			t.Errorf("%s saw Nebula's draft note on %s", test.who, test.path)
		}
	}
	// Orbit's own pages never show Nebula's draft.
	orbitUser := p.client()
	orbitUser.login("admin@orbit.example")
	for _, path := range []string{"/listings", fmt.Sprintf("/listings/%d", orbit), "/audit"} {
		if body := orbitUser.get(path).body; strings.Contains(body, "SECRET-NEBULA-NOTE") || strings.Contains(body, filing+`"`) {
			t.Errorf("%s shows Nebula's draft to Orbit", path)
		}
	}
}

func TestSecondSubmitIsRefusedWithALink(t *testing.T) {
	p := newPortal(t, store.SQLite)
	listing := listingIDs(t, p.store)["nebula"][0]
	c := p.client()
	c.login("admin@nebula.example")
	form := fmt.Sprintf("/listings/%d/file", listing)
	v := fareValues()
	v.Set("op", "submit")
	first := c.post(form, form, v)
	wantStatus(t, "first submit", first, http.StatusSeeOther)

	v.Set("input", "0.48")
	second := c.post(form, form, v)
	wantStatus(t, "second submit", second, http.StatusConflict)
	if !strings.Contains(second.body, `href="`+first.location+`"`) {
		t.Errorf("the refusal does not link the pending filing %s", first.location)
	}
	if !strings.Contains(second.body, `value="0.48"`) {
		t.Error("the refused form lost what was typed")
	}
	// A draft saved beside it, then submitted from its page, is refused the same way.
	v.Set("op", "save")
	draft := c.post(form, form, v)
	wantStatus(t, "draft beside it", draft, http.StatusSeeOther)
	refused := c.post(draft.location, draft.location+"/submit", url.Values{})
	wantStatus(t, "submitting the draft", refused, http.StatusConflict)
	if !strings.Contains(refused.body, `href="`+first.location+`"`) {
		t.Error("the refusal on the filing page does not link the pending filing")
	}
	// Withdrawing the first frees the listing.
	wantStatus(t, "withdraw", c.post(first.location, first.location+"/withdraw", url.Values{}), http.StatusSeeOther)
	wantStatus(t, "submit after withdrawal", c.post(draft.location, draft.location+"/submit", url.Values{}), http.StatusSeeOther)
}

func TestEditAFilingWithAStaleFormIsRefused(t *testing.T) {
	p := newPortal(t, store.SQLite)
	listing := listingIDs(t, p.store)["nebula"][0]
	a, b := p.client(), p.client()
	a.login("admin@nebula.example")
	b.login("member@nebula.example")
	form := fmt.Sprintf("/listings/%d/file", listing)
	v := fareValues()
	v.Set("op", "save")
	res := a.post(form, form, v)
	edit := res.location + "/edit"

	pageA, pageB := a.get(edit), b.get(edit)
	lock := regexp.MustCompile(`name="lock_version" value="(\d+)"`)
	tokenA, tokenB := csrfField.FindStringSubmatch(pageA.body)[1], csrfField.FindStringSubmatch(pageB.body)[1]
	lockA, lockB := lock.FindStringSubmatch(pageA.body)[1], lock.FindStringSubmatch(pageB.body)[1]
	send := func(c *client, token, lockVersion, input string) response {
		v := fareValues()
		v.Set("input", input)
		v.Set("op", "save")
		v.Set("_csrf", token)
		v.Set("lock_version", lockVersion)
		return c.postRaw(edit, v)
	}
	wantStatus(t, "first edit", send(a, tokenA, lockA, "0.47"), http.StatusSeeOther)
	stale := send(b, tokenB, lockB, "0.46")
	wantStatus(t, "stale edit", stale, http.StatusConflict)
	if !strings.Contains(stale.body, `data-testid="crossed-edit"`) || !strings.Contains(stale.body, "Someone saved this filing after you opened it") {
		t.Error("the stale edit does not say why")
	}
	f, _ := p.store.FindFiling(context.Background(), mustID(t, res.location), nil)
	if f.Fare.Input.String() != "0.47" {
		t.Errorf("the stale edit overwrote the first: input %s", f.Fare.Input)
	}
	// L21: what was typed is kept, beside what the other person saved, and
	// the form now carries the current version: saving again keeps it.
	if !strings.Contains(stale.body, `value="0.46"`) ||
		!regexp.MustCompile(`<td>[^<]*Input[^<]*</td><td>0.47</td><td><strong>0.46</strong></td>`).MatchString(stale.body) {
		t.Errorf("the crossed edit does not keep what was typed beside what was saved:\n%.3000s", stale.body)
	}
	lockNow := lock.FindStringSubmatch(stale.body)[1]
	if lockNow == lockB {
		t.Fatal("the crossed edit's form still carries the stale version")
	}
	wantStatus(t, "save again on purpose", send(b, csrfField.FindStringSubmatch(stale.body)[1], lockNow, "0.46"), http.StatusSeeOther)
	if f, _ := p.store.FindFiling(context.Background(), mustID(t, res.location), nil); f.Fare.Input.String() != "0.46" {
		t.Errorf("saving again after the crossed edit kept input %s", f.Fare.Input)
	}
}

func mustID(t *testing.T, location string) int64 {
	t.Helper()
	m := filingLocation.FindStringSubmatch(location)
	if m == nil {
		t.Fatalf("not a filing URL: %q", location)
	}
	var id int64
	fmt.Sscan(m[1], &id)
	return id
}

func TestPauseAndAddListing(t *testing.T) {
	p := newPortal(t, store.SQLite)
	ids := listingIDs(t, p.store)
	admin := p.client()
	admin.login("admin@nebula.example")
	ctx := context.Background()
	listing := ids["nebula"][0]
	page, pause := fmt.Sprintf("/listings/%d", listing), fmt.Sprintf("/listings/%d/pause", listing)
	status := func() catalogue.ListingStatus {
		l, err := p.store.FindListing(ctx, listing, nil)
		if err != nil {
			t.Fatal(err)
		}
		return l.Status
	}
	revision, _ := p.store.CatalogueRevision(ctx)
	// Neither a reason nor the confirmation: both said beside their fields,
	// nothing changes. A reason without the confirmation is kept as typed.
	res := admin.post(page, pause, url.Values{})
	wantStatus(t, "a pause with nothing given", res, http.StatusUnprocessableEntity)
	for _, field := range []string{"reason", "confirm"} {
		if !strings.Contains(res.body, `data-testid="error-`+field+`"`) {
			t.Errorf("no message beside %s", field)
		}
	}
	res = admin.post(page, pause, url.Values{"reason": {"Our H100 pool is down"}})
	wantStatus(t, "a pause unconfirmed", res, http.StatusUnprocessableEntity)
	if !strings.Contains(res.body, "Our H100 pool is down</textarea>") || status() != catalogue.StatusInService {
		t.Errorf("the reason was not kept, or the listing changed: %s", status())
	}
	// Given both, routing stops at once: no reviewer, a new revision.
	res = admin.post(page, pause, url.Values{"reason": {"Our H100 pool is down"}, "confirm": {"yes"}})
	wantStatus(t, "pause now", res, http.StatusSeeOther)
	if got := status(); got != catalogue.StatusPaused {
		t.Errorf("after pausing now the listing is %s", got)
	}
	if after, _ := p.store.CatalogueRevision(ctx); after <= revision {
		t.Errorf("the pause published no revision (%d, then %d)", revision, after)
	}
	events, _ := p.store.FindAuditEvents(ctx, audit.Filter{Action: "listing.pause"})
	if len(events) != 1 || !strings.Contains(events[0].After, "Our H100 pool is down") {
		t.Errorf("the pause is not audited with its reason: %+v", events)
	}
	shown := admin.get(res.location).body
	if !strings.Contains(shown, "Paused: gateways stop routing") || !strings.Contains(shown, `data-testid="resume"`) {
		t.Error("the listing page does not say it is paused, or offers no resume")
	}
	// A second pause finds nothing in service.
	again := admin.post(page, pause, url.Values{"reason": {"again"}, "confirm": {"yes"}})
	if again.status != http.StatusUnprocessableEntity && !strings.Contains(admin.get(again.location).body, "Only a listing in service") {
		t.Errorf("second pause: %d %s", again.status, again.location)
	}

	listings := admin.get("/listings")
	opt := regexp.MustCompile(`<option value="(\d+:\d+)">GLM-5</option>`).FindStringSubmatch(listings.body)
	if opt == nil {
		t.Fatalf("no GLM-5 to add for Nebula:\n%.2000s", listings.body)
	}
	added := admin.post("/listings", "/listings", url.Values{"model": {opt[1]}})
	wantStatus(t, "add listing", added, http.StatusSeeOther)
	if body := admin.get(added.location).body; !strings.Contains(body, "GLM-5") || !strings.Contains(body, ">draft<") {
		t.Errorf("new listing page:\n%.800s", body)
	}
	member := p.client()
	member.login("member@nebula.example")
	wantStatus(t, "member adds a listing", member.post("/listings", "/listings", url.Values{"model": {opt[1]}}), http.StatusForbidden)

	// A model that is not in the catalogue is a clear 422, not a 500.
	carrier, _, _ := strings.Cut(opt[1], ":")
	unknown := admin.post("/listings", "/listings", url.Values{"model": {carrier + ":999999"}})
	wantStatus(t, "add an unknown model", unknown, http.StatusUnprocessableEntity)
	if !strings.Contains(unknown.body, "Choose a model from the catalogue.") {
		t.Errorf("unknown model page:\n%.800s", unknown.body)
	}
}

func upload(t *testing.T, c *client, content []byte) response {
	t.Helper()
	page := c.get("/fares/bulk")
	token := csrfField.FindStringSubmatch(page.body)[1]
	var body bytes.Buffer
	w := multipart.NewWriter(&body)
	w.WriteField("_csrf", token)
	part, _ := w.CreateFormFile("file", "fares.csv")
	part.Write(content)
	w.Close()
	req, _ := http.NewRequest("POST", c.base+"/fares/bulk", &body)
	req.Header.Set("Content-Type", w.FormDataContentType())
	return c.do(req)
}

func TestBulkFiling(t *testing.T) {
	p := newPortal(t, store.SQLite)
	c := p.client()
	c.login("admin@nebula.example")
	total := func() int {
		fs, _ := p.store.FindFilings(context.Background(), workflow.FilingFilter{})
		return len(fs)
	}
	template := c.get("/fares/bulk/template.csv")
	wantStatus(t, "template", template, http.StatusOK)
	if !strings.HasPrefix(template.body, "carrier,model,input,") || !strings.Contains(template.body, "nebula,kimi-k2.5,") || strings.Contains(template.body, "orbit,") {
		t.Fatalf("template:\n%s", template.body)
	}
	if got := strings.SplitN(template.body, "\n", 2)[0]; got != strings.Join(fare.CSVHeader, ",") {
		t.Fatalf("template header %q", got)
	}
	// The rows below are in the format before the market's columns, which
	// still reads (its rows keep the published market).
	header := strings.Join(fare.LegacyCSVHeader, ",")

	t.Run("the unchanged template creates nothing", func(t *testing.T) {
		res := upload(t, c, []byte(template.body))
		wantStatus(t, "upload", res, http.StatusSeeOther)
		if total() != 0 {
			t.Errorf("%d filings from an unchanged template", total())
		}
	})
	for _, test := range []struct {
		name      string
		content   string
		wantInMsg string
	}{
		{"wrong header", "model,input\nkimi-k2.5,0.5\n", "header must be exactly"},
		{"one bad row among good ones", header + "\nnebula,kimi-k2.5,0.40,2.00,,,,20,0,,,global,tools,,,\nnebula,glm-5,0.40,2.00,,,,20,0,,,global,,,,\n", "no listing of"},
		{"bad landing fee", header + "\nnebula,kimi-k2.5,0.40,2.00,,,,70,0,,,global,,,,\n", "landing_fee"},
		{"formula injection in the note", header + "\nnebula,kimi-k2.5,0.40,2.00,,,,20,0,,,global,,,\"=cmd|' /C calc'!A0\",\n", "spreadsheet formula"},
		{"another carrier", header + "\norbit,kimi-k2.5,0.40,2.00,,,,20,0,,,global,,,,\n", "not one of your carriers"},
		{"the same listing twice", header + "\nnebula,kimi-k2.5,0.40,2.00,,,,20,0,,,global,,,,\nnebula,kimi-k2.5,0.41,2.00,,,,20,0,,,global,,,,\n", "already on row 2"},
		{"bad tiers cell", header + "\nnebula,kimi-k2.5,0.40,2.00,,,,20,0,,,global,,32768-1.1,,\n", "above:input/output/cached"},
		{"not UTF-8", header + "\nnebula,kimi-k2.5,0.40,2.00,,,,20,0,,,global,,,caf\xe9,\n", "not UTF-8"},
		{"10,000 rows", header + "\n" + strings.Repeat("nebula,kimi-k2.5,0.40,2.00,,,,20,0,,,global,,,,\n", 10000), "At most 1000 rows"},
		{"empty", header + "\n", "no rows"},
		{"a decimal comma in a semicolon file", strings.ReplaceAll(header, ",", ";") + "\nnebula;kimi-k2.5;0,40;2.00;;;;20;0;;;global;;;;\n", "Use a decimal point, not a comma: 0.40"},
	} {
		t.Run(test.name, func(t *testing.T) {
			res := upload(t, c, []byte(test.content))
			wantStatus(t, "upload", res, http.StatusUnprocessableEntity)
			if !strings.Contains(res.body, `data-testid="bulk-errors"`) || !strings.Contains(res.body, test.wantInMsg) {
				t.Errorf("errors lack %q:\n%.1500s", test.wantInMsg, res.body)
			}
			if total() != 0 {
				t.Errorf("a refused file created %d filings", total())
			}
		})
	}
	t.Run("every problem of the file in one pass", func(t *testing.T) {
		content := header + "\nnebula,kimi-k2.5,0.40,2.00,,,,20,0,,,global,,,\"=cmd|' /C calc'!A0\",\n" +
			"nebula,gpt-oss-120b,0.10,0.40,,,,70,0,,,global,,,,\n" + "nebula,deepseek-v3.2,abc,0.40,,,,20,0,,,global,,,,\n"
		res := upload(t, c, []byte(content))
		wantStatus(t, "upload", res, http.StatusUnprocessableEntity)
		for _, want := range []string{"spreadsheet formula", "landing_fee", "The price"} {
			if !strings.Contains(res.body, want) {
				t.Errorf("the first pass does not report %q", want)
			}
		}
	})
	t.Run("good rows create drafts", func(t *testing.T) {
		content := header + "\nnebula,kimi-k2.5,0.40,2.00,0.08,,,25,5,600,,per_org,tools;json_output,131072:0.80/4.00/0.16,Quarterly repricing,\n" +
			"nebula,gpt-oss-120b,0.10,0.40,,,,20,0,,,global,,,,\n"
		res := upload(t, c, []byte(content))
		wantStatus(t, "upload", res, http.StatusSeeOther)
		fs, _ := p.store.FindFilings(context.Background(), workflow.FilingFilter{})
		if len(fs) != 2 {
			t.Fatalf("%d filings, want 2", len(fs))
		}
		for _, f := range fs {
			if f.State != workflow.Draft {
				t.Errorf("bulk filing %d is %s, want draft", f.ID, f.State)
			}
			if f.Model.Slug == "kimi-k2.5" && (f.Fare.Input.String() != "0.40" || len(f.Fare.Tiers) != 1 || f.Fare.LandingFee != 2500 || f.Justification != "Quarterly repricing") {
				t.Errorf("kimi filing %+v", f.Fare)
			}
		}
		// The result leads to the batch, the listings show the drafts, and
		// the batch is submitted at once.
		if !strings.HasPrefix(res.location, "/filings?state=draft&batch=") {
			t.Fatalf("the bulk result leads to %q, not to its drafts", res.location)
		}
		batch := c.get(res.location)
		for _, f := range fs {
			if !strings.Contains(batch.body, fmt.Sprintf(`name="id" value="%d"`, f.ID)) {
				t.Errorf("the batch page lacks draft #%d", f.ID)
			}
		}
		if listings := c.get("/listings").body; !strings.Contains(listings, ">draft</a>") {
			t.Error("the listings page does not show the drafts")
		}
		form := url.Values{}
		for _, f := range fs {
			form.Add("id", fmt.Sprint(f.ID))
		}
		wantStatus(t, "submit the batch", c.post(res.location, "/filings/submit", form), http.StatusSeeOther)
		fs, _ = p.store.FindFilings(context.Background(), workflow.FilingFilter{})
		for _, f := range fs {
			if f.State != workflow.Submitted {
				t.Errorf("after submitting the batch, filing %d is %s", f.ID, f.State)
			}
		}
	})
	t.Run("a semicolon file is read", func(t *testing.T) {
		content := strings.ReplaceAll(header, ",", ";") + "\nnebula;deepseek-v4-flash;0.05;0.30;;;;20;0;;;global;\"tools;json_output\";;;\n"
		res := upload(t, c, []byte(content))
		wantStatus(t, "upload", res, http.StatusSeeOther)
		fs, _ := p.store.FindFilings(context.Background(), workflow.FilingFilter{ListingID: listingOf(t, p.store, "nebula", "deepseek-v4-flash").ID})
		if len(fs) != 1 || len(fs[0].Fare.Capabilities) != 2 || fs[0].Fare.Input.String() != "0.05" {
			t.Fatalf("a semicolon file made %d filings", len(fs))
		}
	})
}

// TestFareFormSaysWhatOthersSee: where carriers file, they are told that
// competitors see their routing price, and never their landing fee or
// discount.
func TestFareFormSaysWhatOthersSee(t *testing.T) {
	p := newPortal(t, store.SQLite)
	c := p.client()
	c.login("admin@nebula.example")
	page := c.get(fmt.Sprintf("/listings/%d/file", listingIDs(t, p.store)["nebula"][0]))
	wantStatus(t, "fare form", page, http.StatusOK)
	if !strings.Contains(page.body, `data-testid="routing-price-disclosure"`) || !strings.Contains(page.body, "landing fee is never shown") || !strings.Contains(page.body, "can estimate it") {
		t.Error("the fare form does not say what other carriers see")
	}
}

// TestMarketFieldsFiledReviewedAndPublished: the market's attributes (sec.
// 7) filed through the form reach the reviewer's change summary (the data
// policy marked as the carrier's declaration), the catalogue document once
// approved, and the listing page with who approved the declaration; bad
// ones are named beside their field with what was typed kept.
func TestMarketFieldsFiledReviewedAndPublished(t *testing.T) {
	p := newPortal(t, store.SQLite)
	listing := listingIDs(t, p.store)["nebula"][0]
	c := p.client()
	c.login("member@nebula.example")
	formPage := fmt.Sprintf("/listings/%d/file", listing)
	for _, bad := range []struct{ field, value string }{
		{"quantization", "q4_k_m"}, {"retention_days", "-3"}, {"regions", "Germany"},
		{"request_price", "-0.001"}, {"context_length", "lots"},
	} {
		v := fareValues()
		v.Set(bad.field, bad.value)
		v.Set("op", "submit")
		res := c.post(formPage, formPage, v)
		wantStatus(t, "bad "+bad.field, res, http.StatusUnprocessableEntity)
		if !strings.Contains(res.body, `data-testid="error-`+fare.FieldID(bad.field)+`"`) || !strings.Contains(res.body, `value="`+bad.value+`"`) {
			t.Errorf("%s %q: no message beside it, or the typed value lost", bad.field, bad.value)
		}
	}

	v := fareValues()
	for field, value := range map[string]string{"context_length": "65536", "max_output_tokens": "8192", "quantization": "bf16",
		"retention_days": "0", "trains_on_prompts": "no", "regions": "fr, de", "request_price": "0.0002", "image_price": "0.001"} {
		v.Set(field, value)
	}
	v.Set("op", "submit")
	res := c.post(formPage, formPage, v)
	wantStatus(t, "submit the market", res, http.StatusSeeOther)
	filing := res.location

	rev := p.client()
	rev.login("reviewer@airside.example")
	page := rev.get(filing)
	for _, want := range []string{"Context length", "65,536 tokens", "bf16", "DE, FR", "$0.0002", `data-testid="change-note"`, "the carrier&#39;s declaration"} {
		if !strings.Contains(strings.ToLower(page.body), strings.ToLower(want)) {
			t.Errorf("the review page lacks %q", want)
		}
	}
	wantStatus(t, "approve", rev.post(filing, filing+"/approve", url.Values{}), http.StatusSeeOther)

	tok := apiToken(t, p.store, apitoken.ScopeCatalogueRead)
	cat := apiCall(t, p.srv.URL, "GET", "/api/v1/catalogue", tok, "")
	var doc struct {
		Listings []struct {
			ListingID int64           `json:"listingId"`
			Fare      json.RawMessage `json:"fare"`
		}
	}
	if err := json.Unmarshal([]byte(cat.body), &doc); err != nil {
		t.Fatal(err)
	}
	found := false
	for _, l := range doc.Listings {
		if l.ListingID != listing {
			continue
		}
		found = true
		var f struct {
			ContextLength, MaxOutputTokens, RetentionDays *int64
			Quantization, RequestPrice, ImagePrice        *string
			TrainsOnPrompts                               *bool
			Regions                                       []string
		}
		json.Unmarshal(l.Fare, &f)
		if f.ContextLength == nil || *f.ContextLength != 65536 || *f.MaxOutputTokens != 8192 || *f.Quantization != "bf16" ||
			*f.RetentionDays != 0 || *f.TrainsOnPrompts || strings.Join(f.Regions, ",") != "DE,FR" || *f.RequestPrice != "0.0002" || *f.ImagePrice != "0.001" {
			t.Errorf("the catalogue serves %s", l.Fare)
		}
	}
	if !found {
		t.Fatalf("listing %d is not in the catalogue", listing)
	}
	lp := c.get(fmt.Sprintf("/listings/%d", listing))
	for _, want := range []string{"zero data retention", "approved by reviewer@airside.example"} {
		if !strings.Contains(lp.body, want) {
			t.Errorf("the listing page lacks %q", want)
		}
	}
}
