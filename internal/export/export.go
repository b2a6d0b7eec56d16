// Package export writes the published catalogue in the shapes other tools
// read: OpenRouter's /models (each model with its endpoints, prices in USD
// per token as decimal strings) and LiteLLM's price map
// (model_prices_and_context_window.json: USD per token as numbers). A gateway
// team loads either without writing a converter.
//
// Prices are what developers pay: the filed base price times (1 -
// discount), exactly (the per-token decimal is the per-million one shifted,
// never a float). Neither format can say a time-of-day block or a context
// tier: the base price is exported and the catalogue keeps the rest.
package export

import (
	"math/big"
	"slices"
	"sort"
	"strings"

	"github.com/airside/airside/internal/catalogue"
	"github.com/airside/airside/internal/election"
	"github.com/airside/airside/internal/fare"
	"github.com/airside/airside/internal/feed"
	"github.com/airside/airside/internal/money"
)

// Listing is one published listing with its verified capabilities.
type Listing struct {
	*catalogue.Listing
	// Verified are the capability flags whose preflight passed: only those
	// count, as in routing.
	Verified []election.Capability
}

// OpenRouterModels is the /models document.
type OpenRouterModels struct {
	Data []OpenRouterModel `json:"data"`
}

// OpenRouterModel is one model: its best price (the cheapest endpoint's, as
// OpenRouter shows a model) and every endpoint.
type OpenRouterModel struct {
	ID                  string               `json:"id"`
	Name                string               `json:"name"`
	ContextLength       int64                `json:"context_length"`
	Architecture        Architecture         `json:"architecture"`
	Pricing             Pricing              `json:"pricing"`
	SupportedParameters []string             `json:"supported_parameters"`
	Endpoints           []OpenRouterEndpoint `json:"endpoints"`
}

// Architecture is what a model takes and gives.
type Architecture struct {
	InputModalities  []string `json:"input_modalities"`
	OutputModalities []string `json:"output_modalities"`
}

// Pricing is OpenRouter's: USD per token (prompt, completion, cache reads
// and writes), per request and per image, as decimal strings; "0" for none.
type Pricing struct {
	Prompt          string `json:"prompt"`
	Completion      string `json:"completion"`
	Request         string `json:"request"`
	Image           string `json:"image"`
	InputCacheRead  string `json:"input_cache_read"`
	InputCacheWrite string `json:"input_cache_write"`
}

// OpenRouterEndpoint is one listing as an endpoint of its model.
type OpenRouterEndpoint struct {
	Name                string       `json:"name"`
	ProviderName        string       `json:"provider_name"`
	Tag                 string       `json:"tag"`
	ContextLength       int64        `json:"context_length"`
	MaxCompletionTokens *int64       `json:"max_completion_tokens"`
	Quantization        string       `json:"quantization"`
	Pricing             Pricing      `json:"pricing"`
	SupportedParameters []string     `json:"supported_parameters"`
	Datacenters         []Datacenter `json:"datacenters"`
	// Status is 0 in service, -1 paused (OpenRouter's codes).
	Status int `json:"status"`
}

// Datacenter is where an endpoint is served from.
type Datacenter struct {
	CountryCode string `json:"country_code"`
}

// supportedParameters are the request parameters a verified capability
// lets through, in OpenRouter's names.
var supportedParameters = map[election.Capability][]string{
	election.CapTools:           {"tools", "tool_choice"},
	election.CapJSONOutput:      {"response_format"},
	election.CapJSONSchema:      {"structured_outputs"},
	election.CapReasoning:       {"reasoning", "include_reasoning"},
	election.CapReasoningBudget: {"reasoning"},
	election.CapWebSearch:       {"web_search_options"},
}

// baseParameters every OpenAI-compatible endpoint takes.
var baseParameters = []string{"max_tokens", "temperature", "top_p", "stop", "stream"}

// OpenRouter builds the /models document from the published listings, in
// model order, each model's endpoints by carrier.
func OpenRouter(listings []Listing) OpenRouterModels {
	byModel := map[string][]Listing{}
	var models []string
	for _, l := range listings {
		if l.Published == nil {
			continue
		}
		if _, ok := byModel[l.Model.Slug]; !ok {
			models = append(models, l.Model.Slug)
		}
		byModel[l.Model.Slug] = append(byModel[l.Model.Slug], l)
	}
	sort.Strings(models)
	out := OpenRouterModels{Data: []OpenRouterModel{}}
	for _, slug := range models {
		ls := byModel[slug]
		sort.Slice(ls, func(i, j int) bool { return ls[i].CarrierSlug < ls[j].CarrierSlug })
		m := OpenRouterModel{ID: slug, Name: ls[0].Model.Name, ContextLength: ls[0].Model.ContextTokens,
			Architecture:        Architecture{InputModalities: []string{"text"}, OutputModalities: []string{"text"}},
			SupportedParameters: slices.Clone(baseParameters)}
		var cheapest *Listing
		for i := range ls {
			l := &ls[i]
			e := endpoint(l)
			m.Endpoints = append(m.Endpoints, e)
			m.ContextLength = max(m.ContextLength, e.ContextLength)
			for _, p := range e.SupportedParameters {
				if !slices.Contains(m.SupportedParameters, p) {
					m.SupportedParameters = append(m.SupportedParameters, p)
				}
			}
			if slices.Contains(l.Verified, election.CapVision) && !slices.Contains(m.Architecture.InputModalities, "image") {
				m.Architecture.InputModalities = append(m.Architecture.InputModalities, "image")
			}
			if cheapest == nil || paid(l.Published, l.Published.Input) < paid(cheapest.Published, cheapest.Published.Input) {
				cheapest = l
			}
		}
		m.Pricing = pricing(cheapest.Published)
		out.Data = append(out.Data, m)
	}
	return out
}

