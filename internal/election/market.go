package election

import (
	"slices"
	"strings"
)

// This file is section 7 of the spec: what a listing offers besides price
// (context, quantization, data policy, regions, per-request and per-image
// fees) and what a request may ask for (OpenRouter's provider object and a
// project's data residency).

// Quantization is the numeric format a listing serves its weights in.
type Quantization uint8

// The quantizations of sec. 7; the zero value is unknown (undeclared).
const (
	QuantUnknown Quantization = iota
	QuantInt4
	QuantInt8
	QuantFP4
	QuantFP6
	QuantFP8
	QuantFP16
	QuantBF16
	QuantFP32
	numQuantizations
)

var quantizationNames = [numQuantizations]string{"unknown", "int4", "int8", "fp4", "fp6", "fp8", "fp16", "bf16", "fp32"}

func (q Quantization) String() string {
	if q < numQuantizations {
		return quantizationNames[q]
	}
	return "unknown"
}

// ParseQuantization reads a quantization by its contract name.
func ParseQuantization(s string) (Quantization, bool) {
	for i, name := range quantizationNames {
		if s == name {
			return Quantization(i), true
		}
	}
	return QuantUnknown, false
}

// Quantizations lists every quantization, unknown first.
func Quantizations() []Quantization {
	out := make([]Quantization, numQuantizations)
	for i := range out {
		out[i] = Quantization(i)
	}
	return out
}

// QuantizationSet is a set of quantizations (a request's `quantizations`).
type QuantizationSet uint16

// With returns the set with q added.
func (s QuantizationSet) With(q Quantization) QuantizationSet { return s | 1<<q }

// Has reports whether q is in the set.
func (s QuantizationSet) Has(q Quantization) bool { return s&(1<<q) != 0 }

// ValidRegion reports whether s is an ISO 3166-1 alpha-2 code as the
// contract writes it: two uppercase ASCII letters.
func ValidRegion(s string) bool {
	return len(s) == 2 && s[0] >= 'A' && s[0] <= 'Z' && s[1] >= 'A' && s[1] <= 'Z'
}

// DataPolicy is what a carrier declares of a listing's prompts. Undeclared
// (nil) counts as keeping prompts and training on them.
type DataPolicy struct {
	RetentionDays   *int64
	TrainsOnPrompts *bool
}

// ZDR reports zero data retention: retention 0 and no training, both
// declared.
func (d DataPolicy) ZDR() bool {
	return d.RetentionDays != nil && *d.RetentionDays == 0 && d.TrainsOnPrompts != nil && !*d.TrainsOnPrompts
}

// Trains reports whether the listing may train on prompts (undeclared
// counts as training).
func (d DataPolicy) Trains() bool { return d.TrainsOnPrompts == nil || *d.TrainsOnPrompts }

// MaxPrice is a request's `max_price`: what a developer will pay at most,
// per million tokens (prompt, completion), per request and per image; nil
// sets no limit.
type MaxPrice struct {
	Prompt, Completion, Request, Image *float64
}

// Provider is OpenRouter's provider object as the election applies it (the
// project's defaults already merged under the request's fields).
type Provider struct {
	// Only and Ignore name listings by carrier slug or full id.
	Only, Ignore []string
	// Order names listings to try first, in order; NoFallbacks stops at
	// them (allow_fallbacks: false, or the x-no-fallback header).
	Order       []string
	NoFallbacks bool
	// Quantizations, when not empty, are the only ones allowed.
	Quantizations QuantizationSet
	// DenyDataCollection excludes listings that train on prompts; ZDR
	// every listing that is not zero data retention.
	DenyDataCollection bool
	ZDR                bool
	MaxPrice           *MaxPrice
	// RequireParameters is accepted and changes nothing: Airside always
	// requires what the request uses (sec. 1).
	RequireParameters bool
}

// filters reports whether the provider object narrows the ballot (or
// orders it): what makes a request pinned or ordered rather than routed.
func (p *Provider) filters() bool {
	return p != nil && (len(p.Only) > 0 || len(p.Ignore) > 0 || len(p.Order) > 0 || p.Quantizations != 0 ||
		p.DenyDataCollection || p.ZDR || p.MaxPrice != nil)
}

// marketAsked reports whether the request asks anything of sec. 7 that a
// listing may fail (an output size, preferences, a residency): the prompt
// alone is checked only against listings that declare a context.
func (r *Request) marketAsked() bool {
	return r.MaxTokens > 0 || r.Provider != nil || len(r.Regions) > 0
}

// Narrows reports whether the request's preferences or residency narrow
// the ballot, so a request they leave one listing is pinned.
func (r *Request) Narrows() bool { return r.Provider.filters() || len(r.Regions) > 0 }

