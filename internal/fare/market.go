package fare

import (
	"fmt"
	"slices"
	"strconv"
	"strings"

	"github.com/airside/airside/internal/election"
	"github.com/airside/airside/internal/money"
)

// Market is what a listing offers besides its token prices (election.md
// sec. 7): the context it holds, the numeric format it serves, what it does
// with prompts, where it runs, and fees per request and per image. Each is
// optional; undeclared means no limit, an unknown quantization, and a data
// policy that counts as keeping and training on prompts.
type Market struct {
	// ContextLength (prompt + output) and MaxOutputTokens, in tokens.
	ContextLength, MaxOutputTokens *int64
	// Quantization is one of election's names ("fp8"); "" is undeclared.
	Quantization string
	// RetentionDays is how long prompts and outputs are kept (0: not kept);
	// TrainsOnPrompts whether they train models. The carrier declares both.
	RetentionDays   *int64
	TrainsOnPrompts *bool
	// Regions are ISO 3166-1 alpha-2 codes of the serving datacenters.
	Regions []string
	// RequestPrice (USD per request) and ImagePrice (USD per image part)
	// are billed and ranked (spread over the prompt).
	RequestPrice, ImagePrice *money.Micros
}

// ZDR reports zero data retention: retention 0 and no training, both
// declared.
func (m *Market) ZDR() bool { return m.dataPolicy().ZDR() }

// dataPolicy is the declaration as the engine reads it: the one home of
// what counts as zero data retention.
func (m *Market) dataPolicy() election.DataPolicy {
	return election.DataPolicy{RetentionDays: m.RetentionDays, TrainsOnPrompts: m.TrainsOnPrompts}
}

// MarketForm is the market section as typed.
type MarketForm struct {
	ContextLength, MaxOutputTokens string
	Quantization                   string
	RetentionDays                  string
	// TrainsOnPrompts is "yes", "no" or "" (not declared).
	TrainsOnPrompts string
	// Regions is a list of codes split by commas or spaces ("DE, US").
	Regions                  string
	RequestPrice, ImagePrice string
}

// MaxContextTokens bounds a filed context length (no model holds more).
const MaxContextTokens = 100_000_000

// market: the listing's attributes of sec. 7, each checked on its own.
func (p *formParser) market() {
	f, out := &p.form.Market, &p.fare.Market
	tokens := func(field, s string) *int64 {
		s = strings.TrimSpace(strings.ReplaceAll(s, ",", ""))
		if s == "" {
			return nil
		}
		v, err := strconv.ParseInt(s, 10, 64)
		if err != nil || v < 1 || v > MaxContextTokens {
			p.errs[field] = fmt.Sprintf("Enter a whole number of tokens from 1 to %s, or leave it empty for no limit.", money.Grouped(MaxContextTokens))
			return nil
		}
		return &v
	}
	out.ContextLength = tokens("context_length", f.ContextLength)
	out.MaxOutputTokens = tokens("max_output_tokens", f.MaxOutputTokens)
	if out.ContextLength != nil && out.MaxOutputTokens != nil && *out.MaxOutputTokens > *out.ContextLength {
		p.errs["max_output_tokens"] = fmt.Sprintf("The output cannot be longer than the whole context (%s tokens).", money.Grouped(*out.ContextLength))
	}
	if q := strings.ToLower(strings.TrimSpace(f.Quantization)); q != "" {
		if _, ok := election.ParseQuantization(q); !ok {
			p.errs["quantization"] = "Choose one of " + QuantizationChoices + ", or leave it empty."
		} else if q != election.QuantUnknown.String() {
			out.Quantization = q
		}
	}
	if s := strings.TrimSpace(f.RetentionDays); s != "" {
		v, err := strconv.ParseInt(s, 10, 64)
		if err != nil || v < 0 || v > 3650 {
			p.errs["retention_days"] = "Enter the days prompts are kept, from 0 (not kept) to 3650, or leave it empty if you do not declare it."
		} else {
			out.RetentionDays = &v
		}
	}
	switch strings.ToLower(strings.TrimSpace(f.TrainsOnPrompts)) {
	case "":
	case "yes", "true":
		out.TrainsOnPrompts = ptrBool(true)
	case "no", "false":
		out.TrainsOnPrompts = ptrBool(false)
	default:
		p.errs["trains_on_prompts"] = "Choose yes, no or not declared."
	}
	for _, code := range strings.FieldsFunc(f.Regions, func(r rune) bool { return r == ',' || r == ' ' || r == ';' }) {
		code = strings.ToUpper(code)
		if !election.ValidRegion(code) {
			p.errs["regions"] = fmt.Sprintf("%q is not a country code: write ISO 3166-1 codes of two letters, like DE, US, JP.", code)
			continue
		}
		if !slices.Contains(out.Regions, code) {
			out.Regions = append(out.Regions, code)
		}
	}
	slices.Sort(out.Regions)
	out.RequestPrice = p.fee("request_price", f.RequestPrice, "request")
	out.ImagePrice = p.fee("image_price", f.ImagePrice, "image")
}

