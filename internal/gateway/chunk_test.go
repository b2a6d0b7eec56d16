package gateway

import (
	"reflect"
	"strings"
	"testing"

	jsonv2 "github.com/go-json-experiment/json"
	"github.com/go-json-experiment/json/jsontext"
)

// decodedChunk is a stream chunk decoded into structs, as the relay read
// chunks before chunkReader: the test's oracle.
type decodedChunk struct {
	Choices []struct {
		FinishReason *string `json:"finish_reason"`
		Delta        struct {
			Content          string `json:"content"`
			Reasoning        string `json:"reasoning"`
			ReasoningContent string `json:"reasoning_content"`
			ToolCalls        []struct {
				Index    int `json:"index"`
				Function struct {
					Arguments string `json:"arguments"`
				} `json:"function"`
			} `json:"tool_calls"`
		} `json:"delta"`
	} `json:"choices"`
	Usage    *usageJSON     `json:"usage"`
	Provider jsontext.Value `json:"provider"`
}

func (d decodedChunk) facts() chunkFacts {
	f := chunkFacts{Token: d.Usage != nil, NoChoices: len(d.Choices) == 0, Usage: d.Usage, Provider: d.Provider != nil}
	for _, ch := range d.Choices {
		if ch.Delta.Content != "" || ch.Delta.Reasoning != "" || ch.Delta.ReasoningContent != "" ||
			len(ch.Delta.ToolCalls) > 0 || ch.FinishReason != nil {
			f.Token = true
		}
		for _, tc := range ch.Delta.ToolCalls {
			f.ToolCalls = append(f.ToolCalls, toolFragment{Index: tc.Index, Arguments: tc.Function.Arguments})
		}
	}
	return f
}

