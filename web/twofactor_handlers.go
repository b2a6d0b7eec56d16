package web

import (
	"net/http"
	"strconv"
	"strings"
	"time"

	"github.com/labstack/echo/v4"

	"github.com/airside/airside/internal/account"
	"github.com/airside/airside/internal/apperr"
	"github.com/airside/airside/templates"
)

// The second step of sign-in lives in a session that is not a login: it
// names the person whose password was right (pendingUserKey) and when, so
// the code form knows whom to check, and nothing else in the portal treats
// it as logged in (loadPrincipal reads only sessionUserKey).
const (
	sessionPendingUserKey = "pending_uid"
	sessionPendingAtKey   = "pending_at"
	sessionPendingNextKey = "pending_next"
)

// secondStepWithin is how long after the password the code may come.
const secondStepWithin = 5 * time.Minute

// startPendingSession replaces the browser's session with one waiting for
// the second factor of userID.
func (s *Server) startPendingSession(c echo.Context, userID int64, next string) error {
	return s.replaceSession(c, map[any]any{
		sessionPendingUserKey: strconv.FormatInt(userID, 10),
		sessionPendingAtKey:   strconv.FormatInt(s.Now().Unix(), 10),
		sessionPendingNextKey: safeNext(next),
	})
}

// pendingSecondStep is the person waiting for their code, if the session
// holds one still in time.
func (s *Server) pendingSecondStep(c echo.Context) (userID int64, next string, ok bool) {
	sess, err := s.sessions.Get(c.Request(), SessionCookie)
	if err != nil {
		return 0, "", false
	}
	uid, _ := sess.Values[sessionPendingUserKey].(string)
	at, _ := sess.Values[sessionPendingAtKey].(string)
	next, _ = sess.Values[sessionPendingNextKey].(string)
	id, err1 := strconv.ParseInt(uid, 10, 64)
	unix, err2 := strconv.ParseInt(at, 10, 64)
	if err1 != nil || err2 != nil || s.Now().Sub(time.Unix(unix, 0)) > secondStepWithin {
		return 0, "", false
	}
	return id, next, true
}

func (s *Server) handleSecondStepForm(c echo.Context) error {
	if _, _, ok := s.pendingSecondStep(c); !ok {
		return s.secondStepExpired(c)
	}
	return render(c, http.StatusOK, templates.SecondStep(templates.SecondStepView{Page: s.page(c, "Two-factor sign-in", "")}))
}

func (s *Server) secondStepExpired(c echo.Context) error {
	view := templates.LoginView{Page: s.page(c, "Log in", ""),
		Error: "Your sign-in waited too long for its code (5 minutes), or was not started. Log in again."}
	return render(c, http.StatusUnauthorized, templates.Login(view))
}

func (s *Server) handleSecondStep(c echo.Context) error {
	userID, next, ok := s.pendingSecondStep(c)
	if !ok {
		return s.secondStepExpired(c)
	}
	in := account.SecondStep{UserID: userID, Code: c.FormValue("code"), Remember: c.FormValue("remember") == "on", DeviceToken: deviceToken(c)}
	if err := s.TwoFactor.Verify(c.Request().Context(), in); err != nil {
		switch apperr.Code(err) {
		case apperr.EUNAUTHORIZED, apperr.ETHROTTLED:
			if secs := apperr.RetryAfterOf(err); secs > 0 {
				c.Response().Header().Set("Retry-After", strconv.Itoa(secs))
			}
			view := templates.SecondStepView{Page: s.page(c, "Two-factor sign-in", ""), Error: apperr.Message(err), Remember: in.Remember}
			return render(c, statusOf(err), templates.SecondStep(view))
		}
		return err
	}
	if err := s.startSession(c, userID, in.DeviceToken); err != nil {
		return err
	}
	if account.IsRecoveryCode(in.Code) {
		// A recovery code is spent: say how many are left, on the first
		// screen after the sign-in, while it is still in mind.
		if err := s.recoveryCodesLeft(c, userID); err != nil {
			return err
		}
	}
	return c.Redirect(http.StatusSeeOther, safeNext(next))
}

