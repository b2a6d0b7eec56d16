package demo

import (
	"context"
	"crypto/sha256"
	"encoding/hex"
	"encoding/json"
	"errors"
	"fmt"
	"net"
	"net/http"
	"strings"
	"time"

	"github.com/airside/airside/internal/catalogue"
	"github.com/airside/airside/internal/export"
	"github.com/airside/airside/internal/fakecarrier"
	"github.com/airside/airside/internal/feed"
	"github.com/airside/airside/internal/secret"
	"github.com/airside/airside/internal/store"
	"github.com/airside/airside/internal/workflow"
)

// demoCarrier is how one demo carrier's fake endpoint behaves: different
// capabilities, dialects and speeds, so preflight earns different flags.
type demoCarrier struct {
	slug string
	fake fakecarrier.Config
}

var all = []string{"tools", "vision", "audio_input", "json_output", "json_schema", "reasoning", "reasoning_budget", "web_search"}

var demoCarriers = []demoCarrier{
	{slug: "nebula", fake: fakecarrier.Config{Capabilities: all, Cache: true, TTFT: 250 * time.Millisecond, TokensPerSecond: 90}},
	{slug: "orbit", fake: fakecarrier.Config{Capabilities: []string{"tools", "json_output", "json_schema", "reasoning"},
		Cache: true, Dialect: fakecarrier.DialectDeepSeek, TTFT: 400 * time.Millisecond, TokensPerSecond: 60}},
	{slug: "fathom", fake: fakecarrier.Config{Capabilities: []string{"tools", "vision", "json_output"},
		TTFT: 300 * time.Millisecond, TokensPerSecond: 70}},
	{slug: "lumen", fake: fakecarrier.Config{Capabilities: []string{"tools", "json_output", "json_schema", "web_search"},
		Cache: true, TTFT: 200 * time.Millisecond, TokensPerSecond: 110}},
	// tessera slows down every afternoon (UTC), as a busy carrier does.
	{slug: "tessera", fake: fakecarrier.Config{Capabilities: []string{"tools", "reasoning", "reasoning_budget", "json_output"},
		Cache: true, TTFT: 500 * time.Millisecond, TokensPerSecond: 45, SlowHours: []int{13, 14, 15, 16}, SlowFactor: 3}},
	// quarry is cheap and fast but small: past its capacity it answers 429
	// with Retry-After, and the gateway falls back.
	{slug: "quarry", fake: fakecarrier.Config{Capabilities: []string{"json_output"}, Cache: true,
		TTFT: 150 * time.Millisecond, TokensPerSecond: 140, MaxConcurrent: 2, MaxRPM: 30}},
	{slug: "halcyon", fake: fakecarrier.Config{Capabilities: []string{"tools", "vision", "audio_input", "json_output"},
		Cache: true, Dialect: fakecarrier.DialectDeepSeek, TTFT: 350 * time.Millisecond, TokensPerSecond: 65}},
	{slug: "vantage", fake: fakecarrier.Config{Capabilities: []string{"tools", "json_output", "json_schema"},
		TTFT: 300 * time.Millisecond, TokensPerSecond: 80, ErrorRate: 0.02}},
}

// demoKey is a demo carrier's API key on its fake endpoint.
func demoKey(slug string) string { return "sk-demo-" + slug + "-0123456789" }

// StartCarriers serves every demo carrier's fake OpenAI-compatible endpoint
// on 127.0.0.1, on ports the system assigns (so two demos on one machine
// never answer each other's probes), until ctx ends, and returns each
// carrier's base URL. A carrier that cannot listen is reported and left
// out: its listings keep an endpoint that fails preflight, as it would.
func StartCarriers(ctx context.Context, logf func(format string, args ...any)) map[string]string {
	return StartCarriersOn(ctx, logf, nil)
}

// StartCarriersOn is StartCarriers with the carriers' clock (nil: the
// system's), which places their daily slow hours: a test that runs the
// portal and gateway on a clock of its own gives them the same one.
func StartCarriersOn(ctx context.Context, logf func(format string, args ...any), now func() time.Time) map[string]string {
	return StartCarriersWith(ctx, logf, CarrierOptions{Now: now})
}

// CarrierOptions set how the demo carriers run.
type CarrierOptions struct {
	// Now is the carriers' clock (nil: the system's), which places their
	// daily slow hours.
	Now func() time.Time
	// TokenPace multiplies every carrier's tokens per second (0 or 1: the
	// demo's own): a test that drives hours of traffic in minutes streams
	// the answers faster, keeping first-token times, the slow hours and
	// the carriers' speeds relative to each other as they are.
	TokenPace float64
	// Feed, when set, is a carrier's provider feed document (OpenRouter's
	// format), served at /openrouter/models beside its API.
	Feed func(ctx context.Context, carrier string) (any, error)
}

// FeedPath is where a demo carrier serves its provider feed.
const FeedPath = "/openrouter/models"

