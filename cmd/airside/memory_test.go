package main

import (
	"bufio"
	"bytes"
	"context"
	"fmt"
	"io"
	"net/http"
	"path/filepath"
	"strconv"
	"strings"
	"sync"
	"sync/atomic"
	"testing"
	"time"

	"github.com/airside/airside/internal/apitoken"
	"github.com/airside/airside/internal/catalogue"
	"github.com/airside/airside/internal/procmem"
	"github.com/airside/airside/internal/secret"
	"github.com/airside/airside/internal/store"
)

// TestServeStaysUnderItsMemoryBoundThroughAnIngestBurst: serve, started
// with a GOMEMLIMIT, takes a fleet's burst of metric batches through the
// inbox (eight gateways posting at once, as fast as it answers); its
// resident memory, at its peak during the burst and once the inbox is
// folded, stays under the bound the deploy documents give, GOMEMLIMIT +
// procmem.HeadroomMB. The burst carries more buckets than the bound's
// room if serve kept a few hundred bytes of each, so memory that grew
// with the buckets (a queue without back-pressure, a cache of what was
// folded) breaks it.
func TestServeStaysUnderItsMemoryBoundThroughAnIngestBurst(t *testing.T) {
	const (
		limit    = "48MiB"
		posters  = 8
		perBatch = 1000
		buckets  = 500_000
	)
	t.Setenv("AIRSIDE_LOG_LEVEL", "error")
	dir := t.TempDir()
	dbURL := "sqlite:" + filepath.Join(dir, "airside.db")
	token := seededWithScopes(t, dbURL, apitoken.ScopeMetricsWrite, apitoken.ScopeMetricsRead)
	st, err := store.Open(context.Background(), dbURL)
	if err != nil {
		t.Fatal(err)
	}
	listings, err := st.FindListings(context.Background(), catalogue.ListingFilter{Published: true})
	st.Close()
	if err != nil || len(listings) == 0 {
		t.Fatalf("listings: %d, %v", len(listings), err)
	}
	addr := freeAddr(t)
	portal := "http://" + addr
	serve := airsideProcess(t, []string{"GOMEMLIMIT=" + limit, "AIRSIDE_LOG_LEVEL=error", "AIRSIDE_SECRET_KEY=" + secret.NewKey()}, nil,
		"serve", "--addr", addr, "--database", dbURL)
	waitFor(t, "serve to answer /readyz", func() bool { return status(portal+"/readyz", "") == http.StatusOK })
	limitMB, err := procmem.ParseLimit(limit)
	if err != nil {
		t.Fatal(err)
	}
	bound := procmem.BoundMB(limitMB)
	before, _, err := procmem.Resident(serve.Process.Pid)
	if err != nil {
		t.Fatal(err)
	}

	// The posters take the burst's buckets in batches, and post again after
	// a 503's Retry-After (the inbox's back-pressure), as a gateway does.
	now := time.Now().UTC().Truncate(time.Minute)
	var next, backPressured atomic.Int64
	var wg sync.WaitGroup
	failures := make(chan error, posters)
	client := &http.Client{Timeout: time.Minute}
	for range posters {
		wg.Go(func() {
			for {
				first := next.Add(perBatch) - perBatch
				if first >= buckets {
					return
				}
				body := burstBatch(listings, now, first, perBatch)
				for {
					req, _ := http.NewRequest(http.MethodPost, portal+"/api/v1/metrics", bytes.NewReader(body))
					req.Header.Set("Authorization", "Bearer "+token)
					req.Header.Set("Content-Type", "application/json")
					req.Header.Set("Prefer", "respond-async")
					res, err := client.Do(req)
					if err != nil {
						failures <- err
						return
					}
					answer, _ := io.ReadAll(res.Body)
					res.Body.Close()
					if res.StatusCode == http.StatusServiceUnavailable && res.Header.Get("Retry-After") != "" {
						backPressured.Add(1)
						wait, _ := strconv.Atoi(res.Header.Get("Retry-After"))
						time.Sleep(time.Duration(max(wait, 1)) * time.Second)
						continue
					}
					if res.StatusCode >= 300 {
						failures <- fmt.Errorf("a batch answered %d: %s", res.StatusCode, answer)
						return
					}
					break
				}
			}
		})
	}
	wg.Wait()
	close(failures)
	for err := range failures {
		t.Fatal(err)
	}
	// Folding 500,000 buckets takes about a minute on an idle 2-core
	// machine and more beside the other packages' tests: the wait gives up
	// only when the inbox stops shrinking for two minutes, not at a fixed
	// time (a fixed two minutes failed a clean-clone run).
	last, deadline := -1.0, time.Now().Add(2*time.Minute)
	for {
		waiting, ok := inboxWaiting(client, portal, token)
		if ok && waiting == 0 {
			break
		}
		if ok && (last < 0 || waiting < last) {
			last, deadline = waiting, time.Now().Add(2*time.Minute)
		}
		if time.Now().After(deadline) {
			t.Fatalf("gave up waiting for the inbox to be folded: %v batches waiting, none folded for two minutes", last)
		}
		time.Sleep(100 * time.Millisecond)
	}
	rss, peak, err := procmem.Resident(serve.Process.Pid)
	if err != nil {
		t.Fatal(err)
	}
	t.Logf("%d buckets in batches of %d from %d posters (%d answered 503 and were posted again); serve under GOMEMLIMIT %s: %.0f MB before, peak %.0f MB, %.0f MB once folded; bound %.0f MB",
		buckets, perBatch, posters, backPressured.Load(), limit, before, peak, rss, bound)
	if peak > bound {
		t.Errorf("serve's memory peaked at %.0f MB during the burst, over its bound of %.0f MB (GOMEMLIMIT %s + %d MB)", peak, bound, limit, procmem.HeadroomMB)
	}
	if rss > bound {
		t.Errorf("serve held %.0f MB once the burst was folded, over its bound of %.0f MB", rss, bound)
	}
}

