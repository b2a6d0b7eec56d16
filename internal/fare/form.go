package fare

import (
	"fmt"
	"slices"
	"strconv"
	"strings"
	"time"

	"github.com/airside/airside/internal/election"
	"github.com/airside/airside/internal/money"
	"github.com/airside/airside/internal/textcheck"
)

// Form is a fare as typed: every field a string, exactly as the person wrote
// it, so a rejected form comes back with what was typed. It knows nothing of
// HTTP; the web layer fills it.
type Form struct {
	Input, Output, CachedInput string
	// Billed holds the billed-only prices (cache reads and writes), typed,
	// by field key; the table (Fields) declares them.
	Billed               map[string]string
	LandingFee, Discount string // percent
	MaxRPM, MaxRPD       string
	CapScope             string
	Capabilities         []string // flag names
	Tiers                []TierForm
	PeakWindows          []WindowForm
	OffPeakDays          []string // "0" (Sunday) .. "6"
	UTCOffsetMinutes     string
	TODEffectiveAt       string // "2006-01-02T15:04" UTC, optional
	Peak, OffPeak        PricesForm
	// Market is what the listing offers besides price (sec. 7).
	Market        MarketForm
	Justification string
	EffectiveAt   string // "2006-01-02" or "2006-01-02T15:04" UTC, optional
}

// TierForm is one typed context tier (its fees per request and image
// too).
type TierForm struct{ Above, Input, Output, CachedInput, Request, Image string }

// WindowForm is one typed peak window, in UTC hours.
type WindowForm struct{ Start, End string }

// PricesForm is a typed price block, with its fees per request and image.
type PricesForm struct{ Input, Output, CachedInput, Request, Image string }

// empty reports whether no price was typed (blanks are no price).
func (p PricesForm) empty() bool {
	for _, v := range []string{p.Input, p.Output, p.CachedInput, p.Request, p.Image} {
		if strings.TrimSpace(v) != "" {
			return false
		}
	}
	return true
}

// FieldErrors maps a form field to what is wrong with it. Keys are the form's
// field names: "input", "landing_fee", "tier.0.above", "peak_window.1.start".
type FieldErrors map[string]string

// MaxJustification bounds the note to the reviewer.
const MaxJustification = 4000

// TimeLayout is how the form writes times (UTC, to the minute).
const TimeLayout = "2006-01-02T15:04"

// Parsed is a valid form: the fare, and when the carrier wants it in force.
type Parsed struct {
	Fare          *Fare
	Justification string
	// EffectiveAt is nil for "as soon as approved".
	EffectiveAt *time.Time
}

// Parse checks every rule of a filing and returns the fare, or a message for
// each bad field. now is when the form is sent, for the effective date. Each
// group of the form (Fields) has its own step.
func (f *Form) Parse(now time.Time) (*Parsed, FieldErrors) {
	p := &formParser{form: f, errs: FieldErrors{}, fare: &Fare{CapScope: ScopeGlobal}}
	p.prices()
	p.levers()
	p.tiers()
	p.schedule()
	p.caps()
	p.capabilities()
	p.market()
	parsed := p.filing(now)
	if len(p.errs) > 0 {
		return nil, p.errs
	}
	return parsed, nil
}

// formParser carries one Parse: the form as typed, the fare as far as it
// parses, and the messages so far.
type formParser struct {
	form *Form
	fare *Fare
	errs FieldErrors
}

// price reads an optional price (required ones are told so).
func (p *formParser) price(field, s string, required bool) *money.Micros {
	s = strings.TrimSpace(s)
	if s == "" {
		if required {
			p.errs[field] = "Enter a price in USD per million tokens."
		}
		return nil
	}
	m, err := money.ParsePrice(strings.TrimPrefix(s, "$"))
	if err != nil {
		p.errs[field] = "The price " + err.Error() + " (use a decimal like 0.55, at most 6 decimal places)."
		if strings.Contains(s, ",") {
			p.errs[field] = fmt.Sprintf("Use a decimal point, not a comma: %s, not %s.", strings.ReplaceAll(s, ",", "."), s)
		}
		return nil
	}
	return &m
}

func (p *formParser) block(prefix string, typed PricesForm) Prices {
	return Prices{Input: p.price(prefix+"input", typed.Input, false), Output: p.price(prefix+"output", typed.Output, false),
		CachedInput: p.price(prefix+"cached_input", typed.CachedInput, false),
		Request:     p.fee(prefix+"request", typed.Request, "request"), Image: p.fee(prefix+"image", typed.Image, "image")}
}

