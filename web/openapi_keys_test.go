package web_test

import (
	"os"
	"strings"
	"testing"

	"go.yaml.in/yaml/v3"

	"github.com/airside/airside/internal/store"
)

// TestOpenAPIDocumentHasNoStrayKeys: an unquoted comma in a YAML flow map
// ({description: strong, changes with the document}) ends the value and
// makes the rest a key of its own, which cuts the description short and
// which outside validators refuse; kin-openapi does not notice. Every key
// of the document is a name (no spaces) with a value.
func TestOpenAPIDocumentHasNoStrayKeys(t *testing.T) {
	data, err := os.ReadFile(apiDocPath)
	if err != nil {
		t.Fatal(err)
	}
	var root yaml.Node
	if err := yaml.Unmarshal(data, &root); err != nil {
		t.Fatal(err)
	}
	keys := 0
	var walk func(n *yaml.Node)
	walk = func(n *yaml.Node) {
		if n.Kind == yaml.MappingNode {
			for i := 0; i+1 < len(n.Content); i += 2 {
				k, v := n.Content[i], n.Content[i+1]
				keys++
				if strings.ContainsAny(k.Value, " \t") || v.Tag == "!!null" && v.Value == "" {
					t.Errorf("docs/openapi.yaml line %d: stray key %q (an unquoted comma in a flow map?)", k.Line, k.Value)
				}
			}
		}
		for _, c := range n.Content {
			walk(c)
		}
	}
	walk(&root)
	if keys < 500 {
		t.Fatalf("only %d keys walked: the walk is broken", keys)
	}
}

// TestTheServedDocumentNamesThisPortal: with a base URL the served document's
// server is this portal's API (it always said localhost:8080); without one
// it is the file as written.
func TestTheServedDocumentNamesThisPortal(t *testing.T) {
	p := newPortal(t, store.SQLite)
	c := p.client()
	if body := c.get("/api/v1/openapi.yaml").body; !strings.Contains(body, "url: http://localhost:8080/api/v1") {
		t.Errorf("without a base URL the document should keep the demo's server:\n%.600s", body)
	}
	p.server.BaseURL = "https://fares.example.com/"
	for _, path := range []string{"/api/v1/openapi.yaml", "/api/v1/openapi.json"} {
		body := c.get(path).body
		if !strings.Contains(body, "https://fares.example.com/api/v1") || strings.Contains(body, "localhost:8080") {
			t.Errorf("%s does not name this portal as its server:\n%.800s", path, body)
		}
	}
}