// fee reads an optional fee in USD (per request, per image).
func (p *formParser) fee(field, s, per string) *money.Micros {
	s = strings.TrimPrefix(strings.TrimSpace(s), "$")
	if s == "" {
		return nil
	}
	m, err := money.ParsePrice(s)
	if err != nil || m < 0 {
		p.errs[field] = fmt.Sprintf("Enter a fee in USD per %s, like 0.0005 (at most 6 decimal places), or leave it empty for none.", per)
		return nil
	}
	return &m
}

func ptrBool(v bool) *bool { return &v }

// QuantizationChoices lists the quantizations a carrier may declare.
var QuantizationChoices = func() string {
	var names []string
	for _, q := range election.Quantizations()[1:] {
		names = append(names, q.String())
	}
	return strings.Join(names, ", ")
}()

// marketForm is the market section of a filed fare, as the form shows it.
func marketForm(m *Market) MarketForm {
	out := MarketForm{Quantization: m.Quantization, Regions: strings.Join(m.Regions, ", "),
		RequestPrice: formPrice(m.RequestPrice), ImagePrice: formPrice(m.ImagePrice)}
	if m.ContextLength != nil {
		out.ContextLength = strconv.FormatInt(*m.ContextLength, 10)
	}
	if m.MaxOutputTokens != nil {
		out.MaxOutputTokens = strconv.FormatInt(*m.MaxOutputTokens, 10)
	}
	if m.RetentionDays != nil {
		out.RetentionDays = strconv.FormatInt(*m.RetentionDays, 10)
	}
	if m.TrainsOnPrompts != nil {
		out.TrainsOnPrompts = map[bool]string{true: "yes", false: "no"}[*m.TrainsOnPrompts]
	}
	return out
}

// forElection is the market as the engine ranks and filters on it.
func (m *Market) forElection(out *election.Fare) {
	out.ContextLength, out.MaxOutputTokens = m.ContextLength, m.MaxOutputTokens
	out.Quantization, _ = election.ParseQuantization(m.Quantization)
	out.DataPolicy = m.dataPolicy()
	out.Regions = m.Regions
	if m.RequestPrice != nil {
		out.RequestPrice = m.RequestPrice.Float()
	}
	if m.ImagePrice != nil {
		out.ImagePrice = m.ImagePrice.Float()
	}
}

// Text helpers, as every page writes the attributes.

// TokensText is a token limit ("128,000 tokens", or "no limit").
func TokensText(v *int64) string {
	if v == nil {
		return "no limit"
	}
	return money.Grouped(*v) + " tokens"
}

// QuantizationText is a quantization, "not declared" when empty.
func QuantizationText(q string) string {
	if q == "" {
		return "not declared"
	}
	return q
}

// DataPolicyText says what a listing does with prompts, in words.
func (m *Market) DataPolicyText() string {
	if m.RetentionDays == nil && m.TrainsOnPrompts == nil {
		return "not declared (counts as keeping prompts and training on them)"
	}
	var kept, trains string
	switch {
	case m.RetentionDays == nil:
		kept = "retention not declared"
	case *m.RetentionDays == 0:
		kept = "prompts not kept"
	case *m.RetentionDays == 1:
		kept = "prompts kept 1 day"
	default:
		kept = fmt.Sprintf("prompts kept %d days", *m.RetentionDays)
	}
	switch {
	case m.TrainsOnPrompts == nil:
		trains = "training not declared"
	case *m.TrainsOnPrompts:
		trains = "trains on prompts"
	default:
		trains = "no training"
	}
	s := kept + ", " + trains
	if m.ZDR() {
		s += " (zero data retention)"
	}
	return s
}

