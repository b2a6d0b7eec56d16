package main

import (
	"fmt"
	"net"
	"net/http"
	"net/url"
	"os"
	"os/exec"
	"path/filepath"
	"strings"
	"sync"
	"sync/atomic"
	"syscall"
	"testing"
	"time"

	"github.com/airside/airside/internal/catalogue"
	"github.com/airside/airside/internal/store"
	"github.com/airside/airside/internal/store/storetest"
	"github.com/airside/airside/internal/traffic"
)

// redisServer runs a Redis of the test's own on a free port (the fleet
// test stops and starts it): start runs it, stop kills it. With CI=true a
// missing redis-server fails.
type redisServer struct {
	t    *testing.T
	addr string
	cmd  *exec.Cmd
}

func newRedisServer(t *testing.T) *redisServer {
	if _, err := exec.LookPath("redis-server"); err != nil {
		if os.Getenv("CI") == "true" {
			t.Fatal("redis-server is not installed (apt-get install redis-server)")
		}
		t.Skip("redis-server is not installed")
	}
	r := &redisServer{t: t, addr: freeAddr(t)}
	t.Cleanup(r.stop)
	return r
}

func (r *redisServer) start() {
	_, port, _ := strings.Cut(r.addr, ":")
	r.cmd = exec.Command("redis-server", "--port", port, "--bind", "127.0.0.1", "--save", "", "--appendonly", "no")
	r.cmd.Dir = r.t.TempDir()
	if err := r.cmd.Start(); err != nil {
		r.t.Fatal(err)
	}
	waitFor(r.t, "redis-server to answer", func() bool {
		c, err := net.DialTimeout("tcp", r.addr, time.Second)
		if err != nil {
			return false
		}
		c.Close()
		return true
	})
}

func (r *redisServer) stop() {
	if r.cmd != nil && r.cmd.Process != nil {
		_ = r.cmd.Process.Kill()
		_ = r.cmd.Wait()
		r.cmd = nil
	}
}

// TestAGatewayFleetLosesNothing: three gateway processes on one portal (on
// each database), sharing their state in a Redis and a spool folder, serve
// customers throughout while one replica is killed with SIGKILL, Redis is
// stopped for 20 s and started again, and the killed replica is started
// again: not one request fails, and the portal stores exactly the requests
// the customers had answered, the killed replica's among them.
func TestAGatewayFleetLosesNothing(t *testing.T) {
	for _, d := range storetest.Dialects {
		t.Run(string(d), func(t *testing.T) {
			dbURL := ""
			if d == store.Postgres {
				dbURL = storetest.URL(t, d)
			}
			t.Setenv("AIRSIDE_QUARANTINE_FACTOR", "1000") // a tenfold cut is one reviewer's decision here
			dir, portal, config, dbURL, token := gatewayFixtureOn(t, dbURL)
			const model = "kimi-k2.5"
			listings := modelListings(t, dbURL, model)
			var ids []int64
			for _, l := range listings {
				ids = append(ids, l.ID)
			}
			began := time.Now()
			storedBefore := storedRequests(t, dbURL, ids, began)
			redis := newRedisServer(t)
			redis.start()
			spool := filepath.Join(dir, "spool")
			type replica struct {
				url, metrics string
				cmd          *exec.Cmd
				answered     atomic.Int64
				inFlight     atomic.Int64
			}
			replicas := make([]*replica, 3)
			start := func(i int) {
				r := replicas[i]
				r.cmd = airsideProcess(t, []string{"AIRSIDE_GATEWAY_TOKEN=" + token, "AIRSIDE_LOG_LEVEL=warn"}, nil,
					"gateway", "--addr", strings.TrimPrefix(r.url, "http://"), "--portal", portal, "--config", config,
					"--name", fmt.Sprintf("gw-%d", i+1), "--redis", "redis://"+redis.addr+"/0", "--spool", spool,
					"--report-every", "1s", "--allow-private-carriers", "--metrics-addr", r.metrics)
				waitFor(t, "a replica to read the catalogue", func() bool { return status(r.url+"/healthz", "") == http.StatusOK })
			}
			for i := range replicas {
				replicas[i] = &replica{url: "http://" + freeAddr(t), metrics: freeAddr(t)}
				start(i)
			}
			urls, metrics := make([]string, 3), make([]string, 3)
			for i, r := range replicas {
				urls[i], metrics[i] = r.url, r.metrics
			}
			ownAnswers := fleetSharesItsState(t, portal, token, listings, model, urls, metrics)
			thirdsBefore := answeredCount(replicas[2].metrics) // the customers' answers are counted from here

			// Customers, one request after another, round the replicas in
			// rotation (a killed one left out).
			var live atomic.Int64
			live.Store(0b111)
			c := runCustomers(&http.Client{Timeout: time.Minute}, model, func(n int) (string, func(bool), bool) {
				r := replicas[n%3]
				r.inFlight.Add(1)
				if live.Load()&(1<<(n%3)) == 0 {
					r.inFlight.Add(-1)
					return "", nil, false
				}
				return r.url, func(ok bool) {
					if ok {
						r.answered.Add(1)
					}
					r.inFlight.Add(-1)
				}, true
			})
			answered, failed, lastFailure := &c.answered, &c.failed, &c.lastFailure
			stopCustomers := c.halt
			defer stopCustomers()
			waitFor(t, "customers' requests through the fleet", func() bool { return answered.Load() >= 30 })

			// kill -9 of the third replica, once it has counted every answer it gave.
			live.Store(0b011)
			third := replicas[2]
			waitFor(t, "the third replica to answer its last request and count its answers", func() bool {
				return third.inFlight.Load() == 0 && int64(answeredCount(third.metrics)-thirdsBefore) == third.answered.Load()
			})
			if err := third.cmd.Process.Kill(); err != nil {
				t.Fatal(err)
			}
			_ = third.cmd.Wait()

			// Redis away for 20 s, then back.
			redis.stop()
			duringOutage := answered.Load()
			time.Sleep(20 * time.Second)
			if answered.Load() == duringOutage {
				t.Fatal("no request was answered while Redis was away")
			}
			redis.start()
			after := answered.Load()
			waitFor(t, "requests after Redis came back", func() bool { return answered.Load() >= after+20 })

			// The killed replica again, under its name and spool: it posts
			// what its killed process counted.
			start(2)
			live.Store(0b111)
			after = answered.Load()
			waitFor(t, "requests through the restarted replica", func() bool { return answered.Load() >= after+15 })
			stopCustomers()
			for _, r := range replicas {
				if err := r.cmd.Process.Signal(syscall.SIGTERM); err != nil {
					t.Fatal(err)
				}
				if err := r.cmd.Wait(); err != nil {
					t.Errorf("a replica did not stop cleanly: %v", err)
				}
			}
			if n := failed.Load(); n > 0 {
				t.Errorf("%d of %d requests failed (the last: %v)", n, n+answered.Load(), lastFailure.Load())
			}
			want := answered.Load() + ownAnswers
			stored := func() int64 { return storedRequests(t, dbURL, ids, began) - storedBefore }
			waitFor(t, fmt.Sprintf("the portal to store the %d requests answered", want), func() bool { return stored() >= want })
			if got := stored(); got != want {
				t.Errorf("the portal stores %d requests, want the %d answered", got, want)
			}
		})
	}
}

