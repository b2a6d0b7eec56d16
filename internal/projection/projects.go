package projection

import (
	"maps"
	"slices"
	"sort"
	"time"

	"github.com/airside/airside/internal/catalogue"
	"github.com/airside/airside/internal/preview"
	"github.com/airside/airside/internal/traffic"
)

// projectRates learns an API project's rates at a moment as the gateway
// does (seed 001; Gateway.learned): from the project's answers on each
// listing of the model over the learned window, as the gateways reported
// them (catalogue.ProjectHour, their minutes added up).
type projectRates struct {
	// hours are each project's hours by candidate, oldest first.
	hours   map[string][]traffic.Hour
	scratch []traffic.Hour
}

// newProjectRates indexes a model's project hours (oldest first) by
// project, naming listings as candidates (a listing not among them is
// left out: it is not the model's now).
func newProjectRates(hours []catalogue.ProjectHour, candidates map[int64]string) *projectRates {
	pr := &projectRates{hours: map[string][]traffic.Hour{}}
	for _, h := range hours {
		id, ok := candidates[h.ListingID]
		if !ok {
			continue
		}
		pr.hours[h.Project] = append(pr.hours[h.Project], traffic.Hour{Start: h.Hour, Candidate: id, Successes: h.Answers,
			InputTokens: h.InputTokens, CachedInputTokens: h.CachedInputTokens, OutputTokens: h.OutputTokens, ResponseCacheHits: h.ResponseCacheHits})
	}
	return pr
}

// at is what routing had learned of project by from: the project's hours
// before from's hour whole, and done of from's hour (the part of the
// model's requests of that hour routing had learned from by then, as the
// rates learned of the whole model take it: hourSplits), taken evenly from
// the project's figures for the hour.
func (pr *projectRates) at(project string, from time.Time, done float64) traffic.Learned {
	hour := from.Truncate(time.Hour)
	all := pr.hours[project] // in time order: a month's parts each read only their day
	first := sort.Search(len(all), func(i int) bool { return all[i].Start.After(from.Add(-traffic.LearnedWindow - time.Hour)) })
	hours := pr.scratch[:0]
	for _, h := range all[first:] {
		switch {
		case h.Start.Before(hour):
			hours = append(hours, h)
		case h.Start.Equal(hour) && done > 0:
			part := func(n int64) int64 { return int64(done*float64(n) + 0.5) }
			hours = append(hours, traffic.Hour{Start: h.Start, Candidate: h.Candidate, Successes: part(h.Successes), InputTokens: part(h.InputTokens),
				CachedInputTokens: min(part(h.CachedInputTokens), part(h.InputTokens)), OutputTokens: part(h.OutputTokens),
				ResponseCacheHits: part(h.ResponseCacheHits)})
		}
		if h.Start.After(hour) {
			break
		}
	}
	pr.scratch = hours
	return traffic.Learn(hours, from)
}

// learnedDone is the part of its hour's requests routing had learned from
// by the start of an hour's part i (learnedPart: hourSplits), none at the
// hour's start, as the rates learned of the whole model take it.
func learnedDone(i int, learnedPart []float64) float64 {
	if i == 0 || i >= len(learnedPart) {
		return 0
	}
	return learnedPart[i]
}

// parts are the moment's parts of each shape by project (shares: shape key
// to project to part, preview.ProjectPartsFromDemand), each with the rates
// routing had learned of its project by from (done of from's hour).
//
// A model none of whose projects' hours were reported (a gateway that
// names projects in its demand but does not post their minutes, or not
// yet) keeps every request on the model's rates: nil.
func (pr *projectRates) parts(shares map[string]map[string]float64, from time.Time, done float64) map[string][]preview.ProjectPart {
	if len(pr.hours) == 0 {
		return nil
	}
	return groupProjects(shares, func(project string) traffic.Learned { return pr.at(project, from, done) })
}

// learnedAll is what routing had learned of every project reported by at
// (the whole of at's hour so far, as traffic.Learn takes it): where a
// projection leaves routing (projectionEnd). Nil when no project's hours
// were reported, as parts.
func (pr *projectRates) learnedAll(at time.Time) map[string]traffic.Learned {
	if len(pr.hours) == 0 {
		return nil
	}
	out := make(map[string]traffic.Learned, len(pr.hours))
	for project := range pr.hours {
		out[project] = pr.at(project, at, 1)
	}
	return out
}

// groupProjects is each shape's parts by project (shares), each with the
// rates learnedOf gives its project; projects learned alike share one part
// (one ballot), in the order of their pseudonyms. Nil for no shares.
func groupProjects(shares map[string]map[string]float64, learnedOf func(project string) traffic.Learned) map[string][]preview.ProjectPart {
	if len(shares) == 0 {
		return nil
	}
	learned := map[string]traffic.Learned{}
	out := make(map[string][]preview.ProjectPart, len(shares))
	for shape, byProject := range shares {
		var parts []preview.ProjectPart
		for _, project := range slices.Sorted(maps.Keys(byProject)) {
			l, ok := learned[project]
			if !ok {
				l = learnedOf(project)
				learned[project] = l
			}
			if i := slices.IndexFunc(parts, func(p preview.ProjectPart) bool { return sameLearned(p.Learned, l) }); i >= 0 {
				parts[i].Part += byProject[project]
				continue
			}
			parts = append(parts, preview.ProjectPart{Part: byProject[project], Learned: l})
		}
		out[shape] = parts
	}
	return out
}

// sameLearned reports two sets of learned rates that elect alike.
func sameLearned(a, b traffic.Learned) bool {
	same := func(x, y *float64) bool { return x == nil && y == nil || x != nil && y != nil && *x == *y }
	return same(a.Combined, b.Combined) && same(a.OutputRatio, b.OutputRatio) && maps.Equal(a.HitRate, b.HitRate)
}

func projectHourPoints(m map[string][]catalogue.ProjectHour) int {
	n := 1
	for _, h := range m {
		n += len(h)
	}
	return n
}
