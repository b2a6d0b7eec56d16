// Package docs carries the documents the portal serves as they are written
// here: the gateway API's OpenAPI document, so the API describes itself at
// /api/v1/openapi.yaml (and .json) from the very file the tests hold it to.
package docs

import _ "embed"

// OpenAPI is docs/openapi.yaml.
//
//go:embed openapi.yaml
var OpenAPI []byte