// prices: the base prices, and the cache prices no higher than input.
func (p *formParser) prices() {
	f, out := p.form, p.fare
	if v := p.price("input", f.Input, true); v != nil {
		out.Input = *v
	}
	if v := p.price("output", f.Output, true); v != nil {
		out.Output = *v
	}
	out.CachedInput = p.price("cached_input", f.CachedInput, false)
	for _, field := range Fields {
		if field.billed != nil {
			*field.billed(out) = p.price(field.Key, field.Value(f), false)
		}
	}
	if _, bad := p.errs["input"]; !bad {
		if out.CachedInput != nil && *out.CachedInput > out.Input {
			p.errs["cached_input"] = "The cached input price cannot be above the input price (" + out.Input.String() + ")."
		}
		if out.CacheRead != nil && *out.CacheRead > out.Input {
			p.errs["cache_read"] = "The cache read price cannot be above the input price (" + out.Input.String() + ")."
		}
	}
}

// levers: the landing fee and the discount, within their bounds.
func (p *formParser) levers() {
	rate := func(field, s string, lo, hi money.BasisPoints, def money.BasisPoints) money.BasisPoints {
		s = strings.TrimSpace(s)
		if s == "" {
			return def
		}
		bp, err := money.ParsePercent(s)
		if err != nil || bp < lo || bp > hi {
			p.errs[field] = fmt.Sprintf("Enter a percentage from %s to %s.", lo.Percent(), hi.Percent())
			return def
		}
		return bp
	}
	p.fare.LandingFee = rate("landing_fee", p.form.LandingFee, MinLandingFee, MaxLandingFee, BaselineLandingFee)
	p.fare.Discount = rate("discount", p.form.Discount, 0, MaxDiscount, 0)
}

// Levers reads the landing fee and the discount as Parse does (blank: the
// baseline fee and no discount); ok is false when either is not a
// percentage within its bounds. The fare form's live effective prices use
// it, so the bounds are checked in one place.
func (f *Form) Levers() (landingFee, discount money.BasisPoints, ok bool) {
	p := &formParser{form: f, errs: FieldErrors{}, fare: &Fare{}}
	p.levers()
	return p.fare.LandingFee, p.fare.Discount, len(p.errs) == 0
}

// caps: the rate caps and their scope.
func (p *formParser) caps() {
	capField := func(field, s string) *int64 {
		s = strings.TrimSpace(s)
		if s == "" {
			return nil
		}
		v, err := strconv.ParseInt(s, 10, 64)
		if err != nil || v <= 0 || v > 1_000_000_000 {
			p.errs[field] = "Enter a whole number of requests above 0, or leave it empty for no cap."
			return nil
		}
		return &v
	}
	p.fare.MaxRPM = capField("max_rpm", p.form.MaxRPM)
	p.fare.MaxRPD = capField("max_rpd", p.form.MaxRPD)
	switch CapScope(p.form.CapScope) {
	case "", ScopeGlobal:
	case ScopePerOrg:
		p.fare.CapScope = ScopePerOrg
	default:
		p.errs["cap_scope"] = "Choose global or per organization."
	}
}

// capabilities: known flag names, each once, sorted.
func (p *formParser) capabilities() {
	for _, name := range p.form.Capabilities {
		c, ok := election.ParseCapability(name)
		if !ok {
			p.errs["capabilities"] = fmt.Sprintf("Unknown capability %q.", name)
			continue
		}
		if !slices.Contains(p.fare.Capabilities, c) {
			p.fare.Capabilities = append(p.fare.Capabilities, c)
		}
	}
	slices.Sort(p.fare.Capabilities)
}

