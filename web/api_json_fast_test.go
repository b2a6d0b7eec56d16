package web

import (
	"bytes"
	"fmt"
	"net/http/httptest"
	"reflect"
	"strings"
	"testing"

	"github.com/labstack/echo/v4"

	"github.com/airside/airside/internal/apperr"
	"github.com/airside/airside/internal/catalogue"
)

// TestDecodeJSONFastAnswersAsDecodeJSON: the metrics endpoint's JSON v2
// decoding reads every body as decodeJSON does: the same values for a body
// both accept, the same answer for one either refuses (v2 is stricter in
// member names, duplicates, UTF-8 and trailing data; those bodies fall back
// to decodeJSON and its answer).
func TestDecodeJSONFastAnswersAsDecodeJSON(t *testing.T) {
	type batch struct {
		Buckets []catalogue.PostedBucket `json:"buckets"`
		Demand  []catalogue.Demand       `json:"demand"`
	}
	bucket := `{"listingId":3,"minute":"2026-12-02T10:00:00Z","source":"gw","requests":80,"errors":1,"ttftMsSum":31600,"routed":78}`
	demand := `{"model":"kimi","workload":"coding","minute":"2026-12-02T10:00:00Z","requests":9,"promptTokens":900,"largeRequests":null,"streaming":true,"requires":["tools"]}`
	for name, body := range map[string]string{
		"a batch":                     `{"buckets":[` + bucket + `],"demand":[` + demand + `]}`,
		"null figures":                `{"buckets":[{"listing":"a/b","minute":"2026-12-02T10:00:00Z","requests":null,"errors":null}]}`,
		"a key in other case":         `{"buckets":[{"listing":"a/b","minute":"2026-12-02T10:00:00Z","Requests":4}]}`,
		"a key twice":                 `{"buckets":[{"listing":"a/b","minute":"2026-12-02T10:00:00Z","requests":4,"requests":5}]}`,
		"an unknown field":            `{"buckets":[{"listing":"a/b","minute":"2026-12-02T10:00:00Z","request":4}]}`,
		"trailing data":               `{"buckets":[]} {}`,
		"a string for a number":       `{"buckets":[{"listing":"a/b","minute":"2026-12-02T10:00:00Z","requests":"4"}]}`,
		"a fraction":                  `{"buckets":[{"listing":"a/b","minute":"2026-12-02T10:00:00Z","requests":4.5}]}`,
		"a number past int64":         `{"buckets":[{"listing":"a/b","minute":"2026-12-02T10:00:00Z","requests":99999999999999999999}]}`,
		"a date not in RFC 3339":      `{"buckets":[{"listing":"a/b","minute":"2026-12-02 10:00","requests":4}]}`,
		"invalid UTF-8":               "{\"buckets\":[{\"listing\":\"a/\xff\",\"minute\":\"2026-12-02T10:00:00Z\",\"requests\":4}]}",
		"cut short":                   `{"buckets":[{"listing":"a/b"`,
		"empty":                       ``,
		"not an object":               `[1,2]`,
		"an object for a list":        `{"buckets":{}}`,
		"nested too deep":             `{"buckets":[],"x":` + strings.Repeat("[", 40) + strings.Repeat("]", 40) + `}`,
		"a time zone offset":          `{"buckets":[{"listing":"a/b","minute":"2026-12-02T11:00:00+01:00","requests":4}]}`,
		"escaped names and strings":   `{"bu\u0063kets":[{"listing":"a\/b","minute":"2026-12-02T10:00:00Z","requests":4}]}`,
		"what demand asked for":       `{"demand":[{"model":"m","workload":"chat","minute":"2026-12-02T10:00:00Z","requests":3,"asked":{"zdr":2,"regions:DE":3}}]}`,
		"requires null and streaming": `{"demand":[{"model":"m","workload":"chat","minute":"2026-12-02T10:00:00Z","requests":1,"requires":null,"streaming":null}]}`,
	} {
		t.Run(name, func(t *testing.T) {
			decode := func(fn func(echo.Context, any) error) (batch, error) {
				req := httptest.NewRequest("POST", "/api/v1/metrics", bytes.NewReader([]byte(body)))
				req.Header.Set("Content-Type", "application/json")
				var b batch
				err := fn(echo.New().NewContext(req, httptest.NewRecorder()), &b)
				return b, err
			}
			want, wantErr := decode(decodeJSON)
			got, gotErr := decode(decodeJSONFast)
			if !reflect.DeepEqual(errorText(wantErr), errorText(gotErr)) {
				t.Fatalf("decodeJSONFast answered %v, decodeJSON %v", gotErr, wantErr)
			}
			if wantErr == nil && !reflect.DeepEqual(got, want) {
				t.Errorf("decodeJSONFast read %+v, decodeJSON %+v", got, want)
			}
		})
	}
}

// errorText is an answer's message and the fields it names.
func errorText(err error) string {
	if err == nil {
		return ""
	}
	return fmt.Sprintf("%v %v", err, apperr.FieldErrors(err))
}