// TestTheChunkReaderReadsWhatADecodeReads holds the relay's token-by-token
// chunk reader to a full decode of the same chunk: the same token, tool-call
// fragments, usage and provider, and "not a chat chunk" for the same bodies.
func TestTheChunkReaderReadsWhatADecodeReads(t *testing.T) {
	chunks := []struct{ name, data string }{
		{"role chunk", `{"id":"c","object":"chat.completion.chunk","choices":[{"index":0,"delta":{"role":"assistant","content":""},"finish_reason":null}]}`},
		{"content", `{"choices":[{"index":0,"delta":{"content":"Hel\"lo\n"},"finish_reason":null,"logprobs":null}],"created":1,"model":"m"}`},
		{"reasoning", `{"choices":[{"delta":{"reasoning":"thinking"}}]}`},
		{"reasoning_content", `{"choices":[{"delta":{"reasoning_content":"thinking"}}]}`},
		{"finish reason only", `{"choices":[{"delta":{},"finish_reason":"stop"}]}`},
		{"empty finish reason", `{"choices":[{"delta":{},"finish_reason":""}]}`},
		{"tool call opener", `{"choices":[{"delta":{"tool_calls":[{"index":0,"id":"call_1","type":"function","function":{"name":"f","arguments":""}}]}}]}`},
		{"tool call fragments", `{"choices":[{"delta":{"tool_calls":[{"index":1,"function":{"arguments":"{\"a\":"}},{"index":2,"function":{"arguments":"1}"}}]}}]}`},
		{"tool call null entry", `{"choices":[{"delta":{"tool_calls":[null]}}]}`},
		{"two choices", `{"choices":[{"delta":{"content":""}},{"delta":{"content":"b"}}]}`},
		{"usage chunk", `{"choices":[],"usage":{"prompt_tokens":10,"completion_tokens":3,"prompt_tokens_details":{"cached_tokens":4}}}`},
		{"usage null", `{"choices":[{"delta":{"content":""}}],"usage":null}`},
		{"DeepSeek usage on content", `{"choices":[{"delta":{"content":"x"}}],"usage":{"prompt_tokens":10,"completion_tokens":3,"prompt_cache_hit_tokens":6}}`},
		{"Anthropic-style usage", `{"usage":{"prompt_tokens":10,"cache_read_input_tokens":5,"cache_creation_input_tokens":2}}`},
		{"provider named", `{"provider":"orbit","choices":[{"delta":{"content":"x"}}]}`},
		{"provider null", `{"provider":null,"choices":[{"delta":{"content":"x"}}]}`},
		{"names in another case", `{"Choices":[{"Delta":{"Content":"x","TOOL_CALLS":[{"Index":3,"Function":{"Arguments":"{}"}}]},"Finish_Reason":null}],"USAGE":{"prompt_tokens":1}}`},
		{"an escaped name", `{"\u0063hoices":[{"delta":{"content":"x"}}]}`},
		{"a name twice", `{"choices":[{"delta":{"content":""}}],"choices":[{"delta":{"content":"x"}}]}`},
		{"nulls everywhere", `{"choices":null,"usage":null}`},
		{"choice null", `{"choices":[null]}`},
		{"delta null", `{"choices":[{"delta":null,"finish_reason":null}]}`},
		{"unknown members", `{"x":{"choices":[{"delta":{"content":"hidden"}}]},"choices":[{"delta":{"content":""},"extra":[1,2,{"a":null}]}]}`},
		{"null", `null`},
		{"empty object", `{}`},
		// Not chat chunks: passed on as they came.
		{"content an array", `{"choices":[{"delta":{"content":[{"type":"text","text":"x"}]}}]}`},
		{"choices an object", `{"choices":{"delta":{"content":"x"}}}`},
		{"index a string", `{"choices":[{"delta":{"tool_calls":[{"index":"0"}]}}]}`},
		{"index a fraction", `{"choices":[{"delta":{"tool_calls":[{"index":1.5}]}}]}`},
		{"finish reason a number", `{"choices":[{"finish_reason":1}]}`},
		{"usage a string", `{"usage":"lots"}`},
		{"usage with a bad count", `{"usage":{"prompt_tokens":"ten"}}`},
		{"an array", `[1,2]`},
		{"a string", `"hello"`},
		{"trailing data", `{"choices":[]} {"choices":[]}`},
		{"cut short", `{"choices":[{"delta":{"content":"x"`},
		{"not JSON", `keep-alive`},
		// For the byte scan's checks of syntax.
		{"white space everywhere", " { \"choices\" : [ { \"delta\" : { \"content\" : \"x\" } , \"finish_reason\" : null } ] } \n"},
		{"numbers of every form", `{"a":[0,-0,1.5,-2e10,3E+2,4e-3,123456789012345678901234567890],"choices":[{"delta":{"content":"x"}}]}`},
		{"literals", `{"a":[true,false,null],"choices":[{"delta":{"content":""}}]}`},
		{"escapes in content", `{"choices":[{"delta":{"content":"\"\\\/\b\f\n\r\t"}}]}`},
		{"a unicode escape in content", `{"choices":[{"delta":{"content":"caf\u00e9"}}]}`},
		{"a lone surrogate in content", `{"choices":[{"delta":{"content":"\ud800"}}]}`},
		{"deep nesting elsewhere", `{"x":` + strings.Repeat("[", 40) + strings.Repeat("]", 40) + `,"choices":[{"delta":{"content":"x"}}]}`},
		{"a leading zero", `{"a":01,"choices":[]}`},
		{"a bad escape", `{"choices":[{"delta":{"content":"\x"}}]}`},
		{"a raw control character", "{\"choices\":[{\"delta\":{\"content\":\"a\u0001b\"}}]}"},
		{"a trailing comma", `{"choices":[{"delta":{"content":"x"}},]}`},
		{"a missing colon", `{"choices" [{"delta":{"content":"x"}}]}`},
		{"a bare word", `{"a":nope,"choices":[]}`},
		{"a dangling minus", `{"a":-,"choices":[]}`},
		{"a fraction without digits", `{"a":1.,"choices":[]}`},
		{"tool_calls null", `{"choices":[{"delta":{"content":"x","tool_calls":null}}]}`},
	}
	r := newChunkReader()
	var got chunkFacts
	for _, c := range chunks {
		t.Run(c.name, func(t *testing.T) {
			var d decodedChunk
			wantErr := jsonv2.Unmarshal([]byte(c.data), &d, lenientChunk) != nil
			err := r.read([]byte(c.data), &got)
			if (err != nil) != wantErr {
				t.Fatalf("read error %v; a decode's error: %v", err, wantErr)
			}
			if wantErr {
				if readCommonChunk([]byte(c.data), &got) {
					t.Errorf("the byte scan accepted what a decode refuses")
				}
				return
			}
			want := d.facts()
			if len(got.ToolCalls) == 0 && len(want.ToolCalls) == 0 {
				got.ToolCalls, want.ToolCalls = nil, nil
			}
			if !reflect.DeepEqual(got, want) {
				t.Errorf("read %+v (usage %+v), a decode reads %+v (usage %+v)", got, got.Usage, want, want.Usage)
			}
			// The byte scan alone: what it accepts, it reads as the decode.
			if readCommonChunk([]byte(c.data), &got) {
				got.ToolCalls = nil
				if !reflect.DeepEqual(got, want) {
					t.Errorf("the byte scan read %+v, a decode reads %+v", got, want)
				}
			}
		})
	}
}

