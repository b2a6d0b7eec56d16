package gateway

import (
	"context"
	"fmt"
	"math/rand/v2"
	"net/http"
	"net/http/httptest"
	"os"
	"strings"
	"testing"
	"time"

	"github.com/redis/go-redis/v9"

	"github.com/airside/airside/internal/fleet"
)

// testRedis is the Redis the fleet tests share state in
// (AIRSIDE_TEST_REDIS_URL, default redis://127.0.0.1:6379/0): with
// CI=true a missing one fails, else the test is skipped.
func testRedis(t *testing.T) *redis.Client {
	t.Helper()
	url := os.Getenv("AIRSIDE_TEST_REDIS_URL")
	if url == "" {
		url = "redis://127.0.0.1:6379/0"
	}
	ctx, cancel := context.WithTimeout(context.Background(), 5*time.Second)
	defer cancel()
	client, err := fleet.Dial(ctx, url)
	if err != nil {
		if os.Getenv("CI") == "true" {
			t.Fatalf("Redis at %s is required with CI=true: %v", url, err)
		}
		t.Skipf("Redis not reachable at %s (%v); set CI=true to make this a failure", url, err)
	}
	t.Cleanup(func() { client.Close() })
	return client
}

// replica is a second gateway on the harness's portal and carriers, with
// state of its own but for what caps counts.
func (h *harness) replica(t *testing.T, caps CapCounter) *httptest.Server {
	g := &Gateway{Config: h.gw.Config, Follower: h.gw.Follower, Creds: h.gw.Creds, Recorder: NewRecorder(), HTTP: &http.Client{},
		Now: h.clock, Rand: rand.New(rand.NewPCG(8, 12)), Log: h.gw.Log, Caps: caps}
	srv := httptest.NewServer(g.Handler())
	t.Cleanup(srv.Close)
	return srv
}

func chatAt(t *testing.T, base string) int {
	req, _ := http.NewRequest(http.MethodPost, base+"/v1/chat/completions", strings.NewReader(hello))
	req.Header.Set("Authorization", "Bearer "+projectKey)
	req.Header.Set("Content-Type", "application/json")
	res, err := http.DefaultClient.Do(req)
	if err != nil {
		t.Fatal(err)
	}
	res.Body.Close()
	return res.StatusCode
}

// TestAFleetEnforcesACapOnce: two replicas counting caps in Redis serve a
// cap of 10 a minute exactly 10 times between them (the rest goes to the
// next listing); counting alone, as before, they served it twice over.
func TestAFleetEnforcesACapOnce(t *testing.T) {
	client := testRedis(t)
	cap10 := int64(10)
	for _, shared := range []bool{true, false} {
		t.Run(fmt.Sprintf("shared=%v", shared), func(t *testing.T) {
			specs := threeCarriers()
			specs[0].maxRpm = &cap10
			h := newHarness(t, specs...)
			var first, second CapCounter
			if shared {
				prefix := fmt.Sprintf("airside-test:%d:", time.Now().UnixNano())
				first, second = &fleet.Caps{Client: client, Prefix: prefix}, &fleet.Caps{Client: client, Prefix: prefix}
			}
			h.gw.Caps = first
			other := h.replica(t, second)
			for i := range 30 {
				base := h.srv.URL
				if i%2 == 1 {
					base = other.URL
				}
				if status := chatAt(t, base); status != 200 {
					t.Fatalf("request %d: %d", i, status)
				}
			}
			served := h.chats()["a"]
			switch {
			case shared && served != 10:
				t.Errorf("the fleet served the capped listing %d times, want exactly 10", served)
			case !shared && served != 20:
				t.Errorf("two replicas counting alone served it %d times (want 20: the defect shared caps fix)", served)
			}
		})
	}
}

// TestRedisGoingAwayIsNotAnOutage: with Redis unreachable the caps are
// counted in the replica (said once), and requests are still served.
func TestRedisGoingAwayIsNotAnOutage(t *testing.T) {
	cap10 := int64(10)
	specs := threeCarriers()
	specs[0].maxRpm = &cap10
	h := newHarness(t, specs...)
	var said []string
	caps := &fleet.Caps{Client: redis.NewClient(&redis.Options{Addr: "127.0.0.1:1", MaxRetries: -1}),
		Log: func(msg string, _ error) { said = append(said, msg) }}
	h.gw.Caps = caps
	for range 15 {
		if res := h.chat(hello); res.status != 200 {
			t.Fatalf("%d %s", res.status, res.body)
		}
	}
	if got := h.chats()["a"]; got != 10 || !caps.Down() || len(said) != 1 {
		t.Errorf("served a %d times (want 10, counted here), down %v, said %q", got, caps.Down(), said)
	}
}
