package web

import (
	"fmt"
	"net/http"

	"github.com/labstack/echo/v4"
)

// handleExport serves the published catalogue in another tool's shape
// (OpenRouter's /models, LiteLLM's price map): public, as the storefront
// is, encoded once per catalogue revision, revalidated by its ETag.
func (s *Server) handleExport(format string) echo.HandlerFunc {
	return func(c echo.Context) error {
		snap, err := s.Routing.Current(c.Request().Context())
		if err != nil {
			return err
		}
		etag := fmt.Sprintf(`W/"%s-r%d"`, format, snap.Revision)
		h := c.Response().Header()
		h.Set("ETag", etag)
		h.Set("Cache-Control", "public, max-age=60")
		h.Set("Vary", "Accept-Encoding")
		if etagMatches(c.Request().Header.Get("If-None-Match"), etag) {
			return c.NoContent(http.StatusNotModified)
		}
		body, err := snap.Export(format)
		if err != nil {
			return err
		}
		if acceptsGzip(c.Request().Header.Get("Accept-Encoding")) {
			h.Set("Content-Encoding", "gzip")
			return c.Blob(http.StatusOK, echo.MIMEApplicationJSON, body.Gzip)
		}
		return c.Blob(http.StatusOK, echo.MIMEApplicationJSON, body.Plain)
	}
}
