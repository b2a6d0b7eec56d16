package export

import (
	"bytes"
	"encoding/json"
	"testing"
	"time"

	"github.com/airside/airside/internal/catalogue"
	"github.com/airside/airside/internal/election"
	"github.com/airside/airside/internal/fare"
	"github.com/airside/airside/internal/feed"
	"github.com/airside/airside/internal/money"
)

// TestAProviderFeedReadsBackAsTheFareItWasWrittenFrom: a carrier's
// published fares written as its provider feed and read back by the feed
// reader give the same fare to the last digit (every field the format can
// say: prices with six decimals, fees, limits, quantization, regions,
// capabilities), so a feed the portal itself writes files nothing.
func TestAProviderFeedReadsBackAsTheFareItWasWrittenFrom(t *testing.T) {
	ctxLen, maxOut := int64(131072), int64(16384)
	cached, write, fee, image := money.Micros(123457), money.Micros(600000), money.Micros(10), money.Micros(1500)
	fares := []*fare.Fare{
		{Input: 550001, Output: 2200000, CachedInput: &cached, CacheWrite: &write, LandingFee: 2000, Discount: 1500, CapScope: fare.ScopeGlobal,
			Capabilities: []election.Capability{election.CapTools, election.CapVision, election.CapJSONSchema},
			Market:       fare.Market{ContextLength: &ctxLen, MaxOutputTokens: &maxOut, Quantization: "fp8", Regions: []string{"DE", "US"}, RequestPrice: &fee, ImagePrice: &image}},
		{Input: 400000, Output: 1600000, LandingFee: 2000, CapScope: fare.ScopeGlobal},
	}
	var listings []catalogue.Listing
	for i, f := range fares {
		listings = append(listings, catalogue.Listing{ID: int64(i + 1), Model: catalogue.Model{Slug: []string{"kimi-k2.5", "glm-5"}[i]}, Published: f})
	}
	var buf bytes.Buffer
	if err := json.NewEncoder(&buf).Encode(ProviderFeed(listings)); err != nil {
		t.Fatal(err)
	}
	doc, err := feed.Parse(&buf)
	if err != nil || len(doc.Data) != len(fares) {
		t.Fatalf("read back: %v (%d models)", err, len(doc.Data))
	}
	for i, m := range doc.Data {
		published := fares[i]
		fields, err := m.Fields()
		if err != nil {
			t.Fatal(err)
		}
		form := fare.FormOf(published)
		if errs := fare.Apply(&form, fields); errs != nil {
			t.Fatalf("%s: %v", m.ID, errs)
		}
		form.Justification = "round trip"
		parsed, errs := form.Parse(time.Date(2026, 12, 4, 0, 0, 0, 0, time.UTC))
		if errs != nil {
			t.Fatalf("%s: %v", m.ID, errs)
		}
		if changes := fare.Diff(published, parsed.Fare); len(changes) != 0 {
			t.Errorf("%s came back changed: %+v", m.ID, changes)
		}
	}
}
