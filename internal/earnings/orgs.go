package earnings

import (
	"sort"

	"github.com/airside/airside/internal/catalogue"
)

// OrgLine is one customer organisation's period on a carrier's listings:
// its traffic and what it earned the carrier, at the fares in force hour
// by hour (as a statement's lines).
type OrgLine struct {
	Organisation string
	// Listings is how many of the carrier's listings it used.
	Listings int
	Traffic
	Unpriced int64
	Money
}

// ByOrganisation sums each organisation's hours across listings and prices
// them with each listing's fare history, busiest first (then by label).
func ByOrganisation(hours map[int64]map[string][]catalogue.HourlyPoint, history map[int64][]FareSpan) []OrgLine {
	sums := map[string]*Sum{}
	used := map[string]int{}
	for listing, byOrg := range hours {
		for org, points := range byOrg {
			s := sums[org]
			if s == nil {
				s = &Sum{}
				sums[org] = s
			}
			used[org]++
			for _, h := range points {
				s.Add(h, FareAt(history[listing], h.Hour))
			}
		}
	}
	out := make([]OrgLine, 0, len(sums))
	for org, s := range sums {
		out = append(out, OrgLine{Organisation: org, Listings: used[org], Traffic: s.Traffic, Unpriced: s.Unpriced, Money: s.Money()})
	}
	sort.Slice(out, func(i, j int) bool {
		if out[i].Requests != out[j].Requests {
			return out[i].Requests > out[j].Requests
		}
		return out[i].Organisation < out[j].Organisation
	})
	return out
}
