package store_test

import (
	"fmt"
	"maps"
	"testing"
	"time"

	"github.com/airside/airside/internal/catalogue"
	"github.com/airside/airside/internal/store"
	"github.com/airside/airside/internal/store/storetest"
)

// TestProjectMinutesAreKeptOnceAndAddUpToHours: a project's minute on a
// listing is taken once per source (a retried report adds nothing) and
// added to the project's hour, every source's and minute's together; hours
// are pruned with the holders and read back by model, oldest first.
func TestProjectMinutesAreKeptOnceAndAddUpToHours(t *testing.T) {
	storetest.ForEach(t, func(t *testing.T, s *store.Store) {
		fx := newFixture(t, s)
		now := time.Now().UTC().Truncate(time.Hour).Add(30 * time.Minute)
		s.Now = func() time.Time { return now }
		row := func(project string, minute time.Time, source string, answers int64) catalogue.ProjectMinute {
			return catalogue.ProjectMinute{Project: project, ListingID: fx.listingID, Model: "kimi-k2.5", Minute: minute, Source: source,
				Answers: answers, InputTokens: answers * 1000, CachedInputTokens: answers * 900, OutputTokens: answers * 10}
		}
		old := now.Add(-catalogue.HealthSampleRetention - time.Hour)
		before := s.MetricsWritten()
		first := []catalogue.ProjectMinute{row("prj-a", old, "", 1), row("prj-a", now.Add(-2*time.Minute), "gw-1", 3),
			row("prj-a", now.Add(-2*time.Minute), "gw-2", 4), row("prj-b", now.Add(-2*time.Minute), "gw-1", 5), row("prj-a", now.Add(-time.Minute), "gw-1", 6),
			row("prj-a", now.Add(-time.Hour), "gw-1", 2)}
		first[4].ResponseCacheHits = 2
		if n, err := s.RecordProjectMinutes(ctx, first); err != nil || n != 6 {
			t.Fatalf("first report: %d rows, %v", n, err)
		}
		if s.MetricsWritten() == before {
			t.Error("a report of project minutes did not move the metrics version")
		}
		if from, ok := s.MetricsTouchedSince(before); !ok || !from.Equal(old) {
			t.Errorf("the report touched the hours from %v (%v), want its earliest minute %v", from, ok, old)
		}
		if n, err := s.RecordProjectMinutes(ctx, []catalogue.ProjectMinute{row("prj-a", now.Add(-time.Minute), "gw-1", 60)}); err != nil || n != 0 {
			t.Fatalf("a retried minute: %d rows, %v; want none new", n, err)
		}
		byModel, err := s.ProjectHours(ctx, []string{"kimi-k2.5", "glm-5"}, old.Add(-time.Hour), now.Add(time.Hour))
		if err != nil {
			t.Fatal(err)
		}
		var seen []string
		for _, p := range byModel["kimi-k2.5"] {
			seen = append(seen, fmt.Sprintf("%s %s %d/%d/%d/%d/%d", p.Hour.Sub(now), p.Project, p.Answers, p.InputTokens, p.CachedInputTokens, p.OutputTokens, p.ResponseCacheHits))
			if p.ListingID != fx.listingID || p.Model != "kimi-k2.5" {
				t.Errorf("row read back as %+v", p)
			}
		}
		want := "[-1h30m0s prj-a 2/2000/1800/20/0 -30m0s prj-a 13/13000/11700/130/2 -30m0s prj-b 5/5000/4500/50/0]"
		if fmt.Sprint(seen) != want {
			t.Errorf("read back %v, want %s (the old hour pruned, the sources and minutes summed, the first report kept)", seen, want)
		}
		if other := byModel["glm-5"]; len(other) != 0 {
			t.Errorf("another model's hours: %v", other)
		}
	})
}

