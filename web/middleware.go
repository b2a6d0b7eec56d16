package web

import (
	"context"
	"crypto/rand"
	"encoding/hex"
	"errors"
	"fmt"
	"io"
	"log/slog"
	"net/http"
	"net/url"
	"strconv"
	"time"

	"github.com/labstack/echo/v4"

	"github.com/airside/airside/internal/account"
	"github.com/airside/airside/internal/apperr"
)

// Context keys.
const (
	ctxPrincipal = "principal"
	ctxCSRF      = "csrf"
)

// securityHeaders sets the headers every response carries.
func securityHeaders(next echo.HandlerFunc) echo.HandlerFunc {
	return func(c echo.Context) error {
		h := c.Response().Header()
		h.Set("Content-Security-Policy", "default-src 'self'; script-src 'self'; style-src 'self'; img-src 'self' data:; "+
			"object-src 'none'; base-uri 'none'; form-action 'self'; frame-ancestors 'none'")
		h.Set("X-Content-Type-Options", "nosniff")
		h.Set("X-Frame-Options", "DENY")
		h.Set("Referrer-Policy", "same-origin")
		if isTLS(c.Request()) {
			// Served over HTTPS (directly or through a trusted proxy): browsers
			// keep to it for a year.
			h.Set("Strict-Transport-Security", "max-age=31536000; includeSubDomains")
		}
		return next(c)
	}
}

// requestID gives every request an id, answered in X-Request-Id and written
// in its log line, so a person quoting an error and the logs meet. An id
// sent by a trusted hop (a load balancer's) is kept when it is short and
// plain; anything else is replaced.
func requestID(next echo.HandlerFunc) echo.HandlerFunc {
	return func(c echo.Context) error {
		id := c.Request().Header.Get(echo.HeaderXRequestID)
		if !plainID(id) {
			var b [12]byte
			_, _ = rand.Read(b[:])
			id = hex.EncodeToString(b[:])
		}
		c.Response().Header().Set(echo.HeaderXRequestID, id)
		return next(c)
	}
}

func plainID(id string) bool {
	if id == "" || len(id) > 64 {
		return false
	}
	for _, r := range id {
		if !(r >= 'a' && r <= 'z' || r >= 'A' && r <= 'Z' || r >= '0' && r <= '9' || r == '-' || r == '_' || r == '.') {
			return false
		}
	}
	return true
}

// requestLog logs one line per request. It logs the route pattern, never the
// raw path, so tokens in URLs (sign-up links) stay out of logs.
func requestLog(log *slog.Logger, t *telemetry) echo.MiddlewareFunc {
	return func(next echo.HandlerFunc) echo.HandlerFunc {
		return func(c echo.Context) error {
			start := time.Now()
			err := next(c)
			route := c.Path()
			if route == "" {
				route = "(no route)"
			}
			if err != nil && clientGone(c, err) {
				// The client hung up (an upload cut off, a tab closed):
				// nothing to answer and nothing wrong here. Logged as nginx's
				// 499, not as the 200 the unwritten response still holds.
				t.observe(route, c.Request().Method, 499, time.Since(start))
				log.Info("request", "id", c.Response().Header().Get(echo.HeaderXRequestID), "method", c.Request().Method, "route", route, "status", 499, "client", "disconnected",
					"duration_ms", float64(time.Since(start).Microseconds())/1000, "err", err.Error())
				return nil
			}
			if err != nil {
				c.Error(err)
			}
			t.observe(route, c.Request().Method, c.Response().Status, time.Since(start))
			log.Info("request", "id", c.Response().Header().Get(echo.HeaderXRequestID), "method", c.Request().Method, "route", route, "status", c.Response().Status,
				"duration_ms", float64(time.Since(start).Microseconds())/1000, "bytes", c.Response().Size)
			return nil
		}
	}
}

// loadPrincipal puts the logged-in user, if any, in the context.
func (s *Server) loadPrincipal(next echo.HandlerFunc) echo.HandlerFunc {
	return func(c echo.Context) error {
		sess, err := s.sessions.Get(c.Request(), SessionCookie)
		if err != nil {
			return err
		}
		if uid, ok := sess.Values[sessionUserKey].(string); ok {
			id, _ := strconv.ParseInt(uid, 10, 64)
			p, err := s.AccountReads.FindPrincipal(c.Request().Context(), id)
			switch apperr.Code(err) {
			case "":
				if err := holdToSessionToken(c, sess.Values[sessionCSRFKey]); err != nil {
					return err
				}
				c.Set(ctxPrincipal, p)
				if err := s.sessions.touch(c.Request(), c.Response(), sess); err != nil {
					return err
				}
			case apperr.ENOTFOUND: // the user is gone: treat as logged out
			default:
				return err
			}
		}
		return next(c)
	}
}

// holdToSessionToken binds CSRF to the session: a logged-in form must carry
// the token the session was given at login (csrf has checked it matches the
// cookie). A page view whose cookie lost or changed it gets it back, so the
// forms it renders work. Sessions from before the binding carry none.
func holdToSessionToken(c echo.Context, bound any) error {
	token, _ := bound.(string)
	if token == "" || c.Get(ctxCSRF) == token {
		return nil
	}
	switch c.Request().Method {
	case http.MethodGet, http.MethodHead, http.MethodOptions:
		setCSRFCookie(c, token)
		c.Set(ctxCSRF, token)
		return nil
	}
	return apperr.Errorf(apperr.EFORBIDDEN, "This form has expired or did not come from Airside. Reload the page and try again.")
}

func principal(c echo.Context) *account.Principal {
	p, _ := c.Get(ctxPrincipal).(*account.Principal)
	return p
}

// requireLogin sends anonymous visitors to the login page and back.
func requireLogin(next echo.HandlerFunc) echo.HandlerFunc {
	return func(c echo.Context) error {
		if principal(c) == nil {
			if c.Request().Method == "GET" {
				return c.Redirect(303, "/login?next="+url.QueryEscape(c.Request().URL.RequestURI()))
			}
			return apperr.Errorf(apperr.EUNAUTHORIZED, "Please log in.")
		}
		return next(c)
	}
}

// requireAdmin lets only gateway admins through.
func requireAdmin(next echo.HandlerFunc) echo.HandlerFunc {
	return func(c echo.Context) error {
		if p := principal(c); p == nil || !p.IsAdmin() {
			return apperr.Errorf(apperr.EFORBIDDEN, "This page is for gateway admins.")
		}
		return next(c)
	}
}

// pathID reads a numeric path parameter; a malformed one is not found.
func pathID(c echo.Context, name string) (int64, error) {
	id, err := strconv.ParseInt(c.Param(name), 10, 64)
	if err != nil || id <= 0 {
		return 0, apperr.Errorf(apperr.ENOTFOUND, "Not found.")
	}
	return id, nil
}

// setFlash stores a one-time message for the next page.
func (s *Server) setFlash(c echo.Context, format string, args ...any) error {
	sess, err := s.sessions.Get(c.Request(), SessionCookie)
	if err != nil {
		return err
	}
	sess.Values[sessionFlashKey] = fmt.Sprintf(format, args...)
	return sess.Save(c.Request(), c.Response())
}

// clientGone reports whether err comes from the client going away: its
// request cancelled, or its body ending before its Content-Length.
func clientGone(c echo.Context, err error) bool {
	return errors.Is(c.Request().Context().Err(), context.Canceled) ||
		errors.Is(err, io.ErrUnexpectedEOF) || errors.Is(err, context.Canceled)
}
