package web_test

import (
	"context"
	"encoding/json"
	"fmt"
	"html"
	"math/big"
	"net/http"
	"net/url"
	"regexp"
	"strings"
	"sync"
	"testing"
	"time"

	"github.com/airside/airside/internal/account"
	"github.com/airside/airside/internal/apitoken"
	"github.com/airside/airside/internal/catalogue"
	"github.com/airside/airside/internal/money"
	"github.com/airside/airside/internal/store"
	"github.com/airside/airside/internal/store/storetest"
	"github.com/airside/airside/internal/workflow"
	"github.com/airside/airside/templates"
)

// carrierToken issues a token for the carrier of a demo carrier admin
// (email), with scopes, and returns its secret and name.
func carrierToken(t testing.TB, st *store.Store, email string, scopes ...string) (secret, name string) {
	t.Helper()
	ctx := context.Background()
	admin, err := st.FindUserByEmail(ctx, email)
	if err != nil {
		t.Fatal(err)
	}
	p, err := st.FindPrincipal(ctx, admin.ID)
	if err != nil || len(p.Memberships) != 1 {
		t.Fatalf("%s's memberships: %v", email, err)
	}
	name = fmt.Sprintf("repricer #%d", testTokens.Add(1))
	secret, err = apitoken.NewService(st).CreateForCarrier(ctx, p, p.Memberships[0].CarrierID, name, scopes)
	if err != nil {
		t.Fatal(err)
	}
	return secret, name
}

// nebulaListing is a published listing of Nebula's (of the model, when
// given).
func nebulaListing(t testing.TB, st *store.Store, model string) *catalogue.Listing {
	t.Helper()
	ls, err := st.FindListings(context.Background(), catalogue.ListingFilter{Published: true, ModelSlug: model})
	if err != nil {
		t.Fatal(err)
	}
	for i := range ls {
		if ls[i].CarrierSlug == "nebula" {
			return &ls[i]
		}
	}
	t.Fatalf("no published nebula listing %s", model)
	return nil
}

type carrierListings struct {
	Listings []struct {
		ListingID int64          `json:"listingId"`
		Carrier   string         `json:"carrier"`
		Model     string         `json:"model"`
		Published map[string]any `json:"published"`
	} `json:"listings"`
}

type carrierFiling struct {
	FilingID int64  `json:"filingId"`
	State    string `json:"state"`
	ViaToken string `json:"viaToken"`
	Changes  []struct {
		Field, Old, New string
	} `json:"changes"`
}

