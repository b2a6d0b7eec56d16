package election

import (
	"bytes"
	"encoding/json"
	"errors"
	"fmt"
	"io"
	"math"
	"strconv"
	"strings"
	"time"
)

// This file is the machine contract of section 5 of the spec: the JSON that
// `airside elect`, the API and the preview speak.

// InputError is bad input, naming the field at fault.
type InputError struct {
	Field string
	Msg   string
}

func (e *InputError) Error() string {
	if e.Field == "" {
		return e.Msg
	}
	return e.Field + ": " + e.Msg
}

func inputErr(field, format string, args ...any) error {
	return &InputError{Field: field, Msg: fmt.Sprintf(format, args...)}
}

// UsageInput is a candidate's usage as a request gives it: requests in the
// current minute and day, absent counts 0.
type UsageInput struct {
	RPM *int64 `json:"rpm"`
	RPD *int64 `json:"rpd"`
}

// StateInput is a candidate's state under the gateway's limits as the
// contract spells it (election.md sec. 8).
type StateInput struct {
	Backoff bool   `json:"backoff"`
	Slow    bool   `json:"slow"`
	Breaker string `json:"breaker"`
	Probe   bool   `json:"probe"`
}

// State checks the breaker's state and returns the state; an error names
// the field under path ("candidates[2].state.breaker").
func (in StateInput) State(path string) (State, error) {
	out := State{Backoff: in.Backoff, Slow: in.Slow, Probe: in.Probe}
	if in.Breaker != "" {
		b, ok := ParseBreaker(in.Breaker)
		if !ok {
			return State{}, inputErr(path+".breaker", "must be one of closed, open, half_open")
		}
		out.Breaker = b
	}
	return out, nil
}

// Usage checks the counts (none negative) and returns them; an error names
// the field under path ("candidates[2].usage.rpm").
func (u UsageInput) Usage(path string) (Usage, error) {
	var out Usage
	for _, f := range []struct {
		name string
		n    *int64
		dst  *int64
	}{{"rpm", u.RPM, &out.RPM}, {"rpd", u.RPD, &out.RPD}} {
		if f.n == nil {
			continue
		}
		if *f.n < 0 {
			return Usage{}, inputErr(path+"."+f.name, "must not be negative")
		}
		*f.dst = *f.n
	}
	return out, nil
}

// rawDecimal keeps a JSON string or number as written, so that conversion
// errors can name the field; "null" reads as absent.
type rawDecimal []byte

func (d *rawDecimal) UnmarshalJSON(b []byte) error {
	if string(b) == "null" {
		*d = nil
		return nil
	}
	*d = append((*d)[:0], b...)
	return nil
}

// ParseDecimal reads a plain decimal (digits, optional sign, point and
// exponent), refusing NaN, infinities and hex floats.
func ParseDecimal(s string) (float64, error) {
	if !isPlainDecimal(s) {
		return 0, fmt.Errorf("not a decimal: %q", s)
	}
	v, err := strconv.ParseFloat(s, 64)
	if err != nil || math.IsInf(v, 0) || math.IsNaN(v) {
		return 0, fmt.Errorf("not a finite decimal: %q", s)
	}
	return v, nil
}

func isPlainDecimal(s string) bool {
	i, n := 0, len(s)
	if i < n && (s[i] == '-' || s[i] == '+') {
		i++
	}
	digits := 0
	for i < n && s[i] >= '0' && s[i] <= '9' {
		i, digits = i+1, digits+1
	}
	if i < n && s[i] == '.' {
		i++
		for i < n && s[i] >= '0' && s[i] <= '9' {
			i, digits = i+1, digits+1
		}
	}
	if digits == 0 {
		return false
	}
	if i < n && (s[i] == 'e' || s[i] == 'E') {
		i++
		if i < n && (s[i] == '-' || s[i] == '+') {
			i++
		}
		exp := 0
		for i < n && s[i] >= '0' && s[i] <= '9' {
			i, exp = i+1, exp+1
		}
		if exp == 0 {
			return false
		}
	}
	return i == n
}

// value converts the raw decimal; nil when absent.
func (d rawDecimal) value(field string) (*float64, error) {
	if d == nil {
		return nil, nil
	}
	s := string(d)
	if len(s) > 0 && s[0] == '"' {
		if err := json.Unmarshal(d, &s); err != nil {
			return nil, inputErr(field, "not a string: %v", err)
		}
	}
	v, err := ParseDecimal(s)
	if err != nil {
		return nil, inputErr(field, "%v", err)
	}
	return &v, nil
}