// tiers: rising thresholds, each with at least one price.
func (p *formParser) tiers() {
	var previous int64
	tiers := p.form.Tiers
	if n := countFilled(tiers); n > MaxTiers {
		p.errs["tiers"] = fmt.Sprintf("At most %d context tiers per fare; this one has %d.", MaxTiers, n)
		tiers = nil // judged as a whole: no message per row; the form keeps what was typed
	}
	for i, t := range tiers {
		if t == (TierForm{}) {
			continue // an empty row left on the page
		}
		key := fmt.Sprintf("tier.%d.", i)
		above, err := strconv.ParseInt(strings.TrimSpace(t.Above), 10, 64)
		switch {
		case err != nil || above <= 0:
			p.errs[key+"above"] = "Enter a whole number of prompt tokens above 0."
		case above <= previous:
			p.errs[key+"above"] = fmt.Sprintf("Tiers must go up: this threshold must be above %d.", previous)
		default:
			previous = above
		}
		typed := PricesForm{Input: t.Input, Output: t.Output, CachedInput: t.CachedInput, Request: t.Request, Image: t.Image}
		tier := Tier{AboveTokens: above, Prices: p.block(key, typed)}
		if typed.empty() {
			p.errs[key+"input"] = "Give the tier at least one price."
		}
		p.fare.Tiers = append(p.fare.Tiers, tier)
	}
}

// schedule: peak windows, off-peak days and their prices, which need each
// other.
func (p *formParser) schedule() {
	f := p.form
	tb := &TimeBased{}
	windows := f.PeakWindows
	if n := countFilled(windows); n > MaxPeakWindows {
		p.errs["peak_windows"] = fmt.Sprintf("At most %d peak windows (one per hour of the day); this fare has %d.", MaxPeakWindows, n)
		windows = nil
	}
	for i, w := range windows {
		if w == (WindowForm{}) {
			continue
		}
		key := fmt.Sprintf("peak_window.%d.", i)
		start, err1 := strconv.Atoi(strings.TrimSpace(w.Start))
		end, err2 := strconv.Atoi(strings.TrimSpace(w.End))
		switch {
		case err1 != nil || start < 0 || start > 23:
			p.errs[key+"start"] = "Enter a UTC hour from 0 to 23."
		case err2 != nil || end < 1 || end > 24:
			p.errs[key+"end"] = "Enter a UTC hour from 1 to 24."
		case start >= end:
			p.errs[key+"end"] = "The window must end after it starts (windows do not wrap past midnight; split them)."
		default:
			for _, other := range tb.PeakHours {
				if start < other.End && other.Start < end {
					p.errs[key+"start"] = fmt.Sprintf("This window overlaps %02d-%02d.", other.Start, other.End)
				}
			}
			tb.PeakHours = append(tb.PeakHours, PeakWindow{Start: start, End: end})
		}
	}
	for _, d := range f.OffPeakDays {
		v, err := strconv.Atoi(d)
		if err != nil || v < 0 || v > 6 {
			p.errs["off_peak_days"] = "Weekdays go from 0 (Sunday) to 6 (Saturday)."
			continue
		}
		if !slices.Contains(tb.OffPeakDays, time.Weekday(v)) {
			tb.OffPeakDays = append(tb.OffPeakDays, time.Weekday(v))
		}
	}
	slices.Sort(tb.OffPeakDays)
	if s := strings.TrimSpace(f.UTCOffsetMinutes); s != "" {
		v, err := strconv.Atoi(s)
		if err != nil || v < -720 || v > 840 {
			p.errs["utc_offset"] = "Enter an offset from -720 to 840 minutes (UTC-12 to UTC+14)."
		}
		tb.UTCOffsetMinutes = v
	}
	tb.Peak = p.block("peak_", f.Peak)
	tb.OffPeak = p.block("off_peak_", f.OffPeak)
	if s := strings.TrimSpace(f.TODEffectiveAt); s != "" {
		at, err := parseTime(s)
		if err != nil {
			p.errs["tod_effective_at"] = "Enter a UTC date and time like 2026-12-01T16:00."
		}
		tb.EffectiveAt = at
	}
	hasSchedule := len(tb.PeakHours) > 0 || len(tb.OffPeakDays) > 0
	hasBlock := !f.Peak.empty() || !f.OffPeak.empty()
	switch {
	case hasSchedule && !hasBlock:
		p.errs["peak_input"] = "Peak windows or off-peak days need peak or off-peak prices."
	case hasBlock && !hasSchedule:
		p.errs["peak_windows"] = "Peak and off-peak prices need peak windows or off-peak days."
	case hasSchedule && hasBlock:
		p.fare.TimeBased = tb
	}
}

