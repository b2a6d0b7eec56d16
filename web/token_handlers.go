package web

import (
	"net/http"
	"strings"

	"github.com/airside/airside/internal/apitoken"

	"github.com/labstack/echo/v4"

	"github.com/airside/airside/internal/apperr"
	"github.com/airside/airside/templates"
)

func (s *Server) tokensView(c echo.Context, chosen []string) (templates.TokensView, error) {
	tokens, err := s.Tokens.List(c.Request().Context(), principal(c))
	if err != nil {
		return templates.TokensView{}, err
	}
	v := templates.TokensView{Page: s.page(c, "API tokens", "tokens")}
	for _, t := range tokens {
		row := templates.TokenRow{ID: t.ID, Name: t.Name, Scopes: strings.Join(t.Scopes, ", "), Created: stamp(&t.CreatedAt),
			Used: orDash(stamp(t.LastUsedAt)), Revoked: stamp(t.RevokedAt)}
		v.Rows = append(v.Rows, row)
	}
	for _, sc := range apitoken.Scopes {
		v.Scopes = append(v.Scopes, templates.CapabilityOption{Name: sc, Label: sc, Checked: contains(chosen, sc)})
	}
	return v, nil
}

func (s *Server) handleTokens(c echo.Context) error {
	v, err := s.tokensView(c, nil)
	if err != nil {
		return err
	}
	v.NewToken = s.takeReveal(c)
	return render(c, http.StatusOK, templates.Tokens(v))
}

func (s *Server) handleCreateToken(c echo.Context) error {
	if err := c.Request().ParseForm(); err != nil {
		return apperr.Errorf(apperr.EINVALID, "The form could not be read.")
	}
	name, scopes := c.FormValue("name"), c.Request().PostForm["scope"]
	token, err := s.Tokens.Create(c.Request().Context(), principal(c), name, scopes)
	v, verr := s.tokensView(c, scopes)
	if verr != nil {
		return verr
	}
	if apperr.Code(err) == apperr.EINVALID {
		v.Name, v.Errors = name, apperr.FieldErrors(err)
		return render(c, http.StatusUnprocessableEntity, templates.Tokens(v))
	}
	if err != nil {
		return err
	}
	// Post, redirect, get: a reload shows the list, not the form re-sent;
	// the secret waits in the session for exactly one page view.
	sess, err := s.sessions.Get(c.Request(), SessionCookie)
	if err != nil {
		return err
	}
	sess.Values[sessionRevealKey] = token
	if err := sess.Save(c.Request(), c.Response()); err != nil {
		return err
	}
	return c.Redirect(http.StatusSeeOther, "/admin/tokens")
}

// takeReveal returns, once, a secret left in the session for the next page.
func (s *Server) takeReveal(c echo.Context) string {
	sess, err := s.sessions.Get(c.Request(), SessionCookie)
	if err != nil {
		return ""
	}
	secret, _ := sess.Values[sessionRevealKey].(string)
	if secret != "" {
		delete(sess.Values, sessionRevealKey)
		if err := sess.Save(c.Request(), c.Response()); err != nil {
			s.Log.Error("save session", "err", err)
		}
	}
	return secret
}

func (s *Server) handleRevokeToken(c echo.Context) error {
	id, err := pathID(c, "id")
	if err != nil {
		return err
	}
	if err := s.Tokens.Revoke(c.Request().Context(), principal(c), id); err != nil {
		return err
	}
	if err := s.setFlash(c, "Token revoked; it stops working at once."); err != nil {
		return err
	}
	return c.Redirect(http.StatusSeeOther, "/admin/tokens")
}
