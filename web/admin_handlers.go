package web

import (
	"net/http"
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
	view.InviteLink = s.externalURL(c, "/signup/"+token)
	view.Flash = "Carrier " + form.Name + " created. Send the link below to " + form.Email + "."
	return render(c, http.StatusOK, templates.AdminCarriers(view))
}

// externalURL makes an absolute link for use outside the portal.
func (s *Server) externalURL(c echo.Context, path string) string {
	if s.BaseURL != "" {
		return strings.TrimRight(s.BaseURL, "/") + path
	}
	scheme := "http"
	if isTLS(c.Request()) {
		scheme = "https"
	}
	return scheme + "://" + c.Request().Host + path
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
