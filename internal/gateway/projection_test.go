package gateway

import (
	"fmt"
	"math"
	"math/rand/v2"
	"strings"
	"testing"

	"github.com/airside/airside/internal/catalogue"
	"github.com/airside/airside/internal/fare"
	"github.com/airside/airside/internal/gatewayclient"
	"github.com/airside/airside/internal/money"
	"github.com/airside/airside/internal/preview"
	"github.com/airside/airside/internal/traffic"
)

// TestRoutingServesWhatThePreviewProjects: for a bounded, seeded run of a
// workload mix through the gateway, every listing's share of the model's
// requests is within 3 points of the share the carrier's preview projects
// from the same catalogue and mix, and every part of a difference of a
// point or more is named (traffic.ExplainShare). The preview and the gateway
// follow one rule set (election.md section 4); a disagreement fails here.
func TestRoutingServesWhatThePreviewProjects(t *testing.T) {
	up := func(v float64) *float64 { return &v }
	// A cheap listing under the uptime line, the winner of short prompts, a
	// close second whose context tier wins long ones, and a dear one: each
	// holds a different place in the election.
	specs := []carrierSpec{{slug: "a", input: "1", uptime: up(99.9)}, {slug: "b", input: "1.2", uptime: up(99.5)},
		{slug: "c", input: "2", uptime: up(97)}, {slug: "d", input: "0.8", uptime: up(80)}}
	h := newHarness(t, specs...)
	half := "0.5"
	h.publish(func(ls []gatewayclient.Listing) {
		ls[1].Fare.Tiers = append(ls[1].Fare.Tiers, struct {
			AboveTokens      int64                  `json:"aboveTokens"`
			CachedInputPrice *gatewayclient.Decimal `json:"cachedInputPrice,omitempty"`
			ImagePrice       *gatewayclient.Decimal `json:"imagePrice,omitempty"`
			InputPrice       *gatewayclient.Decimal `json:"inputPrice,omitempty"`
			OutputPrice      *gatewayclient.Decimal `json:"outputPrice,omitempty"`
			RequestPrice     *gatewayclient.Decimal `json:"requestPrice,omitempty"`
		}{AboveTokens: 10000, InputPrice: &half})
	})
	tierPrice := money.Micros(500_000)
	market := preview.Market{}
	for i, s := range specs {
		input, err := money.ParsePrice(s.input)
		if err != nil {
			t.Fatal(err)
		}
		market.Listings = append(market.Listings, catalogue.Listing{ID: int64(i + 1), CarrierSlug: s.slug, Model: catalogue.Model{Slug: "m"},
			Status: catalogue.StatusInService, PriorityBP: 10000, Health: catalogue.Health{UptimePct: s.uptime},
			Published: &fare.Fare{Input: input, Output: money.Micros(1_000_000), LandingFee: fare.BaselineLandingFee, CapScope: fare.ScopeGlobal}})
	}
	market.Listings[1].Published.Tiers = []fare.Tier{{AboveTokens: 10000, Prices: fare.Prices{Input: &tierPrice}}}

	// Half small one-shots, a fifth large prompts (15,000 tokens, past b's
	// tier), the rest coding agents in 40 sessions with prompts as long. The
	// preview weighs the mix sent, as the portal weighs the demand the
	// gateway measured.
	mix := map[string]float64{}
	long := fmt.Sprintf(`{"model":"m","messages":[{"role":"user","content":%q}]}`, strings.Repeat("a long prompt ", 60000/14))
	const requests = 2000
	rng := rand.New(rand.NewPCG(3, 4))
	for range requests {
		var res answer
		switch draw := rng.Float64(); {
		case draw < 0.5:
			res = h.chat(hello)
			mix["small"]++
		case draw < 0.7:
			res = h.chat(long)
			mix["large"]++
		default:
			res = h.chat(long, "User-Agent", "claude-cli/1.0.0", "X-Session-Id", fmt.Sprintf("session-%d", rng.IntN(40)))
			mix["coding"]++
		}
		if res.status != 200 {
			t.Fatalf("a request failed: %d %s", res.status, res.body)
		}
	}

	totals := h.gw.Recorder.Totals()
	var model int64
	for _, s := range totals {
		model += s.Attempts
	}
	if model != requests {
		t.Fatalf("the gateway recorded %d requests, sent %d", model, requests)
	}
	for _, l := range market.Listings {
		s := totals[l.ID]
		projected := preview.Build(preview.Input{Market: market, Model: "m", ListingID: l.ID, At: h.clock(), Mix: mix}).Share
		gap := traffic.ExplainShare(traffic.Projection{Total: projected.Total, Exploration: projected.Exploration},
			traffic.ShareCounts{ModelRequests: model, Requests: s.Attempts, Routed: s.Routed, Pinned: s.Pinned, Exploration: s.Exploration,
				Fallback: s.Fallback, Failed: s.Errors + s.ClientErrors, Capped: s.Capped, RateLimited: s.RateLimited})
		t.Logf("%s: projected %.2f %%, served %.2f %%, named %+v", l.CarrierSlug, gap.Projected, gap.Measured, gap.Named(1))
		if math.Abs(gap.Gap) > 3 {
			t.Errorf("%s: projected %.2f %% of the model's requests, routing served %.2f %%", l.CarrierSlug, gap.Projected, gap.Measured)
		}
		if math.Abs(gap.Gap) >= 1 && len(gap.Named(1)) == 0 {
			t.Errorf("%s: a gap of %.2f points with no cause of a point or more", l.CarrierSlug, gap.Gap)
		}
	}
}
