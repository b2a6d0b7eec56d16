package web

import (
	"github.com/a-h/templ"
	"github.com/labstack/echo/v4"

	"github.com/airside/airside/templates"
)

// render writes a templ component as the response, buffered so that a
// rendering error still becomes a clean error page.
func render(c echo.Context, status int, component templ.Component) error {
	buf := templ.GetBuffer()
	defer templ.ReleaseBuffer(buf)
	if err := component.Render(c.Request().Context(), buf); err != nil {
		return err
	}
	if c.Response().Header().Get("Cache-Control") == "" { // a public page says it may be cached
		c.Response().Header().Set("Cache-Control", "no-store")
	}
	return c.HTMLBlob(status, buf.Bytes())
}

// page builds the layout's view for the current user, taking the pending
// flash message out of the session.
func (s *Server) page(c echo.Context, title, active string) templates.Page {
	p := templates.Page{Title: title}
	p.CSRF, _ = c.Get(ctxCSRF).(string)
	if pr := principal(c); pr != nil {
		p.Nav = templates.Nav{Email: pr.User.Email, IsStaff: pr.IsStaff(), IsAdmin: pr.IsAdmin(),
			IsReviewer: pr.IsReviewer(), Active: active}
		for _, m := range pr.Memberships {
			p.Nav.Carriers = append(p.Nav.Carriers, m.Carrier.Name+" · "+string(m.Role))
		}
		ctx := c.Request().Context()
		if n, err := s.AccountReads.CountUnread(ctx, pr.User.ID); err == nil {
			p.Nav.Unread = n
		}
		if pr.IsReviewer() {
			if n, err := s.FilingReads.CountAwaitingReview(ctx); err == nil {
				p.Nav.Pending = n
			}
		}
	}
	if sess, err := s.sessions.Get(c.Request(), SessionCookie); err == nil {
		if flash, ok := sess.Values[sessionFlashKey].(string); ok {
			p.Flash = flash
			delete(sess.Values, sessionFlashKey)
			if err := sess.Save(c.Request(), c.Response()); err != nil {
				s.requestLogger(c).Error("save session", "err", err)
			}
		}
	}
	return p
}
