package preflight

import (
	"bytes"
	"context"
	"errors"
	"fmt"
	"io"
	"net/http"
	"net/http/httptrace"
	"regexp"
	"strings"
	"time"

	"github.com/openai/openai-go/v3"
	"github.com/openai/openai-go/v3/option"
)

// exchange is what the last request of a probe got: enough to tell the
// carrier in plain words what its server did, whatever the shape of its
// answer (an error body that is not OpenAI's cannot be decoded by the
// client, and its message would otherwise be a Go type name).
type exchange struct {
	status      int
	contentType string
	body        []byte // the start of an error answer
	connected   bool
	firstByte   bool
}

// maxEvidence is how much of an error body is kept and shown.
const maxEvidence = 300

// newProber makes a prober whose client records each exchange.
func newProber(ep Endpoint, hc *http.Client, now func() time.Time) *prober {
	p := &prober{ep: ep, now: now}
	p.client = newClient(ep, hc, option.WithMiddleware(p.record))
	return p
}

// record is the client middleware that fills p.last.
func (p *prober) record(req *http.Request, next option.MiddlewareNext) (*http.Response, error) {
	ex := &exchange{}
	p.last = ex
	req = req.WithContext(httptrace.WithClientTrace(req.Context(), &httptrace.ClientTrace{
		GotConn:              func(httptrace.GotConnInfo) { ex.connected = true },
		GotFirstResponseByte: func() { ex.firstByte = true },
	}))
	resp, err := next(req)
	if resp == nil {
		return resp, err
	}
	ex.status, ex.contentType = resp.StatusCode, resp.Header.Get("Content-Type")
	if resp.StatusCode >= 300 && resp.Body != nil {
		body, _ := io.ReadAll(io.LimitReader(resp.Body, 64<<10))
		resp.Body.Close()
		resp.Body = io.NopCloser(bytes.NewReader(body))
		ex.body = body
	}
	return resp, err
}

// secrets are what must never be shown back: keys and bearer tokens.
var secrets = regexp.MustCompile(`(?i)(sk-[a-z0-9_\-]{6,}|bearer\s+[a-z0-9._\-]{6,}|airside_[a-z0-9_\-]{6,}|"(api_?key|key|token)"\s*:\s*"[^"]*")`)

// redact hides keys in text shown to a carrier.
func redact(s string) string { return secrets.ReplaceAllString(s, "[redacted]") }

// failure says what went wrong with a probe's request, in plain words: the
// status, the content type and the start of the body the server answered,
// or which phase timed out; never a Go type name.
func (p *prober) failure(err error, what string) Result {
	ex := p.last
	if ex != nil && ex.status >= 300 {
		body := strings.TrimSpace(redact(string(ex.body)))
		excerpt := clip(body, maxEvidence)
		ct := ex.contentType
		if ct == "" {
			ct = "no content type"
		}
		msg := fmt.Sprintf("%s: your server answered %d (%s)", what, ex.status, ct)
		var apiErr *openai.Error
		if errors.As(err, &apiErr) && apiErr.Message != "" {
			msg += ": " + apiErr.Message
		} else if excerpt != "" {
			msg += " with: " + excerpt
		}
		return Result{State: Failed, Status: ex.status, Excerpt: excerpt, Error: msg}
	}
	if errors.Is(err, context.DeadlineExceeded) || errors.Is(err, context.Canceled) {
		switch {
		case ex == nil || !ex.connected:
			return Result{State: Failed, Error: what + ": could not connect to your server in time (connect phase)."}
		case !ex.firstByte:
			return Result{State: Failed, Error: what + ": your server accepted the connection but sent no first byte in time (first-byte phase)."}
		default:
			return Result{State: Failed, Status: ex.status, Error: what + ": your server started answering but the answer stalled (stream phase)."}
		}
	}
	if ex != nil && ex.status >= 200 && ex.status < 300 {
		return Result{State: Failed, Status: ex.status, Error: fmt.Sprintf("%s: your server answered %d (%s), but the answer could not be read as OpenAI's: %s",
			what, ex.status, ex.contentType, clip(redact(err.Error()), 200))}
	}
	return Result{State: Failed, Error: fmt.Sprintf("%s: no answer from your server: %s", what, clip(redact(err.Error()), 200))}
}