type jsonBallot struct {
	Request    *jsonRequest    `json:"request"`
	Candidates []jsonCandidate `json:"candidates"`
	Weights    *jsonWeights    `json:"weights"`
	// Policy is sec. 8's: election (the default) or share.
	Policy *string `json:"policy"`
}

type jsonRequest struct {
	Model            string     `json:"model"`
	PromptTokens     *int64     `json:"promptTokens"`
	Streaming        bool       `json:"streaming"`
	Routing          *string    `json:"routing"`
	Workload         *string    `json:"workload"`
	SessionOpening   bool       `json:"sessionOpening"`
	Requires         []string   `json:"requires"`
	At               *string    `json:"at"`
	CacheHitRate     rawDecimal `json:"cacheHitRate"`
	CacheOutputRatio rawDecimal `json:"cacheOutputRatio"`
	Observed         *struct {
		CacheHitRate     rawDecimal `json:"cacheHitRate"`
		CacheOutputRatio rawDecimal `json:"cacheOutputRatio"`
	} `json:"observed"`
	MarketInput
}

type jsonWeights struct {
	Price      rawDecimal `json:"price"`
	Uptime     rawDecimal `json:"uptime"`
	Throughput rawDecimal `json:"throughput"`
	Latency    rawDecimal `json:"latency"`
	Cache      rawDecimal `json:"cache"`
}

type jsonCandidate struct {
	ID           string          `json:"id"`
	Priority     rawDecimal      `json:"priority"`
	Capabilities map[string]bool `json:"capabilities"`
	Metrics      *struct {
		Uptime       rawDecimal `json:"uptime"`
		LatencyMs    rawDecimal `json:"latencyMs"`
		Throughput   rawDecimal `json:"throughput"`
		CacheHitRate rawDecimal `json:"cacheHitRate"`
	} `json:"metrics"`
	Usage *UsageInput `json:"usage"`
	Fare  *jsonFare   `json:"fare"`
	// State is what the gateway's limits say of the candidate (election.md
	// sec. 8's contract additions).
	State *StateInput `json:"state"`
	// ShareMetrics are its figures for the share policy (sec. 8).
	ShareMetrics *struct {
		Successes             *int64     `json:"successes"`
		ErrorRate             rawDecimal `json:"errorRate"`
		MalformedToolCallRate rawDecimal `json:"malformedToolCallRate"`
		RateLimitedRate       rawDecimal `json:"rateLimitedRate"`
		TTFTMs                rawDecimal `json:"ttftMs"`
		Speed                 rawDecimal `json:"speed"`
	} `json:"shareMetrics"`
}

type jsonPrices struct {
	InputPrice       rawDecimal `json:"inputPrice"`
	OutputPrice      rawDecimal `json:"outputPrice"`
	CachedInputPrice rawDecimal `json:"cachedInputPrice"`
	// RequestPrice and ImagePrice are sec. 7's fees (USD per request, per
	// image part).
	RequestPrice rawDecimal `json:"requestPrice"`
	ImagePrice   rawDecimal `json:"imagePrice"`
}

func (p *jsonPrices) usesFees() bool {
	return p != nil && (p.RequestPrice != nil || p.ImagePrice != nil)
}

type jsonFare struct {
	jsonPrices
	CacheReadInputPrice rawDecimal `json:"cacheReadInputPrice"`
	Discount            rawDecimal `json:"discount"`
	LandingFee          rawDecimal `json:"landingFee"`
	MaxRpm              *int64     `json:"maxRpm"`
	MaxRpd              *int64     `json:"maxRpd"`
	Tiers               []struct {
		AboveTokens *int64 `json:"aboveTokens"`
		jsonPrices
	} `json:"tiers"`
	TimeBased *struct {
		EffectiveAt  *string `json:"effectiveAt"`
		PeakHoursUtc [][]int `json:"peakHoursUtc"`
		OffPeakDays  *struct {
			DaysOfWeek       []int `json:"daysOfWeek"`
			UtcOffsetMinutes int   `json:"utcOffsetMinutes"`
		} `json:"offPeakDays"`
		Peak    *jsonPrices `json:"peak"`
		OffPeak *jsonPrices `json:"offPeak"`
	} `json:"timeBased"`
	// Sec. 7's attributes.
	ContextLength   *int64   `json:"contextLength"`
	MaxOutputTokens *int64   `json:"maxOutputTokens"`
	Quantization    *string  `json:"quantization"`
	RetentionDays   *int64   `json:"retentionDays"`
	TrainsOnPrompts *bool    `json:"trainsOnPrompts"`
	Regions         []string `json:"regions"`
}

