package projection

import (
	"context"
	"fmt"
	"maps"
	"math"
	"slices"
	"strings"
	"testing"
	"time"

	"github.com/airside/airside/internal/apitoken"
	"github.com/airside/airside/internal/catalogue"
	"github.com/airside/airside/internal/earnings"
	"github.com/airside/airside/internal/election"
	"github.com/airside/airside/internal/fare"
	"github.com/airside/airside/internal/money"
	"github.com/airside/airside/internal/preview"
	"github.com/airside/airside/internal/routing"
)

// market is a fake read side: a model's listings with their fare histories,
// each listing's hours and the model's demand by hour, all in memory. It is
// both the projector's Reads and the routing catalogue's Source, so the
// projection runs with no database.
type market struct {
	listings []catalogue.Listing
	history  map[int64][]earnings.FareSpan
	hours    map[int64][]catalogue.HourlyPoint
	minutes  map[time.Time]int64
	demand   map[time.Time]map[string]catalogue.WorkloadDemand
	samples  map[int64][]catalogue.HealthSample
	holders  []catalogue.ShapeHolder // oldest first
	projects []catalogue.ProjectMinute
	// reads counts the rollup reads (HourlyTraffic), to tell kept hours
	// from hours read again.
	reads int
	// written is the metric batches recorded (MetricsWritten); gate, when
	// set, holds every read of the holders (which each projection makes)
	// until it is closed.
	written uint64
	gate    chan struct{}
}

func fareOf(id int64, input money.Micros) *fare.Fare {
	return &fare.Fare{ListingID: id, Input: input, Output: 2 * input, LandingFee: fare.BaselineLandingFee, CapScope: fare.ScopeGlobal}
}

// newMarket is one model with two listings, a and b, whose fares start
// at inputs a and b, and 30 hours of even traffic up to the hour of now:
// 600 requests an hour, small one-shots, each listing healthy.
func newMarket(now time.Time, a, b money.Micros) *market {
	model := catalogue.Model{ID: 1, Slug: "glm-5", Name: "GLM-5", ContextTokens: 200000}
	m := &market{history: map[int64][]earnings.FareSpan{}, hours: map[int64][]catalogue.HourlyPoint{}, minutes: map[time.Time]int64{},
		demand: map[time.Time]map[string]catalogue.WorkloadDemand{}}
	start := now.Truncate(time.Hour).Add(-30 * time.Hour)
	for i, input := range []money.Micros{a, b} {
		id := int64(i + 1)
		m.listings = append(m.listings, catalogue.Listing{ID: id, CarrierSlug: []string{"a", "b"}[i], CarrierName: []string{"Alpha", "Beta"}[i],
			Model: model, Status: catalogue.StatusInService, PriorityBP: 10000, Published: fareOf(id, input)})
		m.history[id] = []earnings.FareSpan{{From: start.Add(-48 * time.Hour), Fare: fareOf(id, input)}}
	}
	for h := start; !h.After(now); h = h.Add(time.Hour) {
		for _, l := range m.listings {
			m.hours[l.ID] = append(m.hours[l.ID], catalogue.HourlyPoint{Hour: h, Counts: catalogue.Counts{Requests: 300, TTFTMsSum: 300 * 400, OutputTokens: 300 * 200,
				DurationMs: 300 * 2000, InputTokens: 300 * 1000}})
		}
		m.demand[h] = map[string]catalogue.WorkloadDemand{"general": {Requests: 600, PromptTokens: 600 * 1000}}
	}
	return m
}

// publish makes fare f listing id's from at on (history and catalogue).
func (m *market) publish(id int64, f *fare.Fare, at time.Time) {
	m.history[id] = append(m.history[id], earnings.FareSpan{From: at, Fare: f})
	m.listings[id-1].Published = f
}

func (m *market) CatalogueRevision(context.Context) (int64, error) { return 1, nil }
func (m *market) FindListings(context.Context, catalogue.ListingFilter) ([]catalogue.Listing, error) {
	return slices.Clone(m.listings), nil
}
func (m *market) FindCapabilityChecksFor(context.Context, []int64) (map[int64]map[string]string, error) {
	return map[int64]map[string]string{}, nil
}
func (m *market) FindLiveTokens(context.Context) (map[string]apitoken.Token, error) {
	return map[string]apitoken.Token{}, nil
}
func (m *market) HealthMetrics(context.Context, catalogue.HealthSpan, time.Time) (catalogue.MetricRows, error) {
	return catalogue.MetricRows{}, nil
}
func (m *market) DemandAsked(context.Context, string, time.Time, time.Time) (catalogue.AskedSums, error) {
	return catalogue.AskedSums{}, nil
}

