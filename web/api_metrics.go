package web

import (
	"fmt"
	"net/http"
	"strings"
	"time"

	"github.com/labstack/echo/v4"

	"github.com/airside/airside/internal/apperr"
	"github.com/airside/airside/internal/catalogue"
)

// bucketBody is one metric bucket as posted.
type bucketBody struct {
	Listing            string    `json:"listing"`
	ListingID          int64     `json:"listingId"`
	Minute             time.Time `json:"minute"`
	Source             string    `json:"source"`
	Requests           *int64    `json:"requests"`
	Errors             int64     `json:"errors"`
	ClientErrors       int64     `json:"clientErrors"`
	TTFTMsSum          int64     `json:"ttftMsSum"`
	OutputTokens       int64     `json:"outputTokens"`
	DurationMs         int64     `json:"durationMs"`
	InputTokens        int64     `json:"inputTokens"`
	CachedInputTokens  int64     `json:"cachedInputTokens"`
	Capped             int64     `json:"capped"`
	Routed             int64     `json:"routed"`
	Pinned             int64     `json:"pinned"`
	Exploration        int64     `json:"exploration"`
	Fallback           int64     `json:"fallback"`
	RateLimited        int64     `json:"rateLimited"`
	CacheReadTokens    int64     `json:"cacheReadTokens"`
	CacheWriteTokens   int64     `json:"cacheWriteTokens"`
	ToolCalls          int64     `json:"toolCalls"`
	MalformedToolCalls int64     `json:"malformedToolCalls"`
}

// demandBody is one demand row as posted.
type demandBody struct {
	Model        string    `json:"model"`
	Workload     string    `json:"workload"`
	Minute       time.Time `json:"minute"`
	Source       string    `json:"source"`
	Requests     int64     `json:"requests"`
	PromptTokens int64     `json:"promptTokens"`
	// The large requests and their prompt tokens (both or neither).
	LargeRequests     *int64 `json:"largeRequests"`
	LargePromptTokens *int64 `json:"largePromptTokens"`
	// The kind of the row's requests (both, or requires left out for none).
	Streaming *bool    `json:"streaming"`
	Requires  []string `json:"requires"`
}

// handleAPIMetrics stores a batch of per-minute buckets and demand rows:
// checked whole before anything is stored, idempotent per (listing, minute,
// source) and (model, workload, minute, source). Problems are named by row and field.
func (s *Server) handleAPIMetrics(c echo.Context) error {
	var body struct {
		Buckets []bucketBody `json:"buckets"`
		Demand  []demandBody `json:"demand"`
	}
	if err := decodeJSONFast(c, &body); err != nil {
		return err
	}
	if len(body.Buckets) == 0 && len(body.Demand) == 0 {
		return apperr.Invalid(map[string]string{"buckets": fmt.Sprintf("send 1 to %d buckets, or demand rows", catalogue.MaxBuckets)})
	}
	posted := make([]catalogue.PostedBucket, len(body.Buckets))
	missing := map[string]string{}
	for i, b := range body.Buckets {
		if b.Requests == nil { // 0 requests is a report; no requests field is a mistake
			missing[fmt.Sprintf("buckets[%d].requests", i)] = "required: the requests in this minute (0 for none)"
			continue
		}
		posted[i] = catalogue.PostedBucket{Listing: b.Listing, ListingID: b.ListingID, Bucket: catalogue.Bucket{
			Minute: b.Minute, Source: b.Source, Requests: *b.Requests, Errors: b.Errors, ClientErrors: b.ClientErrors, TTFTMsSum: b.TTFTMsSum,
			OutputTokens: b.OutputTokens, DurationMs: b.DurationMs, InputTokens: b.InputTokens, CachedInputTokens: b.CachedInputTokens, Capped: b.Capped,
			GatewayCounts: catalogue.GatewayCounts{Routed: b.Routed, Pinned: b.Pinned, Exploration: b.Exploration, Fallback: b.Fallback,
				RateLimited: b.RateLimited, CacheReadTokens: b.CacheReadTokens, CacheWriteTokens: b.CacheWriteTokens,
				ToolCalls: b.ToolCalls, MalformedToolCalls: b.MalformedToolCalls}}}
	}
	if len(missing) > 0 {
		return apperr.Invalid(missing)
	}
	demand := make([]catalogue.Demand, len(body.Demand))
	for i, d := range body.Demand {
		demand[i] = catalogue.Demand{Model: d.Model, Workload: d.Workload, Minute: d.Minute, Source: d.Source, Requests: d.Requests, PromptTokens: d.PromptTokens,
			LargeRequests: d.LargeRequests, LargePromptTokens: d.LargePromptTokens, Streaming: d.Streaming, Requires: d.Requires}
	}
	if prefersAsync(c.Request().Header) {
		// Checked whole, then written to the inbox and folded in the
		// background: the answer does not wait for the rows.
		n, queued, err := s.Metrics.Enqueue(c.Request().Context(), posted, demand)
		if err != nil {
			return err
		}
		if queued {
			c.Response().Header().Set("Preference-Applied", "respond-async")
		} else {
			s.forgetDemandOf(demand)
		}
		return c.JSON(http.StatusAccepted, map[string]any{"accepted": n, "demand": len(demand), "queued": queued})
	}
	// One transaction: a batch whose demand replays a minute with other
	// figures stores none of its buckets either.
	n, err := s.Metrics.RecordBatch(c.Request().Context(), posted, demand)
	if err != nil {
		return err
	}
	s.forgetDemandOf(demand)
	return c.JSON(http.StatusAccepted, map[string]any{"accepted": n, "demand": len(demand), "queued": false})
}

// forgetDemandOf drops the cached demand of the models of recorded rows.
func (s *Server) forgetDemandOf(demand []catalogue.Demand) {
	for _, d := range demand {
		s.Projector.ForgetDemand(d.Model)
	}
}

// prefersAsync reports an RFC 7240 Prefer header asking for respond-async
// (the preference is a token, maybe among others: "respond-async, wait=10").
func prefersAsync(h http.Header) bool {
	for _, line := range h.Values("Prefer") {
		for pref := range strings.SplitSeq(line, ",") {
			name, _, _ := strings.Cut(pref, ";")
			name, _, _ = strings.Cut(name, "=")
			if strings.EqualFold(strings.TrimSpace(name), "respond-async") {
				return true
			}
		}
	}
	return false
}
