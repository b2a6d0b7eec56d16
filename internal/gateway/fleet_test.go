package gateway

import (
	"fmt"
	"io"
	"math/rand/v2"
	"net/http"
	"net/http/httptest"
	"reflect"
	"strings"
	"testing"
	"time"

	"github.com/redis/go-redis/v9"

	"github.com/airside/airside/internal/fleet"
	"github.com/airside/airside/internal/fleet/fleettest"
	"github.com/airside/airside/internal/gatewayclient"
	"github.com/airside/airside/internal/traffic"
)

// replica is a second gateway on the harness's portal and carriers, with
// its own state or the fleet's.
func (h *harness) replica(t testing.TB, state *fleet.State) *httptest.Server {
	_, srv := h.replicaGateway(t, state)
	return srv
}

// replicaGateway is replica's gateway and server.
func (h *harness) replicaGateway(t testing.TB, state *fleet.State) (*Gateway, *httptest.Server) {
	g := &Gateway{Config: h.gw.Config, Follower: h.gw.Follower, Creds: h.gw.Creds, Recorder: NewRecorder(), HTTP: &http.Client{},
		Now: h.clock, Rand: rand.New(rand.NewPCG(8, 12)), Log: h.gw.Log, Fleet: state}
	srv := httptest.NewServer(g.Handler())
	t.Cleanup(srv.Close)
	return g, srv
}

