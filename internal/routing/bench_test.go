package routing

import (
	"fmt"
	"maps"
	"math/rand/v2"
	"testing"
	"time"

	"github.com/airside/airside/internal/catalogue"
	"github.com/airside/airside/internal/fare"
	"github.com/airside/airside/internal/money"
)

// bigStructure is a catalogue of models x listings published listings with
// live health for each.
func bigStructure(models, listings int) (*structure, map[int64]catalogue.Health) {
	base := &structure{revision: 7, checks: map[int64]map[string]string{}}
	live := map[int64]catalogue.Health{}
	bySlug := map[string]int64{}
	id := int64(0)
	for m := range models {
		for c := range listings {
			id++
			price := money.Micros(100000 + 1000*int64(c))
			l := catalogue.Listing{ID: id, CarrierSlug: fmt.Sprintf("carrier-%d", c), CarrierName: fmt.Sprintf("Carrier %d", c),
				Model: catalogue.Model{Slug: fmt.Sprintf("model-%d", m)}, Status: catalogue.StatusInService, PriorityBP: 10000, Revision: 3,
				Published: &fare.Fare{Input: price, Output: 4 * price, LandingFee: fare.BaselineLandingFee, CapScope: fare.ScopeGlobal}}
			base.listings = append(base.listings, l)
			bySlug[l.CarrierSlug+"/"+l.Model.Slug] = id
			up, lat, tps := 99.5, 300.0+float64(c), 80.0
			live[id] = catalogue.Health{UptimePct: &up, LatencyMs: &lat, ThroughputTPS: &tps}
		}
	}
	base.index = catalogue.NewListingIndex(bySlug)
	return base, live
}

// BenchmarkHealthRefresh is what a health refresh costs every 5 s (a new
// snapshot from the catalogue already read, with new health), and what the
// first 200 of the whole catalogue after it adds.
//
//	go test -run '^$' -bench HealthRefresh ./internal/routing
func BenchmarkHealthRefresh(b *testing.B) {
	for _, size := range []struct{ models, listings int }{{50, 10}, {500, 10}, {500, 20}} {
		base, live := bigStructure(size.models, size.listings)
		now := time.Date(2026, 12, 1, 10, 0, 0, 0, time.UTC)
		name := fmt.Sprintf("%dx%d", size.models, size.listings)
		b.Run(name+"/refresh", func(b *testing.B) {
			b.ReportAllocs()
			for b.Loop() {
				if _, err := assemble(base, live, now, nil); err != nil {
					b.Fatal(err)
				}
			}
		})
		b.Run(name+"/refresh+catalogue", func(b *testing.B) {
			b.ReportAllocs()
			for b.Loop() {
				snap, err := assemble(base, live, now, nil)
				if err != nil {
					b.Fatal(err)
				}
				if body, err := snap.Catalogue(""); err != nil || len(body.Gzip) == 0 {
					b.Fatal("no catalogue", err)
				}
			}
		})
	}
}

// BenchmarkRevalidationBytes is what a revalidating gateway downloads each
// time health moves (every 5 s refresh under live metrics), before health
// had its own resource (the one-document catalogue, gzip) and after (the
// catalogue answers 304; the health document, gzip, whole or as a delta when
// a tenth of the listings moved), at 500 and 10,000 listings with
// full-precision figures, as live metrics give.
//
//	go test -run '^$' -bench RevalidationBytes -benchtime 1x ./internal/routing
func BenchmarkRevalidationBytes(b *testing.B) {
	for _, size := range []struct{ models, listings int }{{50, 10}, {500, 20}} {
		base, live := bigStructure(size.models, size.listings)
		rng := rand.New(rand.NewPCG(1, 2))
		figures := func() catalogue.Health {
			up, lat, tps, hit, out := 95+5*rng.Float64(), 200+900*rng.Float64(), 20+120*rng.Float64(), rng.Float64(), 0.05+rng.Float64()
			return catalogue.Health{UptimePct: &up, LatencyMs: &lat, ThroughputTPS: &tps, CacheHitRate: &hit, OutputRatio: &out}
		}
		for id := range live {
			live[id] = figures()
		}
		at := time.Date(2026, 12, 1, 10, 0, 0, 0, time.UTC)
		b.Run(fmt.Sprintf("%d_listings", size.models*size.listings), func(b *testing.B) {
			var before, whole, delta, fares int
			for b.Loop() {
				snap, err := assemble(base, live, at, nil)
				if err != nil {
					b.Fatal(err)
				}
				moved := maps.Clone(live)
				for i := 0; i < len(base.listings); i += 10 {
					moved[base.listings[i].ID] = figures()
				}
				next, _ := assemble(base, moved, at.Add(5*time.Second), snap)
				one, _ := next.CatalogueWithHealth("")
				health, _ := next.HealthDocument("")
				d, ok, _ := next.HealthDelta("", snap.HealthETag())
				cat, _ := next.Catalogue("")
				if !ok {
					b.Fatal("no delta")
				}
				before, whole, delta, fares = len(one.Gzip), len(health.Gzip), len(d.Gzip), len(cat.Gzip)
			}
			b.ReportMetric(float64(before), "B/refresh-before")
			b.ReportMetric(float64(whole), "B/refresh-whole-health")
			b.ReportMetric(float64(delta), "B/refresh-delta")
			b.ReportMetric(float64(fares), "B/fares-once")
		})
	}
}