// SlugMatches reports whether a provider entry names the listing id: the
// whole id, or its carrier slug (the id before the first "/").
func SlugMatches(entry, id string) bool {
	if entry == id {
		return true
	}
	slug, _, found := strings.Cut(id, "/")
	return found && entry == slug
}

func matchesAny(entries []string, id string) bool {
	for _, e := range entries {
		if SlugMatches(e, id) {
			return true
		}
	}
	return false
}

// defaultFeePromptTokens is the prompt a per-request fee is spread over
// when the request gives none (sec. 7).
const defaultFeePromptTokens = 1000

// FeePrice is what a request's fees add to its token price: (requestPrice +
// images x imagePrice) x 1,000,000 / (2 x P), P the prompt (1,000 when 0).
func FeePrice(requestPrice, imagePrice float64, images, promptTokens int64) float64 {
	if requestPrice == 0 && imagePrice == 0 {
		return 0 // most fares: no fee to spread
	}
	fees := requestPrice + float64(images)*imagePrice
	p := promptTokens
	if p <= 0 {
		p = defaultFeePromptTokens
	}
	return fees * 1e6 / float64(2*p)
}

// exceeds reports whether a price is above a limit; equal passes, and a
// last-bit difference of float arithmetic (0.6 x 0.9) counts as equal.
func exceeds(v, limit float64) bool {
	return v > limit && v-limit > 1e-12*max(limit, 1e-3)
}

// marketExclusions are the exclusions of sec. 7 that depend only on the
// listing's attributes and the request (max_price waits for the prices).
func marketExclusions(f *Fare, id string, req *Request) Exclusion {
	var e Exclusion
	if f.ContextLength != nil {
		need := req.PromptTokens + req.MaxTokens
		if need > *f.ContextLength {
			e |= exclContext
		}
	}
	if f.MaxOutputTokens != nil && req.MaxTokens > *f.MaxOutputTokens {
		e |= exclMaxOutput
	}
	if p := req.Provider; p != nil {
		if len(p.Only) > 0 && !matchesAny(p.Only, id) {
			e |= exclOnly
		}
		if len(p.Ignore) > 0 && matchesAny(p.Ignore, id) {
			e |= exclIgnore
		}
		if p.Quantizations != 0 && !p.Quantizations.Has(f.Quantization) {
			e |= exclQuantization
		}
		if p.DenyDataCollection && f.DataPolicy.Trains() {
			e |= exclDataCollection
		}
		if p.ZDR && !f.DataPolicy.ZDR() {
			e |= exclZDR
		}
	}
	if len(req.Regions) > 0 && !sharesRegion(f.Regions, req.Regions) {
		e |= exclRegion
	}
	return e
}

func sharesRegion(listing, wanted []string) bool {
	for _, r := range listing {
		for _, w := range wanted {
			if r == w {
				return true
			}
		}
	}
	return false
}

// overMaxPrice reports whether the prices a developer pays for the request
// (resolved, times 1 - discount) exceed a limit of the request's max_price.
func overMaxPrice(m *MaxPrice, p *Prices, fees Fees, discount float64) bool {
	pay := 1 - discount
	return m.Prompt != nil && exceeds(p.Input*pay, *m.Prompt) ||
		m.Completion != nil && exceeds(p.Output*pay, *m.Completion) ||
		m.Request != nil && exceeds(fees.Request*pay, *m.Request) ||
		m.Image != nil && exceeds(fees.Image*pay, *m.Image)
}

// orderTries puts a request's provider order first: each entry's eligible
// listings by rank (ranked holds ballot indices from rank 1 down), then,
// unless fallbacks are off, the rest as ranked.
func orderTries(dst []int, p *Provider, ids func(int) string, ranked []int) []int {
	start := len(dst)
	for _, entry := range p.Order {
		for _, i := range ranked {
			if SlugMatches(entry, ids(i)) && !slices.Contains(dst[start:], i) {
				dst = append(dst, i)
			}
		}
	}
	if p.NoFallbacks {
		return dst
	}
	named := len(dst)
	for _, i := range ranked {
		if !slices.Contains(dst[start:named], i) {
			dst = append(dst, i)
		}
	}
	return dst
}

// orderedWinner is the first listing a provider order names that is on the
// ballot (the best score among an entry's matches, ties to the one listed
// first), for the winner-only paths; ok is false when the order names none
// and fallbacks are on, so the election's own winner stands.
func orderedWinner(p *Provider, n int, id func(int) string, score func(int) (float64, bool)) (winner int, ok bool) {
	for _, entry := range p.Order {
		best, bestScore := -1, 0.0
		for i := range n {
			s, eligible := score(i)
			if eligible && SlugMatches(entry, id(i)) && (best < 0 || s < bestScore) {
				best, bestScore = i, s
			}
		}
		if best >= 0 {
			return best, true
		}
	}
	if p.NoFallbacks {
		return -1, true
	}
	return -1, false
}
