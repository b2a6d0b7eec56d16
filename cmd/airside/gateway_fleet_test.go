package main

import (
	"fmt"
	"net"
	"net/http"
	"os"
	"os/exec"
	"path/filepath"
	"strings"
	"sync/atomic"
	"syscall"
	"testing"
	"time"

	"github.com/airside/airside/internal/store"
	"github.com/airside/airside/internal/store/storetest"
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
			dir, portal, config, dbURL, token := gatewayFixtureOn(t, dbURL)
			const model = "kimi-k2.5"
			var ids []int64
			for _, l := range modelListings(t, dbURL, model) {
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
				return third.inFlight.Load() == 0 && int64(answeredCount(third.metrics)) == third.answered.Load()
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
			want := answered.Load()
			stored := func() int64 { return storedRequests(t, dbURL, ids, began) - storedBefore }
			waitFor(t, fmt.Sprintf("the portal to store the %d requests answered", want), func() bool { return stored() >= want })
			if got := stored(); got != want {
				t.Errorf("the portal stores %d requests, want the %d answered", got, want)
			}
		})
	}
}
