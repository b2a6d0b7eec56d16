package gateway

import (
	"context"
	"net"
	"net/http"
	"net/netip"
	"strings"
	"sync"
	"testing"

	"github.com/airside/airside/internal/fakecarrier"
	"github.com/airside/airside/internal/netguard"
)

// rebindingResolver answers, for each name, the next of its answers (the
// last one again once they run out), as a carrier's DNS can.
type rebindingResolver struct {
	mu      sync.Mutex
	answers map[string][]string
	lookups map[string]int
}

func (r *rebindingResolver) LookupNetIP(_ context.Context, _, host string) ([]netip.Addr, error) {
	r.mu.Lock()
	defer r.mu.Unlock()
	as := r.answers[host]
	a := as[min(r.lookups[host], len(as)-1)]
	r.lookups[host]++
	return []netip.Addr{netip.MustParseAddr(a)}, nil
}

// TestTheGatewayRefusesACarrierThatRebindsToAPrivateAddress: carrier a's
// name resolves to a public address at first (dialled: the test's dialer
// takes that connection to the fake carrier on loopback), then to loopback,
// then to the metadata service. The gateway dials neither of those: each
// request falls back to carrier b and a sees one request.
func TestTheGatewayRefusesACarrierThatRebindsToAPrivateAddress(t *testing.T) {
	var mu sync.Mutex
	seen := 0
	fc := fakecarrier.New(fakecarrier.Config{Models: []string{"up-m"}, APIKey: "key-a"})
	specs := threeCarriers()[:2]
	specs[0].handler = http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		mu.Lock()
		seen++
		mu.Unlock()
		w.Header().Set("Connection", "close") // each request looks the name up again
		fc.ServeHTTP(w, r)
	})
	h := newHarness(t, specs...)
	// Each carrier gets a name and a public address the test's dialer
	// takes to where it really listens.
	resolver := &rebindingResolver{lookups: map[string]int{}, answers: map[string][]string{
		"carrier-a.example": {"8.8.8.8", "127.0.0.1", "169.254.169.254"},
		"carrier-b.example": {"8.8.4.4"},
	}}
	realAddr := map[string]string{}
	h.portal.mu.Lock()
	for id, public := range map[int64]string{1: "8.8.8.8", 2: "8.8.4.4"} {
		local := strings.TrimPrefix(strings.TrimSuffix(h.portal.keys[id][0], "/v1"), "http://")
		_, port, _ := net.SplitHostPort(local)
		name := map[int64]string{1: "carrier-a.example", 2: "carrier-b.example"}[id]
		h.portal.keys[id] = [2]string{"http://" + name + ":" + port + "/v1", h.portal.keys[id][1]}
		realAddr[net.JoinHostPort(public, port)] = local
	}
	h.portal.mu.Unlock()
	var dialled []string
	guard := netguard.New(false)
	guard.Resolver = resolver
	guard.Dial = func(ctx context.Context, network, address string) (net.Conn, error) {
		mu.Lock()
		dialled = append(dialled, address)
		mu.Unlock()
		local, ok := realAddr[address]
		if !ok {
			t.Errorf("the gateway dialled %s", address)
			return nil, net.UnknownNetworkError("not in this test")
		}
		return (&net.Dialer{}).DialContext(ctx, network, local)
	}
	h.gw.HTTP = CarrierHTTPClient(guard)

	for i, want := range []string{"a", "b", "b"} {
		before := h.carriers["b"].Chats()
		res := h.chat(hello)
		if res.status != http.StatusOK {
			t.Fatalf("request %d: %d %s", i, res.status, res.body)
		}
		served := "a"
		if h.carriers["b"].Chats() > before {
			served = "b"
		}
		if served != want {
			t.Errorf("request %d (a resolving to %s) was served by %s, want %s", i, resolver.answers["carrier-a.example"][i], served, want)
		}
	}
	mu.Lock()
	defer mu.Unlock()
	if seen != 1 {
		t.Errorf("the rebinding carrier received %d requests, want 1 (before it rebound)", seen)
	}
	if got := resolver.lookups["carrier-a.example"]; got != 3 {
		t.Errorf("carrier a's name was looked up %d times, want once a request", got)
	}
	for _, d := range dialled {
		if strings.HasPrefix(d, "127.") || strings.HasPrefix(d, "169.254.") {
			t.Errorf("dialled %s", d)
		}
	}
}
