package gateway

import (
	"context"
	"log/slog"
	"net/http"
	"sync/atomic"
	"time"

	"github.com/airside/airside/internal/catalogue"
	"github.com/airside/airside/internal/gatewayclient"
)

// Reporter posts each closed minute to the portal's /metrics: retried with
// backoff, buffered while the portal is away (for as long as the portal
// accepts a minute), and safe to replay (the portal keeps the first write of
// a listing's minute and accepts the same figures again).
type Reporter struct {
	API      *gatewayclient.ClientWithResponses
	Recorder *Recorder
	Log      *slog.Logger
	Now      func() time.Time
	// Every is how often closed minutes are posted (default 10 s).
	Every time.Duration
	// Grace is how long after a minute ends it is closed: answers still
	// streaming at its end are counted in the minute they finish.
	Grace time.Duration
	// Source names this gateway in its reports: each of several gateways
	// reports its own part of a minute, and the portal adds them up.
	Source string
	// ProjectLabel names an API project to the portal (Gateway.
	// ProjectLabel); nil reports no project's minutes.
	ProjectLabel func(name string) string
	// DeclaredRates are the cache rates a project declares (Gateway.
	// DeclaredRates), reported with its minutes as they are when the
	// minute is posted; nil reports none.
	DeclaredRates func(name string) (hitRate, outputRatio *float64)

	pending  []gatewayclient.Bucket
	demand   []gatewayclient.Demand
	holders  []gatewayclient.ShapeHolder
	orgs     []gatewayclient.OrgUsage
	projects []gatewayclient.ProjectMinute
	// waiting is len(pending), for the metrics endpoint (pending is Run's
	// alone).
	waiting atomic.Int64
	refused atomic.Int64
	adopted atomic.Int64
}

// Adopted is how many counts of ended processes (killed or crashed) this
// reporter read back from the spool and posted.
func (r *Reporter) Adopted() int64 { return r.adopted.Load() }

// Refused is how many batches the portal refused (409 or 422) and were
// dropped.
func (r *Reporter) Refused() int64 { return r.refused.Load() }

// Waiting is how many closed buckets wait to be posted (the portal away,
// or a post failed).
func (r *Reporter) Waiting() int64 { return r.waiting.Load() }

// Run reports until ctx ends, then reports what it has once more.
func (r *Reporter) Run(ctx context.Context) {
	every := r.Every
	if every <= 0 {
		every = 10 * time.Second
	}
	backoff := every
	adopt := func() {
		if err := r.AdoptOrphans(ctx); err != nil {
			r.Log.Warn("metrics: the counts ended processes left in the spool wait for a later try", "err", err)
		}
	}
	adopt()
	for {
		select {
		case <-ctx.Done():
			flush, cancel := context.WithTimeout(context.Background(), 5*time.Second)
			r.Report(flush, r.Now().Add(time.Minute+r.Grace)) // the open minute too
			cancel()
			return
		case <-time.After(backoff):
		}
		if err := r.Report(ctx, r.Now()); err != nil {
			r.Log.Warn("metrics: will retry", "err", err, "buffered", len(r.pending))
			backoff = min(2*backoff, 2*time.Minute)
			continue
		}
		backoff = every
		adopt()
	}
}