// usesMarket reports whether the fare uses any attribute of sec. 7.
func (f *jsonFare) usesMarket() bool {
	if f == nil {
		return false
	}
	if f.ContextLength != nil || f.MaxOutputTokens != nil || f.Quantization != nil || f.RetentionDays != nil ||
		f.TrainsOnPrompts != nil || f.Regions != nil || f.jsonPrices.usesFees() {
		return true
	}
	for i := range f.Tiers {
		if f.Tiers[i].jsonPrices.usesFees() {
			return true
		}
	}
	return f.TimeBased != nil && (f.TimeBased.Peak.usesFees() || f.TimeBased.OffPeak.usesFees())
}

// convertMarket reads the fare's attributes of sec. 7.
func (f *jsonFare) convertMarket(path string, out *Fare) error {
	for _, n := range []struct {
		name string
		v    *int64
		dst  **int64
	}{{".contextLength", f.ContextLength, &out.ContextLength}, {".maxOutputTokens", f.MaxOutputTokens, &out.MaxOutputTokens}} {
		if n.v != nil && *n.v < 1 {
			return inputErr(path+n.name, "must be a whole number of tokens of at least 1")
		}
		*n.dst = n.v
	}
	if f.Quantization != nil {
		q, ok := ParseQuantization(*f.Quantization)
		if !ok {
			return inputErr(path+".quantization", "unknown quantization %q (%s)", *f.Quantization, quantizationList)
		}
		out.Quantization = q
	}
	if f.RetentionDays != nil && *f.RetentionDays < 0 {
		return inputErr(path+".retentionDays", "must be 0 (not kept) or more days")
	}
	out.DataPolicy = DataPolicy{RetentionDays: f.RetentionDays, TrainsOnPrompts: f.TrainsOnPrompts}
	if f.Regions != nil && len(f.Regions) == 0 {
		return inputErr(path+".regions", "must list at least one region once set")
	}
	for i, r := range f.Regions {
		if !ValidRegion(r) {
			return inputErr(fmt.Sprintf("%s.regions[%d]", path, i), "must be an ISO 3166-1 alpha-2 code (two capital letters), got %q", r)
		}
	}
	out.Regions = f.Regions
	return nil
}

// MaxBallotBytes bounds what DecodeBallot reads.
const MaxBallotBytes = 16 << 20

// DecodeBallot reads and validates one election input in the contract's JSON.
// Errors are *InputError naming the field.
func DecodeBallot(r io.Reader) (*Ballot, error) {
	data, err := io.ReadAll(io.LimitReader(r, MaxBallotBytes+1))
	if err != nil {
		return nil, fmt.Errorf("read input: %w", err)
	}
	if len(data) > MaxBallotBytes {
		return nil, inputErr("", "input larger than %d bytes", MaxBallotBytes)
	}
	return UnmarshalBallot(data)
}

// UnmarshalBallot is DecodeBallot on bytes.
func UnmarshalBallot(data []byte) (*Ballot, error) {
	var in jsonBallot
	dec := json.NewDecoder(bytes.NewReader(data))
	if err := dec.Decode(&in); err != nil {
		return nil, jsonError(err)
	}
	if dec.More() {
		return nil, inputErr("", "malformed JSON: more than one value")
	}
	if in.Request == nil {
		return nil, inputErr("request", "required")
	}
	b := &Ballot{Extended: in.Request.UsesMarket()}
	if err := in.Request.convert(&b.Request); err != nil {
		return nil, err
	}
	if in.Weights != nil {
		w, err := in.Weights.convert()
		if err != nil {
			return nil, err
		}
		b.AutoWeights = &w
	}
	if in.Policy != nil {
		p, ok := ParsePolicy(*in.Policy)
		if !ok {
			return nil, inputErr("policy", "must be election or share")
		}
		b.Policy, b.Extended = p, true
	}
	b.Candidates = make([]Candidate, len(in.Candidates))
	for i := range in.Candidates {
		if err := in.Candidates[i].convert(fmt.Sprintf("candidates[%d]", i), &b.Candidates[i]); err != nil {
			return nil, err
		}
		if c := &in.Candidates[i]; c.State != nil || c.ShareMetrics != nil || c.Fare.usesMarket() {
			b.Extended = true // sec. 7-8's output fields too
		}
	}
	return b, nil
}