// TestTheCarrierAPIFilesAsTheFormDoes: a carrier's token lists its own
// listings only, with every fare field; files a cheaper fare that a
// reviewer sees as the form's, named by the token; is held to the form's
// checks field by field; cannot reach another carrier's listing or the
// gateway's API (nor a gateway's token the carrier API); withdraws.
func TestTheCarrierAPIFilesAsTheFormDoes(t *testing.T) {
	for _, d := range storetest.Dialects {
		t.Run(string(d), func(t *testing.T) {
			p := newPortal(t, d)
			ctx := context.Background()
			tok, name := carrierToken(t, p.store, "admin@nebula.example", apitoken.ScopeFaresRead, apitoken.ScopeFaresWrite)
			readOnly, _ := carrierToken(t, p.store, "admin@nebula.example", apitoken.ScopeFaresRead)

			res := apiCall(t, p.srv.URL, "GET", "/api/v1/carrier/listings", tok, "")
			wantStatus(t, "list", res, http.StatusOK)
			var listed carrierListings
			if err := json.Unmarshal([]byte(res.body), &listed); err != nil {
				t.Fatal(err)
			}
			all, err := p.store.FindListings(ctx, catalogue.ListingFilter{})
			if err != nil {
				t.Fatal(err)
			}
			nebula := 0
			var orbit, mine *catalogue.Listing
			for i := range all {
				switch all[i].CarrierSlug {
				case "nebula":
					nebula++
					if all[i].Published != nil && mine == nil {
						mine = &all[i]
					}
				case "orbit":
					orbit = &all[i]
				}
			}
			if len(listed.Listings) != nebula || mine == nil || orbit == nil {
				t.Fatalf("listed %d listings, nebula has %d", len(listed.Listings), nebula)
			}
			for _, l := range listed.Listings {
				if l.Carrier != "nebula" {
					t.Errorf("listed %s's listing %d", l.Carrier, l.ListingID)
				}
				if l.ListingID == mine.ID && l.Published["input"] != mine.Published.Input.String() {
					t.Errorf("listing %d's published input %v, want %s", l.ListingID, l.Published["input"], mine.Published.Input)
				}
			}

			lower := money.Micros(int64(mine.Published.Input) * 9 / 10).String()
			path := fmt.Sprintf("/api/v1/carrier/listings/%d/filings", mine.ID)
			body := fmt.Sprintf(`{"fare":{"input":%q,"justification":"Matching the market."},"submit":true}`, lower)
			wantStatus(t, "a read-only token files", apiCall(t, p.srv.URL, "POST", path, readOnly, body), http.StatusForbidden)
			res = apiCall(t, p.srv.URL, "POST", path, tok, body)
			wantStatus(t, "file", res, http.StatusCreated)
			var filed carrierFiling
			if err := json.Unmarshal([]byte(res.body), &filed); err != nil {
				t.Fatal(err)
			}
			if filed.State != string(workflow.Submitted) || filed.ViaToken != name || len(filed.Changes) != 1 ||
				filed.Changes[0].Field != "input" || filed.Changes[0].New != "$"+lower {
				t.Errorf("filed %+v, want submitted by %q changing input to %s only", filed, name, lower)
			}
			if loc := res.header.Get("Location"); loc != fmt.Sprintf("/api/v1/carrier/filings/%d", filed.FilingID) {
				t.Errorf("Location %q", loc)
			}
			// Listed by state; its thread carries the reviewer's question.
			res = apiCall(t, p.srv.URL, "GET", "/api/v1/carrier/filings?state=submitted", tok, "")
			wantStatus(t, "list filings", res, http.StatusOK)
			var list struct{ Filings []carrierFiling }
			if err := json.Unmarshal([]byte(res.body), &list); err != nil || len(list.Filings) == 0 || list.Filings[0].FilingID != filed.FilingID {
				t.Errorf("submitted filings %+v (%v), want #%d first", list.Filings, err, filed.FilingID)
			}
			for _, f := range list.Filings {
				if f.State != "submitted" {
					t.Errorf("listed a %s filing asking for submitted ones", f.State)
				}
			}
			wantStatus(t, "a state that is not", apiCall(t, p.srv.URL, "GET", "/api/v1/carrier/filings?state=approved", tok, ""), http.StatusUnprocessableEntity)
			// What the reviewer reads: the filing page names the token.
			reviewer := p.client()
			reviewer.login("reviewer@airside.example")
			page := reviewer.get(fmt.Sprintf("/filings/%d", filed.FilingID))
			if !strings.Contains(page.body, "through the API (token “"+name+"”)") {
				t.Errorf("the filing page does not say it came by API with %q", name)
			}
			fp := fmt.Sprintf("/filings/%d", filed.FilingID)
			wantStatus(t, "comment", reviewer.post(fp, fp+"/comment", url.Values{"body": {"Why this price?"}}), http.StatusSeeOther)
			res = apiCall(t, p.srv.URL, "GET", fmt.Sprintf("/api/v1/carrier/filings/%d", filed.FilingID), tok, "")
			var thread struct {
				Comments []struct {
					Author, Body string
					Staff        bool
				}
			}
			if err := json.Unmarshal([]byte(res.body), &thread); err != nil || len(thread.Comments) != 1 || thread.Comments[0].Body != "Why this price?" || !thread.Comments[0].Staff {
				t.Errorf("the filing's thread by API: %+v (%v)", thread.Comments, err)
			}

			for _, bad := range []struct{ what, body, field string }{
				{"a price the form refuses", `{"fare":{"input":"-1","justification":"x"},"submit":true}`, "input"},
				{"a field the table does not know", `{"fare":{"input_price":"1"}}`, "input_price"},
				{"an empty fare", `{"fare":{}}`, "fare"},
			} {
				res := apiCall(t, p.srv.URL, "POST", path, tok, bad.body)
				wantStatus(t, bad.what, res, http.StatusUnprocessableEntity)
				if !strings.Contains(res.body, `"`+bad.field+`"`) {
					t.Errorf("%s: the answer does not name %s: %s", bad.what, bad.field, res.body)
				}
			}
			other := fmt.Sprintf("/api/v1/carrier/listings/%d/filings", orbit.ID)
			wantStatus(t, "another carrier's listing", apiCall(t, p.srv.URL, "POST", other, tok, body), http.StatusNotFound)
			wantStatus(t, "the gateway's API", apiCall(t, p.srv.URL, "GET", "/api/v1/catalogue", tok, ""), http.StatusForbidden)
			gatewayToken := apiToken(t, p.store, apitoken.ScopeCatalogueRead)
			wantStatus(t, "a gateway's token", apiCall(t, p.srv.URL, "GET", "/api/v1/carrier/listings", gatewayToken, ""), http.StatusForbidden)

			res = apiCall(t, p.srv.URL, "POST", fmt.Sprintf("/api/v1/carrier/filings/%d/withdraw", filed.FilingID), tok, "")
			wantStatus(t, "withdraw", res, http.StatusOK)
			if f, err := p.store.FindFiling(ctx, filed.FilingID, nil); err != nil || f.State != workflow.Withdrawn || f.ViaToken != name {
				t.Errorf("stored filing %+v (%v), want withdrawn, via %q", f, err, name)
			}

			// A retry under an Idempotency-Key answers the first filing.
			var first, retry carrierFiling
			res = apiCall(t, p.srv.URL, "POST", path, tok, body, "Idempotency-Key", "k-1")
			wantStatus(t, "file under a key", res, http.StatusCreated)
			_ = json.Unmarshal([]byte(res.body), &first)
			res = apiCall(t, p.srv.URL, "POST", path, tok, body, "Idempotency-Key", "k-1")
			wantStatus(t, "the retry", res, http.StatusCreated)
			_ = json.Unmarshal([]byte(res.body), &retry)
			if first.FilingID == 0 || retry.FilingID != first.FilingID || res.header.Get("Idempotent-Replayed") != "true" || first.FilingID == filed.FilingID {
				t.Errorf("filed %d, the retry answered %d (replayed %q)", first.FilingID, retry.FilingID, res.header.Get("Idempotent-Replayed"))
			}
		})
	}
}

