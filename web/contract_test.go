package web_test

import (
	"bytes"
	"compress/gzip"
	"context"
	"encoding/json"
	"io"
	"maps"
	"net/http"
	"os"
	"reflect"
	"regexp"
	"slices"
	"strings"
	"sync"
	"testing"

	"github.com/getkin/kin-openapi/openapi3"
	"github.com/getkin/kin-openapi/openapi3filter"
	"github.com/getkin/kin-openapi/routers"
	"github.com/getkin/kin-openapi/routers/legacy"

	"github.com/airside/airside/internal/catalogue"
	"github.com/airside/airside/internal/store"
)

// The gateway API's contract is docs/openapi.yaml. Every API call a test
// makes through apiCall is checked against it: the response must be one the
// document declares for the operation, with a body its schema accepts, and a
// request the document refuses must not be served. So neither side can change
// without the other.

const apiDocPath = "../docs/openapi.yaml"

var (
	apiDocOnce sync.Once
	apiDocErr  error
	apiDocData []byte
	routersMu  sync.Mutex
	routersBy  = map[string]routers.Router{}
)

// loadAPIDoc loads and validates the document afresh (each router gets its
// own copy, pointed at a test server).
func loadAPIDoc() (*openapi3.T, error) {
	apiDocOnce.Do(func() { apiDocData, apiDocErr = os.ReadFile(apiDocPath) })
	if apiDocErr != nil {
		return nil, apiDocErr
	}
	loader := openapi3.NewLoader()
	doc, err := loader.LoadFromData(apiDocData)
	if err != nil {
		return nil, err
	}
	return doc, doc.Validate(context.Background())
}

// routerFor is the document's router for a test server's base URL.
func routerFor(t *testing.T, base string) routers.Router {
	t.Helper()
	routersMu.Lock()
	defer routersMu.Unlock()
	if r, ok := routersBy[base]; ok {
		return r
	}
	doc, err := loadAPIDoc()
	if err != nil {
		t.Fatalf("docs/openapi.yaml: %v", err)
	}
	doc.Servers = openapi3.Servers{{URL: base + "/api/v1"}}
	r, err := legacy.NewRouter(doc)
	if err != nil {
		t.Fatalf("router for docs/openapi.yaml: %v", err)
	}
	routersBy[base] = r
	return r
}

// checkContract checks one API exchange against the document.
func checkContract(t *testing.T, base, method, path string, header http.Header, reqBody string, res response) {
	t.Helper()
	req, _ := http.NewRequest(method, base+path, strings.NewReader(reqBody))
	req.Header = header.Clone()
	route, params, err := routerFor(t, base).FindRoute(req)
	if err != nil {
		if res.status != http.StatusNotFound && res.status != http.StatusMethodNotAllowed {
			t.Errorf("contract: %s %s is not in docs/openapi.yaml, yet it answered %d", method, path, res.status)
		}
		return
	}
	ctx := context.Background()
	in := &openapi3filter.RequestValidationInput{Request: req, PathParams: params, Route: route,
		Options: &openapi3filter.Options{AuthenticationFunc: openapi3filter.NoopAuthenticationFunc, MultiError: true}}
	if reqErr := openapi3filter.ValidateRequest(ctx, in); reqErr != nil {
		switch res.status {
		case http.StatusBadRequest, http.StatusUnauthorized, http.StatusForbidden, http.StatusRequestEntityTooLarge, http.StatusUnsupportedMediaType, http.StatusUnprocessableEntity:
		default:
			t.Errorf("contract: the document refuses %s %s (%v), yet the server answered %d", method, path, reqErr, res.status)
		}
	}
	req.Body = io.NopCloser(bytes.NewReader([]byte(reqBody)))
	body := res.body
	if res.header.Get("Content-Encoding") == "gzip" {
		zr, err := gzip.NewReader(strings.NewReader(body))
		if err != nil {
			t.Fatalf("contract: %s %s: a gzip body that does not unzip: %v", method, path, err)
		}
		plain, err := io.ReadAll(zr)
		if err != nil {
			t.Fatalf("contract: %s %s: a gzip body that does not unzip: %v", method, path, err)
		}
		body = string(plain)
	}
	out := &openapi3filter.ResponseValidationInput{RequestValidationInput: in, Status: res.status, Header: res.header,
		Body: io.NopCloser(strings.NewReader(body)), Options: &openapi3filter.Options{IncludeResponseStatus: true, MultiError: true}}
	if err := openapi3filter.ValidateResponse(ctx, out); err != nil {
		t.Errorf("contract: %s %s answered %d, which docs/openapi.yaml does not allow: %v\n%.600s", method, path, res.status, err, res.body)
	}
}

// TestOpenAPIDocument: the document loads and validates in a strict tool,
// and it describes every API route the server has, each with an operationId,
// one security scope, and the statuses every authenticated route can answer.
var pathParam = regexp.MustCompile(`:([A-Za-z]+)`)

