package fare

import (
	"fmt"
	"slices"
	"strings"

	"github.com/airside/airside/internal/money"
)

// Kind classifies what a filing changes, for the review queue.
type Kind string

// The filing kinds.
const (
	KindPrice        Kind = "price"
	KindFares        Kind = "fares" // landing fee and discount
	KindCaps         Kind = "caps"
	KindCapabilities Kind = "capabilities"
	KindPause        Kind = "pause"
	KindEndpoint     Kind = "endpoint" // the deployment: base URL, upstream model, key
	// KindMarket is what the listing offers besides price: context,
	// quantization, data policy, regions, fees per request and image.
	KindMarket Kind = "market"
)

// Change is one changed field, old -> new.
type Change struct {
	Field string
	Label string
	Kind  Kind
	Old   string
	New   string
	// Percent is the relative change of a number, nil when there is no old
	// number to compare with, or when the number is itself a percentage.
	Percent *float64
	// Points is the change of a percentage (the landing fee, the discount)
	// in percentage points: 25 % to 30 % is +5 points, not +20 %.
	Points *float64
	// Direction is +1 for an increase, -1 for a decrease, 0 when the change has
	// no direction (text, a list).
	Direction int
}

// Diff lists what changes from old (the published fare; nil for none) to new.
func Diff(old, new *Fare) []Change {
	if old == nil {
		old = &Fare{LandingFee: BaselineLandingFee, CapScope: ScopeGlobal}
	}
	var out []Change
	priceChange := func(field string, kind Kind, a, b *money.Micros) {
		if a == nil && b == nil || a != nil && b != nil && *a == *b {
			return
		}
		c := Change{Field: field, Label: FieldLabel(field), Kind: kind, Old: dollars(a), New: dollars(b)}
		if a != nil && b != nil {
			c.Direction = sign(int64(*b) - int64(*a))
			if *a != 0 {
				pct := float64(int64(*b)-int64(*a)) / float64(*a) * 100
				c.Percent = &pct
			}
		}
		out = append(out, c)
	}
	priceChange("input", KindPrice, &old.Input, &new.Input)
	priceChange("output", KindPrice, &old.Output, &new.Output)
	priceChange("cached_input", KindPrice, old.CachedInput, new.CachedInput)
	oldBilled := BilledPrices(old)
	for i, b := range BilledPrices(new) {
		priceChange(b.Key, KindPrice, oldBilled[i].Price, b.Price)
	}
	if a, b := tiersText(old.Tiers), tiersText(new.Tiers); a != b {
		out = append(out, Change{Field: "tiers", Label: FieldLabel("tiers"), Kind: KindPrice, Old: a, New: b})
	}
	if a, b := scheduleText(old.TimeBased), scheduleText(new.TimeBased); a != b {
		out = append(out, Change{Field: "peak_windows", Label: "Peak / off-peak", Kind: KindPrice, Old: a, New: b})
	}
	rateChange := func(field string, a, b money.BasisPoints) {
		if a == b {
			return
		}
		c := Change{Field: field, Label: FieldLabel(field), Kind: KindFares, Old: a.Percent() + " %", New: b.Percent() + " %", Direction: sign(int64(b - a))}
		points := float64(b-a) / 100 // basis points to percentage points
		c.Points = &points
		out = append(out, c)
	}
	rateChange("landing_fee", old.LandingFee, new.LandingFee)
	rateChange("discount", old.Discount, new.Discount)
	capChange := func(field string, a, b *int64) {
		if a == nil && b == nil || a != nil && b != nil && *a == *b {
			return
		}
		c := Change{Field: field, Label: FieldLabel(field), Kind: KindCaps, Old: capText(a), New: capText(b)}
		if a != nil && b != nil {
			c.Direction = sign(*b - *a)
			pct := float64(*b-*a) / float64(*a) * 100
			c.Percent = &pct
		}
		out = append(out, c)
	}
	capChange("max_rpm", old.MaxRPM, new.MaxRPM)
	capChange("max_rpd", old.MaxRPD, new.MaxRPD)
	if old.CapScope != new.CapScope {
		out = append(out, Change{Field: "cap_scope", Label: FieldLabel("cap_scope"), Kind: KindCaps, Old: scopeText(old.CapScope), New: scopeText(new.CapScope)})
	}
	if a, b := FormatCapabilities(old.Capabilities), FormatCapabilities(new.Capabilities); a != b {
		out = append(out, Change{Field: "capabilities", Label: FieldLabel("capabilities"), Kind: KindCapabilities, Old: orNone(a), New: orNone(b)})
	}
	return append(out, marketChanges(&old.Market, &new.Market)...)
}

