// Package fakecarrier is an OpenAI-compatible inference server good enough
// for the official client: models, chat completions with and without
// streaming, tool calls, JSON and JSON-schema output, image and audio parts,
// reasoning fields, web search citations and cached-token accounting. It
// answers from templates, not a model, and shows the failures real carriers
// show (400 for a capability it lacks, 429 with Retry-After, a slow first
// byte). The demo runs one per carrier and the preflight tests probe it.
package fakecarrier

import (
	"bytes"
	"crypto/sha256"
	"encoding/base64"
	"encoding/json"
	"fmt"
	"image"
	_ "image/png" // the vision probe's images
	"math/rand/v2"
	"net/http"
	"slices"
	"strings"
	"sync"
	"time"

	"github.com/airside/airside/internal/spoken"
)

// Dialect is which carrier's spelling of the API the server speaks.
type Dialect string

// The dialects: OpenAI's own, and DeepSeek's (cache hits as
// prompt_cache_hit_tokens, reasoning as reasoning_content, usage on the last
// content chunk rather than a chunk of its own).
const (
	DialectOpenAI   Dialect = "openai"
	DialectDeepSeek Dialect = "deepseek"
)

// Config is what the server serves and how.
type Config struct {
	Models       []string
	APIKey       string   // required as a bearer token when set
	Capabilities []string // tools, vision, audio_input, json_output, json_schema, reasoning, reasoning_budget, web_search
	Dialect      Dialect
	// Cache makes a repeated long prompt prefix report cached tokens.
	Cache bool
	// TTFT delays the first token; TokensPerSecond paces the stream.
	TTFT            time.Duration
	TokensPerSecond float64
	// ErrorRate is the share of chat requests answered 500 (or 429).
	ErrorRate float64
	// BreakSchema makes JSON-schema output violate the schema it was asked
	// for, as a model with no constrained decoding does.
	BreakSchema bool
	Seed        uint64
	// MaxConcurrent and MaxRPM are the server's capacity: a chat request
	// beyond MaxConcurrent in flight, or past MaxRPM in the current minute,
	// is answered 429 with Retry-After, as a loaded carrier does. Zero is
	// no limit.
	MaxConcurrent int
	MaxRPM        int
	// SlowHours are UTC hours of the day when the server is SlowFactor
	// times slower (first token and pace): a daily busy period.
	SlowHours  []int
	SlowFactor float64
	// Now is the server's clock (for the minute of MaxRPM and SlowHours);
	// nil is time.Now.
	Now func() time.Time
	// Pretend lists the ways the server passes for more than it is, as
	// OpenAI-compatible mocks and half-configured servers do (preflight
	// must catch each): PretendIgnoreParts, PretendURLsInProse,
	// PretendJSONByPrompt, PretendStreamWithoutUsage, PretendOddErrors.
	Pretend []string
}

// The pretenders' ways.
const (
	// PretendIgnoreParts accepts image and audio parts without reading
	// them: the answer is its fixed text and the parts cost no tokens.
	PretendIgnoreParts = "ignore-parts"
	// PretendURLsInProse answers web-search requests with a URL in the
	// text and no url_citation annotation (no search was made).
	PretendURLsInProse = "urls-in-prose"
	// PretendJSONByPrompt ignores response_format and writes JSON only
	// because the prompt asked for it, with prose around it.
	PretendJSONByPrompt = "json-by-prompt"
	// PretendStreamWithoutUsage streams without ever sending usage.
	PretendStreamWithoutUsage = "stream-without-usage"
	// PretendOddErrors answers errors in a shape that is not OpenAI's, as
	// Hugging Face TGI and several self-hosted stacks do.
	PretendOddErrors = "odd-errors"
	// PretendEchoReasoning copies its answer into the reasoning field and
	// counts no reasoning tokens: reasoning in name only.
	PretendEchoReasoning = "echo-reasoning"
)

