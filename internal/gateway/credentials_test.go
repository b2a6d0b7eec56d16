package gateway

import (
	"context"
	"reflect"
	"testing"
	"time"
)

// TestAGatewayHoldsEveryListingsCredentials: the credentials of every
// listing of the table are read as soon as the table names them, so a
// portal that goes away afterwards leaves each listing routable (read on a
// listing's first request, as before, the two never served could not be).
func TestAGatewayHoldsEveryListingsCredentials(t *testing.T) {
	h := newHarness(t, threeCarriers()...)
	ctx, cancel := context.WithCancel(context.Background())
	defer cancel()
	go h.gw.Creds.Keep(ctx, h.gw.Follower, h.gw.Log, time.Second)
	deadline := time.Now().Add(time.Minute)
	for {
		h.gw.Creds.mu.Lock()
		held := len(h.gw.Creds.keys)
		h.gw.Creds.mu.Unlock()
		if held == 3 {
			break
		}
		if time.Now().After(deadline) {
			t.Fatalf("%d of 3 listings' credentials held", held)
		}
		time.Sleep(5 * time.Millisecond)
	}
	h.portal.mu.Lock()
	h.portal.down = true
	h.portal.mu.Unlock()
	for _, slug := range []string{"a", "b", "c"} {
		body := `{"model":"` + slug + `/m","messages":[{"role":"user","content":"hello"}]}`
		if res := h.chat(body, "x-no-fallback", "true"); res.status != 200 {
			t.Errorf("%s/m with the portal away: %d %s", slug, res.status, res.body)
		}
	}
	wantChats(t, h, map[string]int{"a": 1, "b": 1, "c": 1})
}

// TestCredentialsSayWhichListingsCannotBeRouted: with the portal away
// before they were read, Missing names every listing.
func TestCredentialsSayWhichListingsCannotBeRouted(t *testing.T) {
	h := newHarness(t, threeCarriers()...)
	h.portal.mu.Lock()
	h.portal.down = true
	h.portal.mu.Unlock()
	if got := h.gw.Creds.hold(context.Background(), h.gw.Follower.Current()); !reflect.DeepEqual(got, []string{"a/m", "b/m", "c/m"}) {
		t.Errorf("missing %v, want every listing", got)
	}
	h.portal.mu.Lock()
	h.portal.down = false
	h.portal.mu.Unlock()
	if got := h.gw.Creds.hold(context.Background(), h.gw.Follower.Current()); len(got) != 0 || len(h.gw.Creds.Missing()) != 0 {
		t.Errorf("missing %v once the portal is back", got)
	}
}