func endpoint(l *Listing) OpenRouterEndpoint {
	f := l.Published
	e := OpenRouterEndpoint{Name: l.CarrierName + " | " + l.Model.Slug, ProviderName: l.CarrierName, Tag: l.CarrierSlug,
		ContextLength: l.Model.ContextTokens, MaxCompletionTokens: f.MaxOutputTokens, Quantization: f.Quantization,
		Pricing: pricing(f), SupportedParameters: slices.Clone(baseParameters), Datacenters: []Datacenter{}}
	if f.ContextLength != nil {
		e.ContextLength = *f.ContextLength
	}
	if e.Quantization == "" {
		e.Quantization = election.QuantUnknown.String()
	}
	for _, c := range l.Verified {
		for _, p := range supportedParameters[c] {
			if !slices.Contains(e.SupportedParameters, p) {
				e.SupportedParameters = append(e.SupportedParameters, p)
			}
		}
	}
	for _, r := range f.Regions {
		e.Datacenters = append(e.Datacenters, Datacenter{CountryCode: r})
	}
	if l.Status == catalogue.StatusPaused {
		e.Status = -1
	}
	return e
}

// paid is a filed price as developers pay it, in units of 1e-10 USD per
// million tokens: micros x (10,000 - discount in basis points), exact.
func paid(f *fare.Fare, m money.Micros) int64 {
	return int64(m) * (fare.Unit - int64(f.Discount))
}

// perToken writes a per-million price as developers pay it per token: the
// exact decimal (paid / 1e16 USD), trailing zeros trimmed.
func perToken(f *fare.Fare, m *money.Micros) string {
	if m == nil {
		return "0"
	}
	return decimal(paid(f, *m), 16)
}

// perUnit writes a fee (USD a request or an image) as developers pay it.
func perUnit(f *fare.Fare, m *money.Micros) string {
	if m == nil {
		return "0"
	}
	return decimal(paid(f, *m), 10)
}

// decimal writes v / 10^places exactly, trailing zeros trimmed.
func decimal(v int64, places int) string {
	return strings.TrimSuffix(strings.TrimRight(new(big.Rat).SetFrac(big.NewInt(v), new(big.Int).Exp(big.NewInt(10), big.NewInt(int64(places)), nil)).FloatString(places), "0"), ".")
}

// cacheRead is what a cache read costs: the cached-input price, else the
// explicit cache-read price.
func cacheRead(f *fare.Fare) *money.Micros {
	if f.CachedInput != nil {
		return f.CachedInput
	}
	return f.CacheRead
}

func pricing(f *fare.Fare) Pricing {
	input, output := f.Input, f.Output
	return Pricing{Prompt: perToken(f, &input), Completion: perToken(f, &output),
		Request: perUnit(f, f.RequestPrice), Image: perUnit(f, f.ImagePrice),
		InputCacheRead: perToken(f, cacheRead(f)), InputCacheWrite: perToken(f, f.CacheWrite)}
}

// LiteLLMEntry is one entry of LiteLLM's price map, keyed
// "airside/<carrier>/<model>".
type LiteLLMEntry struct {
	LiteLLMProvider             string   `json:"litellm_provider"`
	Mode                        string   `json:"mode"`
	MaxTokens                   int64    `json:"max_tokens"`
	MaxInputTokens              int64    `json:"max_input_tokens"`
	MaxOutputTokens             int64    `json:"max_output_tokens"`
	InputCostPerToken           float64  `json:"input_cost_per_token"`
	OutputCostPerToken          float64  `json:"output_cost_per_token"`
	CacheReadInputTokenCost     *float64 `json:"cache_read_input_token_cost,omitempty"`
	CacheCreationInputTokenCost *float64 `json:"cache_creation_input_token_cost,omitempty"`
	InputCostPerRequest         *float64 `json:"input_cost_per_request,omitempty"`
	InputCostPerImage           *float64 `json:"input_cost_per_image,omitempty"`
	SupportsFunctionCalling     bool     `json:"supports_function_calling"`
	SupportsVision              bool     `json:"supports_vision"`
	SupportsResponseSchema      bool     `json:"supports_response_schema"`
	SupportsReasoning           bool     `json:"supports_reasoning"`
	SupportsWebSearch           bool     `json:"supports_web_search"`
	SupportsAudioInput          bool     `json:"supports_audio_input"`
	SupportsSystemMessages      bool     `json:"supports_system_messages"`
	SupportsPromptCaching       bool     `json:"supports_prompt_caching"`
	SupportsToolChoice          bool     `json:"supports_tool_choice"`
	SupportsNativeStreaming     bool     `json:"supports_native_streaming"`
}

