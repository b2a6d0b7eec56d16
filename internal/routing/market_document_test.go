package routing

import (
	"encoding/json"
	"testing"

	"github.com/airside/airside/internal/catalogue"
	"github.com/airside/airside/internal/election"
	"github.com/airside/airside/internal/fare"
	"github.com/airside/airside/internal/money"
)

// TestTheCatalogueCarriesTheMarket: a published fare's attributes of sec. 7
// reach the catalogue document in the contract's names, and read back
// through the contract's decoder (as the gateway reads them) as the fare
// has them; undeclared ones are absent, not empty.
func TestTheCatalogueCarriesTheMarket(t *testing.T) {
	ctxLen, retention, trains := int64(131072), int64(30), false
	fee := money.Micros(500)
	l := &catalogue.Listing{ID: 7, CarrierSlug: "orbit", Model: catalogue.Model{Slug: "kimi"}, Status: catalogue.StatusInService,
		PriorityBP: 10000, Published: &fare.Fare{Input: 400000, Output: 1600000, LandingFee: fare.BaselineLandingFee,
			Market: fare.Market{ContextLength: &ctxLen, Quantization: "fp8", RetentionDays: &retention, TrainsOnPrompts: &trains,
				Regions: []string{"DE", "FR"}, RequestPrice: &fee}}}
	doc := ListingDocument(l, nil)
	body, err := json.Marshal(doc.Fare)
	if err != nil {
		t.Fatal(err)
	}
	var keys map[string]json.RawMessage
	if err := json.Unmarshal(body, &keys); err != nil {
		t.Fatal(err)
	}
	for _, want := range []string{"contextLength", "quantization", "retentionDays", "trainsOnPrompts", "regions", "requestPrice"} {
		if _, ok := keys[want]; !ok {
			t.Errorf("the document lacks %s: %s", want, body)
		}
	}
	for _, absent := range []string{"maxOutputTokens", "imagePrice"} {
		if _, ok := keys[absent]; ok {
			t.Errorf("undeclared %s is in the document: %s", absent, body)
		}
	}
	ballot, err := election.UnmarshalBallot([]byte(`{"request":{"model":"kimi"},"candidates":[{"id":"orbit/kimi","fare":` + string(body) + `}]}`))
	if err != nil {
		t.Fatal(err)
	}
	f := ballot.Candidates[0].Fare
	if *f.ContextLength != ctxLen || f.Quantization.String() != "fp8" || f.DataPolicy.ZDR() || f.DataPolicy.Trains() ||
		len(f.Regions) != 2 || f.RequestPrice != 0.0005 || f.ImagePrice != 0 {
		t.Errorf("the contract reads %+v", f)
	}
}
