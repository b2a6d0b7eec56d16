package web

import (
	"context"
	"fmt"
	"net/http"

	"github.com/labstack/echo/v4"

	"github.com/airside/airside/internal/account"
	"github.com/airside/airside/internal/apperr"
	"github.com/airside/airside/internal/audit"
	"github.com/airside/airside/templates"
)

// AccountReads is what the account, people and admin pages read.
type AccountReads interface {
	FindPrincipal(ctx context.Context, userID int64) (*account.Principal, error)
	FindUsers(ctx context.Context) ([]account.UserSummary, error)
	FindCarriers(ctx context.Context) ([]account.CarrierSummary, error)
	FindAuditEvents(ctx context.Context, f audit.Filter) ([]audit.Event, error)
	CountUnread(ctx context.Context, userID int64) (int, error)
}

func (s *Server) renderAccount(c echo.Context, status int, errs map[string]string, done string) error {
	p := principal(c)
	v := templates.AccountView{Page: s.page(c, "Your account", "account"), Email: p.User.Email, Name: p.User.Name, Errors: errs, Done: done,
		TwoFactorOn: p.User.TwoFactorOn}
	for _, m := range p.Memberships {
		v.Carriers = append(v.Carriers, templates.Choice{Label: m.Carrier.Name + " (" + string(m.Role) + "): people",
			URL: "/carrier/members?carrier=" + m.Carrier.Slug})
	}
	if v.TwoFactorOn {
		rows, err := s.rememberedBrowserRows(c)
		if err != nil {
			return err
		}
		v.Browsers = rows
	}
	if len(p.Memberships) > 0 && s.AlertEmails != nil {
		mode, chosen, err := s.AlertEmails.Mode(c.Request().Context(), p)
		if err != nil {
			return err
		}
		v.AlertEmail = &templates.AlertEmailView{Mode: string(mode), Chosen: chosen, MailConfigured: s.Mail != nil}
	}
	return render(c, status, templates.Account(v))
}

// handleAlertEmail records how the person gets their carriers' alerts by
// e-mail: each alert, a daily digest, or none.
func (s *Server) handleAlertEmail(c echo.Context) error {
	mode, err := account.ParseAlertEmailMode(c.FormValue("alert_email"))
	if err == nil {
		err = s.AlertEmails.Set(c.Request().Context(), principal(c), mode)
	}
	switch apperr.Code(err) {
	case "":
	case apperr.EINVALID:
		return s.renderAccount(c, http.StatusUnprocessableEntity, apperr.FieldErrors(err), "")
	default:
		return err
	}
	done := map[account.AlertEmailMode]string{
		account.AlertEmailEach:   "Your carriers' alerts will be e-mailed to you as they open, flap and recover.",
		account.AlertEmailDigest: "Your carriers' alerts will be e-mailed to you once a day, as a digest.",
		account.AlertEmailOff:    "Alerts will no longer be e-mailed to you; they still reach your inbox.",
	}[mode]
	return s.renderAccount(c, http.StatusOK, nil, done)
}

func (s *Server) handleAccount(c echo.Context) error {
	return s.renderAccount(c, http.StatusOK, nil, "")
}

// currentSessionHash names the session in use, which a password change
// keeps.
func currentSessionHash(c echo.Context) string {
	if ck, err := c.Cookie(SessionCookie); err == nil {
		return account.HashToken(ck.Value)
	}
	return ""
}

func (s *Server) handleChangePassword(c echo.Context) error {
	err := s.Self.ChangePassword(c.Request().Context(), principal(c), c.FormValue("current"), c.FormValue("password"),
		c.FormValue("confirm"), currentSessionHash(c))
	switch apperr.Code(err) {
	case "":
		return s.renderAccount(c, http.StatusOK, nil, "Password changed; your other sessions have ended.")
	case apperr.EINVALID:
		return s.renderAccount(c, http.StatusUnprocessableEntity, apperr.FieldErrors(err), "")
	}
	return err
}

func (s *Server) renderMembers(c echo.Context, status int, link, mailed string, errs map[string]string) error {
	ctx, p := c.Request().Context(), principal(c)
	carrier, carriers, err := s.trafficCarrier(c, p, "/carrier/members")
	if err != nil {
		return err
	}
	members, err := s.Self.Members(ctx, p, carrier.ID)
	if err != nil {
		return err
	}
	v := templates.MembersView{Page: s.page(c, "People", "account"), Carrier: carrier.Name, Slug: carrier.Slug, Carriers: carriers,
		CanManage: account.CanManagePeople(p, carrier.ID), InviteLink: link, Mailed: mailed, Errors: errs, Email: c.FormValue("email"), Role: c.FormValue("role")}
	for _, m := range members {
		v.Rows = append(v.Rows, templates.MemberRow{UserID: m.UserID, Email: m.Email, Name: m.Name, Role: string(m.Role), Self: m.UserID == p.User.ID})
	}
	return render(c, status, templates.Members(v))
}

func (s *Server) handleMembers(c echo.Context) error {
	return s.renderMembers(c, http.StatusOK, "", "", nil)
}

