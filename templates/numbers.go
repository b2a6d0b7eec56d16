package templates

import (
	"fmt"
	"math"
	"strconv"
	"time"

	"github.com/airside/airside/internal/money"
	"github.com/airside/airside/internal/workflow"
)

// The console's one rule for numbers: a price per million tokens shows 4
// decimals ($0.3800), and all 6 when it has them (a filed or computed price
// is never rounded away); amounts of money show cents ($131,470.46);
// counts and token thresholds show thousands separators (131,072).
// Every page, view builder and chart writes numbers with these functions,
// and only these.

// Dollars writes a price per million tokens.
func Dollars(m money.Micros) string { return "$" + GroupThousands(m.Fixed(4)) }

// GroupThousands puts separators in the whole part of a decimal number
// (money.GroupThousands: the domain's change summaries write them so too).
func GroupThousands(s string) string { return money.GroupThousands(s) }

func OptDollars(m *money.Micros) string {
	if m == nil {
		return "—"
	}
	return Dollars(*m)
}

func OptNumber(v *float64, format string) string {
	if v == nil {
		return "—"
	}
	return fmt.Sprintf(format, *v)
}

// OptInt writes an optional cap with thousands separators, or "no cap".
func OptInt(v *int64) string {
	if v == nil {
		return "no cap"
	}
	return Count(*v)
}

// USD writes a computed price per million tokens by the console's rule (see
// Dollars): 4 decimals, 6 below a cent.
func USD(v float64) string {
	if v < 0 {
		return "-" + USD(-v)
	}
	if v != 0 && math.Abs(v) < 0.01 {
		return "$" + GroupThousands(strconv.FormatFloat(v, 'f', 6, 64))
	}
	return "$" + GroupThousands(strconv.FormatFloat(v, 'f', 4, 64))
}

func Score(v float64) string { return strconv.FormatFloat(v, 'f', 4, 64) }

// Pct writes a percentage by the console's rule: one decimal (uptime, which
// decides penalties near 95 %, keeps two where it is shown).
func Pct(v float64) string { return strconv.FormatFloat(v, 'f', 1, 64) + " %" }

// Count writes a whole number with thousands separators.
func Count(n int64) string { return money.Grouped(n) }

// AmountUSD writes an amount of micro-USD for reading: rounded to the cent, with
// thousands separators ("$131,470.46"). Statements' CSV keeps every micro.
func AmountUSD(m money.Micros) string {
	cents := int64(m.Scale(1, 10_000))
	sign := ""
	if cents < 0 {
		sign, cents = "-", -cents
	}
	return fmt.Sprintf("%s$%s.%02d", sign, Count(cents/100), cents%100)
}

// CompactUSD writes an axis amount: $0, $950, $12k, $1.5M.
func CompactUSD(f float64) string {
	switch {
	case f >= 1e6:
		return "$" + strconv.FormatFloat(f/1e6, 'f', -1, 64) + "M"
	case f >= 1e3:
		return "$" + strconv.FormatFloat(f/1e3, 'f', -1, 64) + "k"
	case f >= 10 || f == 0:
		return "$" + strconv.FormatFloat(f, 'f', 0, 64)
	}
	return "$" + strconv.FormatFloat(f, 'f', 2, 64)
}

// Compact writes an axis count: 950, 12k, 1.5M.
func Compact(f float64) string {
	switch {
	case f >= 1e6:
		return strconv.FormatFloat(f/1e6, 'f', -1, 64) + "M"
	case f >= 1e4:
		return strconv.FormatFloat(f/1e3, 'f', -1, 64) + "k"
	}
	return strconv.FormatFloat(f, 'f', 0, 64)
}

// Share writes a fraction as a percentage, "–" when there is none.
func Share(f float64) string {
	if f < 0 || math.IsNaN(f) {
		return "–"
	}
	return Pct(100 * f)
}

// Chart numbers: coordinates are not read, but axis ticks and table cells
// are.

// fmtNum writes a chart value to one decimal, without trailing zeros.
func fmtNum(v float64) string { return strconv.FormatFloat(math.Round(v*10)/10, 'f', -1, 64) }

// f1 writes a chart value with exactly one decimal.
func f1(v float64) string { return strconv.FormatFloat(v, 'f', 1, 64) }