// Server is the handler.
type Server struct {
	cfg  Config
	mu   sync.Mutex
	seen map[[32]byte]bool // prompt prefixes already served, for cache hits
	rng  *rand.Rand
	// Guarded by mu: requests in flight, this minute's count, and the
	// behaviour a test switches at run time.
	inFlight    int
	minute      time.Time
	minuteCount int
	status      int
	breakAfter  int
	chats       int
}

// SetStatus makes every chat request answer status (an error body in
// OpenAI's shape) until set back to 0: a carrier having an outage.
func (s *Server) SetStatus(status int) {
	s.mu.Lock()
	s.status = status
	s.mu.Unlock()
}

// BreakStreamsAfter makes every stream stop abruptly (the connection cut,
// no [DONE]) after n content events, until set back to 0.
func (s *Server) BreakStreamsAfter(n int) {
	s.mu.Lock()
	s.breakAfter = n
	s.mu.Unlock()
}

// Chats counts the chat requests the server received.
func (s *Server) Chats() int {
	s.mu.Lock()
	defer s.mu.Unlock()
	return s.chats
}

func (s *Server) now() time.Time {
	if s.cfg.Now != nil {
		return s.cfg.Now()
	}
	return time.Now()
}

// admit takes a place for a chat request within the capacity, or says how
// many seconds to wait; release gives the place back.
func (s *Server) admit() (release func(), retryAfter int, status int) {
	s.mu.Lock()
	defer s.mu.Unlock()
	s.chats++
	if s.status != 0 {
		return nil, 0, s.status
	}
	now := s.now()
	if m := now.Truncate(time.Minute); !m.Equal(s.minute) {
		s.minute, s.minuteCount = m, 0
	}
	if s.cfg.MaxRPM > 0 && s.minuteCount >= s.cfg.MaxRPM {
		return nil, max(1, int(s.minute.Add(time.Minute).Sub(now).Seconds())), 0
	}
	if s.cfg.MaxConcurrent > 0 && s.inFlight >= s.cfg.MaxConcurrent {
		return nil, 1, 0
	}
	s.minuteCount++
	s.inFlight++
	return func() {
		s.mu.Lock()
		s.inFlight--
		s.mu.Unlock()
	}, 0, 0
}

// slow is how much slower the server is at this hour.
func (s *Server) slow() float64 {
	if s.cfg.SlowFactor > 1 && slices.Contains(s.cfg.SlowHours, s.now().UTC().Hour()) {
		return s.cfg.SlowFactor
	}
	return 1
}

// New returns a server for cfg.
func New(cfg Config) *Server {
	if cfg.Dialect == "" {
		cfg.Dialect = DialectOpenAI
	}
	if cfg.TokensPerSecond <= 0 {
		cfg.TokensPerSecond = 1000
	}
	return &Server{cfg: cfg, seen: map[[32]byte]bool{}, rng: rand.New(rand.NewPCG(cfg.Seed, 7))}
}

// Has reports whether the server has a capability.
func (s *Server) Has(capability string) bool { return slices.Contains(s.cfg.Capabilities, capability) }

// pretends reports whether the server pretends in a way.
func (s *Server) pretends(way string) bool { return slices.Contains(s.cfg.Pretend, way) }

// ServeHTTP routes the two endpoints a preflight uses.
func (s *Server) ServeHTTP(w http.ResponseWriter, r *http.Request) {
	if s.cfg.APIKey != "" && r.Header.Get("Authorization") != "Bearer "+s.cfg.APIKey {
		s.fail(w, http.StatusUnauthorized, "invalid_api_key", "Incorrect API key provided.", "")
		return
	}
	switch {
	case r.Method == http.MethodGet && strings.HasSuffix(r.URL.Path, "/models"):
		s.models(w)
	case r.Method == http.MethodPost && strings.HasSuffix(r.URL.Path, "/chat/completions"):
		s.chat(w, r)
	default:
		s.fail(w, http.StatusNotFound, "not_found", "Unknown path "+r.URL.Path, "")
	}
}