// TestAProjectsHourKeepsTheRatesItDeclaredLast: the cache rates a
// project declares come with its minutes; its hour keeps the last new
// minute's (a minute declaring none clears them), and a retried minute
// changes nothing.
func TestAProjectsHourKeepsTheRatesItDeclaredLast(t *testing.T) {
	storetest.ForEach(t, func(t *testing.T, s *store.Store) {
		fx := newFixture(t, s)
		now := time.Now().UTC().Truncate(time.Hour).Add(30 * time.Minute)
		s.Now = func() time.Time { return now }
		rate := func(v float64) *float64 { return &v }
		row := func(project string, minute time.Duration, hitRate, outputRatio *float64) catalogue.ProjectMinute {
			return catalogue.ProjectMinute{Project: project, ListingID: fx.listingID, Model: "kimi-k2.5", Minute: now.Add(-minute), Answers: 1,
				InputTokens: 100, CacheHitRate: hitRate, CacheOutputRatio: outputRatio}
		}
		read := func() string {
			t.Helper()
			byModel, err := s.ProjectHours(ctx, []string{"kimi-k2.5"}, now.Add(-3*time.Hour), now.Add(time.Hour))
			if err != nil {
				t.Fatal(err)
			}
			show := func(v *float64) string {
				if v == nil {
					return "none"
				}
				return fmt.Sprint(*v)
			}
			var out []string
			for _, p := range byModel["kimi-k2.5"] {
				out = append(out, fmt.Sprintf("%s %s %d %s/%s", p.Hour.Sub(now), p.Project, p.Answers, show(p.CacheHitRate), show(p.CacheOutputRatio)))
			}
			return fmt.Sprint(out)
		}
		if _, err := s.RecordProjectMinutes(ctx, []catalogue.ProjectMinute{row("prj-a", 90*time.Minute, rate(0.1), nil),
			row("prj-a", 5*time.Minute, rate(0.1), rate(2)), row("prj-a", 4*time.Minute, rate(0.9), rate(0.5)), row("prj-b", 4*time.Minute, nil, nil)}); err != nil {
			t.Fatal(err)
		}
		if got, want := read(), "[-1h30m0s prj-a 1 0.1/none -30m0s prj-a 2 0.9/0.5 -30m0s prj-b 1 none/none]"; got != want {
			t.Errorf("read back %s, want %s", got, want)
		}
		// A retry of an earlier minute with other rates changes nothing; a
		// new minute declaring none clears them.
		if _, err := s.RecordProjectMinutes(ctx, []catalogue.ProjectMinute{row("prj-a", 5*time.Minute, rate(0.3), nil)}); err != nil {
			t.Fatal(err)
		}
		if got, want := read(), "[-1h30m0s prj-a 1 0.1/none -30m0s prj-a 2 0.9/0.5 -30m0s prj-b 1 none/none]"; got != want {
			t.Errorf("after a retried minute: %s, want %s", got, want)
		}
		if _, err := s.RecordProjectMinutes(ctx, []catalogue.ProjectMinute{row("prj-a", 3*time.Minute, nil, nil)}); err != nil {
			t.Fatal(err)
		}
		if got, want := read(), "[-1h30m0s prj-a 1 0.1/none -30m0s prj-a 3 none/none -30m0s prj-b 1 none/none]"; got != want {
			t.Errorf("after a minute declaring none: %s, want %s", got, want)
		}
	})
}

// TestDemandNamesEachProject: the project: keys of demand rows are read
// back per workload and project, large requests apart.
func TestDemandNamesEachProject(t *testing.T) {
	storetest.ForEach(t, func(t *testing.T, s *store.Store) {
		now := time.Now().UTC()
		s.Now = func() time.Time { return now }
		hour := now.Truncate(time.Hour).Add(-2 * time.Hour)
		large := func(n int64) *int64 { return &n }
		a, b := catalogue.ProjectKey("prj-a", false), catalogue.ProjectKey("prj-b", false)
		rows := []catalogue.Demand{
			{Model: "k", Workload: "general", Minute: hour, Requests: 10, PromptTokens: 40000, LargeRequests: large(4), LargePromptTokens: large(36000),
				Asked: map[string]int64{a: 3, catalogue.ProjectKey("prj-a", true): 4, b: 2}},
			{Model: "k", Workload: "general", Minute: hour.Add(time.Minute), Source: "gw-2", Requests: 5, PromptTokens: 500, LargeRequests: large(0), LargePromptTokens: large(0),
				Asked: map[string]int64{a: 1}},
			{Model: "k", Workload: "coding", Minute: hour, Requests: 6, PromptTokens: 600, Asked: map[string]int64{b: 6}},
		}
		if err := s.RecordDemand(ctx, rows); err != nil {
			t.Fatal(err)
		}
		byHour, err := s.DemandByHour(ctx, []string{"k"}, hour, hour.Add(time.Hour), 5000)
		if err != nil {
			t.Fatal(err)
		}
		got := byHour["k"][hour]
		want := map[string]catalogue.ProjectDemand{"prj-a": {Requests: 8, LargeRequests: 4}, "prj-b": {Requests: 2}}
		if !maps.Equal(got["general"].Projects, want) || !maps.Equal(got["coding"].Projects, map[string]catalogue.ProjectDemand{"prj-b": {Requests: 6}}) {
			t.Errorf("the hour's demand by project: general %v, coding %v; want %v and prj-b's 6", got["general"].Projects, got["coding"].Projects, want)
		}
		if got["general"].Preferences != nil {
			t.Errorf("project keys read as sets of preferences: %v", got["general"].Preferences)
		}
		if shapes, err := s.DemandShapes(ctx, "k", hour.Add(-time.Hour), 5000); err != nil || !maps.Equal(shapes["general"].Projects, want) {
			t.Errorf("the demand's shapes by project: %v (%v), want %v", shapes["general"].Projects, err, want)
		}
	})
}
