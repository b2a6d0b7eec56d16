package web

import (
	"net/http"
	"strings"
	"time"

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
		v.Scopes = append(v.Scopes, templates.CapabilityOption{Name: sc, Label: sc, Why: apitoken.ScopeMeanings[sc], Checked: contains(chosen, sc)})
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
	// Post, redirect, get: a reload shows the list, not the form re-sent.
	// The secret waits for the next page view in a short-lived cookie for
	// this page only, never in the session row: the database never holds a
	// token's secret, even for a moment.
	c.SetCookie(&http.Cookie{Name: revealCookie, Value: token, Path: "/admin/tokens", MaxAge: int(revealFor.Seconds()),
		HttpOnly: true, Secure: isTLS(c.Request()), SameSite: http.SameSiteStrictMode})
	return c.Redirect(http.StatusSeeOther, "/admin/tokens")
}

// revealCookie carries a new API token's secret to the page that shows it
// once; revealFor bounds how long it waits there.
const (
	revealCookie = "airside_reveal"
	revealFor    = 2 * time.Minute
)

// takeReveal returns, once, a new token's secret left for this page, and
// clears it.
func (s *Server) takeReveal(c echo.Context) string {
	ck, err := c.Cookie(revealCookie)
	if err != nil {
		return ""
	}
	c.SetCookie(&http.Cookie{Name: revealCookie, Value: "", Path: "/admin/tokens", MaxAge: -1,
		HttpOnly: true, Secure: isTLS(c.Request()), SameSite: http.SameSiteStrictMode})
	if !strings.HasPrefix(ck.Value, apitoken.Prefix) || len(ck.Value) > 200 {
		return "" // not a secret this page made
	}
	return ck.Value
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
