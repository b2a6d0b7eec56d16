package gateway

import (
	"bytes"
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"io"
	"net/http"
	"net/url"
	"strconv"
	"strings"
	"time"

	jsonv2 "github.com/go-json-experiment/json"
	"github.com/go-json-experiment/json/jsontext"
	"go.opentelemetry.io/otel/attribute"
	"go.opentelemetry.io/otel/codes"
	"go.opentelemetry.io/otel/trace"

	"github.com/airside/airside/internal/tracing"
	"github.com/airside/airside/internal/traffic"
)

// MaxAnswerBytes bounds a non-streamed answer the gateway reads.
const MaxAnswerBytes = 32 << 20

// ListingHeader names, on an answer, the listing ("carrier/model") that
// served it; CacheHeader says whether a non-streamed answer came from the
// gateway's response cache ("hit") or the carrier ("miss").
const (
	ListingHeader = "Airside-Listing"
	CacheHeader   = "Airside-Cache"
)

// attempt is one try of a request at one listing.
type attempt struct {
	Outcome
	// written is set once anything reached the caller: no fallback after.
	written bool
	// failure is the carrier's answer to relay when this is the last try.
	failure *upstreamFailure
	// answer is a non-streamed answer as relayed (for the response cache).
	answer []byte
}

// upstreamFailure is a carrier's refusal as the caller will see it.
type upstreamFailure struct {
	status int
	// body is the carrier's error as relayed: redacted, in OpenAI's shape
	// (carrierError).
	body       []byte
	retryAfter string
	message    string // when there was no answer at all
}

// forward sends the request to one listing: the body goes as raw JSON so
// every field the caller sent reaches the carrier, and the answer comes
// back as the raw response, which the gateway relays as it arrives (an SSE
// stream event by event) while it measures it.
func (g *Gateway) forward(ctx context.Context, w http.ResponseWriter, a *Analysis, body []byte, route Route) (at attempt) {
	start := g.Now()
	// The carrier call is a GenAI client span (OpenTelemetry's GenAI
	// conventions), its HTTP span beneath it.
	ctx, span := tracing.Tracer("gateway").Start(ctx, "chat", trace.WithSpanKind(trace.SpanKindClient))
	defer func() { endCarrierSpan(span, at) }()
	baseURL, key, upstreamModel, err := g.Creds.For(ctx, route)
	if span.IsRecording() {
		span.SetName("chat " + upstreamModel)
		span.SetAttributes(attribute.String("gen_ai.operation.name", "chat"), attribute.String("gen_ai.provider.name", route.Carrier()),
			attribute.String("gen_ai.request.model", upstreamModel), attribute.String("airside.listing", route.ID),
			attribute.String("airside.model", a.Model), attribute.Bool("airside.stream", a.Stream))
		if u, perr := url.Parse(baseURL); perr == nil && u.Hostname() != "" {
			span.SetAttributes(attribute.String("server.address", u.Hostname()))
		}
	}
	if err != nil {
		g.Log.Warn("gateway: no credentials; trying the next listing", "listing", route.ID, "err", err)
		return attempt{Outcome: Outcome{Class: traffic.Counted}, failure: &upstreamFailure{status: http.StatusBadGateway, message: "The gateway could not read this listing's credentials."}}
	}
	up := upstreamBody(a.members, upstreamModel, a.Stream)
	caller := ctx
	ctx, cancel := context.WithCancelCause(ctx)
	defer cancel(nil)
	// No first token within FirstByteTimeout is a timeout (counted); a
	// stream then has StreamLimits.Deadline in all.
	firstByte := time.AfterFunc(g.firstByteTimeout(), func() { cancel(errFirstByte) })
	raw, err := g.postChat(ctx, baseURL, key, up, a.Stream)
	if err != nil {
		firstByte.Stop()
		if caller.Err() != nil {
			return callerHungUp(g.Now().Sub(start))
		}
		msg := "The carrier did not answer."
		if errors.Is(context.Cause(ctx), errFirstByte) {
			msg = fmt.Sprintf("The carrier sent nothing within %s.", g.firstByteTimeout())
		}
		return attempt{Outcome: Outcome{Class: traffic.Counted, Total: g.Now().Sub(start)},
			failure: &upstreamFailure{status: http.StatusBadGateway, message: msg}}
	}
	defer raw.Body.Close()
	if raw.StatusCode == http.StatusUnauthorized {
		g.Creds.Forget(route.ListingID) // the key may have been rotated
	}
	if raw.StatusCode >= 300 {
		firstByte.Stop()
		b, _ := io.ReadAll(io.LimitReader(raw.Body, 64<<10))
		return attempt{Outcome: Outcome{Class: traffic.ClassOfStatus(raw.StatusCode), Status: raw.StatusCode, Total: g.Now().Sub(start)},
			failure: &upstreamFailure{status: raw.StatusCode, body: carrierError(raw.StatusCode, b, key), retryAfter: raw.Header.Get("Retry-After")}}
	}
	// The caller learns which listing served (as OpenRouter's "provider").
	w.Header().Set(ListingHeader, route.ID)
	if a.Stream {
		return g.relayStream(caller, ctx, cancel, w, a, raw, start, firstByte, route)
	}
	answer, err := io.ReadAll(io.LimitReader(raw.Body, MaxAnswerBytes))
	firstByte.Stop()
	if err != nil && caller.Err() != nil {
		return callerHungUp(g.Now().Sub(start))
	}
	if err != nil {
		return attempt{Outcome: Outcome{Class: traffic.Counted, Status: raw.StatusCode, Total: g.Now().Sub(start)},
			failure: &upstreamFailure{status: http.StatusBadGateway, message: "The carrier's answer was cut off."}}
	}
	ttft := g.Now().Sub(start)
	var c struct {
		Choices []struct {
			Message struct {
				ToolCalls []toolCall `json:"tool_calls"`
			} `json:"message"`
		} `json:"choices"`
		Usage    *usageJSON     `json:"usage"`
		Provider jsontext.Value `json:"provider"`
	}
	if jsonv2.Unmarshal(answer, &c, lenientChunk) != nil {
		return attempt{Outcome: Outcome{Class: traffic.Counted, Status: raw.StatusCode, Total: ttft},
			failure: &upstreamFailure{status: http.StatusBadGateway, message: "The carrier's answer was not JSON."}}
	}
	o := Outcome{Class: traffic.Served, Status: raw.StatusCode, TTFT: ttft, Total: ttft, Usage: c.Usage.usage()}
	for _, ch := range c.Choices {
		for _, tc := range ch.Message.ToolCalls {
			o.ToolCalls++
			if !json.Valid([]byte(tc.Function.Arguments)) {
				o.BadToolCalls++
			}
		}
	}
	if c.Usage.spelledAsDeepSeek() {
		answer = rewriteUsage(answer, false)
	}
	if c.Provider == nil {
		answer = withProvider(answer, route.Carrier())
	}
	w.Header().Set("Content-Type", "application/json")
	w.Header().Set(CacheHeader, "miss")
	// With its length said, the caller has the whole answer as the bytes
	// arrive, not when the gateway has also recorded the try.
	w.Header().Set("Content-Length", strconv.Itoa(len(answer)))
	w.WriteHeader(http.StatusOK)
	_, _ = w.Write(answer)
	return attempt{Outcome: o, written: true, answer: answer}
}

