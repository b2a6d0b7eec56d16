package gateway

import (
	"encoding/json"
	"fmt"
	"regexp"
	"strings"
	"unicode/utf8"
)

// A carrier's error body reaches the gateway's customer, and carriers put
// surprising things in them: one echoed the key it was called with in a
// 500. The gateway relays only the error's message, type and code, in
// OpenAI's shape, with anything that looks like a credential taken out.

// secretPatterns are credentials as carriers and their proxies print them:
// bearer tokens, and API keys in the common prefixed forms.
var secretPatterns = []*regexp.Regexp{
	regexp.MustCompile(`(?i)\b(bearer|basic)\s+[A-Za-z0-9._~+/=-]{8,}`),
	regexp.MustCompile(`(?i)\b(api[_-]?key|x-api-key|authorization|token|secret|password)(["']?\s*[:=]\s*["']?)[^\s"',;&]{6,}`),
	regexp.MustCompile(`\b(sk|pk|rk|ak|key|sess|org|proj)[-_][A-Za-z0-9_-]{8,}`),
	regexp.MustCompile(`\b[A-Za-z0-9_-]{40,}\b`), // long opaque tokens (JWT parts, hex and base64 keys)
}

const redacted = "[redacted]"

// redact takes the listing's own key and anything shaped like a credential
// out of text.
func redact(text, key string) string {
	if len(key) >= 4 { // a real key is long; a short test key still counts
		text = strings.ReplaceAll(text, key, redacted)
	}
	for i, p := range secretPatterns {
		switch i {
		case 0:
			text = p.ReplaceAllString(text, "$1 "+redacted)
		case 1:
			text = p.ReplaceAllString(text, "$1$2"+redacted)
		default:
			text = p.ReplaceAllString(text, redacted)
		}
	}
	return text
}

// maxRelayedMessage bounds the carrier's message relayed to the caller.
const maxRelayedMessage = 500

// carrierError is the error body the caller gets for a carrier's refusal:
// the carrier's message, type and code when it sent OpenAI's shape (or a
// bare message), redacted and clipped; otherwise a sentence with the status.
func carrierError(status int, body []byte, key string) []byte {
	var shaped struct {
		Error *struct {
			Message string `json:"message"`
			Type    string `json:"type"`
			Code    any    `json:"code"`
		} `json:"error"`
		Message string `json:"message"`
	}
	msg, typ, code := "", errorType(status), any("upstream_error")
	if json.Unmarshal(body, &shaped) == nil {
		switch {
		case shaped.Error != nil:
			msg = shaped.Error.Message
			if plainWord(shaped.Error.Type) {
				typ = shaped.Error.Type
			}
			switch c := shaped.Error.Code.(type) {
			case string:
				if plainWord(c) {
					code = c
				}
			case float64:
				code = c
			}
		default:
			msg = shaped.Message
		}
	}
	if msg == "" {
		msg = fmt.Sprintf("The carrier answered %d.", status)
	}
	msg = clip(redact(msg, key), maxRelayedMessage)
	out, _ := json.Marshal(map[string]any{"error": map[string]any{"message": msg, "type": typ, "code": code, "param": nil}})
	return out
}

// plainWord is an error type or code as OpenAI spells them
// (invalid_request_error, rate_limit_exceeded): nothing else is relayed.
func plainWord(s string) bool {
	if s == "" || len(s) > 64 {
		return false
	}
	for _, r := range s {
		if !(r >= 'a' && r <= 'z' || r >= 'A' && r <= 'Z' || r >= '0' && r <= '9' || r == '_' || r == '.' || r == '-') {
			return false
		}
	}
	return redact(s, "") == s
}

func clip(s string, n int) string {
	if len(s) <= n {
		return s
	}
	cut := n
	for cut > 0 && !utf8.RuneStart(s[cut]) {
		cut--
	}
	return s[:cut] + "…"
}
