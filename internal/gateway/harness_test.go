package gateway

import (
	"context"
	"encoding/json"
	"fmt"
	"io"
	"log/slog"
	"math/rand/v2"
	"net/http"
	"net/http/httptest"
	"strings"
	"sync"
	"testing"
	"time"

	"github.com/airside/airside/internal/fakecarrier"
	"github.com/airside/airside/internal/gatewayclient"
)

// carrierSpec is one listing of the test model "m" and its fake server.
type carrierSpec struct {
	slug         string
	input        string
	capabilities []string
	maxRpm       *int64
	capScope     string
	uptime       *float64
	server       fakecarrier.Config
	// handler, when set, answers in place of the fake carrier (a hostile
	// carrier, one that records what it received).
	handler http.Handler
}

// stubPortal answers the gateway API the way the portal does (the real
// portal drives the gateway in cmd/airside's end-to-end test): a catalogue
// with an ETag and 304s, a change feed held until a publication, the
// credentials, and metrics recorded as posted.
type stubPortal struct {
	t        testing.TB
	mu       sync.Mutex
	cat      gatewayclient.Catalogue
	keys     map[int64][2]string // listing -> base URL, key
	changed  chan struct{}
	buckets  []gatewayclient.Bucket
	demand   []gatewayclient.Demand
	holders  []gatewayclient.ShapeHolder
	orgs     []gatewayclient.OrgUsage
	projects []gatewayclient.ProjectMinute
	reads    int
	down     bool
	srv      *httptest.Server
	token    string
	etagSeen int
	// health is served apart, as the portal does; healthMoves versions it.
	health      map[int64]gatewayclient.Health
	healthMoves int
}

func (p *stubPortal) etag() string { return fmt.Sprintf(`W/"r%d"`, p.cat.Revision) }

func (p *stubPortal) healthETag() string {
	return fmt.Sprintf(`W/"r%d-h%d"`, p.cat.Revision, p.healthMoves)
}

// moveHealth changes a listing's health figures, as gateway reports do
// between revisions.
func (p *stubPortal) moveHealth(listingID int64, h gatewayclient.Health) {
	p.mu.Lock()
	defer p.mu.Unlock()
	p.health[listingID] = h
	p.healthMoves++
}