func jsonError(err error) error {
	var typeErr *json.UnmarshalTypeError
	if errors.As(err, &typeErr) {
		field := typeErr.Field
		if field == "" {
			field = "(top level)"
		}
		return inputErr(field, "expected %s, got JSON %s", typeErr.Type, typeErr.Value)
	}
	if errors.Is(err, io.EOF) {
		return inputErr("", "malformed JSON: empty input")
	}
	return inputErr("", "malformed JSON: %v", err)
}

// convert reads the request's decimals (strings or numbers in the contract)
// and applies the request's rules.
func (r *jsonRequest) convert(out *Request) error {
	in := RequestInput{
		Model: r.Model, PromptTokens: r.PromptTokens, Streaming: r.Streaming,
		Routing: r.Routing, Workload: r.Workload, SessionOpening: r.SessionOpening,
		Requires: r.Requires, At: r.At, MarketInput: r.MarketInput,
	}
	var err error
	if in.CacheHitRate, err = r.CacheHitRate.value("request.cacheHitRate"); err != nil {
		return err
	}
	if in.CacheOutputRatio, err = r.CacheOutputRatio.value("request.cacheOutputRatio"); err != nil {
		return err
	}
	if r.Observed != nil {
		in.Observed = &ObservedInput{}
		if in.Observed.CacheHitRate, err = r.Observed.CacheHitRate.value("request.observed.cacheHitRate"); err != nil {
			return err
		}
		if in.Observed.CacheOutputRatio, err = r.Observed.CacheOutputRatio.value("request.observed.cacheOutputRatio"); err != nil {
			return err
		}
	}
	*out, err = in.Request()
	return err
}

// RequestInput is the contract's request with its numbers already read: the
// shape the HTTP API decodes into directly, so the request is decoded once.
// Request applies the contract's rules to it; errors name fields as
// "request.<field>".
type RequestInput struct {
	Model            string         `json:"model"`
	PromptTokens     *int64         `json:"promptTokens"`
	Streaming        bool           `json:"streaming"`
	Routing          *string        `json:"routing"`
	Workload         *string        `json:"workload"`
	SessionOpening   bool           `json:"sessionOpening"`
	Requires         []string       `json:"requires"`
	At               *string        `json:"at"`
	CacheHitRate     *float64       `json:"cacheHitRate"`
	CacheOutputRatio *float64       `json:"cacheOutputRatio"`
	Observed         *ObservedInput `json:"observed"`
	MarketInput
}

// MarketInput are the request's fields of sec. 7 (the contract additions):
// the output it asks for, its images, its project's residency and the
// provider object.
type MarketInput struct {
	MaxTokens *int64         `json:"maxTokens"`
	Images    *int64         `json:"images"`
	Regions   []string       `json:"regions"`
	Provider  *ProviderInput `json:"provider"`
}

// UsesMarket reports whether the request uses any field of sec. 7, which
// gives it the contract's new output fields.
func (m *MarketInput) UsesMarket() bool {
	return m.MaxTokens != nil || m.Images != nil || m.Regions != nil || m.Provider != nil
}

// ProviderInput is OpenRouter's provider object as the contract writes it.
type ProviderInput struct {
	Only              []string `json:"only"`
	Ignore            []string `json:"ignore"`
	Order             []string `json:"order"`
	AllowFallbacks    *bool    `json:"allow_fallbacks"`
	Quantizations     []string `json:"quantizations"`
	DataCollection    *string  `json:"data_collection"`
	ZDR               *bool    `json:"zdr"`
	Sort              *string  `json:"sort"`
	RequireParameters *bool    `json:"require_parameters"`
	MaxPrice          *struct {
		Prompt     rawDecimal `json:"prompt"`
		Completion rawDecimal `json:"completion"`
		Request    rawDecimal `json:"request"`
		Image      rawDecimal `json:"image"`
	} `json:"max_price"`
}

