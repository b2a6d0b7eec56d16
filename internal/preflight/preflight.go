// Package preflight probes a carrier's OpenAI-compatible endpoint: is it
// reachable, does it chat and stream, and which capability flags does it
// really serve. Each probe is one small documented request made with the
// official OpenAI Go client through an address-checked HTTP client; its
// verdict and evidence are what earns a flag its place in routing.
package preflight

import (
	"context"
	"fmt"
	"net/http"
	"time"
	"unicode/utf8"

	"github.com/openai/openai-go/v3"
	"github.com/openai/openai-go/v3/option"

	"github.com/airside/airside/internal/carrierclient"
)

// State is where a probe is.
type State string

// The probe states.
const (
	Queued  State = "queued"
	Running State = "running"
	Passed  State = "passed"
	Failed  State = "failed"
)

// Endpoint is what is probed.
type Endpoint struct {
	BaseURL string // up to and including /v1
	Model   string // the upstream model name
	APIKey  string
}

// Result is one probe's verdict and evidence.
type Result struct {
	Probe   string
	State   State
	Status  int // the HTTP status of the (last) answer, 0 when none came
	Latency time.Duration
	Excerpt string // a short excerpt of the answer
	Error   string // why it failed, in words a carrier can act on
	// Streaming figures, measured by the streaming probe.
	TTFT            time.Duration
	TokensPerSecond float64
	// CachedTokens is what the cache probe's second request reported.
	CachedTokens int64
	At           time.Time
}

// Probe is one entry of the table of probes.
type Probe struct {
	Name string
	// Capability is the flag the probe earns; "" for the probes every
	// listing needs (reachable, chat, streaming) and the cache probe.
	Capability string
	Title      string
	// Request documents what is sent, for the carrier's page and the README.
	Request string
	// Fix says what a carrier does when the probe fails.
	Fix string
	run func(ctx context.Context, p *prober) Result
}

// The probe names that are not capability flags.
const (
	ProbeReachable = "reachable"
	ProbeChat      = "chat"
	ProbeStreaming = "streaming"
	ProbeCache     = "cached_input"
)

// Probes is the table, in the order they run.
var Probes = []Probe{
	{Name: ProbeReachable, Title: "Reachable and authorised", Request: "GET /v1/models; the upstream model must be listed.",
		Fix: "Check the base URL (it ends in /v1), the API key, and that the upstream model name is one your server lists.", run: probeReachable},
	{Name: ProbeChat, Title: "Chat", Request: "A one-line chat completion; it must return text and token usage.",
		Fix: "Your server must answer POST /v1/chat/completions with a message and a usage object.", run: probeChat},
	{Name: ProbeStreaming, Title: "Streaming", Request: "The same request with stream=true and stream_options.include_usage; chunks must arrive and end with [DONE].",
		Fix: "Serve server-sent events ending with data: [DONE], and report usage in the last chunk.", run: probeStreaming},
	{Name: "tools", Capability: "tools", Title: "Tool calls", Request: "A streamed request with one function tool; the tool call's arguments must parse as JSON valid against the tool's schema.",
		Fix: "Enable function calling (tool parsing) for this model on your server.", run: probeTools},
	{Name: "json_output", Capability: "json_output", Title: "JSON output", Request: "response_format json_object with a prompt that invites a sentence before the JSON; the answer must be exactly one JSON object (a server that only follows the prompt writes the sentence too).",
		Fix: "Support response_format {\"type\": \"json_object\"} (JSON mode).", run: probeJSONOutput},
	{Name: "json_schema", Capability: "json_schema", Title: "JSON schema", Request: "response_format json_schema (strict); the answer must be valid against the schema.",
		Fix: "Enable constrained decoding (structured outputs) so answers follow the schema.", run: probeJSONSchema},
	{Name: "vision", Capability: "vision", Title: "Vision", Request: "A 32x32 PNG of a colour drawn at random (red, green, blue or yellow) and \"What colour is this image?\"; the answer must name the colour, and the image must cost prompt tokens beyond the same text sent alone (a server that drops the image fails both).",
		Fix: "Serve a vision-capable build of the model and accept image_url content parts (data URLs included).", run: probeVision},
	{Name: "audio_input", Capability: "audio_input", Title: "Audio input", Request: "A spoken digit drawn at random (a short WAV input_audio part) and \"Which number is spoken?\"; the answer must name it, and the recording must cost prompt tokens beyond the same text sent alone.",
		Fix: "Accept input_audio content parts (base64 WAV).", run: probeAudio},
	{Name: "reasoning", Capability: "reasoning", Title: "Reasoning", Request: "reasoning_effort=low; reasoning content (reasoning_content or reasoning) or reasoning tokens must come back.",
		Fix: "Return the model's reasoning as reasoning_content or reasoning, or count it in usage.completion_tokens_details.reasoning_tokens.", run: probeReasoning},
	{Name: "reasoning_budget", Capability: "reasoning_budget", Title: "Reasoning budget", Request: "reasoning.max_tokens=32; reasoning tokens must come back and stay within 32.",
		Fix: "Honour reasoning.max_tokens: stop reasoning at the budget and report reasoning_tokens.", run: probeReasoningBudget},
	{Name: "web_search", Capability: "web_search", Title: "Web search", Request: "web_search_options; the answer must carry a url_citation annotation (a URL in the text is no evidence of a search).",
		Fix: "Accept web_search_options and return url_citation annotations.", run: probeWebSearch},
	{Name: ProbeCache, Title: "Cached input", Request: "The same 2,000-token prefix sent twice; the second answer must report cached prompt tokens.",
		Fix: "Enable prefix caching and report hits as usage.prompt_tokens_details.cached_tokens (or prompt_cache_hit_tokens). A cached-input price with no cache hits wins no cached traffic.", run: probeCache},
}

