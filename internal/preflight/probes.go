package preflight

import (
	"bytes"
	"context"
	"encoding/base64"
	"encoding/json"
	"fmt"
	"image"
	"image/png"
	"io"
	mrand "math/rand/v2"
	"net/http"
	"strconv"
	"strings"
	"time"
	"unicode"

	"github.com/openai/openai-go/v3"
	"github.com/openai/openai-go/v3/option"
	"github.com/openai/openai-go/v3/packages/respjson"
	"github.com/openai/openai-go/v3/shared"
	"github.com/santhosh-tekuri/jsonschema/v6"

	"github.com/airside/airside/internal/spoken"
)

type prober struct {
	ep     Endpoint
	client openai.Client
	now    func() time.Time
	// last is the latest exchange (see record), for the evidence of a failure.
	last *exchange
}

const onePrompt = "Reply with one short sentence: what is 2 + 2?"

func (p *prober) params(content string) openai.ChatCompletionNewParams {
	return openai.ChatCompletionNewParams{
		Model:               p.ep.Model,
		Messages:            []openai.ChatCompletionMessageParamUnion{openai.UserMessage(content)},
		MaxCompletionTokens: openai.Int(64),
	}
}

// complete sends a non-streaming request and returns the completion with
// the HTTP status.
func (p *prober) complete(ctx context.Context, params openai.ChatCompletionNewParams, opts ...option.RequestOption) (*openai.ChatCompletion, int, error) {
	var resp *http.Response
	c, err := p.client.Chat.Completions.New(ctx, params, append(opts, option.WithResponseInto(&resp))...)
	status := 0
	if resp != nil {
		status = resp.StatusCode
	}
	return c, status, err
}

func probeReachable(ctx context.Context, p *prober) Result {
	var resp *http.Response
	page, err := p.client.Models.List(ctx, option.WithResponseInto(&resp))
	if err != nil {
		return p.failure(err, "Listing models")
	}
	var names []string
	for _, m := range page.Data {
		if m.ID == p.ep.Model {
			return passed(resp.StatusCode, "lists "+m.ID)
		}
		names = append(names, m.ID)
	}
	return failed(resp.StatusCode, strings.Join(names, ", "), "The server does not list the upstream model %q; it lists: %s.", p.ep.Model, strings.Join(names, ", "))
}

func probeChat(ctx context.Context, p *prober) Result {
	c, status, err := p.complete(ctx, p.params(onePrompt))
	if err != nil {
		return p.failure(err, "Chat")
	}
	if len(c.Choices) == 0 || strings.TrimSpace(c.Choices[0].Message.Content) == "" {
		return failed(status, c.RawJSON(), "The answer has no text.")
	}
	if c.Usage.TotalTokens == 0 && c.Usage.PromptTokens == 0 {
		return failed(status, c.Choices[0].Message.Content, "The answer reports no token usage: the gateway bills from it.")
	}
	return passed(status, c.Choices[0].Message.Content)
}

// doneWatcher records whether a stream's body carried the [DONE] sentinel,
// which the client consumes without telling.
type doneWatcher struct {
	io.ReadCloser
	tail []byte
	done *bool
}

func (d *doneWatcher) Read(b []byte) (int, error) {
	n, err := d.ReadCloser.Read(b)
	d.tail = append(d.tail, b[:n]...)
	if bytes.Contains(d.tail, []byte("data: [DONE]")) {
		*d.done = true
	}
	if len(d.tail) > 64 {
		d.tail = d.tail[len(d.tail)-64:]
	}
	return n, err
}

// streamed is what a stream delivered.
type streamed struct {
	acc        openai.ChatCompletionAccumulator
	usage      openai.CompletionUsage
	status     int
	chunks     int
	done       bool
	reasoning  strings.Builder
	firstToken time.Duration
	total      time.Duration
}