// Provider checks the object (errors name fields under path, as
// "request.provider.quantizations[1]") and returns it with the sort it
// asks for (nil: none).
func (in *ProviderInput) Provider(path string) (*Provider, *Mode, error) {
	p := &Provider{Only: in.Only, Ignore: in.Ignore, Order: in.Order}
	for _, list := range []struct {
		name    string
		entries []string
	}{{"only", in.Only}, {"ignore", in.Ignore}, {"order", in.Order}} {
		for i, e := range list.entries {
			if e == "" {
				return nil, nil, inputErr(fmt.Sprintf("%s.%s[%d]", path, list.name, i), "must name a carrier or a listing")
			}
		}
	}
	if in.AllowFallbacks != nil && !*in.AllowFallbacks {
		p.NoFallbacks = true
	}
	for i, q := range in.Quantizations {
		quant, ok := ParseQuantization(q)
		if !ok {
			return nil, nil, inputErr(fmt.Sprintf("%s.quantizations[%d]", path, i), "unknown quantization %q (%s)", q, quantizationList)
		}
		p.Quantizations = p.Quantizations.With(quant)
	}
	if dc := in.DataCollection; dc != nil {
		switch *dc {
		case "allow":
		case "deny":
			p.DenyDataCollection = true
		default:
			return nil, nil, inputErr(path+".data_collection", "must be allow or deny")
		}
	}
	p.ZDR = in.ZDR != nil && *in.ZDR
	p.RequireParameters = in.RequireParameters != nil && *in.RequireParameters
	var sort *Mode
	if in.Sort != nil {
		m, ok := ParseMode(*in.Sort)
		if !ok || m == ModeAuto {
			return nil, nil, inputErr(path+".sort", "must be price, throughput or latency")
		}
		sort = &m
	}
	if mp := in.MaxPrice; mp != nil {
		p.MaxPrice = &MaxPrice{}
		for _, f := range []struct {
			name string
			raw  rawDecimal
			dst  **float64
		}{
			{"prompt", mp.Prompt, &p.MaxPrice.Prompt}, {"completion", mp.Completion, &p.MaxPrice.Completion},
			{"request", mp.Request, &p.MaxPrice.Request}, {"image", mp.Image, &p.MaxPrice.Image},
		} {
			v, err := nonNegative(f.raw, path+".max_price."+f.name)
			if err != nil {
				return nil, nil, err
			}
			*f.dst = v
		}
	}
	return p, sort, nil
}

var quantizationList = strings.Join(quantizationNames[:], ", ")

// apply checks the market fields and sets them on out.
func (m *MarketInput) apply(out *Request) error {
	if m.MaxTokens != nil {
		if *m.MaxTokens < 1 {
			return inputErr("request.maxTokens", "must be a whole number of at least 1")
		}
		out.MaxTokens = *m.MaxTokens
	}
	if m.Images != nil {
		if *m.Images < 0 {
			return inputErr("request.images", "must not be negative")
		}
		out.Images = *m.Images
	}
	for i, r := range m.Regions {
		if !ValidRegion(r) {
			return inputErr(fmt.Sprintf("request.regions[%d]", i), "must be an ISO 3166-1 alpha-2 code (two capital letters), got %q", r)
		}
	}
	if len(m.Regions) > 0 {
		out.Regions = m.Regions
	}
	if m.Provider != nil {
		p, sort, err := m.Provider.Provider("request.provider")
		if err != nil {
			return err
		}
		out.Provider = p
		if sort != nil {
			out.Routing = *sort
		}
	}
	return nil
}

// ObservedInput is the request's observed cache figures.
type ObservedInput struct {
	CacheHitRate     *float64 `json:"cacheHitRate"`
	CacheOutputRatio *float64 `json:"cacheOutputRatio"`
}

// Request checks the input against the contract and returns the request.
func (r *RequestInput) Request() (Request, error) {
	out := Request{Model: r.Model, Streaming: r.Streaming, SessionOpening: r.SessionOpening}
	if r.PromptTokens != nil {
		if *r.PromptTokens < 0 {
			return out, inputErr("request.promptTokens", "must not be negative")
		}
		out.PromptTokens = *r.PromptTokens
	}
	if r.Routing != nil {
		m, ok := ParseMode(*r.Routing)
		if !ok {
			return out, inputErr("request.routing", "unknown routing mode %q (auto, price, throughput, latency)", *r.Routing)
		}
		out.Routing = m
	}
	if r.Workload != nil {
		w, ok := ParseWorkload(*r.Workload)
		if !ok {
			return out, inputErr("request.workload", "unknown workload %q (general, coding, chat)", *r.Workload)
		}
		out.Workload = w
	}
	for i, name := range r.Requires {
		c, ok := ParseCapability(name)
		if !ok {
			return out, inputErr(fmt.Sprintf("request.requires[%d]", i), "unknown capability %q", name)
		}
		out.Requires = out.Requires.With(c)
	}
	if r.At != nil {
		at, err := time.Parse(time.RFC3339Nano, *r.At)
		if err != nil {
			return out, inputErr("request.at", "not an RFC 3339 time: %q", *r.At)
		}
		out.At = at
	}
	out.CacheHitRate, out.CacheOutputRatio = r.CacheHitRate, r.CacheOutputRatio
	if r.Observed != nil {
		out.ObservedHitRate, out.ObservedOutputRatio = r.Observed.CacheHitRate, r.Observed.CacheOutputRatio
	}
	if err := r.MarketInput.apply(&out); err != nil {
		return out, err
	}
	return out, nil
}

