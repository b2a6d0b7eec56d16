package web

import (
	"fmt"
	"time"

	"github.com/labstack/echo/v4"

	"github.com/airside/airside/templates"
)

// trafficChart draws a listing's last six hours of reported traffic, from
// its first report in them.
func (s *Server) trafficChart(c echo.Context, listingID int64) (templates.TrafficView, error) {
	now := s.Now().UTC()
	since := now.Add(-6 * time.Hour).Truncate(10 * time.Minute)
	points, err := s.TrafficReads.MetricSeries(c.Request().Context(), listingID, since, 10*time.Minute)
	if err != nil {
		return templates.TrafficView{}, err
	}
	var steps []templates.TrafficStep
	any := false
	for _, p := range points {
		if !any && p.Requests == 0 {
			continue // before the first report: the chart starts there, not mostly empty (L14)
		}
		any = true
		steps = append(steps, templates.TrafficStep{Label: p.At.Format("15:04"), OK: p.SuccessCount, Failed: p.Errors,
			Description: fmt.Sprintf("%s UTC: %d requests, %d failed", p.At.Format("15:04"), p.Requests, p.Errors)})
	}
	if !any {
		return templates.TrafficView{}, nil
	}
	v := templates.NewTrafficChart(steps)
	if first := points[len(points)-len(steps)].At; first.After(since) {
		v.Title = "Requests since " + first.Format("15:04") + " UTC (the first report of the last 6 hours)"
	}
	return v, nil
}