// lenientChunk reads a stream chunk as encoding/json would (the relay only
// looks into it; what it does not understand passes on as it came):
// names in any case, a name twice, invalid UTF-8.
var lenientChunk = jsonv2.JoinOptions(jsonv2.MatchCaseInsensitiveNames(true), jsontext.AllowDuplicateNames(true), jsontext.AllowInvalidUTF8(true))

// postChat is the relay's one call to a carrier: the body as it is, to
// the chat completions path under the listing's base URL, with its key.
// Written on net/http rather than through the official OpenAI client (the
// preflight's and the traffic driver's): the relay reads nothing of the
// answer through the client's types, and building a request through the
// client's option chain cost more than the rest of the relay (issue 51's
// profile); the client's other value, retries, the gateway does itself,
// across listings. No OPENAI_* variable of the operator's reaches it.
func (g *Gateway) postChat(ctx context.Context, baseURL, key string, body []byte, stream bool) (*http.Response, error) {
	req, err := http.NewRequestWithContext(ctx, http.MethodPost, strings.TrimSuffix(baseURL, "/")+"/chat/completions", bytes.NewReader(body))
	if err != nil {
		return nil, fmt.Errorf("carrier request: %w", err)
	}
	accept := "application/json"
	if stream {
		accept = "text/event-stream"
	}
	req.Header = http.Header{"Authorization": {"Bearer " + key}, "Content-Type": {"application/json"}, "Accept": {accept},
		"User-Agent": {carrierUserAgent}}
	// The transport's round trip, as a reverse proxy makes it: the
	// client's redirect loop and timers around it cost a tenth of the
	// relay, for nothing the gateway uses (it follows no redirect; the
	// request's context bounds it).
	rt := http.DefaultTransport
	if g.HTTP != nil && g.HTTP.Transport != nil {
		rt = g.HTTP.Transport
	}
	return rt.RoundTrip(req)
}