func (p *stubPortal) ServeHTTP(w http.ResponseWriter, r *http.Request) {
	p.mu.Lock()
	down := p.down
	p.mu.Unlock()
	if down {
		http.Error(w, `{"error":{"status":503,"message":"away"}}`, http.StatusServiceUnavailable)
		return
	}
	if r.Header.Get("Authorization") != "Bearer "+p.token {
		http.Error(w, `{"error":{"status":401,"message":"no"}}`, http.StatusUnauthorized)
		return
	}
	w.Header().Set("Content-Type", "application/json")
	switch {
	case r.URL.Path == "/api/v1/catalogue":
		p.mu.Lock()
		defer p.mu.Unlock()
		p.reads++
		if r.Header.Get("If-None-Match") == p.etag() {
			p.etagSeen++
			w.WriteHeader(http.StatusNotModified)
			return
		}
		w.Header().Set("ETag", p.etag())
		_ = json.NewEncoder(w).Encode(p.cat)
	case r.URL.Path == "/api/v1/catalogue/health":
		p.mu.Lock()
		defer p.mu.Unlock()
		if r.Header.Get("If-None-Match") == p.healthETag() {
			w.WriteHeader(http.StatusNotModified)
			return
		}
		doc := gatewayclient.HealthDocument{Revision: p.cat.Revision, HealthAsOf: time.Now()}
		for _, l := range p.cat.Listings {
			doc.Listings = append(doc.Listings, struct {
				Id        string               `json:"id"`
				ListingId int64                `json:"listingId"`
				Metrics   gatewayclient.Health `json:"metrics"`
			}{Id: l.Id, ListingId: l.ListingId, Metrics: p.health[l.ListingId]})
		}
		w.Header().Set("ETag", p.healthETag())
		_ = json.NewEncoder(w).Encode(doc)
	case r.URL.Path == "/api/v1/catalogue/changes":
		p.mu.Lock()
		ch := p.changed
		rev := p.cat.Revision
		p.mu.Unlock()
		if fmt.Sprint(rev) == r.URL.Query().Get("since") {
			select {
			case <-ch:
			case <-time.After(2 * time.Second):
			case <-r.Context().Done():
			}
		}
		p.mu.Lock()
		defer p.mu.Unlock()
		_ = json.NewEncoder(w).Encode(gatewayclient.Catalogue{Revision: p.cat.Revision, Listings: []gatewayclient.Listing{}})
	case strings.HasPrefix(r.URL.Path, "/api/v1/listings/") && strings.HasSuffix(r.URL.Path, "/credentials"):
		var id int64
		fmt.Sscanf(strings.TrimPrefix(r.URL.Path, "/api/v1/listings/"), "%d", &id)
		p.mu.Lock()
		k, ok := p.keys[id]
		p.mu.Unlock()
		if !ok {
			w.WriteHeader(http.StatusNotFound)
			_, _ = io.WriteString(w, `{"error":{"status":404,"message":"no such listing"}}`)
			return
		}
		_ = json.NewEncoder(w).Encode(map[string]any{"listingId": id, "baseUrl": k[0], "apiKey": k[1], "upstreamModel": "up-m"})
	case r.URL.Path == "/api/v1/metrics" && r.Method == http.MethodPost:
		var body gatewayclient.PostMetricsJSONBody
		if err := json.NewDecoder(r.Body).Decode(&body); err != nil {
			w.WriteHeader(http.StatusBadRequest)
			return
		}
		p.mu.Lock()
		p.buckets = append(p.buckets, body.Buckets...)
		if body.Demand != nil {
			p.demand = append(p.demand, *body.Demand...)
		}
		p.mu.Unlock()
		_, _ = io.WriteString(w, `{"accepted":1}`)
	case r.URL.Path == "/api/v1/metrics/holders" && r.Method == http.MethodPost:
		var body gatewayclient.PostShapeHoldersJSONBody
		if err := json.NewDecoder(r.Body).Decode(&body); err != nil {
			w.WriteHeader(http.StatusBadRequest)
			return
		}
		p.mu.Lock()
		p.holders = append(p.holders, body.Holders...)
		p.mu.Unlock()
		w.WriteHeader(http.StatusAccepted)
		_, _ = io.WriteString(w, `{"accepted":1}`)
	case r.URL.Path == "/api/v1/metrics/organisations" && r.Method == http.MethodPost:
		var body gatewayclient.PostOrgUsageJSONBody
		if err := json.NewDecoder(r.Body).Decode(&body); err != nil {
			w.WriteHeader(http.StatusBadRequest)
			return
		}
		p.mu.Lock()
		p.orgs = append(p.orgs, body.Organisations...)
		p.mu.Unlock()
		w.WriteHeader(http.StatusAccepted)
		_, _ = io.WriteString(w, `{"accepted":1}`)
	case r.URL.Path == "/api/v1/metrics/projects" && r.Method == http.MethodPost:
		var body gatewayclient.PostProjectMinutesJSONBody
		if err := json.NewDecoder(r.Body).Decode(&body); err != nil {
			w.WriteHeader(http.StatusBadRequest)
			return
		}
		p.mu.Lock()
		p.projects = append(p.projects, body.Projects...)
		p.mu.Unlock()
		w.WriteHeader(http.StatusAccepted)
		_, _ = io.WriteString(w, `{"accepted":1}`)
	default:
		w.WriteHeader(http.StatusNotFound)
	}
}

// publish changes the catalogue (a new revision) and wakes the change feed.
func (p *stubPortal) publish(edit func(ls []gatewayclient.Listing)) {
	p.mu.Lock()
	defer p.mu.Unlock()
	edit(p.cat.Listings)
	p.cat.Revision++
	for i := range p.cat.Listings {
		p.cat.Listings[i].Revision = p.cat.Revision
	}
	close(p.changed)
	p.changed = make(chan struct{})
}

// harness is a gateway in front of fake carriers, reading a stub portal.
type harness struct {
	t        testing.TB
	gw       *Gateway
	srv      *httptest.Server
	portal   *stubPortal
	carriers map[string]*fakecarrier.Server
	now      time.Time
	nowMu    sync.Mutex
	cancel   context.CancelFunc
}

const projectKey = "sk-test-project"

