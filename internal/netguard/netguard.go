// Package netguard is the outbound-address rule for requests Airside makes
// on a carrier's behalf (preflight probes, domain checks): only public https
// addresses, checked after DNS resolution and again on every connection, so
// a name that resolves to loopback or a redirect to the metadata service is
// refused, not followed. Tests and the demo, whose carriers run on loopback,
// turn the rule off with AllowPrivate.
package netguard

import (
	"context"
	"errors"
	"fmt"
	"io"
	"net"
	"net/http"
	"net/netip"
	"net/url"
	"strings"
	"time"

	"github.com/airside/airside/internal/tracing"
)

// ErrRefused wraps every refusal, so callers can tell a rule from a failure.
var ErrRefused = errors.New("address refused")

// Resolver looks a host name up; *net.Resolver satisfies it, and tests
// inject one that answers what they need.
type Resolver interface {
	LookupNetIP(ctx context.Context, network, host string) ([]netip.Addr, error)
}

// Guard holds the rule and the timeouts of outbound requests.
type Guard struct {
	AllowPrivate bool
	Resolver     Resolver
	// ConnectTimeout bounds a TCP and TLS connect, FirstByteTimeout the wait
	// for response headers.
	ConnectTimeout   time.Duration
	FirstByteTimeout time.Duration
	// Dial connects to an address already checked ("ip:port"); nil is a
	// net.Dialer with ConnectTimeout. Tests inject one that reaches a local
	// server in place of the public address a fake resolver answered.
	Dial func(ctx context.Context, network, address string) (net.Conn, error)
}

// New returns a guard with the system resolver and the default timeouts.
func New(allowPrivate bool) *Guard {
	return &Guard{AllowPrivate: allowPrivate, Resolver: net.DefaultResolver,
		ConnectTimeout: 5 * time.Second, FirstByteTimeout: 30 * time.Second}
}

// blocked are the ranges no probe may reach besides what netip's own
// predicates name (loopback, private, link-local, multicast, unspecified).
var blocked = []netip.Prefix{
	netip.MustParsePrefix("0.0.0.0/8"),
	netip.MustParsePrefix("100.64.0.0/10"), // carrier-grade NAT
	netip.MustParsePrefix("192.0.0.0/24"),
	netip.MustParsePrefix("192.0.2.0/24"),
	netip.MustParsePrefix("198.18.0.0/15"),
	netip.MustParsePrefix("198.51.100.0/24"),
	netip.MustParsePrefix("203.0.113.0/24"),
	netip.MustParsePrefix("240.0.0.0/4"),
	netip.MustParsePrefix("64:ff9b::/96"), // NAT64 can reach any IPv4 address
	netip.MustParsePrefix("2001:db8::/32"),
	netip.MustParsePrefix("fc00::/7"),
}

// PublicAddr reports whether addr is a public unicast address; an
// IPv4-mapped IPv6 address is judged as the IPv4 address it maps.
func PublicAddr(addr netip.Addr) bool {
	addr = addr.Unmap()
	if !addr.IsValid() || addr.IsLoopback() || addr.IsPrivate() || addr.IsLinkLocalUnicast() ||
		addr.IsLinkLocalMulticast() || addr.IsInterfaceLocalMulticast() || addr.IsMulticast() || addr.IsUnspecified() {
		return false
	}
	for _, p := range blocked {
		if p.Contains(addr) {
			return false
		}
	}
	return true
}

// CheckURL checks what can be checked without the network: an absolute
// https URL (http too when private addresses are allowed), with a host, no
// credentials, and no literal address that is not public.
func (g *Guard) CheckURL(raw string) (*url.URL, error) {
	u, err := url.Parse(strings.TrimSpace(raw))
	if err != nil || u.Host == "" || !u.IsAbs() {
		return nil, fmt.Errorf("%w: %q is not an absolute URL", ErrRefused, raw)
	}
	switch {
	case u.Scheme == "https":
	case u.Scheme == "http" && g.AllowPrivate:
	default:
		return nil, fmt.Errorf("%w: only https addresses are probed", ErrRefused)
	}
	if u.User != nil {
		return nil, fmt.Errorf("%w: an address must not carry a user name or password", ErrRefused)
	}
	if addr, err := netip.ParseAddr(strings.Trim(u.Hostname(), "[]")); err == nil && !g.AllowPrivate && !PublicAddr(addr) {
		return nil, fmt.Errorf("%w: %s is not a public address", ErrRefused, addr)
	}
	if looksNumeric(u.Hostname()) && !strings.Contains(u.Hostname(), ":") {
		if _, err := netip.ParseAddr(u.Hostname()); err != nil {
			// 127.1, 0x7f.1, 2130706433: shorthand the C resolver expands to
			// an address nobody checked.
			return nil, fmt.Errorf("%w: %s is not a canonical address", ErrRefused, u.Hostname())
		}
	}
	if !g.AllowPrivate && isLocalName(u.Hostname()) {
		return nil, fmt.Errorf("%w: %s is a local name", ErrRefused, u.Hostname())
	}
	return u, nil
}

