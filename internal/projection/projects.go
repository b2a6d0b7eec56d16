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
// them minute by minute (catalogue.ProjectMinute).
type projectRates struct {
	candidates map[int64]string
	// hours are each project's hours by candidate, whole; minutes its
	// minutes, oldest first (for the hour under way at a moment), by index
	// in all (shared, read only: a month holds hundreds of thousands).
	hours   map[string][]traffic.Hour
	minutes map[string][]int32
	all     []catalogue.ProjectMinute
	scratch []traffic.Hour
}

// newProjectRates indexes a model's project minutes (oldest first) by
// project, naming listings as candidates (a listing not among them is
// left out: it is not the model's now).
func newProjectRates(minutes []catalogue.ProjectMinute, candidates map[int64]string) *projectRates {
	pr := &projectRates{candidates: candidates, hours: map[string][]traffic.Hour{}, minutes: map[string][]int32{}, all: minutes}
	type key struct {
		hour      time.Time
		candidate string
	}
	at := map[string]map[key]int{}
	for j := range minutes {
		m := &minutes[j]
		id, ok := candidates[m.ListingID]
		if !ok {
			continue
		}
		pr.minutes[m.Project] = append(pr.minutes[m.Project], int32(j))
		if at[m.Project] == nil {
			at[m.Project] = map[key]int{}
		}
		k := key{m.Minute.Truncate(time.Hour), id}
		i, found := at[m.Project][k]
		if !found {
			i = len(pr.hours[m.Project])
			at[m.Project][k] = i
			pr.hours[m.Project] = append(pr.hours[m.Project], traffic.Hour{Start: k.hour, Candidate: id})
		}
		addMinute(&pr.hours[m.Project][i], m, 1)
	}
	return pr
}

// addMinute adds part of a project's minute to an hour.
func addMinute(h *traffic.Hour, m *catalogue.ProjectMinute, part float64) {
	if part >= 1 {
		h.Successes += m.Answers
		h.InputTokens += m.InputTokens
		h.CachedInputTokens += m.CachedInputTokens
		h.OutputTokens += m.OutputTokens
		h.ResponseCacheHits += m.ResponseCacheHits
		return
	}
	of := func(n int64) int64 { return int64(float64(n)*part + 0.5) }
	h.Successes += of(m.Answers)
	h.InputTokens += of(m.InputTokens)
	h.CachedInputTokens += min(of(m.CachedInputTokens), of(m.InputTokens))
	h.OutputTokens += of(m.OutputTokens)
	h.ResponseCacheHits += of(m.ResponseCacheHits)
}

// at is what routing had learned of project by from: the project's hours
// before from's hour whole, and of from's hour its minutes up to
// learnedLag before from (the minute under way in part, as even over it).
func (pr *projectRates) at(project string, from time.Time) traffic.Learned {
	// Both lists are in time order (the store reads minutes oldest
	// first): a month's parts each read only their day.
	hour := from.Truncate(time.Hour)
	all := pr.hours[project]
	first := sort.Search(len(all), func(i int) bool { return all[i].Start.After(from.Add(-traffic.LearnedWindow - time.Hour)) })
	hours := pr.scratch[:0]
	for _, h := range all[first:] {
		if !h.Start.Before(hour) {
			break
		}
		hours = append(hours, h)
	}
	cut := from.Add(-learnedLag)
	current := map[string]int{}
	minutes := pr.minutes[project]
	for _, j := range minutes[sort.Search(len(minutes), func(i int) bool { return !pr.all[minutes[i]].Minute.Before(hour) }):] {
		m := &pr.all[j]
		if !m.Minute.Before(cut) {
			break
		}
		id := pr.candidates[m.ListingID]
		i, found := current[id]
		if !found {
			i = len(hours)
			current[id] = i
			hours = append(hours, traffic.Hour{Start: hour, Candidate: id})
		}
		addMinute(&hours[i], m, min(1, cut.Sub(m.Minute).Minutes()))
	}
	pr.scratch = hours
	return traffic.Learn(hours, from)
}

// parts are the moment's parts of each shape by project (shares: shape key
// to project to part, preview.ProjectPartsFromDemand), each with the rates
// routing had learned of its project by from; projects learned alike share
// one part (one ballot), in the order of their pseudonyms.
//
// A model none of whose projects' minutes were reported (a gateway that
// names projects in its demand but does not post their minutes, or not
// yet) keeps every request on the model's rates: nil.
func (pr *projectRates) parts(shares map[string]map[string]float64, from time.Time) map[string][]preview.ProjectPart {
	if len(shares) == 0 || len(pr.minutes) == 0 {
		return nil
	}
	learned := map[string]traffic.Learned{}
	out := make(map[string][]preview.ProjectPart, len(shares))
	for shape, byProject := range shares {
		var parts []preview.ProjectPart
		for _, project := range slices.Sorted(maps.Keys(byProject)) {
			l, ok := learned[project]
			if !ok {
				l = pr.at(project, from)
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
