package demo

import (
	"context"
	"errors"
	"fmt"
	"net"
	"net/http"
	"time"

	"github.com/airside/airside/internal/catalogue"
	"github.com/airside/airside/internal/fakecarrier"
	"github.com/airside/airside/internal/secret"
	"github.com/airside/airside/internal/store"
	"github.com/airside/airside/internal/workflow"
)

// demoCarrier is how one demo carrier's fake endpoint behaves: different
// capabilities, dialects and speeds, so preflight earns different flags.
type demoCarrier struct {
	slug string
	port int
	fake fakecarrier.Config
}

var all = []string{"tools", "vision", "audio_input", "json_output", "json_schema", "reasoning", "reasoning_budget", "web_search"}

var demoCarriers = []demoCarrier{
	{slug: "nebula", port: 9101, fake: fakecarrier.Config{Capabilities: all, Cache: true, TTFT: 250 * time.Millisecond, TokensPerSecond: 90}},
	{slug: "orbit", port: 9102, fake: fakecarrier.Config{Capabilities: []string{"tools", "json_output", "json_schema", "reasoning"},
		Cache: true, Dialect: fakecarrier.DialectDeepSeek, TTFT: 400 * time.Millisecond, TokensPerSecond: 60}},
	{slug: "fathom", port: 9103, fake: fakecarrier.Config{Capabilities: []string{"tools", "vision", "json_output"},
		TTFT: 300 * time.Millisecond, TokensPerSecond: 70}},
	{slug: "lumen", port: 9104, fake: fakecarrier.Config{Capabilities: []string{"tools", "json_output", "json_schema", "web_search"},
		Cache: true, TTFT: 200 * time.Millisecond, TokensPerSecond: 110}},
	// tessera slows down every afternoon (UTC), as a busy carrier does.
	{slug: "tessera", port: 9105, fake: fakecarrier.Config{Capabilities: []string{"tools", "reasoning", "reasoning_budget", "json_output"},
		Cache: true, TTFT: 500 * time.Millisecond, TokensPerSecond: 45, SlowHours: []int{13, 14, 15, 16}, SlowFactor: 3}},
	// quarry is cheap and fast but small: past its capacity it answers 429
	// with Retry-After, and the gateway falls back.
	{slug: "quarry", port: 9106, fake: fakecarrier.Config{Capabilities: []string{"json_output"}, Cache: true,
		TTFT: 150 * time.Millisecond, TokensPerSecond: 140, MaxConcurrent: 2, MaxRPM: 30}},
	{slug: "halcyon", port: 9107, fake: fakecarrier.Config{Capabilities: []string{"tools", "vision", "audio_input", "json_output"},
		Cache: true, Dialect: fakecarrier.DialectDeepSeek, TTFT: 350 * time.Millisecond, TokensPerSecond: 65}},
	{slug: "vantage", port: 9108, fake: fakecarrier.Config{Capabilities: []string{"tools", "json_output", "json_schema"},
		TTFT: 300 * time.Millisecond, TokensPerSecond: 80, ErrorRate: 0.02}},
}

// demoKey is a demo carrier's API key on its fake endpoint.
func demoKey(slug string) string { return "sk-demo-" + slug + "-0123456789" }

// StartCarriers serves every demo carrier's fake OpenAI-compatible endpoint
// on 127.0.0.1 (ports 9101-9108) until ctx ends. A port already taken is
// reported and skipped: that carrier's preflight then fails, as it would.
func StartCarriers(ctx context.Context, logf func(format string, args ...any)) {
	served := make([]string, 0, len(models))
	for _, m := range models {
		served = append(served, m.slug)
	}
	for i, c := range demoCarriers {
		cfg := c.fake
		cfg.Models, cfg.APIKey, cfg.Seed = served, demoKey(c.slug), uint64(i+1)
		srv := &http.Server{Handler: fakecarrier.New(cfg), ReadHeaderTimeout: 5 * time.Second}
		ln, err := net.Listen("tcp", fmt.Sprintf("127.0.0.1:%d", c.port))
		if err != nil {
			logf("demo carrier %s: %v", c.slug, err)
			continue
		}
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
}

// SeedEndpoints gives every demo listing without an endpoint its carrier's
// fake endpoint, published, with a preflight queued: the demo's flags are
// earned by probes, not ticked.
func SeedEndpoints(ctx context.Context, st *store.Store, box *secret.Box) (int, error) {
	listings, err := st.FindListings(ctx, catalogue.ListingFilter{StoredHealth: true})
	if err != nil {
		return 0, fmt.Errorf("seed demo endpoints: %w", err)
	}
	ports := map[string]int{}
	for _, c := range demoCarriers {
		ports[c.slug] = c.port
	}
	n := 0
	for _, l := range listings {
		port, ok := ports[l.CarrierSlug]
		if !ok || l.Endpoint != nil {
			continue
		}
		key := demoKey(l.CarrierSlug)
		sealed, err := box.Seal(key, workflow.KeyBinding(l.ID))
		if err != nil {
			return n, err
		}
		url := fmt.Sprintf("http://127.0.0.1:%d/v1", port)
		if err := st.PublishSeedEndpoint(ctx, l.ID, url, l.Model.Slug, sealed, secret.Hint(key)); err != nil {
			return n, fmt.Errorf("seed demo endpoints: %w", err)
		}
		n++
	}
	return n, nil
}