func (m *market) DemandShapes(_ context.Context, _ string, since time.Time, _ int64) (map[string]catalogue.WorkloadDemand, error) {
	out := map[string]catalogue.WorkloadDemand{}
	for h, d := range m.demand {
		if !h.Before(since) {
			for k, w := range d {
				o := out[k]
				o.Requests += w.Requests
				o.PromptTokens += w.PromptTokens
				o.LargeRequests += w.LargeRequests
				o.LargePromptTokens += w.LargePromptTokens
				for project, pd := range w.Projects {
					if o.Projects == nil {
						o.Projects = map[string]catalogue.ProjectDemand{}
					}
					sum := o.Projects[project]
					sum.Requests += pd.Requests
					sum.LargeRequests += pd.LargeRequests
					o.Projects[project] = sum
				}
				for set, n := range w.Preferences {
					if o.Preferences == nil {
						o.Preferences = map[string]int64{}
					}
					o.Preferences[set] += n
				}
				out[k] = o
			}
		}
	}
	return out, nil
}
func (m *market) HourlyTraffic(_ context.Context, ids []int64, since, until time.Time) (map[int64][]catalogue.HourlyPoint, error) {
	m.reads++
	out := map[int64][]catalogue.HourlyPoint{}
	for _, id := range ids {
		for _, h := range m.hours[id] {
			if !h.Hour.Before(since) && h.Hour.Before(until) {
				out[id] = append(out[id], h)
			}
		}
	}
	return out, nil
}
func (m *market) ModelTraffic(context.Context, []int64, time.Time, time.Time) (map[int64]map[time.Time]int64, error) {
	return nil, nil
}
func (m *market) ModelTotals(context.Context, []int64, time.Time, time.Time) (map[int64]int64, error) {
	return nil, nil
}
func (m *market) ListingTotals(context.Context, []int64, time.Time, time.Time) (map[int64]int64, error) {
	return nil, nil
}
func (m *market) FareHistory(_ context.Context, ids []int64) (map[int64][]earnings.FareSpan, error) {
	out := map[int64][]earnings.FareSpan{}
	for _, id := range ids {
		out[id] = slices.Clone(m.history[id])
	}
	return out, nil
}
func (m *market) DemandByHour(_ context.Context, models []string, since, until time.Time, _ int64) (map[string]map[time.Time]map[string]catalogue.WorkloadDemand, error) {
	out := map[string]map[time.Time]map[string]catalogue.WorkloadDemand{}
	for _, model := range models {
		out[model] = map[time.Time]map[string]catalogue.WorkloadDemand{}
		for h, d := range m.demand {
			if !h.Before(since) && h.Before(until) {
				out[model][h] = d
			}
		}
	}
	return out, nil
}

// RequestsByMinute gives the model's minutes to the first listing asked
// for: the projection sums a model's listings.
func (m *market) RequestsByMinute(_ context.Context, ids []int64, since, until time.Time) (map[int64]map[time.Time]int64, error) {
	minutes := map[time.Time]int64{}
	for t, n := range m.minutes {
		if !t.Before(since) && t.Before(until) {
			minutes[t] = n
		}
	}
	if len(ids) == 0 {
		return nil, nil
	}
	return map[int64]map[time.Time]int64{ids[0]: minutes}, nil
}
func (m *market) HealthSamples(_ context.Context, ids []int64, since, until time.Time) (map[int64][]catalogue.HealthSample, error) {
	out := map[int64][]catalogue.HealthSample{}
	for _, id := range ids {
		for _, sm := range m.samples[id] {
			if !sm.At.Before(since) && sm.At.Before(until) {
				out[id] = append(out[id], sm)
			}
		}
	}
	return out, nil
}
func (m *market) ShapeHolders(_ context.Context, models []string, since, until time.Time) (map[string][]catalogue.ShapeHolder, error) {
	if m.gate != nil {
		<-m.gate
	}
	out := map[string][]catalogue.ShapeHolder{}
	for _, h := range m.holders {
		if slices.Contains(models, h.Model) && !h.Minute.Before(since) && h.Minute.Before(until) {
			out[h.Model] = append(out[h.Model], h)
		}
	}
	return out, nil
}

// ProjectHours adds the market's project minutes up to hours, as the store
// does when they are reported.
func (m *market) ProjectHours(_ context.Context, models []string, since, until time.Time) (map[string][]catalogue.ProjectHour, error) {
	type key struct {
		project string
		listing int64
		hour    time.Time
	}
	at := map[key]int{}
	out := map[string][]catalogue.ProjectHour{}
	for _, p := range m.projects {
		hour := p.Minute.Truncate(time.Hour)
		if !slices.Contains(models, p.Model) || hour.Before(since) || !hour.Before(until) {
			continue
		}
		k := key{p.Project, p.ListingID, hour}
		i, ok := at[k]
		if !ok {
			i = len(out[p.Model])
			at[k] = i
			out[p.Model] = append(out[p.Model], catalogue.ProjectHour{Project: p.Project, ListingID: p.ListingID, Model: p.Model, Hour: hour})
		}
		h := &out[p.Model][i]
		h.Answers += p.Answers
		h.InputTokens += p.InputTokens
		h.CachedInputTokens += p.CachedInputTokens
		h.OutputTokens += p.OutputTokens
		h.ResponseCacheHits += p.ResponseCacheHits
		h.CacheHitRate, h.CacheOutputRatio = p.CacheHitRate, p.CacheOutputRatio // the last minute's, as the store keeps them
	}
	return out, nil
}
func (m *market) MetricsWritten() uint64                       { return m.written }
func (m *market) MetricsTouchedSince(uint64) (time.Time, bool) { return time.Time{}, true }

func projectorOn(m *market, now *time.Time) *Projector {
	clock := func() time.Time { return *now }
	return New(m, routing.NewKeeper(m, clock), clock)
}

