package gateway

import (
	"bytes"
	"context"
	"fmt"
	"io"
	"net/http"
	"runtime"
	"strings"
	"sync"
	"sync/atomic"
	"testing"
	"time"
)

// hostileBytes is how much a hostile carrier sends at most, per stream:
// enough that a gateway holding it all is far past the bound below (20
// streams: 640 MiB), little enough that the test ends when it does.
const hostileBytes = 32 << 20

// hostileShape is one way a carrier can abuse a stream.
type hostileShape struct {
	name string
	// first is sent once, then repeat until hostileBytes or the gateway
	// hangs up; pause sleeps between repeats (0: as fast as it goes).
	first, repeat string
	pause         time.Duration
	// beforeToken: the stream broke before its first token, so the request
	// falls back and the caller is served whole by the next listing.
	beforeToken bool
	// why is what the caller's error event (or the log) names.
	why string
}

func pad(n int) string { return strings.Repeat("a", n) }

var tokenEvent = `data: {"choices":[{"index":0,"delta":{"role":"assistant","content":"Hi"}}]}` + "\n\n"

// The shapes the probe found (role-only events, endless tool-call
// arguments) and their neighbours (one endless event, endless comments, a
// stream that stalls, one that never ends).
var sizeShapes = []hostileShape{
	{name: "role-only events before any token", beforeToken: true, why: "before its first token",
		repeat: `data: {"choices":[{"index":0,"delta":{"role":"assistant"}}],"pad":"` + pad(8<<10) + `"}` + "\n\n"},
	{name: "endless tool-call arguments", why: "tool call's arguments past",
		repeat: `data: {"choices":[{"index":0,"delta":{"tool_calls":[{"index":0,"function":{"arguments":"` + pad(8<<10) + `"}}]}}]}` + "\n\n"},
	{name: "tool calls without end", why: "more than 64 tool calls",
		first: tokenEvent, repeat: ""}, // filled in by init: a new index each event
	{name: "one event that never ends", beforeToken: true, why: "event of more than",
		repeat: "data: " + pad(8<<10) + "\n"},
	{name: "comments without end", beforeToken: true, why: "event of more than",
		repeat: ": keep-alive " + pad(8<<10) + "\n"},
}

var timeShapes = []hostileShape{
	{name: "a stream that stalls after its first token", why: "sent no token for", first: tokenEvent,
		repeat: ": still here\n\n", pause: 50 * time.Millisecond},
	{name: "a stream that never ends", why: "deadline", first: tokenEvent,
		repeat: `data: {"choices":[{"index":0,"delta":{"content":"."}}]}` + "\n\n", pause: 20 * time.Millisecond},
}

// hostileCarrier answers every chat request with the shape's stream.
func hostileCarrier(s hostileShape) http.Handler {
	return http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		_, _ = io.Copy(io.Discard, r.Body)
		w.Header().Set("Content-Type", "text/event-stream")
		w.WriteHeader(http.StatusOK)
		flusher := w.(http.Flusher)
		_, _ = io.WriteString(w, s.first)
		flusher.Flush()
		for sent, i := 0, 0; sent < hostileBytes; i++ {
			ev := s.repeat
			if s.name == "tool calls without end" {
				ev = fmt.Sprintf(`data: {"choices":[{"index":0,"delta":{"tool_calls":[{"index":%d,"function":{"arguments":"{}"}}]}}]}`+"\n\n", i)
			}
			if _, err := io.WriteString(w, ev); err != nil {
				return // the gateway hung up
			}
			sent += len(ev)
			if s.pause > 0 {
				flusher.Flush()
				select {
				case <-time.After(s.pause):
				case <-r.Context().Done():
					return
				}
			}
		}
	})
}

const streamHello = `{"model":"m","stream":true,"messages":[{"role":"user","content":"hello"}]}`

// streamThrough sends one streamed request through the gateway.
func streamThrough(ctx context.Context, url string) (int, string, error) {
	req, _ := http.NewRequestWithContext(ctx, http.MethodPost, url+"/v1/chat/completions", strings.NewReader(streamHello))
	req.Header.Set("Authorization", "Bearer "+projectKey)
	req.Header.Set("Content-Type", "application/json")
	res, err := http.DefaultClient.Do(req)
	if err != nil {
		return 0, "", err
	}
	defer res.Body.Close()
	b, err := io.ReadAll(res.Body)
	return res.StatusCode, string(b), err
}

func hostileHarness(t *testing.T, s hostileShape) *harness {
	specs := threeCarriers()[:2]
	specs[0].handler = hostileCarrier(s)
	return newHarness(t, specs...)
}

// checkCut asserts what the caller got from one hostile stream and that it
// was counted against the hostile carrier.
func checkCut(t *testing.T, h *harness, s hostileShape, status int, body string, streams int64) {
	t.Helper()
	if status != http.StatusOK {
		t.Fatalf("status %d: %.300s", status, body)
	}
	if s.beforeToken {
		if !strings.HasSuffix(strings.TrimSpace(body), "data: [DONE]") || strings.Contains(body, "stream_broken") {
			t.Errorf("a stream that broke a limit before its first token should fall back whole to the next listing: %.300s", body)
		}
	} else if !strings.Contains(body, "stream_broken") || !strings.Contains(body, s.why) || strings.Contains(body, "[DONE]") {
		t.Errorf("the caller should get the tokens, then an error event naming %q: %.300s", s.why, body)
	}
	if got := h.gw.Recorder.Totals()[1].Errors; got != streams {
		t.Errorf("the hostile carrier's counted failures: %d, want %d", got, streams)
	}
}

