package projection

import (
	"testing"

	"github.com/airside/airside/internal/catalogue"
	"github.com/airside/airside/internal/fare"
	"github.com/airside/airside/internal/money"
	"github.com/airside/airside/internal/preview"
)

// TestThePastIsKeptAcrossPublications: the projection of a model's frozen
// hours is keyed by what of its market those hours read. A fare published
// now (on this model or another) keeps them; a listing joining the model,
// a pause, a priority, a capability verdict or stored health starts them
// again.
func TestThePastIsKeptAcrossPublications(t *testing.T) {
	uptime := 99.5
	base := func() preview.Market {
		return preview.Market{
			Listings: []catalogue.Listing{
				{ID: 1, CarrierSlug: "nebula", Status: catalogue.StatusInService, PriorityBP: 10000, Published: &fare.Fare{ID: 10, Input: 400000}},
				{ID: 2, CarrierSlug: "orbit", Status: catalogue.StatusInService, PriorityBP: 10000, Published: &fare.Fare{ID: 20, Input: 500000},
					Health: catalogue.Health{UptimePct: &uptime}},
			},
			Checks: map[int64]map[string]string{1: {"tools": "verified", "vision": "failed"}},
		}
	}
	was := marketPrint(base())
	for _, test := range []struct {
		name   string
		change func(m *preview.Market)
		kept   bool
	}{
		{"nothing", func(*preview.Market) {}, true},
		{"a fare published now", func(m *preview.Market) { m.Listings[0].Published = &fare.Fare{ID: 11, Input: money.Micros(100000)} }, true},
		{"a listing joins", func(m *preview.Market) {
			m.Listings = append(m.Listings, catalogue.Listing{ID: 3, Status: catalogue.StatusInService, PriorityBP: 10000})
		}, false},
		{"a pause", func(m *preview.Market) { m.Listings[1].Status = catalogue.StatusPaused }, false},
		{"a priority", func(m *preview.Market) { m.Listings[1].PriorityBP = 5000 }, false},
		{"a verdict", func(m *preview.Market) { m.Checks[1]["vision"] = "verified" }, false},
		{"a verdict for another listing", func(m *preview.Market) { m.Checks[2] = map[string]string{"tools": "verified"} }, false},
		{"stored health", func(m *preview.Market) { u := 90.0; m.Listings[1].Health.UptimePct = &u }, false},
	} {
		m := base()
		test.change(&m)
		if kept := marketPrint(m) == was; kept != test.kept {
			t.Errorf("%s: past hours kept %v, want %v", test.name, kept, test.kept)
		}
	}
}
