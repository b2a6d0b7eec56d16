package gateway

import (
	"bufio"
	"context"
	"io"
	"net/http"
	"strings"
	"sync/atomic"
	"testing"
	"time"
)

// TestACallerWhoHangsUpIsNotTheCarriersFailure: a caller that drops a
// stream partway, or gives up before the answer, is a 499 counted as the
// caller's (clientErrors), never as the carrier's error (it was counted
// against the carrier before).
func TestACallerWhoHangsUpIsNotTheCarriersFailure(t *testing.T) {
	for _, test := range []struct {
		name   string
		stream bool
	}{{"a stream dropped after its first token", true}, {"a caller that gives up before the answer", false}} {
		t.Run(test.name, func(t *testing.T) {
			specs := threeCarriers()
			specs[0].server.TokensPerSecond = 5 // long enough to hang up in
			var arrived atomic.Int64
			if !test.stream {
				// A carrier that answers only once the gateway gives up on it.
				specs[0].handler = http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
					_, _ = io.Copy(io.Discard, r.Body) // so the server notices a hang-up
					arrived.Add(1)
					<-r.Context().Done()
				})
			}
			h := newHarness(t, specs...)
			ctx, hangUp := context.WithCancel(context.Background())
			body := hello
			if test.stream {
				body = `{"model":"m","stream":true,"messages":[{"role":"user","content":"tell me a long story please"}]}`
			}
			req, _ := http.NewRequestWithContext(ctx, http.MethodPost, h.srv.URL+"/v1/chat/completions", strings.NewReader(body))
			req.Header.Set("Authorization", "Bearer "+projectKey)
			done := make(chan struct{})
			go func() {
				defer close(done)
				res, err := http.DefaultClient.Do(req)
				if err != nil {
					return
				}
				defer res.Body.Close()
				if _, err := bufio.NewReader(res.Body).ReadString('\n'); err == nil {
					hangUp() // the first event is in: hang up mid-stream
				}
			}()
			if !test.stream {
				// Wait until the carrier has the request, then give up.
				waitUntil(t, "the carrier to get the request", func() bool { return arrived.Load() == 1 })
				hangUp()
			}
			<-done
			waitUntil(t, "the attempt to be recorded", func() bool { return h.gw.Recorder.Totals()[1].Attempts == 1 })
			tot := h.gw.Recorder.Totals()[1]
			if tot.Errors != 0 || tot.ClientErrors != 1 {
				t.Errorf("carrier a: %d errors, %d client errors; want 0 and 1 (the caller hung up)", tot.Errors, tot.ClientErrors)
			}
			if got := h.chats(); got["b"] != 0 {
				t.Errorf("a request the caller abandoned fell back to b: %v", got)
			}
		})
	}
}

// waitUntil polls cond until it holds or a minute passes.
func waitUntil(t *testing.T, what string, cond func() bool) {
	t.Helper()
	deadline := time.Now().Add(time.Minute)
	for !cond() {
		if time.Now().After(deadline) {
			t.Fatalf("waited a minute for %s", what)
		}
		time.Sleep(5 * time.Millisecond)
	}
}