// TestAnIdempotencyKeyFilesOnce: the same filing request sent eight times
// at once under one Idempotency-Key, half to each of two serve processes
// on one PostgreSQL, makes one filing, and every answer names it; the key
// with another body is refused, and a new key files anew.
func TestAnIdempotencyKeyFilesOnce(t *testing.T) {
	tp := newTwoProcesses(t)
	ctx := context.Background()
	tok, _ := carrierToken(t, tp.stA, "admin@nebula.example", apitoken.ScopeFaresWrite)
	mine := nebulaListing(t, tp.stA, "")
	before, err := tp.stA.FindFilings(ctx, workflow.FilingFilter{ListingID: mine.ID})
	if err != nil {
		t.Fatal(err)
	}
	path := fmt.Sprintf("/api/v1/carrier/listings/%d/filings", mine.ID)
	body := fmt.Sprintf(`{"fare":{"input":%q,"justification":"Once."},"submit":true}`, money.Micros(int64(mine.Published.Input)*9/10).String())
	var (
		wg       sync.WaitGroup
		mu       sync.Mutex
		ids      = map[int64]int{}
		replayed int
	)
	for i := range 8 {
		base := tp.srvA.URL
		if i%2 == 1 {
			base = tp.srvB.URL
		}
		wg.Add(1)
		go func() {
			defer wg.Done()
			req, _ := http.NewRequest("POST", base+path, strings.NewReader(body))
			req.Header.Set("Authorization", "Bearer "+tok)
			req.Header.Set("Content-Type", "application/json")
			req.Header.Set("Idempotency-Key", "reprice-2026-12-04")
			res, err := http.DefaultClient.Do(req)
			if err != nil {
				t.Error(err)
				return
			}
			defer res.Body.Close()
			var f carrierFiling
			_ = json.NewDecoder(res.Body).Decode(&f)
			mu.Lock()
			defer mu.Unlock()
			if res.StatusCode != http.StatusCreated {
				t.Errorf("status %d", res.StatusCode)
			}
			ids[f.FilingID]++
			if res.Header.Get("Idempotent-Replayed") == "true" {
				replayed++
			}
		}()
	}
	wg.Wait()
	after, err := tp.stA.FindFilings(ctx, workflow.FilingFilter{ListingID: mine.ID})
	if err != nil {
		t.Fatal(err)
	}
	if len(ids) != 1 || replayed != 7 || len(after) != len(before)+1 {
		t.Errorf("8 requests under one key: filings %v (%d replayed), %d filings made, want one", ids, replayed, len(after)-len(before))
	}
	other := strings.Replace(body, "Once.", "Twice.", 1)
	res := apiCall(t, tp.srvB.URL, "POST", path, tok, other, "Idempotency-Key", "reprice-2026-12-04")
	wantStatus(t, "the key with another body", res, http.StatusUnprocessableEntity)
	if !regexp.MustCompile(`Idempotency-Key`).MatchString(res.body) {
		t.Errorf("the refusal does not name the Idempotency-Key: %s", res.body)
	}
}

