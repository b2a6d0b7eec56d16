package web

import (
	"net/http"
	"net/url"
	"strconv"
	"strings"
	"time"
	"unicode"

	"github.com/labstack/echo/v4"

	"github.com/airside/airside/internal/account"
	"github.com/airside/airside/internal/apperr"
	"github.com/airside/airside/templates"
)

// safeNext keeps a post-login redirect on this site: only a same-origin path
// that parses back to itself (no scheme, no host, no backslash, no control
// character a browser would strip into "//host"); anything else goes to the
// listings.
func safeNext(next string) string {
	const home = "/listings"
	if next == "" || len(next) > 2000 || !strings.HasPrefix(next, "/") || strings.HasPrefix(next, "//") {
		return home
	}
	for _, r := range next {
		if r < 0x20 || r == 0x7f || r == '\\' || unicode.IsSpace(r) || !unicode.IsPrint(r) {
			return home
		}
	}
	u, err := url.Parse(next)
	if err != nil || u.Scheme != "" || u.Host != "" || u.User != nil || u.Opaque != "" || u.String() != next {
		return home
	}
	return next
}

// DeviceCookie remembers a browser a user logged in from, so failures an
// attacker causes on the account do not hold that browser back.
const DeviceCookie = "airside_device"

func (s *Server) handleLoginForm(c echo.Context) error {
	if principal(c) != nil {
		return c.Redirect(http.StatusSeeOther, safeNext(c.QueryParam("next")))
	}
	return render(c, http.StatusOK, templates.Login(templates.LoginView{Page: s.page(c, "Log in", ""), Next: c.QueryParam("next")}))
}

func (s *Server) handleLogin(c echo.Context) error {
	email, password, next := c.FormValue("email"), c.FormValue("password"), c.FormValue("next")
	in := account.Login{Email: email, Password: password, Addr: c.RealIP(), DeviceToken: deviceToken(c)}
	done, err := s.Accounts.Authenticate(c.Request().Context(), in)
	if err != nil {
		switch apperr.Code(err) {
		case apperr.EUNAUTHORIZED, apperr.ETHROTTLED:
			if secs := apperr.RetryAfterOf(err); secs > 0 {
				c.Response().Header().Set("Retry-After", strconv.Itoa(secs))
			}
			view := templates.LoginView{Page: s.page(c, "Log in", ""), Email: email, Next: next, Error: apperr.Message(err)}
			return render(c, statusOf(err), templates.Login(view))
		}
		return err
	}
	if done.DeviceToken != in.DeviceToken {
		c.SetCookie(&http.Cookie{Name: DeviceCookie, Value: done.DeviceToken, Path: "/login", MaxAge: int((365 * 24 * time.Hour).Seconds()),
			HttpOnly: true, Secure: isTLS(c.Request()), SameSite: http.SameSiteStrictMode})
	}
	needsCode, err := s.TwoFactor.NeedsCode(c.Request().Context(), done.Principal.User.ID, done.DeviceToken)
	if err != nil {
		return err
	}
	if needsCode {
		if err := s.startPendingSession(c, done.Principal.User.ID, next); err != nil {
			return err
		}
		return c.Redirect(http.StatusSeeOther, "/login/two-factor")
	}
	if err := s.startSession(c, done.Principal.User.ID, done.DeviceToken); err != nil {
		return err
	}
	return c.Redirect(http.StatusSeeOther, safeNext(next))
}

// startSession ends whatever session the browser had and starts a new one for
// the user, so a session id known before login is worthless after it.
// deviceToken is the browser's known-device token ("" when none): the
// session keeps its hash so the account page can say which remembered
// browser is this one (the device cookie itself is sent to /login only).
func (s *Server) startSession(c echo.Context, userID int64, deviceToken string) error {
	values := map[any]any{sessionUserKey: strconv.FormatInt(userID, 10)}
	if deviceToken != "" {
		values[sessionDeviceKey] = account.HashToken(deviceToken)
	}
	return s.replaceSession(c, values)
}

// sessionDeviceKey holds the hash of the browser's known-device token.
const sessionDeviceKey = "device"

// sessionDeviceHash is the hash startSession kept, "" when none.
func (s *Server) sessionDeviceHash(c echo.Context) string {
	sess, err := s.sessions.Get(c.Request(), SessionCookie)
	if err != nil {
		return ""
	}
	h, _ := sess.Values[sessionDeviceKey].(string)
	return h
}

// replaceSession ends the browser's session and starts a new one holding
// values and a fresh CSRF token.
func (s *Server) replaceSession(c echo.Context, values map[any]any) error {
	sess, err := s.sessions.Get(c.Request(), SessionCookie)
	if err != nil {
		return err
	}
	if !sess.IsNew && sess.ID != "" {
		if err := s.Accounts.EndSession(c.Request().Context(), sess.ID); err != nil {
			return err
		}
	}
	// A CSRF token known before login (planted, or read over someone's
	// shoulder) is worthless after it, like the session id; the new one is
	// bound to the session (loadPrincipal holds forms to it).
	token, err := setCSRFToken(c)
	if err != nil {
		return err
	}
	sess.ID = ""
	values[sessionCSRFKey] = token
	sess.Values = values
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
	if p := principal(c); p != nil {
		s.Accounts.LoggedOut(c.Request().Context(), p)
	}
	return c.Redirect(http.StatusSeeOther, "/login")
}

// handleLogoutEverywhere ends every session of the user, on every device.
func (s *Server) handleLogoutEverywhere(c echo.Context) error {
	if _, err := s.Accounts.LogOutEverywhere(c.Request().Context(), principal(c)); err != nil {
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
		Token: token, Email: inv.Email, Carrier: inv.Carrier.Name, Admin: inv.Role == account.CarrierAdmin}))
}

func (s *Server) handleSignup(c echo.Context) error {
	ctx := c.Request().Context()
	token, name := c.Param("token"), strings.TrimSpace(c.FormValue("name"))
	inv, err := s.Accounts.FindInvite(ctx, token)
	if err != nil {
		return err
	}
	view := templates.SignupView{Page: s.page(c, "Sign up", ""), Token: token, Email: inv.Email, Carrier: inv.Carrier.Name, Admin: inv.Role == account.CarrierAdmin, Name: name}
	user, err := s.Accounts.AcceptInvite(ctx, token, name, c.FormValue("password"))
	if apperr.Code(err) == apperr.EINVALID {
		view.Errors = apperr.FieldErrors(err)
		return render(c, http.StatusUnprocessableEntity, templates.Signup(view))
	}
	if err != nil {
		return err
	}
	if err := s.startSession(c, user.ID, ""); err != nil {
		return err
	}
	if err := s.setFlash(c, "Welcome to Airside, %s. You are the admin of %s.", name, inv.Carrier.Name); err != nil {
		return err
	}
	return c.Redirect(http.StatusSeeOther, "/listings")
}