// TestHostileStreamsAreCutAndCounted: each shape is ended by the gateway
// and counted as the carrier's failure; before its first token the request
// falls back to the next listing.
func TestHostileStreamsAreCutAndCounted(t *testing.T) {
	for _, s := range append(append([]hostileShape{}, sizeShapes...), timeShapes...) {
		t.Run(s.name, func(t *testing.T) {
			h := hostileHarness(t, s)
			h.gw.StreamLimits = StreamLimits{MaxGap: 300 * time.Millisecond, Deadline: 2 * time.Second}
			if s.why == "sent no token for" {
				h.gw.StreamLimits.Deadline = time.Minute
			}
			status, body, err := streamThrough(context.Background(), h.srv.URL)
			if err != nil {
				t.Fatal(err)
			}
			checkCut(t, h, s, status, body, 1)
		})
	}
}

// maxHeapDuring samples the heap in use while run runs and returns its
// peak above what was in use before.
func maxHeapDuring(run func()) uint64 {
	runtime.GC()
	var ms runtime.MemStats
	runtime.ReadMemStats(&ms)
	base := ms.HeapInuse
	var peak atomic.Uint64
	done := make(chan struct{})
	sampled := make(chan struct{})
	go func() {
		defer close(sampled)
		tick := time.NewTicker(5 * time.Millisecond)
		defer tick.Stop()
		for {
			var ms runtime.MemStats
			runtime.ReadMemStats(&ms)
			if ms.HeapInuse > peak.Load() {
				peak.Store(ms.HeapInuse)
			}
			select {
			case <-done:
				return
			case <-tick.C:
			}
		}
	}()
	run()
	close(done)
	<-sampled
	if peak.Load() < base {
		return 0
	}
	return peak.Load() - base
}

// streamMemoryBound is what 20 concurrent hostile streams may add to the
// gateway's heap (the README's security table states it): about 4 MiB a
// stream held (StreamLimits), as much again for garbage not yet collected,
// and the test's own carriers and clients.
const streamMemoryBound = 160 << 20

// TestTwentyHostileStreamsStayWithinTheMemoryBound runs 20 concurrent
// streams of each shape that sends as fast as it can and measures the heap:
// before the limits, one shape alone held every byte its carrier sent.
func TestTwentyHostileStreamsStayWithinTheMemoryBound(t *testing.T) {
	for _, s := range sizeShapes {
		t.Run(s.name, func(t *testing.T) {
			h := hostileHarness(t, s)
			var wg sync.WaitGroup
			var mu sync.Mutex
			var failures []string
			const streams = 20
			grew := maxHeapDuring(func() {
				for range streams {
					wg.Add(1)
					go func() {
						defer wg.Done()
						status, body, err := streamThrough(context.Background(), h.srv.URL)
						mu.Lock()
						defer mu.Unlock()
						if err != nil || status != http.StatusOK {
							failures = append(failures, fmt.Sprintf("%d %v %.200s", status, err, body))
						}
					}()
				}
				wg.Wait()
			})
			for _, f := range failures {
				t.Errorf("a request through the gateway: %s", f)
			}
			t.Logf("heap grew by %.1f MiB at its peak", float64(grew)/(1<<20))
			if grew > streamMemoryBound {
				t.Errorf("20 hostile streams took the heap %.1f MiB above where it was, past the bound of %d MiB",
					float64(grew)/(1<<20), streamMemoryBound>>20)
			}
			if got := h.gw.Recorder.Totals()[1].Errors; got != streams {
				t.Errorf("the hostile carrier's counted failures: %d, want %d", got, streams)
			}
		})
	}
}

// TestAnOrdinaryStreamIsNotCut: the limits leave a real stream alone, tool
// calls with JSON arguments included.
func TestAnOrdinaryStreamIsNotCut(t *testing.T) {
	h := newHarness(t, threeCarriers()...)
	h.gw.StreamLimits = StreamLimits{MaxGap: 5 * time.Second}
	res := h.chat(`{"model":"m","stream":true,"stream_options":{"include_usage":true},"messages":[{"role":"user","content":"hello there, how are you"}]}`)
	if res.status != http.StatusOK || !strings.HasSuffix(strings.TrimSpace(res.body), "data: [DONE]") || strings.Contains(res.body, "stream_broken") {
		t.Fatalf("an ordinary stream: %d %s", res.status, res.body)
	}
	if got := h.gw.Recorder.Totals()[1].Errors; got != 0 {
		t.Errorf("counted failures of an ordinary stream: %d", got)
	}
	if !bytes.Contains([]byte(res.body), []byte(`"usage"`)) {
		t.Errorf("the usage the caller asked for is missing: %s", res.body)
	}
}
