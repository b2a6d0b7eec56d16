// Package tracing sets up OpenTelemetry for the portal and the gateway with
// the official SDK: spans for requests, elections, database calls,
// outbound probes and webhooks, the W3C traceparent propagated in and out,
// exported over OTLP/HTTP only when the standard OTEL_EXPORTER_OTLP_*
// variables name an endpoint. Without one the global provider stays the
// no-op one, so tracing costs nothing where nobody collects it.
package tracing

import (
	"context"
	"fmt"
	"net/http"
	"os"
	"time"

	"go.opentelemetry.io/contrib/instrumentation/net/http/otelhttp"
	"go.opentelemetry.io/otel"
	"go.opentelemetry.io/otel/exporters/otlp/otlptrace/otlptracehttp"
	"go.opentelemetry.io/otel/propagation"
	"go.opentelemetry.io/otel/sdk/resource"
	sdktrace "go.opentelemetry.io/otel/sdk/trace"
	semconv "go.opentelemetry.io/otel/semconv/v1.40.0"
	"go.opentelemetry.io/otel/trace"
)

// Enabled reports whether the environment names an OTLP endpoint for traces.
func Enabled() bool {
	return os.Getenv("OTEL_EXPORTER_OTLP_ENDPOINT") != "" || os.Getenv("OTEL_EXPORTER_OTLP_TRACES_ENDPOINT") != ""
}

// Setup installs the W3C trace-context propagator always (so a traceparent
// passes through even when nothing is exported), and, when Enabled, a
// tracer provider exporting in batches over OTLP/HTTP as the standard
// variables configure it (endpoint, headers, OTEL_SERVICE_NAME). shutdown
// flushes what is buffered.
func Setup(ctx context.Context, service string) (shutdown func(context.Context) error, err error) {
	otel.SetTextMapPropagator(propagation.NewCompositeTextMapPropagator(propagation.TraceContext{}, propagation.Baggage{}))
	if !Enabled() {
		return func(context.Context) error { return nil }, nil
	}
	exporter, err := otlptracehttp.New(ctx)
	if err != nil {
		return nil, fmt.Errorf("tracing: OTLP exporter: %w", err)
	}
	res, err := resource.Merge(resource.Default(), resource.NewSchemaless(semconv.ServiceName(service)))
	if err != nil {
		return nil, fmt.Errorf("tracing: resource: %w", err)
	}
	tp := sdktrace.NewTracerProvider(sdktrace.WithBatcher(exporter, sdktrace.WithBatchTimeout(5*time.Second)), sdktrace.WithResource(res))
	otel.SetTracerProvider(tp)
	return tp.Shutdown, nil
}

// Tracer is the named tracer of a part of Airside, from the global provider
// at each call (so a test's provider is the one used).
func Tracer(name string) trace.Tracer { return otel.Tracer("github.com/airside/airside/" + name) }

// Transport wraps an outbound transport so each request is a client span
// and carries the traceparent (probes of carriers, webhook deliveries).
func Transport(base http.RoundTripper) http.RoundTripper {
	return otelhttp.NewTransport(base)
}

// Handler makes each request an HTTP server span, continuing the caller's
// traceparent (the portal names its spans by route itself).
func Handler(h http.Handler, operation string) http.Handler {
	return otelhttp.NewHandler(h, operation)
}

// PublicHandler makes each request an HTTP server span that starts a new
// trace, linked to (not continuing) the caller's traceparent: the reference
// gateway's endpoint faces customers, and what it calls next faces carriers,
// so a customer's trace ids must not reach a carrier (nor a carrier's
// timing a customer's trace). The link keeps the caller's trace one click
// away in a collector that holds both.
func PublicHandler(h http.Handler, operation string) http.Handler {
	return otelhttp.NewHandler(h, operation, otelhttp.WithPublicEndpointFn(func(*http.Request) bool { return true }))
}
