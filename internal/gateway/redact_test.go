package gateway

import (
	"encoding/json"
	"io"
	"net/http"
	"strings"
	"testing"
)

// TestCarrierErrorsReachCallersRedacted: a carrier's error body is relayed
// as its message, type and code, with the listing's key and anything shaped
// like a credential taken out; a body that is not OpenAI's shape becomes a
// sentence with the status.
func TestCarrierErrorsReachCallersRedacted(t *testing.T) {
	const key = "key-a"
	for _, test := range []struct {
		name, body   string
		want         string // in the relayed message
		wantType     string
		wantCode     any
		mustNotCarry []string
	}{
		{"its own key echoed", `{"error":{"message":"upstream rejected key key-a for model x","type":"server_error","code":"internal"}}`,
			"upstream rejected key [redacted] for model x", "server_error", "internal", []string{"key-a"}},
		{"a bearer token", `{"error":{"message":"sent Authorization: Bearer abcdefghijklmnop12345 to the backend"}}`,
			"[redacted]", "upstream_error", "upstream_error", []string{"abcdefghijklmnop12345"}},
		{"an OpenAI-style key", `{"error":{"message":"quota of sk-proj-AbCdEf0123456789xyz exceeded"}}`,
			"quota of [redacted] exceeded", "upstream_error", "upstream_error", []string{"AbCdEf0123456789xyz"}},
		{"api_key=", `{"message":"bad request: api_key=s3cr3tvalue99 is not allowed"}`,
			"api_key=[redacted]", "upstream_error", "upstream_error", []string{"s3cr3tvalue99"}},
		{"a long opaque token", `{"error":{"message":"token eyJhbGciOiJIUzI1NiJ9eyJzdWIiOiIxMjM0NTY3ODkwIiwibmFtZSI6IkpvaG4ifQ rejected"}}`,
			"rejected", "upstream_error", "upstream_error", []string{"eyJhbGciOiJIUzI1NiJ9"}},
		{"extra fields are not relayed", `{"error":{"message":"no","debug":{"upstream":"http://10.0.0.7:8000","headers":{"x-api-key":"zzz"}}}}`,
			"no", "upstream_error", "upstream_error", []string{"10.0.0.7", "zzz", "debug"}},
		{"a type that is not a word is not relayed", `{"error":{"message":"no","type":"<script>alert(1)</script>","code":429}}`,
			"no", "upstream_error", float64(429), []string{"script"}},
		{"not JSON", `<html>500 Internal Server Error: key-a</html>`, "The carrier answered 500.", "upstream_error", "upstream_error", []string{"key-a", "html"}},
	} {
		t.Run(test.name, func(t *testing.T) {
			out := carrierError(500, []byte(test.body), key)
			var got struct {
				Error struct {
					Message string `json:"message"`
					Type    string `json:"type"`
					Code    any    `json:"code"`
				} `json:"error"`
			}
			if err := json.Unmarshal(out, &got); err != nil {
				t.Fatalf("not JSON: %s", out)
			}
			if !strings.Contains(got.Error.Message, test.want) {
				t.Errorf("message %q, want it to hold %q", got.Error.Message, test.want)
			}
			if got.Error.Type != test.wantType || got.Error.Code != test.wantCode {
				t.Errorf("type %q code %v, want %q %v", got.Error.Type, got.Error.Code, test.wantType, test.wantCode)
			}
			for _, s := range test.mustNotCarry {
				if strings.Contains(string(out), s) {
					t.Errorf("the relayed error carries %q: %s", s, out)
				}
			}
		})
	}
}

// TestACarrierEchoingItsKeyIsRedactedThroughTheGateway: the whole path,
// with the only carrier answering 500 with its key in the body.
func TestACarrierEchoingItsKeyIsRedactedThroughTheGateway(t *testing.T) {
	specs := threeCarriers()[:1]
	specs[0].handler = http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		_, _ = io.Copy(io.Discard, r.Body)
		w.Header().Set("Content-Type", "application/json")
		w.Header().Set("Retry-After", "soon\r\nSet-Cookie: x=1")
		w.WriteHeader(http.StatusInternalServerError)
		_, _ = io.WriteString(w, `{"error":{"message":"backend said: `+r.Header.Get("Authorization")+` is not valid here","type":"server_error"}}`)
	})
	h := newHarness(t, specs...)
	res := h.chat(hello)
	if res.status != http.StatusInternalServerError {
		t.Fatalf("status %d: %s", res.status, res.body)
	}
	if strings.Contains(res.body, "key-a") || !strings.Contains(res.body, "[redacted]") {
		t.Errorf("the caller read the carrier's key: %s", res.body)
	}
}