func TestOpenAPIDocument(t *testing.T) {
	doc, err := loadAPIDoc()
	if err != nil {
		t.Fatalf("docs/openapi.yaml does not validate: %v", err)
	}
	if doc.Info.License == nil {
		t.Error("no license")
	}
	p := newPortal(t, store.SQLite)
	served := map[string]bool{}
	for _, r := range p.server.Echo().Routes() {
		if strings.HasPrefix(r.Path, "/api/v1/") && !strings.Contains(r.Path, "*") {
			// echo's :param is OpenAPI's {param}.
			path := pathParam.ReplaceAllString(strings.TrimPrefix(r.Path, "/api/v1"), "{$1}")
			served[r.Method+" "+path] = true
		}
	}
	documented := map[string]bool{}
	ids := map[string]bool{}
	for path, item := range doc.Paths.Map() {
		for method, op := range item.Operations() {
			key := method + " " + path
			documented[key] = true
			if !served[key] {
				t.Errorf("%s is documented but not served", key)
			}
			if op.OperationID == "" || ids[op.OperationID] {
				t.Errorf("%s: missing or repeated operationId %q", key, op.OperationID)
			}
			ids[op.OperationID] = true
			public := op.Security != nil && len(*op.Security) == 0
			if public {
				// Only the API's own description is public.
				if !strings.HasPrefix(path, "/openapi.") {
					t.Errorf("%s: public, but it is not the API's description", key)
				}
				continue
			}
			if op.Security == nil || len(*op.Security) != 1 || len((*op.Security)[0]["bearer"]) != 1 {
				t.Errorf("%s: wants exactly one bearer scope", key)
			}
			for _, status := range []string{"401", "403", "405"} {
				if op.Responses.Value(status) == nil {
					t.Errorf("%s: status %s is not documented", key, status)
				}
			}
		}
	}
	for key := range served {
		if !documented[key] {
			t.Errorf("%s is served but not documented", key)
		}
	}
}

// TestTheAPIServesItsDescription: /api/v1/openapi.yaml is the document the
// tests hold the API to, byte for byte, without a token; the JSON form
// describes the same operations; both revalidate to 304 by ETag.
func TestTheAPIServesItsDescription(t *testing.T) {
	p := newPortal(t, store.SQLite)
	file, err := os.ReadFile(apiDocPath)
	if err != nil {
		t.Fatal(err)
	}
	get := func(path, etag string) (*http.Response, []byte) {
		req, _ := http.NewRequest("GET", p.srv.URL+path, nil)
		if etag != "" {
			req.Header.Set("If-None-Match", etag)
		}
		res, err := http.DefaultClient.Do(req)
		if err != nil {
			t.Fatal(err)
		}
		defer res.Body.Close()
		body, _ := io.ReadAll(res.Body)
		return res, body
	}
	res, body := get("/api/v1/openapi.yaml", "")
	if res.StatusCode != 200 || !bytes.Equal(body, file) || res.Header.Get("ETag") == "" {
		t.Fatalf("yaml: %d, %d bytes (file %d), ETag %q", res.StatusCode, len(body), len(file), res.Header.Get("ETag"))
	}
	if again, _ := get("/api/v1/openapi.yaml", res.Header.Get("ETag")); again.StatusCode != http.StatusNotModified {
		t.Errorf("revalidated yaml: %d, want 304", again.StatusCode)
	}
	res, body = get("/api/v1/openapi.json", "")
	var doc struct {
		OpenAPI string                    `json:"openapi"`
		Paths   map[string]map[string]any `json:"paths"`
	}
	if err := json.Unmarshal(body, &doc); err != nil || res.StatusCode != 200 {
		t.Fatalf("json: %d %v", res.StatusCode, err)
	}
	want, err := loadAPIDoc()
	if err != nil {
		t.Fatal(err)
	}
	if doc.OpenAPI != want.OpenAPI || len(doc.Paths) != len(want.Paths.Map()) {
		t.Errorf("json form: openapi %q with %d paths, want %q with %d", doc.OpenAPI, len(doc.Paths), want.OpenAPI, len(want.Paths.Map()))
	}
	if again, _ := get("/api/v1/openapi.json", res.Header.Get("ETag")); again.StatusCode != http.StatusNotModified {
		t.Errorf("revalidated json: %d, want 304", again.StatusCode)
	}
}

// TestTheContractsBucketIsTheCatalogues: the metrics endpoint decodes a
// bucket and a demand row straight into the catalogue's types, so the
// document's Bucket names exactly the listing, the minute, the source and
// catalogue.Counters, and its Demand exactly catalogue.Demand's JSON
// members: a counter added to one and not the other fails here.
func TestTheContractsBucketIsTheCatalogues(t *testing.T) {
	doc, err := loadAPIDoc()
	if err != nil {
		t.Fatal(err)
	}
	schemaNames := func(name string) []string {
		s := doc.Components.Schemas[name]
		if s == nil || s.Value == nil {
			t.Fatalf("docs/openapi.yaml has no schema %s", name)
		}
		return slices.Sorted(maps.Keys(s.Value.Properties))
	}
	want := []string{"listing", "listingId", "minute", "source"}
	for _, k := range catalogue.Counters {
		want = append(want, k.Name)
	}
	slices.Sort(want)
	if got := schemaNames("Bucket"); !slices.Equal(got, want) {
		t.Errorf("the document's Bucket names %v, the catalogue %v", got, want)
	}
	var demand []string
	typ := reflect.TypeFor[catalogue.Demand]()
	for i := range typ.NumField() {
		name, _, _ := strings.Cut(typ.Field(i).Tag.Get("json"), ",")
		demand = append(demand, name)
	}
	slices.Sort(demand)
	if got := schemaNames("Demand"); !slices.Equal(got, demand) {
		t.Errorf("the document's Demand names %v, the catalogue %v", got, demand)
	}
}
