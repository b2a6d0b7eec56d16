// Package feed reads a carrier's provider feed in OpenRouter's format (the
// model list with pricing an inference provider already publishes for
// OpenRouter to poll) into the fare fields a filing takes, and checks its
// units before anything is filed.
package feed

import (
	"encoding/json"
	"errors"
	"fmt"
	"io"
	"math/big"
	"slices"
	"strings"

	"github.com/airside/airside/internal/fare"
	"github.com/airside/airside/internal/money"
)

// MaxBytes bounds a feed document.
const MaxBytes = 4 << 20

// Document is a provider feed: OpenRouter's provider format.
type Document struct {
	Data []Model `json:"data"`
}

// Model is one model a provider serves, with its pricing in USD per token
// (and per request and image) as decimal strings.
type Model struct {
	ID                string       `json:"id"`
	HuggingFaceID     string       `json:"hugging_face_id"`
	Name              string       `json:"name"`
	InputModalities   []string     `json:"input_modalities"`
	OutputModalities  []string     `json:"output_modalities"`
	Quantization      string       `json:"quantization"`
	ContextLength     *int64       `json:"context_length"`
	MaxOutputLength   *int64       `json:"max_output_length"`
	Pricing           Pricing      `json:"pricing"`
	SupportedFeatures []string     `json:"supported_features"`
	Datacenters       []Datacenter `json:"datacenters"`
}

// Pricing is OpenRouter's: USD per token, per request and per image.
type Pricing struct {
	Prompt          string `json:"prompt"`
	Completion      string `json:"completion"`
	Image           string `json:"image"`
	Request         string `json:"request"`
	InputCacheRead  string `json:"input_cache_read"`
	InputCacheWrite string `json:"input_cache_write"`
}

// Datacenter is where a model is served from.
type Datacenter struct {
	CountryCode string `json:"country_code"`
}

// Parse reads a feed document: at most MaxBytes, at least one model, each
// with an id and prompt and completion prices.
func Parse(r io.Reader) (*Document, error) {
	body, err := io.ReadAll(io.LimitReader(r, MaxBytes+1))
	if err != nil {
		return nil, fmt.Errorf("read the feed: %w", err)
	}
	if len(body) > MaxBytes {
		return nil, fmt.Errorf("the feed is over %d MiB", MaxBytes>>20)
	}
	var doc Document
	if err := json.Unmarshal(body, &doc); err != nil {
		return nil, fmt.Errorf("the feed is not OpenRouter's provider format ({\"data\": [models]}): %w", err)
	}
	if len(doc.Data) == 0 {
		return nil, errors.New("the feed lists no model (\"data\" is empty or missing)")
	}
	for i, m := range doc.Data {
		if strings.TrimSpace(m.ID) == "" {
			return nil, fmt.Errorf("model %d of the feed has no id", i+1)
		}
		if m.Pricing.Prompt == "" || m.Pricing.Completion == "" {
			return nil, fmt.Errorf("%s: the feed gives no prompt or completion price", m.ID)
		}
	}
	return &doc, nil
}

// Slug is the model slug a feed model names: the part of its id after the
// organisation ("moonshotai/kimi-k2.5" is kimi-k2.5), lower-cased.
func (m *Model) Slug() string {
	id := m.ID
	if i := strings.LastIndex(id, "/"); i >= 0 {
		id = id[i+1:]
	}
	return strings.ToLower(strings.TrimSpace(id))
}

// PerMillion turns a price in USD per token into USD per million tokens,
// exactly (the decimal point moves six places): "0.00000025" is "0.25".
func PerMillion(perToken string) (string, error) {
	r, ok := new(big.Rat).SetString(strings.TrimSpace(perToken))
	if !ok || r.Sign() < 0 || strings.ContainsAny(perToken, "eE/") {
		return "", fmt.Errorf("%q is not a price in USD as a decimal", perToken)
	}
	r.Mul(r, big.NewRat(1_000_000, 1))
	return trimmed(r), nil
}

// perUnit checks a per-request or per-image price and writes it as typed.
func perUnit(s string) (string, error) {
	r, ok := new(big.Rat).SetString(strings.TrimSpace(s))
	if !ok || r.Sign() < 0 || strings.ContainsAny(s, "eE/") {
		return "", fmt.Errorf("%q is not a price in USD as a decimal", s)
	}
	return trimmed(r), nil
}

// trimmed writes r as a decimal with as many places as it needs (a feed's
// prices are decimals: at most 18 places).
func trimmed(r *big.Rat) string {
	s := r.FloatString(18)
	s = strings.TrimRight(s, "0")
	return strings.TrimSuffix(s, ".")
}

// featureCapabilities maps OpenRouter's supported features to Airside's
// capability flags (a flag counts in routing only once preflight passes).
var featureCapabilities = map[string]string{
	"tools":              "tools",
	"json_mode":          "json_output",
	"structured_outputs": "json_schema",
	"reasoning":          "reasoning",
	"web_search":         "web_search",
}

