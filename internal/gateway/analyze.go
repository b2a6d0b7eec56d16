package gateway

import (
	"bytes"
	"encoding/json"
	"errors"
	"fmt"
	"io"
	"net/http"
	"reflect"
	"strings"

	jsonv2 "github.com/go-json-experiment/json"
	"github.com/go-json-experiment/json/jsontext"

	"github.com/airside/airside/internal/election"
)

// Analysis is what the gateway reads from a chat request before electing.
type Analysis struct {
	// Model is the model asked for; Pin is "carrier/model" when the request
	// named one listing (then Model is the part after the slash).
	Model, Pin   string
	Stream       bool
	IncludeUsage bool // the caller asked for usage in the stream
	PromptTokens int64
	Requires     election.Capabilities
	Mode         election.Mode
	Workload     election.Workload
	SessionID    string
	NoFallback   bool
	// MaxTokens is the output asked for (max_completion_tokens, else
	// max_tokens; 0 when neither), Images the prompt's image parts: the
	// context check and the per-image fee read them (election.md sec. 7).
	MaxTokens, Images int64
	// Provider is the request's provider object as sent (nil: none); the
	// project's defaults are merged under it when the request is planned.
	Provider *election.ProviderInput
	// ModeGiven says the request named its routing mode (routing or
	// provider.sort): a project's default sort then does not apply.
	ModeGiven bool
	// members are the body's top-level members as they came, from which
	// each try's carrier body is put together (upstreamBody).
	members []bodyMember
}

// chatBody is the part of an OpenAI chat request the gateway reads; the
// rest is passed on untouched. Raw members are jsontext.Value, which the
// decoder fills without the legacy Unmarshaler path json.RawMessage takes.
type chatBody struct {
	Model         string `json:"model"`
	Stream        bool   `json:"stream"`
	StreamOptions *struct {
		IncludeUsage bool `json:"include_usage"`
	} `json:"stream_options"`
	Messages []struct {
		Content jsontext.Value `json:"content"`
	} `json:"messages"`
	Tools          []jsontext.Value `json:"tools"`
	Functions      []jsontext.Value `json:"functions"`
	ResponseFormat *struct {
		Type string `json:"type"`
	} `json:"response_format"`
	ReasoningEffort *string `json:"reasoning_effort"`
	// Reasoning is OpenRouter's spelling; Thinking is Anthropic's.
	Reasoning *struct {
		Effort    *string `json:"effort"`
		MaxTokens *int64  `json:"max_tokens"`
	} `json:"reasoning"`
	Thinking *struct {
		BudgetTokens *int64 `json:"budget_tokens"`
	} `json:"thinking"`
	WebSearchOptions jsontext.Value `json:"web_search_options"`
	// Routing is Airside's routing mode; Provider.Sort is OpenRouter's.
	Routing *string `json:"routing"`
	// Provider is OpenRouter's provider object (election.md sec. 7).
	Provider            *election.ProviderInput `json:"provider"`
	MaxTokens           *int64                  `json:"max_tokens"`
	MaxCompletionTokens *int64                  `json:"max_completion_tokens"`
}

// contentPart is one part of a message's content array.
type contentPart struct {
	Type string `json:"type"`
	Text string `json:"text"`
}

// Token estimates: about four characters a token for text (OpenAI's rule of
// thumb), and a flat figure per image or audio part, which a carrier turns
// into tokens its own way.
const (
	charsPerToken     = 4
	tokensPerMessage  = 4
	tokensPerMediaArg = 1000
)

// CodingClients are the User-Agent markers of coding agents: a request from
// one is the coding workload (a session id alone is not). Matched
// case-insensitively anywhere in the User-Agent.
var CodingClients = []string{
	"claude-cli", "claude-code", "codex", "cursor", "aider", "cline", "roo-code", "roocode", "kilo-code",
	"continue", "opencode", "windsurf", "zed", "copilot", "goose", "openhands",
}

// chatFields are the top-level names chatBody reads.
var chatFields = func() []string {
	var names []string
	t := reflect.TypeFor[chatBody]()
	for i := range t.NumField() {
		name, _, _ := strings.Cut(t.Field(i).Tag.Get("json"), ",")
		names = append(names, name)
	}
	return names
}()

