package web_test

import (
	"bytes"
	"fmt"
	"net"
	"net/url"
	"strings"
	"sync"
	"testing"
	"time"

	"github.com/airside/airside/internal/apitoken"
	"github.com/airside/airside/internal/store"
	"github.com/airside/airside/internal/store/storetest"
)

// lockedBuffer is a log sink the server writes to while the test reads it.
type lockedBuffer struct {
	mu  sync.Mutex
	buf bytes.Buffer
}

func (b *lockedBuffer) Write(p []byte) (int, error) {
	b.mu.Lock()
	defer b.mu.Unlock()
	return b.buf.Write(p)
}

func (b *lockedBuffer) String() string {
	b.mu.Lock()
	defer b.mu.Unlock()
	return b.buf.String()
}

// TestCutOffUploadIsLoggedAsADisconnect: a metrics upload whose client hangs
// up halfway is logged as a client disconnect (499), never as a 200 with an
// ERROR beside it.
func TestCutOffUploadIsLoggedAsADisconnect(t *testing.T) {
	logs := &lockedBuffer{}
	p := portalOn(t, storetest.Open(t, store.SQLite), logs)
	st, srv := p.store, p.srv
	tok := apiToken(t, st, apitoken.ScopeMetricsWrite)

	u, _ := url.Parse(srv.URL)
	conn, err := net.Dial("tcp", u.Host)
	if err != nil {
		t.Fatal(err)
	}
	part := `{"buckets": [{"listing": "nebula/kimi-k2.5", "minute": "2026-12-01T10:00:00Z", "requ`
	fmt.Fprintf(conn, "POST /api/v1/metrics HTTP/1.1\r\nHost: %s\r\nAuthorization: Bearer %s\r\nContent-Type: application/json\r\nContent-Length: 4000\r\n\r\n%s",
		u.Host, tok, part)
	time.Sleep(100 * time.Millisecond) // the handler is reading the body
	conn.Close()

	deadline := time.Now().Add(20 * time.Second)
	for !strings.Contains(logs.String(), "route=/api/v1/metrics") {
		if time.Now().After(deadline) {
			t.Fatalf("no request line for the cut-off upload:\n%s", logs.String())
		}
		time.Sleep(10 * time.Millisecond)
	}
	out := logs.String()
	if !strings.Contains(out, "status=499") || !strings.Contains(out, "client=disconnected") {
		t.Errorf("the cut-off upload was not logged as a disconnect:\n%s", out)
	}
	if strings.Contains(out, "level=ERROR") || strings.Contains(out, "status=200") {
		t.Errorf("the cut-off upload was logged as an error or a success:\n%s", out)
	}
}