// carrierUserAgent names the gateway to carriers.
const carrierUserAgent = "Airside-Gateway/1"

// endCarrierSpan records an attempt's outcome on its GenAI span: the
// tokens the carrier reported, the status, and error.type when it failed.
func endCarrierSpan(span trace.Span, at attempt) {
	if span.IsRecording() {
		span.SetAttributes(attribute.Int64("gen_ai.usage.input_tokens", at.Usage.Input), attribute.Int64("gen_ai.usage.output_tokens", at.Usage.Output),
			attribute.String("airside.outcome", at.Class.String()))
		if at.Status != 0 {
			span.SetAttributes(attribute.Int("http.response.status_code", at.Status))
		}
		if at.failure != nil {
			errType := "carrier_error"
			if at.failure.status != 0 {
				errType = strconv.Itoa(at.failure.status)
			}
			span.SetAttributes(attribute.String("error.type", errType))
			span.SetStatus(codes.Error, at.failure.message)
		}
	}
	span.End()
}

// relayStream passes an SSE answer on event by event. Events before the
// first token (the role chunk) are held back: a stream that dies before its
// first token can still fall back, and time to first token is measured to
// it. One that dies after is a failure partway (counted), ended for the
// caller with an error event. What the stream may make the gateway hold or
// wait for is bounded by g.StreamLimits (see StreamLimits).
func (g *Gateway) relayStream(caller, ctx context.Context, cancel context.CancelCauseFunc, w http.ResponseWriter, a *Analysis,
	raw *http.Response, start time.Time, firstByte *time.Timer, route Route) attempt {
	limits := g.StreamLimits.withDefaults()
	body := &eventBoundedBody{ReadCloser: raw.Body, limit: limits.EventBytes}
	raw.Body = body
	readers := getStreamReaders(body)
	defer putStreamReaders(readers)
	dec, chunks := readers.events, readers.chunks
	deadline := time.AfterFunc(limits.Deadline, func() { cancel(errStreamDeadline) })
	defer deadline.Stop()
	var gap *time.Timer // armed at the first token
	defer func() {
		if gap != nil {
			gap.Stop()
		}
	}()
	flusher, _ := w.(http.Flusher)
	// Events are flushed to the caller when the relay is about to read
	// the carrier again: at once when it waits for the next event, and
	// once for events that arrived together (a write per event, a flush
	// per batch).
	pending := false
	flush := func() {
		if pending && flusher != nil {
			flusher.Flush()
		}
		pending = false
	}
	body.beforeRead = flush
	out := make([]byte, 0, 1<<10) // an event as the caller gets it
	var chunk chunkFacts
	carrier, _ := json.Marshal(route.Carrier())
	o := Outcome{Class: traffic.Served, Status: raw.StatusCode}
	args := &toolArgs{limits: limits, byCall: map[int][]byte{}}
	written, done := false, false
	var broke *streamBreach
	var held [][]byte // events before the first token
	heldBytes := 0
	commit := func() {
		firstByte.Stop()
		gap = time.AfterFunc(limits.MaxGap, func() { cancel(errStreamGap) })
		o.TTFT = g.Now().Sub(start)
		w.Header().Set("Content-Type", "text/event-stream")
		w.Header().Set("Cache-Control", "no-cache")
		w.WriteHeader(http.StatusOK)
		for _, h := range held {
			_, _ = fmt.Fprintf(w, "data: %s\n\n", h)
		}
		held, written = nil, true
	}
	for broke == nil && dec.next() {
		body.eventSeen()
		data := bytes.TrimSpace(dec.data)
		if len(data) == 0 {
			continue
		}
		if string(data) == "[DONE]" {
			if !written {
				commit()
			}
			done = true
			_, _ = io.WriteString(w, "data: [DONE]\n\n")
			break
		}
		// An event that is not a chat chunk is passed on as it is.
		token, named := true, true
		if chunks.read(data, &chunk) == nil {
			token, named = chunk.Token, chunk.Provider
			for _, tc := range chunk.ToolCalls {
				if broke = args.add(tc.Index, tc.Arguments); broke != nil {
					break
				}
			}
			if broke != nil {
				break
			}
			if chunk.Usage != nil {
				o.Usage = chunk.Usage.usage()
				switch {
				case chunk.NoChoices && !a.IncludeUsage:
					continue // asked for by the gateway, not by the caller
				case !a.IncludeUsage:
					// Usage on a content chunk (DeepSeek's way), not asked
					// for: the chunk goes on without it.
					data = rewriteUsage(data, true)
				case chunk.Usage.spelledAsDeepSeek():
					data = rewriteUsage(data, false)
				}
			}
		}
		if !written {
			if !token {
				// Kept past the reader's next event: a copy.
				if named {
					data = bytes.Clone(data)
				} else {
					data = appendWithProvider(nil, data, carrier)
				}
				held = append(held, data)
				heldBytes += len(data)
				if len(held) > limits.HeldEvents || heldBytes > limits.HeldBytes {
					broke = breach("sent %d events (%d bytes) before its first token", len(held), heldBytes)
				}
				continue
			}
			commit()
		}
		if token {
			gap.Reset(limits.MaxGap)
		}
		// The provider goes in first, after any rewrite above (which
		// reorders the keys), written straight into the event.
		out = append(out[:0], "data: "...)
		if named {
			out = append(out, data...)
		} else {
			out = appendWithProvider(out, data, carrier)
		}
		out = append(out, "\n\n"...)
		_, _ = w.Write(out)
		pending = true
	}
	flush()
	firstByte.Stop()
	held = nil
	o.Total = g.Now().Sub(start)
	for _, b := range args.byCall {
		o.ToolCalls++
		if !json.Valid(b) {
			o.BadToolCalls++
		}
	}
	if broke == nil && !done {
		broke = g.streamBroke(ctx, dec.Err(), body, limits)
	}
	if broke == nil && !done && caller.Err() != nil {
		// The caller hung up (or its own deadline passed) mid-stream: its
		// doing, never the carrier's failure.
		hung := callerHungUp(o.Total)
		hung.written = written
		return hung
	}
	if broke != nil {
		g.Log.Warn("gateway: a carrier's stream broke the gateway's limits; counted as its failure", "listing", route.ID, "why", broke.message)
	}
	if broke != nil || dec.Err() != nil || (!done && written && o.Usage == (Usage{})) {
		// Cut off partway (a limit, an error, or the stream ended with
		// neither [DONE] nor usage): a counted failure.
		o.Class = traffic.Counted
		if !written {
			msg := "The carrier's stream broke before its first event."
			if broke != nil {
				msg = "The carrier's stream " + broke.message + "."
			}
			return attempt{Outcome: o, failure: &upstreamFailure{status: http.StatusBadGateway, message: msg}}
		}
		msg := "The carrier's stream broke partway."
		if broke != nil {
			msg = "The carrier's stream " + broke.message + "; the gateway ended it."
		}
		event, _ := json.Marshal(map[string]any{"error": map[string]any{"message": msg, "type": "upstream_error", "code": "stream_broken"}})
		_, _ = fmt.Fprintf(w, "data: %s\n\n", event)
		if flusher != nil {
			flusher.Flush()
		}
	}
	if !written {
		return attempt{Outcome: Outcome{Class: traffic.Counted, Status: raw.StatusCode, Total: o.Total},
			failure: &upstreamFailure{status: http.StatusBadGateway, message: "The carrier's stream was empty."}}
	}
	return attempt{Outcome: o, written: true}
}

