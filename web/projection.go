package web

import (
	"context"
	"slices"
	"sort"
	"time"

	"github.com/airside/airside/internal/catalogue"
	"github.com/airside/airside/internal/earnings"
	"github.com/airside/airside/internal/election"
	"github.com/airside/airside/internal/fare"
	"github.com/airside/airside/internal/preview"
	"github.com/airside/airside/internal/traffic"
)

// ProjectionReach is how far back a traffic page projects, hour by hour,
// what the preview would have said: a month of hours is a few thousand
// elections; a year's would be a page that waits.
const ProjectionReach = 31 * 24 * time.Hour

// pastProjection is, for one listing, the share the preview projected in
// each past hour from what was then in force, and its model's requests in
// that hour: the projection a traffic page sets beside the measured share.
type pastProjection struct {
	hours    []time.Time
	shares   []preview.Share
	requests []int64
	// capped are the requests the model's listings' caps turned away in
	// each hour.
	capped []int64
}

// cappedSince sums what the model's caps turned away from the hour from on.
func (p pastProjection) cappedSince(from time.Time) int64 {
	var n int64
	for i, h := range p.hours {
		if !h.Before(from) {
			n += p.capped[i]
		}
	}
	return n
}

// over is the projection weighed by the model's requests over the hours
// from since (inclusive) to until (exclusive).
func (p pastProjection) over(since, until time.Time) (preview.Share, bool) {
	var shares []preview.Share
	var requests []int64
	for i, h := range p.hours {
		if !h.Before(since) && h.Before(until) {
			shares, requests = append(shares, p.shares[i]), append(requests, p.requests[i])
		}
	}
	return preview.WeighedShare(shares, requests)
}

