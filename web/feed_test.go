package web_test

import (
	"context"
	"encoding/json"
	"fmt"
	"io"
	"log/slog"
	"math/big"
	"net/http"
	"net/http/httptest"
	"net/url"
	"slices"
	"strings"
	"sync"
	"testing"

	"github.com/airside/airside/cmd/airside/wire"
	"github.com/airside/airside/internal/alerting"
	"github.com/airside/airside/internal/apitoken"
	"github.com/airside/airside/internal/catalogue"
	"github.com/airside/airside/internal/demo"
	"github.com/airside/airside/internal/export"
	"github.com/airside/airside/internal/feed"
	"github.com/airside/airside/internal/money"
	"github.com/airside/airside/internal/store"
	"github.com/airside/airside/internal/store/storetest"
	"github.com/airside/airside/internal/workflow"
)

// perToken writes a per-million price as OpenRouter's format wants it: USD
// per token, exactly.
func perToken(m money.Micros) string {
	s := new(big.Rat).SetFrac64(int64(m), 1_000_000_000_000).FloatString(18)
	return strings.TrimSuffix(strings.TrimRight(s, "0"), ".")
}

// feedModelOf is a listing's published fare as its carrier's feed would
// give it (export.ProviderFeed, the demo's own feed writer), with another
// input price.
func feedModelOf(l *catalogue.Listing, input money.Micros) feed.Model {
	m := export.ProviderFeed([]catalogue.Listing{*l}).Data[0]
	m.ID = "provider/" + m.ID
	m.Pricing.Prompt = perToken(input)
	return m
}

// feedServer serves a provider feed the test changes, with an ETag.
type feedServer struct {
	mu      sync.Mutex
	doc     feed.Document
	version int
	status  int
}

func (f *feedServer) set(doc feed.Document) {
	f.mu.Lock()
	defer f.mu.Unlock()
	f.doc, f.version, f.status = doc, f.version+1, 0
}

func (f *feedServer) ServeHTTP(w http.ResponseWriter, r *http.Request) {
	f.mu.Lock()
	defer f.mu.Unlock()
	if f.status != 0 {
		http.Error(w, "down", f.status)
		return
	}
	etag := fmt.Sprintf(`"v%d"`, f.version)
	if r.Header.Get("If-None-Match") == etag {
		w.WriteHeader(http.StatusNotModified)
		return
	}
	w.Header().Set("ETag", etag)
	w.Header().Set("Content-Type", "application/json")
	_ = json.NewEncoder(w).Encode(f.doc)
}

// feedPortal is the demo portal on a fresh database that may read feeds
// served on loopback (a private address, as the demo allows).
func feedPortal(t *testing.T, d store.Dialect) *testPortal {
	t.Helper()
	st := storetest.Open(t, d)
	if _, err := demo.Seed(context.Background(), st); err != nil {
		t.Fatal(err)
	}
	server := wire.Portal(st, wire.Config{Log: slog.New(slog.NewTextHandler(io.Discard, nil)), AllowPrivate: true})
	withoutSafeguards(server)
	srv := httptest.NewServer(server.Handler())
	t.Cleanup(srv.Close)
	return &testPortal{t: t, srv: srv, store: st, server: server}
}

