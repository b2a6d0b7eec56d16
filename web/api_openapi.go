package web

import (
	"crypto/sha256"
	"encoding/hex"
	"encoding/json"
	"fmt"
	"net/http"
	"sync"

	"github.com/getkin/kin-openapi/openapi3"
	"github.com/labstack/echo/v4"

	"github.com/airside/airside/docs"
)

// apiDocument is the OpenAPI document in both forms generators take, with
// one strong validator each, made once.
type apiDocument struct {
	once       sync.Once
	json       []byte
	yamlETag   string
	jsonETag   string
	convertErr error
}

var servedDoc apiDocument

func (d *apiDocument) load() error {
	d.once.Do(func() {
		d.yamlETag = strongTag(docs.OpenAPI)
		doc, err := openapi3.NewLoader().LoadFromData(docs.OpenAPI)
		if err != nil {
			d.convertErr = fmt.Errorf("load docs/openapi.yaml: %w", err)
			return
		}
		if d.json, err = json.Marshal(doc); err != nil {
			d.convertErr = fmt.Errorf("encode the OpenAPI document as JSON: %w", err)
			return
		}
		d.jsonETag = strongTag(d.json)
	})
	return d.convertErr
}

func strongTag(b []byte) string {
	sum := sha256.Sum256(b)
	return `"` + hex.EncodeToString(sum[:8]) + `"`
}

// handleOpenAPI serves the API's own description, public (it holds no
// secret) and revalidated by ETag: GET /api/v1/openapi.yaml or .json.
func (s *Server) handleOpenAPI(format string) echo.HandlerFunc {
	return func(c echo.Context) error {
		if err := servedDoc.load(); err != nil {
			return err
		}
		body, tag, ctype := docs.OpenAPI, servedDoc.yamlETag, "application/yaml"
		if format == "json" {
			body, tag, ctype = servedDoc.json, servedDoc.jsonETag, "application/json"
		}
		h := c.Response().Header()
		h.Set("ETag", tag)
		h.Set("Cache-Control", "public, max-age=300")
		if etagMatches(c.Request().Header.Get("If-None-Match"), tag) {
			return c.NoContent(http.StatusNotModified)
		}
		return c.Blob(http.StatusOK, ctype, body)
	}
}
