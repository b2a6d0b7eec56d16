package web

import (
	"context"
	"net/http"
	"net/http/httptest"
	"strings"
	"testing"
	"time"

	"github.com/labstack/echo/v4"
)

// TestHealthzFailsOnlyWhileWorkIsStuck: a background turn that never ends
// (a wedged writer) makes /healthz answer 503 naming it once it has run past
// the limit; when the turn ends, /healthz is 200 again.
func TestHealthzFailsOnlyWhileWorkIsStuck(t *testing.T) {
	s := &Server{StuckAfter: 50 * time.Millisecond}
	healthz := func() (int, string) {
		rec := httptest.NewRecorder()
		c := echo.New().NewContext(httptest.NewRequest(http.MethodGet, "/healthz", nil), rec)
		if err := s.handleHealthz(c); err != nil {
			t.Fatal(err)
		}
		return rec.Code, rec.Body.String()
	}
	if code, body := healthz(); code != http.StatusOK {
		t.Fatalf("healthz at rest: %d %s", code, body)
	}
	release := make(chan struct{})
	ctx, cancel := context.WithCancel(context.Background())
	defer cancel()
	go repeat(ctx, "write check", &s.watch, time.Hour, true, func(context.Context) { <-release })

	deadline := time.Now().Add(30 * time.Second)
	for {
		code, body := healthz()
		if code == http.StatusServiceUnavailable {
			if !strings.Contains(body, "write check for") {
				t.Errorf("healthz names %q, want the write check", body)
			}
			break
		}
		if time.Now().After(deadline) {
			t.Fatal("healthz never saw the stuck write check")
		}
		time.Sleep(10 * time.Millisecond)
	}
	close(release)
	for {
		if code, _ := healthz(); code == http.StatusOK {
			break
		}
		if time.Now().After(deadline) {
			t.Fatal("healthz stayed 503 after the turn ended")
		}
		time.Sleep(10 * time.Millisecond)
	}
}
