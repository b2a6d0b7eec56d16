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
	hours map[string][]traffic.Hour
	// declared are the rates each project declared (its hours that
	// reported any, oldest first).
	declared map[string][]declaredRates
	scratch  []traffic.Hour
}

// declaredRates are the cache rates an API project declared in the
// gateway's configuration in an hour (catalogue.ProjectHour): its
// elections take them before anything learned.
type declaredRates struct {
	hour                 time.Time
	hitRate, outputRatio *float64
}

// over is learned as the gateway elects with the declared rates: a
// declared hit rate for every listing (election.Request.CacheHitRate,
// which no listing's own rate overrides: the same election as a combined
// rate with no listing's own), a declared output ratio before the learned.
func (d declaredRates) over(learned traffic.Learned) traffic.Learned {
	if d.hitRate != nil {
		learned.HitRate, learned.Combined = nil, d.hitRate
	}
	if d.outputRatio != nil {
		learned.OutputRatio = d.outputRatio
	}
	return learned
}

// newProjectRates indexes a model's project hours (oldest first) by
// project, naming listings as candidates (a listing not among them is
// left out: it is not the model's now).
func newProjectRates(hours []catalogue.ProjectHour, candidates map[int64]string) *projectRates {
	pr := &projectRates{hours: map[string][]traffic.Hour{}, declared: map[string][]declaredRates{}}
	for _, h := range hours {
		id, ok := candidates[h.ListingID]
		if !ok {
			continue
		}
		if h.CacheHitRate != nil || h.CacheOutputRatio != nil {
			d := pr.declared[h.Project]
			if len(d) > 0 && d[len(d)-1].hour.Equal(h.Hour) {
				d = d[:len(d)-1] // one hour's listings: the gateway declares one set
			}
			pr.declared[h.Project] = append(d, declaredRates{hour: h.Hour, hitRate: h.CacheHitRate, outputRatio: h.CacheOutputRatio})
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
// the project's figures for the hour; under the rates the project
// declared, as its last hour up to from's reported them (declaredAt).
func (pr *projectRates) at(project string, from time.Time, done float64) traffic.Learned {
	learned := pr.learnedAt(project, from, done)
	if d, ok := pr.declaredAt(project, from); ok {
		return d.over(learned)
	}
	return learned
}

// declaredAt are the rates project declared in its last hour up to from's
// that reported its minutes (a gateway's configuration holds from hour to
// hour; an hour of the project with no answer yet keeps the hour
// before's). A project whose last hour declared none has none.
func (pr *projectRates) declaredAt(project string, from time.Time) (declaredRates, bool) {
	hour := from.Truncate(time.Hour)
	all, d := pr.hours[project], pr.declared[project]
	last := sort.Search(len(all), func(i int) bool { return all[i].Start.After(hour) }) - 1
	i := sort.Search(len(d), func(i int) bool { return d[i].hour.After(hour) }) - 1
	if last < 0 || i < 0 || !d[i].hour.Equal(all[last].Start) {
		return declaredRates{}, false
	}
	return d[i], true
}

// learnedAt is what routing had learned of project by from (at) from its
// answers alone.
func (pr *projectRates) learnedAt(project string, from time.Time, done float64) traffic.Learned {
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