// recoveryCodesLeft flashes how many recovery codes the person has left
// after signing in with one.
func (s *Server) recoveryCodesLeft(c echo.Context, userID int64) error {
	st, err := s.TwoFactor.State(c.Request().Context(), userID)
	if err != nil {
		return err
	}
	switch left := st.RecoveryLeft; {
	case left == 0:
		return s.setFlash(c, "You signed in with your last recovery code. Make new ones now under Your account, Two-factor sign-in, before you need one.")
	case left <= 3:
		return s.setFlash(c, "You signed in with a recovery code: %s left. Make new ones under Your account, Two-factor sign-in.", plural(int64(left), "code", "codes"))
	default:
		return s.setFlash(c, "You signed in with a recovery code: %d codes left (Your account, Two-factor sign-in).", left)
	}
}

// requireTwoFactorEnrolment holds someone the site requires a second factor
// of, and who has none, to the page that sets one up.
func requireTwoFactorEnrolment(next echo.HandlerFunc) echo.HandlerFunc {
	return func(c echo.Context) error {
		p := principal(c)
		if p == nil || !p.MustEnrolTwoFactor() || strings.HasPrefix(c.Path(), "/account/two-factor") {
			return next(c)
		}
		if c.Request().Method == http.MethodGet {
			return c.Redirect(http.StatusSeeOther, "/account/two-factor")
		}
		return apperr.Errorf(apperr.EFORBIDDEN, "Set up two-factor sign-in first (Your account, Two-factor sign-in): this portal requires it for your role.")
	}
}

// twoFactorPage renders the enrolment and management page; codes are
// recovery codes to show this once.
func (s *Server) twoFactorPage(c echo.Context, status int, enrol *account.Enrolment, codes []string, errs map[string]string, done string) error {
	p := principal(c)
	ctx := c.Request().Context()
	st, err := s.TwoFactor.State(ctx, p.User.ID)
	if err != nil {
		return err
	}
	required, err := s.TwoFactor.Required(ctx, p)
	if err != nil {
		return err
	}
	if enrol == nil && !st.Enabled() {
		if enrol, err = s.TwoFactor.Pending(ctx, p); err != nil {
			return err
		}
	}
	v := templates.TwoFactorView{Page: s.page(c, "Two-factor sign-in", "account"), On: st.Enabled(), Required: required,
		RecoveryLeft: st.RecoveryLeft, RecoveryCodes: codes, Errors: errs, Done: done, Email: p.User.Email}
	if st.EnabledAt != nil {
		v.Since = st.EnabledAt.UTC().Format("2006-01-02 15:04 UTC")
	}
	if enrol != nil {
		v.Secret, v.QR, v.URL = spaced(enrol.Secret), enrol.QRDataURL, enrol.URL
	}
	if v.Browsers, err = s.rememberedBrowserRows(c); err != nil {
		return err
	}
	return render(c, status, templates.TwoFactor(v))
}

// rememberedBrowserRows are the signed-in person's browsers that skip the
// code, as the account and two-factor pages list them.
func (s *Server) rememberedBrowserRows(c echo.Context) ([]templates.RememberedBrowserRow, error) {
	browsers, err := s.TwoFactor.RememberedBrowsers(c.Request().Context(), principal(c), s.sessionDeviceHash(c))
	if err != nil {
		return nil, err
	}
	rows := make([]templates.RememberedBrowserRow, len(browsers))
	for i, b := range browsers {
		rows[i] = templates.RememberedBrowserRow{FirstSeen: b.FirstSeen.Format("2006-01-02 15:04 UTC"),
			Until: b.Until.Format("2006-01-02 15:04 UTC"), Current: b.Current}
	}
	return rows, nil
}

// spaced groups a base32 secret in fours, as authenticator apps show it.
func spaced(secret string) string {
	var b strings.Builder
	for i, r := range secret {
		if i > 0 && i%4 == 0 {
			b.WriteByte(' ')
		}
		b.WriteRune(r)
	}
	return b.String()
}

func (s *Server) handleTwoFactor(c echo.Context) error {
	return s.twoFactorPage(c, http.StatusOK, nil, nil, nil, "")
}

func (s *Server) handleTwoFactorBegin(c echo.Context) error {
	enrol, err := s.TwoFactor.Begin(c.Request().Context(), principal(c))
	if err != nil {
		return err
	}
	return s.twoFactorPage(c, http.StatusOK, enrol, nil, nil, "")
}

