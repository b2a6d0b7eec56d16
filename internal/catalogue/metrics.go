package catalogue

import (
	"fmt"
	"slices"
	"strings"
	"time"

	"github.com/airside/airside/internal/election"
)

// Bucket is one minute of a listing's traffic as a gateway reports it.
type Bucket struct {
	ListingID int64     `json:"-"` // PostedBucket names the listing
	Minute    time.Time `json:"minute"`
	// Source names the gateway that reports the minute: several gateways
	// route the same listings and each reports its own part, which add up;
	// "" for a gateway that gives no name.
	Source string `json:"source"`
	Counts
}

// Counts are the counters of a minute (a Bucket) or an hour (an
// HourlyPoint) of a listing's traffic, by their names in the metrics
// contract. Every one is listed in Counters too.
type Counts struct {
	// Requests is required by the contract (0 is a report, no member a
	// mistake): PostedBucket decodes it, so it can tell the two apart.
	Requests          int64 `json:"-"`
	Errors            int64 `json:"errors"`       // failures of the listing (5xx, timeouts, broken responses)
	ClientErrors      int64 `json:"clientErrors"` // the caller's fault; not held against uptime
	TTFTMsSum         int64 `json:"ttftMsSum"`    // time to first token, summed over successful requests
	OutputTokens      int64 `json:"outputTokens"`
	DurationMs        int64 `json:"durationMs"` // summed over successful requests
	InputTokens       int64 `json:"inputTokens"`
	CachedInputTokens int64 `json:"cachedInputTokens"`
	// Capped counts requests the gateway skipped because the listing was at
	// its rate cap (not in Requests: they were not served).
	Capped int64 `json:"capped"`
	GatewayCounts
}

// GatewayCounts are what a gateway measures of a listing's minute beyond
// health (OpenRouter's guide: what carriers are judged on in production).
// A gateway that reports none of them leaves them zero.
type GatewayCounts struct {
	// How the minute's served requests came: routed by the election (the
	// shape's holder or a session's listing), pinned by the caller
	// ("carrier/model"), exploration (the 1 %), or fallback after another
	// listing failed. Their sum is at most the successful requests.
	Routed      int64 `json:"routed"`
	Pinned      int64 `json:"pinned"`
	Exploration int64 `json:"exploration"`
	Fallback    int64 `json:"fallback"`
	// RateLimited counts the listing's 429s: not in Requests (no answer,
	// not an uptime failure), each one moved to another listing.
	RateLimited int64 `json:"rateLimited"`
	// Explicit prompt-cache reads and writes, billed at their own prices.
	// Like cachedInputTokens (implicit cache hits), they are counted within
	// InputTokens, which holds every prompt token (OpenAI's convention).
	CacheReadTokens  int64 `json:"cacheReadTokens"`
	CacheWriteTokens int64 `json:"cacheWriteTokens"`
	// Tool calls in the answers, and those whose arguments were not JSON.
	ToolCalls          int64 `json:"toolCalls"`
	MalformedToolCalls int64 `json:"malformedToolCalls"`
	// The gateway's limits acting (election.md sec. 8): 429 backoffs
	// started, the breaker opened and closed, and latency backoffs started
	// (first tokens slow against the listing's hour before).
	Backoffs        int64 `json:"backoffs"`
	BreakerOpenings int64 `json:"breakerOpenings"`
	BreakerClosings int64 `json:"breakerClosings"`
	SlowBackoffs    int64 `json:"slowBackoffs"`
	// HeldBack counts the model's requests the gateway elected while its
	// limits held this listing off the ballot (a 429 backoff, an open
	// breaker; the latency backoff only costs it its incumbency): the
	// part of the minute it was off every ballot, which the projection's
	// replay of the minute takes out of its elections.
	HeldBack int64 `json:"heldBack"`
}

// Counter is one counter of Counts: its name in the metrics contract (the
// store's column is the name in snake case) and where Counts holds it.
type Counter struct {
	Name string
	Of   func(*Counts) *int64
}

