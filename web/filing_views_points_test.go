package web

import (
	"testing"

	"github.com/airside/airside/internal/fare"
)

// TestPercentagesChangeByPoints: a landing fee or discount that moves reads
// in percentage points in the change summary ("+5 points"), a price in
// percent of itself.
func TestPercentagesChangeByPoints(t *testing.T) {
	old := &fare.Fare{Input: 500000, Output: 2000000, LandingFee: 2500, CapScope: fare.ScopeGlobal}
	updated := &fare.Fare{Input: 450000, Output: 2000000, LandingFee: 3000, Discount: 250, CapScope: fare.ScopeGlobal}
	got := map[string]string{}
	for _, r := range changeRows(fare.Diff(old, updated)) {
		got[r.Label] = r.Percent
	}
	for label, want := range map[string]string{fare.FieldLabel("landing_fee"): "+5 points", fare.FieldLabel("discount"): "+2.5 points",
		fare.FieldLabel("input"): "-10.0 %"} {
		if got[label] != want {
			t.Errorf("%s: %q, want %q (all: %v)", label, got[label], want, got)
		}
	}
	for p, want := range map[float64]string{1: "+1 point", -1: "-1 point", -0.25: "-0.25 points", 12: "+12 points"} {
		if got := pointsText(p); got != want {
			t.Errorf("pointsText(%v) = %q, want %q", p, got, want)
		}
	}
}
