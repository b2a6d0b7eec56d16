package gateway

import (
	"math"
	"testing"
	"time"

	"github.com/airside/airside/internal/catalogue"
	"github.com/airside/airside/internal/election"
)

// TestSharePolicySpreadsByShare: a project on the share policy spreads a
// model's requests over its listings in the shares the election engine
// gives them (chi-square at 1 % over 5,000 requests), with no incumbent
// and no exploration; a project on the election policy beside it sends
// its requests to the winner.
func TestSharePolicySpreadsByShare(t *testing.T) {
	h := newHarness(t, threeCarriers()...)
	h.publish(setPrice("b", "1.4"))
	h.publish(setPrice("c", "1.8"))
	h.gw.Config.Projects[0].Policy = "share"
	p := &h.gw.Config.Projects[0]
	m := h.gw.Follower.Current().Models["m"]
	pl, err := h.gw.plan(p, &Analysis{Model: "m", PromptTokens: 10, Mode: election.ModeAuto}, m, h.clock())
	if err != nil {
		t.Fatal(err)
	}
	res := &pl.result
	if res.Policy != election.PolicyShare {
		t.Fatalf("policy %v", res.Policy)
	}
	want := map[string]float64{}
	for i, o := range res.Candidates {
		want[m.Listings[i].Carrier()] = o.Share.Share
	}
	if want["a"] <= want["b"] || want["b"] <= want["c"] || want["c"] < 0.02/3 {
		t.Fatalf("shares %v", want)
	}
	before := h.chats()
	const n = 5000
	for range n {
		if res := h.chat(hello); res.status != 200 {
			t.Fatalf("%d %s", res.status, res.body)
		}
	}
	after := h.chats()
	var chi2 float64
	for slug, share := range want {
		got, exp := float64(after[slug]-before[slug]), share*n
		chi2 += (got - exp) * (got - exp) / exp
	}
	if chi2 > 9.21 { // two degrees of freedom, 1 %
		t.Errorf("counts %v against shares %v: chi-square %.2f", after, want, chi2)
	}
	t.Logf("shares %v, counts %v, chi-square %.2f", want, after, chi2)
	// Its demand says it was routed under the share policy, every request.
	var demanded, underShare int64
	for _, d := range h.gw.Recorder.TakeClosedDemand(h.clock().Add(time.Hour)) {
		demanded += d.Requests
		underShare += d.Asked[catalogue.AskedSharePolicy]
	}
	if demanded != n || underShare != n {
		t.Errorf("demand: %d requests, %d of them under the share policy; want %d of %d", demanded, underShare, n, n)
	}

	// The election policy sends every routed request to the winner (the 1 %
	// exploration aside).
	h.gw.Config.Projects[0].Policy = ""
	before = h.chats()
	for range 200 {
		h.chat(hello)
	}
	after = h.chats()
	if got := after["a"] - before["a"]; math.Abs(float64(got)-200) > 10 {
		t.Errorf("under the election policy a served %d of 200", got)
	}
	for _, d := range h.gw.Recorder.TakeClosedDemand(h.clock().Add(2 * time.Hour)) {
		if d.Asked[catalogue.AskedSharePolicy] != 0 {
			t.Errorf("a demand row of the election policy counts %d under share", d.Asked[catalogue.AskedSharePolicy])
		}
	}
}
