package web_test

import (
	"context"
	"encoding/json"
	"io"
	"log/slog"
	"net/http"
	"net/http/httptest"
	"strconv"
	"sync"
	"sync/atomic"
	"testing"
	"time"

	"github.com/airside/airside/cmd/airside/wire"
	"github.com/airside/airside/internal/apitoken"
	"github.com/airside/airside/internal/store"
	"github.com/airside/airside/web"
)

// TestGatewayPollsThroughARollingRestart: two serve processes on one
// PostgreSQL database are restarted one after the other (drain, stop, start
// anew) while publications keep coming and a gateway long-polls through a
// load balancer that sends each poll to the first process whose /readyz
// says ready. The gateway sees no error, its revision never goes back, and
// it ends at the database's revision.
func TestGatewayPollsThroughARollingRestart(t *testing.T) {
	tp := newTwoProcesses(t)
	ctx := context.Background()
	tok := apiToken(t, tp.stA, apitoken.ScopeCatalogueRead)
	admin, err := tp.stA.FindUserByEmail(ctx, "admin@airside.example")
	if err != nil {
		t.Fatal(err)
	}
	ids := listingIDs(t, tp.stA)

	// The load balancer's pool: the processes in rotation, in order.
	var mu sync.Mutex
	pool := []string{tp.srvA.URL, tp.srvB.URL}
	ready := func(base string) bool {
		res, err := http.Get(base + "/readyz")
		if err != nil {
			return false
		}
		res.Body.Close()
		return res.StatusCode == http.StatusOK
	}
	pick := func() string {
		mu.Lock()
		candidates := append([]string(nil), pool...)
		mu.Unlock()
		for _, base := range candidates {
			if ready(base) {
				return base
			}
		}
		return ""
	}

	stop := make(chan struct{})
	type seen struct {
		revision int64
		failures []string
	}
	gateway := make(chan seen, 1)
	var latest atomic.Int64
	go func() {
		var got seen
		client := &http.Client{Timeout: 30 * time.Second}
		for {
			select {
			case <-stop:
				gateway <- got
				return
			default:
			}
			base := pick()
			if base == "" {
				got.failures = append(got.failures, "no process ready")
				time.Sleep(50 * time.Millisecond)
				continue
			}
			req, _ := http.NewRequest(http.MethodGet, base+"/api/v1/catalogue/changes?wait=2s&since="+strconv.FormatInt(got.revision, 10), nil)
			req.Header.Set("Authorization", "Bearer "+tok)
			res, err := client.Do(req)
			if err != nil {
				got.failures = append(got.failures, err.Error())
				continue
			}
			var body struct {
				Revision int64 `json:"revision"`
			}
			err = json.NewDecoder(res.Body).Decode(&body)
			res.Body.Close()
			switch {
			case res.StatusCode != http.StatusOK || err != nil:
				got.failures = append(got.failures, res.Status)
			case body.Revision < got.revision:
				got.failures = append(got.failures, "revision went back from "+strconv.FormatInt(got.revision, 10)+" to "+strconv.FormatInt(body.Revision, 10))
			default:
				got.revision = body.Revision
				latest.Store(body.Revision)
			}
		}
	}()

	publish := func(n int) {
		t.Helper()
		for i := range n {
			if err := tp.stA.SetListingPriority(ctx, admin.ID, ids["nebula"][0], int64(20000+i%2)); err != nil {
				t.Fatal(err)
			}
			time.Sleep(20 * time.Millisecond)
		}
	}
	quiet := slog.New(slog.NewTextHandler(io.Discard, nil))
	servers := []*web.Server{tp.a, tp.b}
	https := []*httptest.Server{tp.srvA, tp.srvB}
	stores := []*store.Store{tp.stA, tp.stB}
	// restart is one step of the rolling deploy: drain process i (readyz
	// 503, its held polls answered), let the balancer move on while
	// publications go on, stop it once its requests finished, and start its
	// replacement on the same database.
	restart := func(i int) {
		t.Helper()
		servers[i].Drain()
		publish(3)
		https[i].Close() // waits for requests in flight
		servers[i] = wire.Portal(stores[i], wire.Config{Log: quiet})
		https[i] = httptest.NewServer(servers[i].Handler())
		t.Cleanup(https[i].Close)
		mu.Lock()
		pool[i] = https[i].URL
		mu.Unlock()
		publish(3)
	}
	publish(5)
	restart(0)
	restart(1)
	publish(3)
	want, err := tp.stA.CatalogueRevision(ctx)
	if err != nil {
		t.Fatal(err)
	}
	// The gateway catches up with the last publication.
	deadline := time.Now().Add(30 * time.Second)
	for latest.Load() < want && time.Now().Before(deadline) {
		time.Sleep(20 * time.Millisecond)
	}
	close(stop)
	got := <-gateway
	for _, f := range got.failures {
		t.Errorf("the gateway saw a failure during the rolling restart: %s", f)
	}
	if got.revision != want {
		t.Errorf("the gateway ended at revision %d, the database is at %d", got.revision, want)
	}
}