// TestACarrierAdminIssuesTokensForItsCarrierOnly: on the carrier's token
// page an admin issues a token (shown once) with carrier scopes only; a
// member cannot see the page; the token is listed with its last use and
// revoked from there, and stops working at once.
func TestACarrierAdminIssuesTokensForItsCarrierOnly(t *testing.T) {
	p := newPortal(t, store.SQLite)
	admin := p.client()
	admin.login("admin@nebula.example")
	page := admin.get("/carrier/tokens?carrier=nebula")
	wantStatus(t, "the admin's page", page, http.StatusOK)
	res := admin.post("/carrier/tokens?carrier=nebula", "/carrier/tokens?carrier=nebula", url.Values{"name": {"nightly repricer"}, "scope": {apitoken.ScopeCatalogueRead}})
	wantStatus(t, "a gateway scope", res, http.StatusUnprocessableEntity)
	res = admin.post("/carrier/tokens?carrier=nebula", "/carrier/tokens?carrier=nebula", url.Values{"name": {"nightly repricer"}, "scope": {apitoken.ScopeFaresRead}})
	wantStatus(t, "create", res, http.StatusSeeOther)
	page = admin.get("/carrier/tokens?carrier=nebula")
	secret := regexp.MustCompile(`id="new-token-value">(airside_[^<]+)<`).FindStringSubmatch(page.body)
	if secret == nil || !strings.Contains(page.body, "nightly repricer") {
		t.Fatalf("the new token is not shown once on the page:\n%.2000s", page.body)
	}
	if again := admin.get("/carrier/tokens?carrier=nebula"); strings.Contains(again.body, secret[1]) {
		t.Error("the secret is shown twice")
	}
	wantStatus(t, "the token reads", apiCall(t, p.srv.URL, "GET", "/api/v1/carrier/listings", secret[1], ""), http.StatusOK)

	member := p.client()
	member.login("member@nebula.example")
	if res := member.get("/carrier/tokens?carrier=nebula"); res.status != http.StatusForbidden {
		t.Errorf("a member opens the token page: %d", res.status)
	}
	orbit := p.client()
	orbit.login("admin@orbit.example")
	if res := orbit.get("/carrier/tokens?carrier=nebula"); res.status == http.StatusOK && strings.Contains(res.body, "nightly repricer") {
		t.Error("orbit's admin sees nebula's tokens")
	}

	nebula, _ := p.store.FindCarrierBySlug(context.Background(), "nebula")
	tokens, err := p.store.FindTokens(context.Background(), &nebula.ID)
	if err != nil || len(tokens) != 1 {
		t.Fatalf("nebula's tokens: %v %v", tokens, err)
	}
	revoke := fmt.Sprintf("/carrier/tokens/%d/revoke?carrier=nebula", tokens[0].ID)
	if res := orbit.post("/carrier/tokens?carrier=orbit", revoke+"&x=1", url.Values{}); res.status == http.StatusSeeOther {
		t.Error("orbit's admin revoked nebula's token")
	}
	wantStatus(t, "revoke", admin.post("/carrier/tokens?carrier=nebula", revoke, url.Values{}), http.StatusSeeOther)
	wantStatus(t, "revoked", apiCall(t, p.srv.URL, "GET", "/api/v1/carrier/listings", secret[1], ""), http.StatusUnauthorized)

	// A token whose issuer is no longer an admin opens nothing, and the
	// list says so beside it.
	ctx := context.Background()
	boss, _ := p.store.FindUserByEmail(ctx, "admin@nebula.example")
	second, _ := p.store.FindUserByEmail(ctx, "member@nebula.example")
	if err := p.store.SetMemberRole(ctx, boss.ID, nebula.ID, second.ID, account.CarrierAdmin); err != nil {
		t.Fatal(err)
	}
	theirs, _ := carrierToken(t, p.store, "member@nebula.example", apitoken.ScopeFaresRead)
	wantStatus(t, "the second admin's token", apiCall(t, p.srv.URL, "GET", "/api/v1/carrier/listings", theirs, ""), http.StatusOK)
	if strings.Contains(admin.get("/carrier/tokens?carrier=nebula").body, "Opens nothing") {
		t.Error("a working token is listed as opening nothing")
	}
	if err := p.store.SetMemberRole(ctx, boss.ID, nebula.ID, second.ID, account.CarrierMember); err != nil {
		t.Fatal(err)
	}
	wantStatus(t, "the demoted admin's token", apiCall(t, p.srv.URL, "GET", "/api/v1/carrier/listings", theirs, ""), http.StatusForbidden)
	if body := admin.get("/carrier/tokens?carrier=nebula").body; !strings.Contains(body, "Opens nothing: The person who issued this token is no longer an admin") {
		t.Errorf("the list does not say the demoted admin's token opens nothing:\n%.3000s", body)
	}
}

