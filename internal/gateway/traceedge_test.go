package gateway

import (
	"net/http"
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
	recorder := tracetest.NewSpanRecorder()
	tp := sdktrace.NewTracerProvider(sdktrace.WithSpanProcessor(recorder))
	prevTP, prevProp := otel.GetTracerProvider(), otel.GetTextMapPropagator()
	otel.SetTracerProvider(tp)
	otel.SetTextMapPropagator(propagation.TraceContext{})
	t.Cleanup(func() { otel.SetTracerProvider(prevTP); otel.SetTextMapPropagator(prevProp) })

	var mu sync.Mutex
	var carrierSaw string
	fc := fakecarrier.New(fakecarrier.Config{Models: []string{"up-m"}, APIKey: "key-a"})
	specs := threeCarriers()[:1]
	specs[0].handler = http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		mu.Lock()
		carrierSaw = r.Header.Get("traceparent")
		mu.Unlock()
		fc.ServeHTTP(w, r)
	})
	h := newHarness(t, specs...)
	h.gw.HTTP = CarrierHTTPClient(netguard.New(true)) // the gateway's own client, which injects traceparent
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
	mu.Lock()
	defer mu.Unlock()
	if carrierSaw == "" {
		t.Fatal("the carrier got no traceparent: the gateway's own trace is not propagated")
	}
	if strings.Contains(carrierSaw, callerTrace) {
		t.Errorf("the carrier received the caller's trace id: %s", carrierSaw)
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
