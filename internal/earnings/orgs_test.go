package earnings

import (
	"testing"
	"time"

	"github.com/airside/airside/internal/catalogue"
	"github.com/airside/airside/internal/fare"
	"github.com/airside/airside/internal/money"
)

func TestByOrganisation(t *testing.T) {
	at := time.Date(2026, 12, 1, 10, 0, 0, 0, time.UTC)
	p := func(s string) money.Micros { m, _ := money.ParsePrice(s); return m }
	history := map[int64][]FareSpan{
		1: {{From: at.Add(-time.Hour), Fare: &fare.Fare{Input: p("1.00"), Output: p("2.00"), LandingFee: 2000}}},
		2: {{From: at.Add(time.Hour), Fare: &fare.Fare{Input: p("0.50"), Output: p("1.00"), LandingFee: 2000}}},
	}
	hours := map[int64]map[string][]catalogue.HourlyPoint{
		1: {"org-a": {{Hour: at, Counts: catalogue.Counts{Requests: 10, InputTokens: 1_000_000, OutputTokens: 500_000}}},
			"org-b": {{Hour: at, Counts: catalogue.Counts{Requests: 30, InputTokens: 1_000_000}}}},
		// Before listing 2's first fare: served, not priced.
		2: {"org-a": {{Hour: at, Counts: catalogue.Counts{Requests: 25, InputTokens: 2_000_000}}}},
	}
	lines := ByOrganisation(hours, history)
	if len(lines) != 2 || lines[0].Organisation != "org-a" || lines[0].Requests != 35 || lines[0].Listings != 2 || lines[0].Unpriced != 25 {
		t.Fatalf("lines %+v: want org-a first with 35 requests over 2 listings, 25 unpriced", lines)
	}
	// org-a on listing 1: $1.00 + $1.00 filed, 80 % kept; org-b: $1.00 filed.
	if lines[0].Filed != p("2.00") || lines[0].Kept != p("1.60") || lines[1].Filed != p("1.00") || lines[1].Kept != p("0.80") {
		t.Errorf("money: %+v, %+v", lines[0].Money, lines[1].Money)
	}
}
