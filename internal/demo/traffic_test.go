package demo

import (
	"math/rand/v2"
	"testing"
	"time"

	"github.com/airside/airside/internal/catalogue"
	"github.com/airside/airside/internal/fare"
	"github.com/airside/airside/internal/money"
	"github.com/airside/airside/internal/preview"
	"github.com/airside/airside/internal/traffic"
)

func listing(id int64, slug string, input, output money.Micros, maxRPM *int64) catalogue.Listing {
	up, lat, tps := 99.9, 300.0, 80.0
	return catalogue.Listing{ID: id, CarrierSlug: slug, Model: catalogue.Model{Slug: "m"}, Status: catalogue.StatusInService, PriorityBP: 10000,
		Health:    catalogue.Health{UptimePct: &up, LatencyMs: &lat, ThroughputTPS: &tps},
		Published: &fare.Fare{Input: input, Output: output, LandingFee: fare.BaselineLandingFee, MaxRPM: maxRPM}}
}

// TestHistoryFollowsTheFares: an hour of the demo's history is routed by the
// election and the gateway's rules, not drawn from a popularity curve: the
// far cheaper listing holds every shape and serves about 99 %, the others
// get the 1 % exploration; a cheap listing at its cap serves what the cap
// allows, the rest falls back and is counted as capped; and the kinds of
// traffic never add up to more than the successes.
func TestHistoryFollowsTheFares(t *testing.T) {
	h := time.Date(2026, 11, 3, 14, 0, 0, 0, time.UTC) // a Tuesday afternoon
	cheap, dear, dearer := listing(1, "cheap", 100_000, 400_000, nil), listing(2, "dear", 2_000_000, 8_000_000, nil), listing(3, "dearer", 3_000_000, 9_000_000, nil)
	m := &preview.Market{Listings: []catalogue.Listing{dear, cheap, dearer}}
	var in traffic.Incumbents
	out := routeHour(m, "m", h, rand.New(rand.NewPCG(1, 2)), &in)
	total := out[1].Requests + out[2].Requests + out[3].Requests
	if total < 1000 {
		t.Fatalf("an afternoon hour routed %d requests", total)
	}
	if share := float64(out[1].Requests) / float64(total); share < 0.985 || share > 0.995 {
		t.Errorf("the cheap listing served %.3f of the hour, want about 0.99", share)
	}
	if out[2].Exploration == 0 || out[3].Exploration == 0 || out[2].Routed != 0 {
		t.Errorf("the dear listings: %+v / %+v, want exploration only", out[2].GatewayCounts, out[3].GatewayCounts)
	}
	// The same cheap listing capped at 10 a minute (600 an hour).
	limit := int64(10)
	capped := listing(1, "cheap", 100_000, 400_000, &limit)
	m = &preview.Market{Listings: []catalogue.Listing{dear, capped, dearer}}
	out = routeHour(m, "m", h, rand.New(rand.NewPCG(1, 2)), &traffic.Incumbents{})
	if out[1].Requests > 4*600 || out[1].Capped == 0 {
		t.Errorf("the capped listing served %d requests, capped %d; want at most 600 an hour a shape, the rest capped", out[1].Requests, out[1].Capped)
	}
	if out[2].Fallback == 0 {
		t.Errorf("the next listing by rank took no fallback: %+v", out[2].GatewayCounts)
	}
	for id, p := range out {
		ok := p.Requests - p.Errors - p.ClientErrors
		if p.Routed+p.Exploration+p.Fallback > ok {
			t.Errorf("listing %d: routed %d + exploration %d + fallback %d > %d successes", id, p.Routed, p.Exploration, p.Fallback, ok)
		}
	}
}