func (p *prober) stream(ctx context.Context, params openai.ChatCompletionNewParams) (*streamed, error) {
	s := &streamed{}
	params.StreamOptions = openai.ChatCompletionStreamOptionsParam{IncludeUsage: openai.Bool(true)}
	watch := option.WithMiddleware(func(req *http.Request, next option.MiddlewareNext) (*http.Response, error) {
		resp, err := next(req)
		if resp != nil {
			s.status = resp.StatusCode
			resp.Body = &doneWatcher{ReadCloser: resp.Body, done: &s.done}
		}
		return resp, err
	})
	start := time.Now()
	st := p.client.Chat.Completions.NewStreaming(ctx, params, watch)
	defer st.Close()
	for st.Next() {
		chunk := st.Current()
		s.chunks++
		s.acc.AddChunk(chunk)
		if chunk.JSON.Usage.Valid() && chunk.Usage.TotalTokens > 0 {
			s.usage = chunk.Usage // the last chunk, or the finishing one (DeepSeek)
		}
		for _, c := range chunk.Choices {
			r := reasoningOf(c.Delta.JSON.ExtraFields)
			s.reasoning.WriteString(r)
			if s.firstToken == 0 && (c.Delta.Content != "" || r != "" || len(c.Delta.ToolCalls) > 0) {
				s.firstToken = time.Since(start)
			}
		}
	}
	s.total = time.Since(start)
	return s, st.Err()
}

func probeStreaming(ctx context.Context, p *prober) Result {
	s, err := p.stream(ctx, p.params(onePrompt))
	if err != nil {
		return p.failure(err, "Streaming")
	}
	text := ""
	if len(s.acc.Choices) > 0 {
		text = s.acc.Choices[0].Message.Content
	}
	switch {
	case s.chunks == 0 || text == "":
		return failed(s.status, text, "No content chunks arrived.")
	case !s.done:
		return failed(s.status, text, "The stream did not end with data: [DONE].")
	case s.usage.CompletionTokens == 0:
		return failed(s.status, text, "No usage came back in the stream (stream_options.include_usage).")
	}
	res := passed(s.status, text)
	res.TTFT = s.firstToken
	if gen := s.total - s.firstToken; gen > 0 {
		res.TokensPerSecond = float64(s.usage.CompletionTokens) / gen.Seconds()
	}
	return res
}

// weatherTool is the tool of the tools probe; its schema also checks the
// arguments.
var weatherTool = map[string]any{
	"type": "object",
	"properties": map[string]any{
		"city": map[string]any{"type": "string"},
		"unit": map[string]any{"type": "string", "enum": []any{"celsius", "fahrenheit"}},
	},
	"required":             []any{"city", "unit"},
	"additionalProperties": false,
}

func probeTools(ctx context.Context, p *prober) Result {
	params := p.params("What is the weather in Paris? Use the tool.")
	params.Tools = []openai.ChatCompletionToolUnionParam{openai.ChatCompletionFunctionTool(shared.FunctionDefinitionParam{
		Name: "get_weather", Description: openai.String("Current weather in a city"), Parameters: weatherTool})}
	s, err := p.stream(ctx, params)
	if err != nil {
		return p.failure(err, "Tool call")
	}
	if len(s.acc.Choices) == 0 || len(s.acc.Choices[0].Message.ToolCalls) == 0 {
		return failed(s.status, "", "The answer has no tool call.")
	}
	call := s.acc.Choices[0].Message.ToolCalls[0].Function
	excerpt := call.Name + "(" + call.Arguments + ")"
	if call.Name != "get_weather" {
		return failed(s.status, excerpt, "The tool call names %q, not the tool offered.", call.Name)
	}
	if msg := validate(weatherTool, call.Arguments); msg != "" {
		return failed(s.status, excerpt, "The tool call's arguments %s.", msg)
	}
	return passed(s.status, excerpt)
}

// validate checks JSON text against a schema, returning "" or what is wrong.
func validate(schema map[string]any, text string) string {
	inst, err := jsonschema.UnmarshalJSON(strings.NewReader(text))
	if err != nil {
		return "are not JSON"
	}
	c := jsonschema.NewCompiler()
	raw, _ := json.Marshal(schema)
	doc, _ := jsonschema.UnmarshalJSON(bytes.NewReader(raw))
	if err := c.AddResource("probe.json", doc); err != nil {
		return "could not be checked: " + err.Error()
	}
	sch, err := c.Compile("probe.json")
	if err != nil {
		return "could not be checked: " + err.Error()
	}
	if err := sch.Validate(inst); err != nil {
		return "do not match the schema: " + strings.ReplaceAll(err.Error(), "\n", " ")
	}
	return ""
}

