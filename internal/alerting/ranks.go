package alerting

import (
	"time"

	"github.com/airside/airside/internal/election"
	"github.com/airside/airside/internal/preview"
)

// Markets is the published routing catalogue, model by model (the routing
// snapshot).
type Markets interface {
	Models() []string
	Market(model string) (preview.Market, bool)
}

// RanksOf is every listing's rank in each standard scenario now, elected on
// the published markets: what the rank alerts compare with the ranks of the
// last pass.
func RanksOf(markets Markets, now time.Time) Ranks {
	r := Ranks{Rank: map[int64]map[string]int64{}, Revision: map[int64]int64{}, Names: map[string]string{}}
	for _, model := range markets.Models() {
		m, _ := markets.Market(model)
		for _, l := range m.Listings {
			r.Revision[l.ID] = l.Revision
		}
		for _, sc := range preview.StandardScenarios() {
			r.Names[sc.Key] = sc.Name
			b, entries, _ := m.BallotEntries(sc.Request(model, now), preview.Change{})
			res := election.Elect(&b)
			for i, c := range res.Candidates {
				if i < len(entries) && c.Rank > 0 {
					id := entries[i].Listing.ID
					if r.Rank[id] == nil {
						r.Rank[id] = map[string]int64{}
					}
					r.Rank[id][sc.Key] = int64(c.Rank)
				}
			}
		}
	}
	return r
}