// convert reads the weights' decimals and applies the weights' rules.
func (w *jsonWeights) convert() (Weights, error) {
	var in WeightsInput
	for _, f := range []struct {
		name string
		raw  rawDecimal
		dst  **float64
	}{
		{"weights.price", w.Price, &in.Price},
		{"weights.uptime", w.Uptime, &in.Uptime},
		{"weights.throughput", w.Throughput, &in.Throughput},
		{"weights.latency", w.Latency, &in.Latency},
		{"weights.cache", w.Cache, &in.Cache},
	} {
		v, err := f.raw.value(f.name)
		if err != nil {
			return Weights{}, err
		}
		*f.dst = v
	}
	return in.Weights()
}

// WeightsInput is the contract's weights object with its numbers read (the
// API decodes into it directly); a weight not given is 0.
type WeightsInput struct {
	Price      *float64 `json:"price"`
	Uptime     *float64 `json:"uptime"`
	Throughput *float64 `json:"throughput"`
	Latency    *float64 `json:"latency"`
	Cache      *float64 `json:"cache"`
}

// Weights checks the input against the contract; errors name fields as
// "weights.<name>".
func (w *WeightsInput) Weights() (Weights, error) {
	var out Weights
	for _, f := range []struct {
		name string
		v    *float64
		dst  *float64
	}{
		{"weights.price", w.Price, &out.Price},
		{"weights.uptime", w.Uptime, &out.Uptime},
		{"weights.throughput", w.Throughput, &out.Throughput},
		{"weights.latency", w.Latency, &out.Latency},
		{"weights.cache", w.Cache, &out.Cache},
	} {
		if f.v == nil {
			continue // a replaced weight that is not given is 0
		}
		if *f.v < 0 {
			return out, inputErr(f.name, "must not be negative")
		}
		if math.IsNaN(*f.v) || math.IsInf(*f.v, 0) {
			return out, inputErr(f.name, "must be a finite number")
		}
		*f.dst = *f.v
	}
	// With no weight nothing is ranked and the first candidate would win by
	// position: a weights object must weigh something.
	sum := out.Price + out.Uptime + out.Throughput + out.Latency + out.Cache
	if sum <= 0 {
		return out, inputErr("weights", "give at least one weight above 0")
	}
	// Weights are relative and normalised by their sum: a sum beyond the
	// largest float would normalise every weight to 0.
	if math.IsInf(sum, 0) {
		return out, inputErr("weights", "the weights add up beyond a finite number: they are relative, so give smaller ones (1, 2, 0.5)")
	}
	return out, nil
}

func (c *jsonCandidate) convert(path string, out *Candidate) error {
	out.ID = c.ID
	var err error
	if out.Priority, err = c.Priority.value(path + ".priority"); err != nil {
		return err
	}
	for name, has := range c.Capabilities {
		flag, ok := ParseCapability(name)
		if !ok {
			return inputErr(path+".capabilities."+name, "unknown capability")
		}
		if has {
			out.Capabilities = out.Capabilities.With(flag)
		}
	}
	if m := c.Metrics; m != nil {
		for _, f := range []struct {
			name string
			raw  rawDecimal
			dst  **float64
			max  float64
		}{
			{".metrics.uptime", m.Uptime, &out.Metrics.Uptime, 100},
			{".metrics.latencyMs", m.LatencyMs, &out.Metrics.LatencyMs, math.MaxFloat64},
			{".metrics.throughput", m.Throughput, &out.Metrics.Throughput, math.MaxFloat64},
			{".metrics.cacheHitRate", m.CacheHitRate, &out.Metrics.CacheHitRate, 1},
		} {
			v, err := f.raw.value(path + f.name)
			if err != nil {
				return err
			}
			if v != nil && (*v < 0 || *v > f.max) {
				return inputErr(path+f.name, "must be between 0 and %g", f.max)
			}
			*f.dst = v
		}
	}
	if u := c.Usage; u != nil {
		usage, err := u.Usage(path + ".usage")
		if err != nil {
			return err
		}
		out.Usage = usage
	}
	if sm := c.ShareMetrics; sm != nil {
		if sm.Successes != nil {
			if *sm.Successes < 0 {
				return inputErr(path+".shareMetrics.successes", "must not be negative")
			}
			out.ShareMetrics.Successes = *sm.Successes
		}
		for _, f := range []struct {
			name string
			raw  rawDecimal
			dst  **float64
			max  float64
		}{
			{".shareMetrics.errorRate", sm.ErrorRate, &out.ShareMetrics.ErrorRate, 1},
			{".shareMetrics.malformedToolCallRate", sm.MalformedToolCallRate, &out.ShareMetrics.MalformedToolCallRate, 1},
			{".shareMetrics.rateLimitedRate", sm.RateLimitedRate, &out.ShareMetrics.RateLimitedRate, 1},
			{".shareMetrics.ttftMs", sm.TTFTMs, &out.ShareMetrics.TTFTMs, math.MaxFloat64},
			{".shareMetrics.speed", sm.Speed, &out.ShareMetrics.Speed, math.MaxFloat64},
		} {
			v, err := f.raw.value(path + f.name)
			if err != nil {
				return err
			}
			if v != nil && (*v < 0 || *v > f.max) {
				if f.max == 1 {
					return inputErr(path+f.name, "must be a fraction between 0 and 1")
				}
				return inputErr(path+f.name, "must not be negative")
			}
			*f.dst = v
		}
	}
	if st := c.State; st != nil {
		state, err := st.State(path + ".state")
		if err != nil {
			return err
		}
		out.State = state
	}
	if c.Fare == nil {
		return inputErr(path+".fare", "required")
	}
	return c.Fare.convert(path+".fare", &out.Fare)
}