// hourShares is listing id's projected share in each hour from since to
// until.
func hourShares(t *testing.T, pj *Projector, l *catalogue.Listing, since, until time.Time) map[time.Time]float64 {
	t.Helper()
	past, ok, err := pj.ListingHours(context.Background(), l, since, until)
	if err != nil || !ok {
		t.Fatalf("projecting %s: ok %v, %v", l.CarrierSlug, ok, err)
	}
	out := map[time.Time]float64{}
	for _, h := range past.Hours() {
		if sh, any := past.Over(h, h.Add(time.Hour)); any {
			out[h] = sh.Total
		}
	}
	return out
}

// TestTheProjectionIsKeptAndCarriedOnWithoutADatabase: the hours a
// Projector keeps, and carries on from three hours later, project as one
// worked out from nothing over the same reads; a view with nothing new
// reads no rollup again.
func TestTheProjectionIsKeptAndCarriedOnWithoutADatabase(t *testing.T) {
	now := time.Date(2026, 11, 20, 14, 20, 0, 0, time.UTC)
	m := newMarket(now, 300000, 500000)
	now = now.Add(-3 * time.Hour)
	kept := projectorOn(m, &now)
	since, until := now.Add(-26*time.Hour), now.Add(time.Hour)
	first := hourShares(t, kept, &m.listings[0], since, until)
	reads, hours := m.reads, kept.HoursProjected()
	if again := hourShares(t, kept, &m.listings[0], since, until); !maps.Equal(again, first) || m.reads != reads || kept.HoursProjected() != hours {
		t.Errorf("read again with nothing new: %d rollup reads, %d hours projected; shares equal: %v", m.reads-reads, kept.HoursProjected()-hours, maps.Equal(again, first))
	}
	now = now.Add(3 * time.Hour)
	since, until = now.Add(-26*time.Hour), now.Add(time.Hour)
	carried := hourShares(t, kept, &m.listings[0], since, until)
	whole := hourShares(t, projectorOn(m, &now), &m.listings[0], since, until)
	if len(whole) < 24 {
		t.Fatalf("worked out from nothing: %d hours with a share, want a day", len(whole))
	}
	for h, want := range whole {
		if got, ok := carried[h]; !ok || math.Abs(got-want) > 1e-12 {
			t.Errorf("%s: carried on %.6f (%v), from nothing %.6f", h.Format("15:04"), got, ok, want)
		}
	}
}

// TestAFarePublishedMidHourSplitsItsHourByRequests: the hour in which a
// cheaper fare is published is projected in two parts, weighed by the
// model's requests on each side of the publication; the hours after it go
// to the cheaper fare.
func TestAFarePublishedMidHourSplitsItsHourByRequests(t *testing.T) {
	now := time.Date(2026, 11, 20, 14, 20, 0, 0, time.UTC)
	for _, test := range []struct {
		name          string
		before, after int64 // requests in the hour before and after the publication
	}{
		{"most before", 450, 150},
		{"even", 300, 300},
		{"most after", 100, 500},
	} {
		t.Run(test.name, func(t *testing.T) {
			m := newMarket(now, 300000, 500000)
			split := now.Truncate(time.Hour).Add(-5 * time.Hour)
			at := split.Add(30 * time.Minute)
			m.minutes[split.Add(10*time.Minute)] = test.before
			m.minutes[split.Add(50*time.Minute)] = test.after
			m.publish(2, fareOf(2, 100000), at)
			shares := hourShares(t, projectorOn(m, &now), &m.listings[1], now.Add(-26*time.Hour), now.Add(time.Hour))
			beforeShare, afterShare, mid := shares[split.Add(-time.Hour)], shares[split.Add(time.Hour)], shares[split]
			if beforeShare > 0.2 || afterShare < 0.8 {
				t.Fatalf("b projected %.3f the hour before its cheaper fare and %.3f the hour after: the fare does not move the projection", beforeShare, afterShare)
			}
			w := float64(test.after) / float64(test.before+test.after)
			if want := (1-w)*beforeShare + w*afterShare; math.Abs(mid-want) > 0.02 {
				t.Errorf("the hour of the publication: %.3f, want the parts weighed by requests (%.2f after): %.3f", mid, w, want)
			}
		})
	}
}

