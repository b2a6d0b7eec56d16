package web

import (
	"bytes"
	"crypto/sha256"
	"encoding/hex"
	"encoding/json"
	"fmt"
	"net/http"
	"strings"
	"sync"

	"github.com/getkin/kin-openapi/openapi3"
	"github.com/labstack/echo/v4"

	"github.com/airside/airside/docs"
)

// apiDocument is the OpenAPI document in both forms generators take, with
// one strong validator each, made once.
type apiDocument struct {
	once       sync.Once
	yaml, json []byte
	yamlETag   string
	jsonETag   string
	convertErr error
}

// servedDocs are the document as each base URL serves it (one in
// production; tests run portals at many addresses).
var servedDocs sync.Map

// documentFor is the document whose servers entry is base's API ("" keeps
// the demo's localhost address, as the file has it).
func documentFor(base string) *apiDocument {
	if d, ok := servedDocs.Load(base); ok {
		return d.(*apiDocument)
	}
	d, _ := servedDocs.LoadOrStore(base, &apiDocument{yaml: withServer(docs.OpenAPI, base)})
	return d.(*apiDocument)
}

// demoServer is the servers entry of docs/openapi.yaml.
const demoServer = "  - url: http://localhost:8080/api/v1\n    description: The demo (make run); a deployment serves the same paths under its own address\n"

// withServer names base's API as the document's server, so generators and
// outside tools point at this portal, not at localhost.
func withServer(doc []byte, base string) []byte {
	base = strings.TrimSuffix(strings.TrimSpace(base), "/")
	if base == "" {
		return doc
	}
	entry := fmt.Sprintf("  - url: %s/api/v1\n    description: This portal\n", base)
	return bytes.Replace(doc, []byte(demoServer), []byte(entry), 1)
}

func (d *apiDocument) load() error {
	d.once.Do(func() {
		d.yamlETag = strongTag(d.yaml)
		doc, err := openapi3.NewLoader().LoadFromData(d.yaml)
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
		served := documentFor(s.BaseURL)
		if err := served.load(); err != nil {
			return err
		}
		body, tag, ctype := served.yaml, served.yamlETag, "application/yaml"
		if format == "json" {
			body, tag, ctype = served.json, served.jsonETag, "application/json"
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