// Analyze reads a chat request's body and headers. Names are matched
// exactly, as the metrics API matches them: encoding/json would read
// "Model" as model (the last of two spellings winning), so that
// {"model":"kimi-k2.5","Model":"glm-5"} was elected as glm-5 while the
// carrier was sent both. A name twice, or a spelling of one of the names
// the gateway reads in another case, is refused.
func Analyze(body []byte, header http.Header) (Analysis, error) {
	members, err := splitBody(body)
	if err != nil {
		return Analysis{}, err
	}
	var b chatBody
	if err := jsonv2.Unmarshal(body, &b); err != nil {
		return Analysis{}, plainDecodeError(err)
	}
	if b.Model == "" {
		return Analysis{}, fmt.Errorf("model is required")
	}
	a := Analysis{members: members, Model: b.Model, Stream: b.Stream, IncludeUsage: b.StreamOptions != nil && b.StreamOptions.IncludeUsage,
		Mode: election.ModeAuto, Workload: WorkloadOf(header.Get("User-Agent")), SessionID: header.Get("X-Session-Id")}
	if carrier, model, ok := strings.Cut(b.Model, "/"); ok && carrier != "" && model != "" {
		a.Pin, a.Model = b.Model, model
	}
	mode := b.Routing
	if mode == nil && b.Provider != nil {
		mode = b.Provider.Sort
	}
	a.ModeGiven = mode != nil
	if mode != nil {
		m, ok := election.ParseMode(*mode)
		if !ok {
			return Analysis{}, fmt.Errorf("routing %q: say auto, price, throughput or latency", *mode)
		}
		a.Mode = m
	}
	a.NoFallback = strings.EqualFold(header.Get("X-No-Fallback"), "true") ||
		(b.Provider != nil && b.Provider.AllowFallbacks != nil && !*b.Provider.AllowFallbacks)
	if b.Provider != nil {
		// Checked now, so a bad preference is a 400 naming it.
		if _, _, err := b.Provider.Provider("provider"); err != nil {
			return Analysis{}, err
		}
		a.Provider = b.Provider
	}
	for _, n := range []*int64{b.MaxCompletionTokens, b.MaxTokens} {
		if n != nil {
			if *n < 1 {
				return Analysis{}, fmt.Errorf("max_tokens must be at least 1")
			}
			a.MaxTokens = *n
			break
		}
	}

	var requires []election.Capability
	if len(b.Tools) > 0 || len(b.Functions) > 0 {
		requires = append(requires, election.CapTools)
	}
	chars := 0
	for _, t := range b.Tools {
		chars += len(t)
	}
	for _, m := range b.Messages {
		a.PromptTokens += tokensPerMessage
		if len(m.Content) > 0 && m.Content[0] == '"' {
			// A string: its length unescaped, without a copy kept.
			var buf [512]byte
			if text, err := jsontext.AppendUnquote(buf[:0], m.Content); err == nil {
				chars += len(text)
				continue
			}
		}
		var parts []contentPart
		if json.Unmarshal(m.Content, &parts) != nil {
			chars += len(m.Content)
			continue
		}
		for _, p := range parts {
			switch p.Type {
			case "image_url", "image":
				requires = append(requires, election.CapVision)
				a.PromptTokens += tokensPerMediaArg
				a.Images++
			case "input_audio", "audio":
				requires = append(requires, election.CapAudioInput)
				a.PromptTokens += tokensPerMediaArg
			default:
				chars += len(p.Text)
			}
		}
	}
	a.PromptTokens += int64(chars / charsPerToken)
	if rf := b.ResponseFormat; rf != nil {
		switch rf.Type {
		case "json_object":
			requires = append(requires, election.CapJSONOutput)
		case "json_schema":
			requires = append(requires, election.CapJSONSchema)
		}
	}
	if b.ReasoningEffort != nil || b.Reasoning != nil || b.Thinking != nil {
		requires = append(requires, election.CapReasoning)
	}
	if (b.Reasoning != nil && b.Reasoning.MaxTokens != nil) || (b.Thinking != nil && b.Thinking.BudgetTokens != nil) {
		requires = append(requires, election.CapReasoningBudget)
	}
	if len(b.WebSearchOptions) > 0 && string(b.WebSearchOptions) != "null" {
		requires = append(requires, election.CapWebSearch)
	}
	a.Requires = election.CapabilitySet(requires...)
	return a, nil
}

// WorkloadOf is the workload a User-Agent says: coding for a recognised
// coding client, general otherwise.
func WorkloadOf(userAgent string) election.Workload {
	ua := strings.ToLower(userAgent)
	for _, c := range CodingClients {
		if strings.Contains(ua, c) {
			return election.WorkloadCoding
		}
	}
	return election.WorkloadGeneral
}

// upstreamBody is the request as the carrier gets it, from the body's
// members: its own model name, usage asked for in a stream (the gateway
// measures it; it drops the usage chunk again when the caller did not ask),
// and the gateway's own directives (routing, provider) removed. Every other
// member passes as it came, in its order.
func upstreamBody(members []bodyMember, upstreamModel string, stream bool) []byte {
	size := len(upstreamModel) + 64
	for _, m := range members {
		size += len(m.Name) + len(m.Value) + 4
	}
	out := make([]byte, 1, size)
	out[0] = '{'
	add := func(name string, value []byte) {
		if len(out) > 1 {
			out = append(out, ',')
		}
		out, _ = jsontext.AppendQuote(out, name)
		out = append(append(out, ':'), value...)
	}
	model, _ := jsontext.AppendQuote(nil, upstreamModel)
	sawModel, sawOptions := false, false
	for _, m := range members {
		switch {
		case m.Name == "model":
			add(m.Name, model)
			sawModel = true
		case m.Name == "routing" || m.Name == "provider": // the gateway's own
		case m.Name == "stream_options" && stream:
			add(m.Name, withIncludeUsage(m.Value))
			sawOptions = true
		default:
			add(m.Name, m.Value)
		}
	}
	if !sawModel {
		add("model", model)
	}
	if stream && !sawOptions {
		add("stream_options", []byte(`{"include_usage":true}`))
	}
	return append(out, '}')
}