// TestWinsNowKeepsTheIncumbentWithinItsMargin: "wins now" is what the
// gateway does now. A rival fare that wins the election but not by the
// incumbent's margin leaves the shape with its holder under auto (and wins
// it outright when routing by price, which holds no incumbent here); a
// rival far enough ahead takes it.
func TestWinsNowKeepsTheIncumbentWithinItsMargin(t *testing.T) {
	now := time.Date(2026, 11, 20, 14, 20, 0, 0, time.UTC)
	since, until := now.Add(-24*time.Hour), now.Truncate(time.Hour).Add(time.Hour)
	const auto, price = "Small one-shot (auto)", "Small one-shot (price)"
	winsNow := func(input money.Micros) (map[int64][]string, bool) {
		t.Helper()
		m := newMarket(now, 300000, 500000)
		m.publish(2, fareOf(2, input), now.Add(-time.Minute))
		pj := projectorOn(m, &now)
		snap, err := pj.Routing.Current(context.Background())
		if err != nil {
			t.Fatal(err)
		}
		req := preview.StandardScenarios()[0].Request("glm-5", now)
		if !strings.HasPrefix(preview.StandardScenarios()[0].Name, "Small one-shot") {
			t.Fatalf("the first standard scenario is %q", preview.StandardScenarios()[0].Name)
		}
		winner, _, _ := snap.Winner(&req, nil)
		wins, err := pj.WinsNow(context.Background(), snap, m.listings, since, until, now)
		if err != nil {
			t.Fatal(err)
		}
		return scenariosWon(wins), winner == "b/glm-5"
	}
	// The highest rival fare that wins the election: within the margin.
	var inside, outside money.Micros
	for input := money.Micros(299000); input > 10000; input -= 1000 {
		wins, rivalWins := winsNow(input)
		switch {
		case !rivalWins:
			continue
		case inside == 0 && slices.Contains(wins[1], auto):
			inside = input
		case slices.Contains(wins[2], auto):
			outside = input
		}
		if outside != 0 {
			break
		}
	}
	if inside == 0 || outside == 0 {
		t.Fatalf("no rival fare won the election within the margin (%v) or took the shape past it (%v)", inside, outside)
	}
	wins, _ := winsNow(inside)
	if !slices.Contains(wins[1], auto) || slices.Contains(wins[2], auto) || !slices.Contains(wins[2], price) {
		t.Errorf("rival at %v, ahead within the margin: a wins %q, b wins %q; want a to keep %q and b to win %q", inside, wins[1], wins[2], auto, price)
	}
	wins, _ = winsNow(outside)
	if slices.Contains(wins[1], auto) || !slices.Contains(wins[2], auto) {
		t.Errorf("rival at %v, past the margin: a wins %q, b wins %q", outside, wins[1], wins[2])
	}
}

// scenariosWon are the scenarios each listing wins, sets of preferences
// apart.
func scenariosWon(wins map[int64][]Win) map[int64][]string {
	out := map[int64][]string{}
	for id, ws := range wins {
		for _, w := range ws {
			if w.Set == "" {
				out[id] = append(out[id], w.Scenario)
			}
		}
	}
	return out
}

// TestTheProjectionElectsOnTheHealthRoutingWasServed: where the live health
// the catalogue served was sampled, each part of an hour is elected with
// the sample in force then, not with health rebuilt from the hour before:
// a holder that turns slow twenty minutes into an hour keeps a third of the
// hour and loses the hours after, though the hourly rollups (the same every
// hour here) say nothing changed.
func TestTheProjectionElectsOnTheHealthRoutingWasServed(t *testing.T) {
	now := time.Date(2026, 11, 20, 16, 20, 0, 0, time.UTC)
	slowFrom := time.Date(2026, 11, 20, 13, 20, 0, 0, time.UTC)
	good, bad := 99.9, 40.0
	fast, slow := 400.0, 30000.0
	shares := func(sampled bool) map[time.Time]float64 {
		m := newMarket(now, 500000, 300000) // b is cheaper and holds the small one-shots
		if sampled {
			m.samples = map[int64][]catalogue.HealthSample{}
			for at := now.Truncate(time.Hour).Add(-6 * time.Hour); at.Before(now); at = at.Add(catalogue.HealthSampleEvery) {
				for _, id := range []int64{1, 2} {
					uptime, ttft := good, fast
					if id == 2 && !at.Before(slowFrom) {
						uptime, ttft = bad, slow
					}
					m.samples[id] = append(m.samples[id], catalogue.HealthSample{At: at, Health: catalogue.Health{UptimePct: &uptime, LatencyMs: &ttft}})
				}
			}
		}
		return hourShares(t, projectorOn(m, &now), &m.listings[1], now.Add(-6*time.Hour), now.Add(time.Hour))
	}
	hour := slowFrom.Truncate(time.Hour)
	rebuilt, replayed := shares(false), shares(true)
	for _, h := range []time.Time{hour.Add(-time.Hour), hour, hour.Add(time.Hour)} {
		if rebuilt[h] < 0.9 {
			t.Fatalf("without samples b projects %.3f at %s: the test needs b to hold the shape on the rollups", rebuilt[h], h.Format("15:04"))
		}
	}
	if math.Abs(replayed[hour.Add(-time.Hour)]-rebuilt[hour.Add(-time.Hour)]) > 1e-9 {
		t.Errorf("the hour before the slowdown: %.3f replayed, %.3f rebuilt; the samples agree with the rollups there", replayed[hour.Add(-time.Hour)], rebuilt[hour.Add(-time.Hour)])
	}
	// Twenty minutes held (2 of 6 parts, minutes spread evenly), the rest
	// exploration's 1 % split over one rival.
	if want := (2*rebuilt[hour] + 4*(1-rebuilt[hour])) / 6; math.Abs(replayed[hour]-want) > 0.01 {
		t.Errorf("the hour b slowed in: %.3f replayed, want %.3f (held until 13:20)", replayed[hour], want)
	}
	if after := replayed[hour.Add(time.Hour)]; after > 0.05 {
		t.Errorf("the hour after the slowdown: b still projects %.3f", after)
	}
}

// recorder is a fake HealthRecorder.
type recorder struct{ at []time.Time }

