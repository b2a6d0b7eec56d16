package demo

import (
	"context"
	"fmt"
	"math"
	"math/rand/v2"
	"slices"
	"time"

	"github.com/airside/airside/internal/catalogue"
	"github.com/airside/airside/internal/election"
	"github.com/airside/airside/internal/preview"
	"github.com/airside/airside/internal/store"
	"github.com/airside/airside/internal/traffic"
)

// historyStream is one of the demo's synthetic request streams: what a
// model's customers send in an hour, by shape.
type historyStream struct {
	workload  election.Workload
	prompt    int64 // prompt tokens a request
	output    int64 // output tokens an answer
	share     float64
	streaming bool
}

// historyStreams are the mix the traffic driver sends too: coding agents'
// turns over a long prefix, large one-shot prompts, small chats.
var historyStreams = []historyStream{
	{election.WorkloadCoding, 30000, 300, 0.35, true},
	{election.WorkloadGeneral, 20000, 800, 0.15, false},
	{election.WorkloadGeneral, 800, 200, 0.35, true},
	{election.WorkloadChat, 1500, 300, 0.15, true},
}

// historyPeakPerHour is a model's requests in its busiest hour (1,500 a
// minute: enough that the cheapest listings meet their rate caps at peak).
const historyPeakPerHour = 90000

// Busyness is how busy the demo's customers are at a time: the traffic
// driver's daily cycle (quiet at night UTC, busiest mid-afternoon) and
// quieter weekends.
func Busyness(t time.Time) float64 {
	hour := float64(t.UTC().Hour()) + float64(t.UTC().Minute())/60
	daily := 0.55 + 0.45*math.Sin((hour-9)/24*2*math.Pi)
	if d := t.UTC().Weekday(); d == time.Saturday || d == time.Sunday {
		return daily * 0.6
	}
	return daily
}

// outage is a planted daily incident: the Fathom listings (Fathom holds
// gpt-oss-120b's traffic) fail 30 % of requests from 03:00 to 04:00 UTC, so
// the demo has incidents to show.
func outage(l *catalogue.Listing, t time.Time) bool {
	return l.CarrierSlug == "fathom" && t.UTC().Hour() == 3
}

// SeedHistory writes hourly traffic for every listing in service over the
// days before the last 25 hours, and dates the seeded fares back to its
// start, so the demo's traffic pages, earnings and statements have months
// to show. The traffic is routed, not drawn from a popularity curve: each
// hour, each model's synthetic streams are elected on the fares and health
// in force with the traffic rules the reference gateway follows (stable
// preference per shape, 1 % exploration, rate caps), so history follows the
// fares as live traffic does. The last 25 hours are left to the gateway. It
// runs once, with the seed.
func SeedHistory(ctx context.Context, st *store.Store, days int) error {
	listings, err := st.FindListingSnapshots(ctx)
	if err != nil {
		return fmt.Errorf("seed traffic history: %w", err)
	}
	now := st.Now().UTC().Truncate(time.Hour)
	start := now.Add(-time.Duration(days) * 24 * time.Hour)
	if err := st.BackdateSeedFares(ctx, start); err != nil {
		return err
	}
	markets := map[string]*preview.Market{}
	var models []string
	for _, l := range listings {
		m := markets[l.Model.Slug]
		if m == nil {
			m = &preview.Market{}
			markets[l.Model.Slug] = m
			models = append(models, l.Model.Slug)
		}
		m.Listings = append(m.Listings, l)
	}
	slices.Sort(models)
	rng := rand.New(rand.NewPCG(2026, 12))
	var incumbents traffic.Incumbents
	rows := map[int64][]catalogue.HourlyPoint{}
	for h := start; h.Before(now.Add(-25 * time.Hour)); h = h.Add(time.Hour) {
		for _, model := range models {
			for id, p := range routeHour(markets[model], model, h, rng, &incumbents) {
				rows[id] = append(rows[id], p)
			}
		}
	}
	return st.SeedHourly(ctx, rows)
}