func (s *Server) models(w http.ResponseWriter) {
	data := make([]map[string]any, 0, len(s.cfg.Models))
	for _, m := range s.cfg.Models {
		data = append(data, map[string]any{"id": m, "object": "model", "created": 1700000000, "owned_by": "fake-carrier"})
	}
	writeJSON(w, http.StatusOK, map[string]any{"object": "list", "data": data})
}

// fail answers an error in the server's shape: OpenAI's, or with
// PretendOddErrors the {"error": "...", "message": ...} of other stacks.
func (s *Server) fail(w http.ResponseWriter, status int, code, message, param string) {
	if s.pretends(PretendOddErrors) {
		writeJSON(w, status, map[string]any{"error": "SyntaxError", "message": message, "error_type": code})
		return
	}
	apiError(w, status, code, message, param)
}

// apiError writes the error shape OpenAI-compatible servers answer with.
func apiError(w http.ResponseWriter, status int, code, message, param string) {
	body := map[string]any{"message": message, "type": "invalid_request_error", "code": code, "param": nil}
	if param != "" {
		body["param"] = param
	}
	writeJSON(w, status, map[string]any{"error": body})
}

func writeJSON(w http.ResponseWriter, status int, v any) {
	w.Header().Set("Content-Type", "application/json")
	w.WriteHeader(status)
	_ = json.NewEncoder(w).Encode(v)
}

// request is the part of a chat request the server reads.
type request struct {
	Model         string    `json:"model"`
	Messages      []message `json:"messages"`
	Stream        bool      `json:"stream"`
	StreamOptions *struct {
		IncludeUsage bool `json:"include_usage"`
	} `json:"stream_options"`
	Tools           []tool           `json:"tools"`
	ResponseFormat  *responseFormat  `json:"response_format"`
	WebSearch       *json.RawMessage `json:"web_search_options"`
	ReasoningEffort string           `json:"reasoning_effort"`
	Reasoning       *struct {
		MaxTokens int64 `json:"max_tokens"`
	} `json:"reasoning"`
	MaxTokens int64 `json:"max_completion_tokens"`
}

type message struct {
	Role    string          `json:"role"`
	Content json.RawMessage `json:"content"`
}

type tool struct {
	Type     string `json:"type"`
	Function struct {
		Name       string         `json:"name"`
		Parameters map[string]any `json:"parameters"`
	} `json:"function"`
}

type responseFormat struct {
	Type       string `json:"type"`
	JSONSchema struct {
		Name   string         `json:"name"`
		Schema map[string]any `json:"schema"`
	} `json:"json_schema"`
}

// promptOf flattens the messages to text and lists the part types seen, the
// images' URLs and the audio parts' base64 data.
func promptOf(msgs []message) (string, []string, []string, []string) {
	var b strings.Builder
	var parts, images, audio []string
	for _, m := range msgs {
		var text string
		if json.Unmarshal(m.Content, &text) == nil {
			b.WriteString(text)
			continue
		}
		var list []map[string]any
		if json.Unmarshal(m.Content, &list) == nil {
			for _, p := range list {
				t, _ := p["type"].(string)
				parts = append(parts, t)
				if s, ok := p["text"].(string); ok {
					b.WriteString(s)
				}
				if img, ok := p["image_url"].(map[string]any); ok {
					if u, ok := img["url"].(string); ok {
						images = append(images, u)
					}
				}
				if au, ok := p["input_audio"].(map[string]any); ok {
					if d, ok := au["data"].(string); ok {
						audio = append(audio, d)
					}
				}
			}
		}
	}
	return b.String(), parts, images, audio
}

// need lists the capabilities a request uses.
func (r *request) need(parts []string) []string {
	var out []string
	if len(r.Tools) > 0 {
		out = append(out, "tools")
	}
	if r.ResponseFormat != nil {
		switch r.ResponseFormat.Type {
		case "json_object":
			out = append(out, "json_output")
		case "json_schema":
			out = append(out, "json_schema")
		}
	}
	if slices.Contains(parts, "image_url") {
		out = append(out, "vision")
	}
	if slices.Contains(parts, "input_audio") {
		out = append(out, "audio_input")
	}
	if r.WebSearch != nil {
		out = append(out, "web_search")
	}
	return out
}

