package gateway

import (
	"net/http"
	"net/http/httptest"
	"strings"
	"sync"
	"testing"

	"go.opentelemetry.io/otel"
	"go.opentelemetry.io/otel/propagation"
	sdktrace "go.opentelemetry.io/otel/sdk/trace"
	"go.opentelemetry.io/otel/sdk/trace/tracetest"

	"github.com/airside/airside/internal/fakecarrier"
	"github.com/airside/airside/internal/netguard"
)

// TestACallersTraceStopsAtTheGatewaysEdge: a customer's traceparent does
// not reach the carrier; the gateway starts a trace of its own, linked to
// the caller's, and the carrier sees that one.
func TestACallersTraceStopsAtTheGatewaysEdge(t *testing.T) {
	recorder, _, h, carrierSaw := tracedHarness(t)
	addr := servedGateway(t, h, ClientTimeouts{})

	const callerTrace = "4bf92f3577b34da6a3ce929d0e0e4736"
	req, _ := http.NewRequest(http.MethodPost, "http://"+addr+"/v1/chat/completions", strings.NewReader(hello))
	req.Header.Set("Authorization", "Bearer "+projectKey)
	req.Header.Set("traceparent", "00-"+callerTrace+"-00f067aa0ba902b7-01")
	res, err := http.DefaultClient.Do(req)
	if err != nil {
		t.Fatal(err)
	}
	res.Body.Close()
	if res.StatusCode != http.StatusOK {
		t.Fatalf("status %d", res.StatusCode)
	}
	if carrierSaw() == "" {
		t.Fatal("the carrier got no traceparent: the gateway's own trace is not propagated")
	}
	if strings.Contains(carrierSaw(), callerTrace) {
		t.Errorf("the carrier received the caller's trace id: %s", carrierSaw())
	}
	linked := false
	for _, s := range recorder.Ended() {
		if s.SpanKind().String() != "server" {
			continue
		}
		if s.SpanContext().TraceID().String() == callerTrace {
			t.Errorf("the gateway's server span continues the caller's trace")
		}
		for _, l := range s.Links() {
			linked = linked || l.SpanContext.TraceID().String() == callerTrace
		}
	}
	if !linked {
		t.Error("the gateway's server span does not link the caller's trace")
	}
}

// TestTracesNestFromTheGatewayToTheCarrierAndThePortal: a request's server
// span holds a GenAI "chat" span per carrier call, with the conventions'
// attributes and the tokens, and the HTTP call beneath it carries the
// trace to the carrier; a call to the portal is a client span whose
// traceparent the portal receives.
func TestTracesNestFromTheGatewayToTheCarrierAndThePortal(t *testing.T) {
	recorder, specs, h, carrierSaw := tracedHarness(t)
	addr := servedGateway(t, h, ClientTimeouts{})
	req, _ := http.NewRequest(http.MethodPost, "http://"+addr+"/v1/chat/completions", strings.NewReader(hello))
	req.Header.Set("Authorization", "Bearer "+projectKey)
	res, err := http.DefaultClient.Do(req)
	if err != nil {
		t.Fatal(err)
	}
	res.Body.Close()
	if res.StatusCode != http.StatusOK {
		t.Fatalf("status %d", res.StatusCode)
	}
	spans := recorder.Ended()
	var server, chat, httpCall sdktrace.ReadOnlySpan
	for _, s := range spans {
		switch {
		case s.SpanKind().String() == "server":
			server = s
		case strings.HasPrefix(s.Name(), "chat "):
			chat = s
		}
	}
	if server == nil || chat == nil {
		t.Fatalf("spans %v: want the gateway's server span and a chat span", names(spans))
	}
	for _, s := range spans {
		if s.Parent().SpanID() == chat.SpanContext().SpanID() && s.SpanKind().String() == "client" {
			httpCall = s
		}
	}
	if chat.Parent().SpanID() != server.SpanContext().SpanID() || chat.SpanKind().String() != "client" {
		t.Errorf("the chat span is not a client span under the request's")
	}
	attrs := map[string]string{}
	for _, a := range chat.Attributes() {
		attrs[string(a.Key)] = a.Value.String()
	}
	for key, want := range map[string]string{"gen_ai.operation.name": "chat", "gen_ai.request.model": "up-m", "gen_ai.provider.name": specs[0].slug,
		"airside.outcome": "served"} {
		if attrs[key] != want {
			t.Errorf("chat span %s = %q, want %q (all: %v)", key, attrs[key], want, attrs)
		}
	}
	if attrs["gen_ai.usage.output_tokens"] == "" || attrs["gen_ai.usage.output_tokens"] == "0" {
		t.Errorf("the chat span carries no output tokens: %v", attrs)
	}
	if httpCall == nil {
		t.Fatal("no HTTP client span under the chat span")
	}
	if !strings.Contains(carrierSaw(), httpCall.SpanContext().SpanID().String()) {
		t.Errorf("the carrier saw %q, not the HTTP call's span %s", carrierSaw(), httpCall.SpanContext().SpanID())
	}

	// The portal client: its calls are spans the portal continues.
	got := make(chan string, 1)
	portal := httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) { got <- r.Header.Get("traceparent") }))
	defer portal.Close()
	pres, err := PortalHTTPClient().Get(portal.URL + "/api/v1/catalogue")
	if err != nil {
		t.Fatal(err)
	}
	pres.Body.Close()
	sent := <-got
	var call sdktrace.ReadOnlySpan
	for _, s := range recorder.Ended() {
		if s.SpanKind().String() == "client" && strings.Contains(sent, s.SpanContext().SpanID().String()) {
			call = s
		}
	}
	if call == nil {
		t.Errorf("the portal received traceparent %q from no client span of the gateway", sent)
	}
}

func names(spans []sdktrace.ReadOnlySpan) []string {
	var out []string
	for _, s := range spans {
		out = append(out, s.SpanKind().String()+" "+s.Name())
	}
	return out
}

// tracedHarness is a one-carrier harness under an in-memory tracer
// provider, the gateway calling with its own traced client; carrierSaw is
// the traceparent the carrier received last.
func tracedHarness(t *testing.T) (*tracetest.SpanRecorder, []carrierSpec, *harness, func() string) {
	t.Helper()
	recorder := tracetest.NewSpanRecorder()
	tp := sdktrace.NewTracerProvider(sdktrace.WithSpanProcessor(recorder))
	prevTP, prevProp := otel.GetTracerProvider(), otel.GetTextMapPropagator()
	otel.SetTracerProvider(tp)
	otel.SetTextMapPropagator(propagation.TraceContext{})
	t.Cleanup(func() { otel.SetTracerProvider(prevTP); otel.SetTextMapPropagator(prevProp) })
	var mu sync.Mutex
	var saw string
	fc := fakecarrier.New(fakecarrier.Config{Models: []string{"up-m"}, APIKey: "key-a"})
	specs := threeCarriers()[:1]
	specs[0].handler = http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		mu.Lock()
		saw = r.Header.Get("traceparent")
		mu.Unlock()
		fc.ServeHTTP(w, r)
	})
	h := newHarness(t, specs...)
	h.gw.HTTP = CarrierHTTPClient(netguard.New(true)) // the gateway's own client, which injects traceparent
	return recorder, specs, h, func() string {
		mu.Lock()
		defer mu.Unlock()
		return saw
	}
}
