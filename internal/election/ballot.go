// Package election is the pure routing engine of Airside: given one request and
// the published listings of a model, it decides which carrier wins, and explains
// every number it used. It follows ../shared/docs/election.md to the letter.
//
// The package does no I/O, reads no clock and draws no random numbers: time comes
// in the request and exploration is the caller's business. The catalogue API, the
// carrier's fare preview and the `airside elect` command all call Elect, so what a
// carrier previews is what routing does.
//
// Prices are USD per million tokens, as float64: the engine ranks, it does not
// bill. Exact money lives in internal/money and is converted at the edge.
package election

import "time"

// Mode is a routing mode: which factor a request cares about most.
type Mode uint8

// The routing modes of the spec's weight table.
const (
	ModeAuto Mode = iota
	ModePrice
	ModeThroughput
	ModeLatency
)

var modeNames = [...]string{"auto", "price", "throughput", "latency"}

func (m Mode) String() string {
	if int(m) < len(modeNames) {
		return modeNames[m]
	}
	return "unknown"
}

// ParseMode reads a routing mode by its contract name.
func ParseMode(s string) (Mode, bool) {
	for i, name := range modeNames {
		if s == name {
			return Mode(i), true
		}
	}
	return 0, false
}

// Modes lists every routing mode in table order.
func Modes() []Mode { return []Mode{ModeAuto, ModePrice, ModeThroughput, ModeLatency} }

// Workload names the kind of traffic, which picks the default cache hit rate and
// output ratio before anything has been observed.
type Workload uint8

// The workloads of the spec.
const (
	WorkloadGeneral Workload = iota
	WorkloadCoding
	WorkloadChat
)

var workloadNames = [...]string{"general", "coding", "chat"}

func (w Workload) String() string {
	if int(w) < len(workloadNames) {
		return workloadNames[w]
	}
	return "unknown"
}

// ParseWorkload reads a workload by its contract name.
func ParseWorkload(s string) (Workload, bool) {
	for i, name := range workloadNames {
		if s == name {
			return Workload(i), true
		}
	}
	return 0, false
}

// workloadDefaults are the hit rate h and output ratio r assumed for a workload
// until observations exist.
var workloadDefaults = [...]struct{ hitRate, outputRatio float64 }{
	WorkloadGeneral: {0.1, 0.2},
	WorkloadCoding:  {0.9, 0.02},
	WorkloadChat:    {0.5, 0.1},
}

// Capability is one capability flag a request may require.
type Capability uint8

// The capability flags, in the order exclusion reasons are reported.
const (
	CapTools Capability = iota
	CapVision
	CapAudioInput
	CapJSONOutput
	CapJSONSchema
	CapReasoning
	CapReasoningBudget
	CapWebSearch
	numCapabilities
)

var capabilityNames = [numCapabilities]string{
	"tools", "vision", "audio_input", "json_output", "json_schema", "reasoning", "reasoning_budget", "web_search",
}

func (c Capability) String() string {
	if c < numCapabilities {
		return capabilityNames[c]
	}
	return "unknown"
}

// ParseCapability reads a capability flag by its contract name.
func ParseCapability(s string) (Capability, bool) {
	for i, name := range capabilityNames {
		if s == name {
			return Capability(i), true
		}
	}
	return 0, false
}

// AllCapabilities lists every flag in reporting order.
func AllCapabilities() []Capability {
	all := make([]Capability, numCapabilities)
	for i := range all {
		all[i] = Capability(i)
	}
	return all
}

// Capabilities is a set of capability flags.
type Capabilities uint16

// With returns the set with c added.
func (s Capabilities) With(c Capability) Capabilities { return s | 1<<c }

// Has reports whether c is in the set.
func (s Capabilities) Has(c Capability) bool { return s&(1<<c) != 0 }

// CapabilitySet builds a set from flags.
func CapabilitySet(flags ...Capability) Capabilities {
	var s Capabilities
	for _, f := range flags {
		s = s.With(f)
	}
	return s
}

// Names are the set's flags by contract name, in reporting order.
func (s Capabilities) Names() []string {
	var out []string
	for c := range numCapabilities {
		if s.Has(c) {
			out = append(out, capabilityNames[c])
		}
	}
	return out
}

// ParseCapabilities reads a set from contract names; ok is false (and bad
// the first name not known) when one is not a capability.
func ParseCapabilities(names []string) (s Capabilities, bad string, ok bool) {
	for _, n := range names {
		c, known := ParseCapability(n)
		if !known {
			return 0, n, false
		}
		s = s.With(c)
	}
	return s, "", true
}

// Weights are the relative weights of the five factors.
type Weights struct {
	Price, Uptime, Throughput, Latency, Cache float64
}

