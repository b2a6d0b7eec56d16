package fakecarrier

import (
	"net/http"
	"net/http/httptest"
	"strings"
	"testing"
)

// TestToolsAreCalledOnlyUntilTheToolAnswers: with tools offered, the first
// turn calls one; once the conversation ends with the tool's result the
// answer is words, so an SDK's tool loop ends (it never did).
func TestToolsAreCalledOnlyUntilTheToolAnswers(t *testing.T) {
	srv := httptest.NewServer(New(Config{Models: []string{"m"}, Capabilities: []string{"tools"}}))
	defer srv.Close()
	tools := `"tools":[{"type":"function","function":{"name":"lookup","parameters":{"type":"object","properties":{"q":{"type":"string"}}}}}]`
	post := func(messages string) string {
		res, err := http.Post(srv.URL+"/v1/chat/completions", "application/json", strings.NewReader(`{"model":"m",`+tools+`,"messages":`+messages+`}`))
		if err != nil {
			t.Fatal(err)
		}
		defer res.Body.Close()
		var b strings.Builder
		buf := make([]byte, 4096)
		for {
			n, err := res.Body.Read(buf)
			b.Write(buf[:n])
			if err != nil {
				break
			}
		}
		return b.String()
	}
	first := post(`[{"role":"user","content":"look it up"}]`)
	if !strings.Contains(first, `"tool_calls"`) {
		t.Fatalf("the first turn should call the tool: %s", first)
	}
	second := post(`[{"role":"user","content":"look it up"},{"role":"assistant","content":null,"tool_calls":[{"id":"call_1","type":"function","function":{"name":"lookup","arguments":"{}"}}]},{"role":"tool","tool_call_id":"call_1","content":"42"}]`)
	if strings.Contains(second, `"tool_calls"`) || !strings.Contains(second, `"finish_reason":"stop"`) {
		t.Errorf("after the tool's result the answer should be words: %s", second)
	}
}
