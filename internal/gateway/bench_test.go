package gateway

import (
	"context"
	"fmt"
	"io"
	"log"
	"net/http"
	"net/http/httptest"
	"net/http/httputil"
	"net/url"
	"slices"
	"strings"
	"sync"
	"sync/atomic"
	"testing"
	"time"

	"github.com/redis/go-redis/v9"

	"github.com/airside/airside/internal/fleet"
	"github.com/airside/airside/internal/fleet/fleettest"
)

// BenchmarkGatewayOverhead measures what the gateway adds to a request: the
// same chat request sent straight to a fake carrier and through the gateway
// (its election, traffic rules, the OpenAI client to the carrier and the
// relay), alternated in one loop so both see the same machine. It reports
// each path's p50 and p99 and the added p50 and p99 in microseconds. The
// carrier answers at once (no model behind it), so the figures are the
// gateway's own cost, not a share of a real answer's seconds.
func BenchmarkGatewayOverhead(b *testing.B) {
	for _, stream := range []bool{false, true} {
		name := "non-streaming"
		body := hello
		if stream {
			name = "streaming"
			body = `{"model":"m","stream":true,"messages":[{"role":"user","content":"hello"}]}`
		}
		b.Run(name, func(b *testing.B) {
			h := newHarness(b, threeCarriers()...)
			carrier := h.portal.keys[1] // a, the winner
			direct := strings.Replace(body, `"model":"m"`, `"model":"up-m"`, 1)
			send := func(url, key, body string) time.Duration { return timedPost(b, http.DefaultClient, url, key, body) }
			var straight, through []time.Duration
			b.ResetTimer()
			for b.Loop() {
				straight = append(straight, send(carrier[0]+"/chat/completions", carrier[1], direct))
				through = append(through, send(h.srv.URL+"/v1/chat/completions", projectKey, body))
			}
			b.StopTimer()
			p := func(ds []time.Duration, q float64) float64 {
				s := slices.Clone(ds)
				slices.Sort(s)
				return float64(s[min(len(s)-1, int(q*float64(len(s))))].Microseconds())
			}
			b.ReportMetric(p(straight, 0.5), "direct-p50-µs")
			b.ReportMetric(p(straight, 0.99), "direct-p99-µs")
			b.ReportMetric(p(through, 0.5), "gateway-p50-µs")
			b.ReportMetric(p(through, 0.99), "gateway-p99-µs")
			b.ReportMetric(p(through, 0.5)-p(straight, 0.5), "added-p50-µs")
			b.ReportMetric(p(through, 0.99)-p(straight, 0.99), "added-p99-µs")
		})
	}
}

// timedPost posts a chat body with a key and reads the answer to its end,
// and returns how long that took; anything but a 200 fails the benchmark
// (Error, not Fatal: the throughput runs call it from their own
// goroutines).
func timedPost(b *testing.B, client *http.Client, url, key, body string) time.Duration {
	req, _ := http.NewRequest(http.MethodPost, url, strings.NewReader(body))
	req.Header.Set("Authorization", "Bearer "+key)
	req.Header.Set("Content-Type", "application/json")
	start := time.Now()
	res, err := client.Do(req)
	if err != nil {
		b.Error(err)
		return 0
	}
	_, _ = io.Copy(io.Discard, res.Body)
	res.Body.Close()
	if res.StatusCode != http.StatusOK {
		b.Errorf("status %d from %s", res.StatusCode, url)
	}
	return time.Since(start)
}

// countingHook counts the commands a Redis client sends and the round
// trips they take (a pipeline is one).
type countingHook struct{ commands, trips atomic.Int64 }

func (c *countingHook) DialHook(next redis.DialHook) redis.DialHook { return next }

func (c *countingHook) ProcessHook(next redis.ProcessHook) redis.ProcessHook {
	return func(ctx context.Context, cmd redis.Cmder) error {
		c.commands.Add(1)
		c.trips.Add(1)
		return next(ctx, cmd)
	}
}