// TestADryRunAnswersWhatThePreviewPageShows: the carrier API's preview of
// a cheaper fare gives the preview page's figures for the same fare (the
// share and, scenario by scenario, the rank and the score, and the sets of
// preferences the requests carried and the parts from API projects whose
// rates routing learned apart, each with where the fare stands), and files
// nothing.
func TestADryRunAnswersWhatThePreviewPageShows(t *testing.T) {
	p := newPortal(t, store.SQLite)
	ctx := context.Background()
	tok, _ := carrierToken(t, p.store, "admin@nebula.example", apitoken.ScopeFaresRead)
	mine := nebulaListing(t, p.store, "kimi-k2.5")
	minute := p.server.Now().UTC().Truncate(time.Minute).Add(-10 * time.Minute).Format(time.RFC3339)
	demand := fmt.Sprintf(`{"buckets":[],"demand":[{"model":"kimi-k2.5","workload":"general","minute":%q,"source":"gw","requests":2000,"promptTokens":2000000,
		"asked":{"prefs:zdr":300,"prefs:order:orbit":500,"project:prj-3f9a2c1b04d2":600}}]}`, minute)
	metrics := apiToken(t, p.store, apitoken.ScopeMetricsWrite)
	wantStatus(t, "post demand with preferences", apiCall(t, p.srv.URL, "POST", "/api/v1/metrics", metrics, demand), http.StatusAccepted)
	// The project's minutes on the listing: routing learned its rates
	// apart (none of its input cached), so its part is elected on them.
	projects := fmt.Sprintf(`{"projects":[{"project":"prj-3f9a2c1b04d2","listingId":%d,"minute":%q,"source":"gw","answers":40,"inputTokens":400000,"cachedInputTokens":0,"outputTokens":8000}]}`,
		mine.ID, minute)
	wantStatus(t, "post the project's minutes", apiCall(t, p.srv.URL, "POST", "/api/v1/metrics/projects", metrics, projects), http.StatusAccepted)
	before, _ := p.store.FindFilings(ctx, workflow.FilingFilter{ListingID: mine.ID})
	lower := money.Micros(int64(mine.Published.Input) / 3).String()
	res := apiCall(t, p.srv.URL, "POST", fmt.Sprintf("/api/v1/carrier/listings/%d/preview", mine.ID), tok, fmt.Sprintf(`{"fare":{"input":%q}}`, lower))
	wantStatus(t, "dry run", res, http.StatusOK)
	var dry struct {
		Scenarios []struct {
			Key, Name string
			Projects  []struct {
				Part   float64
				Holder string
			}
			Rank, Of int
			Score    float64
			Eligible bool
			Sets     []struct {
				Key, Words, Holder     string
				Part                   float64
				Eligible, OrderDecides bool
				Excluded               []string
			}
		}
		Share struct{ Total float64 }
	}
	if err := json.Unmarshal([]byte(res.body), &dry); err != nil {
		t.Fatal(err)
	}
	member := p.client()
	member.login("member@nebula.example")
	path := fmt.Sprintf("/listings/%d/preview", mine.ID)
	page := member.post(path, path, url.Values{"input": {lower}})
	wantStatus(t, "the preview page", page, http.StatusOK)
	if len(dry.Scenarios) < 4 {
		t.Fatalf("%d scenarios in the dry run", len(dry.Scenarios))
	}
	share := regexp.MustCompile(`data-testid="share-total">([^<]+)<`).FindStringSubmatch(page.body)
	if share == nil || share[1] != templates.Pct(dry.Share.Total*100) {
		t.Errorf("the page's share %v, the dry run's %s", share, templates.Pct(dry.Share.Total*100))
	}
	for _, sc := range dry.Scenarios {
		row := regexp.MustCompile(`(?s)data-testid="scenario-` + sc.Key + `">(.*?)</tr>`).FindStringSubmatch(page.body)
		if row == nil {
			t.Errorf("no row for %s on the page", sc.Key)
			continue
		}
		sets := map[string]string{}
		for _, set := range sc.Sets {
			sets[set.Key] = set.Words
			if set.Key == "prefs:order:orbit" && (!set.OrderDecides || set.Holder == "" || !set.Eligible) {
				t.Errorf("%s: orbit's order is not said to decide: %+v", sc.Key, set)
			}
			if set.Key == "prefs:zdr" && (set.Eligible || len(set.Excluded) == 0) {
				t.Errorf("%s: nebula declares no zero data retention, yet %+v", sc.Key, set)
			}
			name := regexp.QuoteMeta(fmt.Sprintf("the %s asking for %s</th>", templates.Pct(100*set.Part), set.Words))
			if !regexp.MustCompile(name).MatchString(page.body) {
				t.Errorf("%s: the page has no row for the set %s (%q)", sc.Key, set.Key, set.Words)
			}
		}
		if wantSets := sc.Key == "small-auto" || sc.Key == "large-auto"; wantSets != (len(sets) == 2) {
			t.Errorf("%s: sets %v", sc.Key, sets)
		}
		// The project's requests (small one-shots, as the row's prompts
		// are) are a part of their own, on the page by the same name.
		if wantProjects := sc.Key == "small-auto"; wantProjects != (len(sc.Projects) == 1) {
			t.Errorf("%s: project parts %+v", sc.Key, sc.Projects)
		}
		for _, pp := range sc.Projects {
			name := fmt.Sprintf("%s: the %s from projects routing learned cache rates of apart", sc.Name, templates.Pct(100*pp.Part))
			if pp.Part <= 0 || pp.Holder == "" || !strings.Contains(page.body, html.EscapeString(name)+"</th>") {
				t.Errorf("%s: the project part %+v, or no row %q on the page", sc.Key, pp, name)
			}
		}
		if !sc.Eligible {
			continue
		}
		if want := fmt.Sprintf("%d of %d", sc.Rank, sc.Of); !strings.Contains(row[1], want) || !strings.Contains(row[1], templates.Score(sc.Score)) {
			t.Errorf("%s: the dry run says rank %s, score %s; the page's row: %s", sc.Key, want, templates.Score(sc.Score), row[1])
		}
	}
	if after, _ := p.store.FindFilings(ctx, workflow.FilingFilter{ListingID: mine.ID}); len(after) != len(before) {
		t.Errorf("a dry run filed: %d filings, %d before", len(after), len(before))
	}
}

