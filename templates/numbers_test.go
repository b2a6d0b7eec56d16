package templates

import (
	"testing"
	"time"

	"github.com/airside/airside/internal/money"
)

// TestOneRuleForNumbers: prices per million tokens at 4 decimals (6 when
// they have them, never rounded), amounts at cents, counts grouped.
func TestOneRuleForNumbers(t *testing.T) {
	for _, c := range []struct {
		got, want string
	}{
		{Dollars(money.Micros(380000)), "$0.3800"},
		{Dollars(money.Micros(252000)), "$0.2520"},
		{Dollars(money.Micros(2332000)), "$2.3320"},
		{Dollars(money.Micros(123457)), "$0.123457"},
		{Dollars(money.Micros(1234500000)), "$1,234.5000"},
		{Dollars(0), "$0.0000"},
		{USD(0.252), "$0.2520"},
		{USD(0.0012346), "$0.001235"},
		{USD(-0.0012346), "-$0.001235"},
		{USD(1234.5), "$1,234.5000"},
		{AmountUSD(money.Micros(131470461234)), "$131,470.46"},
		{Count(131072), "131,072"},
		{Count(-1234567), "-1,234,567"},
		// What a price routes at: four decimals, "about" when rounded.
		{RoutesAt(money.Micros(96390)), "about $0.0964"},
		{RoutesAt(money.Micros(96350)), "about $0.0964"},
		{RoutesAt(money.Micros(410000)), "$0.4100"},
		{RoutesAt(money.Micros(1234500)), "$1.2345"},
	} {
		if c.got != c.want {
			t.Errorf("got %q, want %q", c.got, c.want)
		}
	}
}

func TestWait(t *testing.T) {
	for d, want := range map[time.Duration]string{
		20 * time.Second:                   "under a minute",
		45 * time.Minute:                   "45 min",
		3 * time.Hour:                      "3 h",
		3*time.Hour + 20*time.Minute:       "3 h 20 min",
		24 * time.Hour:                     "1 day",
		52 * time.Hour:                     "2 days 4 h",
		72*time.Hour + 30*time.Minute:      "3 days",
		23*time.Hour + 59*time.Minute + 59: "23 h 59 min",
	} {
		if got := Wait(d); got != want {
			t.Errorf("Wait(%s) = %q, want %q", d, got, want)
		}
	}
}
