package web

import (
	"fmt"
	"net/http"
	"strings"
	"time"

	"github.com/labstack/echo/v4"

	"github.com/airside/airside/internal/apperr"
	"github.com/airside/airside/internal/store"
	"github.com/airside/airside/templates"
)

func (s *Server) tokensView(c echo.Context, chosen []string) (templates.TokensView, error) {
	tokens, err := s.Store.FindTokens(c.Request().Context())
	if err != nil {
		return templates.TokensView{}, err
	}
	v := templates.TokensView{Page: s.page(c, "API tokens", "tokens")}
	for _, t := range tokens {
		row := templates.TokenRow{ID: t.ID, Name: t.Name, Scopes: strings.Join(t.Scopes, ", "), Created: stamp(&t.CreatedAt),
			Used: orDash(stamp(t.LastUsedAt)), Revoked: stamp(t.RevokedAt)}
		v.Rows = append(v.Rows, row)
	}
	for _, sc := range store.Scopes {
		v.Scopes = append(v.Scopes, templates.CapabilityOption{Name: sc, Label: sc, Checked: contains(chosen, sc)})
	}
	return v, nil
}

func (s *Server) handleTokens(c echo.Context) error {
	v, err := s.tokensView(c, nil)
	if err != nil {
		return err
	}
	return render(c, http.StatusOK, templates.Tokens(v))
}

func (s *Server) handleCreateToken(c echo.Context) error {
	if err := c.Request().ParseForm(); err != nil {
		return apperr.Errorf(apperr.EINVALID, "The form could not be read.")
	}
	name, scopes := c.FormValue("name"), c.Request().PostForm["scope"]
	token, err := s.Store.CreateToken(c.Request().Context(), principal(c).User.ID, name, scopes)
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
	v.NewToken = token
	return render(c, http.StatusOK, templates.Tokens(v))
}

func (s *Server) handleRevokeToken(c echo.Context) error {
	id, err := pathID(c, "id")
	if err != nil {
		return err
	}
	if err := s.Store.RevokeToken(c.Request().Context(), principal(c).User.ID, id); err != nil {
		return err
	}
	if err := s.setFlash(c, "Token revoked; it stops working at once."); err != nil {
		return err
	}
	return c.Redirect(http.StatusSeeOther, "/admin/tokens")
}

// trafficChart draws a listing's last six hours of reported traffic.
func (s *Server) trafficChart(c echo.Context, listingID int64) (templates.TrafficView, error) {
	now := s.Store.Now().UTC()
	since := now.Add(-6 * time.Hour).Truncate(10 * time.Minute)
	points, err := s.Store.MetricSeries(c.Request().Context(), listingID, since, 10*time.Minute)
	if err != nil {
		return templates.TrafficView{}, err
	}
	var steps []templates.TrafficStep
	any := false
	for _, p := range points {
		any = any || p.Requests > 0
		steps = append(steps, templates.TrafficStep{Label: p.At.Format("15:04"), OK: p.SuccessCount, Failed: p.Errors,
			Description: fmt.Sprintf("%s UTC: %d requests, %d failed", p.At.Format("15:04"), p.Requests, p.Errors)})
	}
	if !any {
		return templates.TrafficView{}, nil
	}
	return templates.NewTrafficChart(steps), nil
}
