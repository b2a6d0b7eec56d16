package web

import (
	"fmt"
	"io"
	"net"
	"net/http"
	"net/http/httptest"
	"net/url"
	"strings"
	"testing"
	"time"
	"unicode"
)

func TestSafeNext(t *testing.T) {
	for _, test := range []struct{ next, want string }{
		{"/filings/12", "/filings/12"},
		{"/listings?carrier=2&sort=model", "/listings?carrier=2&sort=model"},
		{"", "/listings"},
		{"//evil.example", "/listings"},
		{"/\t/evil.example", "/listings"},
		{"/%09/evil.example", "/%09/evil.example"}, // stays a path on this site: %09 is not decoded into the Location
		{"/\\evil.example", "/listings"},
		{"/\\/evil.example", "/listings"},
		{"\\\\evil.example", "/listings"},
		{"https://evil.example/", "/listings"},
		{"javascript:alert(1)", "/listings"},
		{"/\n/evil.example", "/listings"},
		{"/\r\nLocation: https://evil.example", "/listings"},
		{"/ /evil.example", "/listings"},
		{"/\u00a0/evil.example", "/listings"},
		{"/\u2028/evil.example", "/listings"},
		{"/a b", "/listings"},
		{"evil.example", "/listings"},
		{"/" + strings.Repeat("a", 3000), "/listings"},
	} {
		if got := safeNext(test.next); got != test.want {
			t.Errorf("safeNext(%q) = %q, want %q", test.next, got, test.want)
		}
	}
}

// FuzzSafeNext: whatever comes in, what goes out is a path on this site that
// no browser reads as another host.
func FuzzSafeNext(f *testing.F) {
	for _, seed := range []string{"/filings/1", "//evil", "/\t/evil", "/\\evil", "https://evil", "/ok?x=1#y", "/%2F%2Fevil"} {
		f.Add(seed)
	}
	f.Fuzz(func(t *testing.T, next string) {
		got := safeNext(next)
		if got != "/listings" && got != next {
			t.Fatalf("safeNext(%q) = %q: neither the input nor the default", next, got)
		}
		if !strings.HasPrefix(got, "/") || strings.HasPrefix(got, "//") || strings.ContainsAny(got, "\\") {
			t.Fatalf("safeNext(%q) = %q leaves the site", next, got)
		}
		for _, r := range got {
			if unicode.IsControl(r) || unicode.IsSpace(r) {
				t.Fatalf("safeNext(%q) = %q keeps %U", next, got, r)
			}
		}
		u, err := url.Parse(got)
		if err != nil || u.Host != "" || u.Scheme != "" {
			t.Fatalf("safeNext(%q) = %q parses to host %q scheme %q (%v)", next, got, u.Host, u.Scheme, err)
		}
	})
}

func TestTrustedProxies(t *testing.T) {
	s := &Server{echo: New(Services{}, nil).echo}
	req := httptest.NewRequest("GET", "/login", nil)
	req.RemoteAddr = "10.1.2.3:5555"
	req.Header.Set("X-Forwarded-For", "203.0.113.9")
	if got := s.echo.IPExtractor(req); got != "10.1.2.3" {
		t.Errorf("without trusted proxies the client chose its address: %s", got)
	}
	_, proxies, _ := net.ParseCIDR("10.0.0.0/8")
	s.TrustProxies([]*net.IPNet{proxies})
	if got := s.echo.IPExtractor(req); got != "203.0.113.9" {
		t.Errorf("behind a trusted proxy: %s, want the forwarded address", got)
	}
	req.RemoteAddr = "198.51.100.7:5555" // not a proxy of ours: its header is not believed
	if got := s.echo.IPExtractor(req); got != "198.51.100.7" {
		t.Errorf("an untrusted peer chose its address: %s", got)
	}
}

// TestSlowBodiesAreCutOff: a request trickled in a byte at a time is cut off
// by the server's timeouts, and the longest long poll still fits.
func TestSlowBodiesAreCutOff(t *testing.T) {
	srv := New(Services{}, nil).httpServer("127.0.0.1:0")
	srv.Handler = http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) { io.Copy(io.Discard, r.Body) })
	if srv.ReadHeaderTimeout <= 0 || srv.ReadTimeout <= 0 || srv.ReadTimeout > time.Minute {
		t.Errorf("read timeouts %v / %v", srv.ReadHeaderTimeout, srv.ReadTimeout)
	}
	if srv.WriteTimeout <= MaxWait {
		t.Errorf("write timeout %v does not fit a long poll of %v", srv.WriteTimeout, MaxWait)
	}
	ln, err := net.Listen("tcp", "127.0.0.1:0")
	if err != nil {
		t.Fatal(err)
	}
	srv.ReadTimeout = 300 * time.Millisecond // the same rule, on a test's time scale
	go srv.Serve(ln)
	t.Cleanup(func() { srv.Close() })
	conn, err := net.Dial("tcp", ln.Addr().String())
	if err != nil {
		t.Fatal(err)
	}
	defer conn.Close()
	fmt.Fprintf(conn, "POST /login HTTP/1.1\r\nHost: x\r\nContent-Type: application/x-www-form-urlencoded\r\nContent-Length: 100\r\n\r\ne")
	conn.SetReadDeadline(time.Now().Add(30 * time.Second))
	buf := make([]byte, 1)
	start := time.Now()
	if _, err := conn.Read(buf); err == nil {
		// An answer (the server gave up on the body) is as good as a close.
		return
	} else if ne, ok := err.(net.Error); ok && ne.Timeout() {
		t.Fatalf("the server held a trickled request open for %s", time.Since(start))
	}
}