// TestACarrierReadsItsTrafficByAPI: the traffic a gateway reported for a
// carrier's listing reads back by the carrier's token, hour by hour, as
// JSON and as CSV; another carrier's token reads none of it.
func TestACarrierReadsItsTrafficByAPI(t *testing.T) {
	p := newPortal(t, store.SQLite)
	minute := time.Now().UTC().Truncate(time.Minute).Add(-10 * time.Minute)
	body := fmt.Sprintf(`{"buckets":[{"listing":"nebula/kimi-k2.5","minute":%q,"requests":120,"errors":12,"ttftMsSum":43200,"outputTokens":30000,"durationMs":400000,"inputTokens":100000,"cachedInputTokens":1000,"routed":100,"capped":3}]}`,
		minute.Format(time.RFC3339))
	wantStatus(t, "metrics", apiCall(t, p.srv.URL, "POST", "/api/v1/metrics", apiToken(t, p.store, apitoken.ScopeMetricsWrite), body), http.StatusAccepted)
	kimi := nebulaListing(t, p.store, "kimi-k2.5")
	tok, _ := carrierToken(t, p.store, "admin@nebula.example", apitoken.ScopeTrafficRead)
	since := minute.Truncate(time.Hour).Add(-time.Hour).Format(time.RFC3339)
	res := apiCall(t, p.srv.URL, "GET", fmt.Sprintf("/api/v1/carrier/traffic?listingId=%d&since=%s", kimi.ID, since), tok, "")
	wantStatus(t, "traffic", res, http.StatusOK)
	var got struct {
		Hours []struct {
			ListingID                                int64
			Requests, Errors, Routed, Capped, Pinned int64
		}
	}
	if err := json.Unmarshal([]byte(res.body), &got); err != nil {
		t.Fatal(err)
	}
	var requests, errs, routed, capped int64
	for _, h := range got.Hours {
		if h.ListingID != kimi.ID {
			t.Errorf("an hour of listing %d", h.ListingID)
		}
		requests, errs, routed, capped = requests+h.Requests, errs+h.Errors, routed+h.Routed, capped+h.Capped
	}
	if requests != 120 || errs != 12 || routed != 100 || capped != 3 {
		t.Errorf("read back %d requests, %d errors, %d routed, %d capped; want 120, 12, 100, 3", requests, errs, routed, capped)
	}
	csvRes := apiCall(t, p.srv.URL, "GET", fmt.Sprintf("/api/v1/carrier/traffic?listingId=%d&since=%s&format=csv", kimi.ID, since), tok, "")
	wantStatus(t, "traffic as CSV", csvRes, http.StatusOK)
	lines := strings.Split(strings.TrimSpace(csvRes.body), "\n")
	if len(lines) != 1+len(got.Hours) || !strings.HasPrefix(lines[0], "hour,listing_id,model,requests") || !strings.Contains(csvRes.body, ",kimi-k2.5,120,12,") {
		t.Errorf("the CSV:\n%s", csvRes.body)
	}
	orbit, _ := carrierToken(t, p.store, "admin@orbit.example", apitoken.ScopeTrafficRead)
	wantStatus(t, "another carrier's listing", apiCall(t, p.srv.URL, "GET", fmt.Sprintf("/api/v1/carrier/traffic?listingId=%d", kimi.ID), orbit, ""), http.StatusNotFound)
	wantStatus(t, "over a month", apiCall(t, p.srv.URL, "GET", "/api/v1/carrier/traffic?since=2026-01-01T00:00:00Z", tok, ""), http.StatusUnprocessableEntity)
}

