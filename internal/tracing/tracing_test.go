package tracing

import (
	"context"
	"net/http"
	"net/http/httptest"
	"sync"
	"testing"

	"go.opentelemetry.io/otel"
	"go.opentelemetry.io/otel/trace"
)

// TestSetupExportsOnlyWhenAnEndpointIsNamed: without OTEL_EXPORTER_OTLP_*
// nothing is recorded; with an endpoint, spans reach it over OTLP/HTTP
// when the process flushes.
func TestSetupExportsOnlyWhenAnEndpointIsNamed(t *testing.T) {
	previous := otel.GetTracerProvider()
	t.Cleanup(func() { otel.SetTracerProvider(previous) })

	t.Setenv("OTEL_EXPORTER_OTLP_ENDPOINT", "")
	t.Setenv("OTEL_EXPORTER_OTLP_TRACES_ENDPOINT", "")
	shutdown, err := Setup(context.Background(), "airside-test")
	if err != nil {
		t.Fatal(err)
	}
	_, span := Tracer("test").Start(context.Background(), "nothing collects this")
	if span.IsRecording() {
		t.Error("a span records with no endpoint named")
	}
	span.End()
	shutdown(context.Background())

	var mu sync.Mutex
	var posts []string
	collector := httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		mu.Lock()
		posts = append(posts, r.Method+" "+r.URL.Path+" "+r.Header.Get("Content-Type"))
		mu.Unlock()
		w.WriteHeader(http.StatusOK)
	}))
	defer collector.Close()
	t.Setenv("OTEL_EXPORTER_OTLP_ENDPOINT", collector.URL)
	shutdown, err = Setup(context.Background(), "airside-test")
	if err != nil {
		t.Fatal(err)
	}
	_, span = Tracer("test").Start(context.Background(), "exported", trace.WithSpanKind(trace.SpanKindInternal))
	if !span.IsRecording() {
		t.Fatal("with an endpoint named, spans do not record")
	}
	span.End()
	if err := shutdown(context.Background()); err != nil { // flushes the batch
		t.Fatal(err)
	}
	mu.Lock()
	defer mu.Unlock()
	if len(posts) == 0 || posts[0] != "POST /v1/traces application/x-protobuf" {
		t.Errorf("the collector received %v, want an OTLP/HTTP export", posts)
	}
}