// Counters lists every counter of Counts, in an order that only ever grows
// at its end (the metrics inbox writes counters in it). A new metric is a
// field of Counts and a row here; validation, adding, the store's columns
// and the inbox follow from the row.
var Counters = [...]Counter{
	{"requests", func(c *Counts) *int64 { return &c.Requests }},
	{"errors", func(c *Counts) *int64 { return &c.Errors }},
	{"clientErrors", func(c *Counts) *int64 { return &c.ClientErrors }},
	{"ttftMsSum", func(c *Counts) *int64 { return &c.TTFTMsSum }},
	{"outputTokens", func(c *Counts) *int64 { return &c.OutputTokens }},
	{"durationMs", func(c *Counts) *int64 { return &c.DurationMs }},
	{"inputTokens", func(c *Counts) *int64 { return &c.InputTokens }},
	{"cachedInputTokens", func(c *Counts) *int64 { return &c.CachedInputTokens }},
	{"capped", func(c *Counts) *int64 { return &c.Capped }},
	{"routed", func(c *Counts) *int64 { return &c.Routed }},
	{"pinned", func(c *Counts) *int64 { return &c.Pinned }},
	{"exploration", func(c *Counts) *int64 { return &c.Exploration }},
	{"fallback", func(c *Counts) *int64 { return &c.Fallback }},
	{"rateLimited", func(c *Counts) *int64 { return &c.RateLimited }},
	{"cacheReadTokens", func(c *Counts) *int64 { return &c.CacheReadTokens }},
	{"cacheWriteTokens", func(c *Counts) *int64 { return &c.CacheWriteTokens }},
	{"toolCalls", func(c *Counts) *int64 { return &c.ToolCalls }},
	{"malformedToolCalls", func(c *Counts) *int64 { return &c.MalformedToolCalls }},
	{"backoffs", func(c *Counts) *int64 { return &c.Backoffs }},
	{"breakerOpenings", func(c *Counts) *int64 { return &c.BreakerOpenings }},
	{"breakerClosings", func(c *Counts) *int64 { return &c.BreakerClosings }},
	{"slowBackoffs", func(c *Counts) *int64 { return &c.SlowBackoffs }},
	{"heldBack", func(c *Counts) *int64 { return &c.HeldBack }},
}

// Add adds o's figures to these.
func (c *Counts) Add(o Counts) {
	for _, k := range Counters {
		*k.Of(c) += *k.Of(&o)
	}
}

// Add adds o's figures to these.
func (g *GatewayCounts) Add(o GatewayCounts) {
	a, b := Counts{GatewayCounts: *g}, Counts{GatewayCounts: o}
	a.Add(b)
	*g = a.GatewayCounts
}

// Bounds of a bucket beyond its counters: what a minute may be, and what one
// successful request may take (a first token within 10 minutes, a whole
// answer within an hour), so one bucket cannot make a latency of years.
const (
	MaxBucketAhead = 2 * time.Minute
	MaxBucketAge   = 25 * time.Hour
	MaxTTFTMs      = int64(10 * time.Minute / time.Millisecond)
	MaxDurationMs  = int64(time.Hour / time.Millisecond)
)

// MaxBucketValue bounds every counter: far past any real minute, well inside
// int64 once multiplied by the window's weights.
const MaxBucketValue = int64(1) << 40

