package web

import (
	"net/http"
	"strconv"
	"strings"

	"github.com/labstack/echo/v4"

	"github.com/airside/airside/internal/apperr"
	"github.com/airside/airside/templates"
)

// safeNext keeps a post-login redirect on this site.
func safeNext(next string) string {
	if !strings.HasPrefix(next, "/") || strings.HasPrefix(next, "//") || strings.HasPrefix(next, "/\\") {
		return "/listings"
	}
	return next
}

func (s *Server) handleLoginForm(c echo.Context) error {
	if principal(c) != nil {
		return c.Redirect(http.StatusSeeOther, safeNext(c.QueryParam("next")))
	}
	return render(c, http.StatusOK, templates.Login(templates.LoginView{Page: s.page(c, "Log in", ""), Next: c.QueryParam("next")}))
}

func (s *Server) handleLogin(c echo.Context) error {
	email, password, next := c.FormValue("email"), c.FormValue("password"), c.FormValue("next")
	p, err := s.Accounts.Authenticate(c.Request().Context(), email, password, c.RealIP())
	if err != nil {
		switch apperr.Code(err) {
		case apperr.EUNAUTHORIZED, apperr.ETHROTTLED:
			view := templates.LoginView{Page: s.page(c, "Log in", ""), Email: email, Next: next, Error: apperr.Message(err)}
			return render(c, statusOf(err), templates.Login(view))
		}
		return err
	}
	if err := s.startSession(c, p.User.ID); err != nil {
		return err
	}
	return c.Redirect(http.StatusSeeOther, safeNext(next))
}

// startSession ends whatever session the browser had and starts a new one for
// the user, so a session id known before login is worthless after it.
func (s *Server) startSession(c echo.Context, userID int64) error {
	sess, err := s.sessions.Get(c.Request(), SessionCookie)
	if err != nil {
		return err
	}
	if !sess.IsNew && sess.ID != "" {
		if err := s.Accounts.EndSession(c.Request().Context(), sess.ID); err != nil {
			return err
		}
	}
	sess.ID = ""
	sess.Values = map[any]any{sessionUserKey: strconv.FormatInt(userID, 10)}
	sess.Options = cookieOptions(c.Request())
	return sess.Save(c.Request(), c.Response())
}

func (s *Server) handleLogout(c echo.Context) error {
	sess, err := s.sessions.Get(c.Request(), SessionCookie)
	if err != nil {
		return err
	}
	sess.Options.MaxAge = -1
	if err := sess.Save(c.Request(), c.Response()); err != nil {
		return err
	}
	return c.Redirect(http.StatusSeeOther, "/login")
}

func (s *Server) handleSignupForm(c echo.Context) error {
	token := c.Param("token")
	inv, err := s.Accounts.FindInvite(c.Request().Context(), token)
	if err != nil {
		return err
	}
	return render(c, http.StatusOK, templates.Signup(templates.SignupView{Page: s.page(c, "Sign up", ""),
		Token: token, Email: inv.Email, Carrier: inv.Carrier.Name}))
}

func (s *Server) handleSignup(c echo.Context) error {
	ctx := c.Request().Context()
	token, name := c.Param("token"), strings.TrimSpace(c.FormValue("name"))
	inv, err := s.Accounts.FindInvite(ctx, token)
	if err != nil {
		return err
	}
	view := templates.SignupView{Page: s.page(c, "Sign up", ""), Token: token, Email: inv.Email, Carrier: inv.Carrier.Name, Name: name}
	user, err := s.Accounts.AcceptInvite(ctx, token, name, c.FormValue("password"))
	if apperr.Code(err) == apperr.EINVALID {
		view.Errors = apperr.FieldErrors(err)
		return render(c, http.StatusUnprocessableEntity, templates.Signup(view))
	}
	if err != nil {
		return err
	}
	if err := s.startSession(c, user.ID); err != nil {
		return err
	}
	if err := s.setFlash(c, "Welcome to Airside, %s. You are the admin of %s.", name, inv.Carrier.Name); err != nil {
		return err
	}
	return c.Redirect(http.StatusSeeOther, "/listings")
}
