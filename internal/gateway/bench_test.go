package gateway

import (
	"io"
	"net/http"
	"slices"
	"strings"
	"testing"
	"time"
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
			send := func(url, key, body string) time.Duration {
				req, _ := http.NewRequest(http.MethodPost, url, strings.NewReader(body))
				req.Header.Set("Authorization", "Bearer "+key)
				req.Header.Set("Content-Type", "application/json")
				start := time.Now()
				res, err := http.DefaultClient.Do(req)
				if err != nil {
					b.Fatal(err)
				}
				_, _ = io.Copy(io.Discard, res.Body)
				res.Body.Close()
				if res.StatusCode != http.StatusOK {
					b.Fatalf("status %d from %s", res.StatusCode, url)
				}
				return time.Since(start)
			}
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