func (c *countingHook) ProcessPipelineHook(next redis.ProcessPipelineHook) redis.ProcessPipelineHook {
	return func(ctx context.Context, cmds []redis.Cmder) error {
		c.commands.Add(int64(len(cmds)))
		c.trips.Add(1)
		return next(ctx, cmds)
	}
}

// BenchmarkFleetStateOverhead is what sharing the fleet's state in Redis
// (rate caps, sessions, incumbents) adds to a request against a replica
// keeping them in memory: the two replicas of one harness, requests to
// each interleaved (a quarter carrying a session, the winner capped so its
// cap is counted), medians and 99th percentiles of each, and Redis round
// trips per request.
func BenchmarkFleetStateOverhead(b *testing.B) {
	client := fleettest.Redis(b)
	hook := &countingHook{}
	client.AddHook(hook)
	prefix := fleettest.Prefix(b, client)
	capped := int64(1 << 40)
	specs := threeCarriers()
	specs[0].maxRpm = &capped
	h := newHarness(b, specs...)
	shared := h.replica(b, &fleet.State{Client: client, Prefix: prefix, Timeout: time.Second})
	var local, redisState []time.Duration
	before := hook.trips.Load()
	i := 0
	b.ResetTimer()
	for b.Loop() {
		local = append(local, timedChat(b, h.srv.URL, i))
		redisState = append(redisState, timedChat(b, shared.URL, i))
		i++
	}
	b.StopTimer()
	reportPair(b, "memory", local, "redis", redisState)
	b.ReportMetric(float64(hook.trips.Load()-before)/float64(max(i, 1)), "redis-trips/req")
}

// BenchmarkSpoolOverhead is what keeping every count in the spool adds to
// a request: a replica with a spool and one without, on one harness,
// requests to each interleaved; medians and 99th percentiles of each.
func BenchmarkSpoolOverhead(b *testing.B) {
	h := newHarness(b, threeCarriers()...)
	spool, err := OpenSpool(b.TempDir(), "bench")
	if err != nil {
		b.Fatal(err)
	}
	defer spool.Close()
	h.gw.Recorder.Spool = spool
	plain := h.replica(b, nil)
	var without, with []time.Duration
	b.ResetTimer()
	for i := 0; b.Loop(); i++ {
		without = append(without, timedChat(b, plain.URL, i))
		with = append(with, timedChat(b, h.srv.URL, i))
	}
	b.StopTimer()
	reportPair(b, "memory", without, "spool", with)
}

// timedChat sends one chat request (a quarter with a session) and times it.
func timedChat(b *testing.B, base string, i int) time.Duration {
	req, _ := http.NewRequest(http.MethodPost, base+"/v1/chat/completions", strings.NewReader(hello))
	req.Header.Set("Authorization", "Bearer "+projectKey)
	req.Header.Set("Content-Type", "application/json")
	if i%4 == 0 {
		req.Header.Set("X-Session-Id", fmt.Sprint("s", i%64))
	}
	start := time.Now()
	res, err := http.DefaultClient.Do(req)
	if err != nil {
		b.Fatal(err)
	}
	_, _ = io.Copy(io.Discard, res.Body)
	res.Body.Close()
	if res.StatusCode != http.StatusOK {
		b.Fatalf("status %d from %s", res.StatusCode, base)
	}
	return time.Since(start)
}

// reportPair reports two interleaved paths' medians and 99th percentiles
// and what the second adds at the median.
func reportPair(b *testing.B, baseName string, base []time.Duration, name string, other []time.Duration) {
	p := func(ds []time.Duration, q float64) float64 {
		s := slices.Clone(ds)
		slices.Sort(s)
		return float64(s[min(len(s)-1, int(q*float64(len(s))))].Microseconds())
	}
	b.ReportMetric(p(base, 0.5), baseName+"-p50-µs")
	b.ReportMetric(p(other, 0.5), name+"-p50-µs")
	b.ReportMetric(p(base, 0.99), baseName+"-p99-µs")
	b.ReportMetric(p(other, 0.99), name+"-p99-µs")
	b.ReportMetric(p(other, 0.5)-p(base, 0.5), "added-p50-µs")
}

