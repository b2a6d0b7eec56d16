package gateway

import (
	"testing"
	"time"

	"github.com/airside/airside/internal/gatewayclient"
)

// TestAListingWithLittleTrafficIsJudgedAsATypicalPeer: the cheapest
// listing's one failure in two requests leaves it about 95 % up (blended
// with its peers' median, own weight n / (n + 20)) and it keeps the model's
// traffic; the same 50 % over 500 requests moves the traffic away.
func TestAListingWithLittleTrafficIsJudgedAsATypicalPeer(t *testing.T) {
	for _, test := range []struct {
		name     string
		requests float64
		want     string
	}{
		{"two requests, one failed", 2, "a"},
		{"five hundred requests, half failed", 500, "b"},
	} {
		t.Run(test.name, func(t *testing.T) {
			h := newHarness(t, threeCarriers()...)
			good, many := 99.0, 500.0
			for id := int64(2); id <= 3; id++ {
				h.portal.moveHealth(id, gatewayclient.Health{Uptime: &good, Requests: &many})
			}
			half, n := 50.0, test.requests
			h.portal.moveHealth(1, gatewayclient.Health{Uptime: &half, Requests: &n})
			want := (n*half + 20*good) / (n + 20)
			deadline := time.Now().Add(time.Minute)
			for {
				m := h.gw.Follower.Current().Models["m"]
				if u := m.Candidates[m.index("a/m")].Metrics.Uptime; u != nil && *u == want {
					break
				}
				if time.Now().After(deadline) {
					t.Fatalf("the gateway never routed on a/m's blended uptime %.2f", want)
				}
				time.Sleep(10 * time.Millisecond)
			}
			before := h.chats()
			if res := h.chat(hello); res.status != 200 {
				t.Fatalf("%d %s", res.status, res.body)
			}
			after := h.chats()
			for slug := range after {
				if after[slug] > before[slug] && slug != test.want {
					t.Errorf("served by %s, want %s (a routed on %.1f %% uptime)", slug, test.want, want)
				}
			}
		})
	}
}
