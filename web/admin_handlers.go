package web

import (
	"net/http"
	"strconv"
	"strings"
	"time"

	"github.com/airside/airside/internal/audit"
	"github.com/airside/airside/internal/workflow"

	"github.com/labstack/echo/v4"

	"github.com/airside/airside/internal/apperr"
	"github.com/airside/airside/templates"
)

func (s *Server) handleAdminUsers(c echo.Context) error {
	users, err := s.Reads.FindUsers(c.Request().Context())
	if err != nil {
		return err
	}
	view := templates.AdminUsersView{Page: s.page(c, "Users", "users")}
	for _, u := range users {
		staff := string(u.Staff)
		if staff == "" {
			staff = "—"
		}
		view.Users = append(view.Users, templates.UserRow{Email: u.Email, Name: u.Name, Staff: staff, Carriers: u.Carriers,
			Created: u.CreatedAt.UTC().Format(time.DateOnly)})
	}
	return render(c, http.StatusOK, templates.AdminUsers(view))
}

func (s *Server) carriersView(c echo.Context) (templates.AdminCarriersView, error) {
	carriers, err := s.Reads.FindCarriers(c.Request().Context())
	if err != nil {
		return templates.AdminCarriersView{}, err
	}
	view := templates.AdminCarriersView{Page: s.page(c, "Carriers", "carriers")}
	for _, cr := range carriers {
		view.Carriers = append(view.Carriers, templates.CarrierRow{Slug: cr.Slug, Name: cr.Name, Members: cr.Members,
			Listings: cr.Listings, Created: cr.CreatedAt.UTC().Format(time.DateOnly)})
	}
	return view, nil
}

func (s *Server) handleAdminCarriers(c echo.Context) error {
	view, err := s.carriersView(c)
	if err != nil {
		return err
	}
	return render(c, http.StatusOK, templates.AdminCarriers(view))
}

func (s *Server) handleInviteCarrier(c echo.Context) error {
	form := templates.InviteForm{
		Slug:  strings.TrimSpace(c.FormValue("slug")),
		Name:  strings.TrimSpace(c.FormValue("name")),
		Email: strings.TrimSpace(c.FormValue("email")),
	}
	token, err := s.Accounts.InviteCarrier(c.Request().Context(), principal(c), form.Slug, form.Name, form.Email)
	if apperr.Code(err) == apperr.EINVALID {
		view, verr := s.carriersView(c)
		if verr != nil {
			return verr
		}
		form.Errors = apperr.FieldErrors(err)
		view.Invite = form
		return render(c, http.StatusUnprocessableEntity, templates.AdminCarriers(view))
	}
	if err != nil {
		return err
	}
	view, err := s.carriersView(c)
	if err != nil {
		return err
	}
	if view.InviteLink, err = s.externalURL("/signup/" + token); err != nil {
		return err
	}
	view.Flash = "Carrier " + form.Name + " created. Send the link below to " + form.Email + "."
	return render(c, http.StatusOK, templates.AdminCarriers(view))
}

// externalURL makes a link for use outside the portal from the configured
// base URL, never from the request's Host header (which a client chooses).
// Without a base URL, production refuses and elsewhere (tests, embedding)
// the path alone is given; the demo configures its listen address.
func (s *Server) externalURL(path string) (string, error) {
	if s.BaseURL != "" {
		return strings.TrimRight(s.BaseURL, "/") + path, nil
	}
	if s.RequireBaseURL {
		return "", apperr.Errorf(apperr.ECONFLICT, "Set AIRSIDE_BASE_URL to the portal's public address before inviting: links handed out must not come from the request's Host header.")
	}
	return path, nil
}

func (s *Server) handleAudit(c echo.Context) error {
	events, err := s.Reads.FindAuditEvents(c.Request().Context(), audit.Filter{CarrierIDs: workflow.Scope(principal(c))})
	if err != nil {
		return err
	}
	view := templates.AuditView{Page: s.page(c, "Audit log", "audit")}
	for _, e := range events {
		view.Rows = append(view.Rows, templates.AuditRow{At: e.At.UTC().Format(time.DateTime), Actor: orDash(e.ActorEmail),
			Carrier: orDash(e.CarrierSlug), Action: e.Action, Subject: e.SubjectType + " " + itoa64(e.SubjectID),
			Before: e.Before, After: e.After})
	}
	return render(c, http.StatusOK, templates.Audit(view))
}

func (s *Server) handleAdminThrottles(c echo.Context) error {
	rows, err := s.Accounts.Throttles(c.Request().Context(), principal(c))
	if err != nil {
		return err
	}
	view := templates.AdminThrottlesView{Page: s.page(c, "Login throttles", "users")}
	now := s.Now()
	for _, r := range rows {
		next := "now"
		if r.NextAllowedAt.After(now) {
			next = stamp(&r.NextAllowedAt) + " (in " + r.NextAllowedAt.Sub(now).Round(time.Second).String() + ")"
		}
		view.Rows = append(view.Rows, templates.ThrottleRow{Subject: r.Subject, Attempts: strconv.FormatInt(r.Attempts, 10), NextAllowed: next})
	}
	return render(c, http.StatusOK, templates.AdminThrottles(view))
}

func (s *Server) handleClearThrottle(c echo.Context) error {
	subject := c.FormValue("subject")
	if err := s.Accounts.ClearThrottle(c.Request().Context(), principal(c), subject); err != nil {
		return err
	}
	if err := s.setFlash(c, "Cleared: %s may try again now.", subject); err != nil {
		return err
	}
	return c.Redirect(http.StatusSeeOther, "/admin/throttles")
}
