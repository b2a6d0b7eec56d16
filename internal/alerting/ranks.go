package alerting

import (
	"context"
	"fmt"
	"sort"
	"strings"
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
	r := Ranks{Rank: map[int64]map[string]int64{}, Revision: map[int64]int64{}, Names: map[string]string{},
		Model: map[int64]string{}, Listing: map[int64]string{}}
	for _, model := range markets.Models() {
		m, _ := markets.Market(model)
		for _, l := range m.Listings {
			r.Revision[l.ID], r.Model[l.ID], r.Listing[l.ID] = l.Revision, model, l.CarrierSlug+"/"+model
			r.Catalogue = max(r.Catalogue, l.Revision)
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

// RankState is one listing's rank in one scenario as the last pass saw
// it, with its own revision then, and the baseline the rank rule compares
// with: the rank when the listing last changed itself, or its best since,
// with the catalogue's revision at that moment (a competitor published
// after it is one that may have moved it).
type RankState struct {
	Rank, OwnRevision           int64
	Baseline, BaselineCatalogue int64
}

// rankFindings judges the rank rule for every listing: it holds while a
// standard scenario's rank is at least the carrier's threshold worse than
// its baseline and the listing did not change itself. A listing seen for
// the first time is not judged.
func (e *Evaluator) rankFindings(ctx context.Context, listings []Listing, signals map[int64]Signals, rules map[int64]CarrierRules, r Rules) (map[int64]Finding, error) {
	now := e.Now().UTC()
	ranks, err := e.Ranks(ctx, now)
	if err != nil {
		return nil, err
	}
	before, err := e.Store.ListingRanks(ctx)
	if err != nil {
		return nil, err
	}
	seen := map[int64]map[string]RankState{}
	out := map[int64]Finding{}
	for _, l := range listings {
		threshold := max(int64(rules[l.CarrierID].Of(RankMoved).Threshold), 1)
		scenarios := make([]string, 0, len(ranks.Rank[l.ID]))
		for sc := range ranks.Rank[l.ID] {
			scenarios = append(scenarios, sc)
		}
		sort.Strings(scenarios)
		var moves, passedBy []string
		judged := false
		for _, sc := range scenarios {
			rank, rev := ranks.Rank[l.ID][sc], ranks.Revision[l.ID]
			st := RankState{Rank: rank, OwnRevision: rev, Baseline: rank, BaselineCatalogue: ranks.Catalogue}
			prev, ok := before[l.ID][sc]
			judged = judged || ok
			if ok && prev.OwnRevision == rev && rank > prev.Baseline {
				st.Baseline, st.BaselineCatalogue = prev.Baseline, prev.BaselineCatalogue
				if rank-prev.Baseline >= threshold {
					moves = append(moves, rankMove(ranks.Names[sc], rank, prev.Baseline))
					passedBy = append(passedBy, ranks.publishedAbove(l.ID, sc, prev.BaselineCatalogue)...)
				}
			}
			if seen[l.ID] == nil {
				seen[l.ID] = map[string]RankState{}
			}
			seen[l.ID][sc] = st
		}
		switch {
		case !judged:
		case len(moves) == 0:
			out[l.ID] = Finding{Detail: "no standard scenario ranks it below its baseline now (its rank when it last changed itself, or its best since)"}
		default:
			out[l.ID] = Finding{Holds: true, Detail: rankMovedDetail(moves, rankCause(passedBy, signals[l.ID], r))}
		}
	}
	if err := e.Store.SaveListingRanks(ctx, seen); err != nil {
		return nil, err
	}
	return out, nil
}

// publishedAbove names the listings of id's model ranked above it in sc
// now whose catalogue revision is newer than since: competitors that
// published a change after the baseline.
func (r Ranks) publishedAbove(id int64, sc string, since int64) []string {
	var out []string
	for other, byScenario := range r.Rank {
		if other == id || r.Model[other] != r.Model[id] {
			continue
		}
		if rank, ok := byScenario[sc]; ok && rank < r.Rank[id][sc] && r.Revision[other] > since {
			out = append(out, fmt.Sprintf("%s (catalogue revision %d)", r.Listing[other], r.Revision[other]))
		}
	}
	return out
}

// rankCause names what moved a listing down, from the data: the
// competitors that published a change since the baseline, else the
// listing's own health, cap or breaker, else its competitors' measured
// health (no fare changed).
func rankCause(passedBy []string, s Signals, r Rules) string {
	if len(passedBy) > 0 {
		sort.Strings(passedBy)
		return "moved by a competitor's publication: " + strings.Join(dedupe(passedBy), ", ")
	}
	var own []string
	if o := s.BreakerOpened; o != nil && (s.BreakerClosed == nil || s.BreakerClosed.Before(*o)) {
		own = append(own, "the gateway's breaker holds it out since "+o.UTC().Format("15:04")+" UTC")
	}
	if s.CappedMinutes > 0 {
		own = append(own, fmt.Sprintf("it turned requests away at its cap in %d of the last 60 minutes", s.CappedMinutes))
	}
	if s.Requests >= r.MinRequests && s.Failures > 0 {
		if up := 100 * float64(s.Requests-s.Failures) / float64(s.Requests); up < election.PenaltyUptime {
			own = append(own, fmt.Sprintf("its uptime is %.1f %% over the last %d minutes", up, int(r.Window.Minutes())))
		}
	}
	if len(own) > 0 {
		return "no competitor published a change; its own health moved it: " + strings.Join(own, "; ")
	}
	return "no competitor published a change: the health routing measures (uptime, latency, throughput) moved a competitor ahead"
}

func dedupe(sorted []string) []string {
	out := sorted[:0]
	for i, s := range sorted {
		if i == 0 || s != sorted[i-1] {
			out = append(out, s)
		}
	}
	return out
}
