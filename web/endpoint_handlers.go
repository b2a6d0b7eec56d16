package web

import (
	"fmt"
	"net/http"
	"strings"
	"time"

	"github.com/labstack/echo/v4"

	"github.com/airside/airside/internal/apperr"
	"github.com/airside/airside/internal/workflow"
	"github.com/airside/airside/templates"
)

// handleRegisterEndpoint files a listing's endpoint; a refused field is
// shown next to itself with what was typed (never the key).
func (s *Server) handleRegisterEndpoint(c echo.Context) error {
	id, err := pathID(c, "id")
	if err != nil {
		return err
	}
	form := workflow.EndpointForm{BaseURL: c.FormValue("base_url"), UpstreamModel: c.FormValue("upstream_model"),
		APIKey: c.FormValue("api_key"), Justification: c.FormValue("justification")}
	filingID, err := s.Endpoints.Register(c.Request().Context(), principal(c), id, form)
	switch apperr.Code(err) {
	case "":
		if err := s.setFlash(c, "Endpoint filing #%d is with the reviewers; preflight is probing the endpoint now.", filingID); err != nil {
			return err
		}
		return c.Redirect(http.StatusSeeOther, fmt.Sprintf("/listings/%d#preflight", id))
	case apperr.EINVALID:
		return s.renderListing(c, id, http.StatusUnprocessableEntity, func(v *templates.ListingView) {
			v.Endpoint.Form = templates.EndpointForm{BaseURL: form.BaseURL, UpstreamModel: form.UpstreamModel,
				Justification: form.Justification, Errors: apperr.FieldErrors(err)}
		})
	case apperr.ECONFLICT:
		if ferr := s.setFlash(c, "%s", apperr.Message(err)); ferr != nil {
			return ferr
		}
		return c.Redirect(http.StatusSeeOther, fmt.Sprintf("/listings/%d", id))
	}
	return err
}

// handleRunPreflight queues a preflight on demand.
func (s *Server) handleRunPreflight(c echo.Context) error {
	id, err := pathID(c, "id")
	if err != nil {
		return err
	}
	_, err = s.Endpoints.RunPreflight(c.Request().Context(), principal(c), id)
	switch apperr.Code(err) {
	case "":
		if err := s.setFlash(c, "Preflight queued: the probes run in the next seconds."); err != nil {
			return err
		}
	case apperr.ECONFLICT, apperr.ETHROTTLED:
		if err := s.setFlash(c, "%s", apperr.Message(err)); err != nil {
			return err
		}
	default:
		return err
	}
	return c.Redirect(http.StatusSeeOther, fmt.Sprintf("/listings/%d#preflight", id))
}

// handlePreflightPanel is the preflight panel alone, which polls itself
// while a run is under way.
func (s *Server) handlePreflightPanel(c echo.Context) error {
	id, err := pathID(c, "id")
	if err != nil {
		return err
	}
	ctx, p := c.Request().Context(), principal(c)
	l, err := s.ListingReads.FindListingHeader(ctx, id, workflow.Scope(p))
	if err != nil {
		return err
	}
	ep, run, latest, err := s.Endpoints.Preflight(ctx, l.ID)
	if err != nil {
		return err
	}
	csrf, _ := c.Get(ctxCSRF).(string)
	can := workflow.ListingActionsFor(p, l, false)
	c.Response().Header().Set("Cache-Control", "no-store")
	return render(c, http.StatusOK, templates.PreflightPanel(preflightView(csrf, l, ep, run, latest, can.Preflight, s.Now())))
}

// ago says how long before now t was, in words.
func ago(t time.Time, now time.Time) string {
	if t.IsZero() {
		return ""
	}
	d := now.Sub(t)
	switch {
	case d < 0:
		return t.UTC().Format("2006-01-02 15:04 UTC")
	case d < time.Minute:
		return "just now"
	case d < time.Hour:
		return fmt.Sprintf("%d min ago", int(d.Minutes()))
	case d < 48*time.Hour:
		return fmt.Sprintf("%d h ago", int(d.Hours()))
	}
	return t.UTC().Format("2006-01-02 15:04 UTC")
}

func firstOf(values ...string) string {
	for _, v := range values {
		if strings.TrimSpace(v) != "" {
			return v
		}
	}
	return ""
}
