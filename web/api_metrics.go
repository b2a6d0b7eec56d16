package web

import (
	"fmt"
	"net/http"
	"time"

	"github.com/airside/airside/internal/apperr"
	"github.com/airside/airside/internal/catalogue"
	"github.com/labstack/echo/v4"
)

// bucketBody is one metric bucket as posted.
type bucketBody struct {
	Listing           string    `json:"listing"`
	ListingID         int64     `json:"listingId"`
	Minute            time.Time `json:"minute"`
	Requests          *int64    `json:"requests"`
	Errors            int64     `json:"errors"`
	ClientErrors      int64     `json:"clientErrors"`
	TTFTMsSum         int64     `json:"ttftMsSum"`
	OutputTokens      int64     `json:"outputTokens"`
	DurationMs        int64     `json:"durationMs"`
	InputTokens       int64     `json:"inputTokens"`
	CachedInputTokens int64     `json:"cachedInputTokens"`
	Capped            int64     `json:"capped"`
}

// handleAPIMetrics stores a batch of per-minute buckets: all or nothing,
// idempotent per (listing, minute). Problems are named by bucket and field.
func (s *Server) handleAPIMetrics(c echo.Context) error {
	var body struct {
		Buckets []bucketBody `json:"buckets"`
	}
	if err := decodeJSON(c, &body); err != nil {
		return err
	}
	posted := make([]catalogue.PostedBucket, len(body.Buckets))
	missing := map[string]string{}
	for i, b := range body.Buckets {
		if b.Requests == nil { // 0 requests is a report; no requests field is a mistake
			missing[fmt.Sprintf("buckets[%d].requests", i)] = "required: the requests in this minute (0 for none)"
			continue
		}
		posted[i] = catalogue.PostedBucket{Listing: b.Listing, ListingID: b.ListingID, Bucket: catalogue.Bucket{
			Minute: b.Minute, Requests: *b.Requests, Errors: b.Errors, ClientErrors: b.ClientErrors, TTFTMsSum: b.TTFTMsSum,
			OutputTokens: b.OutputTokens, DurationMs: b.DurationMs, InputTokens: b.InputTokens, CachedInputTokens: b.CachedInputTokens, Capped: b.Capped}}
	}
	if len(missing) > 0 {
		return apperr.Invalid(missing)
	}
	n, err := s.Metrics.Record(c.Request().Context(), posted)
	if err != nil {
		return err
	}
	return c.JSON(http.StatusAccepted, map[string]any{"accepted": n})
}
