package web

import (
	"bytes"
	"encoding/json"
	"fmt"
	"net/http/httptest"
	"testing"

	"github.com/labstack/echo/v4"

	"github.com/airside/airside/internal/catalogue"
)

// BenchmarkDecodeMetricsBatch decodes a gateway's minute batch (a bucket
// for each of 63 listings, as the load tool's fleet posts) the way the API
// does (duplicate keys and depth refused, unknown fields refused), beside
// plain encoding/json in the same run: the ratio is what the API's
// strictness costs.
func BenchmarkDecodeMetricsBatch(b *testing.B) {
	var sb bytes.Buffer
	sb.WriteString(`{"buckets":[`)
	for i := range 63 {
		if i > 0 {
			sb.WriteString(",")
		}
		fmt.Fprintf(&sb, `{"listingId":%d,"minute":"2026-12-02T10:00:00Z","source":"load-gateway-1","requests":80,"errors":1,`+
			`"ttftMsSum":31600,"outputTokens":23700,"durationMs":395000,"inputTokens":320000,"cachedInputTokens":80000,"routed":78,"exploration":1}`, i+1)
	}
	sb.WriteString(`],"demand":[{"model":"kimi-k2.5","workload":"coding","minute":"2026-12-02T10:00:00Z","source":"load-gateway-1","requests":100,"promptTokens":400000}]}`)
	data := sb.Bytes()
	type batch struct {
		Buckets []catalogue.PostedBucket `json:"buckets"`
		Demand  []catalogue.Demand       `json:"demand"`
	}
	b.Run("encoding/json alone", func(b *testing.B) {
		for b.Loop() {
			var body batch
			if err := json.Unmarshal(data, &body); err != nil {
				b.Fatal(err)
			}
		}
	})
	for _, decoder := range []struct {
		name   string
		decode func(echo.Context, any) error
	}{{"decodeJSONFast (JSON v2)", decodeJSONFast}, {"the API's decodeJSON", decodeJSON}} {
		b.Run(decoder.name, func(b *testing.B) {
			e := echo.New()
			for b.Loop() {
				req := httptest.NewRequest("POST", "/api/v1/metrics", bytes.NewReader(data))
				req.Header.Set("Content-Type", "application/json")
				var body batch
				if err := decoder.decode(e.NewContext(req, httptest.NewRecorder()), &body); err != nil {
					b.Fatal(err)
				}
				if len(body.Buckets) != 63 {
					b.Fatalf("decoded %d buckets", len(body.Buckets))
				}
			}
		})
	}
}