func looksNumeric(host string) bool {
	return strings.Trim(strings.ToLower(host), "0123456789.x") == "" ||
		strings.HasPrefix(strings.ToLower(host), "0x") && strings.Trim(strings.ToLower(host), "0123456789abcdefx.") == ""
}

func isLocalName(host string) bool {
	host = strings.ToLower(strings.TrimSuffix(host, "."))
	return host == "localhost" || strings.HasSuffix(host, ".localhost") || strings.HasSuffix(host, ".local") ||
		strings.HasSuffix(host, ".internal")
}

// DialContext resolves the host, refuses it unless every address it has is
// public (a name with one private address is a rebinding risk), and dials
// the checked address itself, so the address connected to is the one checked.
func (g *Guard) DialContext(ctx context.Context, network, address string) (net.Conn, error) {
	host, port, err := net.SplitHostPort(address)
	if err != nil {
		return nil, fmt.Errorf("dial %s: %w", address, err)
	}
	var addrs []netip.Addr
	if a, err := netip.ParseAddr(host); err == nil {
		addrs = []netip.Addr{a}
	} else {
		addrs, err = g.Resolver.LookupNetIP(ctx, "ip", host)
		if err != nil {
			return nil, fmt.Errorf("look up %s: %w", host, err)
		}
	}
	if len(addrs) == 0 {
		return nil, fmt.Errorf("look up %s: no address", host)
	}
	if !g.AllowPrivate {
		for _, a := range addrs {
			if !PublicAddr(a) {
				return nil, fmt.Errorf("%w: %s resolves to %s, which is not a public address", ErrRefused, host, a.Unmap())
			}
		}
	}
	dial := g.Dial
	if dial == nil {
		dial = (&net.Dialer{Timeout: g.ConnectTimeout}).DialContext
	}
	var lastErr error
	for _, a := range addrs {
		conn, err := dial(ctx, network, net.JoinHostPort(a.Unmap().String(), port))
		if err == nil {
			return conn, nil
		}
		lastErr = err
	}
	return nil, lastErr
}

// Client returns an HTTP client that dials through the guard, follows
// redirects only on the same host (each one checked again), and times out
// the whole exchange after total.
func (g *Guard) Client(total time.Duration) *http.Client {
	transport := &http.Transport{
		DialContext:           g.DialContext,
		TLSHandshakeTimeout:   g.ConnectTimeout,
		ResponseHeaderTimeout: g.FirstByteTimeout,
		MaxIdleConnsPerHost:   2,
		IdleConnTimeout:       30 * time.Second,
		ForceAttemptHTTP2:     true,
	}
	return &http.Client{
		// Each outbound call (a probe, a webhook) is a client span and
		// carries the traceparent when tracing is on.
		Transport: tracing.Transport(transport),
		Timeout:   total,
		CheckRedirect: func(req *http.Request, via []*http.Request) error {
			if len(via) >= 3 {
				return fmt.Errorf("%w: too many redirects", ErrRefused)
			}
			if req.URL.Host != via[0].URL.Host {
				return fmt.Errorf("%w: a redirect to another host (%s) is not followed", ErrRefused, req.URL.Host)
			}
			_, err := g.CheckURL(req.URL.String())
			return err
		},
	}
}

// LimitedBody reads at most limit bytes of a response body and reports
// whether there was more.
func LimitedBody(r io.Reader, limit int64) ([]byte, bool, error) {
	b, err := io.ReadAll(io.LimitReader(r, limit+1))
	if int64(len(b)) > limit {
		return b[:limit], true, err
	}
	return b, false, err
}