// Lookup returns the probe of a name.
func Lookup(name string) (Probe, bool) {
	for _, p := range Probes {
		if p.Name == name {
			return p, true
		}
	}
	return Probe{}, false
}

// ForCapability returns the probe that earns a flag.
func ForCapability(capability string) (Probe, bool) {
	for _, p := range Probes {
		if p.Capability == capability && capability != "" {
			return p, true
		}
	}
	return Probe{}, false
}

// Runner runs probes with one HTTP client (the address-checked one in
// production) and one clock.
type Runner struct {
	HTTP *http.Client
	Now  func() time.Time
	// PerProbe bounds each probe.
	PerProbe time.Duration
}

// Run runs every probe in table order against ep, reporting each result as
// it finishes (a probe's "running" state first). When the endpoint is not
// reachable the rest fail without a request.
func (r *Runner) Run(ctx context.Context, ep Endpoint, report func(Result)) []Result {
	p := newProber(ep, r.HTTP, r.now)
	var out []Result
	for _, probe := range Probes {
		report(Result{Probe: probe.Name, State: Running, At: r.now()})
		var res Result
		if len(out) > 0 && out[0].State == Failed {
			res = Result{State: Failed, Error: "Not run: the endpoint is not reachable."}
		} else {
			pctx, cancel := context.WithTimeout(ctx, r.perProbe())
			start := time.Now()
			res = probe.run(pctx, p)
			cancel()
			if res.Latency == 0 {
				res.Latency = time.Since(start)
			}
		}
		res.Probe, res.At = probe.Name, r.now()
		res.Excerpt, res.Error = clip(res.Excerpt, 300), clip(res.Error, 500)
		out = append(out, res)
		report(res)
	}
	return out
}

func newClient(ep Endpoint, hc *http.Client, opts ...option.RequestOption) openai.Client {
	// No retries: a probe reports what the first answer was.
	return carrierclient.New(ep.BaseURL, ep.APIKey, hc, opts...)
}

func (r *Runner) now() time.Time {
	if r.Now != nil {
		return r.Now()
	}
	return time.Now()
}

func (r *Runner) perProbe() time.Duration {
	if r.PerProbe > 0 {
		return r.PerProbe
	}
	return 45 * time.Second
}

// clip shortens text to n bytes on a rune boundary.
func clip(s string, n int) string {
	if len(s) <= n {
		return s
	}
	for n > 0 && !utf8.RuneStart(s[n]) {
		n--
	}
	return s[:n] + "…"
}

func failed(status int, excerpt, format string, args ...any) Result {
	return Result{State: Failed, Status: status, Excerpt: excerpt, Error: fmt.Sprintf(format, args...)}
}

func passed(status int, excerpt string) Result {
	return Result{State: Passed, Status: status, Excerpt: excerpt}
}
