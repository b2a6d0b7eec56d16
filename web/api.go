package web

import (
	"context"
	"fmt"
	"net/http"
	"strconv"
	"strings"
	"time"

	"github.com/labstack/echo/v4"

	"github.com/airside/airside/internal/account"
	"github.com/airside/airside/internal/apitoken"
	"github.com/airside/airside/internal/apperr"
	"github.com/airside/airside/internal/routing"
	"github.com/airside/airside/internal/textcheck"
)

const ctxToken = "api_token"

// CatalogueResponse is the body of the catalogue endpoints.
type CatalogueResponse = routing.Catalogue

// apiAuth admits requests bearing a live API token with the scope: 401
// without a valid token, 403 with one lacking the scope.
func (s *Server) apiAuth(scope string) echo.MiddlewareFunc {
	return func(next echo.HandlerFunc) echo.HandlerFunc {
		return func(c echo.Context) error {
			// The scheme name is case-insensitive (RFC 9110 section 11.1).
			scheme, secret, _ := strings.Cut(strings.TrimSpace(c.Request().Header.Get("Authorization")), " ")
			secret = strings.TrimSpace(secret)
			if !strings.EqualFold(scheme, "Bearer") || secret == "" {
				c.Response().Header().Set("WWW-Authenticate", `Bearer realm="airside"`)
				return apperr.Errorf(apperr.EUNAUTHORIZED, "Send an API token: Authorization: Bearer <token>.")
			}
			tok, err := s.token(c.Request().Context(), secret)
			if apperr.Code(err) == apperr.ENOTFOUND {
				c.Response().Header().Set("WWW-Authenticate", `Bearer realm="airside", error="invalid_token"`)
				return apperr.Errorf(apperr.EUNAUTHORIZED, "The API token is unknown or revoked.")
			}
			if err != nil {
				return err
			}
			if !tok.Has(scope) {
				return apperr.Errorf(apperr.EFORBIDDEN, "This token lacks the %s scope.", scope)
			}
			c.Set(ctxToken, tok)
			if err := s.limitAPI(c, tok, scope); err != nil {
				return err
			}
			// How old the routing figures behind this answer are: a few
			// seconds normally, growing while the database is away and the
			// API answers from memory.
			c.Response().Header().Set("Airside-Health-Age", strconv.Itoa(int(s.Routing.Age().Seconds())))
			return next(c)
		}
	}
}

// etagMatches applies If-None-Match as RFC 9110 section 13.1.2 says: "*"
// matches any current representation, a list matches when any of its tags
// does, and the comparison is weak (W/"27" matches "27").
func etagMatches(header, etag string) bool {
	etag = strings.TrimPrefix(etag, "W/")
	header = strings.TrimSpace(header)
	if header == "" {
		return false
	}
	if header == "*" {
		return true
	}
	for _, tag := range strings.Split(header, ",") {
		if strings.TrimPrefix(strings.TrimSpace(tag), "W/") == etag {
			return true
		}
	}
	return false
}

// handleAPICatalogue serves the fares, statuses, capabilities and endpoints
// of the published listings, validated by the revision alone; with
// ?include=health, the one-document form with live health (validated by the
// revision and the figures, as version 1.1 served it).
func (s *Server) handleAPICatalogue(c echo.Context) error {
	withHealth := false
	switch c.QueryParam("include") {
	case "":
	case "health":
		withHealth = true
	default:
		return apperr.Invalid(map[string]string{"include": `"health" for the listings' live health in the same document, or nothing`})
	}
	return s.serveDocument(c, func(snap *routing.Snapshot) (string, func(string) (routing.Body, error)) {
		if withHealth {
			return snap.HealthETag(), snap.CatalogueWithHealth
		}
		return snap.ETag(), snap.Catalogue
	})
}