// modeWeights is the spec's weight table.
var modeWeights = [...]Weights{
	ModeAuto:       {Price: 0.6, Uptime: 0.5, Throughput: 0.05, Latency: 0.025, Cache: 0},
	ModePrice:      {Price: 0.9, Uptime: 0.1},
	ModeThroughput: {Uptime: 0.1, Throughput: 0.9},
	ModeLatency:    {Uptime: 0.1, Latency: 0.9},
}

// DefaultWeights returns the spec's weights for a mode before normalisation.
func DefaultWeights(m Mode) Weights { return modeWeights[m] }

// Request is the part of an election that comes from the developer's call.
type Request struct {
	Model          string
	PromptTokens   int64
	Streaming      bool
	Routing        Mode
	Workload       Workload
	SessionOpening bool
	Requires       Capabilities
	// At is when the request is served; it picks the time-of-day block. The zero
	// time means "unknown": time-of-day blocks are then not applied.
	At time.Time
	// CacheHitRate and CacheOutputRatio are the project's explicit overrides;
	// nil means none.
	CacheHitRate, CacheOutputRatio *float64
	// ObservedHitRate and ObservedOutputRatio are the project's observed rates for
	// the model over the last 24 hours, once past the spec's gates; nil means none.
	ObservedHitRate, ObservedOutputRatio *float64
	// MaxTokens is the output the request asks for at most (the API's
	// max_completion_tokens, else max_tokens); 0 means none given.
	MaxTokens int64
	// Images is the number of image parts in the prompt.
	Images int64
	// Regions is the project's data residency (for a session's follow-ups,
	// the session's region): listings serving none of them are excluded.
	Regions []string
	// Provider is the request's provider object, the project's defaults
	// merged under it; nil means none.
	Provider *Provider
}

// Metrics are a listing's live health. Nil means not measured yet, which the
// score treats with the spec's defaults (uptime 100, throughput 50, latency 1000).
type Metrics struct {
	Uptime     *float64 // percent, 0-100
	LatencyMs  *float64 // time to first token
	Throughput *float64 // output tokens per second
	// CacheHitRate is this listing's own observed hit rate, once past the gates.
	CacheHitRate *float64
}

// Usage is a listing's current request count in its rate-cap windows (for
// per-organization caps, the requesting organization's count).
type Usage struct {
	RPM, RPD int64
}

// PriceBlock is a set of price overrides; a nil field leaves the price as it was.
type PriceBlock struct {
	Input, Output, CachedInput *float64
	// Fees overrides the fees per request and per image part; nil for a
	// block that sets none (most), which keeps resolving prices as cheap as
	// before fees existed.
	Fees *FeeBlock
}

// FeeBlock is a block's fees per request and per image part (USD); a nil
// field leaves the fee as it was.
type FeeBlock struct {
	Request, Image *float64
}

func (b PriceBlock) hasCachedInput() bool { return b.CachedInput != nil }

// Tier is a context-length tier: its prices apply to prompts longer than
// AboveTokens.
type Tier struct {
	AboveTokens int64
	PriceBlock
}

// OffPeakDays are whole weekdays billed off-peak, evaluated in a UTC offset.
type OffPeakDays struct {
	// Days is a bit set of weekdays, bit 0 = Sunday .. bit 6 = Saturday.
	Days             uint8
	UTCOffsetMinutes int
}

// HasDay reports whether weekday d (0 = Sunday) is off-peak.
func (o OffPeakDays) HasDay(d time.Weekday) bool { return o.Days&(1<<uint(d)) != 0 }

// PeakWindow is a half-open range of UTC hours [Start, End).
type PeakWindow struct{ Start, End int }

// TimeBased is a time-of-day block: peak and off-peak prices.
type TimeBased struct {
	// EffectiveAt is when the block starts to apply; zero means always.
	EffectiveAt time.Time
	PeakHours   []PeakWindow
	OffPeakDays *OffPeakDays
	Peak        PriceBlock
	OffPeak     PriceBlock
}

// The fare levers, in basis points of a unit: the one definition of the
// landing fee's baseline and bounds and the discount's bound. internal/fare
// (exact) and the fare form's script (rendered into data attributes) take
// them from here, so changing the baseline is one edit.
const (
	BasisPointsPerUnit   = 10000
	BaselineLandingFeeBP = 2000
	MinLandingFeeBP      = 500
	MaxLandingFeeBP      = 5000
	MaxDiscountBP        = 5000
)

// The same levers as fractions, the engine's float view.
const (
	// BaselineLandingFee is the landing fee at which the fare factor is 1.
	BaselineLandingFee = float64(BaselineLandingFeeBP) / BasisPointsPerUnit
	MinLandingFee      = float64(MinLandingFeeBP) / BasisPointsPerUnit
	MaxLandingFee      = float64(MaxLandingFeeBP) / BasisPointsPerUnit
	MaxDiscount        = float64(MaxDiscountBP) / BasisPointsPerUnit
)

