package demo

import (
	"context"
	"errors"
	"fmt"
	"math"
	"math/rand/v2"
	"slices"
	"time"

	"github.com/airside/airside/internal/catalogue"
	"github.com/airside/airside/internal/store"
)

// TrafficFor makes one minute of plausible traffic for a listing from its
// seeded health: requests around a base rate, failures at its uptime, first
// tokens at its latency and generation at its throughput, with noise.
func TrafficFor(rng *rand.Rand, l *catalogue.Listing, base catalogue.Health, minute time.Time) catalogue.Bucket {
	uptime, ttft, tps := 99.0, 600.0, 60.0
	if base.UptimePct != nil {
		uptime = *base.UptimePct
	}
	if base.LatencyMs != nil {
		ttft = *base.LatencyMs
	}
	if base.ThroughputTPS != nil {
		tps = *base.ThroughputTPS
	}
	requests := int64(float64(40+rng.IntN(120)) * Busyness(l.ID, minute))
	if outage(l, minute) {
		uptime = 70
	}
	failRate := math.Max(0, (100-uptime)/100*(0.5+rng.Float64()))
	errs := int64(math.Round(float64(requests) * failRate))
	clientErrs := int64(rng.IntN(3))
	if errs+clientErrs > requests {
		errs, clientErrs = requests, 0
	}
	ok := requests - errs - clientErrs
	outPer := int64(150 + rng.IntN(500))
	output := ok * outPer
	inputPer := int64(2000 + rng.IntN(18000))
	input := requests * inputPer
	var capped int64
	if f := l.Published; f != nil && f.MaxRPM != nil && requests > *f.MaxRPM {
		capped, requests = requests-*f.MaxRPM, *f.MaxRPM
		ok = max(requests-errs-clientErrs, 0)
		output, input = ok*outPer, requests*inputPer
	}
	return catalogue.Bucket{Capped: capped,
		ListingID: l.ID, Minute: minute, Requests: requests, Errors: errs, ClientErrors: clientErrs,
		TTFTMsSum:    int64(float64(ok) * ttft * (0.85 + 0.3*rng.Float64())),
		OutputTokens: output,
		DurationMs:   int64(float64(output) / tps * 1000 * (0.9 + 0.2*rng.Float64())),
		InputTokens:  input, CachedInputTokens: int64(float64(input) * (0.3 + 0.4*rng.Float64())),
	}
}

// SimulateTraffic writes minutes of traffic, ending at the current minute,
// for every listing in service, from each listing's seeded health.
func SimulateTraffic(ctx context.Context, st *store.Store, minutes int, rng *rand.Rand) (int, error) {
	listings, err := st.FindListingSnapshots(ctx)
	if err != nil {
		return 0, err
	}
	now := st.Now().UTC().Truncate(time.Minute)
	var buckets []catalogue.Bucket
	for i := range listings {
		l := &listings[i]
		if l.Status != catalogue.StatusInService {
			continue
		}
		for m := minutes - 1; m >= 0; m-- {
			buckets = append(buckets, TrafficFor(rng, l, l.Health, now.Add(-time.Duration(m)*time.Minute)))
		}
	}
	err = st.RecordBuckets(ctx, buckets)
	var replay *catalogue.ReplayError
	if errors.As(err, &replay) { // minutes recorded before a restart stand: simulate only the others
		for _, i := range slices.Backward(replay.Indexes) {
			buckets = slices.Delete(buckets, i, i+1)
		}
		err = st.RecordBuckets(ctx, buckets)
	}
	if err != nil {
		return 0, fmt.Errorf("simulate traffic: %w", err)
	}
	return len(buckets), nil
}

// RunTraffic backfills an hour and then feeds one minute of traffic every
// minute until ctx ends, so the demo's health and previews move.
func RunTraffic(ctx context.Context, st *store.Store, onError func(error)) {
	rng := rand.New(rand.NewPCG(uint64(time.Now().UnixNano()), 7))
	if _, err := SimulateTraffic(ctx, st, catalogue.WindowMinutes, rng); err != nil {
		onError(err)
	}
	t := time.NewTicker(time.Minute)
	defer t.Stop()
	for {
		select {
		case <-ctx.Done():
			return
		case <-t.C:
			if _, err := SimulateTraffic(ctx, st, 1, rng); err != nil && ctx.Err() == nil {
				onError(err)
			}
		}
	}
}

// Busyness is how busy a listing is at a time: a daily cycle (quiet at
// night UTC, busiest mid-afternoon), quieter weekends, and a popularity of
// its own (some listings win far more of their model than others).
func Busyness(listingID int64, t time.Time) float64 {
	hour := float64(t.UTC().Hour()) + float64(t.UTC().Minute())/60
	daily := 0.55 + 0.45*math.Sin((hour-9)/24*2*math.Pi)
	weekly := 1.0
	if d := t.UTC().Weekday(); d == time.Saturday || d == time.Sunday {
		weekly = 0.6
	}
	popularity := 0.5 + float64((listingID*7919)%11)*0.75
	return daily * weekly * popularity
}

// outage is a planted daily incident: the Vantage listings fail 30 % of
// requests from 03:00 to 04:00 UTC, so the demo has incidents to show.
func outage(l *catalogue.Listing, t time.Time) bool {
	return l.CarrierSlug == "vantage" && t.UTC().Hour() == 3
}

// SeedHistory writes hourly traffic for every listing in service over the
// days before the last 25 hours (which the minute simulator covers), and
// dates the seeded fares back to its start, so the demo's traffic pages,
// earnings and statements have months to show. It runs once, with the seed.
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
	rng := rand.New(rand.NewPCG(2026, 12))
	rows := map[int64][]catalogue.HourlyPoint{}
	for i := range listings {
		l := &listings[i]
		if l.Status != catalogue.StatusInService {
			continue
		}
		for h := start; h.Before(now.Add(-25 * time.Hour)); h = h.Add(time.Hour) {
			var hp catalogue.HourlyPoint
			hp.Hour = h
			for m := 0; m < 60; m += 10 { // six sampled minutes, scaled to the hour
				b := TrafficFor(rng, l, l.Health, h.Add(time.Duration(m)*time.Minute))
				hp.Requests += 10 * b.Requests
				hp.Errors += 10 * b.Errors
				hp.ClientErrors += 10 * b.ClientErrors
				hp.TTFTMsSum += 10 * b.TTFTMsSum
				hp.OutputTokens += 10 * b.OutputTokens
				hp.DurationMs += 10 * b.DurationMs
				hp.InputTokens += 10 * b.InputTokens
				hp.CachedInputTokens += 10 * b.CachedInputTokens
				hp.Capped += 10 * b.Capped
			}
			rows[l.ID] = append(rows[l.ID], hp)
		}
	}
	return st.SeedHourly(ctx, rows)
}