// KindsOf is the set of kinds a list of changes touches, in a fixed order.
func KindsOf(changes []Change) []Kind {
	var kinds []Kind
	for _, k := range []Kind{KindPrice, KindFares, KindCaps, KindCapabilities, KindMarket} {
		if slices.ContainsFunc(changes, func(c Change) bool { return c.Kind == k }) {
			kinds = append(kinds, k)
		}
	}
	return kinds
}

func sign(v int64) int {
	switch {
	case v > 0:
		return 1
	case v < 0:
		return -1
	}
	return 0
}

// dollars writes a price as every page does ("$0.1190", "$1,250.0000").
func dollars(m *money.Micros) string {
	if m == nil {
		return "none"
	}
	return "$" + money.GroupThousands(m.Fixed(4))
}

func capText(v *int64) string {
	if v == nil {
		return "no cap"
	}
	return money.Grouped(*v)
}

// scopeText is a cap's scope in words, as the form offers it.
func scopeText(s CapScope) string {
	if s == ScopePerOrg {
		return "per organization"
	}
	return string(s)
}

func orNone(s string) string {
	if s == "" {
		return "none"
	}
	return strings.ReplaceAll(s, ",", ", ")
}

func tiersText(tiers []Tier) string {
	if len(tiers) == 0 {
		return "none"
	}
	parts := make([]string, len(tiers))
	for i, t := range tiers {
		parts[i] = fmt.Sprintf("above %s: in %s, out %s, cached %s", money.Grouped(t.AboveTokens), dollars(t.Input), dollars(t.Output), dollars(t.CachedInput)) +
			feesText(t.Prices)
	}
	return strings.Join(parts, "; ")
}

func scheduleText(tb *TimeBased) string {
	if tb == nil {
		return "none"
	}
	windows := make([]string, len(tb.PeakHours))
	for i, w := range tb.PeakHours {
		windows[i] = fmt.Sprintf("%02d-%02d", w.Start, w.End)
	}
	days := make([]string, len(tb.OffPeakDays))
	for i, d := range tb.OffPeakDays {
		days[i] = d.String()[:3]
	}
	s := fmt.Sprintf("peak %s UTC at in %s / out %s / cached %s%s; off-peak in %s / out %s / cached %s%s",
		strings.Join(windows, ","), dollars(tb.Peak.Input), dollars(tb.Peak.Output), dollars(tb.Peak.CachedInput), feesText(tb.Peak),
		dollars(tb.OffPeak.Input), dollars(tb.OffPeak.Output), dollars(tb.OffPeak.CachedInput), feesText(tb.OffPeak))
	if len(days) > 0 {
		s += fmt.Sprintf("; off-peak all day %s at %s", strings.Join(days, ","), OffsetText(tb.UTCOffsetMinutes))
	}
	if tb.EffectiveAt != nil {
		s += "; from " + tb.EffectiveAt.UTC().Format(TimeLayout)
	}
	return s
}

// OffsetText writes a UTC offset as people read it: "UTC-05:00",
// "UTC+05:30", or "UTC" (the one form every page uses).
func OffsetText(minutes int) string {
	if minutes == 0 {
		return "UTC"
	}
	sign := "+"
	if minutes < 0 {
		sign, minutes = "-", -minutes
	}
	return fmt.Sprintf("UTC%s%02d:%02d", sign, minutes/60, minutes%60)
}

// feesText is a block's fees as the change summary writes them ("" for
// none).
func feesText(p Prices) string {
	var parts []string
	if p.Request != nil {
		parts = append(parts, FeeText(p.Request)+" a request")
	}
	if p.Image != nil {
		parts = append(parts, FeeText(p.Image)+" an image")
	}
	if len(parts) == 0 {
		return ""
	}
	return ", " + strings.Join(parts, ", ")
}