// Report takes the minutes closed by now and posts everything pending.
func (r *Reporter) Report(ctx context.Context, now time.Time) error {
	defer func() { r.waiting.Store(int64(len(r.pending))) }()
	source := nilIfEmpty(r.Source)
	for _, m := range r.Recorder.TakeClosed(now.Add(-r.Grace)) {
		b := bucketOf(m)
		b.Source = source
		r.pending = append(r.pending, b)
	}
	for _, d := range r.Recorder.TakeClosedDemand(now.Add(-r.Grace)) {
		prompt, large, largePrompt, streaming := d.PromptTokens, d.LargeRequests, d.LargePromptTokens, d.Kind.Streaming
		var requires *[]gatewayclient.Capability
		if names := d.Kind.Requires.Names(); len(names) > 0 {
			caps := make([]gatewayclient.Capability, len(names))
			for i, n := range names {
				caps[i] = gatewayclient.Capability(n)
			}
			requires = &caps
		}
		var asked *map[string]int64
		if len(d.Asked) > 0 {
			asked = &d.Asked
		}
		r.demand = append(r.demand, gatewayclient.Demand{Model: d.Model, Workload: gatewayclient.Workload(d.Workload.String()),
			Minute: d.Minute, Source: source, Requests: d.Requests, PromptTokens: &prompt, LargeRequests: &large, LargePromptTokens: &largePrompt,
			Streaming: &streaming, Requires: requires, Asked: asked})
	}
	// The portal takes a minute for 25 hours; older ones can only be dropped.
	oldest := now.Add(-catalogue.MaxBucketAge + 5*time.Minute)
	kept := r.pending[:0]
	for _, b := range r.pending {
		if b.Minute.After(oldest) {
			kept = append(kept, b)
		}
	}
	keptDemand := r.demand[:0]
	for _, d := range r.demand {
		if d.Minute.After(oldest) {
			keptDemand = append(keptDemand, d)
		}
	}
	if dropped := len(r.pending) - len(kept) + len(r.demand) - len(keptDemand); dropped > 0 {
		r.Log.Error("metrics: dropped minutes the portal no longer accepts", "rows", dropped)
	}
	r.pending, r.demand = kept, keptDemand
	for _, h := range r.Recorder.TakeClosedHolders(now.Add(-r.Grace)) {
		r.holders = append(r.holders, gatewayclient.ShapeHolder{Model: h.Shape.Model, Workload: gatewayclient.Workload(h.Shape.Workload.String()),
			CacheRelevant: h.Shape.CacheRelevant, ListingId: h.ListingID, Minute: h.Minute, Second: &h.Second, Source: source,
			Requests: &h.Requests})
	}
	for len(r.pending) > 0 || len(r.demand) > 0 {
		n, m := min(len(r.pending), catalogue.MaxBuckets), min(len(r.demand), catalogue.MaxDemand)
		body := gatewayclient.PostMetricsJSONRequestBody{Buckets: r.pending[:n]}
		if m > 0 {
			demand := r.demand[:m]
			body.Demand = &demand
		}
		// respond-async: the portal answers once the batch is checked and
		// durable, not after folding its rows; a conflicting replay is then
		// refused in the portal's log, not here (this reporter sends a
		// minute's same figures on every retry).
		res, err := r.API.PostMetricsWithResponse(ctx, &gatewayclient.PostMetricsParams{Prefer: new("respond-async")}, body)
		if err != nil {
			return err
		}
		switch code := res.StatusCode(); {
		case code == http.StatusOK || code == http.StatusCreated || code == http.StatusAccepted || code == http.StatusNoContent:
		case code == http.StatusConflict || code == http.StatusUnprocessableEntity:
			// Another writer recorded other figures for a minute (those
			// rows alone were refused, the rest stored), or the batch is
			// refused as bad: retrying cannot help. Say so loudly.
			r.Log.Error("metrics: the portal refused a batch or rows of it; dropping it", "status", code, "body", string(res.Body))
			r.refused.Add(1)
		default:
			return &postError{status: code, body: string(res.Body)}
		}
		r.pending, r.demand = r.pending[n:], r.demand[m:]
	}
	if err := r.reportHolders(ctx, oldest); err != nil {
		return err
	}
	for _, o := range r.Recorder.TakeClosedOrgs(now.Add(-r.Grace)) {
		p := func(v int64) *int64 { return &v }
		r.orgs = append(r.orgs, gatewayclient.OrgUsage{ListingId: o.ListingID, Minute: o.Minute, Source: source, Organisation: o.Organisation,
			Requests: o.Requests, Errors: p(o.Errors), InputTokens: p(o.InputTokens), CachedInputTokens: p(o.CachedInputTokens), OutputTokens: p(o.OutputTokens)})
	}
	if err := r.reportOrgs(ctx, oldest); err != nil {
		return err
	}
	for _, m := range r.Recorder.TakeClosedProjects(now.Add(-r.Grace)) {
		if r.ProjectLabel == nil {
			continue // taken all the same: the recorder keeps no minute it will not report
		}
		var hits *int64
		if m.ResponseCacheHits > 0 {
			hits = &m.ResponseCacheHits
		}
		var hitRate, outputRatio *float64
		if r.DeclaredRates != nil {
			hitRate, outputRatio = r.DeclaredRates(m.Project)
		}
		r.projects = append(r.projects, gatewayclient.ProjectMinute{Project: r.ProjectLabel(m.Project), ListingId: m.ListingID, Minute: m.Minute,
			Source: source, Answers: m.Successes, InputTokens: m.InputTokens, CachedInputTokens: m.CachedInputTokens, OutputTokens: m.OutputTokens,
			ResponseCacheHits: hits, CacheHitRate: hitRate, CacheOutputRatio: outputRatio})
	}
	if err := r.reportProjects(ctx, oldest); err != nil {
		return err
	}
	// Everything closed by now is the portal's: the spool may forget it.
	r.Recorder.Spool.Posted(now.Add(-r.Grace))
	return nil
}

// reportOrgs posts the organisations' closed minutes (after the metrics),
// kept while the portal is away as the metrics are kept.
func (r *Reporter) reportOrgs(ctx context.Context, oldest time.Time) error {
	kept := r.orgs[:0]
	for _, o := range r.orgs {
		if o.Minute.After(oldest) {
			kept = append(kept, o)
		}
	}
	r.orgs = kept
	for len(r.orgs) > 0 {
		n := min(len(r.orgs), catalogue.MaxOrgUsage)
		res, err := r.API.PostOrgUsageWithResponse(ctx, gatewayclient.PostOrgUsageJSONRequestBody{Organisations: r.orgs[:n]})
		if err != nil {
			return err
		}
		switch code := res.StatusCode(); {
		case code == http.StatusAccepted || code == http.StatusOK || code == http.StatusNoContent:
		case code == http.StatusBadRequest || code == http.StatusNotFound || code == http.StatusUnprocessableEntity:
			// Refused as bad, or a portal without the endpoint: retrying
			// cannot help, and the metrics do not depend on it.
			r.Log.Error("metrics: the portal refused the organisations' minutes; dropping them", "status", code, "body", string(res.Body))
			r.refused.Add(1)
		default:
			return &postError{status: code, body: string(res.Body)}
		}
		r.orgs = r.orgs[n:]
	}
	return nil
}

