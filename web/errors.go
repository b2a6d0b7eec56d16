package web

import (
	"encoding/json"
	"errors"
	"maps"
	"net/http"
	"slices"
	"strconv"
	"strings"

	"github.com/labstack/echo/v4"

	"github.com/airside/airside/internal/apperr"
	"github.com/airside/airside/templates"
)

// statusOf maps the domain's error codes to HTTP statuses, in one place.
func statusOf(err error) int {
	var he *echo.HTTPError
	if errors.As(err, &he) {
		return he.Code
	}
	switch apperr.Code(err) {
	case apperr.EBADREQUEST:
		return http.StatusBadRequest
	case apperr.EINVALID:
		return http.StatusUnprocessableEntity
	case apperr.ENOTFOUND:
		return http.StatusNotFound
	case apperr.ECONFLICT:
		return http.StatusConflict
	case apperr.EFORBIDDEN:
		return http.StatusForbidden
	case apperr.EUNAUTHORIZED:
		return http.StatusUnauthorized
	case apperr.ETHROTTLED:
		return http.StatusTooManyRequests
	case apperr.EUNAVAILABLE:
		return http.StatusServiceUnavailable
	}
	return http.StatusInternalServerError
}

var headings = map[int]string{
	http.StatusBadRequest:            "That request could not be read",
	http.StatusUnauthorized:          "Please log in",
	http.StatusForbidden:             "You do not have access to this",
	http.StatusNotFound:              "Page not found",
	http.StatusMethodNotAllowed:      "That action is not available here",
	http.StatusConflict:              "That cannot be done right now",
	http.StatusRequestEntityTooLarge: "That upload is too large",
	http.StatusUnprocessableEntity:   "Some fields need attention",
	http.StatusTooManyRequests:       "Slow down",
	http.StatusInternalServerError:   "Something went wrong",
	http.StatusServiceUnavailable:    "Airside is briefly unavailable",
}

// handleError renders every error: a JSON body under /api, else a page.
// Internal errors are logged with their detail and shown without it.
func (s *Server) handleError(err error, c echo.Context) {
	if c.Response().Committed {
		return
	}
	status := statusOf(err)
	message := apperr.Message(err)
	var he *echo.HTTPError
	if errors.As(err, &he) {
		if m, ok := he.Message.(string); ok {
			message = m
		}
		switch status {
		case http.StatusNotFound:
			message = "There is nothing at this address, or you do not have access to it."
		case http.StatusRequestEntityTooLarge:
			message = "The request body is larger than Airside accepts."
		}
	}
	if status == http.StatusInternalServerError && s.HealthReads.Ping(c.Request().Context()) != nil {
		// The database is away: say so, and that it is passing.
		status = http.StatusServiceUnavailable
		message = "Airside cannot reach its database right now. Nothing you submitted was half-saved; please try again in a moment."
	} else if status == http.StatusInternalServerError {
		// It answers, but may refuse writes (a full disk, a read-only
		// file): say that, not "something went wrong".
		if refusal := s.HealthReads.CheckWrite(c.Request().Context()); apperr.Code(refusal) == apperr.EUNAVAILABLE {
			s.requestLogger(c).Error("request failed", "method", c.Request().Method, "route", c.Path(), "err", err)
			err, status, message = refusal, http.StatusServiceUnavailable, apperr.Message(refusal)
		}
	}
	if status == http.StatusServiceUnavailable && apperr.RetryAfterOf(err) == 0 {
		c.Response().Header().Set("Retry-After", "5")
	}
	if secs := apperr.RetryAfterOf(err); (status == http.StatusTooManyRequests || status == http.StatusServiceUnavailable) && secs > 0 {
		c.Response().Header().Set("Retry-After", strconv.Itoa(secs))
	}
	if status >= 500 {
		s.requestLogger(c).Error("request failed", "method", c.Request().Method, "route", c.Path(), "status", status, "err", err)
	}
	if strings.HasPrefix(c.Request().URL.Path, "/api/") {
		writeProblem(c, status, message, apperr.FieldErrors(err))
		return
	}
	if fields := apperr.FieldErrors(err); len(fields) > 0 {
		// No form to show them beside: say each in the message.
		msgs := make([]string, 0, len(fields))
		for _, k := range slices.Sorted(maps.Keys(fields)) {
			msgs = append(msgs, fields[k])
		}
		message = strings.Join(msgs, " ")
	}
	heading := headings[status]
	if heading == "" {
		heading = http.StatusText(status)
	}
	view := templates.ErrorView{Page: s.page(c, heading, ""), Status: status, Heading: heading, Message: message}
	if rerr := render(c, status, templates.ErrorPage(view)); rerr != nil {
		s.requestLogger(c).Error("render error page", "err", rerr)
	}
}

// ProblemTypeBase prefixes the type of every API error: a stable URI per
// kind of error (RFC 9457), so a client branches on the type, not on the
// English of the detail. The kinds are listed in docs/openapi.yaml.
const ProblemTypeBase = "urn:airside:problem:"

// problemKinds names each error status's kind.
var problemKinds = map[int]string{
	http.StatusBadRequest:            "bad-request",
	http.StatusUnauthorized:          "unauthorized",
	http.StatusForbidden:             "forbidden",
	http.StatusNotFound:              "not-found",
	http.StatusMethodNotAllowed:      "method-not-allowed",
	http.StatusConflict:              "conflict",
	http.StatusRequestEntityTooLarge: "too-large",
	http.StatusUnsupportedMediaType:  "unsupported-media-type",
	http.StatusUnprocessableEntity:   "invalid",
	http.StatusTooManyRequests:       "throttled",
	http.StatusInternalServerError:   "internal",
	http.StatusServiceUnavailable:    "unavailable",
}

// writeProblem answers an API error as RFC 9457 problem details
// (application/problem+json): type, title, status, detail, and the field
// messages as the "fields" extension. The 1.x shape, {"error": {status,
// message, fields}}, rides along for one version so clients that parse it
// keep working while they move over.
func writeProblem(c echo.Context, status int, detail string, fields map[string]string) {
	kind := problemKinds[status]
	if kind == "" {
		kind = "http-" + strconv.Itoa(status)
	}
	title := http.StatusText(status)
	legacy := map[string]any{"status": status, "message": detail}
	body := map[string]any{"type": ProblemTypeBase + kind, "title": title, "status": status, "detail": detail, "error": legacy}
	if len(fields) > 0 {
		body["fields"] = fields
		legacy["fields"] = fields
	}
	b, err := json.Marshal(body)
	if err != nil {
		b = []byte(`{"type":"` + ProblemTypeBase + `internal","status":500}`)
	}
	_ = c.Blob(status, "application/problem+json", b)
}
