package web

import (
	"bytes"
	"context"
	"log/slog"
	"net/http/httptest"
	"strings"
	"testing"

	"github.com/labstack/echo/v4"
	"go.opentelemetry.io/otel/trace"
)

// TestRequestLoggerNamesTheRequestAndItsTrace: a request's own log lines
// (a failure, a deadline) carry its request id, and its trace id when
// it is traced, so a line leads to the response and to the trace.
func TestRequestLoggerNamesTheRequestAndItsTrace(t *testing.T) {
	var out bytes.Buffer
	s := &Server{Log: slog.New(slog.NewTextHandler(&out, nil))}
	e := echo.New()
	traceID, _ := trace.TraceIDFromHex("4bf92f3577b34da6a3ce929d0e0e4736")
	spanID, _ := trace.SpanIDFromHex("00f067aa0ba902b7")
	for _, traced := range []bool{false, true} {
		out.Reset()
		req := httptest.NewRequest("GET", "/listings", nil)
		if traced {
			sc := trace.NewSpanContext(trace.SpanContextConfig{TraceID: traceID, SpanID: spanID, TraceFlags: trace.FlagsSampled})
			req = req.WithContext(trace.ContextWithSpanContext(context.Background(), sc))
		}
		rec := httptest.NewRecorder()
		c := e.NewContext(req, rec)
		c.Response().Header().Set(echo.HeaderXRequestID, "req-1234")
		s.requestLogger(c).Error("request failed")
		line := out.String()
		if !strings.Contains(line, "id=req-1234") {
			t.Errorf("traced=%v: the line names no request: %s", traced, line)
		}
		if got := strings.Contains(line, "trace_id="+traceID.String()); got != traced {
			t.Errorf("traced=%v: trace id in the line %v: %s", traced, got, line)
		}
	}
}