// LiteLLMProvider names Airside's listings in LiteLLM's map.
const LiteLLMProvider = "airside"

// LiteLLM builds the price map from the published listings.
func LiteLLM(listings []Listing) map[string]LiteLLMEntry {
	out := map[string]LiteLLMEntry{}
	for _, l := range listings {
		f := l.Published
		if f == nil {
			continue
		}
		ctx := l.Model.ContextTokens
		if f.ContextLength != nil {
			ctx = *f.ContextLength
		}
		maxOut := ctx
		if f.MaxOutputTokens != nil {
			maxOut = *f.MaxOutputTokens
		}
		has := func(c election.Capability) bool { return slices.Contains(l.Verified, c) }
		number := func(m *money.Micros, places int) *float64 {
			if m == nil {
				return nil
			}
			v := float64(paid(f, *m)) / pow10(places)
			return &v
		}
		e := LiteLLMEntry{LiteLLMProvider: LiteLLMProvider, Mode: "chat", MaxTokens: maxOut, MaxInputTokens: ctx, MaxOutputTokens: maxOut,
			InputCostPerToken: float64(paid(f, f.Input)) / 1e16, OutputCostPerToken: float64(paid(f, f.Output)) / 1e16,
			CacheReadInputTokenCost: number(cacheRead(f), 16), CacheCreationInputTokenCost: number(f.CacheWrite, 16),
			InputCostPerRequest: number(f.RequestPrice, 10), InputCostPerImage: number(f.ImagePrice, 10),
			SupportsFunctionCalling: has(election.CapTools), SupportsToolChoice: has(election.CapTools),
			SupportsVision: has(election.CapVision), SupportsResponseSchema: has(election.CapJSONSchema),
			SupportsReasoning: has(election.CapReasoning), SupportsWebSearch: has(election.CapWebSearch),
			SupportsAudioInput: has(election.CapAudioInput), SupportsSystemMessages: true,
			SupportsPromptCaching: cacheRead(f) != nil, SupportsNativeStreaming: true}
		out[LiteLLMProvider+"/"+l.CarrierSlug+"/"+l.Model.Slug] = e
	}
	return out
}

func pow10(n int) float64 {
	v := 1.0
	for range n {
		v *= 10
	}
	return v
}

// ProviderFeed writes a carrier's published listings as the provider feed
// it would publish for OpenRouter (internal/feed reads the same format
// back): each listing's filed prices per token, exactly, its limits,
// quantization, regions and declared capabilities. Filed prices, not what
// developers pay: a feed says the carrier's own price list.
func ProviderFeed(listings []catalogue.Listing) feed.Document {
	doc := feed.Document{Data: []feed.Model{}}
	for i := range listings {
		l := &listings[i]
		f := l.Published
		if f == nil {
			continue
		}
		m := feed.Model{ID: l.Model.Slug, Name: l.Model.Name, Quantization: f.Market.Quantization,
			ContextLength: f.Market.ContextLength, MaxOutputLength: f.Market.MaxOutputTokens,
			InputModalities: []string{"text"}, OutputModalities: []string{"text"},
			Pricing: feed.Pricing{Prompt: decimal(int64(f.Input), 12), Completion: decimal(int64(f.Output), 12),
				InputCacheRead: filedPerToken(f.CachedInput), InputCacheWrite: filedPerToken(f.CacheWrite),
				Request: filedPerUnit(f.RequestPrice), Image: filedPerUnit(f.ImagePrice)}}
		for _, r := range f.Market.Regions {
			m.Datacenters = append(m.Datacenters, feed.Datacenter{CountryCode: r})
		}
		for _, c := range f.Capabilities {
			switch c {
			case election.CapVision:
				m.InputModalities = append(m.InputModalities, "image")
			case election.CapAudioInput:
				m.InputModalities = append(m.InputModalities, "audio")
			default:
				if feature, ok := features[c]; ok {
					m.SupportedFeatures = append(m.SupportedFeatures, feature)
				}
			}
		}
		doc.Data = append(doc.Data, m)
	}
	return doc
}

// features are OpenRouter's names of the capabilities a feed declares.
var features = map[election.Capability]string{
	election.CapTools: "tools", election.CapJSONOutput: "json_mode", election.CapJSONSchema: "structured_outputs",
	election.CapReasoning: "reasoning", election.CapWebSearch: "web_search",
}

func filedPerToken(m *money.Micros) string {
	if m == nil {
		return "0"
	}
	return decimal(int64(*m), 12)
}

func filedPerUnit(m *money.Micros) string {
	if m == nil {
		return "0"
	}
	return decimal(int64(*m), 6)
}