// answer is what the server says, before it is spelled in a dialect.
type answer struct {
	content   string
	reasoning string
	toolName  string
	toolArgs  string
	citations []string
	prompt    int64
	cached    int64
	output    int64
	reasoned  int64
}

func (s *Server) chat(w http.ResponseWriter, r *http.Request) {
	var req request
	if err := json.NewDecoder(http.MaxBytesReader(w, r.Body, 4<<20)).Decode(&req); err != nil {
		s.fail(w, http.StatusBadRequest, "invalid_json", "We could not parse the JSON body of your request.", "")
		return
	}
	if !slices.Contains(s.cfg.Models, req.Model) {
		s.fail(w, http.StatusNotFound, "model_not_found", fmt.Sprintf("The model `%s` does not exist.", req.Model), "model")
		return
	}
	prompt, parts, images, audio := promptOf(req.Messages)
	for _, c := range req.need(parts) {
		pretended := s.pretends(PretendIgnoreParts) && (c == "vision" || c == "audio_input") ||
			s.pretends(PretendURLsInProse) && c == "web_search" || s.pretends(PretendJSONByPrompt) && c == "json_output"
		if !s.Has(c) && !pretended {
			param := map[string]string{"tools": "tools", "json_output": "response_format", "json_schema": "response_format",
				"web_search": "web_search_options", "vision": "messages", "audio_input": "messages"}[c]
			s.fail(w, http.StatusBadRequest, "unsupported_parameter", fmt.Sprintf("This model does not support %s.", c), param)
			return
		}
	}
	release, retryAfter, forced := s.admit()
	switch {
	case forced != 0:
		s.fail(w, forced, "server_error", fmt.Sprintf("The server answered %d (a test outage).", forced), "")
		return
	case release == nil:
		w.Header().Set("Retry-After", fmt.Sprint(retryAfter))
		s.fail(w, http.StatusTooManyRequests, "rate_limit_exceeded", fmt.Sprintf("The server is at capacity; retry after %ds.", retryAfter), "")
		return
	}
	defer release()
	s.mu.Lock()
	roll := s.rng.Float64()
	s.mu.Unlock()
	if roll < s.cfg.ErrorRate {
		if roll < s.cfg.ErrorRate/2 {
			w.Header().Set("Retry-After", "1")
			s.fail(w, http.StatusTooManyRequests, "rate_limit_exceeded", "Rate limit reached; retry after 1s.", "")
			return
		}
		s.fail(w, http.StatusInternalServerError, "server_error", "The server had an error while processing your request.", "")
		return
	}
	a := s.compose(&req, prompt, images, audio)
	if req.Stream {
		s.stream(w, r, &req, a)
		return
	}
	time.Sleep(time.Duration(float64(s.cfg.TTFT) * s.slow()))
	writeJSON(w, http.StatusOK, s.completion(&req, a))
}

// toolAnswered reports whether the conversation ends with a tool's result.
func toolAnswered(msgs []message) bool {
	return len(msgs) > 0 && msgs[len(msgs)-1].Role == "tool"
}

