package carrierclient

import (
	"context"
	"net/http"
	"net/http/httptest"
	"strings"
	"sync"
	"testing"

	"github.com/openai/openai-go/v3"
)

// TestTheOperatorsOpenAIEnvironmentReachesNoCarrier sets every variable
// openai-go's defaults read and checks what a carrier receives: its own key
// at its own address, and none of the operator's organisation, project or
// custom headers. With openai.NewClient the carrier saw all three.
func TestTheOperatorsOpenAIEnvironmentReachesNoCarrier(t *testing.T) {
	elsewhere := httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		t.Errorf("a request went to OPENAI_BASE_URL: %s %s", r.Method, r.URL)
	}))
	defer elsewhere.Close()
	t.Setenv("OPENAI_BASE_URL", elsewhere.URL+"/v1")
	t.Setenv("OPENAI_API_KEY", "sk-operator-own-key")
	t.Setenv("OPENAI_ADMIN_KEY", "sk-admin-operator")
	t.Setenv("OPENAI_ORG_ID", "org-operator")
	t.Setenv("OPENAI_PROJECT_ID", "proj-operator")
	t.Setenv("OPENAI_WEBHOOK_SECRET", "whsec-operator")
	t.Setenv("OPENAI_CUSTOM_HEADERS", "X-Operator-Secret: hunter2\nProxy-Authorization: Basic b3A6c2VjcmV0")

	var mu sync.Mutex
	var seen []http.Header
	carrier := httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		mu.Lock()
		seen = append(seen, r.Header.Clone())
		mu.Unlock()
		w.Header().Set("Content-Type", "application/json")
		switch {
		case strings.HasSuffix(r.URL.Path, "/models"):
			_, _ = w.Write([]byte(`{"object":"list","data":[{"id":"m","object":"model","created":0,"owned_by":"c"}]}`))
		default:
			_, _ = w.Write([]byte(`{"id":"x","object":"chat.completion","created":0,"model":"m","choices":[{"index":0,"finish_reason":"stop","message":{"role":"assistant","content":"hi"}}]}`))
		}
	}))
	defer carrier.Close()

	c := New(carrier.URL+"/v1", "sk-carrier-key", nil)
	ctx := context.Background()
	if _, err := c.Chat.Completions.New(ctx, openai.ChatCompletionNewParams{Model: "m",
		Messages: []openai.ChatCompletionMessageParamUnion{openai.UserMessage("hi")}}); err != nil {
		t.Fatalf("chat: %v", err)
	}
	if _, err := c.Models.List(ctx); err != nil {
		t.Fatalf("models: %v", err)
	}
	var raw *http.Response
	if err := c.Post(ctx, "chat/completions", nil, &raw); err != nil {
		t.Fatalf("raw post: %v", err)
	}
	_ = raw.Body.Close()

	mu.Lock()
	defer mu.Unlock()
	if len(seen) != 3 {
		t.Fatalf("the carrier saw %d requests, want 3", len(seen))
	}
	for i, h := range seen {
		if got := h.Get("Authorization"); got != "Bearer sk-carrier-key" {
			t.Errorf("request %d: Authorization %q, want the carrier's own key", i, got)
		}
		for _, name := range []string{"OpenAI-Organization", "OpenAI-Project", "X-Operator-Secret", "Proxy-Authorization"} {
			if v := h.Get(name); v != "" {
				t.Errorf("request %d: the carrier received the operator's %s: %q", i, name, v)
			}
		}
		for name, vs := range h {
			for _, v := range vs {
				if strings.Contains(v, "operator") || strings.Contains(v, "hunter2") {
					t.Errorf("request %d: header %s carries the operator's environment: %q", i, name, v)
				}
			}
		}
	}
}