// Fields are the fare fields a feed model sets, for fare.Apply: its
// prices (per million tokens), fees, context and output limits,
// quantization, regions and capabilities. A price the feed leaves empty or
// "0" leaves an optional field unset.
func (m *Model) Fields() (map[string]json.RawMessage, error) {
	out := map[string]json.RawMessage{}
	set := func(key, v string) { out[key], _ = json.Marshal(v) }
	for _, p := range []struct {
		key, value string
		required   bool
	}{
		{"input", m.Pricing.Prompt, true},
		{"output", m.Pricing.Completion, true},
		{"cached_input", m.Pricing.InputCacheRead, false},
		{"cache_write", m.Pricing.InputCacheWrite, false},
	} {
		if !p.required && (p.value == "" || isZero(p.value)) {
			set(p.key, "")
			continue
		}
		v, err := PerMillion(p.value)
		if err != nil {
			return nil, fmt.Errorf("%s: %s: %w", m.ID, fare.FieldLabel(p.key), err)
		}
		set(p.key, v)
	}
	for _, p := range []struct{ key, value string }{{"request_price", m.Pricing.Request}, {"image_price", m.Pricing.Image}} {
		if p.value == "" || isZero(p.value) {
			set(p.key, "")
			continue
		}
		v, err := perUnit(p.value)
		if err != nil {
			return nil, fmt.Errorf("%s: %s: %w", m.ID, fare.FieldLabel(p.key), err)
		}
		set(p.key, v)
	}
	if m.ContextLength != nil {
		set("context_length", fmt.Sprint(*m.ContextLength))
	}
	if m.MaxOutputLength != nil {
		set("max_output_tokens", fmt.Sprint(*m.MaxOutputLength))
	}
	if m.Quantization != "" {
		set("quantization", strings.ToLower(m.Quantization))
	}
	if len(m.Datacenters) > 0 {
		var codes []string
		for _, d := range m.Datacenters {
			if c := strings.ToUpper(strings.TrimSpace(d.CountryCode)); c != "" && !slices.Contains(codes, c) {
				codes = append(codes, c)
			}
		}
		set("regions", strings.Join(codes, ", "))
	}
	caps := []string{}
	for _, f := range m.SupportedFeatures {
		if c, ok := featureCapabilities[f]; ok && !slices.Contains(caps, c) {
			caps = append(caps, c)
		}
	}
	if slices.Contains(m.InputModalities, "image") {
		caps = append(caps, "vision")
	}
	if slices.Contains(m.InputModalities, "audio") {
		caps = append(caps, "audio_input")
	}
	slices.Sort(caps)
	out["capabilities"], _ = json.Marshal(caps)
	return out, nil
}

func isZero(s string) bool {
	r, ok := new(big.Rat).SetString(strings.TrimSpace(s))
	return ok && r.Sign() == 0
}

// UnitRatio is how far a feed price may move a published price before it
// is taken for a unit mistake (per million written where per token is
// meant moves it 1,000,000x).
const UnitRatio = 1000

// UnitMistake says, in a sentence, when a feed's input or output price is
// UnitRatio times the published one or more, either way: the feed most
// likely gives USD per million tokens where OpenRouter's format wants USD
// per token (or the reverse). "" when the prices are plausible.
func UnitMistake(m *Model, published, proposed *fare.Fare) string {
	if published == nil || proposed == nil {
		return ""
	}
	for _, p := range []struct {
		name, feed string
		was, now   money.Micros
	}{{"prompt", m.Pricing.Prompt, published.Input, proposed.Input}, {"completion", m.Pricing.Completion, published.Output, proposed.Output}} {
		if p.was <= 0 || p.now <= 0 {
			continue
		}
		ratio := float64(p.now) / float64(p.was)
		if ratio >= UnitRatio || ratio <= 1.0/UnitRatio {
			return fmt.Sprintf("The feed's %s price for %s is %s USD per token, $%s per million tokens: %s the published $%s. "+
				"OpenRouter's format gives USD per token (0.00000025 for $0.25 per million); the feed seems to give another unit, so nothing was filed for it.",
				p.name, m.ID, p.feed, p.now, times(ratio), p.was)
		}
	}
	return ""
}

func times(ratio float64) string {
	if ratio >= 1 {
		return fmt.Sprintf("%s times", groupThousands(ratio))
	}
	return fmt.Sprintf("1/%s of", groupThousands(1/ratio))
}

func groupThousands(v float64) string {
	s := fmt.Sprintf("%.0f", v)
	var out []byte
	for i := range len(s) {
		if i > 0 && (len(s)-i)%3 == 0 {
			out = append(out, ',')
		}
		out = append(out, s[i])
	}
	return string(out)
}
