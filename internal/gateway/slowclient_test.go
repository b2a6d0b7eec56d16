package gateway

import (
	"bufio"
	"context"
	"errors"
	"fmt"
	"io"
	"net"
	"net/http"
	"strings"
	"testing"
	"time"

	"github.com/airside/airside/internal/tracing"
)

// servedGateway is the harness's gateway behind HTTPServer, as `airside
// gateway` serves it (the tracing wrapper included), with short client
// timeouts.
func servedGateway(t *testing.T, h *harness, timeouts ClientTimeouts) string {
	t.Helper()
	h.gw.ClientTimeouts = timeouts
	srv := h.gw.HTTPServer(tracing.PublicHandler(h.gw.Handler(), "gateway"))
	ln, err := net.Listen("tcp", "127.0.0.1:0")
	if err != nil {
		t.Fatal(err)
	}
	go func() { _ = srv.Serve(ln) }()
	t.Cleanup(func() { _ = srv.Close() })
	return ln.Addr().String()
}

// cutWithin waits for the server to end conn (or answer and end it) and
// fails if it has not within the deadline, far past the timeouts under
// test: the slow client's trickle would last a minute otherwise.
func cutWithin(t *testing.T, conn net.Conn, deadline time.Duration) string {
	t.Helper()
	_ = conn.SetReadDeadline(time.Now().Add(deadline))
	got, err := io.ReadAll(conn)
	var ne net.Error
	if errors.As(err, &ne) && ne.Timeout() {
		t.Fatalf("the gateway still held the connection after %s (read so far: %q)", deadline, got)
	}
	return string(got)
}

// trickle writes s a byte at a time, every gap, until it is written or the
// connection breaks.
func trickle(conn net.Conn, s string, gap time.Duration) {
	for i := range len(s) {
		if _, err := conn.Write([]byte{s[i]}); err != nil {
			return
		}
		time.Sleep(gap)
	}
}

// TestSlowAndIdleCallersAreCutOff: a connection that sends nothing, one
// left idle after a request, headers or a body sent a byte at a time: each
// is ended by the gateway's client timeouts (before them, each stayed open
// as long as the caller liked).
func TestSlowAndIdleCallersAreCutOff(t *testing.T) {
	h := newHarness(t, threeCarriers()...)
	addr := servedGateway(t, h, ClientTimeouts{Header: 300 * time.Millisecond, Body: 300 * time.Millisecond, Idle: 300 * time.Millisecond})
	const wait = 20 * time.Second
	body := `{"model":"m","messages":[{"role":"user","content":"hello"}]}` + strings.Repeat(" ", 2000)

	t.Run("a connection that sends nothing", func(t *testing.T) {
		conn, err := net.Dial("tcp", addr)
		if err != nil {
			t.Fatal(err)
		}
		defer conn.Close()
		cutWithin(t, conn, wait)
	})
	t.Run("a connection left idle after a request", func(t *testing.T) {
		conn, err := net.Dial("tcp", addr)
		if err != nil {
			t.Fatal(err)
		}
		defer conn.Close()
		fmt.Fprintf(conn, "GET /healthz HTTP/1.1\r\nHost: gw\r\n\r\n")
		res, err := http.ReadResponse(bufio.NewReader(conn), nil)
		if err != nil || res.StatusCode != http.StatusOK {
			t.Fatalf("healthz: %v %v", res, err)
		}
		_, _ = io.Copy(io.Discard, res.Body)
		cutWithin(t, conn, wait)
	})
	t.Run("headers a byte at a time", func(t *testing.T) {
		conn, err := net.Dial("tcp", addr)
		if err != nil {
			t.Fatal(err)
		}
		defer conn.Close()
		go trickle(conn, "POST /v1/chat/completions HTTP/1.1\r\nHost: gw\r\nAuthorization: Bearer "+projectKey+"\r\n\r\n", 100*time.Millisecond)
		cutWithin(t, conn, wait)
	})
	t.Run("a body a byte at a time", func(t *testing.T) {
		conn, err := net.Dial("tcp", addr)
		if err != nil {
			t.Fatal(err)
		}
		defer conn.Close()
		fmt.Fprintf(conn, "POST /v1/chat/completions HTTP/1.1\r\nHost: gw\r\nAuthorization: Bearer %s\r\nContent-Type: application/json\r\nContent-Length: %d\r\n\r\n", projectKey, len(body))
		go trickle(conn, body, 30*time.Millisecond)
		got := cutWithin(t, conn, wait)
		if !strings.Contains(got, "408") || !strings.Contains(got, "did not arrive within") {
			t.Errorf("a body that never finished arriving: %q, want a 408 saying so", got)
		}
	})
}

// TestAStreamOutlastsTheBodyTimeout: the body timeout bounds the body, not
// the answer: a stream that lasts longer than it reaches the caller whole.
func TestAStreamOutlastsTheBodyTimeout(t *testing.T) {
	specs := threeCarriers()
	specs[0].server.TokensPerSecond = 20
	h := newHarness(t, specs...)
	addr := servedGateway(t, h, ClientTimeouts{Header: 200 * time.Millisecond, Body: 200 * time.Millisecond, Idle: 200 * time.Millisecond})
	req, _ := http.NewRequestWithContext(context.Background(), http.MethodPost, "http://"+addr+"/v1/chat/completions",
		strings.NewReader(`{"model":"m","stream":true,"messages":[{"role":"user","content":"tell me a long story please"}]}`))
	req.Header.Set("Authorization", "Bearer "+projectKey)
	start := time.Now()
	res, err := http.DefaultClient.Do(req)
	if err != nil {
		t.Fatal(err)
	}
	defer res.Body.Close()
	b, _ := io.ReadAll(res.Body)
	took := time.Since(start)
	if took < 400*time.Millisecond {
		t.Fatalf("the stream took %s: too short to show anything (the fake carrier streams at 20 tokens/s)", took)
	}
	if !strings.HasSuffix(strings.TrimSpace(string(b)), "data: [DONE]") || strings.Contains(string(b), "stream_broken") {
		t.Errorf("a %s stream behind a 200 ms body timeout was cut: %s", took, b)
	}
}
