package web

import (
	"fmt"
	"time"

	"github.com/airside/airside/internal/catalogue"
	"github.com/airside/airside/internal/preflight"
	"github.com/airside/airside/internal/workflow"
	"github.com/airside/airside/templates"
)

func endpointView(csrf string, l *catalogue.Listing, inFlight *workflow.Filing, canRegister bool) templates.EndpointView {
	v := templates.EndpointView{CSRF: csrf, ListingURL: fmt.Sprintf("/listings/%d", l.ID), CanRegister: canRegister}
	if e := l.Endpoint; e != nil {
		v.Published = &templates.EndpointRow{BaseURL: e.BaseURL, UpstreamModel: e.UpstreamModel, KeyHint: e.KeyHint, Since: stamp(&e.CreatedAt)}
		v.HasKey = true
		v.Form = templates.EndpointForm{BaseURL: e.BaseURL, UpstreamModel: e.UpstreamModel}
	}
	if inFlight != nil && inFlight.IsEndpoint() && inFlight.Endpoint != nil {
		e := inFlight.Endpoint
		v.Pending = &templates.EndpointRow{BaseURL: e.BaseURL, UpstreamModel: e.UpstreamModel, KeyHint: e.KeyHint,
			FilingURL: fmt.Sprintf("/filings/%d", inFlight.ID)}
		v.HasKey = true
	}
	if v.Form.UpstreamModel == "" {
		v.Form.UpstreamModel = l.Model.Slug
	}
	return v
}

var stateClass = map[preflight.State]string{
	preflight.Passed: "verified", preflight.Failed: "failed", preflight.Running: "running", preflight.Queued: "pending",
}

// preflightView shows, for every probe, the state in the run under way (or
// the last run) and otherwise the latest verdict of the endpoint shown.
func preflightView(csrf string, l *catalogue.Listing, ep *catalogue.Endpoint, run *preflight.Run, latest map[string]preflight.Result,
	canRun bool, now time.Time) templates.PreflightView {
	v := templates.PreflightView{ListingURL: fmt.Sprintf("/listings/%d", l.ID), CSRF: csrf, CanRun: canRun}
	if ep == nil {
		v.None = true
		return v
	}
	v.Endpoint = ep.BaseURL + " · " + ep.UpstreamModel
	if l.Endpoint == nil || l.Endpoint.ID != ep.ID {
		v.Endpoint += " (under review)"
	}
	thisEndpoint := run != nil && run.EndpointID == ep.ID
	v.Busy = thisEndpoint && run.Busy()
	switch {
	case run == nil:
		v.RunLabel = "Not run yet"
	case v.Busy && run.State == preflight.RunQueued:
		// Queued is not started (issue 29 L12): say when, and what it waits for.
		v.RunLabel = fmt.Sprintf("Run #%d queued %s; it starts when a probe slot is free", run.ID, ago(run.CreatedAt, now))
	case v.Busy:
		v.RunLabel = fmt.Sprintf("Run #%d running (queued %s)", run.ID, ago(run.CreatedAt, now))
	case run.FinishedAt != nil:
		v.RunLabel = fmt.Sprintf("Last run #%d (%s) finished %s", run.ID, run.Reason, ago(*run.FinishedAt, now))
	}
	for _, p := range preflight.Probes {
		r, ok := preflight.Result{}, false
		if thisEndpoint {
			r, ok = run.Results[p.Name]
		}
		if !ok {
			r, ok = latest[p.Name]
		}
		if !ok && v.Busy {
			r, ok = preflight.Result{State: preflight.Queued}, true
		}
		row := templates.ProbeRow{Name: p.Name, Title: p.Title, Capability: p.Capability, Request: p.Request, State: "not run", StateClass: "pending"}
		if ok {
			row.State, row.StateClass = string(r.State), stateClass[r.State]
			row.Excerpt, row.Error = r.Excerpt, r.Error
			if r.State == preflight.Failed {
				row.Fix = p.Fix
			}
			if r.Status != 0 {
				row.Status = fmt.Sprint(r.Status)
			}
			if r.Latency > 0 && (r.State == preflight.Passed || r.State == preflight.Failed) {
				row.Latency = fmt.Sprintf("%d ms", r.Latency.Milliseconds())
			}
			row.At = ago(r.At, now)
		}
		if p.Name == preflight.ProbeStreaming && r.State == preflight.Passed {
			v.Speed = "first token " + templates.Millis(float64(r.TTFT.Milliseconds())) + ", " + templates.TokensPerSecond(r.TokensPerSecond)
		}
		if p.Name == preflight.ProbeCache && r.State == preflight.Failed && l.Published != nil && l.Published.CachedInput != nil {
			v.CacheWarning = true
		}
		v.Rows = append(v.Rows, row)
	}
	return v
}