// Validate returns a message per bad field (by its JSON name).
func (b *Bucket) Validate(now time.Time) map[string]string {
	// The map is made at the first problem: a gateway's batch validates
	// dozens of good buckets a request.
	var errs fieldProblems
	for _, k := range Counters {
		if v := *k.Of(&b.Counts); v < 0 || v > MaxBucketValue {
			errs.add(k.Name, fmt.Sprintf("must be between 0 and %d", MaxBucketValue))
		}
	}
	if b.Errors+b.ClientErrors > b.Requests {
		errs.add("errors", "errors and clientErrors cannot add up to more than requests")
	}
	if b.CachedInputTokens > b.InputTokens {
		errs.add("cachedInputTokens", "cannot exceed inputTokens")
	}
	if ok := b.Requests - b.Errors - b.ClientErrors; b.Routed+b.Pinned+b.Exploration+b.Fallback > ok && errs["errors"] == "" {
		errs.add("routed", "routed, pinned, exploration and fallback cannot add up to more than the successful requests (requests - errors - clientErrors)")
	}
	if b.MalformedToolCalls > b.ToolCalls {
		errs.add("malformedToolCalls", "cannot exceed toolCalls")
	}
	if b.CachedInputTokens+b.CacheReadTokens+b.CacheWriteTokens > b.InputTokens && errs["cachedInputTokens"] == "" {
		errs.add("cacheReadTokens", "cachedInputTokens, cacheReadTokens and cacheWriteTokens are part of inputTokens and cannot add up to more")
	}
	if msg := minuteProblem(b.Minute, now); msg != "" {
		errs.add("minute", msg)
	}
	if msg := sourceProblem(b.Source); msg != "" {
		errs.add("source", msg)
	}
	if ok := b.Requests - b.Errors - b.ClientErrors; ok >= 0 && errs["requests"] == "" {
		if b.TTFTMsSum > ok*MaxTTFTMs && errs["ttftMsSum"] == "" {
			errs.add("ttftMsSum", fmt.Sprintf("cannot exceed %d ms per successful request (%d successful)", MaxTTFTMs, ok))
		}
		if b.DurationMs > ok*MaxDurationMs && errs["durationMs"] == "" {
			errs.add("durationMs", fmt.Sprintf("cannot exceed %d ms per successful request (%d successful)", MaxDurationMs, ok))
		}
	}
	return errs
}

// fieldProblems are messages by field, made at the first one.
type fieldProblems map[string]string

func (p *fieldProblems) add(field, message string) {
	if *p == nil {
		*p = map[string]string{}
	}
	(*p)[field] = message
}

// minuteProblem says what is wrong with a reported minute, "" if nothing.
func minuteProblem(m, now time.Time) string {
	switch {
	case m.IsZero():
		return "required, an RFC 3339 time"
	case !m.Equal(m.Truncate(time.Minute)):
		return "must be the start of a minute (seconds zero)"
	case m.After(now.Add(MaxBucketAhead)):
		return fmt.Sprintf("is in the future (at most %s ahead of the server's clock)", MaxBucketAhead)
	case m.Before(now.Add(-MaxBucketAge)):
		return fmt.Sprintf("is older than %s; metrics are accepted for the last %s only", MaxBucketAge, MaxBucketAge)
	}
	return ""
}

// MaxSourceLength bounds a reporting gateway's name.
const MaxSourceLength = 100

// sourceProblem says what is wrong with a reporting gateway's name.
func sourceProblem(s string) string {
	if len(s) > MaxSourceLength {
		return fmt.Sprintf("at most %d characters", MaxSourceLength)
	}
	for _, r := range s {
		if r < 0x21 || r > 0x7e {
			return "letters, digits and punctuation only (no spaces)"
		}
	}
	return ""
}

// Demand is one minute of a model's requests of one workload as a gateway's
// customers sent them, before routing: the real workload mix.
type Demand struct {
	Model    string    `json:"model"`
	Workload string    `json:"workload"` // general, coding or chat
	Minute   time.Time `json:"minute"`
	// Source names the reporting gateway, as for buckets: each gateway's
	// demand adds up.
	Source string `json:"source"`
	// Requests and the sum of their estimated prompt tokens.
	Requests     int64 `json:"requests"`
	PromptTokens int64 `json:"promptTokens"`
	// LargeRequests are the requests whose own prompt was at least
	// election.CachePromptTokens, LargePromptTokens their prompt tokens
	// (both or neither); nil from a gateway that reports only the totals
	// (the minute's average prompt then decides).
	LargeRequests     *int64 `json:"largeRequests"`
	LargePromptTokens *int64 `json:"largePromptTokens"`
	// Streaming says whether the row's requests streamed (nil from a
	// gateway that does not say), and Requires the capabilities they
	// required (contract names): a gateway that says splits a workload's
	// minute into a row per kind of request. The projection elects each
	// kind on its own ballot (streaming weighs latency, a capability
	// narrows the candidates) under the shape's one incumbent.
	Streaming *bool    `json:"streaming"`
	Requires  []string `json:"requires"`
	// Asked counts the row's requests by what they asked for besides the
	// model (AskedKeys: zero data retention, a quantization, a region, a
	// context or output above a line); nil from a gateway that does not
	// say.
	Asked map[string]int64 `json:"asked,omitempty"`
}