func (p *jsonPrices) convert(path string, out *PriceBlock) error {
	var err error
	for _, f := range []struct {
		name string
		raw  rawDecimal
		dst  **float64
	}{
		{".inputPrice", p.InputPrice, &out.Input},
		{".outputPrice", p.OutputPrice, &out.Output},
		{".cachedInputPrice", p.CachedInputPrice, &out.CachedInput},
	} {
		if *f.dst, err = nonNegative(f.raw, path+f.name); err != nil {
			return err
		}
	}
	if p.usesFees() {
		fees := &FeeBlock{}
		if fees.Request, err = nonNegative(p.RequestPrice, path+".requestPrice"); err != nil {
			return err
		}
		if fees.Image, err = nonNegative(p.ImagePrice, path+".imagePrice"); err != nil {
			return err
		}
		out.Fees = fees
	}
	return nil
}

func nonNegative(raw rawDecimal, field string) (*float64, error) {
	v, err := raw.value(field)
	if err != nil {
		return nil, err
	}
	if v != nil && *v < 0 {
		return nil, inputErr(field, "must not be negative")
	}
	return v, nil
}

func (f *jsonFare) convert(path string, out *Fare) error {
	var base PriceBlock
	if err := f.jsonPrices.convert(path, &base); err != nil {
		return err
	}
	if base.Input == nil {
		return inputErr(path+".inputPrice", "required")
	}
	if base.Output == nil {
		return inputErr(path+".outputPrice", "required")
	}
	out.Input, out.Output, out.CachedInput = *base.Input, *base.Output, base.CachedInput
	if base.Fees != nil && base.Fees.Request != nil {
		out.RequestPrice = *base.Fees.Request
	}
	if base.Fees != nil && base.Fees.Image != nil {
		out.ImagePrice = *base.Fees.Image
	}
	if err := f.convertMarket(path, out); err != nil {
		return err
	}
	var err error
	if out.CacheReadInput, err = nonNegative(f.CacheReadInputPrice, path+".cacheReadInputPrice"); err != nil {
		return err
	}
	discount, err := f.Discount.value(path + ".discount")
	if err != nil {
		return err
	}
	if discount != nil {
		if *discount < 0 || *discount > MaxDiscount {
			return inputErr(path+".discount", "must be between 0 and %.2f, got %g", MaxDiscount, *discount)
		}
		out.Discount = *discount
	}
	if out.LandingFee, err = f.LandingFee.value(path + ".landingFee"); err != nil {
		return err
	}
	if lf := out.LandingFee; lf != nil && (*lf < MinLandingFee || *lf > MaxLandingFee) {
		return inputErr(path+".landingFee", "must be between %.2f and %.2f, got %g", MinLandingFee, MaxLandingFee, *lf)
	}
	if f.MaxRpm != nil && *f.MaxRpm < 0 {
		return inputErr(path+".maxRpm", "must not be negative")
	}
	if f.MaxRpd != nil && *f.MaxRpd < 0 {
		return inputErr(path+".maxRpd", "must not be negative")
	}
	out.MaxRPM, out.MaxRPD = f.MaxRpm, f.MaxRpd
	out.Tiers = make([]Tier, len(f.Tiers))
	for i, t := range f.Tiers {
		tp := fmt.Sprintf("%s.tiers[%d]", path, i)
		if t.AboveTokens == nil || *t.AboveTokens <= 0 {
			return inputErr(tp+".aboveTokens", "required, a positive token count")
		}
		// Two tiers at one threshold, or out of order, leave the price to the
		// order of the list: bad input, not a choice (section 2).
		if i > 0 && *t.AboveTokens <= out.Tiers[i-1].AboveTokens {
			return inputErr(tp+".aboveTokens", "tiers must go up: %d is not above the previous %d", *t.AboveTokens, out.Tiers[i-1].AboveTokens)
		}
		out.Tiers[i].AboveTokens = *t.AboveTokens
		if err := t.jsonPrices.convert(tp, &out.Tiers[i].PriceBlock); err != nil {
			return err
		}
	}
	if tb := f.TimeBased; tb != nil {
		tp := path + ".timeBased"
		block := &TimeBased{}
		if tb.EffectiveAt != nil {
			at, err := time.Parse(time.RFC3339Nano, *tb.EffectiveAt)
			if err != nil {
				return inputErr(tp+".effectiveAt", "not an RFC 3339 time: %q", *tb.EffectiveAt)
			}
			block.EffectiveAt = at
		}
		for i, w := range tb.PeakHoursUtc {
			if len(w) != 2 || w[0] < 0 || w[1] > 24 || w[0] >= w[1] {
				return inputErr(fmt.Sprintf("%s.peakHoursUtc[%d]", tp, i), "must be [start, end) with 0 <= start < end <= 24")
			}
			block.PeakHours = append(block.PeakHours, PeakWindow{Start: w[0], End: w[1]})
		}
		if o := tb.OffPeakDays; o != nil {
			if o.UtcOffsetMinutes < -720 || o.UtcOffsetMinutes > 840 {
				return inputErr(tp+".offPeakDays.utcOffsetMinutes", "must be between -720 and 840")
			}
			days := &OffPeakDays{UTCOffsetMinutes: o.UtcOffsetMinutes}
			for i, d := range o.DaysOfWeek {
				if d < 0 || d > 6 {
					return inputErr(fmt.Sprintf("%s.offPeakDays.daysOfWeek[%d]", tp, i), "must be 0 (Sunday) to 6 (Saturday)")
				}
				days.Days |= 1 << uint(d)
			}
			block.OffPeakDays = days
		}
		if tb.Peak != nil {
			if err := tb.Peak.convert(tp+".peak", &block.Peak); err != nil {
				return err
			}
		}
		if tb.OffPeak != nil {
			if err := tb.OffPeak.convert(tp+".offPeak", &block.OffPeak); err != nil {
				return err
			}
		}
		out.TimeBased = block
	}
	return nil
}