// handleAPIHealth serves the published listings' live health, with its own
// validator: a gateway revalidating the fares and the health apart
// downloads only what moved (health, every few seconds under traffic). With
// ?delta=true and the validator of recent figures in If-None-Match, only the
// listings whose figures moved since are sent.
func (s *Server) handleAPIHealth(c echo.Context) error {
	delta := false
	switch c.QueryParam("delta") {
	case "", "false":
	case "true":
		delta = true
	default:
		return apperr.Invalid(map[string]string{"delta": "true for only what moved since the figures in If-None-Match, or false"})
	}
	return s.serveDocument(c, func(snap *routing.Snapshot) (string, func(string) (routing.Body, error)) {
		whole := snap.HealthDocument
		if !delta {
			return snap.HealthETag(), whole
		}
		held := c.Request().Header.Get("If-None-Match")
		return snap.HealthETag(), func(model string) (routing.Body, error) {
			for _, tag := range strings.Split(held, ",") {
				tag = strings.TrimSpace(tag)
				if !strings.HasPrefix(tag, "W/") {
					tag = "W/" + tag // compared weakly, as If-None-Match is
				}
				if body, ok, err := snap.HealthDelta(model, tag); ok || err != nil {
					return body, err
				}
			}
			return whole(model)
		}
	})
}

// serveDocument answers a revalidating read of a document encoded once per
// snapshot: 304 when If-None-Match holds the current validator, else the
// bytes, gzipped when the client accepts it.
func (s *Server) serveDocument(c echo.Context, pick func(*routing.Snapshot) (etag string, body func(model string) (routing.Body, error))) error {
	model := c.QueryParam("model")
	if msg := textcheck.Problem(model, 200); msg != "" {
		return apperr.Invalid(map[string]string{"model": msg})
	}
	snap, err := s.Routing.Current(c.Request().Context())
	if err != nil {
		return err
	}
	if err := knownModel(snap, model); err != nil {
		return err
	}
	etag, document := pick(snap)
	h := c.Response().Header()
	h.Set("ETag", etag)
	h.Set("Cache-Control", "no-cache")
	h.Set("Vary", "Accept-Encoding")
	if etagMatches(c.Request().Header.Get("If-None-Match"), etag) {
		return c.NoContent(http.StatusNotModified)
	}
	body, err := document(model)
	if err != nil {
		return err
	}
	if acceptsGzip(c.Request().Header.Get("Accept-Encoding")) {
		h.Set("Content-Encoding", "gzip")
		return c.Blob(http.StatusOK, echo.MIMEApplicationJSON, body.Gzip)
	}
	return c.Blob(http.StatusOK, echo.MIMEApplicationJSON, body.Plain)
}

// knownModel refuses a model the catalogue has no listing of, with the
// same 404 as elect: an empty list would read as "no carrier serves it"
// when the name is simply wrong. No model (all of them) is always known.
// The changes feed is exempt: it must still report the removal of a
// model's last listing.
func knownModel(snap *routing.Snapshot, model string) error {
	if model == "" {
		return nil
	}
	if m, ok := snap.Market(model); !ok || len(m.Listings) == 0 {
		return apperr.Errorf(apperr.ENOTFOUND, "Unknown model %q.", model)
	}
	return nil
}

// acceptsGzip reads Accept-Encoding: gzip unless refused with q=0.
func acceptsGzip(header string) bool {
	for _, part := range strings.Split(header, ",") {
		name, params, _ := strings.Cut(strings.TrimSpace(part), ";")
		if strings.EqualFold(strings.TrimSpace(name), "gzip") {
			q := strings.ReplaceAll(strings.TrimSpace(params), " ", "")
			return q != "q=0" && q != "q=0.0" && q != "q=0.00" && q != "q=0.000"
		}
	}
	return false
}