// RequestKind is how a part of a workload's requests asked: streamed or
// not, and the capabilities they required. Reported says the gateway
// told (a row without Streaming is of no known kind).
type RequestKind struct {
	Reported  bool
	Streaming bool
	Requires  election.Capabilities
}

// KindOf is the kind of the demand row's requests (Requires already
// validated).
func (d *Demand) KindOf() RequestKind {
	if d.Streaming == nil {
		return RequestKind{}
	}
	requires, _, _ := election.ParseCapabilities(d.Requires)
	return RequestKind{Reported: true, Streaming: *d.Streaming, Requires: requires}
}

// KindDemand is a workload's demand of one kind of request over a period.
type KindDemand struct {
	RequestKind
	Requests, LargeRequests int64
}

// WorkloadDemand is a model's demand of one workload over a period: its
// requests, how many of them came in minutes whose average prompt was large,
// and their prompt tokens.
type WorkloadDemand struct {
	Requests, LargeRequests, PromptTokens int64
	// LargePromptTokens are the prompt tokens of the large requests.
	LargePromptTokens int64
	// Kinds split the requests of rows that said their kind (Demand.
	// Streaming); the rest (Requests less their sum) are of no known kind.
	Kinds []KindDemand
	// SharePolicy are the requests routed under the share policy
	// (election.md sec. 8; the AskedSharePolicy key of the demand rows):
	// the rest were routed by the election. Filled by DemandByHour.
	SharePolicy int64
	// Preferences are the requests that carried preferences narrowing or
	// ordering the ballot, by their set (a prefs: key, ParseAsked); the
	// rest carried none. Filled by DemandByHour.
	Preferences map[string]int64
	// Projects are the requests of each API project (by its pseudonym, a
	// project: key) the election routed with no preference, whose rates
	// routing learned apart; the rest came from projects the gateway did
	// not name, or carried preferences. Filled by DemandByHour.
	Projects map[string]ProjectDemand
}

// ProjectDemand is a project's requests in a workload's demand, and of them
// those at or above the large line.
type ProjectDemand struct {
	Requests, LargeRequests int64
}

// Workloads are the workloads demand is reported in (election.md's).
var Workloads = []string{"general", "coding", "chat"}

// Validate returns a message per bad field (by its JSON name).
func (d *Demand) Validate(now time.Time) map[string]string {
	errs := map[string]string{}
	if d.Model == "" || len(d.Model) > 200 {
		errs["model"] = "required: the model's slug (at most 200 characters)"
	}
	if !slices.Contains(Workloads, d.Workload) {
		errs["workload"] = "one of general, coding, chat"
	}
	for name, v := range map[string]int64{"requests": d.Requests, "promptTokens": d.PromptTokens} {
		if v < 0 || v > MaxBucketValue {
			errs[name] = fmt.Sprintf("must be between 0 and %d", MaxBucketValue)
		}
	}
	if (d.LargeRequests == nil) != (d.LargePromptTokens == nil) {
		errs["largeRequests"] = "send largeRequests and largePromptTokens together, or neither"
	}
	if d.LargeRequests != nil && (*d.LargeRequests < 0 || *d.LargeRequests > d.Requests) {
		errs["largeRequests"] = "must be between 0 and requests"
	}
	if d.LargePromptTokens != nil && (*d.LargePromptTokens < 0 || *d.LargePromptTokens > d.PromptTokens) {
		errs["largePromptTokens"] = "must be between 0 and promptTokens"
	}
	if msg := minuteProblem(d.Minute, now); msg != "" {
		errs["minute"] = msg
	}
	if msg := validateAsked(d.Asked, d.Requests); msg != "" {
		errs["asked"] = msg
	}
	if msg := sourceProblem(d.Source); msg != "" {
		errs["source"] = msg
	}
	if _, bad, ok := election.ParseCapabilities(d.Requires); !ok {
		errs["requires"] = fmt.Sprintf("%q is not a capability: use %s", bad, strings.Join(election.CapabilitySet(election.AllCapabilities()...).Names(), ", "))
	} else if len(d.Requires) > 0 && d.Streaming == nil {
		errs["requires"] = "send streaming with requires: a row of one kind of request says both"
	}
	return errs
}