// TestAProviderFeedBecomesFilings: Nebula's admin sets its provider feed
// (OpenRouter's format, served on loopback, which this portal is allowed
// to reach); reading it files the one model whose price moved, with the
// right diff and submitted at once, and says which feed model it has no
// listing for; reading the same feed again files nothing more; approved,
// the fare is what the OpenRouter export shows, to the last digit; a
// per-million price written where OpenRouter wants per token is refused
// with a sentence; a feed that fails is said on the page, in the inbox
// and to the webhook (once), files nothing, and is said again when back.
func TestAProviderFeedBecomesFilings(t *testing.T) {
	p := feedPortal(t, store.SQLite)
	st, srv := p.store, p.srv
	ctx := context.Background()

	ls, err := st.FindListings(ctx, catalogue.ListingFilter{Published: true})
	if err != nil {
		t.Fatal(err)
	}
	var mine *catalogue.Listing
	for i := range ls {
		l := &ls[i]
		if l.CarrierSlug == "nebula" && len(l.Published.Tiers) == 0 && l.Published.TimeBased == nil {
			mine = l
			break
		}
	}
	if mine == nil {
		t.Fatal("no nebula listing without tiers or schedule in the demo")
	}
	// No discount: what developers pay (the export) is then the filed
	// price (the feed's), and the round trip is exact.
	undiscounted := *mine.Published
	undiscounted.Discount = 0
	if _, err := st.PublishSeedFare(ctx, &undiscounted); err != nil {
		t.Fatal(err)
	}
	if mine, err = st.FindListing(ctx, mine.ID, nil); err != nil {
		t.Fatal(err)
	}
	lower := money.Micros(int64(mine.Published.Input) * 9 / 10)
	fs := &feedServer{}
	fs.set(feed.Document{Data: []feed.Model{feedModelOf(mine, lower),
		{ID: "acme/not-listed", Pricing: feed.Pricing{Prompt: "0.000001", Completion: "0.000002"}}}})
	feedSrv := httptest.NewServer(fs)
	t.Cleanup(feedSrv.Close)

	admin := p.client()
	admin.login("admin@nebula.example")
	page := "/carrier/feed?carrier=nebula"
	wantStatus(t, "set", admin.post(page, page, url.Values{"url": {feedSrv.URL + "/models"}, "mode": {"submit"}}), http.StatusSeeOther)
	filingsOf := func() []workflow.Filing {
		fs, err := st.FindFilings(ctx, workflow.FilingFilter{ListingID: mine.ID})
		if err != nil {
			t.Fatal(err)
		}
		return fs
	}
	before := len(filingsOf())
	wantStatus(t, "read", admin.post(page, "/carrier/feed/read?carrier=nebula", url.Values{}), http.StatusSeeOther)
	after := filingsOf()
	if len(after) != before+1 {
		t.Fatalf("%d filings after the read, want %d", len(after), before+1)
	}
	filed := after[0]
	for _, f := range after {
		if f.ID > filed.ID {
			filed = f
		}
	}
	full, err := st.FindFiling(ctx, filed.ID, nil)
	if err != nil {
		t.Fatal(err)
	}
	changes := full.Changes()
	if full.State != workflow.Submitted || full.ViaToken != feed.Via || len(changes) != 1 || changes[0].Field != "input" {
		t.Errorf("the feed's filing: %s via %q, changes %+v; want submitted, via the feed, the input price only", full.State, full.ViaToken, changes)
	}
	body := admin.get(page).body
	for _, want := range []string{fmt.Sprintf("filing #%d submitted for review", filed.ID), "you have no listing of not-listed"} {
		if !strings.Contains(body, want) {
			t.Errorf("the feed page does not say %q", want)
		}
	}

	// The same feed again: nothing more is filed.
	wantStatus(t, "read again", admin.post(page, "/carrier/feed/read?carrier=nebula", url.Values{}), http.StatusSeeOther)
	if n := len(filingsOf()); n != before+1 {
		t.Errorf("reading the same feed again: %d filings, want %d", n, before+1)
	}

	// Approved and published: the export gives back the feed's prices.
	reviewer := p.client()
	reviewer.login("reviewer@airside.example")
	fp := fmt.Sprintf("/filings/%d", filed.ID)
	wantStatus(t, "approve", reviewer.post(fp, fp+"/approve", url.Values{}), http.StatusSeeOther)
	// Routed: the catalogue the gateway reads carries it.
	var cat struct {
		Listings []struct {
			ListingID int64 `json:"listingId"`
			Fare      struct {
				InputPrice string `json:"inputPrice"`
			} `json:"fare"`
		} `json:"listings"`
	}
	catRes := apiCall(t, srv.URL, "GET", "/api/v1/catalogue", apiToken(t, st, apitoken.ScopeCatalogueRead), "")
	if err := json.Unmarshal([]byte(catRes.body), &cat); err != nil {
		t.Fatal(err)
	}
	routed := false
	for _, l := range cat.Listings {
		if got, err := money.ParsePrice(l.Fare.InputPrice); l.ListingID == mine.ID && err == nil && got == lower {
			routed = true
		}
	}
	if !routed {
		t.Errorf("the catalogue does not route %d at the feed's input price %s", mine.ID, lower)
	}
	var exported struct {
		Data []struct {
			ID        string
			Endpoints []struct {
				Tag     string
				Pricing struct{ Prompt, Completion string }
			}
		}
	}
	res := admin.get("/exports/openrouter/models.json")
	if err := json.Unmarshal([]byte(res.body), &exported); err != nil {
		t.Fatalf("export: %v\n%.300s", err, res.body)
	}
	found := false
	for _, m := range exported.Data {
		for _, e := range m.Endpoints {
			if strings.HasPrefix(e.Tag, "nebula") && strings.HasSuffix(m.ID, mine.Model.Slug) {
				found = true
				if e.Pricing.Prompt != perToken(lower) || e.Pricing.Completion != perToken(mine.Published.Output) {
					t.Errorf("exported %s / %s, the feed gave %s / %s", e.Pricing.Prompt, e.Pricing.Completion, perToken(lower), perToken(mine.Published.Output))
				}
			}
		}
	}
	if !found {
		t.Errorf("the export has no nebula endpoint of %s:\n%.500s", mine.Model.Slug, res.body)
	}

	// Per million where per token is meant: refused, with a sentence.
	mistaken := feedModelOf(mine, lower)
	mistaken.Pricing.Prompt = lower.String() // "0.2268": USD per million, given as per token
	fs.set(feed.Document{Data: []feed.Model{mistaken}})
	count := len(filingsOf())
	wantStatus(t, "read the mistake", admin.post(page, "/carrier/feed/read?carrier=nebula", url.Values{}), http.StatusSeeOther)
	if body := admin.get(page).body; !strings.Contains(body, "1,000,000 times") || !strings.Contains(body, "nothing was filed") {
		t.Errorf("the unit mistake is not said on the page:\n%.3000s", body)
	}
	if n := len(filingsOf()); n != count {
		t.Errorf("a unit mistake was filed (%d filings, %d before)", n, count)
	}

	// A feed that fails: said on the page, in the inbox and to the
	// carrier's webhook, and nothing filed.
	nebula := mine.CarrierID
	nebulaAdmin, err := st.FindUserByEmail(ctx, "admin@nebula.example")
	if err != nil {
		t.Fatal(err)
	}
	if err := st.SetWebhook(ctx, nebulaAdmin.ID, nebula, "https://hooks.example/airside", "sealed", 0); err != nil {
		t.Fatal(err)
	}
	fs.mu.Lock()
	fs.status = http.StatusInternalServerError
	fs.mu.Unlock()
	wantStatus(t, "read the failing feed", admin.post(page, "/carrier/feed/read?carrier=nebula", url.Values{}), http.StatusSeeOther)
	if body := admin.get(page).body; !strings.Contains(body, `data-testid="feed-failing"`) || !strings.Contains(body, "500") {
		t.Errorf("the failing feed is not said on the page")
	}
	member, _ := st.FindUserByEmail(ctx, "member@nebula.example")
	notes, _ := st.FindNotifications(ctx, member.ID, 20)
	told := false
	for _, n := range notes {
		told = told || strings.Contains(n.Message, "provider feed stopped working")
	}
	if !told {
		t.Errorf("the carrier's member was not told the feed failed: %+v", notes)
	}
	if n := len(filingsOf()); n != count {
		t.Errorf("a failing feed filed (%d filings, %d before)", n, count)
	}
	// Failing twice is one event; read again, the feed says so once.
	wantStatus(t, "read the failing feed again", admin.post(page, "/carrier/feed/read?carrier=nebula", url.Values{}), http.StatusSeeOther)
	fs.mu.Lock()
	fs.status = 0
	fs.mu.Unlock()
	wantStatus(t, "read the feed back", admin.post(page, "/carrier/feed/read?carrier=nebula", url.Values{}), http.StatusSeeOther)
	if body := admin.get(page).body; strings.Contains(body, `data-testid="feed-failing"`) {
		t.Errorf("the feed back still reads as failing")
	}
	deliveries, err := st.FindDeliveries(ctx, nebula, 20)
	if err != nil {
		t.Fatal(err)
	}
	var events []string
	for _, d := range deliveries {
		if strings.HasPrefix(d.Event, "feed.") {
			events = append(events, d.Event)
			if !strings.Contains(d.Body, feedSrv.URL) {
				t.Errorf("the %s event does not name the feed: %s", d.Event, d.Body)
			}
		}
	}
	slices.Sort(events)
	if !slices.Equal(events, []string{alerting.EventFeedFailing, alerting.EventFeedRecovered}) {
		t.Errorf("webhook events %v; want one feed.failing and one feed.recovered", events)
	}
}