// Fare is what a carrier filed for a listing, as the engine sees it.
type Fare struct {
	Input, Output float64
	// CachedInput is the implicit cache-hit price; nil means cache hits bill at
	// the full input price.
	CachedInput *float64
	// CacheReadInput is the explicit cache-read price: billed, never ranked.
	CacheReadInput *float64
	Discount       float64 // 0-0.5
	// LandingFee is 0.05-0.5; nil means the baseline 0.20.
	LandingFee     *float64
	MaxRPM, MaxRPD *int64 // nil means no cap
	Tiers          []Tier
	TimeBased      *TimeBased
	// RequestPrice and ImagePrice are the base fees per request and per
	// image part (USD); blocks and tiers may override them.
	RequestPrice, ImagePrice float64
	// ContextLength (prompt + output) and MaxOutputTokens bound what the
	// listing can serve; nil means no limit.
	ContextLength, MaxOutputTokens *int64
	Quantization                   Quantization
	DataPolicy                     DataPolicy
	// Regions are the ISO codes of the datacenters serving the listing.
	Regions []string
}

// landingFee returns the fee in force, defaulting to the baseline.
func (f *Fare) landingFee() float64 {
	if f.LandingFee == nil {
		return BaselineLandingFee
	}
	return *f.LandingFee
}

// HasFees reports whether a fee per request or per image appears anywhere
// in the fare (base, tier or time block): only then are fees resolved.
func (f *Fare) HasFees() bool {
	if f.RequestPrice != 0 || f.ImagePrice != 0 {
		return true
	}
	for i := range f.Tiers {
		if f.Tiers[i].Fees != nil {
			return true
		}
	}
	return f.TimeBased != nil && (f.TimeBased.Peak.Fees != nil || f.TimeBased.OffPeak.Fees != nil)
}

// hasCachedInput reports whether a cached-input price appears anywhere in the
// fare, which is what the cache factor asks.
func (f *Fare) hasCachedInput() bool {
	if f.CachedInput != nil {
		return true
	}
	for i := range f.Tiers {
		if f.Tiers[i].hasCachedInput() {
			return true
		}
	}
	if tb := f.TimeBased; tb != nil && (tb.Peak.hasCachedInput() || tb.OffPeak.hasCachedInput()) {
		return true
	}
	return false
}

// Candidate is one published listing on the ballot.
type Candidate struct {
	ID string
	// Priority is set by gateway staff; nil means the default 1.
	Priority *float64
	// Capabilities holds the flags declared AND verified; unverified ones must
	// not be included.
	Capabilities Capabilities
	Metrics      Metrics
	Usage        Usage
	Fare         Fare
	// State is what the gateway's limits say of the candidate now
	// (election.md sec. 8): the gateway decides it from its own tries.
	State State
	// ShareMetrics are its figures for the share policy (sec. 8).
	ShareMetrics ShareMetrics
}

// State is a candidate's standing under the gateway's limits. The zero
// value is a listing no limit holds back.
type State struct {
	// Backoff is the 429 backoff in force: excluded "backoff".
	Backoff bool
	// Slow is the latency backoff: under the election policy the result
	// does not change (the gateway drops the listing's incumbency).
	Slow bool
	// Breaker is the breaker's state: open excludes ("breaker"), half-open
	// too unless this request is the probe the gateway chose.
	Breaker Breaker
	Probe   bool
}

// Breaker is a breaker's state.
type Breaker uint8

// The breaker's states (the contract's words: closed, open, half_open).
const (
	BreakerClosed Breaker = iota
	BreakerOpen
	BreakerHalfOpen
)

var breakerNames = [...]string{"closed", "open", "half_open"}

func (b Breaker) String() string {
	if int(b) < len(breakerNames) {
		return breakerNames[b]
	}
	return "unknown"
}

// ParseBreaker reads a breaker state in the contract's words.
func ParseBreaker(s string) (Breaker, bool) {
	for i, name := range breakerNames {
		if s == name {
			return Breaker(i), true
		}
	}
	return BreakerClosed, false
}

func (c *Candidate) priority() float64 {
	if c.Priority == nil {
		return 1
	}
	return *c.Priority
}

// Ballot is one election: a request and its candidates.
type Ballot struct {
	Request    Request
	Candidates []Candidate
	// AutoWeights, when set, replaces the auto-mode weights (a project
	// override); other modes ignore it.
	AutoWeights *Weights
	// Policy is the project's: election (the default) or share.
	Policy Policy
	// Extended is set when the ballot uses any of sec. 7-8's fields: the
	// result then carries the order of tries and the new figures.
	Extended bool
}