func newHarness(t testing.TB, specs ...carrierSpec) *harness {
	t.Helper()
	h := &harness{t: t, carriers: map[string]*fakecarrier.Server{}, now: time.Date(2026, 12, 2, 10, 0, 0, 0, time.UTC)}
	p := &stubPortal{t: t, keys: map[int64][2]string{}, changed: make(chan struct{}), token: "airside_test", health: map[int64]gatewayclient.Health{}}
	p.cat.Revision = 1
	for i, s := range specs {
		cfg := s.server
		cfg.Models = []string{"up-m"}
		cfg.APIKey = "key-" + s.slug
		cfg.Capabilities = s.capabilities
		fc := fakecarrier.New(cfg)
		var handler http.Handler = fc
		if s.handler != nil {
			handler = s.handler
		}
		cs := httptest.NewServer(handler)
		t.Cleanup(cs.Close)
		h.carriers[s.slug] = fc
		id := int64(i + 1)
		p.keys[id] = [2]string{cs.URL + "/v1", cfg.APIKey}
		caps := []gatewayclient.Capability{}
		for _, c := range s.capabilities {
			caps = append(caps, gatewayclient.Capability(c))
		}
		scope := s.capScope
		if scope == "" {
			scope = "global"
		}
		p.cat.Listings = append(p.cat.Listings, gatewayclient.Listing{Id: s.slug + "/m", ListingId: id, Carrier: s.slug, CarrierName: s.slug,
			Model: "m", Status: gatewayclient.InService, Priority: 1, Revision: 1, Capabilities: caps,
			Endpoint: &struct {
				BaseUrl       string `json:"baseUrl"`
				UpstreamModel string `json:"upstreamModel"`
			}{BaseUrl: cs.URL + "/v1", UpstreamModel: "up-m"},
			Fare: gatewayclient.Fare{InputPrice: s.input, OutputPrice: "1", Discount: "0", LandingFee: "0.2",
				CapScope: gatewayclient.FareCapScope(scope), MaxRpm: s.maxRpm, Tiers: nil}})
		p.health[id] = gatewayclient.Health{Uptime: s.uptime}
	}
	p.srv = httptest.NewServer(p)
	t.Cleanup(p.srv.Close)
	h.portal = p
	api, err := gatewayclient.NewClientWithResponses(p.srv.URL+"/api/v1", gatewayclient.WithRequestEditorFn(func(_ context.Context, req *http.Request) error {
		req.Header.Set("Authorization", "Bearer "+p.token)
		return nil
	}))
	if err != nil {
		t.Fatal(err)
	}
	log := slog.New(slog.NewTextHandler(io.Discard, nil))
	cfg := &Config{Projects: []Project{{Name: "p", APIKey: projectKey, Organisation: "org"}}}
	h.gw = &Gateway{Config: cfg, Follower: &Follower{API: api, Log: log, Wait: time.Second}, Creds: &Credentials{API: api},
		Recorder: NewRecorder(), HTTP: &http.Client{}, Now: h.clock, Rand: rand.New(rand.NewPCG(7, 11)), Log: log}
	ctx, cancel := context.WithCancel(context.Background())
	h.cancel = cancel
	t.Cleanup(cancel)
	go h.gw.Follower.Run(ctx)
	select {
	case <-h.gw.Follower.Ready():
	case <-time.After(time.Minute):
		t.Fatal("the gateway never read the catalogue")
	}
	h.srv = httptest.NewServer(h.gw.Handler())
	t.Cleanup(h.srv.Close)
	return h
}

func (h *harness) clock() time.Time {
	h.nowMu.Lock()
	defer h.nowMu.Unlock()
	return h.now
}

func (h *harness) advance(d time.Duration) {
	h.nowMu.Lock()
	h.now = h.now.Add(d)
	h.nowMu.Unlock()
}

// publish changes the catalogue and waits until the gateway routes by it.
func (h *harness) publish(edit func(ls []gatewayclient.Listing)) {
	h.t.Helper()
	h.portal.publish(edit)
	h.portal.mu.Lock()
	want := h.portal.cat.Revision
	h.portal.mu.Unlock()
	deadline := time.Now().Add(time.Minute)
	for h.gw.Follower.Current().Revision != want {
		if time.Now().After(deadline) {
			h.t.Fatalf("the gateway never read revision %d", want)
		}
		time.Sleep(5 * time.Millisecond)
	}
}

// answer is what a chat request through the gateway came back with.
type answer struct {
	status int
	body   string
}

// chat sends one chat request through the gateway.
func (h *harness) chat(body string, header ...string) answer {
	h.t.Helper()
	return h.chatAs(projectKey, body, header...)
}

// chatAs sends one chat request through the gateway with a project's key.
func (h *harness) chatAs(key, body string, header ...string) answer {
	h.t.Helper()
	req, _ := http.NewRequest(http.MethodPost, h.srv.URL+"/v1/chat/completions", strings.NewReader(body))
	req.Header.Set("Authorization", "Bearer "+key)
	req.Header.Set("Content-Type", "application/json")
	for i := 0; i+1 < len(header); i += 2 {
		req.Header.Set(header[i], header[i+1])
	}
	res, err := http.DefaultClient.Do(req)
	if err != nil {
		h.t.Fatal(err)
	}
	defer res.Body.Close()
	b, _ := io.ReadAll(res.Body)
	return answer{status: res.StatusCode, body: string(b)}
}

// chats counts each carrier's chat requests.
func (h *harness) chats() map[string]int {
	out := map[string]int{}
	for slug, c := range h.carriers {
		out[slug] = c.Chats()
	}
	return out
}

const hello = `{"model":"m","messages":[{"role":"user","content":"hello"}]}`
