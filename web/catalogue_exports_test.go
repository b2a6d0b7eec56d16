package web_test

import (
	"encoding/json"
	"math/big"
	"net/http"
	"testing"

	"github.com/airside/airside/internal/catalogue"
	"github.com/airside/airside/internal/store"
)

// TestExportsServeThePublishedCatalogue: the catalogue in OpenRouter's
// /models shape and LiteLLM's price map, public, revalidated by ETag, each
// listing's price what developers pay per token, to the last digit of the
// published fare.
func TestExportsServeThePublishedCatalogue(t *testing.T) {
	p := newPortal(t, store.SQLite)
	anon := p.client()
	listings, err := p.store.FindListings(t.Context(), catalogue.ListingFilter{})
	if err != nil {
		t.Fatal(err)
	}
	var orbitKimi *catalogue.Listing
	for i := range listings {
		if listings[i].CarrierSlug == "orbit" && listings[i].Model.Slug == "kimi-k2.5" {
			orbitKimi = &listings[i]
		}
	}
	f := orbitKimi.Published
	// What a developer pays per token: filed per million x (1 - discount) / 1e6.
	want := new(big.Rat).SetFrac64(int64(f.Input)*(10000-int64(f.Discount)), 10000*1_000_000*1_000_000)

	res := anon.get("/exports/openrouter/models.json")
	wantStatus(t, "OpenRouter export", res, http.StatusOK)
	var doc struct {
		Data []struct {
			ID        string
			Endpoints []struct {
				Tag           string
				ContextLength int64  `json:"context_length"`
				Quantization  string `json:"quantization"`
				Pricing       struct{ Prompt string }
				Datacenters   []struct {
					CountryCode string `json:"country_code"`
				}
				SupportedParameters []string `json:"supported_parameters"`
			}
		}
	}
	if err := json.Unmarshal([]byte(res.body), &doc); err != nil {
		t.Fatal(err)
	}
	found := false
	for _, m := range doc.Data {
		for _, e := range m.Endpoints {
			if m.ID != "kimi-k2.5" || e.Tag != "orbit" {
				continue
			}
			found = true
			got, ok := new(big.Rat).SetString(e.Pricing.Prompt)
			if !ok || got.Cmp(want) != 0 {
				t.Errorf("orbit/kimi-k2.5 exported at %s a token, want %s", e.Pricing.Prompt, want.FloatString(16))
			}
			if e.ContextLength != *f.ContextLength || e.Quantization != f.Quantization || len(e.Datacenters) != len(f.Regions) {
				t.Errorf("orbit/kimi-k2.5's facts: %+v", e)
			}
		}
	}
	if !found {
		t.Fatalf("orbit/kimi-k2.5 is not in the export:\n%.2000s", res.body)
	}
	etag := res.header.Get("ETag")
	req, _ := http.NewRequest("GET", anon.base+"/exports/openrouter/models.json", nil)
	req.Header.Set("If-None-Match", etag)
	if again := anon.do(req); again.status != http.StatusNotModified {
		t.Errorf("revalidated with its ETag %q: %d", etag, again.status)
	}

	res = anon.get("/exports/litellm/model_prices.json")
	wantStatus(t, "LiteLLM export", res, http.StatusOK)
	var lite map[string]struct {
		InputCostPerToken float64 `json:"input_cost_per_token"`
		LiteLLMProvider   string  `json:"litellm_provider"`
	}
	if err := json.Unmarshal([]byte(res.body), &lite); err != nil {
		t.Fatal(err)
	}
	e, ok := lite["airside/orbit/kimi-k2.5"]
	if w, _ := want.Float64(); !ok || e.InputCostPerToken != w || e.LiteLLMProvider != "airside" {
		t.Errorf("LiteLLM's entry %+v, want %v a token", e, w)
	}
	if res.header.Get("ETag") == etag {
		t.Error("the two exports share an ETag")
	}
}
