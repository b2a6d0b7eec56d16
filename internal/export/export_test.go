package export

import (
	"testing"

	"github.com/airside/airside/internal/catalogue"
	"github.com/airside/airside/internal/election"
	"github.com/airside/airside/internal/fare"
	"github.com/airside/airside/internal/money"
)

func TestPricesArePerTokenExactly(t *testing.T) {
	for _, test := range []struct {
		perMillion string
		discount   money.BasisPoints
		want       string
	}{
		{"0.55", 0, "0.00000055"},
		{"0.55", 1000, "0.000000495"},         // what developers pay: 10 % off
		{"0.123457", 500, "0.00000011728415"}, // six decimals and a discount: 14 places, exact
		{"2.20", 0, "0.0000022"},
		{"0", 0, "0"},
		{"1250", 0, "0.00125"},
	} {
		m, err := money.ParsePrice(test.perMillion)
		if err != nil {
			t.Fatal(err)
		}
		f := &fare.Fare{Discount: test.discount}
		if got := perToken(f, &m); got != test.want {
			t.Errorf("%s per million at %d bp off: %s per token, want %s", test.perMillion, test.discount, got, test.want)
		}
	}
	fee := money.Micros(500) // $0.0005 a request
	if got := perUnit(&fare.Fare{}, &fee); got != "0.0005" {
		t.Errorf("a request fee: %s", got)
	}
}

func TestOpenRouterAndLiteLLMShapes(t *testing.T) {
	ctxLen, maxOut := int64(131072), int64(16384)
	cached, fee := money.Micros(100000), money.Micros(10)
	model := catalogue.Model{Slug: "kimi-k2.5", Name: "Kimi K2.5", ContextTokens: 262144}
	listings := []Listing{
		{Listing: &catalogue.Listing{ID: 1, CarrierSlug: "orbit", CarrierName: "Orbit", Model: model, Status: catalogue.StatusInService,
			Published: &fare.Fare{Input: 550000, Output: 2200000, CachedInput: &cached, Discount: 1000,
				Market: fare.Market{ContextLength: &ctxLen, MaxOutputTokens: &maxOut, Quantization: "fp8", Regions: []string{"DE", "US"}, RequestPrice: &fee}}},
			Verified: []election.Capability{election.CapTools, election.CapVision}},
		{Listing: &catalogue.Listing{ID: 2, CarrierSlug: "atlas", CarrierName: "Atlas", Model: model, Status: catalogue.StatusPaused,
			Published: &fare.Fare{Input: 400000, Output: 1600000}}},
	}
	doc := OpenRouter(listings)
	if len(doc.Data) != 1 {
		t.Fatalf("%d models", len(doc.Data))
	}
	m := doc.Data[0]
	if m.Pricing.Prompt != "0.0000004" || len(m.Endpoints) != 2 || m.Endpoints[0].Tag != "atlas" || m.Endpoints[0].Status != -1 {
		t.Errorf("model %+v", m)
	}
	if m.Architecture.InputModalities[len(m.Architecture.InputModalities)-1] != "image" || m.ContextLength != 262144 {
		t.Errorf("architecture %+v, context %d", m.Architecture, m.ContextLength)
	}
	orbit := m.Endpoints[1]
	if orbit.ContextLength != 131072 || *orbit.MaxCompletionTokens != 16384 || orbit.Quantization != "fp8" || len(orbit.Datacenters) != 2 ||
		orbit.Pricing.Prompt != "0.000000495" || orbit.Pricing.InputCacheRead != "0.00000009" || orbit.Pricing.Request != "0.000009" {
		t.Errorf("orbit's endpoint %+v", orbit)
	}
	if m.Endpoints[0].Quantization != "unknown" || m.Endpoints[0].ContextLength != 262144 {
		t.Errorf("an undeclared endpoint %+v", m.Endpoints[0])
	}

	lite := LiteLLM(listings)
	e, ok := lite["airside/orbit/kimi-k2.5"]
	if !ok || len(lite) != 2 {
		t.Fatalf("the map %v", lite)
	}
	if e.InputCostPerToken != 4.95e-07 || e.OutputCostPerToken != 1.98e-06 || e.MaxInputTokens != 131072 || e.MaxOutputTokens != 16384 ||
		!e.SupportsFunctionCalling || !e.SupportsVision || e.SupportsReasoning || e.InputCostPerRequest == nil || *e.InputCostPerRequest != 9e-06 {
		t.Errorf("orbit in LiteLLM's map %+v", e)
	}
}