// fleetSharesItsState checks, from outside, what three replicas sharing a
// Redis share: a listing refiled far cheaper with a cap of 10 a minute
// serves exactly 10 of 36 requests sent to the three at once (alone, each
// replica would have served 10: 30); a session opened on the first
// replica while that listing is capped stays with its listing on the
// other two a minute later, when the capped one is free again and wins
// every other request; and once the first replica alone has served the
// long prompts the rates are learned from, all three route by the same
// learned cache-hit rate (on their metrics endpoints).
//
// It returns how many requests it had answered (the portal stores them).
func fleetSharesItsState(t *testing.T, portal, token string, listings []catalogue.Listing, model string, urls, metrics []string) (answered int64) {
	t.Helper()
	var answers atomic.Int64
	chat := func(gw, prompt string, header ...string) (string, error) {
		served, err := chatVia(gw, model, prompt, header...)
		if served != "" {
			answers.Add(1)
		}
		return served, err
	}
	var filer *catalogue.Listing
	for i := range listings {
		l := &listings[i]
		if (l.CarrierSlug == "nebula" || l.CarrierSlug == "orbit") && len(l.Published.Tiers) == 0 && l.Published.TimeBased == nil {
			filer = l
			break
		}
	}
	if filer == nil {
		t.Fatalf("no nebula or orbit listing of %s the form can restate", model)
	}
	capped := filer.CarrierSlug + "/" + model
	cheaper := farCheaper(listings, filer)
	refile(t, portal, filer, func(v url.Values) {
		cheaper(v)
		v.Set("max_rpm", "10")
		v.Del("max_rpd")
	})
	var cat struct {
		Revision int64 `json:"revision"`
	}
	if err := getJSON(portal+"/api/v1/catalogue", token, &cat); err != nil || cat.Revision == 0 {
		t.Fatalf("the portal's catalogue: %v", err)
	}
	for _, u := range urls {
		waitFor(t, "every replica to route by the new fare", func() bool {
			var rev int64
			_, err := fmt.Sscanf(getText(t, u+"/healthz"), "ok: catalogue revision %d", &rev)
			return err == nil && rev >= cat.Revision
		})
	}

	// A minute's cap: every request in one UTC minute. The batch is sent
	// from the start of a minute; on a busy machine it may still run into
	// the next (the cap is free again there), which the test sees by the
	// clock and answers by sending the batch again in a fresh minute, not
	// by a verdict on two minutes' counts.
	nextMinute := func() { time.Sleep(time.Until(time.Now().Truncate(time.Minute).Add(time.Minute + time.Second))) }
	if left := time.Minute - time.Duration(time.Now().Second())*time.Second; left < 30*time.Second {
		nextMinute()
	}
	for attempt := 1; ; attempt++ {
		began := time.Now().UTC().Truncate(time.Minute)
		var (
			wg             sync.WaitGroup
			mu             sync.Mutex
			servedByCapped int
			unserved       []string
		)
		for _, u := range urls {
			wg.Add(1)
			go func() {
				defer wg.Done()
				for range 12 {
					served, err := chat(u, "hello")
					mu.Lock()
					switch {
					case err != nil || served == "":
						unserved = append(unserved, fmt.Sprint(err))
					case served == capped:
						servedByCapped++
					}
					mu.Unlock()
				}
			}()
		}
		wg.Wait()
		if ended := time.Now().UTC().Truncate(time.Minute); !ended.Equal(began) && attempt < 3 {
			t.Logf("the batch ran from %s into %s: sent again in a fresh minute", began.Format("15:04"), ended.Format("15:04"))
			nextMinute()
			continue
		}
		if servedByCapped != 10 || len(unserved) > 0 {
			t.Errorf("the fleet served %s (cap 10 a minute) %d times of 36 (want exactly 10); %d unserved: %v", capped, servedByCapped, len(unserved), unserved)
		}
		break
	}

	// A session opened on the first replica, while the capped listing
	// cannot take it.
	session := []string{"X-Session-Id", "fleet-session"}
	pinned, err := chat(urls[0], "hello", session...)
	if err != nil || pinned == "" || pinned == capped {
		t.Fatalf("the session's opening: served by %q (%v), want a listing other than the capped %s", pinned, err, capped)
	}
	// Long prompts the rates are learned from, through the first replica
	// alone.
	long := strings.Repeat("a shared prefix of a long prompt ", 200)
	for range 25 {
		if served, err := chat(urls[0], long); err != nil || served == "" {
			t.Fatalf("a long prompt: %q %v", served, err)
		}
	}
	// Past the minute (the cap is free again) and past each replica's 60 s
	// lookup of the learned rates (traffic.LearnedCacheFor); the first
	// replica has published its hours (every 5 s) by then.
	time.Sleep(traffic.LearnedCacheFor + time.Second)

	// At once, so that all three look the learned rates up before any of
	// these requests is published: the session's follow-ups on the other
	// two, a request on the first.
	follow := make([]string, 3)
	var wg sync.WaitGroup
	for i, u := range urls {
		wg.Add(1)
		go func() {
			defer wg.Done()
			if i == 0 {
				follow[i], _ = chat(u, "hello")
				return
			}
			follow[i], _ = chat(u, "hello", session...)
		}()
	}
	wg.Wait()
	if follow[1] != pinned || follow[2] != pinned {
		t.Errorf("the session opened on %s continued on %q and %q", pinned, follow[1], follow[2])
	}
	// A request outside the session goes to the capped listing, free
	// again: the follow-ups stayed by the session, not by the election.
	wins := 0
	for range 3 { // exploration sends 1 in 100 elsewhere
		if served, _ := chat(urls[1], "hello"); served == capped {
			wins++
		}
	}
	if wins == 0 {
		t.Errorf("%s, free again, won none of 3 requests outside the session", capped)
	}
	var rates []string
	for _, m := range metrics {
		rates = append(rates, learnedRate(t, m, "e2e", model))
	}
	if rates[0] == "" || rates[1] != rates[0] || rates[2] != rates[0] {
		t.Errorf("learned cache-hit rates on the three replicas: %q, want one rate, the same on all", rates)
	}
	return answers.Load()
}

// learnedRate reads a replica's learned cache-hit rate for a project's
// model off its metrics endpoint ("" when it has none).
func learnedRate(t *testing.T, addr, project, model string) string {
	t.Helper()
	prefix := fmt.Sprintf(`airside_gateway_learned_cache_hit_rate{model=%q,project=%q} `, model, project)
	for line := range strings.Lines(getText(t, "http://"+addr+"/metrics")) {
		if rest, ok := strings.CutPrefix(strings.TrimSpace(line), prefix); ok {
			return rest
		}
	}
	return ""
}