func chatAt(t *testing.T, base string, header ...string) int {
	req, _ := http.NewRequest(http.MethodPost, base+"/v1/chat/completions", strings.NewReader(hello))
	for i := 0; i+1 < len(header); i += 2 {
		req.Header.Set(header[i], header[i+1])
	}
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
	client := fleettest.Redis(t)
	cap10 := int64(10)
	for _, shared := range []bool{true, false} {
		t.Run(fmt.Sprintf("shared=%v", shared), func(t *testing.T) {
			specs := threeCarriers()
			specs[0].maxRpm = &cap10
			h := newHarness(t, specs...)
			states := fleettest.States(t, client, 2, shared)
			first, second := states[0], states[1]
			h.gw.Fleet = first
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
	caps := &fleet.State{Client: redis.NewClient(&redis.Options{Addr: "127.0.0.1:1", MaxRetries: -1}),
		Log: func(msg string, _ error) { said = append(said, msg) }}
	h.gw.Fleet = caps
	for range 15 {
		if res := h.chat(hello); res.status != 200 {
			t.Fatalf("%d %s", res.status, res.body)
		}
	}
	if got := h.chats()["a"]; got != 10 || !caps.Down() || len(said) != 1 {
		t.Errorf("served a %d times (want 10, counted here), down %v, said %q", got, caps.Down(), said)
	}
	// Still ready, and saying so where an operator looks.
	metrics := httptest.NewServer(h.gw.MetricsHandler(&Reporter{}))
	defer metrics.Close()
	for url, want := range map[string]string{h.srv.URL + "/healthz": "Redis unreachable", metrics.URL: "airside_gateway_fleet_redis_down 1"} {
		res, err := http.Get(url)
		if err != nil {
			t.Fatal(err)
		}
		body, _ := io.ReadAll(res.Body)
		res.Body.Close()
		if res.StatusCode != http.StatusOK || !strings.Contains(string(body), want) {
			t.Errorf("%s with Redis away: %d, want 200 and %q in:\n%.2000s", url, res.StatusCode, want, body)
		}
	}
}

// TestASessionContinuesOnAnotherReplica: a session opened on one replica
// and continued on another stays with its listing when the fleet shares
// sessions in Redis, though another listing has since become far cheaper;
// each replica alone re-elected it.
func TestASessionContinuesOnAnotherReplica(t *testing.T) {
	client := fleettest.Redis(t)
	for _, shared := range []bool{true, false} {
		t.Run(fmt.Sprintf("shared=%v", shared), func(t *testing.T) {
			h := newHarness(t, threeCarriers()...)
			states := fleettest.States(t, client, 2, shared)
			first, second := states[0], states[1]
			h.gw.Fleet = first
			other := h.replica(t, second)
			session := []string{"X-Session-Id", "s1"}
			if status := chatAt(t, h.srv.URL, session...); status != 200 {
				t.Fatal(status)
			}
			h.publish(setPrice("b", "0.1"))
			if status := chatAt(t, other.URL, session...); status != 200 {
				t.Fatal(status)
			}
			want := map[string]int{"a": 2, "b": 0}
			if !shared {
				want = map[string]int{"a": 1, "b": 1}
			}
			wantChats(t, h, want)
		})
	}
}

// TestIncumbentsAgreeAcrossTheFleet: a shape's incumbent kept inside the
// margin on one replica is the incumbent of a replica that never elected
// the shape, when the fleet shares incumbents; alone, that replica routes
// to the election's own winner.
func TestIncumbentsAgreeAcrossTheFleet(t *testing.T) {
	client := fleettest.Redis(t)
	for _, shared := range []bool{true, false} {
		t.Run(fmt.Sprintf("shared=%v", shared), func(t *testing.T) {
			h := newHarness(t, threeCarriers()...)
			states := fleettest.States(t, client, 2, shared)
			first, second := states[0], states[1]
			h.gw.Fleet = first
			other := h.replica(t, second)
			if status := chatAt(t, h.srv.URL); status != 200 {
				t.Fatal(status)
			}
			h.publish(setPrice("b", "0.95")) // inside the margin: a keeps the shape
			for range 3 {
				if status := chatAt(t, other.URL); status != 200 {
					t.Fatal(status)
				}
			}
			want := map[string]int{"a": 4, "b": 0}
			if !shared {
				want = map[string]int{"a": 1, "b": 3}
			}
			wantChats(t, h, want)
		})
	}
}

// TestSessionsAndIncumbentsOutliveRedis: with Redis unreachable, sessions
// and incumbents are kept in the replica (said once) and requests are
// still served by their rules.
func TestSessionsAndIncumbentsOutliveRedis(t *testing.T) {
	h := newHarness(t, threeCarriers()...)
	var said []string
	state := &fleet.State{Client: redis.NewClient(&redis.Options{Addr: "127.0.0.1:1", MaxRetries: -1}),
		Log: func(msg string, _ error) { said = append(said, msg) }}
	h.gw.Fleet = state
	session := []string{"X-Session-Id", "s1"}
	h.chat(hello)
	h.chat(hello, session...)
	h.publish(setPrice("b", "0.95"))
	h.chat(hello) // a is the shape's incumbent in the replica
	h.publish(setPrice("b", "0.1"))
	h.chat(hello, session...) // pinned to a in the replica
	wantChats(t, h, map[string]int{"a": 4, "b": 0})
	if !state.Down() || len(said) != 1 {
		t.Errorf("down %v, said %q: want it said once", state.Down(), said)
	}
}

// TestOneReplicasBackoffHoldsTheFleet: a burst of 429s seen by one replica
// backs the listing off on another that never tried it (sharing the
// fleet's state), until the backoff's end; alone, the other replica sends
// its customers to the 429s.
func TestOneReplicasBackoffHoldsTheFleet(t *testing.T) {
	client := fleettest.Redis(t)
	for _, shared := range []bool{true, false} {
		t.Run(fmt.Sprintf("shared=%v", shared), func(t *testing.T) {
			h := newHarness(t, threeCarriers()...)
			states := fleettest.States(t, client, 2, shared)
			first, second := states[0], states[1]
			h.gw.Fleet = first
			other := h.replica(t, second)
			h.carriers["a"].SetStatus(429)
			for range 3 {
				if status := chatAt(t, h.srv.URL); status != 200 {
					t.Fatal(status)
				}
				h.advance(2 * time.Second)
			}
			for range 4 {
				if status := chatAt(t, other.URL); status != 200 {
					t.Fatal(status)
				}
			}
			want := map[string]int{"a": 3, "b": 7} // the other replica went to b straight away
			if !shared {
				want = map[string]int{"a": 6, "b": 7} // it tried a, which refused, until a burst of its own
			}
			wantChats(t, h, want)
			if shared {
				// The backoff ends on every replica at once.
				h.carriers["a"].SetStatus(0)
				h.advance(traffic.BackoffFirst)
				if status := chatAt(t, other.URL); status != 200 {
					t.Fatal(status)
				}
				wantChats(t, h, map[string]int{"a": 4, "b": 7})
			}
		})
	}
}

// TestLearnedRatesAgreeAcrossTheFleet: a replica that served none of a
// project's traffic learns the same cache rates from the fleet as the one
// that served it all; a replica alone learns nothing.
func TestLearnedRatesAgreeAcrossTheFleet(t *testing.T) {
	client := fleettest.Redis(t)
	specs := threeCarriers()
	specs[0].server.Cache = true
	h := newHarness(t, specs...)
	states := fleettest.States(t, client, 2, true)
	h.gw.Fleet = states[0]
	other, _ := h.replicaGateway(t, states[1])
	alone, _ := h.replicaGateway(t, nil)
	long := `{"model":"m","messages":[{"role":"user","content":"` + strings.Repeat("a shared prefix of a long prompt ", 200) + `"}]}`
	for range 25 {
		if res := h.chat(long); res.status != 200 {
			t.Fatalf("%d %s", res.status, res.body)
		}
	}
	h.gw.publishHours("replica-1")
	now := h.clock()
	want := traffic.Learn(h.gw.Recorder.Hours("p", "m", now), now)
	if want.Combined == nil || len(want.HitRate) == 0 {
		t.Fatalf("the serving replica learned nothing (%+v): the test's traffic is below the gates", want)
	}
	got := other.learned("p", "m", now)
	if got.Combined == nil || *got.Combined != *want.Combined || !reflect.DeepEqual(got.HitRate, want.HitRate) {
		t.Errorf("the other replica learned %+v, want %+v", got, want)
	}
	if lone := alone.learned("p", "m", now); lone.Combined != nil {
		t.Errorf("a replica alone learned %v from traffic it never saw", *lone.Combined)
	}
	// What each replica routes by is on its metrics endpoint, once its
	// own lookup (kept 60 s) is read again.
	h.advance(traffic.LearnedCacheFor + time.Second)
	h.gw.learned("p", "m", h.clock())
	wantLine := fmt.Sprintf(`airside_gateway_learned_cache_hit_rate{model="m",project="p"} %g`, *want.Combined)
	for i, g := range []*Gateway{h.gw, other} {
		srv := httptest.NewServer(g.MetricsHandler(nil))
		res, err := http.Get(srv.URL)
		if err != nil {
			t.Fatal(err)
		}
		body, _ := io.ReadAll(res.Body)
		res.Body.Close()
		srv.Close()
		if !strings.Contains(string(body), wantLine) {
			t.Errorf("replica %d's metrics do not say %q", i+1, wantLine)
		}
	}
}

// TestASessionStaysInTheRegionItWasOpenedIn: a project keeping its data in
// DE and FR opens a session on a (FR); when a fails, the session's
// follow-up moves to c, the other listing serving FR, and not to b (DE),
// which wins everything else; the session is pinned to c in FR. With the
// fleet in Redis the follow-up is served by another replica, which reads
// the session's region from Redis.
func TestASessionStaysInTheRegionItWasOpenedIn(t *testing.T) {
	client := fleettest.Redis(t)
	for _, fleetWide := range []bool{false, true} {
		t.Run(fmt.Sprintf("redis=%v", fleetWide), func(t *testing.T) {
			h := newHarness(t, threeCarriers()...)
			regions := map[string][]string{"a": {"FR"}, "b": {"DE"}, "c": {"US", "FR"}}
			h.publish(func(ls []gatewayclient.Listing) {
				for i := range ls {
					r := regions[ls[i].Carrier]
					ls[i].Fare.Regions = &r
				}
			})
			h.gw.Config.Projects[0].Regions = []string{"DE", "FR"}
			follow, state := h.srv.URL, h.gw.shared()
			if fleetWide {
				states := fleettest.States(t, client, 2, true)
				h.gw.Fleet = states[0]
				follow, state = h.replica(t, states[1]).URL, states[1]
			}
			session := []string{"X-Session-Id", "s1"}
			if status := chatAt(t, h.srv.URL, session...); status != 200 {
				t.Fatal(status)
			}
			key := traffic.SessionKey{Project: "p", Model: "m", ID: "s1"}
			if got := state.Read(fleet.Query{Session: &key}, h.clock()).Pin; got != (traffic.SessionPin{Listing: "a/m", Region: "FR"}) {
				t.Fatalf("opened: pinned %+v, want a/m in FR", got)
			}
			h.carriers["a"].SetStatus(http.StatusInternalServerError)
			if status := chatAt(t, follow, session...); status != 200 {
				t.Fatalf("the session's follow-up after its listing failed: %d", status)
			}
			if status := chatAt(t, follow); status != 200 {
				t.Fatalf("a request outside the session: %d", status)
			}
			if got := state.Read(fleet.Query{Session: &key}, h.clock()).Pin; got != (traffic.SessionPin{Listing: "c/m", Region: "FR"}) {
				t.Errorf("after the move: pinned %+v, want c/m in FR", got)
			}
			wantChats(t, h, map[string]int{"b": 1, "c": 1})
		})
	}
}