// compose decides the answer: a tool call, JSON, or text, with reasoning
// and citations where asked and served. An image it can see is read: the
// answer names its colour, and each image costs tokens.
func (s *Server) compose(req *request, prompt string, images, audio []string) *answer {
	a := &answer{prompt: int64(len(prompt)/4 + 8)}
	seeing := len(images) > 0 && s.Has("vision") && !s.pretends(PretendIgnoreParts)
	hearing := len(audio) > 0 && s.Has("audio_input") && !s.pretends(PretendIgnoreParts)
	jsonMode := req.ResponseFormat != nil && req.ResponseFormat.Type == "json_object" && !s.pretends(PretendJSONByPrompt)
	switch {
	case seeing:
		a.content = "The image is " + colourOf(images[0]) + "."
		a.prompt += imageTokens * int64(len(images))
	case hearing:
		a.content = "The recording says " + wordOf(audio[0]) + "."
		a.prompt += audioTokens * int64(len(audio))
	case s.pretends(PretendJSONByPrompt) && strings.Contains(strings.ToLower(prompt), "json"):
		a.content = "Sure! Here is the answer you asked for:\n" + `{"answer": 4}` + "\nLet me know if you need more."
	case len(req.Tools) > 0 && toolAnswered(req.Messages):
		// The conversation already holds the tool's result: answer in
		// words, as a model does, so an SDK's tool loop ends.
		a.content = "The tool answered; that settles it: the answer is 4."
	case len(req.Tools) > 0:
		t := req.Tools[0].Function
		args, _ := json.Marshal(Example(t.Parameters, s.cfg.BreakSchema))
		a.toolName, a.toolArgs = t.Name, string(args)
	case req.ResponseFormat != nil && req.ResponseFormat.Type == "json_schema":
		b, _ := json.Marshal(Example(req.ResponseFormat.JSONSchema.Schema, s.cfg.BreakSchema))
		a.content = string(b)
	case jsonMode:
		a.content = `{"answer": "ok", "carrier": "fake"}`
	default:
		a.content = "Hello from the fake carrier: the answer is 4."
	}
	if req.WebSearch != nil {
		if !s.pretends(PretendURLsInProse) {
			a.citations = []string{"https://example.com/source"}
		}
		a.content += " (source: https://example.com/source)"
	}
	if s.pretends(PretendEchoReasoning) && (req.ReasoningEffort != "" || req.Reasoning != nil) {
		a.reasoning = a.content
	} else if s.Has("reasoning") && (req.ReasoningEffort != "" || req.Reasoning != nil) {
		a.reasoned = 200
		if req.Reasoning != nil && req.Reasoning.MaxTokens > 0 && s.Has("reasoning_budget") {
			a.reasoned = min(a.reasoned, req.Reasoning.MaxTokens)
		}
		a.reasoning = strings.TrimSpace(strings.Repeat("think ", int(min(a.reasoned, 20))))
	}
	a.output = int64(len(strings.Fields(a.content))+len(a.toolArgs)/4) + a.reasoned + 1
	if s.cfg.Cache && len(prompt) >= 1024 {
		key := sha256.Sum256([]byte(prompt[:1024]))
		s.mu.Lock()
		if s.seen[key] {
			a.cached = a.prompt / 128 * 128
		}
		s.seen[key] = true
		s.mu.Unlock()
	}
	return a
}

// usage spells the token counts in the dialect.
func (s *Server) usage(a *answer) map[string]any {
	u := map[string]any{"prompt_tokens": a.prompt, "completion_tokens": a.output, "total_tokens": a.prompt + a.output}
	if a.reasoned > 0 {
		u["completion_tokens_details"] = map[string]any{"reasoning_tokens": a.reasoned}
	}
	if s.cfg.Cache {
		switch s.cfg.Dialect {
		case DialectDeepSeek:
			u["prompt_cache_hit_tokens"], u["prompt_cache_miss_tokens"] = a.cached, a.prompt-a.cached
		default:
			u["prompt_tokens_details"] = map[string]any{"cached_tokens": a.cached}
		}
	}
	return u
}

func (s *Server) reasoningField() string {
	if s.cfg.Dialect == DialectDeepSeek {
		return "reasoning_content"
	}
	return "reasoning"
}

func (s *Server) completion(req *request, a *answer) map[string]any {
	msg := map[string]any{"role": "assistant", "content": a.content}
	finish := "stop"
	if a.toolName != "" {
		msg["content"] = nil
		msg["tool_calls"] = []map[string]any{{"id": "call_1", "type": "function",
			"function": map[string]any{"name": a.toolName, "arguments": a.toolArgs}}}
		finish = "tool_calls"
	}
	if a.reasoning != "" {
		msg[s.reasoningField()] = a.reasoning
	}
	if len(a.citations) > 0 {
		msg["annotations"] = []map[string]any{{"type": "url_citation",
			"url_citation": map[string]any{"url": a.citations[0], "title": "Source", "start_index": 0, "end_index": 1}}}
	}
	return map[string]any{"id": "chatcmpl-fake", "object": "chat.completion", "created": fixedCreated, "model": req.Model,
		"choices": []map[string]any{{"index": 0, "message": msg, "finish_reason": finish, "logprobs": nil}},
		"usage":   s.usage(a)}
}