// projectPast rebuilds, for every hour from since to until (at most
// ProjectionReach back from until), what was in force for the listing's
// model (every listing's published fare and health, the hour's workload
// mix) and projects the listing's share of each hour as the preview would
// have (preview.ProjectHistory). An hour in which a fare was published is
// projected in parts, before and after, each weighed by the model's
// requests in it. ok is false for a model routing does not know.
func (s *Server) projectPast(ctx context.Context, l *catalogue.Listing, since, until time.Time) (pastProjection, bool, error) {
	snap, err := s.Routing.Current(ctx)
	if err != nil {
		return pastProjection{}, false, err
	}
	live, ok := snap.Market(l.Model.Slug)
	if !ok {
		return pastProjection{}, false, nil
	}
	// The base market holds each listing's stored health: what the
	// catalogue served for an hour the gateway had reported nothing before.
	market := preview.Market{Listings: make([]catalogue.Listing, len(live.Listings)), Checks: live.Checks}
	ids := make([]int64, len(live.Listings))
	for i, ml := range live.Listings {
		market.Listings[i] = ml
		market.Listings[i].Health, _ = snap.StoredHealth(ml.ID)
		ids[i] = ml.ID
	}
	since, until = since.UTC().Truncate(time.Hour), until.UTC()
	if reach := until.Add(-ProjectionReach).Truncate(time.Hour); since.Before(reach) {
		since = reach
	}
	// A day before the first hour: the health of an hour reads the day
	// before it.
	hourly, err := s.TrafficReads.HourlyTraffic(ctx, ids, since.Add(-24*time.Hour), until)
	if err != nil {
		return pastProjection{}, false, err
	}
	history, err := s.TrafficReads.FareHistory(ctx, ids)
	if err != nil {
		return pastProjection{}, false, err
	}
	demand, err := s.TrafficReads.DemandByHour(ctx, l.Model.Slug, since, until, election.CachePromptTokens)
	if err != nil {
		return pastProjection{}, false, err
	}
	modelRequests, modelCapped := map[time.Time]int64{}, map[time.Time]int64{}
	var learnedHours []traffic.Hour
	for i, id := range ids {
		for _, hp := range hourly[id] {
			modelRequests[hp.Hour.UTC()] += hp.Requests
			modelCapped[hp.Hour.UTC()] += hp.Capped
			learnedHours = append(learnedHours, traffic.Hour{Start: hp.Hour.UTC(), Candidate: preview.CandidateID(&market.Listings[i]),
				Successes: hp.Requests - hp.Errors - hp.ClientErrors, InputTokens: hp.InputTokens, CachedInputTokens: hp.CachedInputTokens,
				OutputTokens: hp.OutputTokens})
		}
	}
	// Fare publications within the window, each a moment of its own.
	changes := map[time.Time][]time.Time{}
	for _, spans := range history {
		for _, f := range spans {
			if h := f.From.Truncate(time.Hour); !f.From.Equal(h) && !h.Before(since) && h.Before(until) {
				changes[h] = append(changes[h], f.From)
			}
		}
	}
	var p pastProjection
	var moments []preview.Moment
	var parts []hourPart
	for h := since; h.Before(until); h = h.Add(time.Hour) {
		var mix map[string]float64
		var prompts map[string]int64
		if d := demand[h]; len(d) > 0 {
			mix, _ = preview.MixFromDemand(d)
			prompts = preview.PromptsFromDemand(d)
		}
		health := map[int64]catalogue.Health{}
		for _, id := range ids {
			if hh, ok := catalogue.HealthAt(hourly[id], h); ok {
				health[id] = hh
			}
		}
		learned := traffic.Learn(learnedHours, h.Add(-time.Second))
		splits, weights, err := s.hourSplits(ctx, ids, h, changes[h])
		if err != nil {
			return pastProjection{}, false, err
		}
		for i, from := range splits {
			m := preview.Moment{At: from, Fares: map[int64]*fare.Fare{}, Health: health, Mix: mix, Prompts: prompts, Learned: learned,
				Idle: modelRequests[h] == 0}
			for _, id := range ids {
				if f := earnings.FareAt(history[id], from); f != nil {
					m.Fares[id] = f
				}
			}
			moments = append(moments, m)
			parts = append(parts, hourPart{hour: len(p.hours), weight: weights[i]})
		}
		p.hours, p.requests, p.capped = append(p.hours, h), append(p.requests, modelRequests[h]), append(p.capped, modelCapped[h])
	}
	p.shares = make([]preview.Share, len(p.hours))
	me := slices.IndexFunc(market.Listings, func(ml catalogue.Listing) bool { return ml.ID == l.ID })
	if me < 0 {
		return pastProjection{}, false, nil
	}
	for i, shares := range preview.ProjectHistory(market, l.Model.Slug, moments) {
		s, part := shares[me], parts[i]
		p.shares[part.hour].Total += part.weight * s.Total
		p.shares[part.hour].Exploration += part.weight * s.Exploration
	}
	return p, true, nil
}

// hourPart says which hour a moment belongs to and its weight in it.
type hourPart struct {
	hour   int
	weight float64
}

// hourSplits cuts the hour h at the fare publications within it: the start
// of each part and its weight, the model's requests in it as the minute
// buckets count them (kept about a day), else its length.
func (s *Server) hourSplits(ctx context.Context, ids []int64, h time.Time, changes []time.Time) ([]time.Time, []float64, error) {
	if len(changes) == 0 {
		return []time.Time{h}, []float64{1}, nil
	}
	starts := append([]time.Time{h}, changes...)
	slices.SortFunc(starts, time.Time.Compare)
	starts = slices.CompactFunc(starts, time.Time.Equal)
	ends := append(starts[1:len(starts):len(starts)], h.Add(time.Hour))
	minutes, err := s.TrafficReads.RequestsByMinute(ctx, ids, h, h.Add(time.Hour))
	if err != nil {
		return nil, nil, err
	}
	weights := make([]float64, len(starts))
	var total float64
	for m, n := range minutes {
		// A minute belongs to the part in force at its start.
		i := sort.Search(len(starts), func(i int) bool { return starts[i].After(m) }) - 1
		weights[max(i, 0)] += float64(n)
		total += float64(n)
	}
	for i := range weights {
		if total > 0 {
			weights[i] /= total
		} else {
			weights[i] = ends[i].Sub(starts[i]).Hours()
		}
	}
	return starts, weights, nil
}