// StartCarriersWith is StartCarriers with the options.
func StartCarriersWith(ctx context.Context, logf func(format string, args ...any), o CarrierOptions) map[string]string {
	now := o.Now
	served := make([]string, 0, len(models))
	for _, m := range models {
		served = append(served, m.slug)
	}
	urls := map[string]string{}
	for i, c := range demoCarriers {
		cfg := c.fake
		cfg.Models, cfg.APIKey, cfg.Seed, cfg.Now = served, demoKey(c.slug), uint64(i+1), now
		if o.TokenPace > 1 {
			cfg.TokensPerSecond *= o.TokenPace
		}
		var handler http.Handler = fakecarrier.New(cfg)
		if o.Feed != nil {
			mux := http.NewServeMux()
			mux.Handle("/", handler)
			mux.HandleFunc("GET "+FeedPath, serveFeed(c.slug, o.Feed))
			handler = mux
		}
		srv := &http.Server{Handler: handler, ReadHeaderTimeout: 5 * time.Second}
		ln, err := net.Listen("tcp", "127.0.0.1:0")
		if err != nil {
			logf("demo carrier %s: %v", c.slug, err)
			continue
		}
		urls[c.slug] = "http://" + ln.Addr().String() + "/v1"
		go func() {
			if err := srv.Serve(ln); err != nil && !errors.Is(err, http.ErrServerClosed) {
				logf("demo carrier %s: %v", c.slug, err)
			}
		}()
		go func() {
			<-ctx.Done()
			_ = srv.Close()
		}()
	}
	return urls
}

// SeedEndpoints gives every demo listing its carrier's fake endpoint at the
// address it listens on this time (urls, from StartCarriers), published,
// with a preflight queued: the demo's flags are earned by probes, not
// ticked. A listing whose seed endpoint is at an earlier run's address moves
// to this one; one with an endpoint its carrier registered keeps it.
func SeedEndpoints(ctx context.Context, st *store.Store, box *secret.Box, urls map[string]string) (int, error) {
	listings, err := st.FindListings(ctx, catalogue.ListingFilter{StoredHealth: true})
	if err != nil {
		return 0, fmt.Errorf("seed demo endpoints: %w", err)
	}
	n := 0
	for _, l := range listings {
		url, ok := urls[l.CarrierSlug]
		if !ok || (l.Endpoint != nil && l.Endpoint.BaseURL == url) {
			continue
		}
		key := demoKey(l.CarrierSlug)
		sealed, err := box.Seal(key, workflow.KeyBinding(l.ID))
		if err != nil {
			return n, err
		}
		moved, err := st.PublishSeedEndpoint(ctx, l.ID, url, l.Model.Slug, sealed, secret.Hint(key))
		if err != nil {
			return n, fmt.Errorf("seed demo endpoints: %w", err)
		}
		if moved {
			n++
		}
	}
	return n, nil
}

// serveFeed answers a carrier's feed with an ETag of its content, and 304
// to a reader that holds it.
func serveFeed(carrier string, doc func(ctx context.Context, carrier string) (any, error)) http.HandlerFunc {
	return func(w http.ResponseWriter, r *http.Request) {
		d, err := doc(r.Context(), carrier)
		if err != nil {
			http.Error(w, "the feed is not available", http.StatusServiceUnavailable)
			return
		}
		body, err := json.Marshal(d)
		if err != nil {
			http.Error(w, "the feed is not available", http.StatusInternalServerError)
			return
		}
		sum := sha256.Sum256(body)
		etag := `"` + hex.EncodeToString(sum[:8]) + `"`
		w.Header().Set("ETag", etag)
		if r.Header.Get("If-None-Match") == etag {
			w.WriteHeader(http.StatusNotModified)
			return
		}
		w.Header().Set("Content-Type", "application/json")
		_, _ = w.Write(body)
	}
}

// SeedFeeds registers Nebula's provider feed (its demo carrier's, at the
// address it listens on this time), its changes kept as drafts: the feed
// page shows a feed read and mapped, model by model.
func SeedFeeds(ctx context.Context, st *store.Store, urls map[string]string) error {
	base, ok := urls["nebula"]
	if !ok {
		return nil
	}
	nebula, err := st.FindCarrierBySlug(ctx, "nebula")
	if err != nil {
		return fmt.Errorf("seed demo feed: %w", err)
	}
	admin, err := st.FindUserByEmail(ctx, "admin@nebula.example")
	if err != nil {
		return fmt.Errorf("seed demo feed: %w", err)
	}
	url := strings.TrimSuffix(base, "/v1") + FeedPath
	if old, err := st.FindFeed(ctx, nebula.ID); err == nil && (old.URL == url || !strings.HasPrefix(old.URL, "http://127.0.0.1:")) {
		return nil // this run's, or one the carrier set itself
	}
	return st.SaveFeed(ctx, admin.ID, feed.Config{CarrierID: nebula.ID, URL: url})
}

// FeedOf is a demo carrier's provider feed: its published listings as
// export.ProviderFeed writes them.
func FeedOf(st *store.Store) func(ctx context.Context, carrier string) (any, error) {
	return func(ctx context.Context, carrier string) (any, error) {
		c, err := st.FindCarrierBySlug(ctx, carrier)
		if err != nil {
			return nil, err
		}
		ls, err := st.FindListings(ctx, catalogue.ListingFilter{CarrierIDs: []int64{c.ID}, Published: true, StoredHealth: true})
		if err != nil {
			return nil, err
		}
		return export.ProviderFeed(ls), nil
	}
}
