package web

import (
	"fmt"
	"net/http"
	"strings"

	"github.com/labstack/echo/v4"

	"github.com/airside/airside/internal/apperr"
	"github.com/airside/airside/internal/catalogue"
)

// handleAPIMetrics stores a batch of per-minute buckets and demand rows:
// checked whole before anything is stored, idempotent per (listing, minute,
// source) and (model, workload, minute, source). Problems are named by row and field.
func (s *Server) handleAPIMetrics(c echo.Context) error {
	var body struct {
		Buckets []catalogue.PostedBucket `json:"buckets"`
		Demand  []catalogue.Demand       `json:"demand"`
	}
	if err := decodeJSONFast(c, &body); err != nil {
		return err
	}
	if len(body.Buckets) == 0 && len(body.Demand) == 0 {
		return apperr.Invalid(map[string]string{"buckets": fmt.Sprintf("send 1 to %d buckets, or demand rows", catalogue.MaxBuckets)})
	}
	// Decoded straight into the catalogue's types: the contract's names
	// are their JSON tags.
	posted, demand := body.Buckets, body.Demand
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

// handleAPIShapeHolders stores which listing held each shape of requests
// from which second, as a gateway reports it: checked whole (problems named
// by row and field), idempotent per shape, second and source.
func (s *Server) handleAPIShapeHolders(c echo.Context) error {
	var body struct {
		Holders []catalogue.ShapeHolder `json:"holders"`
	}
	if err := decodeJSONFast(c, &body); err != nil {
		return err
	}
	n, err := s.Metrics.RecordHolders(c.Request().Context(), s.Holders, body.Holders)
	if err != nil {
		return err
	}
	return c.JSON(http.StatusAccepted, map[string]any{"accepted": n})
}

// handleAPIProjectMinutes stores each API project's minutes on each
// listing, as a gateway reports them under pseudonyms: checked whole
// (problems named by row and field), idempotent per project, listing,
// minute and source.
func (s *Server) handleAPIProjectMinutes(c echo.Context) error {
	var body struct {
		Projects []catalogue.ProjectMinute `json:"projects"`
	}
	if err := decodeJSONFast(c, &body); err != nil {
		return err
	}
	n, err := s.Metrics.RecordProjectMinutes(c.Request().Context(), s.ProjectMinutes, body.Projects)
	if err != nil {
		return err
	}
	return c.JSON(http.StatusAccepted, map[string]any{"accepted": n})
}

// handleAPIOrgUsage stores each customer organisation's minutes on each
// listing, as a gateway reports them: checked whole (problems named by row
// and field), idempotent per listing, minute, source and organisation.
func (s *Server) handleAPIOrgUsage(c echo.Context) error {
	var body struct {
		Organisations []catalogue.OrgUsage `json:"organisations"`
	}
	if err := decodeJSONFast(c, &body); err != nil {
		return err
	}
	n, err := s.Metrics.RecordOrgUsage(c.Request().Context(), s.OrgUsage, body.Organisations)
	if err != nil {
		return err
	}
	return c.JSON(http.StatusAccepted, map[string]any{"accepted": n})
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