// RegionsText lists the regions, "not declared" when none.
func RegionsText(r []string) string {
	if len(r) == 0 {
		return "not declared"
	}
	return strings.Join(r, ", ")
}

// FeeText is a fee in USD to six places, "none" when not filed.
func FeeText(m *money.Micros) string {
	if m == nil {
		return "none"
	}
	return "$" + m.String()
}

// marketChanges lists what changes in the market section; a limit or a fee
// that grows has direction +1 (no limit counts as the largest).
func marketChanges(old, new *Market) []Change {
	var out []Change
	add := func(field string, a, b string, dir int) {
		if a != b {
			out = append(out, Change{Field: field, Label: FieldLabel(field), Kind: KindMarket, Old: a, New: b, Direction: dir})
		}
	}
	add("context_length", TokensText(old.ContextLength), TokensText(new.ContextLength), limitDirection(old.ContextLength, new.ContextLength))
	add("max_output_tokens", TokensText(old.MaxOutputTokens), TokensText(new.MaxOutputTokens), limitDirection(old.MaxOutputTokens, new.MaxOutputTokens))
	add("quantization", QuantizationText(old.Quantization), QuantizationText(new.Quantization), 0)
	add("retention_days", retentionText(old.RetentionDays), retentionText(new.RetentionDays), 0)
	add("trains_on_prompts", trainsText(old.TrainsOnPrompts), trainsText(new.TrainsOnPrompts), 0)
	add("regions", RegionsText(old.Regions), RegionsText(new.Regions), 0)
	add("request_price", FeeText(old.RequestPrice), FeeText(new.RequestPrice), feeDirection(old.RequestPrice, new.RequestPrice))
	add("image_price", FeeText(old.ImagePrice), FeeText(new.ImagePrice), feeDirection(old.ImagePrice, new.ImagePrice))
	return out
}

// limitDirection is +1 when a limit grows (nil is no limit), -1 when it
// shrinks.
func limitDirection(a, b *int64) int {
	switch {
	case a == nil && b == nil:
		return 0
	case a == nil:
		return -1
	case b == nil:
		return 1
	}
	return sign(*b - *a)
}

func feeDirection(a, b *money.Micros) int {
	var x, y int64
	if a != nil {
		x = int64(*a)
	}
	if b != nil {
		y = int64(*b)
	}
	return sign(y - x)
}

func retentionText(v *int64) string {
	if v == nil {
		return "not declared"
	}
	if *v == 0 {
		return "not kept"
	}
	return strconv.FormatInt(*v, 10) + " days"
}

func trainsText(v *bool) string {
	if v == nil {
		return "not declared"
	}
	if *v {
		return "yes"
	}
	return "no"
}

// NarrowsService reports whether next serves developers less than prev in a
// way they must hear of ahead, like a price rise: a declared context or
// output limit made shorter. (A new or dearer fee is a price rise;
// RaisesPrices sees it.) Declaring a limit for the first time narrows
// nothing: the listing had it before it said so. A data policy or region
// change needs no notice: from its publication the election keeps requests
// that ask for ZDR, no data collection or a residency away from a listing
// that no longer offers it, so waiting would only delay that protection.
func NarrowsService(prev, next *Market) bool {
	return shrinks(prev.ContextLength, next.ContextLength) || shrinks(prev.MaxOutputTokens, next.MaxOutputTokens)
}

// contextRatio is how many times shorter next's context (or output) is
// than prev's, for the quarantine (1 when it is not shorter).
func contextRatio(prev, next *Market) float64 {
	worst := 1.0
	for _, pair := range [][2]*int64{{prev.ContextLength, next.ContextLength}, {prev.MaxOutputTokens, next.MaxOutputTokens}} {
		if a, b := pair[0], pair[1]; shrinks(a, b) {
			worst = max(worst, float64(*a)/float64(*b))
		}
	}
	return worst
}

// shrinks reports whether a declared limit becomes smaller (or is dropped
// for none, which counts as unknown, not as unlimited: it is not a cut).
func shrinks(a, b *int64) bool { return a != nil && b != nil && *b < *a }