// TestAFeedModelFilesToTheListingTheCarrierChose: a feed model whose name
// matches none of the carrier's listings is listed on the feed page with
// a choice of listing; choosing another carrier's listing is refused next
// to the field with the choice kept; choosing one of its own files the
// model's fare to it at once, and "not imported" keeps another model out.
// The choice is stored (both databases) and shown again.
func TestAFeedModelFilesToTheListingTheCarrierChose(t *testing.T) {
	for _, d := range []store.Dialect{store.SQLite, store.Postgres} {
		t.Run(string(d), func(t *testing.T) {
			p := feedPortal(t, d)
			st := p.store
			ctx := context.Background()
			ls, err := st.FindListings(ctx, catalogue.ListingFilter{Published: true})
			if err != nil {
				t.Fatal(err)
			}
			var mine, theirs *catalogue.Listing
			for i := range ls {
				l := &ls[i]
				switch {
				case mine == nil && l.CarrierSlug == "nebula" && len(l.Published.Tiers) == 0 && l.Published.TimeBased == nil:
					mine = l
				case theirs == nil && l.CarrierSlug == "orbit":
					theirs = l
				}
			}
			if mine == nil || theirs == nil {
				t.Fatal("the demo lacks a plain nebula listing or an orbit one")
			}
			lower := money.Micros(int64(mine.Published.Input) * 9 / 10)
			special := feedModelOf(mine, lower)
			special.ID = "nebula/special-edition" // no listing of this name
			fs := &feedServer{}
			fs.set(feed.Document{Data: []feed.Model{special, {ID: "nebula/other", Pricing: feed.Pricing{Prompt: "0.000001", Completion: "0.000002"}}}})
			feedSrv := httptest.NewServer(fs)
			t.Cleanup(feedSrv.Close)

			admin := p.client()
			admin.login("admin@nebula.example")
			page := "/carrier/feed?carrier=nebula"
			wantStatus(t, "set", admin.post(page, page, url.Values{"url": {feedSrv.URL + "/models"}, "mode": {"submit"}}), http.StatusSeeOther)
			wantStatus(t, "read", admin.post(page, "/carrier/feed/read?carrier=nebula", url.Values{}), http.StatusSeeOther)
			body := admin.get(page).body
			if !strings.Contains(body, `data-testid="map-nebula/special-edition"`) || !strings.Contains(body, "you have no listing of special-edition") {
				t.Fatalf("the page offers no choice for the unmatched model:\n%.3000s", body)
			}
			filings := func() int {
				fs, err := st.FindFilings(ctx, workflow.FilingFilter{ListingID: mine.ID})
				if err != nil {
					t.Fatal(err)
				}
				return len(fs)
			}
			before := filings()

			// Another carrier's listing: refused at the field, the choice kept.
			wrong := admin.post(page, "/carrier/feed/mapping?carrier=nebula", url.Values{
				feed.MappingField(special.ID): {fmt.Sprint(theirs.ID)}, feed.MappingField("nebula/other"): {"none"}})
			wantStatus(t, "another carrier's listing", wrong, http.StatusUnprocessableEntity)
			if !strings.Contains(wrong.body, "Choose one of your listings") || !strings.Contains(wrong.body, `<option value="none" selected>`) {
				t.Errorf("the refusal does not say why next to the field, or loses what was chosen:\n%.4000s", wrong.body)
			}
			if n := filings(); n != before {
				t.Errorf("a refused mapping filed (%d filings, %d before)", n, before)
			}

			wantStatus(t, "map", admin.post(page, "/carrier/feed/mapping?carrier=nebula", url.Values{
				feed.MappingField(special.ID): {fmt.Sprint(mine.ID)}, feed.MappingField("nebula/other"): {"none"}}), http.StatusSeeOther)
			if n := filings(); n != before+1 {
				t.Fatalf("mapping the model to listing %d: %d filings, want %d", mine.ID, n, before+1)
			}
			cfg, err := st.FindFeed(ctx, mine.CarrierID)
			if err != nil {
				t.Fatal(err)
			}
			if cfg.Mapping[special.ID] != mine.ID || cfg.Mapping["nebula/other"] != feed.NotImported || len(cfg.Models) != 2 {
				t.Errorf("stored mapping %v, models %v", cfg.Mapping, cfg.Models)
			}
			body = admin.get(page).body
			for _, want := range []string{"nebula/other: not imported, as you chose.", "submitted for review",
				fmt.Sprintf(`<option value="%d" selected>`, mine.ID)} {
				if !strings.Contains(body, want) {
					t.Errorf("the page does not show %q", want)
				}
			}
		})
	}
}
