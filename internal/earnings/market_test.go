package earnings

import (
	"testing"
	"time"

	"github.com/airside/airside/internal/fare"
	"github.com/airside/airside/internal/money"
)

func TestMarket(t *testing.T) {
	day := time.Date(2026, 11, 1, 0, 0, 0, 0, time.UTC)
	f := func(input string, discountBP, landingBP money.BasisPoints) *fare.Fare {
		m, err := money.ParsePrice(input)
		if err != nil {
			t.Fatal(err)
		}
		return &fare.Fare{Input: m, Output: m, Discount: discountBP, LandingFee: landingBP}
	}
	history := map[int64][]FareSpan{
		// Mine: 1.00 at the baseline fee, cut to 0.80 on day 2 at noon.
		1: {{From: day.Add(-time.Hour), Fare: f("1.00", 0, 2000)}, {From: day.Add(36 * time.Hour), Fare: f("0.80", 0, 2000)}},
		// 2.00 with a 10 % discount and a 30 % fee: routes at 2 x 0.9 x 0.9 = 1.62.
		2: {{From: day, Fare: f("2.00", 1000, 3000)}},
		// Listed from day 3.
		3: {{From: day.Add(48 * time.Hour), Fare: f("0.50", 0, 2000)}},
	}
	got := Market(history, 1, day, day.Add(3*24*time.Hour))
	want := []struct {
		listings         int
		min, median, max string
		mine             string
	}{
		{2, "1.00", "1.31", "1.62", "1.00"},
		{2, "0.80", "1.21", "1.62", "0.80"}, // the cut is in force at the day's end
		{3, "0.50", "0.80", "1.62", "0.80"},
	}
	if len(got) != len(want) {
		t.Fatalf("%d days, want %d", len(got), len(want))
	}
	for i, w := range want {
		d := got[i]
		if d.Listings != w.listings || d.Min.String() != w.min || d.Median.String() != w.median || d.Max.String() != w.max ||
			d.Mine == nil || d.Mine.String() != w.mine {
			t.Errorf("day %d: %d listings, %s/%s/%s, mine %v; want %+v", i, d.Listings, d.Min, d.Median, d.Max, d.Mine, w)
		}
	}
	if before := Market(history, 1, day.Add(-48*time.Hour), day.Add(-24*time.Hour)); len(before) != 1 || before[0].Listings != 0 || before[0].Mine != nil {
		t.Errorf("a day before any fare: %+v", before)
	}
}
