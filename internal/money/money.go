// Package money holds exact prices and rates. Prices are USD per million
// tokens in integer micro-dollars (six decimal places), rates are basis
// points. Nothing here is a float until the election needs one.
package money

import (
	"fmt"
	"math"
	"strconv"
	"strings"
)

// Micros is a price in millionths of a USD per million tokens.
type Micros int64

// MaxPrice bounds any filed price: $1,000,000 per million tokens is far past
// anything real and keeps arithmetic well inside int64.
const MaxPrice = Micros(1_000_000 * 1_000_000)

// ParsePrice reads a non-negative decimal with at most six decimal places,
// exactly: "0.1" is 100000 micros, never 0.1000000000000000055.
func ParsePrice(s string) (Micros, error) {
	units, err := parseFixed(strings.TrimSpace(s), 6)
	if err != nil {
		return 0, err
	}
	if units > int64(MaxPrice) {
		return 0, fmt.Errorf("must be at most %s", MaxPrice)
	}
	return Micros(units), nil
}

// String formats the price with as few decimals as it needs (at least two):
// 100000 is "0.10", 1234567 is "1.234567".
func (m Micros) String() string { return formatFixed(int64(m), 6, 2) }

// Fixed writes the price with at least minPlaces decimals and as many more
// (up to 6) as it needs: nothing is rounded away.
func (m Micros) Fixed(minPlaces int) string { return formatFixed(int64(m), 6, minPlaces) }

// Float is the price as a float64 for ranking.
func (m Micros) Float() float64 { return float64(m) / 1e6 }

// Scale multiplies the price by num/den, rounding half away from zero.
func (m Micros) Scale(num, den int64) Micros {
	p := int64(m) * num
	q, r := p/den, p%den
	if 2*abs(r) >= abs(den) {
		if (p < 0) != (den < 0) {
			q--
		} else {
			q++
		}
	}
	return Micros(q)
}

// BasisPoints is a rate in hundredths of a percent: 2000 is 20 %.
type BasisPoints int64

// ParsePercent reads a percentage like "20", "12.5" or "7.25 %" (at most two
// decimal places) into basis points.
func ParsePercent(s string) (BasisPoints, error) {
	s = strings.TrimSpace(strings.TrimSuffix(strings.TrimSpace(s), "%"))
	units, err := parseFixed(s, 2)
	if err != nil {
		return 0, err
	}
	if units > 100_00 {
		return 0, fmt.Errorf("must be at most 100 %%")
	}
	return BasisPoints(units), nil
}

// Percent formats the rate as a percentage without the sign: "20", "12.5".
func (b BasisPoints) Percent() string { return formatFixed(int64(b), 2, 0) }

// Fraction is the rate as a float64 fraction (2000 -> 0.2) for ranking.
func (b BasisPoints) Fraction() float64 { return float64(b) / 10000 }

// parseFixed reads an unsigned decimal with at most places decimals into
// integer units of 10^-places.
func parseFixed(s string, places int) (int64, error) {
	if s == "" {
		return 0, fmt.Errorf("is empty")
	}
	if s[0] == '-' {
		return 0, fmt.Errorf("must not be negative")
	}
	s = strings.TrimPrefix(s, "+")
	whole, frac, hasPoint := strings.Cut(s, ".")
	if whole == "" && (!hasPoint || frac == "") {
		return 0, fmt.Errorf("is not a number")
	}
	if !allDigits(whole) || !allDigits(frac) {
		return 0, fmt.Errorf("is not a number")
	}
	frac = strings.TrimRight(frac, "0")
	if len(frac) > places {
		return 0, fmt.Errorf("has more than %d decimal places", places)
	}
	whole = strings.TrimLeft(whole, "0")
	if len(whole) > 12 {
		return 0, fmt.Errorf("is too large")
	}
	w := int64(0)
	if whole != "" {
		v, err := strconv.ParseInt(whole, 10, 64)
		if err != nil {
			return 0, fmt.Errorf("is not a number")
		}
		w = v
	}
	f := int64(0)
	if frac != "" {
		v, err := strconv.ParseInt(frac+strings.Repeat("0", places-len(frac)), 10, 64)
		if err != nil {
			return 0, fmt.Errorf("is not a number")
		}
		f = v
	}
	return w*pow10(places) + f, nil
}

func formatFixed(v int64, places, minPlaces int) string {
	sign := ""
	if v < 0 {
		sign, v = "-", -v
	}
	p := pow10(places)
	whole, frac := v/p, v%p
	fs := fmt.Sprintf("%0*d", places, frac)
	fs = strings.TrimRight(fs, "0")
	for len(fs) < minPlaces {
		fs += "0"
	}
	if fs == "" {
		return sign + strconv.FormatInt(whole, 10)
	}
	return sign + strconv.FormatInt(whole, 10) + "." + fs
}

func allDigits(s string) bool {
	for i := 0; i < len(s); i++ {
		if s[i] < '0' || s[i] > '9' {
			return false
		}
	}
	return true
}

func pow10(n int) int64 { return int64(math.Pow10(n)) }

func abs(v int64) int64 {
	if v < 0 {
		return -v
	}
	return v
}

// Grouped writes a whole number with thousands separators ("65,536"), as
// every page and change summary writes counts, caps and token sizes.
func Grouped(n int64) string {
	s := strconv.FormatInt(n, 10)
	neg := strings.HasPrefix(s, "-")
	s = strings.TrimPrefix(s, "-")
	var b strings.Builder
	for i, r := range s {
		if i > 0 && (len(s)-i)%3 == 0 {
			b.WriteByte(',')
		}
		b.WriteRune(r)
	}
	if neg {
		return "-" + b.String()
	}
	return b.String()
}

// GroupThousands puts separators in the whole part of a decimal number
// ("1,234.5678"); what is not a number is returned as it is.
func GroupThousands(s string) string {
	sign := ""
	if strings.HasPrefix(s, "-") {
		sign, s = "-", s[1:]
	}
	whole, frac, hasFrac := strings.Cut(s, ".")
	n, err := strconv.ParseInt(whole, 10, 64)
	if err != nil {
		return sign + s
	}
	if hasFrac {
		return sign + Grouped(n) + "." + frac
	}
	return sign + Grouped(n)
}
