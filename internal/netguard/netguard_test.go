package netguard

import (
	"context"
	"errors"
	"net/http"
	"net/http/httptest"
	"net/netip"
	"strings"
	"testing"
	"time"
)

// fakeResolver answers every name from a table.
type fakeResolver map[string][]netip.Addr

func (f fakeResolver) LookupNetIP(_ context.Context, _, host string) ([]netip.Addr, error) {
	if a, ok := f[host]; ok {
		return a, nil
	}
	return nil, errors.New("no such host")
}

func addrs(s ...string) []netip.Addr {
	var out []netip.Addr
	for _, a := range s {
		out = append(out, netip.MustParseAddr(a))
	}
	return out
}

func TestHostileURLsAreRefused(t *testing.T) {
	g := New(false)
	g.Resolver = fakeResolver{
		"loopback.example.com": addrs("127.0.0.1"),
		"mixed.example.com":    addrs("93.184.216.34", "10.1.2.3"),
		"v6mapped.example.com": addrs("::ffff:127.0.0.1"),
		"metadata.example.com": addrs("169.254.169.254"),
		"public.example.com":   addrs("93.184.216.34"),
	}
	hostile := []string{
		"http://public.example.com/v1",   // plain http
		"https://127.0.0.1/v1",           // loopback
		"https://127.1/v1",               // shorthand loopback
		"https://2130706433/v1",          // loopback as one number
		"https://0x7f.0.0.1/v1",          // hex loopback
		"https://10.0.0.5/v1",            // 10/8
		"https://172.16.3.4/v1",          // 172.16/12
		"https://192.168.1.1/v1",         // 192.168/16
		"https://169.254.169.254/latest", // cloud metadata
		"https://[::1]/v1",               // IPv6 loopback
		"https://[::ffff:127.0.0.1]/v1",  // IPv4-mapped loopback
		"https://[::ffff:a00:1]/v1",      // IPv4-mapped 10.0.0.1
		"https://[fd00::1]/v1",           // unique local
		"https://[fe80::1]/v1",           // link-local
		"https://0.0.0.0/v1",             // unspecified
		"https://100.64.0.1/v1",          // carrier-grade NAT
		"https://localhost/v1",           // a local name
		"https://loopback.example.com/v1",
		"https://mixed.example.com/v1", // one private address is enough
		"https://v6mapped.example.com/v1",
		"https://metadata.example.com/v1",
		"https://user:pass@public.example.com/v1",
		"ftp://public.example.com/",
		"/v1/models",
	}
	for _, raw := range hostile {
		err := g.check(raw)
		if !errors.Is(err, ErrRefused) {
			t.Errorf("%s: got %v, want a refusal", raw, err)
		}
	}
	if err := g.check("https://public.example.com/v1"); errors.Is(err, ErrRefused) {
		t.Errorf("a public https address was refused: %v", err)
	}
}

// check runs the URL rule and then the dial rule, as a probe would.
func (g *Guard) check(raw string) error {
	u, err := g.CheckURL(raw)
	if err != nil {
		return err
	}
	port := u.Port()
	if port == "" {
		port = "443"
	}
	ctx, cancel := context.WithTimeout(context.Background(), 200*time.Millisecond)
	defer cancel()
	conn, err := g.DialContext(ctx, "tcp", u.Hostname()+":"+port)
	if conn != nil {
		_ = conn.Close()
	}
	return err
}

func TestRedirectToPrivateAddressIsNotFollowed(t *testing.T) {
	target := httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, _ *http.Request) {
		_, _ = w.Write([]byte("secret metadata"))
	}))
	defer target.Close()
	redirector := httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		http.Redirect(w, r, target.URL+"/latest/meta-data", http.StatusFound)
	}))
	defer redirector.Close()

	// Private addresses allowed (the redirector itself is on loopback), but a
	// redirect off the host is still refused.
	g := New(true)
	_, err := g.Client(5 * time.Second).Get(strings.Replace(redirector.URL, "127.0.0.1", "localhost", 1))
	if !errors.Is(err, ErrRefused) {
		t.Fatalf("redirect to another host: got %v, want a refusal", err)
	}

	// With the rule on, the loopback redirector is refused at the dial.
	g = New(false)
	_, err = g.Client(5 * time.Second).Get(redirector.URL)
	if !errors.Is(err, ErrRefused) {
		t.Fatalf("loopback with the rule on: got %v, want a refusal", err)
	}
}

func TestPublicAddr(t *testing.T) {
	for a, want := range map[string]bool{
		"8.8.8.8": true, "2606:4700::1111": true, "127.0.0.1": false, "::ffff:8.8.8.8": true,
		"::ffff:192.168.0.1": false, "64:ff9b::7f00:1": false, "224.0.0.1": false,
	} {
		if got := PublicAddr(netip.MustParseAddr(a)); got != want {
			t.Errorf("PublicAddr(%s) = %v, want %v", a, got, want)
		}
	}
}

func TestLimitedBody(t *testing.T) {
	b, more, err := LimitedBody(strings.NewReader("abcdef"), 4)
	if err != nil || string(b) != "abcd" || !more {
		t.Fatalf("LimitedBody = %q, %v, %v", b, more, err)
	}
}