// stream sends the answer as server-sent events: the role, the reasoning,
// the content a word at a time (or the tool call in pieces), the finish,
// the usage where asked, and [DONE].
func (s *Server) stream(w http.ResponseWriter, r *http.Request, req *request, a *answer) {
	flusher, _ := w.(http.Flusher)
	w.Header().Set("Content-Type", "text/event-stream")
	w.Header().Set("Cache-Control", "no-cache")
	w.WriteHeader(http.StatusOK)
	created := fixedCreated
	send := func(delta map[string]any, finish any, usage map[string]any) bool {
		chunk := map[string]any{"id": "chatcmpl-fake", "object": "chat.completion.chunk", "created": created, "model": req.Model,
			"choices": []map[string]any{{"index": 0, "delta": delta, "finish_reason": finish, "logprobs": nil}}}
		if delta == nil {
			chunk["choices"] = []map[string]any{}
		}
		if usage != nil {
			chunk["usage"] = usage
		}
		b, _ := json.Marshal(chunk)
		if _, err := fmt.Fprintf(w, "data: %s\n\n", b); err != nil {
			return false
		}
		if flusher != nil {
			flusher.Flush()
		}
		return r.Context().Err() == nil
	}
	slow := s.slow()
	pace := time.Duration(float64(time.Second) / s.cfg.TokensPerSecond * slow)
	time.Sleep(time.Duration(float64(s.cfg.TTFT) * slow))
	s.mu.Lock()
	breakAfter := s.breakAfter
	s.mu.Unlock()
	sent := 0
	inner := send
	send = func(delta map[string]any, finish any, usage map[string]any) bool {
		if breakAfter > 0 && sent >= breakAfter {
			panic(http.ErrAbortHandler) // the connection is cut, as when a carrier's worker dies
		}
		sent++
		return inner(delta, finish, usage)
	}
	if !send(map[string]any{"role": "assistant", "content": ""}, nil, nil) {
		return
	}
	if a.reasoning != "" && !send(map[string]any{s.reasoningField(): a.reasoning}, nil, nil) {
		return
	}
	finish := "stop"
	if a.toolName != "" {
		finish = "tool_calls"
		half := len(a.toolArgs) / 2
		pieces := []map[string]any{
			{"index": 0, "id": "call_1", "type": "function", "function": map[string]any{"name": a.toolName, "arguments": ""}},
			{"index": 0, "function": map[string]any{"arguments": a.toolArgs[:half]}},
			{"index": 0, "function": map[string]any{"arguments": a.toolArgs[half:]}},
		}
		for _, p := range pieces {
			time.Sleep(pace)
			if !send(map[string]any{"tool_calls": []map[string]any{p}}, nil, nil) {
				return
			}
		}
	} else {
		words := strings.SplitAfter(a.content, " ")
		for _, word := range words {
			time.Sleep(pace)
			if !send(map[string]any{"content": word}, nil, nil) {
				return
			}
		}
	}
	wantUsage := req.StreamOptions != nil && req.StreamOptions.IncludeUsage && !s.pretends(PretendStreamWithoutUsage)
	if s.pretends(PretendStreamWithoutUsage) {
		send(map[string]any{}, finish, nil)
	} else if s.cfg.Dialect == DialectDeepSeek {
		// DeepSeek puts the usage on the finishing chunk, asked or not.
		send(map[string]any{}, finish, s.usage(a))
	} else {
		send(map[string]any{}, finish, nil)
		if wantUsage {
			send(nil, nil, s.usage(a))
		}
	}
	_, _ = fmt.Fprint(w, "data: [DONE]\n\n")
	if flusher != nil {
		flusher.Flush()
	}
}

