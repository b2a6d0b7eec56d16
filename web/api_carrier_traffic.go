package web

import (
	"net/http"
	"strconv"
	"time"

	"github.com/labstack/echo/v4"
)

// trafficWindow bounds one traffic read: a month of hours.
const trafficWindow = 31 * 24 * time.Hour

// trafficRow is one listing's hour as the gateway reported it.
type trafficRow struct {
	Hour              time.Time `json:"hour"`
	ListingID         int64     `json:"listingId"`
	Model             string    `json:"model"`
	Requests          int64     `json:"requests"`
	Errors            int64     `json:"errors"`
	ClientErrors      int64     `json:"clientErrors"`
	InputTokens       int64     `json:"inputTokens"`
	CachedInputTokens int64     `json:"cachedInputTokens"`
	OutputTokens      int64     `json:"outputTokens"`
	Routed            int64     `json:"routed"`
	Pinned            int64     `json:"pinned"`
	Exploration       int64     `json:"exploration"`
	Fallback          int64     `json:"fallback"`
	Capped            int64     `json:"capped"`
	RateLimited       int64     `json:"rateLimited"`
}

var trafficColumns = []string{"hour", "listing_id", "model", "requests", "errors", "client_errors", "input_tokens",
	"cached_input_tokens", "output_tokens", "routed", "pinned", "exploration", "fallback", "capped", "rate_limited"}

func (r *trafficRow) cells() []string {
	n := func(v int64) string { return strconv.FormatInt(v, 10) }
	return []string{r.Hour.Format(time.RFC3339), n(r.ListingID), r.Model, n(r.Requests), n(r.Errors), n(r.ClientErrors), n(r.InputTokens),
		n(r.CachedInputTokens), n(r.OutputTokens), n(r.Routed), n(r.Pinned), n(r.Exploration), n(r.Fallback), n(r.Capped), n(r.RateLimited)}
}

// handleCarrierTraffic answers the carrier's listings' hourly traffic as
// the gateway reported it (since, until: RFC 3339, default the last 24
// hours, at most 31 days; listingId narrows to one), as JSON or, with
// format=csv, a CSV a spreadsheet opens safely.
func (s *Server) handleCarrierTraffic(c echo.Context) error {
	now := s.Now().UTC()
	since, until, err := apiWindow(c, now.Add(-24*time.Hour), now, trafficWindow)
	if err != nil {
		return err
	}
	format, err := apiFormat(c)
	if err != nil {
		return err
	}
	ls, err := s.carrierListingsParam(c)
	if err != nil {
		return err
	}
	ids, models := make([]int64, len(ls)), map[int64]string{}
	for i, l := range ls {
		ids[i], models[l.ID] = l.ID, l.Model.Slug
	}
	hours, err := s.TrafficReads.HourlyTraffic(c.Request().Context(), ids, since, until)
	if err != nil {
		return err
	}
	rows := []trafficRow{}
	for _, id := range ids {
		for _, h := range hours[id] {
			rows = append(rows, trafficRow{Hour: h.Hour.UTC(), ListingID: id, Model: models[id], Requests: h.Requests, Errors: h.Errors,
				ClientErrors: h.ClientErrors, InputTokens: h.InputTokens, CachedInputTokens: h.CachedInputTokens, OutputTokens: h.OutputTokens,
				Routed: h.Routed, Pinned: h.Pinned, Exploration: h.Exploration, Fallback: h.Fallback, Capped: h.Capped, RateLimited: h.RateLimited})
		}
	}
	if format != "csv" {
		return c.JSON(http.StatusOK, struct {
			Since time.Time    `json:"since"`
			Until time.Time    `json:"until"`
			Hours []trafficRow `json:"hours"`
		}{since, until, rows})
	}
	return writeCSV(c, "traffic.csv", trafficColumns, len(rows), func(i int) []string { return rows[i].cells() })
}