func (r *recorder) RecordHealthSample(_ context.Context, at time.Time, _ map[int64]catalogue.Health) error {
	r.at = append(r.at, at)
	return nil
}

// TestHealthIsSampledOncePerIntervalAndNeverLate: SampleHealth records the
// interval under way once, at its start's time, and leaves an interval it
// reaches more than a minute late alone (health from later on is not what
// routing elected on at its start).
func TestHealthIsSampledOncePerIntervalAndNeverLate(t *testing.T) {
	now := time.Date(2026, 11, 20, 14, 0, 5, 0, time.UTC)
	m := newMarket(now, 300000, 500000)
	pj := projectorOn(m, &now)
	rec := &recorder{}
	pj.Recorder = rec
	for _, step := range []struct {
		at     time.Duration // after 14:00
		record bool
	}{{5 * time.Second, true}, {20 * time.Second, false}, {10*time.Minute + 30*time.Second, true}, {20*time.Minute + 90*time.Second, false}, {30 * time.Minute, true}} {
		now = time.Date(2026, 11, 20, 14, 0, 0, 0, time.UTC).Add(step.at)
		recorded, err := pj.SampleHealth(context.Background())
		if err != nil || recorded != step.record {
			t.Errorf("at 14:00 + %v: recorded %v (%v), want %v", step.at, recorded, err, step.record)
		}
	}
	want := []time.Time{time.Date(2026, 11, 20, 14, 0, 0, 0, time.UTC), time.Date(2026, 11, 20, 14, 10, 0, 0, time.UTC), time.Date(2026, 11, 20, 14, 30, 0, 0, time.UTC)}
	if !slices.EqualFunc(rec.at, want, time.Time.Equal) {
		t.Errorf("samples at %v, want %v", rec.at, want)
	}
}

// TestHoldingSaysWhatLeadTakesTheShape: a listing that wins the election
// within the incumbent's margin is told the incumbent keeps the shape, and
// by how much it leads; past the margin it holds it. A paused listing is
// elected as if resumed when asked.
func TestHoldingSaysWhatLeadTakesTheShape(t *testing.T) {
	now := time.Date(2026, 11, 20, 14, 20, 0, 0, time.UTC)
	const auto = "Small one-shot (auto)"
	holding := func(input money.Micros, status catalogue.ListingStatus, asResumed bool) Hold {
		t.Helper()
		m := newMarket(now, 300000, 500000)
		m.publish(2, fareOf(2, input), now.Add(-time.Minute))
		m.listings[1].Status = status
		holds, err := projectorOn(m, &now).Holding(context.Background(), &m.listings[1], asResumed)
		if err != nil {
			t.Fatal(err)
		}
		for _, h := range holds {
			if h.Scenario == auto {
				return h
			}
		}
		t.Fatalf("no %q in %+v", auto, holds)
		return Hold{}
	}
	var inside, outside Hold
	for input := money.Micros(299000); input > 10000 && (inside.Scenario == "" || outside.Scenario == ""); input -= 1000 {
		switch h := holding(input, catalogue.StatusInService, false); {
		case h.Kept && inside.Scenario == "":
			inside = h
		case h.Mine:
			outside = h
		}
	}
	if inside.Scenario == "" || outside.Scenario == "" {
		t.Fatal("no rival fare kept out by the margin, or none past it")
	}
	if inside.Holder != "Alpha" || inside.Lead <= 0 || inside.Lead > election.IncumbentMargin {
		t.Errorf("within the margin: %+v, want Alpha keeping it against a lead in (0, %v]", inside, election.IncumbentMargin)
	}
	if outside.Holder != "Beta" || outside.Lead != 0 {
		t.Errorf("past the margin: %+v, want Beta holding it", outside)
	}
	if h := holding(100000, catalogue.StatusPaused, false); h.Eligible || h.Holder != "Alpha" {
		t.Errorf("paused, as it is: %+v, want Alpha serving and Beta off the ballot", h)
	}
	if h := holding(100000, catalogue.StatusPaused, true); !h.Eligible || !h.Mine {
		t.Errorf("paused, as if resumed at a far lower fare: %+v", h)
	}
}