// filing: the note to the reviewer and when the fare should apply.
func (p *formParser) filing(now time.Time) *Parsed {
	parsed := &Parsed{Fare: p.fare, Justification: strings.TrimSpace(p.form.Justification)}
	if msg := textcheck.Problem(parsed.Justification, MaxJustification); msg != "" {
		p.errs["justification"] = msg
	}
	if s := strings.TrimSpace(p.form.EffectiveAt); s != "" {
		at, err := parseTime(s)
		switch {
		case err != nil:
			p.errs["effective_at"] = "Enter a UTC date like 2026-12-01, or a date and time like 2026-12-01T16:00."
		case at.Before(now.Truncate(time.Minute)):
			p.errs["effective_at"] = "The effective date is in the past; leave it empty to apply the fare once approved."
		case at.After(now.Add(MaxEffectiveAhead)):
			p.errs["effective_at"] = fmt.Sprintf("An effective date can be at most a year ahead (by %s).", now.Add(MaxEffectiveAhead).UTC().Format("2006-01-02"))
		default:
			parsed.EffectiveAt = at
		}
	}
	return parsed
}

func parseTime(s string) (*time.Time, error) {
	for _, layout := range []string{TimeLayout, "2006-01-02T15:04:05", time.DateOnly, time.RFC3339} {
		if t, err := time.ParseInLocation(layout, s, time.UTC); err == nil {
			t = t.UTC()
			return &t, nil
		}
	}
	return nil, fmt.Errorf("not a time: %q", s)
}

func formPrice(m *money.Micros) string {
	if m == nil {
		return ""
	}
	return m.String()
}

// FormOf is the form prefilled from a fare (nil: an empty form at the
// baseline landing fee).
func FormOf(f *Fare) Form {
	if f == nil {
		return Form{LandingFee: BaselineLandingFee.Percent(), Discount: "0", CapScope: string(ScopeGlobal)}
	}
	form := Form{
		Input: f.Input.String(), Output: f.Output.String(), CachedInput: formPrice(f.CachedInput),
		LandingFee: f.LandingFee.Percent(), Discount: f.Discount.Percent(), CapScope: string(f.CapScope),
	}
	for _, b := range BilledPrices(f) {
		MustField(b.Key).Set(&form, formPrice(b.Price))
	}
	if f.MaxRPM != nil {
		form.MaxRPM = strconv.FormatInt(*f.MaxRPM, 10)
	}
	if f.MaxRPD != nil {
		form.MaxRPD = strconv.FormatInt(*f.MaxRPD, 10)
	}
	for _, c := range f.Capabilities {
		form.Capabilities = append(form.Capabilities, c.String())
	}
	form.Market = marketForm(&f.Market)
	for _, t := range f.Tiers {
		form.Tiers = append(form.Tiers, TierForm{Above: strconv.FormatInt(t.AboveTokens, 10),
			Input: formPrice(t.Input), Output: formPrice(t.Output), CachedInput: formPrice(t.CachedInput),
			Request: formPrice(t.Request), Image: formPrice(t.Image)})
	}
	if tb := f.TimeBased; tb != nil {
		for _, w := range tb.PeakHours {
			form.PeakWindows = append(form.PeakWindows, WindowForm{Start: strconv.Itoa(w.Start), End: strconv.Itoa(w.End)})
		}
		for _, d := range tb.OffPeakDays {
			form.OffPeakDays = append(form.OffPeakDays, strconv.Itoa(int(d)))
		}
		form.UTCOffsetMinutes = strconv.Itoa(tb.UTCOffsetMinutes)
		if tb.EffectiveAt != nil {
			form.TODEffectiveAt = tb.EffectiveAt.UTC().Format(TimeLayout)
		}
		form.Peak, form.OffPeak = pricesForm(tb.Peak), pricesForm(tb.OffPeak)
	}
	return form
}

// The bounds of a fare's size: enough for any real price list, small enough
// that one carrier's filing cannot slow everyone's pages and elections.
const (
	MaxTiers       = 16
	MaxPeakWindows = 24
	// MaxEffectiveAhead bounds an effective date, so no approved filing can
	// hold a listing's one slot in flight for years.
	MaxEffectiveAhead = 365 * 24 * time.Hour
)

// countFilled counts the rows that are not left empty.
func countFilled[T comparable](rows []T) int {
	var zero T
	n := 0
	for _, r := range rows {
		if r != zero {
			n++
		}
	}
	return n
}

// pricesForm is a filed block as the form shows it.
func pricesForm(p Prices) PricesForm {
	return PricesForm{Input: formPrice(p.Input), Output: formPrice(p.Output), CachedInput: formPrice(p.CachedInput),
		Request: formPrice(p.Request), Image: formPrice(p.Image)}
}