// streamBroke names the limit a stream that ended early broke, if any: the
// event size the body refused, or the time limit its context was cancelled
// for.
func (g *Gateway) streamBroke(ctx context.Context, err error, body *eventBoundedBody, limits StreamLimits) *streamBreach {
	if body.breach != nil {
		return body.breach
	}
	if err == nil {
		return nil
	}
	switch context.Cause(ctx) {
	case errFirstByte:
		return breach("sent no token within %s", g.firstByteTimeout())
	case errStreamDeadline:
		return breach("outlasted the gateway's %s deadline for a stream", limits.Deadline)
	case errStreamGap:
		return breach("sent no token for %s", limits.MaxGap)
	}
	return nil
}

// callerHungUp is an attempt the caller abandoned: a 499, counted as the
// caller's (election spec section 4), never against the listing.
func callerHungUp(took time.Duration) attempt {
	return attempt{Outcome: Outcome{Class: traffic.NotCounted, Status: traffic.StatusClientClosed, Total: took},
		failure: &upstreamFailure{status: traffic.StatusClientClosed, message: "The caller closed the request."}}
}

type toolCall struct {
	Function struct {
		Arguments string `json:"arguments"`
	} `json:"function"`
}

// usageJSON reads usage in the spellings carriers use: OpenAI's cached
// tokens, DeepSeek's cache hits, Anthropic-style cache reads and writes.
// The result follows the metrics contract: Input is every prompt token,
// with implicit cache hits (Cached) and explicit cache reads and writes
// counted within it. Anthropic's spelling reports reads and writes apart
// from the prompt tokens, so they are added to Input; OpenAI's
// prompt_tokens_details already count within prompt_tokens.
type usageJSON struct {
	PromptTokens        int64 `json:"prompt_tokens"`
	CompletionTokens    int64 `json:"completion_tokens"`
	PromptTokensDetails *struct {
		CachedTokens     *int64 `json:"cached_tokens"`
		CacheWriteTokens int64  `json:"cache_write_tokens"`
	} `json:"prompt_tokens_details"`
	// PromptCacheHitTokens is DeepSeek's spelling (nil: not sent).
	PromptCacheHitTokens     *int64 `json:"prompt_cache_hit_tokens"`
	CacheReadInputTokens     int64  `json:"cache_read_input_tokens"`
	CacheCreationInputTokens int64  `json:"cache_creation_input_tokens"`
}