// Example returns a value valid against a (simple) JSON schema: objects
// with their properties, strings (the first enum value), numbers, booleans
// and arrays. With broken set, it returns one that is not: a required
// property missing and a wrongly typed one.
func Example(schema map[string]any, broken bool) any {
	v := example(schema)
	if obj, ok := v.(map[string]any); ok && broken {
		for k := range obj {
			obj[k] = []any{"not", "the", "type"}
			break
		}
		if req, ok := schema["required"].([]any); ok && len(req) > 1 {
			delete(obj, fmt.Sprint(req[len(req)-1]))
		}
	}
	return v
}

func example(schema map[string]any) any {
	if enum, ok := schema["enum"].([]any); ok && len(enum) > 0 {
		return enum[0]
	}
	switch schema["type"] {
	case "object":
		out := map[string]any{}
		props, _ := schema["properties"].(map[string]any)
		for name, p := range props {
			if ps, ok := p.(map[string]any); ok {
				out[name] = example(ps)
			}
		}
		return out
	case "array":
		items, _ := schema["items"].(map[string]any)
		return []any{example(items)}
	case "integer":
		return 3
	case "number":
		return 2.5
	case "boolean":
		return true
	case "null":
		return nil
	}
	return "example"
}

// imageTokens and audioTokens are what an image or a recording costs a
// server that reads it.
const (
	imageTokens = 85
	audioTokens = 50
)

// wordOf names the word of a recording: the honest server recognises the
// project's spoken-digit recordings (it cannot hear other audio, and says so).
func wordOf(b64 string) string {
	raw, err := base64.StdEncoding.DecodeString(b64)
	if err != nil {
		return "nothing I can decode"
	}
	if w := spoken.Recognise(raw); w != "" {
		return w
	}
	return "something I cannot make out"
}

// colourOf reads an image data URL and names its average colour: the honest
// server really looks at the image it is sent.
func colourOf(dataURL string) string {
	_, b64, ok := strings.Cut(dataURL, ";base64,")
	if !ok {
		return "unreadable"
	}
	raw, err := base64.StdEncoding.DecodeString(b64)
	if err != nil {
		return "unreadable"
	}
	img, _, err := image.Decode(bytes.NewReader(raw))
	if err != nil {
		return "unreadable"
	}
	var r, g, b, n uint64
	bounds := img.Bounds()
	for y := bounds.Min.Y; y < bounds.Max.Y; y++ {
		for x := bounds.Min.X; x < bounds.Max.X; x++ {
			cr, cg, cb, _ := img.At(x, y).RGBA()
			r, g, b, n = r+uint64(cr>>8), g+uint64(cg>>8), b+uint64(cb>>8), n+1
		}
	}
	if n == 0 {
		return "unreadable"
	}
	return NameColour(uint8(r/n), uint8(g/n), uint8(b/n))
}

// NameColour names a colour by the nearest of a few plain ones.
func NameColour(r, g, b uint8) string {
	best, bestD := "", -1
	for _, c := range PlainColours {
		dr, dg, db := int(r)-int(c.R), int(g)-int(c.G), int(b)-int(c.B)
		if d := dr*dr + dg*dg + db*db; bestD < 0 || d < bestD {
			best, bestD = c.Name, d
		}
	}
	return best
}

// PlainColour is a colour with a name everyone agrees on.
type PlainColour struct {
	Name    string
	R, G, B uint8
}

// PlainColours are the colours the vision probe draws and a seeing server names.
var PlainColours = []PlainColour{
	{"red", 220, 30, 30}, {"green", 30, 180, 60}, {"blue", 30, 60, 220}, {"yellow", 240, 220, 40},
	{"black", 10, 10, 10}, {"white", 245, 245, 245},
}

// fixedCreated is the "created" time of every answer, so transcripts are
// reproducible.
const fixedCreated = 1767225600