// TestWinsNowSendsEachSetOfPreferencesWhereRoutingDoes: "wins now" under
// auto follows the sets of preferences the model's requests carried: a
// provider order naming the dearer listing first gives it that part of the
// small one-shots, and the cheaper listing's win says that part went
// elsewhere; a set both may serve stays with the holder. Without sets the
// wins are the scenarios alone.
func TestWinsNowSendsEachSetOfPreferencesWhereRoutingDoes(t *testing.T) {
	now := time.Date(2026, 11, 20, 14, 20, 0, 0, time.UTC)
	since, until := now.Add(-24*time.Hour), now.Truncate(time.Hour).Add(time.Hour)
	const small = "Small one-shot (auto)"
	for _, withSets := range []bool{false, true} {
		m := newMarket(now, 300000, 500000)
		if withSets {
			d := m.demand[now.Truncate(time.Hour)]["general"]
			d.Preferences = map[string]int64{"prefs:order:b": d.Requests / 5, "prefs:ignore:c": d.Requests / 10}
			m.demand[now.Truncate(time.Hour)]["general"] = d
		}
		pj := projectorOn(m, &now)
		snap, err := pj.Routing.Current(context.Background())
		if err != nil {
			t.Fatal(err)
		}
		wins, err := pj.WinsNow(context.Background(), snap, m.listings, since, until, now)
		if err != nil {
			t.Fatal(err)
		}
		var aSmall *Win
		for i, w := range wins[1] {
			if w.Scenario == small && w.Set == "" {
				aSmall = &wins[1][i]
			}
		}
		var bSets []Win
		for _, w := range wins[2] {
			if w.Set != "" {
				bSets = append(bSets, w)
			}
		}
		if aSmall == nil {
			t.Fatalf("sets %v: the cheaper listing does not hold %q: %+v", withSets, small, wins)
		}
		if !withSets {
			if aSmall.Elsewhere != 0 || len(bSets) != 0 {
				t.Errorf("without sets: a's win %+v, b's sets %+v; want the scenario alone", *aSmall, bSets)
			}
			continue
		}
		// Requests carried the sets in the one hour of demand with them:
		// their parts are of the week's general requests.
		total := 0.0
		for _, d := range m.demand {
			total += float64(d["general"].Requests)
		}
		order := float64(m.demand[now.Truncate(time.Hour)]["general"].Requests/5) / total
		if math.Abs(aSmall.Elsewhere-order) > 1e-9 {
			t.Errorf("a's small one-shots: %.4f went elsewhere, want the ordered set's %.4f (the set both may serve stays)", aSmall.Elsewhere, order)
		}
		want := Win{Scenario: small, Set: "the provider order b", Part: order}
		if len(bSets) != 2 || bSets[0].Scenario != want.Scenario || bSets[0].Set != want.Set || math.Abs(bSets[0].Part-order) > 1e-9 {
			t.Errorf("b takes %+v, want %+v in each auto scenario of the general workload", bSets, want)
		}
	}
}

// TestWinsNowIsKeptWhileNothingMoves: asked again on the same snapshot,
// holders and minute, WinsNow gives the kept answer; another snapshot
// works it out again, to the same answer.
func TestWinsNowIsKeptWhileNothingMoves(t *testing.T) {
	now := time.Date(2026, 11, 20, 14, 20, 0, 0, time.UTC)
	m := newMarket(now, 300000, 500000)
	pj := projectorOn(m, &now)
	ctx := context.Background()
	since, until := now.Add(-24*time.Hour), now.Truncate(time.Hour).Add(time.Hour)
	snap, err := pj.Routing.Current(ctx)
	if err != nil {
		t.Fatal(err)
	}
	first, err := pj.WinsNow(ctx, snap, m.listings, since, until, now)
	if err != nil || len(first[1]) == 0 {
		t.Fatalf("wins %v (%v)", first, err)
	}
	again, _ := pj.WinsNow(ctx, snap, m.listings, since, until, now)
	if fmt.Sprintf("%p", again) != fmt.Sprintf("%p", first) {
		t.Error("asked again with nothing moved: worked out anew")
	}
	other, err := routing.NewKeeper(m, func() time.Time { return now }).Current(ctx)
	if err != nil {
		t.Fatal(err)
	}
	fresh, _ := pj.WinsNow(ctx, other, m.listings, since, until, now)
	if fmt.Sprintf("%p", fresh) == fmt.Sprintf("%p", first) || fmt.Sprint(fresh) != fmt.Sprint(first) {
		t.Errorf("on another snapshot: %v (kept: %v)", fresh, first)
	}
}

// TestRequestsTheLimitsHeldBackAreElectedWithoutTheListing: an hour in
// which the gateways report a quarter of the model's requests elected
// while their limits held the holder back (a 429 backoff) projects the
// holder a quarter less and the other listing that quarter more; the
// hours around it, and the holder's hold after it, are as before.
func TestRequestsTheLimitsHeldBackAreElectedWithoutTheListing(t *testing.T) {
	now := time.Date(2026, 11, 20, 14, 20, 0, 0, time.UTC)
	m := newMarket(now, 300000, 500000)
	held := now.Truncate(time.Hour).Add(-5 * time.Hour)
	for i := range m.hours[1] {
		if m.hours[1][i].Hour.Equal(held) {
			m.hours[1][i].HeldBack = 150 // of the hour's 600
		}
	}
	pj := projectorOn(m, &now)
	a := hourShares(t, pj, &m.listings[0], now.Add(-26*time.Hour), now.Add(time.Hour))
	b := hourShares(t, pj, &m.listings[1], now.Add(-26*time.Hour), now.Add(time.Hour))
	before, during, after := a[held.Add(-time.Hour)], a[held], a[held.Add(time.Hour)]
	if before < 0.9 || math.Abs(after-before) > 1e-9 {
		t.Fatalf("a projected %.3f the hour before and %.3f the hour after: the test needs it holding both", before, after)
	}
	if want := 0.75 * before; math.Abs(during-want) > 1e-9 {
		t.Errorf("a projected %.4f in the hour a quarter of its requests were held back, want %.4f", during, want)
	}
	if sum := during + b[held]; math.Abs(sum-(a[held.Add(-time.Hour)]+b[held.Add(-time.Hour)])) > 1e-9 {
		t.Errorf("a and b add up to %.4f in the held hour: the requests held back went nowhere", sum)
	}
}

