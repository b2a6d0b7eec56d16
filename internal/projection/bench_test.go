package projection

import (
	"context"
	"fmt"
	"testing"
	"time"

	"github.com/airside/airside/internal/catalogue"
	"github.com/airside/airside/internal/earnings"
	"github.com/airside/airside/internal/money"
)

// benchMarket is one model of n listings with a month of hourly traffic
// and demand, and, when sampled, a health sample every ten minutes over
// the samples' retention (8 days).
func benchMarket(now time.Time, n int, sampled bool) *market {
	model := catalogue.Model{ID: 1, Slug: "glm-5", Name: "GLM-5", ContextTokens: 200000}
	m := &market{history: map[int64][]earnings.FareSpan{}, hours: map[int64][]catalogue.HourlyPoint{}, minutes: map[time.Time]int64{},
		demand: map[time.Time]map[string]catalogue.WorkloadDemand{}, samples: map[int64][]catalogue.HealthSample{}}
	start := now.Truncate(time.Hour).Add(-Reach)
	for i := range n {
		id := int64(i + 1)
		input := money.Micros(300000 + 10000*i)
		m.listings = append(m.listings, catalogue.Listing{ID: id, CarrierSlug: fmt.Sprintf("c%d", i), CarrierName: fmt.Sprintf("Carrier %d", i),
			Model: model, Status: catalogue.StatusInService, PriorityBP: 10000, Published: fareOf(id, input)})
		m.history[id] = []earnings.FareSpan{{From: start.Add(-48 * time.Hour), Fare: fareOf(id, input)}}
	}
	for h := start; !h.After(now); h = h.Add(time.Hour) {
		for i, l := range m.listings {
			req := int64(100 + 10*i)
			m.hours[l.ID] = append(m.hours[l.ID], catalogue.HourlyPoint{Hour: h, Counts: catalogue.Counts{Requests: req, TTFTMsSum: req * int64(300+20*i),
				OutputTokens: req * 200, DurationMs: req * 2000, InputTokens: req * 4000, CachedInputTokens: req * 1000}})
		}
		m.demand[h] = map[string]catalogue.WorkloadDemand{"general": {Requests: 600, PromptTokens: 600 * 1000, LargeRequests: 100, LargePromptTokens: 100 * 30000},
			"coding": {Requests: 300, PromptTokens: 300 * 40000}}
	}
	if sampled {
		for at := now.Add(-catalogue.HealthSampleRetention).Truncate(catalogue.HealthSampleEvery); at.Before(now); at = at.Add(catalogue.HealthSampleEvery) {
			for i, l := range m.listings {
				uptime, ttft := 99.5-0.1*float64(i%5), 300+20*float64(i)+float64(at.Minute())
				m.samples[l.ID] = append(m.samples[l.ID], catalogue.HealthSample{At: at, Health: catalogue.Health{UptimePct: &uptime, LatencyMs: &ttft}})
			}
		}
	}
	return m
}

// BenchmarkProjectAMonth projects one listing's month (a model of 20
// listings) with nothing kept, with health rebuilt from the rollups, with
// the last 8 days replayed from health samples (six parts an hour), and
// with those samples and a gateway's holders of a shape that moves twice
// a minute for the last day (at :00 and :30, each row counting its
// elections), and with the samples and two API projects named in every
// hour's demand, each with its hours on every listing over the samples'
// 8 days (one resending its prompts, one not): the ratio of the second to
// the first is what replaying what routing was served costs a first view,
// of the third to the second what a shape moving within its minutes adds,
// of the fourth to the second what electing each project on its own rates
// adds.
func BenchmarkProjectAMonth(b *testing.B) {
	now := time.Date(2026, 11, 20, 14, 20, 0, 0, time.UTC)
	for _, variant := range []string{"rebuilt", "sampled", "moved", "projects"} {
		b.Run(variant, func(b *testing.B) {
			m := benchMarket(now, 20, variant != "rebuilt")
			if variant == "moved" {
				for at := now.Add(-24 * time.Hour).Truncate(time.Minute); at.Before(now); at = at.Add(time.Minute) {
					for i, second := range []int{0, 30} {
						m.holders = append(m.holders, catalogue.ShapeHolder{Model: "glm-5", Workload: "general", ListingID: int64(1 + i),
							Minute: at, Second: second, Requests: int64(5 + i)})
					}
				}
			}
			if variant == "projects" {
				for h, d := range m.demand {
					for w, wd := range d {
						wd.Projects = map[string]catalogue.ProjectDemand{"prj-resends": {Requests: wd.Requests / 2, LargeRequests: wd.LargeRequests / 2},
							"prj-fresh": {Requests: wd.Requests / 3, LargeRequests: wd.LargeRequests / 3}}
						m.demand[h][w] = wd
					}
				}
				// An hour's minutes as one row (the store reads hours).
				for at := now.Add(-catalogue.HealthSampleRetention).Truncate(time.Hour); at.Before(now); at = at.Add(time.Hour) {
					for _, l := range m.listings {
						m.projects = append(m.projects,
							catalogue.ProjectMinute{Project: "prj-resends", ListingID: l.ID, Model: "glm-5", Minute: at, Answers: 180, InputTokens: 180 * 4000, CachedInputTokens: 180 * 3600, OutputTokens: 180 * 200},
							catalogue.ProjectMinute{Project: "prj-fresh", ListingID: l.ID, Model: "glm-5", Minute: at, Answers: 120, InputTokens: 120 * 4000, OutputTokens: 120 * 200})
					}
				}
			}
			for b.Loop() {
				pj := projectorOn(m, &now)
				if _, ok, err := pj.ListingHours(context.Background(), &m.listings[0], now.Add(-Reach), now.Add(time.Hour)); err != nil || !ok {
					b.Fatal(ok, err)
				}
			}
		})
	}
}
