package web

import (
	"bytes"
	"encoding/json"
	"errors"
	"fmt"
	"io"
	"mime"
	"net/http"
	"reflect"
	"strings"
	"time"

	jsonv2 "github.com/go-json-experiment/json"
	"github.com/go-json-experiment/json/jsontext"
	"github.com/labstack/echo/v4"

	"github.com/airside/airside/internal/apperr"
)

// The API's JSON in and errors out: one rule for every endpoint.

// decodeJSON reads a JSON body into v: 415 for a body that is not JSON by
// its Content-Type, 413 for one over the limit (chunked too), 400 for one
// that is not JSON or has a value of the wrong type (naming the field).
func decodeJSON(c echo.Context, v any) error {
	// The whole body is read first (the body limit bounds it): the
	// duplicate-key and depth checks walk it, which encoding/json does not
	// do (it keeps the last value of a repeated key, so {"a":1,"a":2} could
	// mean one thing to a proxy and another here).
	data, err := readJSONBody(c)
	if err != nil {
		return err
	}
	return decodeJSONBytes(data, v)
}

// decodeJSONFast is decodeJSON for the bodies a gateway posts many times a
// second (metrics batches): JSON v2 decodes them in a quarter of the time
// and is stricter in everything it accepts (member names matched exactly,
// duplicate names, invalid UTF-8 and trailing data refused), so a body it
// accepts is one decodeJSON accepts too, read the same; a body it refuses
// is decoded again by decodeJSON, for decodeJSON's answer.
func decodeJSONFast(c echo.Context, v any) error {
	data, err := readJSONBody(c)
	if err != nil {
		return err
	}
	if jsonv2.Unmarshal(data, v, jsonv2.RejectUnknownMembers(true)) == nil {
		return nil
	}
	// v may hold part of the refused body: decoded afresh.
	reflect.ValueOf(v).Elem().SetZero()
	return decodeJSONBytes(data, v)
}

// readJSONBody reads a request's whole JSON body (the body limit bounds
// it): 415 for a body that is not JSON by its Content-Type, 413 for one
// over the limit.
func readJSONBody(c echo.Context) ([]byte, error) {
	if ct := c.Request().Header.Get("Content-Type"); !isJSONContentType(ct) {
		return nil, echo.NewHTTPError(http.StatusUnsupportedMediaType, "Send the body as JSON with Content-Type: application/json.")
	}
	var buf bytes.Buffer
	if n := c.Request().ContentLength; n > 0 && n <= 4<<20 {
		// One allocation for a body that says its length (at most
		// MaxBodyBytes); ReadFrom wants MinRead free for its last read.
		buf.Grow(int(n) + bytes.MinRead)
	}
	_, err := buf.ReadFrom(c.Request().Body)
	data := buf.Bytes()
	if err != nil {
		var tooLarge *http.MaxBytesError
		var he *echo.HTTPError
		if errors.As(err, &tooLarge) || errors.As(err, &he) && he.Code == http.StatusRequestEntityTooLarge {
			return nil, echo.NewHTTPError(http.StatusRequestEntityTooLarge, "The request body is larger than Airside accepts (4 MB).")
		}
		// The client hung up mid-body: nothing to answer (the log says 499).
		return nil, fmt.Errorf("request body cut off by the client: %w", err)
	}
	return data, nil
}

// decodeJSONBytes is decodeJSON's decoding of a body read whole.
func decodeJSONBytes(data []byte, v any) error {
	dec := json.NewDecoder(bytes.NewReader(data))
	// A field the API does not know is refused, not ignored: a typo such as
	// "promptToken" would otherwise elect at 0 prompt tokens and answer 200.
	dec.DisallowUnknownFields()
	err := dec.Decode(v)
	if err == nil && dec.More() {
		err = errors.New("trailing data after the JSON value")
	}
	if err == nil || isUnknownField(err) {
		// A repeated key or a body nested too deep is named first: it is
		// the more precise complaint.
		if dup := refuseDuplicateKeys(data); dup != nil {
			return dup
		}
	}
	if err == nil {
		return nil
	}
	// (A body over the limit was refused above, when it was read.)
	var typeErr *json.UnmarshalTypeError
	var syntaxErr *json.SyntaxError
	var timeErr *time.ParseError
	switch {
	case errors.Is(err, io.EOF):
		return badRequest("The request body is empty; send JSON.", nil)
	case errors.Is(err, io.ErrUnexpectedEOF):
		// The body was read whole: the JSON itself stops short.
		return badRequest("The request body is not valid JSON: it ends in the middle of a value.", nil)
	case errors.As(err, &typeErr):
		field := withoutEmbedded(typeErr.Field, reflect.TypeOf(v))
		if field == "" {
			field = "body"
		}
		return badRequest("A value has the wrong type.", map[string]string{field: "must be " + jsonKind(typeErr.Type.Kind().String())})
	case isUnknownField(err):
		// encoding/json names the field but not its path (no typed error).
		name := strings.Trim(strings.TrimPrefix(err.Error(), "json: unknown field "), `"`)
		return badRequest("The body has a field the API does not know (a typo?); see docs/openapi.yaml.", map[string]string{name: "unknown field"})
	case errors.As(err, &timeErr):
		return badRequest("A date-time is not in RFC 3339 form, like 2026-12-01T10:15:00Z.", nil)
	case errors.As(err, &syntaxErr):
		return badRequest(fmt.Sprintf("The request body is not valid JSON (near byte %d).", syntaxErr.Offset), nil)
	}
	return badRequest("The request body is not valid JSON.", nil)
}