// routeHour elects one hour of a model's synthetic streams and returns each
// listing's figures for it.
func routeHour(m *preview.Market, model string, h time.Time, rng *rand.Rand, incumbents *traffic.Incumbents) map[int64]catalogue.HourlyPoint {
	out := map[int64]catalogue.HourlyPoint{}
	used := map[int64]int64{} // each listing's requests this hour, across streams, for its cap
	total := float64(historyPeakPerHour) * Busyness(h) * (0.9 + 0.2*rng.Float64())
	for _, s := range historyStreams {
		n := int64(math.Round(total * s.share))
		if n == 0 {
			continue
		}
		req := election.Request{Model: model, PromptTokens: s.prompt, Streaming: s.streaming, Routing: election.ModeAuto, Workload: s.workload, At: h}
		b, entries, _ := m.BallotEntries(req, preview.Change{})
		res := election.Elect(&b)
		holder := incumbents.Hold(traffic.ShapeOf(&req), &b, &res)
		if holder < 0 {
			continue
		}
		// How each listing came by its requests: the holder's routed share,
		// the 1 % exploration spread evenly over the others, and fallbacks.
		type came struct{ routed, explored, fallback int64 }
		served := map[int]*came{}
		get := func(i int) *came {
			if served[i] == nil {
				served[i] = &came{}
			}
			return served[i]
		}
		others := 0
		for i := range res.Candidates {
			if res.Candidates[i].Eligible && i != holder {
				others++
			}
		}
		explored := int64(0)
		if others > 0 {
			explored = int64(math.Round(float64(n) * traffic.ExplorationRate))
			for k := range explored {
				i, _ := traffic.Explore(&req, &res, holder, 0, (float64(k)+0.5)/float64(explored))
				get(i).explored++
			}
		}
		get(holder).routed += n - explored
		// A holder past its cap (its requests a minute, over the hour and
		// every stream) serves what the cap allows; the rest fall back to the
		// next by rank, counted as capped on the holder.
		capped := int64(0)
		if f := entries[holder].Fare; f.MaxRPM != nil {
			room := max(0, *f.MaxRPM*60-used[entries[holder].Listing.ID])
			if get(holder).routed > room {
				capped = get(holder).routed - room
				get(holder).routed = room
				for _, i := range res.Ranked() {
					if i != holder {
						get(i).fallback += capped
						break
					}
				}
			}
		}
		for i, c := range served {
			l := entries[i].Listing
			p := out[l.ID]
			p.Hour = h
			requests := c.routed + c.explored + c.fallback
			used[l.ID] += requests
			if requests == 0 {
				continue
			}
			hit := 0.0
			if entries[i].Fare.CachedInput != nil {
				hit = res.Candidates[i].HitRate
			}
			ok := addStream(&p, l, s, requests, hit, h, rng)
			// Of the successes, each kind its part (rounded down, so their
			// sum never passes the successes).
			p.Routed += c.routed * ok / requests
			p.Exploration += c.explored * ok / requests
			p.Fallback += c.fallback * ok / requests
			if i == holder {
				p.Capped += capped
			}
			out[l.ID] = p
		}
	}
	return out
}

// addStream adds one stream's requests at a listing to its hour, from the
// listing's seeded health (its uptime, first-token latency and speed), and
// returns the successes.
func addStream(p *catalogue.HourlyPoint, l *catalogue.Listing, s historyStream, requests int64, hitRate float64, h time.Time, rng *rand.Rand) int64 {
	uptime, ttft, tps := 99.0, 600.0, 60.0
	if l.Health.UptimePct != nil {
		uptime = *l.Health.UptimePct
	}
	if l.Health.LatencyMs != nil {
		ttft = *l.Health.LatencyMs
	}
	if l.Health.ThroughputTPS != nil && *l.Health.ThroughputTPS > 0 {
		tps = *l.Health.ThroughputTPS
	}
	if outage(l, h) {
		uptime = 70
	}
	errs := int64(math.Round(float64(requests) * math.Max(0, (100-uptime)/100*(0.5+rng.Float64()))))
	errs = min(errs, requests)
	clientErrs := min(int64(rng.IntN(3)), requests-errs)
	ok := requests - errs - clientErrs
	output := ok * s.output
	p.Requests += requests
	p.Errors += errs
	p.ClientErrors += clientErrs
	p.TTFTMsSum += int64(float64(ok) * ttft * (0.85 + 0.3*rng.Float64()))
	p.OutputTokens += output
	p.DurationMs += int64(float64(ok)*ttft + float64(output)/tps*1000)
	p.InputTokens += ok * s.prompt
	p.CachedInputTokens += int64(float64(ok*s.prompt) * hitRate)
	return ok
}