// spelledAsDeepSeek reports usage that gives cache hits only in DeepSeek's
// prompt_cache_hit_tokens, without OpenAI's prompt_tokens_details.
func (u *usageJSON) spelledAsDeepSeek() bool {
	return u != nil && u.PromptCacheHitTokens != nil && (u.PromptTokensDetails == nil || u.PromptTokensDetails.CachedTokens == nil)
}

// rewriteUsage rewrites the usage of a JSON answer or chunk: dropped (the
// caller did not ask for it), or with DeepSeek's cache hits also given as
// OpenAI's prompt_tokens_details.cached_tokens, which the OpenAI SDKs read.
// Only the top level is re-encoded (the other members pass as they came);
// obj is returned unchanged when it is not an object with usage.
func rewriteUsage(obj []byte, drop bool) []byte {
	var top map[string]json.RawMessage
	if json.Unmarshal(obj, &top) != nil || top["usage"] == nil {
		return obj
	}
	if drop {
		delete(top, "usage")
	} else {
		var usage map[string]json.RawMessage
		if json.Unmarshal(top["usage"], &usage) != nil {
			return obj
		}
		details := map[string]json.RawMessage{}
		if raw, ok := usage["prompt_tokens_details"]; ok && json.Unmarshal(raw, &details) != nil {
			return obj
		}
		details["cached_tokens"] = usage["prompt_cache_hit_tokens"]
		usage["prompt_tokens_details"], _ = json.Marshal(details)
		top["usage"], _ = json.Marshal(usage)
	}
	out, err := json.Marshal(top)
	if err != nil {
		return obj
	}
	return out
}

func (u *usageJSON) usage() Usage {
	if u == nil {
		return Usage{}
	}
	out := Usage{Input: u.PromptTokens + u.CacheReadInputTokens + u.CacheCreationInputTokens, Output: u.CompletionTokens,
		Cached: valueOr0(u.PromptCacheHitTokens), CacheRead: u.CacheReadInputTokens, CacheWrite: u.CacheCreationInputTokens}
	if d := u.PromptTokensDetails; d != nil {
		out.Cached = max(out.Cached, valueOr0(d.CachedTokens))
		out.CacheWrite = max(out.CacheWrite, d.CacheWriteTokens)
	}
	// Never more cached than there are prompt tokens (a carrier's slip would
	// refuse the whole minute's report).
	out.Cached = min(out.Cached, out.Input)
	out.CacheRead = min(out.CacheRead, out.Input-out.Cached)
	out.CacheWrite = min(out.CacheWrite, out.Input-out.Cached-out.CacheRead)
	return out
}

// withProvider names the carrier that served in a JSON object answer or
// chunk, as OpenRouter's "provider" does, so a client that reads only bodies
// (not the Airside-Listing header) learns it. obj is a JSON object without
// a provider of its own.
func withProvider(obj []byte, carrier string) []byte {
	name, _ := json.Marshal(carrier)
	return appendWithProvider(make([]byte, 0, len(obj)+len(name)+16), obj, name)
}

// appendWithProvider appends obj to dst with "provider" (name, a JSON
// string) as its first member; obj is appended as it is when it is not an
// object.
func appendWithProvider(dst, obj, name []byte) []byte {
	trimmed := bytes.TrimLeft(obj, " \t\r\n")
	if len(trimmed) == 0 || trimmed[0] != '{' {
		return append(dst, obj...)
	}
	rest := trimmed[1:]
	dst = append(append(dst, `{"provider":`...), name...)
	if r := bytes.TrimLeft(rest, " \t\r\n"); len(r) > 0 && r[0] != '}' {
		dst = append(dst, ',')
	}
	return append(dst, rest...)
}

func valueOr0(p *int64) int64 {
	if p == nil {
		return 0
	}
	return *p
}
