package trafficdriver_test

import (
	"bytes"
	"context"
	"crypto/sha256"
	"fmt"
	"io"
	"net/http"
	"net/http/httptest"
	"slices"
	"strings"
	"sync"
	"testing"
	"time"

	"github.com/airside/airside/internal/fakecarrier"
	"github.com/airside/airside/internal/trafficdriver"
)

// recordingGateway answers as an OpenAI-compatible server (the fake
// carrier, with every capability) and records each request it got.
type recordingGateway struct {
	mu   sync.Mutex
	seen []string
	kind map[string]int
	next http.Handler
}

func (g *recordingGateway) ServeHTTP(w http.ResponseWriter, r *http.Request) {
	body, _ := io.ReadAll(r.Body)
	r.Body = io.NopCloser(bytes.NewReader(body))
	if r.Method == http.MethodPost {
		sig := fmt.Sprintf("%s|%s|%x", r.Header.Get("User-Agent"), r.Header.Get("X-Session-Id"), sha256.Sum256(body))
		kind := "chat"
		switch {
		case strings.Contains(r.Header.Get("User-Agent"), "claude-cli"):
			kind = "coding"
		case strings.Contains(string(body), "image_url"):
			kind = "image"
		case strings.Contains(string(body), "json_object"):
			kind = "json"
		case len(body) > 20000:
			kind = "large"
		}
		g.mu.Lock()
		g.seen = append(g.seen, sig)
		g.kind[kind]++
		g.mu.Unlock()
	}
	g.next.ServeHTTP(w, r)
}

func drive(t *testing.T, seed uint64) *recordingGateway {
	t.Helper()
	g := &recordingGateway{kind: map[string]int{}, next: fakecarrier.New(fakecarrier.Config{Models: []string{"m"},
		Capabilities: []string{"tools", "vision", "json_output"}})}
	srv := httptest.NewServer(g)
	defer srv.Close()
	var stats trafficdriver.Stats
	err := trafficdriver.Run(context.Background(), trafficdriver.Config{GatewayURL: srv.URL, APIKeys: []string{"k"}, Models: []string{"m"},
		Rate: trafficdriver.MaxRate, MaxArrivals: 60, MaxInFlight: 64, TurnPause: time.Millisecond, Seed: seed,
		Now: func() time.Time { return time.Date(2026, 12, 2, 15, 0, 0, 0, time.UTC) }}, &stats)
	if err != nil {
		t.Fatal(err)
	}
	if stats.Failed.Load() != 0 || stats.Skipped.Load() != 0 || stats.OK.Load() != stats.Sent.Load() {
		t.Fatalf("sent %d, ok %d, failed %d, skipped %d", stats.Sent.Load(), stats.OK.Load(), stats.Failed.Load(), stats.Skipped.Load())
	}
	return g
}

// TestTheSameSeedSendsTheSameRequests: the driver's stream of requests
// (their headers and bodies) depends on the seed alone; another seed sends
// others. Every kind of customer shows up, coding agents in sessions with a
// coding client's User-Agent.
func TestTheSameSeedSendsTheSameRequests(t *testing.T) {
	a, b, c := drive(t, 7), drive(t, 7), drive(t, 8)
	slices.Sort(a.seen)
	slices.Sort(b.seen)
	slices.Sort(c.seen)
	if !slices.Equal(a.seen, b.seen) {
		t.Errorf("two runs with seed 7 sent different requests (%d and %d)", len(a.seen), len(b.seen))
	}
	if slices.Equal(a.seen, c.seen) {
		t.Error("seeds 7 and 8 sent the same requests")
	}
	for _, kind := range []string{"coding", "large", "chat", "json", "image"} {
		if a.kind[kind] == 0 {
			t.Errorf("no %s request in 60 arrivals: %v", kind, a.kind)
		}
	}
	if a.kind["coding"] <= 60*3/10 {
		t.Errorf("coding sessions sent %d requests: a session is several turns", a.kind["coding"])
	}
}