// TestRequestsOnTheSharePolicyAreSpreadByShare: an hour whose demand the
// gateways report half routed under the share policy projects each
// listing half its elected share and half its share-policy share (an hour
// all on it), as the gateway spreads those requests by share.
func TestRequestsOnTheSharePolicyAreSpreadByShare(t *testing.T) {
	now := time.Date(2026, 11, 20, 14, 20, 0, 0, time.UTC)
	m := newMarket(now, 300000, 330000)
	half, full := now.Truncate(time.Hour).Add(-5*time.Hour), now.Truncate(time.Hour).Add(-3*time.Hour)
	for h, part := range map[time.Time]int64{half: 300, full: 600} {
		d := m.demand[h]["general"]
		d.SharePolicy = part
		m.demand[h]["general"] = d
	}
	pj := projectorOn(m, &now)
	b := hourShares(t, pj, &m.listings[1], now.Add(-26*time.Hour), now.Add(time.Hour))
	a := hourShares(t, pj, &m.listings[0], now.Add(-26*time.Hour), now.Add(time.Hour))
	elected := b[half.Add(-time.Hour)]
	if b[full] < elected+0.05 {
		t.Fatalf("b projected %.3f elected and %.3f on the share policy: the test needs the policy to spread", elected, b[full])
	}
	if want := (elected + b[full]) / 2; math.Abs(b[half]-want) > 1e-9 {
		t.Errorf("b projected %.4f in the hour half on the share policy, want %.4f", b[half], want)
	}
	for _, h := range []time.Time{half, full} {
		if sum := a[h] + b[h]; math.Abs(sum-1) > 1e-9 {
			t.Errorf("%s: a and b add up to %.4f", h.Format(time.TimeOnly), sum)
		}
	}
	if b[full.Add(time.Hour)] != elected {
		t.Errorf("b projected %.4f the hour after, want its elected %.4f", b[full.Add(time.Hour)], elected)
	}
}