// jsonModePrompt invites prose around the JSON: a model that only follows
// the prompt writes both, one held to JSON mode writes the JSON alone.
const jsonModePrompt = "First say in a sentence how you will work it out, then give the result as JSON with a key \"answer\": what is 2 + 2?"

func probeJSONOutput(ctx context.Context, p *prober) Result {
	params := p.params(jsonModePrompt)
	params.ResponseFormat = openai.ChatCompletionNewParamsResponseFormatUnion{OfJSONObject: &shared.ResponseFormatJSONObjectParam{}}
	c, status, err := p.complete(ctx, params)
	if err != nil {
		return p.failure(err, "JSON output")
	}
	text := firstText(c)
	var v map[string]any
	if json.Unmarshal([]byte(strings.TrimSpace(text)), &v) != nil {
		return failed(status, text, "The answer is not exactly one JSON object: the prompt invited prose around the JSON, and JSON mode (response_format json_object) must keep the answer to the JSON alone.")
	}
	return passed(status, text)
}

var answerSchema = map[string]any{
	"type": "object",
	"properties": map[string]any{
		"answer":     map[string]any{"type": "integer"},
		"confidence": map[string]any{"type": "string", "enum": []any{"low", "high"}},
	},
	"required":             []any{"answer", "confidence"},
	"additionalProperties": false,
}

func probeJSONSchema(ctx context.Context, p *prober) Result {
	params := p.params("What is 2 + 2? Answer with the number and your confidence.")
	params.ResponseFormat = openai.ChatCompletionNewParamsResponseFormatUnion{OfJSONSchema: &shared.ResponseFormatJSONSchemaParam{
		JSONSchema: shared.ResponseFormatJSONSchemaJSONSchemaParam{Name: "answer", Strict: openai.Bool(true), Schema: answerSchema}}}
	c, status, err := p.complete(ctx, params)
	if err != nil {
		return p.failure(err, "JSON schema")
	}
	text := firstText(c)
	if msg := validate(answerSchema, text); msg != "" {
		return failed(status, text, "The answer's JSON %s.", msg)
	}
	return passed(status, text)
}

func firstText(c *openai.ChatCompletion) string {
	if len(c.Choices) == 0 {
		return ""
	}
	return c.Choices[0].Message.Content
}

// visionColours are the colours the vision probe draws, one at random per
// run, so no fixed answer can pass.
var visionColours = []struct {
	name    string
	r, g, b uint8
}{{"red", 220, 30, 30}, {"green", 30, 180, 60}, {"blue", 30, 60, 220}, {"yellow", 240, 220, 40}}

// colourPNG is a 32x32 PNG of one colour.
func colourPNG(r, g, b uint8) []byte {
	img := image.NewRGBA(image.Rect(0, 0, 32, 32))
	for i := 0; i < len(img.Pix); i += 4 {
		img.Pix[i], img.Pix[i+1], img.Pix[i+2], img.Pix[i+3] = r, g, b, 255
	}
	var buf bytes.Buffer
	_ = png.Encode(&buf, img)
	return buf.Bytes()
}

const visionQuestion = "What colour is this image? Answer with one word."