// The decayed window: the last minute counts 10 times, the four before it 3
// times, the rest of the hour once.
const (
	WindowMinutes = 60
	weightLast    = 10
	weightRecent  = 3
	weightRest    = 1
)

// MinuteWeight is the weight of a bucket age minutes old (0 = the current
// minute); 0 outside the window.
func MinuteWeight(age int) int64 {
	switch {
	case age < 0:
		return 0
	case age == 0:
		return weightLast
	case age < 5:
		return weightRecent
	case age < WindowMinutes:
		return weightRest
	}
	return 0
}

// WindowSums are a listing's weighted sums over the decayed window.
type WindowSums struct {
	Requests, Successes, TTFTMsSum, OutputTokens, DurationMs int64
}

// DaySums are a listing's plain sums over the last 24 hours.
type DaySums struct {
	Successes, InputTokens, CachedInputTokens, OutputTokens int64
}

// Gates for observed rates: the last 24 hours must hold at least this much.
const (
	MinObservedRequests    = 20
	MinObservedInputTokens = 20000
)

// HealthFrom turns window and day sums into health: uptime (percent of
// successful requests), time to first token (ms), throughput (output tokens
// per second of generation), and, once past the gates, the observed cache hit
// rate and output ratio. A metric without data is nil (missing).
func HealthFrom(w WindowSums, d DaySums) Health {
	h := Health{Requests: ptr(float64(w.Requests) / weightLast)}
	if w.Requests > 0 {
		h.UptimePct = ptr(100 * float64(w.Successes) / float64(w.Requests))
	}
	// A 0 ms average time to first token is no measurement (a gateway that
	// reports none), not the best latency there is (election spec section 3).
	if ms := TTFTPerSuccess(w.TTFTMsSum, w.Successes); ms >= 0 {
		h.LatencyMs = ptr(ms)
	}
	if tps := Speed(w.OutputTokens, w.DurationMs); tps >= 0 {
		h.ThroughputTPS = ptr(tps)
	}
	if PassesGates(d) {
		h.CacheHitRate = ptr(float64(d.CachedInputTokens) / float64(d.InputTokens))
		h.OutputRatio = ptr(float64(d.OutputTokens) / float64(d.InputTokens))
	}
	return h
}

// PassesGates reports whether a day of traffic is enough to count observed
// rates.
func PassesGates(d DaySums) bool {
	return d.Successes >= MinObservedRequests && d.InputTokens >= MinObservedInputTokens
}

func ptr(v float64) *float64 { return &v }

// The figures derived from a metric's sums, one home for health, earnings
// and the pages. Each is -1 when nothing was measured.

// TTFTPerSuccess is the average time to first token of the successes (ms).
// A sum of 0 is no measurement (a gateway that reports none), not the best
// latency there is (election spec section 3).
func TTFTPerSuccess(ttftMsSum, successes int64) float64 {
	if successes <= 0 || ttftMsSum <= 0 {
		return -1
	}
	return float64(ttftMsSum) / float64(successes)
}

// Speed is the end-to-end speed of the successes: output tokens over the
// whole answers' time, first token included.
func Speed(outputTokens, durationMs int64) float64 {
	if durationMs <= 0 {
		return -1
	}
	return float64(outputTokens) / (float64(durationMs) / 1000)
}

// Successes are the requests that neither failed nor were the caller's
// fault.
func (h HourlyPoint) Successes() int64 { return h.Requests - h.Errors - h.ClientErrors }