// TestACarrierReadsItsEarningsAndStatementByAPI: what a reported hour
// earned reads back by the carrier's token as the fare in force makes it
// (worked out here from the fare's prices, exactly), per day and in the
// month's statement, JSON and CSV alike; another carrier's token reads
// none of it.
func TestACarrierReadsItsEarningsAndStatementByAPI(t *testing.T) {
	p := newPortal(t, store.SQLite)
	// The demo's fares were published as it was seeded, after the hour
	// reported began: in force from two days before, they bill it.
	if err := p.store.BackdateSeedFares(context.Background(), time.Now().UTC().AddDate(0, 0, -2)); err != nil {
		t.Fatal(err)
	}
	minute := time.Now().UTC().Truncate(time.Minute).Add(-10 * time.Minute)
	body := fmt.Sprintf(`{"buckets":[{"listing":"nebula/kimi-k2.5","minute":%q,"requests":120,"errors":2,"ttftMsSum":43200,"outputTokens":30000,"durationMs":400000,"inputTokens":100000,"cachedInputTokens":1000,"routed":118}]}`,
		minute.Format(time.RFC3339))
	wantStatus(t, "metrics", apiCall(t, p.srv.URL, "POST", "/api/v1/metrics", apiToken(t, p.store, apitoken.ScopeMetricsWrite), body), http.StatusAccepted)
	kimi := nebulaListing(t, p.store, "kimi-k2.5")
	// The money, by hand: tokens times the prices in force (per million),
	// then the discount off what the developer pays, then the landing fee.
	prices := kimi.Published.PricesAt(minute, 100000/120)
	filed := new(big.Rat).SetFrac64(99000*int64(prices.Input)+1000*int64(prices.CachedInput)+30000*int64(prices.Output), 1_000_000*1_000_000)
	paid := new(big.Rat).Mul(filed, big.NewRat(10000-int64(kimi.Published.Discount), 10000))
	kept := new(big.Rat).Mul(paid, big.NewRat(10000-int64(kimi.Published.LandingFee), 10000))
	wantFiled, wantKept := filed.FloatString(6), kept.FloatString(6)

	tok, _ := carrierToken(t, p.store, "admin@nebula.example", apitoken.ScopeTrafficRead)
	day := minute.Truncate(24 * time.Hour)
	res := apiCall(t, p.srv.URL, "GET", fmt.Sprintf("/api/v1/carrier/earnings?listingId=%d&since=%s", kimi.ID, day.Format(time.RFC3339)), tok, "")
	wantStatus(t, "earnings", res, http.StatusOK)
	var got struct {
		Period  string
		Periods []struct {
			Start                      time.Time
			ListingID, Requests        int64
			FiledUsd, KeptUsd          string
			DiscountUsd, LandingFeeUsd string
		}
		Total struct{ FiledUsd, KeptUsd string }
	}
	if err := json.Unmarshal([]byte(res.body), &got); err != nil {
		t.Fatal(err)
	}
	if got.Period != "day" || len(got.Periods) != 1 || !got.Periods[0].Start.Equal(day) || got.Periods[0].Requests != 120 {
		t.Fatalf("the earnings: %s", res.body)
	}
	if e := got.Periods[0]; e.FiledUsd != wantFiled || e.KeptUsd != wantKept || got.Total.KeptUsd != wantKept {
		t.Errorf("the day earned %s filed, %s kept (total %s); by hand %s and %s", e.FiledUsd, e.KeptUsd, got.Total.KeptUsd, wantFiled, wantKept)
	}
	csvRes := apiCall(t, p.srv.URL, "GET", fmt.Sprintf("/api/v1/carrier/earnings?listingId=%d&since=%s&period=hour&format=csv", kimi.ID, day.Format(time.RFC3339)), tok, "")
	wantStatus(t, "earnings as CSV", csvRes, http.StatusOK)
	if lines := strings.Split(strings.TrimSpace(csvRes.body), "\n"); len(lines) != 2 || !strings.HasPrefix(lines[0], "start,listing_id,model,requests,unpriced") ||
		!strings.HasSuffix(lines[1], ","+wantKept) || !strings.Contains(lines[1], minute.Truncate(time.Hour).Format(time.RFC3339)) {
		t.Errorf("the hourly CSV:\n%s", csvRes.body)
	}

	month := minute.Format("2006-01")
	st := apiCall(t, p.srv.URL, "GET", "/api/v1/carrier/statements/"+month, tok, "")
	wantStatus(t, "the statement", st, http.StatusOK)
	var doc struct {
		Month       string
		Provisional bool
		Lines       []struct {
			ListingID         int64
			Requests          int64
			FiledUsd, KeptUsd string
		}
		Total, Net struct{ KeptUsd string }
	}
	if err := json.Unmarshal([]byte(st.body), &doc); err != nil {
		t.Fatal(err)
	}
	found := false
	for _, l := range doc.Lines {
		if l.ListingID == kimi.ID {
			found = l.Requests == 120 && l.FiledUsd == wantFiled && l.KeptUsd == wantKept
		}
	}
	if doc.Month != month || !doc.Provisional || !found || doc.Total.KeptUsd != wantKept || doc.Net.KeptUsd != wantKept {
		t.Errorf("the statement (by hand %s filed, %s kept): %s", wantFiled, wantKept, st.body)
	}
	stCSV := apiCall(t, p.srv.URL, "GET", "/api/v1/carrier/statements/"+month+"?format=csv", tok, "")
	wantStatus(t, "the statement as CSV", stCSV, http.StatusOK)
	if !strings.Contains(stCSV.body, fmt.Sprintf(",kimi-k2.5,%d,120,", kimi.ID)) || !strings.Contains(stCSV.body, wantKept+",provisional") {
		t.Errorf("the statement's CSV:\n%s", stCSV.body)
	}

	orbit, _ := carrierToken(t, p.store, "admin@orbit.example", apitoken.ScopeTrafficRead)
	wantStatus(t, "another carrier's listing", apiCall(t, p.srv.URL, "GET", fmt.Sprintf("/api/v1/carrier/earnings?listingId=%d", kimi.ID), orbit, ""), http.StatusNotFound)
	if other := apiCall(t, p.srv.URL, "GET", "/api/v1/carrier/statements/"+month, orbit, ""); strings.Contains(other.body, fmt.Sprintf(`"listingId":%d,`, kimi.ID)) {
		t.Errorf("Orbit's statement carries Nebula's listing: %s", other.body)
	}
	wantStatus(t, "a malformed month", apiCall(t, p.srv.URL, "GET", "/api/v1/carrier/statements/november", tok, ""), http.StatusNotFound)
	// Thirteen months are readable: this one and the twelve before it.
	thisMonth := time.Date(minute.Year(), minute.Month(), 1, 0, 0, 0, 0, time.UTC)
	wantStatus(t, "twelve months back", apiCall(t, p.srv.URL, "GET", "/api/v1/carrier/statements/"+thisMonth.AddDate(0, -12, 0).Format("2006-01"), tok, ""), http.StatusOK)
	wantStatus(t, "thirteen months back", apiCall(t, p.srv.URL, "GET", "/api/v1/carrier/statements/"+thisMonth.AddDate(0, -13, 0).Format("2006-01"), tok, ""), http.StatusNotFound)
	wantStatus(t, "next month", apiCall(t, p.srv.URL, "GET", "/api/v1/carrier/statements/"+thisMonth.AddDate(0, 1, 0).Format("2006-01"), tok, ""), http.StatusNotFound)
	wantStatus(t, "an unknown period", apiCall(t, p.srv.URL, "GET", "/api/v1/carrier/earnings?period=week", tok, ""), http.StatusUnprocessableEntity)
	wantStatus(t, "hours over a month", apiCall(t, p.srv.URL, "GET", "/api/v1/carrier/earnings?period=hour&since=2026-01-01T00:00:00Z", tok, ""), http.StatusUnprocessableEntity)
}