func (s *Server) handleTwoFactorConfirm(c echo.Context) error {
	codes, err := s.TwoFactor.Confirm(c.Request().Context(), principal(c), c.FormValue("code"))
	switch apperr.Code(err) {
	case "":
		return s.twoFactorPage(c, http.StatusOK, nil, codes, nil, "Two-factor sign-in is on. Keep the recovery codes below somewhere safe.")
	case apperr.EINVALID:
		return s.twoFactorPage(c, http.StatusUnprocessableEntity, nil, nil, apperr.FieldErrors(err), "")
	}
	return err
}

// deviceToken is the browser's known-device token, "" when it has none.
func deviceToken(c echo.Context) string {
	if ck, err := c.Cookie(DeviceCookie); err == nil {
		return ck.Value
	}
	return ""
}

// presenceRefused re-shows the page with a refused proof next to its field,
// or returns the error when it is not a refused proof.
func (s *Server) presenceRefused(c echo.Context, err error, field string) error {
	switch apperr.Code(err) {
	case apperr.EUNAUTHORIZED, apperr.ETHROTTLED:
		if secs := apperr.RetryAfterOf(err); secs > 0 {
			c.Response().Header().Set("Retry-After", strconv.Itoa(secs))
		}
		return s.twoFactorPage(c, statusOf(err), nil, nil, map[string]string{field: apperr.Message(err)}, "")
	}
	return err
}

// handleTwoFactorRecoveryCodes makes new recovery codes once the person
// proves they are at the keyboard (a current code or the password).
func (s *Server) handleTwoFactorRecoveryCodes(c echo.Context) error {
	codes, err := s.TwoFactor.NewRecoveryCodes(c.Request().Context(), principal(c), c.FormValue("codes_proof"))
	if err != nil {
		return s.presenceRefused(c, err, "codes_proof")
	}
	return s.twoFactorPage(c, http.StatusOK, nil, codes, nil, "New recovery codes made; the old ones no longer work.")
}

// handleTwoFactorDisable turns two-factor off: the policy is checked
// first, then a current code or the password (a session left open on a
// shared machine must not be enough, and a recovery code does not do it).
func (s *Server) handleTwoFactorDisable(c echo.Context) error {
	if err := s.TwoFactor.Disable(c.Request().Context(), principal(c), c.FormValue("disable_code")); err != nil {
		return s.presenceRefused(c, err, "disable_code")
	}
	return s.twoFactorPage(c, http.StatusOK, nil, nil, nil, "Two-factor sign-in is off; your password alone signs you in.")
}

// handleTwoFactorForgetBrowsers makes every remembered browser ask for the
// code again.
func (s *Server) handleTwoFactorForgetBrowsers(c echo.Context) error {
	n, err := s.TwoFactor.ForgetRememberedBrowsers(c.Request().Context(), principal(c))
	if err != nil {
		return err
	}
	return s.twoFactorPage(c, http.StatusOK, nil, nil, nil,
		templates.CountOf(int(n), "remembered browser", "remembered browsers")+" forgotten: each asks for the code at its next sign-in.")
}

// handleTwoFactorPolicy sets whether staff and carrier admins must use a
// second factor.
func (s *Server) handleTwoFactorPolicy(c echo.Context) error {
	on := c.FormValue("require") == "on"
	if err := s.TwoFactor.SetRequired(c.Request().Context(), principal(c), on); err != nil {
		return err
	}
	msg := "Two-factor sign-in is no longer required."
	if on {
		msg = "Two-factor sign-in is now required of gateway staff and carrier admins: each sets it up at their next page."
	}
	if err := s.setFlash(c, "%s", msg); err != nil {
		return err
	}
	return c.Redirect(http.StatusSeeOther, "/admin/users")
}

// handleTwoFactorReset turns someone's second factor off (lost phone and
// codes); audited as two_factor.reset.
func (s *Server) handleTwoFactorReset(c echo.Context) error {
	id, err := strconv.ParseInt(c.Param("id"), 10, 64)
	if err != nil {
		return apperr.Errorf(apperr.ENOTFOUND, "No such user.")
	}
	if err := s.TwoFactor.Reset(c.Request().Context(), principal(c), id); err != nil {
		return err
	}
	if err := s.setFlash(c, "Two-factor sign-in reset: they sign in with their password and set it up again."); err != nil {
		return err
	}
	return c.Redirect(http.StatusSeeOther, "/admin/users")
}