// TTFTPerSuccess is the hour's average time to first token (ms).
func (h HourlyPoint) TTFTPerSuccess() float64 { return TTFTPerSuccess(h.TTFTMsSum, h.Successes()) }

// Speed is the hour's end-to-end speed (output tokens a second).
func (h HourlyPoint) Speed() float64 { return Speed(h.OutputTokens, h.DurationMs) }

// FailureRate is the share of requests that failed for the listing's
// reasons (callers' errors left out).
func (h HourlyPoint) FailureRate() float64 {
	if n := h.Requests - h.ClientErrors; n > 0 {
		return float64(h.Errors) / float64(n)
	}
	return -1
}

// LimitRate is the share of tries the carrier answered 429.
func (h HourlyPoint) LimitRate() float64 {
	if n := h.Requests + h.RateLimited; n > 0 {
		return float64(h.RateLimited) / float64(n)
	}
	return -1
}

// WindowOf computes the window sums of buckets at time now (pure; the store
// does the same in SQL).
func WindowOf(buckets []Bucket, now time.Time) WindowSums {
	var w WindowSums
	current := now.Truncate(time.Minute)
	for _, b := range buckets {
		w.add(b, current)
	}
	return w
}

// add adds a bucket with its weight at the current minute (a minute ahead of
// the clock counts as the current one).
func (w *WindowSums) add(b Bucket, current time.Time) {
	weight := MinuteWeight(int(current.Sub(b.Minute) / time.Minute))
	if b.Minute.After(current) {
		weight = weightLast
	}
	ok := b.Requests - b.Errors - b.ClientErrors
	w.Requests += weight * (b.Requests - b.ClientErrors)
	w.Successes += weight * ok
	w.TTFTMsSum += weight * b.TTFTMsSum
	w.OutputTokens += weight * b.OutputTokens
	w.DurationMs += weight * b.DurationMs
}

// DayOf computes the day sums of buckets at time now.
func DayOf(buckets []Bucket, now time.Time) DaySums {
	var d DaySums
	for _, b := range buckets {
		if b.Minute.After(now.Add(-24 * time.Hour)) {
			d.add(b)
		}
	}
	return d
}

// SeriesPoint is one step of a listing's recent traffic.
type SeriesPoint struct {
	At                       time.Time
	Requests, Errors         int64
	TTFTMsSum, SuccessCount  int64
	OutputTokens, DurationMs int64
}

// HourlyPoint is one hour of a listing's traffic, rolled up from its minutes.
type HourlyPoint struct {
	Hour time.Time
	Counts
}

// HealthAt is a listing's health as the catalogue computed it at the start
// of the hour at, rebuilt from hourly rollups (hours, oldest first): the
// window is the hour before at (its minutes weighed alike, where the live
// figure decays them: the rollups keep no minutes), the day the 24 hours
// before at: what a past hour's projection elects with. hours are sorted
// by hour, as the store returns them. ok is false when they hold nothing to
// measure: the catalogue then served the listing's stored health.
func HealthAt(hours []HourlyPoint, at time.Time) (h Health, ok bool) {
	var w WindowSums
	var d DaySums
	lastHour, dayAgo := at.Add(-time.Hour), at.Add(-24*time.Hour)
	from, _ := slices.BinarySearchFunc(hours, dayAgo, func(h HourlyPoint, t time.Time) int { return h.Hour.Compare(t) })
	for _, p := range hours[from:] {
		if !p.Hour.Before(at) {
			break
		}
		successes := p.Requests - p.Errors - p.ClientErrors
		d.Successes += successes
		d.InputTokens += p.InputTokens
		d.CachedInputTokens += p.CachedInputTokens
		d.OutputTokens += p.OutputTokens
		if !p.Hour.Before(lastHour) {
			w = WindowSums{Requests: p.Requests - p.ClientErrors, Successes: successes, TTFTMsSum: p.TTFTMsSum,
				OutputTokens: p.OutputTokens, DurationMs: p.DurationMs}
		}
	}
	if w.Requests == 0 && !PassesGates(d) {
		return Health{}, false
	}
	return HealthFrom(w, d), true
}