// reportProjects posts the projects' closed minutes (after the metrics),
// kept while the portal is away as the metrics are kept.
func (r *Reporter) reportProjects(ctx context.Context, oldest time.Time) error {
	kept := r.projects[:0]
	for _, p := range r.projects {
		if p.Minute.After(oldest) {
			kept = append(kept, p)
		}
	}
	r.projects = kept
	for len(r.projects) > 0 {
		n := min(len(r.projects), catalogue.MaxProjectMinutes)
		res, err := r.API.PostProjectMinutesWithResponse(ctx, gatewayclient.PostProjectMinutesJSONRequestBody{Projects: r.projects[:n]})
		if err != nil {
			return err
		}
		switch code := res.StatusCode(); {
		case code == http.StatusAccepted || code == http.StatusOK || code == http.StatusNoContent:
		case code == http.StatusBadRequest || code == http.StatusNotFound || code == http.StatusUnprocessableEntity:
			// Refused as bad, or a portal without the endpoint: retrying
			// cannot help, and the metrics do not depend on it.
			r.Log.Error("metrics: the portal refused the projects' minutes; dropping them", "status", code, "body", string(res.Body))
			r.refused.Add(1)
		default:
			return &postError{status: code, body: string(res.Body)}
		}
		r.projects = r.projects[n:]
	}
	return nil
}

// reportHolders posts the shapes' holders of the closed minutes (after the
// metrics: a holder is worth nothing without its minute's counts), keeping
// them while the portal is away as the metrics are kept.
func (r *Reporter) reportHolders(ctx context.Context, oldest time.Time) error {
	kept := r.holders[:0]
	for _, h := range r.holders {
		if h.Minute.After(oldest) {
			kept = append(kept, h)
		}
	}
	r.holders = kept
	for len(r.holders) > 0 {
		n := min(len(r.holders), catalogue.MaxHolders)
		res, err := r.API.PostShapeHoldersWithResponse(ctx, gatewayclient.PostShapeHoldersJSONRequestBody{Holders: r.holders[:n]})
		if err != nil {
			return err
		}
		switch code := res.StatusCode(); {
		case code == http.StatusAccepted || code == http.StatusOK || code == http.StatusNoContent:
		case code == http.StatusBadRequest || code == http.StatusNotFound || code == http.StatusUnprocessableEntity:
			// Refused as bad, or a portal without the endpoint: retrying
			// cannot help, and the metrics do not depend on it.
			r.Log.Error("metrics: the portal refused the shapes' holders; dropping them", "status", code, "body", string(res.Body))
			r.refused.Add(1)
		default:
			return &postError{status: code, body: string(res.Body)}
		}
		r.holders = r.holders[n:]
	}
	return nil
}

type postError struct {
	status int
	body   string
}

func (e *postError) Error() string {
	return "post metrics: status " + http.StatusText(e.status) + ": " + e.body
}

// bucketOf is a closed minute in the metrics contract. Requests are the
// attempts that reached an answer of the listing's own: 429s are counted
// apart (rateLimited; not an uptime failure, and no answer to time).
func bucketOf(m MinuteStat) gatewayclient.Bucket {
	id := m.ListingID
	p := func(v int64) *int64 { return &v }
	return gatewayclient.Bucket{ListingId: &id, Minute: m.Minute, Requests: m.Attempts - m.RateLimited,
		Errors: p(m.Errors), ClientErrors: p(m.ClientErrors), TtftMsSum: p(m.TTFTMsSum), DurationMs: p(m.DurationMs),
		InputTokens: p(m.InputTokens), CachedInputTokens: p(min(m.CachedInputTokens, m.InputTokens)), OutputTokens: p(m.OutputTokens),
		Capped: p(m.Capped), Routed: p(m.Routed), Pinned: p(m.Pinned), Exploration: p(m.Exploration), Fallback: p(m.Fallback),
		RateLimited: p(m.RateLimited), CacheReadTokens: p(m.CacheReadTokens), CacheWriteTokens: p(m.CacheWriteTokens),
		ToolCalls: p(m.ToolCalls), MalformedToolCalls: p(m.MalformedToolCalls),
		Backoffs: p(m.Backoffs), BreakerOpenings: p(m.BreakerOpenings), BreakerClosings: p(m.BreakerClosings),
		SlowBackoffs: p(m.SlowBackoffs), HeldBack: p(m.HeldBack)}
}