// token finds the live API token for a secret: from the routing snapshot's
// memory; a token created on another process since the snapshot was built
// is found in the database. Its use is recorded in the background, at most
// once a minute.
func (s *Server) token(ctx context.Context, secret string) (*apitoken.Token, error) {
	if secret == "" || len(secret) > 200 {
		return nil, apperr.Errorf(apperr.ENOTFOUND, "Token not found.")
	}
	snap, err := s.Routing.Current(ctx)
	if err != nil {
		return nil, err
	}
	tok, ok := snap.Token(account.HashToken(secret))
	if !ok {
		return s.Tokens.Authenticate(ctx, secret)
	}
	s.touchedMu.Lock()
	last := s.touched[tok.ID]
	due := s.Now().Sub(last) >= apitoken.TouchEvery
	if due {
		s.touched[tok.ID] = s.Now()
	}
	s.touchedMu.Unlock()
	if due {
		go func() {
			if err := s.Tokens.Touch(context.Background(), tok.ID); err != nil {
				s.Log.Warn("record token use", "token", tok.ID, "err", err)
			}
		}()
	}
	return &tok, nil
}

// MaxWait bounds a long poll.
const MaxWait = 60 * time.Second

// parseWait reads a long poll's wait: seconds ("30") or with a unit ("30s",
// "500ms", "1m"), at most MaxWait.
func parseWait(w string) (time.Duration, error) {
	if w == "" {
		return 0, nil
	}
	if n, err := strconv.ParseFloat(w, 64); err == nil {
		w = strconv.FormatFloat(n, 'f', -1, 64) + "s"
	}
	d, err := time.ParseDuration(w)
	if err != nil || d < 0 || d > MaxWait || strings.ContainsAny(w, "hu") {
		return 0, apperr.Invalid(map[string]string{"wait": fmt.Sprintf("a duration up to %s: seconds like 30, or 30s, 500ms, 1m", MaxWait)})
	}
	return d, nil
}

// handleAPIChanges returns the listings changed after ?since=REV. With
// ?wait=30s it holds the request until a newer revision is published or the
// wait ends; a publication by any serve process wakes it (on PostgreSQL
// through LISTEN/NOTIFY). While the process drains, held and new polls
// answer at once with the current revision, so a shutdown never waits on
// them and a gateway sees no error, only an answer to poll again.
func (s *Server) handleAPIChanges(c echo.Context) error {
	since, err := strconv.ParseInt(c.QueryParam("since"), 10, 64)
	if err != nil || since < 0 {
		return apperr.Invalid(map[string]string{"since": "a catalogue revision: a whole number, 0 for everything"})
	}
	wait, err := parseWait(c.QueryParam("wait"))
	if err != nil {
		return err
	}
	model := c.QueryParam("model")
	if msg := textcheck.Problem(model, 200); msg != "" {
		return apperr.Invalid(map[string]string{"model": msg})
	}
	deadline := s.Now().Add(wait)
	s.telemetry.polls.Inc()
	defer s.telemetry.polls.Dec()
	for checked := false; ; checked = true {
		woken := s.Publications.Published() // before reading, so no publication slips between
		snap, err := s.Routing.Current(c.Request().Context())
		if err != nil {
			return err
		}
		body := snap.Changes(model, since)
		if !checked && since > body.Revision {
			// Ahead of this snapshot: either another process published
			// it a moment ago, or the client holds a revision that never
			// was (another deployment's, a restored database's). The
			// database says which.
			rev, err := s.HealthReads.CatalogueRevision(c.Request().Context())
			if err != nil {
				return err
			}
			if since > rev {
				return badRequest("The revision in since is ahead of the catalogue.", map[string]string{"since": fmt.Sprintf(
					"revision %d is ahead of the catalogue (now at %d): start again from 0, or from a revision this catalogue served", since, rev)})
			}
		}
		remaining := time.Until(deadline)
		if body.Revision > since || remaining <= 0 || s.Draining() {
			return c.JSON(http.StatusOK, body)
		}
		recheck := s.LongPollRecheck
		if recheck <= 0 {
			recheck = 5 * time.Second
		}
		select {
		case <-woken:
		case <-s.drain: // shutting down: answer with what we have
		case <-time.After(min(remaining, recheck)):
		case <-c.Request().Context().Done():
			return nil
		}
	}
}
