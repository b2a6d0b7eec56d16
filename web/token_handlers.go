package web

import (
	"context"
	"net/http"
	"strings"
	"time"

	"github.com/airside/airside/internal/account"
	"github.com/airside/airside/internal/apitoken"

	"github.com/labstack/echo/v4"

	"github.com/airside/airside/internal/apperr"
	"github.com/airside/airside/templates"
)

// tokenPage is whose tokens a page shows: the gateways' (a gateway admin's
// page) or a carrier's (its admins' page).
type tokenPage struct {
	carrier *account.Carrier // nil: the gateways'
	// carriers are the carriers the person may choose between.
	carriers []templates.Choice
}

func (s *Server) tokenPageOf(c echo.Context) (tokenPage, error) {
	if !strings.HasPrefix(c.Path(), "/carrier/") {
		return tokenPage{}, nil
	}
	carrier, choices, err := s.trafficCarrier(c, principal(c), carrierTokensPath)
	if err != nil {
		return tokenPage{}, err
	}
	return tokenPage{carrier: carrier, carriers: choices}, nil
}

const (
	adminTokensPath   = "/admin/tokens"
	carrierTokensPath = "/carrier/tokens"
)

func (tp tokenPage) path() string {
	if tp.carrier == nil {
		return adminTokensPath
	}
	return carrierTokensPath
}

func (tp tokenPage) query() string {
	if tp.carrier == nil {
		return ""
	}
	return "?carrier=" + tp.carrier.Slug
}

func (s *Server) tokensView(c echo.Context, tp tokenPage, chosen []string) (templates.TokensView, error) {
	ctx, p := c.Request().Context(), principal(c)
	var (
		tokens []apitoken.Token
		err    error
	)
	v := templates.TokensView{Page: s.page(c, "API tokens", "tokens"), Base: tp.path(), Query: tp.query(), Heading: "API tokens",
		Empty: "No tokens yet. A gateway needs one to read the catalogue, elect or report metrics.", Revoking: "gateway"}
	scopes := apitoken.Scopes
	if tp.carrier != nil {
		tokens, err = s.Tokens.ListForCarrier(ctx, p, tp.carrier.ID)
		v.Page = s.page(c, "API tokens", "members")
		v.Heading = "API tokens of " + tp.carrier.Name
		v.Empty = "No tokens yet. Your repricing job or feed sync needs one to read your fares and file new ones through /api/v1/carrier/ (see the API's description)."
		v.Revoking = "script"
		scopes = apitoken.CarrierScopes
	} else {
		tokens, err = s.Tokens.List(ctx, p)
	}
	if err != nil {
		return templates.TokensView{}, err
	}
	issuers := map[int64]*account.Principal{}
	for _, t := range tokens {
		row := templates.TokenRow{ID: t.ID, Name: t.Name, Scopes: strings.Join(t.Scopes, ", "), Created: stamp(&t.CreatedAt),
			Used: orDash(stamp(t.LastUsedAt)), Revoked: stamp(t.RevokedAt)}
		if tp.carrier != nil && t.RevokedAt == nil {
			// A carrier's token acts as its issuer: one who is no longer
			// the carrier's admin leaves it opening nothing (403), which
			// the list says rather than showing it as working.
			if row.Inactive, err = s.tokenInactive(ctx, &t, issuers); err != nil {
				return templates.TokensView{}, err
			}
		}
		v.Rows = append(v.Rows, row)
	}
	for _, sc := range scopes {
		v.Scopes = append(v.Scopes, templates.CapabilityOption{Name: sc, Label: sc, Why: apitoken.ScopeMeanings[sc], Checked: contains(chosen, sc)})
	}
	return v, nil
}

// tokenInactive says why a carrier's live token opens nothing ("" when it
// works), reading each issuer once.
func (s *Server) tokenInactive(ctx context.Context, t *apitoken.Token, issuers map[int64]*account.Principal) (string, error) {
	var issuer *account.Principal
	if t.CreatedBy != nil {
		p, seen := issuers[*t.CreatedBy]
		if !seen {
			var err error
			if p, err = s.AccountReads.FindPrincipal(ctx, *t.CreatedBy); err != nil && apperr.Code(err) != apperr.ENOTFOUND {
				return "", err
			}
			issuers[*t.CreatedBy] = p
		}
		issuer = p
	}
	if _, err := apitoken.ActsFor(t, issuer); err != nil {
		return "Opens nothing: " + apperr.Message(err), nil
	}
	return "", nil
}

func (s *Server) handleTokens(c echo.Context) error {
	tp, err := s.tokenPageOf(c)
	if err != nil {
		return err
	}
	v, err := s.tokensView(c, tp, nil)
	if err != nil {
		return err
	}
	v.NewToken = s.takeReveal(c, tp.path())
	return render(c, http.StatusOK, templates.Tokens(v))
}

func (s *Server) handleCreateToken(c echo.Context) error {
	if err := c.Request().ParseForm(); err != nil {
		return apperr.Errorf(apperr.EINVALID, "The form could not be read.")
	}
	tp, err := s.tokenPageOf(c)
	if err != nil {
		return err
	}
	name, scopes := c.FormValue("name"), c.Request().PostForm["scope"]
	var token string
	if tp.carrier != nil {
		token, err = s.Tokens.CreateForCarrier(c.Request().Context(), principal(c), tp.carrier.ID, name, scopes)
	} else {
		token, err = s.Tokens.Create(c.Request().Context(), principal(c), name, scopes)
	}
	v, verr := s.tokensView(c, tp, scopes)
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
	c.SetCookie(&http.Cookie{Name: revealCookie, Value: token, Path: tp.path(), MaxAge: int(revealFor.Seconds()),
		HttpOnly: true, Secure: isTLS(c.Request()), SameSite: http.SameSiteStrictMode})
	return c.Redirect(http.StatusSeeOther, tp.path()+tp.query())
}

// revealCookie carries a new API token's secret to the page that shows it
// once; revealFor bounds how long it waits there.
const (
	revealCookie = "airside_reveal"
	revealFor    = 2 * time.Minute
)

// takeReveal returns, once, a new token's secret left for this page, and
// clears it.
func (s *Server) takeReveal(c echo.Context, path string) string {
	ck, err := c.Cookie(revealCookie)
	if err != nil {
		return ""
	}
	c.SetCookie(&http.Cookie{Name: revealCookie, Value: "", Path: path, MaxAge: -1,
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
	tp, err := s.tokenPageOf(c)
	if err != nil {
		return err
	}
	if tp.carrier != nil {
		err = s.Tokens.RevokeForCarrier(c.Request().Context(), principal(c), tp.carrier.ID, id)
	} else {
		err = s.Tokens.Revoke(c.Request().Context(), principal(c), id)
	}
	if err != nil {
		return err
	}
	if err := s.setFlash(c, "Token revoked; it stops working at once."); err != nil {
		return err
	}
	return c.Redirect(http.StatusSeeOther, tp.path()+tp.query())
}