// burstBatch is a metrics batch of n buckets from the burst's bucket
// first on: bucket k is listing k mod len(listings) at a minute of the last
// 24 hours, under a source of its own for each time round the day (a
// bucket is a listing, a minute and a source).
func burstBatch(listings []catalogue.Listing, now time.Time, first, n int64) []byte {
	out := make([]byte, 0, 64+n*300)
	out = append(out, `{"buckets":[`...)
	perSource := int64(len(listings)) * 24 * 60
	for k := first; k < first+n; k++ {
		l := listings[k%int64(len(listings))]
		minute := now.Add(-time.Duration(1+(k%perSource)/int64(len(listings))) * time.Minute)
		requests := 20 + k%50
		if k > first {
			out = append(out, ',')
		}
		out = fmt.Appendf(out, `{"listingId":%d,"minute":%q,"source":"memory-burst-%d","requests":%d,"errors":1,"ttftMsSum":%d,"outputTokens":%d,"durationMs":%d,"inputTokens":%d,"cachedInputTokens":%d,"routed":%d,"exploration":1}`,
			l.ID, minute.Format(time.RFC3339), k/perSource, requests, (requests-1)*400, (requests-1)*300, (requests-1)*5000, requests*4000, requests*1000, requests-2)
	}
	return append(out, `]}`...)
}

// inboxWaiting reads the metric batches waiting in serve's inbox from its
// Prometheus metrics.
func inboxWaiting(client *http.Client, portal, token string) (float64, bool) {
	req, _ := http.NewRequest(http.MethodGet, portal+"/metrics", nil)
	req.Header.Set("Authorization", "Bearer "+token)
	res, err := client.Do(req)
	if err != nil {
		return 0, false
	}
	defer res.Body.Close()
	lines := bufio.NewScanner(res.Body)
	for lines.Scan() {
		if value, ok := strings.CutPrefix(lines.Text(), "airside_metric_inbox_waiting "); ok {
			n, err := strconv.ParseFloat(value, 64)
			return n, err == nil
		}
	}
	return 0, false
}
