package web

import (
	"bytes"
	"net/http"
	"strconv"
	"strings"
	"time"

	"github.com/airside/airside/internal/audit"
	"github.com/airside/airside/internal/csvsafe"
	"github.com/airside/airside/internal/workflow"

	"github.com/labstack/echo/v4"

	"github.com/airside/airside/internal/apperr"
	"github.com/airside/airside/templates"
)

func (s *Server) handleAdminUsers(c echo.Context) error { return s.renderAdminUsers(c, "", "", "") }

func (s *Server) renderAdminUsers(c echo.Context, resetLink, resetFor, mailed string) error {
	users, err := s.AccountReads.FindUsers(c.Request().Context())
	if err != nil {
		return err
	}
	p := principal(c)
	view := templates.AdminUsersView{Page: s.page(c, "Users", "users"), ResetLink: resetLink, ResetFor: resetFor, Mailed: mailed,
		RequireTwoFactor: p.TwoFactorPolicy, TwoFactorOn: p.User.TwoFactorOn}
	me := p.User.ID
	for _, u := range users {
		staff := string(u.Staff)
		if staff == "" {
			staff = "—"
		}
		view.Users = append(view.Users, templates.UserRow{ID: u.ID, Email: u.Email, Name: u.Name, Staff: staff, Carriers: u.Carriers,
			Created: u.CreatedAt.UTC().Format(time.DateOnly), Deactivated: u.Deactivated, Self: u.ID == me, TwoFactorOn: u.TwoFactorOn})
	}
	return render(c, http.StatusOK, templates.AdminUsers(view))
}

func (s *Server) carriersView(c echo.Context) (templates.AdminCarriersView, error) {
	carriers, err := s.AccountReads.FindCarriers(c.Request().Context())
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

// auditPageSize is how many events a page of the audit log shows.
const auditPageSize = 100

// auditFilter reads the audit log's filters from the query: who, what,
// carrier, listing, period (UTC dates) and page, within the user's scope.
func auditFilter(c echo.Context, scope []int64) (audit.Filter, templates.AuditFilters, int) {
	q := c.QueryParams()
	form := templates.AuditFilters{Actor: strings.TrimSpace(q.Get("who")), Action: q.Get("what"), Carrier: strings.TrimSpace(q.Get("carrier")),
		Listing: strings.TrimSpace(q.Get("listing")), From: q.Get("from"), To: q.Get("to")}
	f := audit.Filter{CarrierIDs: scope, Actor: strings.ToLower(form.Actor), Action: form.Action, CarrierSlug: form.Carrier}
	if id, err := strconv.ParseInt(form.Listing, 10, 64); err == nil && id > 0 {
		f.SubjectType, f.SubjectID = "listing", id
	} else {
		form.Listing = ""
	}
	if d, err := time.Parse(time.DateOnly, form.From); err == nil {
		f.Since = d
	} else {
		form.From = ""
	}
	if d, err := time.Parse(time.DateOnly, form.To); err == nil {
		f.Until = d.AddDate(0, 0, 1) // through the end of that day
	} else {
		form.To = ""
	}
	page, _ := strconv.Atoi(q.Get("page"))
	page = max(page, 1)
	f.Offset, f.Limit = (page-1)*auditPageSize, auditPageSize+1 // one more says whether a next page exists
	return f, form, page
}

func (s *Server) handleAudit(c echo.Context) error {
	f, form, page := auditFilter(c, workflow.Scope(principal(c)))
	events, err := s.AccountReads.FindAuditEvents(c.Request().Context(), f)
	if err != nil {
		return err
	}
	view := templates.AuditView{Page: s.page(c, "Audit log", "audit"), Filters: form, Actions: audit.Actions(), PageNumber: page}
	if len(events) > auditPageSize {
		events = events[:auditPageSize]
		view.NextURL = auditURL(c, page+1)
	}
	if page > 1 {
		view.PrevURL = auditURL(c, page-1)
	}
	view.CSVURL = "/audit.csv?" + withoutPage(c)
	for _, e := range events {
		view.Rows = append(view.Rows, templates.AuditRow{At: e.At.UTC().Format("2006-01-02 15:04"), Actor: orDash(e.ActorEmail),
			Carrier: orDash(e.CarrierSlug), Sentence: audit.Sentence(e), Link: audit.Link(e), Subject: audit.Subject(e), Action: e.Action})
	}
	return render(c, http.StatusOK, templates.Audit(view))
}

// handleAuditCSV exports the filtered audit log (up to 10,000 events) as CSV.
func (s *Server) handleAuditCSV(c echo.Context) error {
	f, _, _ := auditFilter(c, workflow.Scope(principal(c)))
	f.Offset, f.Limit = 0, 10000
	events, err := s.AccountReads.FindAuditEvents(c.Request().Context(), f)
	if err != nil {
		return err
	}
	var buf bytes.Buffer
	w := csvsafe.NewWriter(&buf)
	w.Write([]string{"at_utc", "who", "carrier", "action", "subject", "what_happened", "before", "after"})
	for _, e := range events {
		w.Write([]string{e.At.UTC().Format(time.RFC3339), e.ActorEmail, e.CarrierSlug, e.Action, audit.Subject(e),
			audit.Sentence(e), e.Before, e.After})
	}
	if err := w.Flush(); err != nil {
		return err
	}
	c.Response().Header().Set("Content-Disposition", `attachment; filename="airside-audit.csv"`)
	return c.Blob(http.StatusOK, "text/csv; charset=utf-8", buf.Bytes())
}

func auditURL(c echo.Context, page int) string {
	q := c.QueryParams()
	q.Set("page", strconv.Itoa(page))
	return "/audit?" + q.Encode()
}

func withoutPage(c echo.Context) string {
	q := c.QueryParams()
	q.Del("page")
	return q.Encode()
}

func (s *Server) handleAdminThrottles(c echo.Context) error {
	rows, err := s.Accounts.Throttles(c.Request().Context(), principal(c))
	if err != nil {
		return err
	}
	view := templates.AdminThrottlesView{Page: s.page(c, "Login throttles", "throttles")}
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