// TestEachProjectIsElectedOnTheRatesRoutingLearnedOfIt: two API projects
// send a model's large prompts, one resending them (listing a's cache
// keeps nine tenths: the gateway learns its hit rate there and sends it
// to a, whose cached price is cheap) and one never (it learns no hit and
// goes to b, cheaper uncached). Learned per model, a's hit rate would
// send both to a; learned per project, as the gateway does from the
// minutes it reports of each, each half goes where routing sent it.
func TestEachProjectIsElectedOnTheRatesRoutingLearnedOfIt(t *testing.T) {
	now := time.Date(2026, 11, 20, 14, 20, 0, 0, time.UTC)
	m := newMarket(now, 1000000, 500000)
	cheapCache := fareOf(1, 1000000)
	cheapCache.CachedInput = new(money.Micros(100000))
	m.listings[0].Published = cheapCache
	m.history[1][0].Fare = cheapCache
	const prompt = 10000
	start := now.Truncate(time.Hour).Add(-30 * time.Hour)
	for h := start; !h.After(now); h = h.Add(time.Hour) {
		for i := range m.hours[1] {
			if m.hours[1][i].Hour.Equal(h) {
				// a's hour is the resending project's: nine tenths cached.
				c := &m.hours[1][i].Counts
				c.InputTokens, c.CachedInputTokens = 300*prompt, 300*prompt*9/10
			}
			if m.hours[2][i].Hour.Equal(h) {
				m.hours[2][i].Counts.InputTokens = 300 * prompt
			}
		}
		m.demand[h] = map[string]catalogue.WorkloadDemand{"general": {Requests: 600, LargeRequests: 600, PromptTokens: 600 * prompt, LargePromptTokens: 600 * prompt,
			Projects: map[string]catalogue.ProjectDemand{"prj-resends": {Requests: 300, LargeRequests: 300}, "prj-fresh": {Requests: 300, LargeRequests: 300}}}}
		for minute := h; minute.Before(h.Add(time.Hour)); minute = minute.Add(time.Minute) {
			m.projects = append(m.projects,
				catalogue.ProjectMinute{Project: "prj-resends", ListingID: 1, Model: "glm-5", Minute: minute, Answers: 5, InputTokens: 5 * prompt, CachedInputTokens: 5 * prompt * 9 / 10, OutputTokens: 5 * 200},
				catalogue.ProjectMinute{Project: "prj-fresh", ListingID: 2, Model: "glm-5", Minute: minute, Answers: 5, InputTokens: 5 * prompt, OutputTokens: 5 * 200})
		}
	}
	hour := now.Truncate(time.Hour).Add(-2 * time.Hour)
	pj := projectorOn(m, &now)
	perProject := hourShares(t, pj, &m.listings[0], now.Add(-26*time.Hour), now.Add(time.Hour))[hour]
	if math.Abs(perProject-0.5) > 0.02 {
		t.Errorf("a projected %.3f at %s, want about half (the resending project's requests)", perProject, hour.Format("15:04"))
	}
	// Looking forward too: the fare form's preview of a's published fare
	// and the share the traffic page projects now elect each project on
	// its own rates, and agree.
	forward := func(pj *Projector) (preview, now float64) {
		t.Helper()
		ctx := context.Background()
		res, err := pj.Preview(ctx, &m.listings[0], nil, Ask{})
		if err != nil {
			t.Fatal(err)
		}
		since, until := earnings.Grouping{Period: earnings.ParsePeriod(""), Loc: time.UTC}.Window(pj.Now())
		past, _, err := pj.ListingHours(ctx, &m.listings[0], since, until)
		if err != nil {
			t.Fatal(err)
		}
		sn, err := pj.ShareNow(ctx, &m.listings[0], past)
		if err != nil || !sn.OK {
			t.Fatalf("share now: ok %v, %v", sn.OK, err)
		}
		return res.Share.Total, sn.Share.Total
	}
	if p, n := forward(pj); math.Abs(p-0.5) > 0.02 || math.Abs(p-n) > 1e-9 {
		t.Errorf("looking forward a previews %.3f and projects %.3f now, want both about half", p, n)
	}
	// And "wins now": a holds large prompts but the fresh project's half,
	// which b takes, each said as a part.
	winsOf := func(pj *Projector) map[int64][]Win {
		t.Helper()
		snap, err := pj.Routing.Current(context.Background())
		if err != nil {
			t.Fatal(err)
		}
		wins, err := pj.WinsNow(context.Background(), snap, m.listings, now.Add(-24*time.Hour), now.Truncate(time.Hour).Add(time.Hour), now)
		if err != nil {
			t.Fatal(err)
		}
		return wins
	}
	const large = "Large prompt, general API (auto)"
	find := func(wins []Win) (Win, bool) {
		i := slices.IndexFunc(wins, func(w Win) bool { return w.Scenario == large })
		if i < 0 {
			return Win{}, false
		}
		return wins[i], true
	}
	wins := winsOf(pj)
	if a, ok := find(wins[1]); !ok || a.Projects || math.Abs(a.ProjectsElsewhere-0.5) > 1e-9 {
		t.Errorf("a's wins now %+v, want %q held but for the fresh project's half", wins[1], large)
	}
	if b, ok := find(wins[2]); !ok || !b.Projects || math.Abs(b.Part-0.5) > 1e-9 {
		t.Errorf("b's wins now %+v, want the fresh project's half of %q", wins[2], large)
	}
	// The same hours from a gateway that names the projects in its demand
	// but posts none of their minutes: nothing tells what it learned of
	// each, so the model's rates stand (a's hit rate is the resending
	// project's, and sends every large prompt to a).
	minutes := m.projects
	m.projects = nil
	if unreported := hourShares(t, projectorOn(m, &now), &m.listings[0], now.Add(-26*time.Hour), now.Add(time.Hour))[hour]; unreported < 0.9 {
		t.Errorf("with no project's minutes reported a projected %.3f, want the model's rates' (all but exploration)", unreported)
	}
	if p, n := forward(projectorOn(m, &now)); p < 0.9 || math.Abs(p-n) > 1e-9 {
		t.Errorf("with no project's minutes reported a previews %.3f and projects %.3f now, want the model's rates' (all but exploration)", p, n)
	}
	if wins := winsOf(projectorOn(m, &now)); func() bool { _, ok := find(wins[2]); return ok }() {
		t.Errorf("with no project's minutes reported b wins %+v now, want no large prompt (the model's rates send a every one)", wins[2])
	} else if a, ok := find(wins[1]); !ok || a.ProjectsElsewhere != 0 {
		t.Errorf("with no project's minutes reported a wins %+v now, want %q whole", wins[1], large)
	}
	m.projects = minutes
	// A project that declares its cache-hit rate in the gateway's
	// configuration (seed 001's Enterprise override) is elected on it,
	// before anything learned, from the hour its minutes say so: the fresh
	// project declaring nine tenths sends its large prompts to a as well.
	declaredFrom, nineTenths := hour.Add(-3*time.Hour), 0.9
	m.projects = slices.Clone(minutes)
	for i := range m.projects {
		if m.projects[i].Project == "prj-fresh" && !m.projects[i].Minute.Before(declaredFrom) {
			m.projects[i].CacheHitRate = &nineTenths
		}
	}
	declared := hourShares(t, projectorOn(m, &now), &m.listings[0], now.Add(-26*time.Hour), now.Add(time.Hour))
	if before, after := declared[declaredFrom.Add(-time.Hour)], declared[hour]; math.Abs(before-0.5) > 0.02 || after < 0.9 {
		t.Errorf("with the fresh project declaring a hit rate from %s a projected %.3f the hour before and %.3f at %s, want about half, then all but exploration",
			declaredFrom.Format("15:04"), before, after, hour.Format("15:04"))
	}
	if p, n := forward(projectorOn(m, &now)); p < 0.9 || math.Abs(p-n) > 1e-9 {
		t.Errorf("with the fresh project declaring a hit rate a previews %.3f and projects %.3f now, want all but exploration", p, n)
	}
	m.projects = minutes
	// And with no project named.
	for _, d := range m.demand {
		g := d["general"]
		g.Projects = nil
		d["general"] = g
	}
	if perModel := hourShares(t, projectorOn(m, &now), &m.listings[0], now.Add(-26*time.Hour), now.Add(time.Hour))[hour]; perModel < 0.9 {
		t.Errorf("with no project named a projected %.3f: the test's market does not tell the two ways apart", perModel)
	}
}