func (s *Server) handleInviteMember(c echo.Context) error {
	carrier, _, err := s.trafficCarrier(c, principal(c), "/carrier/members")
	if err != nil {
		return err
	}
	token, err := s.Self.InviteMember(c.Request().Context(), principal(c), carrier.ID, c.FormValue("email"), account.CarrierRole(c.FormValue("role")))
	switch apperr.Code(err) {
	case "":
		link := s.absolute(c, "/signup/"+token)
		mailed := s.mailLink(c, c.FormValue("email"), "Your sign-up link for "+carrier.Name+" on Airside",
			"You have been invited to "+carrier.Name+" on Airside. Choose your password here (the link works for 7 days, once):\n\n"+link+"\n")
		return s.renderMembers(c, http.StatusOK, link, mailed, nil)
	case apperr.EINVALID:
		return s.renderMembers(c, http.StatusUnprocessableEntity, "", "", apperr.FieldErrors(err))
	}
	return err
}

// memberAction changes one person of the carrier and says so.
func (s *Server) memberAction(c echo.Context, act func(carrierID, userID int64) error, done string) error {
	carrier, _, err := s.trafficCarrier(c, principal(c), "/carrier/members")
	if err != nil {
		return err
	}
	userID, err := pathID(c, "id")
	if err != nil {
		return err
	}
	msg := done
	switch err := act(carrier.ID, userID); apperr.Code(err) {
	case "":
	case apperr.ECONFLICT, apperr.EINVALID:
		msg = apperr.Message(err)
	default:
		return err
	}
	if err := s.setFlash(c, "%s", msg); err != nil {
		return err
	}
	return c.Redirect(http.StatusSeeOther, "/carrier/members?carrier="+carrier.Slug)
}

func (s *Server) handleMemberRole(c echo.Context) error {
	return s.memberAction(c, func(carrierID, userID int64) error {
		return s.Self.SetRole(c.Request().Context(), principal(c), carrierID, userID, account.CarrierRole(c.FormValue("role")))
	}, "Role changed.")
}

func (s *Server) handleRemoveMember(c echo.Context) error {
	return s.memberAction(c, func(carrierID, userID int64) error {
		return s.Self.Remove(c.Request().Context(), principal(c), carrierID, userID)
	}, "Removed; their sessions have ended.")
}

func (s *Server) handleSetActive(active bool) echo.HandlerFunc {
	return func(c echo.Context) error {
		id, err := pathID(c, "id")
		if err != nil {
			return err
		}
		msg := "Deactivated: the user cannot log in and their sessions have ended."
		if active {
			msg = "Reactivated."
		}
		switch err := s.Self.SetActive(c.Request().Context(), principal(c), id, active); apperr.Code(err) {
		case "":
		case apperr.ECONFLICT:
			msg = apperr.Message(err)
		default:
			return err
		}
		if err := s.setFlash(c, "%s", msg); err != nil {
			return err
		}
		return c.Redirect(http.StatusSeeOther, "/admin/users")
	}
}

func (s *Server) handleIssueReset(c echo.Context) error {
	id, err := pathID(c, "id")
	if err != nil {
		return err
	}
	token, err := s.Self.IssueReset(c.Request().Context(), principal(c), id)
	if err != nil {
		return err
	}
	email, _ := s.Self.ResetEmail(c.Request().Context(), token)
	link := s.absolute(c, "/reset/"+token)
	mailed := s.mailLink(c, email, "Your Airside password reset link",
		"An administrator issued you a link to set a new Airside password (it works for 24 hours, once):\n\n"+link+"\n")
	return s.renderAdminUsers(c, link, email, mailed)
}

func (s *Server) handleResetForm(c echo.Context) error {
	token := c.Param("token")
	email, err := s.Self.ResetEmail(c.Request().Context(), token)
	if err != nil {
		return err
	}
	return render(c, http.StatusOK, templates.Reset(templates.ResetView{Page: s.page(c, "Set a new password", ""), Token: token, Email: email}))
}

func (s *Server) handleReset(c echo.Context) error {
	token := c.Param("token")
	email, err := s.Self.ResetEmail(c.Request().Context(), token)
	if err != nil {
		return err
	}
	err = s.Self.Reset(c.Request().Context(), token, c.FormValue("password"), c.FormValue("confirm"))
	if apperr.Code(err) == apperr.EINVALID {
		return render(c, http.StatusUnprocessableEntity, templates.Reset(templates.ResetView{Page: s.page(c, "Set a new password", ""),
			Token: token, Email: email, Errors: apperr.FieldErrors(err)}))
	}
	if err != nil {
		return err
	}
	if err := s.setFlash(c, "%s", fmt.Sprintf("Password set for %s: log in with it.", email)); err != nil {
		return err
	}
	return c.Redirect(http.StatusSeeOther, "/login")
}

// mailLink e-mails a one-time link when an SMTP relay is configured and says
// what happened; without one it says nothing (the page shows the link to
// pass on). A failed send is no failure of the action: the link is shown.
func (s *Server) mailLink(c echo.Context, to, subject, body string) string {
	if s.Mail == nil || to == "" {
		return ""
	}
	if err := s.Mail.Send(c.Request().Context(), to, subject, body); err != nil {
		s.requestLogger(c).Warn("send mail", "to", to, "err", err)
		return "The e-mail to " + to + " could not be sent; pass the link on yourself."
	}
	return "Also e-mailed to " + to + "."
}