// withIncludeUsage is a request's stream_options with include_usage set
// (the gateway measures usage; it drops the chunk again when the caller
// did not ask), its other members kept.
func withIncludeUsage(options []byte) []byte {
	if string(options) == `{"include_usage":true}` {
		return options // as SDKs send it
	}
	opts := map[string]json.RawMessage{}
	if json.Unmarshal(options, &opts) != nil || opts == nil {
		opts = map[string]json.RawMessage{}
	}
	opts["include_usage"] = json.RawMessage("true")
	raw, _ := json.Marshal(opts)
	return raw
}

// bodyMember is one top-level member of a chat body: its name, and its
// value as it came (a slice of the body).
type bodyMember struct {
	Name  string
	Value []byte
}

// splitBody reads a chat body's top-level members in one pass, refusing a
// body that spells a field the gateway reads in another case.
func splitBody(body []byte) ([]bodyMember, error) {
	// A name twice and invalid UTF-8 are left to Analyze's decode, which
	// refuses them anywhere in the body.
	dec := jsontext.NewDecoder(bytes.NewReader(body), jsontext.AllowDuplicateNames(true), jsontext.AllowInvalidUTF8(true))
	if tok, err := dec.ReadToken(); err != nil || tok.Kind() != '{' {
		return nil, errors.New("the body is not a JSON object")
	}
	members := make([]bodyMember, 0, 8)
	for dec.PeekKind() == '"' {
		tok, err := dec.ReadToken()
		if err != nil {
			return nil, plainDecodeError(err)
		}
		name := tok.String()
		for _, known := range chatFields {
			if name != known && strings.EqualFold(name, known) {
				return nil, fmt.Errorf("the body names %q: field names are case-sensitive; send %q once", name, known)
			}
		}
		value, err := dec.ReadValue()
		if err != nil {
			return nil, plainDecodeError(err)
		}
		// The decoder's slice lasts until its next read; the body's lasts.
		end := int(dec.InputOffset())
		members = append(members, bodyMember{Name: name, Value: body[end-len(value) : end]})
	}
	if tok, err := dec.ReadToken(); err != nil || tok.Kind() != '}' {
		return nil, errors.New("the body is not a JSON object")
	}
	if _, err := dec.ReadToken(); !errors.Is(err, io.EOF) {
		return nil, errors.New("the body is not valid JSON")
	}
	return members, nil
}

// plainDecodeError says what is wrong with a body in the caller's terms
// (which field, what was expected), not in Go's.
func plainDecodeError(err error) error {
	var syn *jsontext.SyntacticError
	if errors.As(err, &syn) {
		if errors.Is(syn.Err, jsontext.ErrDuplicateName) {
			return fmt.Errorf("the body names %s twice; send it once", pointerName(string(syn.JSONPointer)))
		}
		return errors.New("the body is not valid JSON")
	}
	var sem *jsonv2.SemanticError
	if errors.As(err, &sem) && sem.JSONPointer != "" {
		want := "another type"
		if t := sem.GoType; t != nil {
			for t.Kind() == reflect.Pointer {
				t = t.Elem()
			}
			switch t.Kind() {
			case reflect.Bool:
				want = "true or false"
			case reflect.String:
				want = "a string"
			case reflect.Int, reflect.Int64:
				want = "a whole number"
			case reflect.Slice:
				want = "an array"
			case reflect.Struct, reflect.Map:
				want = "an object"
			}
		}
		return fmt.Errorf("%s must be %s", pointerName(string(sem.JSONPointer)), want)
	}
	return errors.New("the body is not a chat request")
}

// pointerName turns a JSON pointer ("/messages/0/content") into the
// dotted name a caller knows ("messages[0].content").
func pointerName(ptr string) string {
	var b strings.Builder
	for i, seg := range strings.Split(strings.TrimPrefix(ptr, "/"), "/") {
		seg = strings.NewReplacer("~1", "/", "~0", "~").Replace(seg)
		if seg != "" && strings.Trim(seg, "0123456789") == "" {
			fmt.Fprintf(&b, "[%s]", seg)
			continue
		}
		if i > 0 {
			b.WriteByte('.')
		}
		b.WriteString(seg)
	}
	return b.String()
}