// probeVision sends an image of a colour drawn at random and asks what
// colour it is; it passes only when the answer names it and the image cost
// prompt tokens beyond the same text alone (a server that drops the part
// answers blind, and counts no tokens for it).
func probeVision(ctx context.Context, p *prober) Result {
	c := visionColours[mrand.IntN(len(visionColours))]
	url := "data:image/png;base64," + base64.StdEncoding.EncodeToString(colourPNG(c.r, c.g, c.b))
	baseline, _, err := p.complete(ctx, p.params(visionQuestion))
	if err != nil {
		return p.failure(err, "Image input (the text alone)")
	}
	params := p.params("")
	params.Messages = []openai.ChatCompletionMessageParamUnion{openai.UserMessage([]openai.ChatCompletionContentPartUnionParam{
		openai.TextContentPart(visionQuestion), openai.ImageContentPart(openai.ChatCompletionContentPartImageImageURLParam{URL: url})})}
	seen, status, err := p.complete(ctx, params)
	if err != nil {
		return p.failure(err, "Image input")
	}
	text := firstText(seen)
	if !containsWord(text, c.name) {
		return failed(status, text, "The image was %s; the answer does not say so: the image was not looked at.", c.name)
	}
	if seen.Usage.PromptTokens <= baseline.Usage.PromptTokens {
		return failed(status, text, "The image cost no prompt tokens beyond the text alone (%d with it, %d without): it was not read.",
			seen.Usage.PromptTokens, baseline.Usage.PromptTokens)
	}
	return passed(status, fmt.Sprintf("%s (the image was %s; %d prompt tokens with it, %d without)", text, c.name,
		seen.Usage.PromptTokens, baseline.Usage.PromptTokens))
}

// containsWord reports whether text has word as a whole word, in any case.
func containsWord(text, word string) bool {
	for _, f := range strings.FieldsFunc(strings.ToLower(text), func(r rune) bool { return !unicode.IsLetter(r) }) {
		if f == word {
			return true
		}
	}
	return false
}

const audioQuestion = "Which number is spoken in this recording? Answer with the number."

// probeAudio sends a spoken digit drawn at random and asks which it is; it
// passes only when the answer names it (as a word or a digit) and the audio
// cost prompt tokens beyond the same text sent alone (a server that drops
// the part answers blind, and counts no tokens for it).
func probeAudio(ctx context.Context, p *prober) Result {
	word := spoken.Words[mrand.IntN(len(spoken.Words))]
	wav, err := spoken.WAV(word)
	if err != nil {
		return Result{State: Failed, Error: err.Error()}
	}
	baseline, _, err := p.complete(ctx, p.params(audioQuestion))
	if err != nil {
		return p.failure(err, "Audio input (the text alone)")
	}
	params := p.params("")
	params.Messages = []openai.ChatCompletionMessageParamUnion{openai.UserMessage([]openai.ChatCompletionContentPartUnionParam{
		openai.TextContentPart(audioQuestion), openai.InputAudioContentPart(openai.ChatCompletionContentPartInputAudioInputAudioParam{
			Data: base64.StdEncoding.EncodeToString(wav), Format: "wav"})})}
	heard, status, err := p.complete(ctx, params)
	if err != nil {
		return p.failure(err, "Audio input")
	}
	text := firstText(heard)
	if !containsWord(text, word) && !strings.Contains(text, spoken.Digits[word]) {
		return failed(status, text, "The recording said %q; the answer does not: the audio was not heard.", word)
	}
	if heard.Usage.PromptTokens <= baseline.Usage.PromptTokens {
		return failed(status, text, "The audio cost no prompt tokens beyond the text alone (%d with it, %d without): it was not heard.",
			heard.Usage.PromptTokens, baseline.Usage.PromptTokens)
	}
	return passed(status, fmt.Sprintf("%s (the recording said %q; %d prompt tokens with it, %d without)", text, word,
		heard.Usage.PromptTokens, baseline.Usage.PromptTokens))
}

// reasoningOf reads the reasoning a message or delta carries, in either
// spelling (reasoning_content, or reasoning).
func reasoningOf(extra map[string]respjson.Field) string {
	for _, key := range []string{"reasoning_content", "reasoning"} {
		if f, ok := extra[key]; ok {
			var s string
			if json.Unmarshal([]byte(f.Raw()), &s) == nil && s != "" {
				return s
			}
		}
	}
	return ""
}

