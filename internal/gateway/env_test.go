package gateway

import (
	"net/http"
	"strings"
	"sync"
	"testing"

	"github.com/airside/airside/internal/fakecarrier"
)

// TestTheOperatorsOpenAIEnvironmentStaysWithTheGateway: with openai-go's
// environment set on the gateway's process, a carrier sees its own key and
// none of the operator's organisation, project or custom headers (before,
// the carrier received all three).
func TestTheOperatorsOpenAIEnvironmentStaysWithTheGateway(t *testing.T) {
	t.Setenv("OPENAI_ORG_ID", "org-operator")
	t.Setenv("OPENAI_PROJECT_ID", "proj-operator")
	t.Setenv("OPENAI_CUSTOM_HEADERS", "X-Operator-Secret: hunter2")
	t.Setenv("OPENAI_API_KEY", "sk-operator")
	var mu sync.Mutex
	var seen http.Header
	fc := fakecarrier.New(fakecarrier.Config{Models: []string{"up-m"}, APIKey: "key-a"})
	specs := threeCarriers()[:1]
	specs[0].handler = http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		mu.Lock()
		seen = r.Header.Clone()
		mu.Unlock()
		fc.ServeHTTP(w, r)
	})
	h := newHarness(t, specs...)
	if res := h.chat(hello); res.status != http.StatusOK {
		t.Fatalf("%d %s", res.status, res.body)
	}
	mu.Lock()
	defer mu.Unlock()
	if seen.Get("Authorization") != "Bearer key-a" {
		t.Errorf("Authorization %q, want the listing's key", seen.Get("Authorization"))
	}
	for name, vs := range seen {
		v := strings.Join(vs, ",")
		if strings.Contains(v, "operator") || strings.Contains(v, "hunter2") {
			t.Errorf("the carrier received the operator's %s: %q", name, v)
		}
	}
}