// Report is the contract's JSON shape of a result.
type Report struct {
	Winner        *string           `json:"winner"`
	CacheRelevant bool              `json:"cacheRelevant"`
	FellOpen      bool              `json:"fellOpen"`
	Weights       ReportWeights     `json:"weights"`
	Candidates    []json.RawMessage `json:"candidates"`
}

// ReportWeights are weights or factors under their contract names.
type ReportWeights struct {
	Price      float64 `json:"price"`
	Uptime     float64 `json:"uptime"`
	Throughput float64 `json:"throughput"`
	Latency    float64 `json:"latency"`
	Cache      float64 `json:"cache"`
}

// ReportCandidate is one eligible candidate in the contract's JSON.
type ReportCandidate struct {
	ID               string        `json:"id"`
	Eligible         bool          `json:"eligible"`
	Excluded         []string      `json:"excluded"`
	HitRate          float64       `json:"hitRate"`
	OutputRatio      float64       `json:"outputRatio"`
	InputPrice       float64       `json:"inputPrice"`
	OutputPrice      float64       `json:"outputPrice"`
	CachedInputPrice *float64      `json:"cachedInputPrice"`
	TokenPrice       float64       `json:"tokenPrice"`
	FareFactor       float64       `json:"fareFactor"`
	RoutingPrice     float64       `json:"routingPrice"`
	Factors          ReportWeights `json:"factors"`
	UptimePenalty    float64       `json:"uptimePenalty"`
	PriorityPenalty  float64       `json:"priorityPenalty"`
	Score            float64       `json:"score"`
	Rank             int           `json:"rank"`
}

// ReportExcluded is one candidate off the ballot in the contract's JSON.
type ReportExcluded struct {
	ID       string   `json:"id"`
	Eligible bool     `json:"eligible"`
	Excluded []string `json:"excluded"`
}