func probeReasoning(ctx context.Context, p *prober) Result {
	params := p.params(onePrompt)
	params.ReasoningEffort = shared.ReasoningEffortLow
	params.MaxCompletionTokens = openai.Int(512)
	c, status, err := p.complete(ctx, params)
	if err != nil {
		return p.failure(err, "Reasoning")
	}
	text := ""
	if len(c.Choices) > 0 {
		text = reasoningOf(c.Choices[0].Message.JSON.ExtraFields)
	}
	tokens := c.Usage.CompletionTokensDetails.ReasoningTokens
	answer := firstText(c)
	if text == "" && tokens == 0 {
		return failed(status, answer, "No reasoning came back: neither reasoning_content, reasoning, nor reasoning tokens.")
	}
	if tokens == 0 && strings.TrimSpace(text) == strings.TrimSpace(answer) {
		return failed(status, text, "The reasoning text is the answer repeated, with no reasoning tokens: no reasoning was done.")
	}
	return passed(status, fmt.Sprintf("%d reasoning tokens; %s", tokens, text))
}

const reasoningBudget = 32

func probeReasoningBudget(ctx context.Context, p *prober) Result {
	params := p.params(onePrompt)
	params.MaxCompletionTokens = openai.Int(512)
	c, status, err := p.complete(ctx, params, option.WithJSONSet("reasoning", map[string]any{"max_tokens": reasoningBudget}))
	if err != nil {
		return p.failure(err, "Reasoning budget")
	}
	tokens := c.Usage.CompletionTokensDetails.ReasoningTokens
	excerpt := fmt.Sprintf("%d reasoning tokens for a budget of %d", tokens, reasoningBudget)
	switch {
	case tokens == 0:
		return failed(status, excerpt, "No reasoning tokens came back, so the budget cannot be checked.")
	case tokens > reasoningBudget:
		return failed(status, excerpt, "The budget was not honoured: %d reasoning tokens for a budget of %d.", tokens, reasoningBudget)
	}
	return passed(status, excerpt)
}

func probeWebSearch(ctx context.Context, p *prober) Result {
	params := p.params("What is the latest stable Go release? Cite your source.")
	params.WebSearchOptions = openai.ChatCompletionNewParamsWebSearchOptions{SearchContextSize: "low"}
	c, status, err := p.complete(ctx, params)
	if err != nil {
		return p.failure(err, "Web search")
	}
	if len(c.Choices) > 0 {
		for _, a := range c.Choices[0].Message.Annotations {
			if a.URLCitation.URL != "" {
				return passed(status, "cites "+a.URLCitation.URL)
			}
		}
	}
	// A URL in the text proves nothing: a model writes URLs it never
	// fetched. Only a structured citation shows a search was made.
	return failed(status, firstText(c), "The answer carries no url_citation annotation: a URL in the text is not evidence of a search.")
}

// cachedOf reads cached prompt tokens in either spelling.
func cachedOf(u openai.CompletionUsage) int64 {
	if u.PromptTokensDetails.CachedTokens > 0 {
		return u.PromptTokensDetails.CachedTokens
	}
	if f, ok := u.JSON.ExtraFields["prompt_cache_hit_tokens"]; ok { // an extra field is never "valid": read its raw text
		n, _ := strconv.ParseInt(f.Raw(), 10, 64)
		return n
	}
	return 0
}

// cachePrefix is long enough (about 2,000 tokens) for every common prefix
// cache, and the same on every run so a warm cache still counts.
var cachePrefix = strings.Repeat("Airside preflight cache probe: the same long prefix, sent twice. ", 120)

func probeCache(ctx context.Context, p *prober) Result {
	params := p.params(cachePrefix + "\nReply with OK.")
	params.MaxCompletionTokens = openai.Int(8)
	var last *openai.ChatCompletion
	var status int
	for range 2 {
		c, st, err := p.complete(ctx, params)
		if err != nil {
			return p.failure(err, "Cached input")
		}
		last, status = c, st
	}
	cached := cachedOf(last.Usage)
	excerpt := fmt.Sprintf("second request: %d prompt tokens, %d cached", last.Usage.PromptTokens, cached)
	if cached == 0 {
		r := failed(status, excerpt, "The repeated prefix reported no cached tokens: the endpoint never reports a cache hit.")
		return r
	}
	r := passed(status, excerpt)
	r.CachedTokens = cached
	return r
}
