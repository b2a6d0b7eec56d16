package web_test

import (
	"fmt"
	"net/http"
	"strings"
	"sync"
	"sync/atomic"
	"testing"
	"time"

	"github.com/airside/airside/internal/apitoken"
)

// TestRoutingAnswersThroughAnOutageUnderLoad: gateways keep electing and
// reading the catalogue while PostgreSQL goes away in the middle of the run
// and comes back; with a snapshot in memory, not one routing answer fails.
func TestRoutingAnswersThroughAnOutageUnderLoad(t *testing.T) {
	tp := newTwoProcesses(t)
	// Four workers call as fast as the portal answers with one token each,
	// far past a gateway's pace: this test is about the outage, not the
	// quotas (TestAPIRateLimitHeaders), so they are lifted.
	tp.a.APILimits, tp.b.APILimits = nil, nil
	outage := pgOutage(t, tp.dbURL)
	electTok := apiToken(t, tp.stA, apitoken.ScopeElect)
	readTok := apiToken(t, tp.stA, apitoken.ScopeCatalogueRead)
	calls := []struct {
		method, path, token, body string
	}{
		{"POST", "/api/v1/elect", electTok, `{"model":"kimi-k2.5"}`},
		{"POST", "/api/v1/elect/winner", electTok, `{"model":"kimi-k2.5"}`},
		{"GET", "/api/v1/catalogue", readTok, ""},
	}
	for _, base := range []string{tp.srvA.URL, tp.srvB.URL} { // warm: the snapshots are in memory
		for _, c := range calls {
			wantStatus(t, "warm "+c.path, apiCall(t, base, c.method, c.path, c.token, c.body), http.StatusOK)
		}
	}

	stop := make(chan struct{})
	var answered atomic.Int64
	var mu sync.Mutex
	var failures []string
	var wg sync.WaitGroup
	client := &http.Client{Timeout: 20 * time.Second}
	for w := range 4 {
		wg.Add(1)
		go func() {
			defer wg.Done()
			for i := 0; ; i++ {
				select {
				case <-stop:
					return
				default:
				}
				c := calls[(w+i)%len(calls)]
				base := []string{tp.srvA.URL, tp.srvB.URL}[(w+i)%2] // B learns of changes through LISTEN
				req, _ := http.NewRequest(c.method, base+c.path, strings.NewReader(c.body))
				req.Header.Set("Authorization", "Bearer "+c.token)
				req.Header.Set("Content-Type", "application/json")
				res, err := client.Do(req)
				if err == nil {
					res.Body.Close()
				}
				if err != nil || res.StatusCode != http.StatusOK {
					mu.Lock()
					failures = append(failures, fmt.Sprintf("%s %s: %v %v", c.method, c.path, err, res.StatusCode))
					mu.Unlock()
					continue
				}
				answered.Add(1)
			}
		}()
	}
	waitAnswers := func(n int64) {
		t.Helper()
		target := answered.Load() + n
		deadline := time.Now().Add(60 * time.Second)
		for answered.Load() < target {
			if time.Now().After(deadline) {
				t.Fatalf("only %d answers", answered.Load())
			}
			time.Sleep(5 * time.Millisecond)
		}
	}
	waitAnswers(100)
	outage(true)
	// Longer than a health refresh (5 s), so refreshes fail during it.
	outageEnds := time.Now().Add(7 * time.Second)
	for time.Now().Before(outageEnds) {
		waitAnswers(50)
	}
	if err := tp.stA.Ping(t.Context()); err == nil {
		t.Error("the database still answered during the outage: the test proves nothing")
	}
	outage(false)
	waitAnswers(100)
	close(stop)
	wg.Wait()
	for _, f := range failures {
		t.Errorf("a routing call failed around the outage: %s", f)
	}
}
