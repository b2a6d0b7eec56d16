package feed

import (
	"encoding/json"
	"strings"
	"testing"
	"time"

	"github.com/airside/airside/internal/fare"
	"github.com/airside/airside/internal/money"
)

func TestPerMillionMovesTheDecimalPointExactly(t *testing.T) {
	tests := []struct{ in, want string }{
		{"0.00000025", "0.25"},
		{"0.000002", "2"},
		{"0.0000001", "0.1"}, // no float drift on 0.1
		{"0.000000252525", "0.252525"},
		{"0", "0"},
		{"1", "1000000"},
	}
	for _, tt := range tests {
		got, err := PerMillion(tt.in)
		if err != nil || got != tt.want {
			t.Errorf("PerMillion(%q) = %q, %v; want %q", tt.in, got, err, tt.want)
		}
	}
	for _, bad := range []string{"", "-0.1", "1e-7", "abc", "1/3"} {
		if _, err := PerMillion(bad); err == nil {
			t.Errorf("PerMillion(%q) read as a price", bad)
		}
	}
}

func TestAFeedModelBecomesTheFareFields(t *testing.T) {
	ctx, out := int64(131072), int64(16384)
	m := Model{ID: "moonshotai/Kimi-K2.5", Quantization: "FP8", ContextLength: &ctx, MaxOutputLength: &out,
		InputModalities: []string{"text", "image"}, SupportedFeatures: []string{"tools", "json_mode", "unknown"},
		Datacenters: []Datacenter{{"de"}, {"US"}, {"DE"}},
		Pricing:     Pricing{Prompt: "0.00000045", Completion: "0.0000022", InputCacheRead: "0.0000001", Request: "0.001", Image: "0"}}
	if m.Slug() != "kimi-k2.5" {
		t.Errorf("slug %q", m.Slug())
	}
	fields, err := m.Fields()
	if err != nil {
		t.Fatal(err)
	}
	var form fare.Form
	if errs := fare.Apply(&form, fields); errs != nil {
		t.Fatalf("the fields do not apply: %v", errs)
	}
	want := map[string]string{"input": "0.45", "output": "2.2", "cached_input": "0.1", "cache_write": "", "request_price": "0.001",
		"image_price": "", "context_length": "131072", "max_output_tokens": "16384", "quantization": "fp8", "regions": "DE, US"}
	for key, v := range want {
		if got := fare.MustField(key).Value(&form); got != v {
			t.Errorf("%s = %q, want %q", key, got, v)
		}
	}
	if got := strings.Join(form.Capabilities, ","); got != "json_output,tools,vision" {
		t.Errorf("capabilities %q", got)
	}
	form.Justification, form.LandingFee, form.Discount, form.CapScope = "feed", "20", "0", "global"
	if _, errs := form.Parse(time.Date(2026, 12, 4, 0, 0, 0, 0, time.UTC)); errs != nil {
		t.Errorf("the feed's fare does not pass the form's checks: %v", errs)
	}
}

func TestAUnitMistakeIsNamed(t *testing.T) {
	published := &fare.Fare{Input: money.Micros(450_000), Output: money.Micros(2_200_000)}
	tests := []struct {
		name          string
		prompt        string
		input, output money.Micros
		want          string
	}{
		{"per million written as per token", "0.45", 450_000_000_000, 2_200_000, "1,000,000 times"},
		{"a price a thousandth of the published", "0.00000000045", 450, 2_200_000, "1/1,000 of"},
		{"a tenfold cut is a price, not a unit", "0.000000045", 45_000, 2_200_000, ""},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			m := Model{ID: "moonshotai/kimi-k2.5", Pricing: Pricing{Prompt: tt.prompt, Completion: "0.0000022"}}
			got := UnitMistake(&m, published, &fare.Fare{Input: tt.input, Output: tt.output})
			if tt.want == "" && got != "" || tt.want != "" && !strings.Contains(got, tt.want) {
				t.Errorf("got %q, want one saying %q", got, tt.want)
			}
		})
	}
}

func TestParseRefusesWhatIsNotAFeed(t *testing.T) {
	for _, bad := range []string{`[]`, `{"data":[]}`, `{"data":[{"id":"","pricing":{"prompt":"1","completion":"1"}}]}`,
		`{"data":[{"id":"m"}]}`, `<html>`} {
		if _, err := Parse(strings.NewReader(bad)); err == nil {
			t.Errorf("%s read as a feed", bad)
		}
	}
	doc, err := Parse(strings.NewReader(`{"data":[{"id":"a/m","pricing":{"prompt":"0.000001","completion":"0.000002"}}]}`))
	if err != nil || len(doc.Data) != 1 {
		t.Fatalf("%v %v", doc, err)
	}
	raw, _ := json.Marshal(doc)
	if !strings.Contains(string(raw), `"prompt":"0.000001"`) {
		t.Errorf("round trip %s", raw)
	}
}
