package web_test

import (
	"context"
	"net/http"
	"net/http/httptest"
	"testing"
	"time"

	"go.opentelemetry.io/otel"
	"go.opentelemetry.io/otel/propagation"
	sdktrace "go.opentelemetry.io/otel/sdk/trace"
	"go.opentelemetry.io/otel/sdk/trace/tracetest"
	"go.opentelemetry.io/otel/trace"

	"github.com/airside/airside/internal/apitoken"
	"github.com/airside/airside/internal/netguard"
	"github.com/airside/airside/internal/store"
	"github.com/airside/airside/internal/tracing"
)

// recordSpans installs an in-memory exporter as the global provider for the
// test, with the W3C propagator the serve command installs.
func recordSpans(t *testing.T) *tracetest.InMemoryExporter {
	t.Helper()
	exporter := tracetest.NewInMemoryExporter()
	tp := sdktrace.NewTracerProvider(sdktrace.WithSyncer(exporter))
	previous, previousProp := otel.GetTracerProvider(), otel.GetTextMapPropagator()
	otel.SetTracerProvider(tp)
	otel.SetTextMapPropagator(propagation.NewCompositeTextMapPropagator(propagation.TraceContext{}, propagation.Baggage{}))
	t.Cleanup(func() {
		otel.SetTracerProvider(previous)
		otel.SetTextMapPropagator(previousProp)
		tp.Shutdown(context.Background())
	})
	return exporter
}

// spanNamed waits for a span of that name in trace (the server span ends
// just after the answer is written), up to a deadline.
func spanNamed(t *testing.T, exporter *tracetest.InMemoryExporter, traceID trace.TraceID, name string) tracetest.SpanStub {
	t.Helper()
	deadline := time.Now().Add(30 * time.Second)
	for {
		for _, s := range exporter.GetSpans() {
			if s.Name == name && s.SpanContext.TraceID() == traceID {
				return s
			}
		}
		if time.Now().After(deadline) {
			t.Fatalf("no span %q in trace %s", name, traceID)
		}
		time.Sleep(20 * time.Millisecond)
	}
}

// TestTracesNestRequestsElectionsAndStatements: a request that sends a W3C
// traceparent continues that trace; its election and its SQL statements
// are spans under its own; an outbound call (a probe, a webhook) carries
// the traceparent on.
func TestTracesNestRequestsElectionsAndStatements(t *testing.T) {
	exporter := recordSpans(t)
	p := newPortal(t, store.SQLite)
	tok := apiToken(t, p.store, apitoken.ScopeElect)
	const traceparent = "00-4bf92f3577b34da6a3ce929d0e0e4736-00f067aa0ba902b7-01"
	callerTrace, _ := trace.TraceIDFromHex("4bf92f3577b34da6a3ce929d0e0e4736")
	callerSpan, _ := trace.SpanIDFromHex("00f067aa0ba902b7")

	wantStatus(t, "elect", apiCall(t, p.srv.URL, "POST", "/api/v1/elect", tok, `{"model":"kimi-k2.5"}`, "traceparent", traceparent), http.StatusOK)
	server := spanNamed(t, exporter, callerTrace, "POST /api/v1/elect")
	if server.Parent.SpanID() != callerSpan || server.SpanKind != trace.SpanKindServer {
		t.Errorf("the request span's parent is %s (kind %s), want the caller's %s", server.Parent.SpanID(), server.SpanKind, callerSpan)
	}
	scheme := ""
	for _, a := range server.Attributes {
		if a.Key == "url.scheme" {
			scheme = a.Value.AsString()
		}
	}
	if scheme != "http" {
		t.Errorf("the request span's url.scheme is %q, want http (the test portal is plain http)", scheme)
	}
	election := spanNamed(t, exporter, callerTrace, "election full")
	if election.Parent.SpanID() != server.SpanContext.SpanID() {
		t.Errorf("the election is not under its request: parent %s, request %s", election.Parent.SpanID(), server.SpanContext.SpanID())
	}

	// A page reads the database: its statements nest under its request.
	c := p.client()
	c.login("admin@nebula.example")
	pageTrace, _ := trace.TraceIDFromHex("0af7651916cd43dd8448eb211c80319c")
	c.header.Set("traceparent", "00-0af7651916cd43dd8448eb211c80319c-b7ad6b7169203331-01")
	wantStatus(t, "listings", c.get("/listings"), http.StatusOK)
	page := spanNamed(t, exporter, pageTrace, "GET /listings")
	var statements int
	for _, s := range exporter.GetSpans() {
		if s.SpanContext.TraceID() == pageTrace && s.Name == "db.select" {
			statements++
			if s.Parent.SpanID() != page.SpanContext.SpanID() {
				t.Errorf("a statement's parent is %s, not the page's request %s", s.Parent.SpanID(), page.SpanContext.SpanID())
			}
		}
	}
	if statements == 0 {
		t.Error("the page's SQL statements made no spans")
	}

	// Outbound: the guarded client (probes, webhooks) sends the traceparent.
	got := make(chan string, 1)
	receiver := httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		got <- r.Header.Get("traceparent")
	}))
	defer receiver.Close()
	ctx, span := tracing.Tracer("test").Start(context.Background(), "probe")
	req, _ := http.NewRequestWithContext(ctx, http.MethodGet, receiver.URL, nil)
	res, err := netguard.New(true).Client(10 * time.Second).Do(req)
	if err != nil {
		t.Fatal(err)
	}
	res.Body.Close()
	span.End()
	sent, err := trace.TraceIDFromHex(func() string {
		h := <-got
		if len(h) < 35 {
			return ""
		}
		return h[3:35]
	}())
	if err != nil || sent != span.SpanContext().TraceID() {
		t.Errorf("the outbound call carried trace %s, want %s", sent, span.SpanContext().TraceID())
	}
}