// AxisNumber writes a tick to three significant digits; AxisUSD the same in
// dollars; AxisWhole rounds to a whole number; AxisExact keeps every digit.
func AxisNumber(f float64) string { return strconv.FormatFloat(f, 'g', 3, 64) }
func AxisUSD(f float64) string    { return "$" + strconv.FormatFloat(f, 'g', 3, 64) }
func AxisWhole(f float64) string  { return strconv.FormatFloat(f, 'f', 0, 64) }
func AxisExact(f float64) string  { return strconv.FormatFloat(f, 'f', -1, 64) }

// Pct2 writes a percentage with two decimals: uptime, which decides
// penalties near the line, where it is shown.
func Pct2(v float64) string { return strconv.FormatFloat(v, 'f', 2, 64) + " %" }

// WholePct writes a percentage rounded to a whole number (a workload mix).
func WholePct(v float64) string { return strconv.FormatFloat(v, 'f', 0, 64) + " %" }

// Decimal1 writes a number with one decimal (a share's percent without
// its sign, a throughput).
func Decimal1(v float64) string { return strconv.FormatFloat(v, 'f', 1, 64) }

// Millis writes a latency in whole milliseconds.
func Millis(ms float64) string { return strconv.FormatFloat(ms, 'f', 0, 64) + " ms" }

// TokensPerSecond writes a throughput.
func TokensPerSecond(tps float64) string { return Decimal1(tps) + " tok/s" }

// Multiplier writes a price factor to three decimals (x0.875).
func Multiplier(v float64) string { return strconv.FormatFloat(v, 'f', 3, 64) }

// Points writes a score difference with its sign (+0.0123).
func Points(v float64) string {
	if v >= 0 {
		return "+" + Score(v)
	}
	return Score(v)
}

// Plain writes a number with every digit it has, nothing added (a
// priority of 1.25).
func Plain(v float64) string { return strconv.FormatFloat(v, 'f', -1, 64) }

// CentsUSD writes a computed amount of dollars to the cent ($1,234.50),
// like AmountUSD for exact amounts.
func CentsUSD(v float64) string {
	return "$" + GroupThousands(strconv.FormatFloat(v, 'f', 2, 64))
}

// Wait is a duration as a person plans with it: "under a minute",
// "45 min", "3 h 20 min", "2 days 4 h".
func Wait(d time.Duration) string {
	switch {
	case d < time.Minute:
		return "under a minute"
	case d < time.Hour:
		return strconv.Itoa(int(d/time.Minute)) + " min"
	case d < 24*time.Hour:
		h, m := int(d/time.Hour), int(d%time.Hour/time.Minute)
		if m == 0 {
			return strconv.Itoa(h) + " h"
		}
		return strconv.Itoa(h) + " h " + strconv.Itoa(m) + " min"
	}
	days, h := int(d/(24*time.Hour)), int(d%(24*time.Hour)/time.Hour)
	unit := " days"
	if days == 1 {
		unit = " day"
	}
	if h == 0 {
		return strconv.Itoa(days) + unit
	}
	return strconv.Itoa(days) + unit + " " + strconv.Itoa(h) + " h"
}

// ReviewWait says what a submitted filing can expect, from the recent
// reviews, or that there are too few to say.
func ReviewWait(e workflow.ReviewEstimate) string {
	queue := "1 filing is waiting for review now"
	if e.Waiting != 1 {
		queue = Count(int64(e.Waiting)) + " filings are waiting for review now"
	}
	window := "the last " + strconv.Itoa(int(workflow.ReviewWindow/(24*time.Hour))) + " days"
	if !e.Known {
		return "Too few reviews in " + window + " to estimate the wait; " + queue + "."
	}
	return "Reviews in " + window + " took " + Wait(e.Median) + " (median), nine in ten within " + Wait(e.P90) +
		" (" + Count(int64(e.Reviews)) + " reviews); " + queue + "."
}

// CountOf writes a count with its noun in the right number ("1 recovery
// code", "10 recovery codes").
func CountOf(n int, one, many string) string {
	if n == 1 {
		return "1 " + one
	}
	return Count(int64(n)) + " " + many
}

// RoutesAt is what a price routes at, to the hundredth of a cent like the
// prices beside it: an exact routing price can carry six decimals
// ($0.096390), which reads as noise next to a filed $0.1190, so it is
// rounded to four and marked "about" when rounding changed it.
func RoutesAt(m money.Micros) string {
	rounded := m.Scale(1, 100).Scale(100, 1)
	if rounded == m {
		return Dollars(m)
	}
	return "about " + Dollars(rounded)
}
