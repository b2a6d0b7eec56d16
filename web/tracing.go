package web

import (
	"log/slog"
	"strconv"

	"github.com/labstack/echo/v4"
	"go.opentelemetry.io/otel"
	"go.opentelemetry.io/otel/attribute"
	"go.opentelemetry.io/otel/codes"
	"go.opentelemetry.io/otel/propagation"
	"go.opentelemetry.io/otel/trace"

	"github.com/airside/airside/internal/tracing"
)

// traceRequests makes each request a server span named by its method and
// route pattern (never the raw path), continuing the caller's trace when it
// sends a W3C traceparent. Everything the request does (elections, SQL
// statements) nests under it. With tracing off the provider is the no-op
// one and this costs a context lookup.
func traceRequests(next echo.HandlerFunc) echo.HandlerFunc {
	return func(c echo.Context) error {
		req := c.Request()
		route := c.Path()
		if route == "" {
			route = "(no route)"
		}
		ctx := otel.GetTextMapPropagator().Extract(req.Context(), propagation.HeaderCarrier(req.Header))
		ctx, span := tracing.Tracer("web").Start(ctx, "request", trace.WithSpanKind(trace.SpanKindServer))
		defer span.End()
		if !span.IsRecording() { // tracing off: the hot paths pay nothing more, not even the name
			return next(c)
		}
		span.SetName(req.Method + " " + route)
		// url.scheme as the caller used it: TLS here, or the proxy's
		// X-Forwarded-Proto in front (echo's Scheme reads both).
		span.SetAttributes(attribute.String("http.request.method", req.Method), attribute.String("http.route", route),
			attribute.String("url.path", req.URL.Path), attribute.String("url.scheme", c.Scheme()),
			attribute.String("airside.request_id", c.Response().Header().Get(echo.HeaderXRequestID)))
		c.SetRequest(req.WithContext(ctx))
		err := next(c) // requestLog, inside, has answered errors already
		status := c.Response().Status
		span.SetAttributes(attribute.Int("http.response.status_code", status))
		if status >= 500 {
			span.SetStatus(codes.Error, strconv.Itoa(status))
		}
		return err
	}
}

// requestLogger is the portal's logger for one request's lines: each names
// the request id (as the response's X-Request-Id does) and, when the
// request is traced, its trace id, so a log line leads to the trace.
func (s *Server) requestLogger(c echo.Context) *slog.Logger {
	log := s.Log.With("id", c.Response().Header().Get(echo.HeaderXRequestID))
	if sc := trace.SpanContextFromContext(c.Request().Context()); sc.HasTraceID() {
		log = log.With("trace_id", sc.TraceID().String())
	}
	return log
}
