package web

import (
	"crypto/subtle"
	"net/http"
	"net/url"
	"strings"

	"github.com/labstack/echo/v4"

	"github.com/airside/airside/internal/account"
	"github.com/airside/airside/internal/apperr"
)

// csrfCookie holds the double-submit token.
const csrfCookie = "airside_csrf"

// csrf protects every state-changing request. It refuses a request a browser
// marks cross-site or whose Origin is another host, and otherwise demands the
// token from the form (_csrf) or the X-CSRF-Token header to match the cookie,
// for browsers and scripts alike.
//
// We do not use echo's CSRF middleware: it lets a browser's request through on
// Sec-Fetch-Site alone and then puts a placeholder instead of a token in the
// context, so a page rendered for a browser would carry no token.
func csrf(next echo.HandlerFunc) echo.HandlerFunc {
	return func(c echo.Context) error {
		r := c.Request()
		token := ""
		if ck, err := r.Cookie(csrfCookie); err == nil && len(ck.Value) >= 32 {
			token = ck.Value
		} else {
			t, err := setCSRFToken(c)
			if err != nil {
				return err
			}
			token = t
		}
		c.Set(ctxCSRF, token)
		switch r.Method {
		case http.MethodGet, http.MethodHead, http.MethodOptions:
			return next(c)
		}
		if r.Header.Get("Sec-Fetch-Site") == "cross-site" || !sameOrigin(r) {
			return apperr.Errorf(apperr.EFORBIDDEN, "This form was sent from another site and was refused.")
		}
		sent := r.Header.Get("X-CSRF-Token")
		if sent == "" {
			sent = c.FormValue("_csrf")
		}
		if sent == "" || subtle.ConstantTimeCompare([]byte(sent), []byte(token)) != 1 {
			return apperr.Errorf(apperr.EFORBIDDEN, "This form has expired or did not come from Airside. Reload the page and try again.")
		}
		return next(c)
	}
}

// setCSRFToken gives the browser a new double-submit token.
func setCSRFToken(c echo.Context) (string, error) {
	token, _, err := account.NewToken()
	if err != nil {
		return "", err
	}
	setCSRFCookie(c, token)
	return token, nil
}

// setCSRFCookie sets the double-submit cookie to token.
func setCSRFCookie(c echo.Context, token string) {
	c.SetCookie(&http.Cookie{Name: csrfCookie, Value: token, Path: "/", HttpOnly: true,
		Secure: isTLS(c.Request()), SameSite: http.SameSiteLaxMode, MaxAge: 30 * 24 * 3600})
}

// sameOrigin reports whether the Origin header, when present, names this host.
func sameOrigin(r *http.Request) bool {
	origin := r.Header.Get("Origin")
	if origin == "" || origin == "null" {
		return origin == ""
	}
	u, err := url.Parse(origin)
	return err == nil && strings.EqualFold(u.Host, r.Host)
}

// isTLS reports whether the client's connection is HTTPS (directly, or through
// a proxy that says so).
func isTLS(r *http.Request) bool {
	return r.TLS != nil || strings.EqualFold(r.Header.Get("X-Forwarded-Proto"), "https")
}