// BenchmarkGatewayAgainstReverseProxy puts the gateway beside what a
// platform team would otherwise run: a bare httputil.ReverseProxy in front
// of the same instant fake carrier, and the carrier called directly, in
// one run. Latency: the three paths alternated one request at a time (so
// all see the same machine), their p50s and what each front adds. Then
// throughput: eight callers at once through each front in turn for the
// same number of requests. It reports the gateway's added p50 over the
// proxy's (added-p50-ratio, the mark is at most 1.3) and its
// throughput over the proxy's (throughput-ratio, at least 0.85).
func BenchmarkGatewayAgainstReverseProxy(b *testing.B) {
	for _, stream := range []bool{false, true} {
		name := "non-streaming"
		body := hello
		if stream {
			name = "streaming"
			body = `{"model":"m","stream":true,"stream_options":{"include_usage":true},"messages":[{"role":"user","content":"hello"}]}`
		}
		b.Run(name, func(b *testing.B) {
			// An instant carrier (no pacing between tokens), so the
			// figures are the fronts' own cost.
			specs := threeCarriers()
			for i := range specs {
				specs[i].server.TokensPerSecond = 1e9
			}
			h := newHarness(b, specs...)
			carrier := h.portal.keys[1] // a, the winner
			direct := strings.Replace(body, `"model":"m"`, `"model":"up-m"`, 1)
			target, err := url.Parse(carrier[0])
			if err != nil {
				b.Fatal(err)
			}
			// The bare proxy: the path and the key set, nothing else.
			proxy := httptest.NewServer(&httputil.ReverseProxy{Rewrite: func(r *httputil.ProxyRequest) {
				r.SetURL(target)
				r.Out.URL.Path = target.Path + "/chat/completions"
				r.Out.Header.Set("Authorization", "Bearer "+carrier[1])
			}, ErrorLog: log.New(io.Discard, "", 0)})
			defer proxy.Close()
			client := &http.Client{Transport: &http.Transport{MaxIdleConnsPerHost: 64}}
			send := func(url, key, body string) time.Duration { return timedPost(b, client, url, key, body) }
			paths := []struct {
				url, key, body string
			}{
				{carrier[0] + "/chat/completions", carrier[1], direct},
				{proxy.URL + "/v1/chat/completions", "caller", direct},
				{h.srv.URL + "/v1/chat/completions", projectKey, body},
			}
			lat := make([][]time.Duration, len(paths))
			b.ResetTimer()
			for b.Loop() {
				for i, p := range paths {
					lat[i] = append(lat[i], send(p.url, p.key, p.body))
				}
			}
			b.StopTimer()
			p50 := func(ds []time.Duration) float64 {
				s := slices.Clone(ds)
				slices.Sort(s)
				return float64(s[len(s)/2].Nanoseconds()) / 1e3
			}
			// Throughput: the same number of requests through each front,
			// eight at a time.
			const callers = 8
			n := max(b.N, 200)
			rate := func(p int) float64 {
				var next atomic.Int64
				start := time.Now()
				var wg sync.WaitGroup
				for range callers {
					wg.Go(func() {
						for next.Add(1) <= int64(n) {
							send(paths[p].url, paths[p].key, paths[p].body)
						}
					})
				}
				wg.Wait()
				return float64(n) / time.Since(start).Seconds()
			}
			proxyRate, gatewayRate := rate(1), rate(2)
			proxyAdded, gatewayAdded := p50(lat[1])-p50(lat[0]), p50(lat[2])-p50(lat[0])
			b.ReportMetric(p50(lat[0]), "direct-p50-µs")
			b.ReportMetric(proxyAdded, "proxy-added-p50-µs")
			b.ReportMetric(gatewayAdded, "gateway-added-p50-µs")
			b.ReportMetric(gatewayAdded/max(proxyAdded, 1), "added-p50-ratio")
			b.ReportMetric(proxyRate, "proxy-req/s")
			b.ReportMetric(gatewayRate, "gateway-req/s")
			b.ReportMetric(gatewayRate/proxyRate, "throughput-ratio")
		})
	}
}