// isUnknownField reports encoding/json's refusal of a field the target does
// not have (it has no typed error for it).
func isUnknownField(err error) bool { return strings.HasPrefix(err.Error(), "json: unknown field ") }

// maxJSONDepth bounds how deeply a request body may nest: the API's
// documents nest a few levels; the duplicate-key walk recurses per level.
const maxJSONDepth = 32

// refuseDuplicateKeys answers 400 for a body with a key twice in one
// object, naming it by its path ("buckets[3].minute"), or nested deeper
// than maxJSONDepth. jsontext (the JSON v2 tokenizer) refuses duplicate
// names itself and reads tokens without allocating: the walk with
// encoding/json's Token cost a metrics batch of 63 buckets 0.9 ms, most of
// its decoding.
func refuseDuplicateKeys(data []byte) error {
	dec := jsontext.NewDecoder(bytes.NewReader(data))
	// kinds are the containers open at each depth: a pointer's segment is
	// an index where its container is an array.
	var kinds []jsontext.Kind
	for {
		tok, err := dec.ReadToken()
		if err != nil {
			var syn *jsontext.SyntacticError
			if errors.As(err, &syn) && errors.Is(syn.Err, jsontext.ErrDuplicateName) {
				return badRequest("A key appears twice in one object.", map[string]string{pathOf(syn.JSONPointer, kinds): "appears more than once; send it once"})
			}
			return badRequest("The request body is not valid JSON.", nil)
		}
		switch k := tok.Kind(); k {
		case '{', '[':
			if len(kinds) >= maxJSONDepth {
				return badRequest(fmt.Sprintf("The request body nests deeper than %d levels.", maxJSONDepth), nil)
			}
			kinds = append(kinds, k)
		case '}', ']':
			kinds = kinds[:len(kinds)-1]
		}
		if dec.StackDepth() == 0 {
			return nil
		}
	}
}

// pathOf writes a JSON pointer as the API's error paths do:
// "/buckets/3/minute" is "buckets[3].minute".
func pathOf(p jsontext.Pointer, kinds []jsontext.Kind) string {
	var b strings.Builder
	i := 0
	for seg := range p.Tokens() {
		switch {
		case i < len(kinds) && kinds[i] == '[':
			b.WriteString("[" + seg + "]")
		case b.Len() > 0:
			b.WriteString("." + seg)
		default:
			b.WriteString(seg)
		}
		i++
	}
	return b.String()
}

// badRequest is a 400 in the API's error shape.
func badRequest(message string, fields map[string]string) error {
	e := apperr.Errorf(apperr.EBADREQUEST, "%s", message)
	e.Fields = fields
	return e
}

// jsonKind names a Go kind as JSON calls it, for messages in plain words.
func jsonKind(kind string) string {
	switch {
	case strings.HasPrefix(kind, "int"), strings.HasPrefix(kind, "uint"):
		return "a whole number"
	case strings.HasPrefix(kind, "float"):
		return "a number"
	case kind == "string":
		return "a string"
	case kind == "bool":
		return "true or false"
	case kind == "slice", kind == "array":
		return "a list"
	case kind == "map", kind == "struct":
		return "an object"
	}
	return "of another type"
}

// withoutEmbedded drops from a decode error's field path the Go names of
// embedded structs (encoding/json writes "RequestInput.promptTokens" where
// the body's key is "promptTokens").
func withoutEmbedded(path string, t reflect.Type) string {
	embedded := map[string]bool{}
	seen := map[reflect.Type]bool{}
	var walk func(t reflect.Type)
	walk = func(t reflect.Type) {
		for t.Kind() == reflect.Pointer || t.Kind() == reflect.Slice || t.Kind() == reflect.Map || t.Kind() == reflect.Array {
			t = t.Elem()
		}
		if t.Kind() != reflect.Struct || seen[t] {
			return
		}
		seen[t] = true
		for i := range t.NumField() {
			f := t.Field(i)
			if f.Anonymous {
				embedded[f.Name] = true
			}
			walk(f.Type)
		}
	}
	walk(t)
	if len(embedded) == 0 {
		return path
	}
	parts := strings.Split(path, ".")
	kept := parts[:0]
	for _, p := range parts {
		if !embedded[p] {
			kept = append(kept, p)
		}
	}
	return strings.Join(kept, ".")
}

func isJSONContentType(ct string) bool {
	mt, _, err := mime.ParseMediaType(ct)
	return err == nil && (mt == "application/json" || strings.HasSuffix(mt, "+json"))
}