// TestACarrierFilesAnEndpointByAPI: an endpoints:write token files a new
// endpoint for its listing, reviewed as the page's form files it, with
// preflight queued; the preflight reads back with the key's hint and
// never the key; a refused field is named as the API names it; a token
// without the scope, or another carrier's, cannot.
func TestACarrierFilesAnEndpointByAPI(t *testing.T) {
	p := newPortal(t, store.SQLite)
	kimi := nebulaListing(t, p.store, "kimi-k2.5")
	tok, name := carrierToken(t, p.store, "admin@nebula.example", apitoken.ScopeEndpointsWrite, apitoken.ScopeFaresRead)
	const key = "sk-nebula-endpoint-0123456789"
	path := fmt.Sprintf("/api/v1/carrier/listings/%d/endpoint", kimi.ID)
	body := `{"baseUrl":"https://api2.nebula.example/v1","upstreamModel":"kimi-k2.5-fp8","apiKey":"` + key + `","justification":"New region"}`
	res := apiCall(t, p.srv.URL, "POST", path, tok, body)
	wantStatus(t, "file an endpoint", res, http.StatusCreated)
	if strings.Contains(res.body, key) {
		t.Errorf("the answer carries the key: %s", res.body)
	}
	var filed struct {
		FilingID int64
		State    string
	}
	if err := json.Unmarshal([]byte(res.body), &filed); err != nil || filed.FilingID == 0 || filed.State != "submitted" {
		t.Fatalf("the endpoint filing: %s (%v)", res.body, err)
	}
	f, err := p.store.FindFiling(context.Background(), filed.FilingID, nil)
	if err != nil {
		t.Fatal(err)
	}
	if f.ListingID != kimi.ID || f.ViaToken != name {
		t.Errorf("filing %d is on listing %d via %q; want %d via %q", f.ID, f.ListingID, f.ViaToken, kimi.ID, name)
	}

	pf := apiCall(t, p.srv.URL, "GET", fmt.Sprintf("/api/v1/carrier/listings/%d/preflight", kimi.ID), tok, "")
	wantStatus(t, "the preflight", pf, http.StatusOK)
	var got struct {
		Endpoint struct{ BaseURL, UpstreamModel, KeyHint string }
		Run      *struct{ ID int64 }
	}
	if err := json.Unmarshal([]byte(pf.body), &got); err != nil {
		t.Fatal(err)
	}
	if got.Endpoint.BaseURL != "https://api2.nebula.example/v1" || got.Endpoint.UpstreamModel != "kimi-k2.5-fp8" || got.Endpoint.KeyHint == "" ||
		got.Run == nil || strings.Contains(pf.body, key) {
		t.Errorf("the preflight reads %s", pf.body)
	}

	bad := apiCall(t, p.srv.URL, "POST", path, tok, `{"baseUrl":"ftp://x","upstreamModel":"a b","apiKey":"short"}`)
	wantStatus(t, "a bad endpoint", bad, http.StatusUnprocessableEntity)
	for _, field := range []string{`"baseUrl"`, `"upstreamModel"`, `"apiKey"`} {
		if !strings.Contains(bad.body, field) {
			t.Errorf("the refusal does not name %s: %s", field, bad.body)
		}
	}
	wantStatus(t, "an unknown field", apiCall(t, p.srv.URL, "POST", path, tok, `{"url":"https://x.example"}`), http.StatusUnprocessableEntity)
	readOnly, _ := carrierToken(t, p.store, "admin@nebula.example", apitoken.ScopeFaresRead)
	wantStatus(t, "without endpoints:write", apiCall(t, p.srv.URL, "POST", path, readOnly, body), http.StatusForbidden)
	orbit, _ := carrierToken(t, p.store, "admin@orbit.example", apitoken.ScopeEndpointsWrite, apitoken.ScopeFaresRead)
	wantStatus(t, "another carrier's listing", apiCall(t, p.srv.URL, "POST", path, orbit, body), http.StatusNotFound)
	wantStatus(t, "another carrier's preflight", apiCall(t, p.srv.URL, "GET", fmt.Sprintf("/api/v1/carrier/listings/%d/preflight", kimi.ID), orbit, ""), http.StatusNotFound)
}