// FuzzChunkReader holds the relay's chunk reader (the byte scan, then the
// decoder's scan) to a full decode of the same bytes, whatever they are.
func FuzzChunkReader(f *testing.F) {
	for _, seed := range []string{
		`{"id":"c","choices":[{"index":0,"delta":{"role":"assistant","content":""},"finish_reason":null}]}`,
		`{"choices":[{"delta":{"content":"a\"b\u00e9"},"finish_reason":"stop"}],"usage":null}`,
		`{"choices":[{"delta":{"tool_calls":[{"index":1,"function":{"arguments":"{\"a\":1}"}}]}}]}`,
		`{"choices":[],"usage":{"prompt_tokens":10,"completion_tokens":3,"prompt_cache_hit_tokens":6}}`,
		`{"Choices":[{"DELTA":{"Reasoning_Content":"x"}}],"provider":"p"}`,
		`{"a":[1,-2.5e3,true,false,null,{"b":[]}],"choices":null}`,
		`[1]`, `null`, `{"choices":[{"delta":{"content":1}}]}`,
	} {
		f.Add([]byte(seed))
	}
	r := newChunkReader()
	f.Fuzz(func(t *testing.T, data []byte) {
		var d decodedChunk
		wantErr := jsonv2.Unmarshal(data, &d, lenientChunk) != nil
		var got chunkFacts
		err := r.read(data, &got)
		if (err != nil) != wantErr {
			t.Fatalf("%q: read error %v; a decode's error: %v", data, err, wantErr)
		}
		if wantErr {
			return
		}
		want := d.facts()
		if len(got.ToolCalls) == 0 && len(want.ToolCalls) == 0 {
			got.ToolCalls, want.ToolCalls = nil, nil
		}
		if !reflect.DeepEqual(got, want) {
			t.Fatalf("%q: read %+v, a decode reads %+v", data, got, want)
		}
	})
}

// TestTheByteScanTakesTheCommonChunks: the chunks most of a stream is made
// of are read by the byte scan, not left to the decoder.
func TestTheByteScanTakesTheCommonChunks(t *testing.T) {
	for _, data := range []string{
		`{"id":"c","object":"chat.completion.chunk","created":1,"model":"m","choices":[{"index":0,"delta":{"role":"assistant","content":""},"finish_reason":null,"logprobs":null}]}`,
		`{"id":"c","object":"chat.completion.chunk","created":1,"model":"m","choices":[{"index":0,"delta":{"content":"Hello, \"world\"\n"},"finish_reason":null}]}`,
		`{"id":"c","choices":[{"index":0,"delta":{"reasoning_content":"hm"},"finish_reason":null}],"usage":null}`,
		`{"id":"c","choices":[{"index":0,"delta":{},"finish_reason":"stop"}],"system_fingerprint":"fp_1"}`,
	} {
		var f chunkFacts
		if !readCommonChunk([]byte(data), &f) {
			t.Errorf("the byte scan left %s to the decoder", data)
		}
	}
}

func TestAppendWithProviderPutsTheProviderFirst(t *testing.T) {
	for _, c := range []struct{ in, want string }{
		{`{"id":"x"}`, `{"provider":"orbit","id":"x"}`},
		{` { "id":"x"}`, `{"provider":"orbit", "id":"x"}`},
		{`{}`, `{"provider":"orbit"}`},
		{`{ }`, `{"provider":"orbit" }`},
		{`[1]`, `[1]`},
		{``, ``},
	} {
		if got := string(appendWithProvider([]byte("data: "), []byte(c.in), []byte(`"orbit"`))); got != "data: "+c.want {
			t.Errorf("appendWithProvider(%q) = %q, want %q", c.in, got, "data: "+c.want)
		}
	}
}

// BenchmarkChunkReader compares the relay's chunk reader with a decode of
// the same content chunk into structs (what the relay did before).
func BenchmarkChunkReader(b *testing.B) {
	data := []byte(`{"id":"chatcmpl-fake","object":"chat.completion.chunk","created":1700000000,"model":"up-m","choices":[{"index":0,"delta":{"content":"tok "},"finish_reason":null,"logprobs":null}]}`)
	b.Run("reader", func(b *testing.B) {
		r := newChunkReader()
		var f chunkFacts
		for b.Loop() {
			if err := r.read(data, &f); err != nil || !f.Token {
				b.Fatal(err)
			}
		}
	})
	toolCall := []byte(`{"id":"chatcmpl-fake","choices":[{"index":0,"delta":{"tool_calls":[{"index":0,"function":{"arguments":"{\"city\":"}}]},"finish_reason":null}]}`)
	b.Run("reader, a tool call", func(b *testing.B) {
		r := newChunkReader()
		var f chunkFacts
		for b.Loop() {
			if err := r.read(toolCall, &f); err != nil || len(f.ToolCalls) != 1 {
				b.Fatal(err)
			}
		}
	})
	b.Run("decode", func(b *testing.B) {
		for b.Loop() {
			var d decodedChunk
			if err := jsonv2.Unmarshal(data, &d, lenientChunk); err != nil {
				b.Fatal(err)
			}
		}
	})
}
