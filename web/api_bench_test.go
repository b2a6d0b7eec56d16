package web_test

import (
	"context"
	"io"
	"log/slog"
	"net/http"
	"net/http/httptest"
	"strings"
	"testing"

	"github.com/airside/airside/cmd/airside/wire"
	"github.com/airside/airside/internal/apitoken"
	"github.com/airside/airside/internal/demo"
	"github.com/airside/airside/internal/store"
	"github.com/airside/airside/internal/store/storetest"
)

// BenchmarkAPIHandlers runs the gateway's endpoints in process (no network,
// no load generator) on the demo catalogue, beside /healthz through the same
// middleware: the ratio to healthz is what the handler itself costs.
//
//	go test -run '^$' -bench APIHandlers ./web
func BenchmarkAPIHandlers(b *testing.B) {
	st := storetest.Open(b, store.SQLite)
	if _, err := demo.Seed(context.Background(), st); err != nil {
		b.Fatal(err)
	}
	server := wire.Portal(st, wire.Config{Log: slog.New(slog.NewTextHandler(io.Discard, nil))})
	h := server.Handler()
	token := apiToken(b, st, apitoken.Scopes...)
	const ballot = `{"model":"kimi-k2.5","promptTokens":20000,"streaming":true,"workload":"coding","requires":["tools"],"usage":{"nebula/kimi-k2.5":{"rpm":3}}}`
	for _, bench := range []struct{ name, method, path, body string }{
		{"healthz", "GET", "/healthz", ""},
		{"catalogue-304", "GET", "/api/v1/catalogue", ""},
		{"elect", "POST", "/api/v1/elect", ballot},
		{"elect-winner", "POST", "/api/v1/elect/winner", ballot},
	} {
		b.Run(bench.name, func(b *testing.B) {
			etag := ""
			if bench.name == "catalogue-304" {
				etag = serve(b, h, "GET", bench.path, token, "", "").Header().Get("ETag")
			}
			b.ReportAllocs()
			for b.Loop() {
				rec := serve(b, h, bench.method, bench.path, token, bench.body, etag)
				if rec.Code >= 400 {
					b.Fatalf("%s: %d %s", bench.path, rec.Code, rec.Body)
				}
			}
		})
	}
}

func serve(b *testing.B, h http.Handler, method, path, token, body, etag string) *httptest.ResponseRecorder {
	req := httptest.NewRequest(method, path, strings.NewReader(body))
	req.Header.Set("Authorization", "Bearer "+token)
	if body != "" {
		req.Header.Set("Content-Type", "application/json")
	}
	if etag != "" {
		req.Header.Set("If-None-Match", etag)
	}
	rec := httptest.NewRecorder()
	h.ServeHTTP(rec, req)
	return rec
}
