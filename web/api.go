package web

import (
	"bytes"
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"io"
	"mime"
	"net/http"
	"slices"
	"strconv"
	"strings"
	"time"

	"github.com/labstack/echo/v4"

	"github.com/airside/airside/internal/account"
	"github.com/airside/airside/internal/apitoken"
	"github.com/airside/airside/internal/apperr"
	"github.com/airside/airside/internal/catalogue"
	"github.com/airside/airside/internal/election"
	"github.com/airside/airside/internal/preview"
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
			return next(c)
		}
	}
}

// decodeJSON reads a JSON body into v: 415 for a body that is not JSON by
// its Content-Type, 413 for one over the limit (chunked too), 400 for one
// that is not JSON or has a value of the wrong type (naming the field).
func decodeJSON(c echo.Context, v any) error {
	if ct := c.Request().Header.Get("Content-Type"); !isJSONContentType(ct) {
		return echo.NewHTTPError(http.StatusUnsupportedMediaType, "Send the body as JSON with Content-Type: application/json.")
	}
	dec := json.NewDecoder(c.Request().Body)
	err := dec.Decode(v)
	if err == nil && dec.More() {
		err = errors.New("trailing data after the JSON value")
	}
	if err == nil {
		return nil
	}
	var tooLarge *http.MaxBytesError
	var he *echo.HTTPError
	var typeErr *json.UnmarshalTypeError
	var syntaxErr *json.SyntaxError
	var timeErr *time.ParseError
	switch {
	case errors.As(err, &tooLarge), errors.As(err, &he) && he.Code == http.StatusRequestEntityTooLarge:
		return echo.NewHTTPError(http.StatusRequestEntityTooLarge, "The request body is larger than Airside accepts (4 MB).")
	case errors.Is(err, io.EOF):
		return badRequest("The request body is empty; send JSON.", nil)
	case errors.As(err, &typeErr):
		field := typeErr.Field
		if field == "" {
			field = "body"
		}
		return badRequest("A value has the wrong type.", map[string]string{field: "must be " + jsonKind(typeErr.Type.Kind().String())})
	case errors.As(err, &timeErr):
		return badRequest("A date-time is not in RFC 3339 form, like 2026-12-01T10:15:00Z.", nil)
	case errors.As(err, &syntaxErr):
		return badRequest(fmt.Sprintf("The request body is not valid JSON (near byte %d).", syntaxErr.Offset), nil)
	}
	return badRequest("The request body is not valid JSON.", nil)
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

func isJSONContentType(ct string) bool {
	mt, _, err := mime.ParseMediaType(ct)
	return err == nil && (mt == "application/json" || strings.HasSuffix(mt, "+json"))
}

// etagMatches applies If-None-Match as RFC 9110 section 13.1.2 says: "*"
// matches any current representation, a list matches when any of its tags
// does, and the comparison is weak (W/"27" matches "27").
func etagMatches(header, etag string) bool {
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

// catalogueAt reads the published listings (of one model, or changed after a
// revision) with the revision they are current at.
func (s *Server) catalogueAt(c echo.Context, model string, changedAfter int64) (routing.Catalogue, error) {
	ctx := c.Request().Context()
	if msg := textcheck.Problem(model, 200); msg != "" {
		return routing.Catalogue{}, apperr.Invalid(map[string]string{"model": msg})
	}
	// The revision first: a listing published meanwhile is then included and
	// reported again next time, never skipped.
	rev, err := s.Reads.CatalogueRevision(ctx)
	if err != nil {
		return routing.Catalogue{}, err
	}
	m, err := preview.LoadMarket(ctx, s.Reads, catalogue.ListingFilter{ModelSlug: model, Published: true, ChangedAfter: changedAfter})
	if err != nil {
		return routing.Catalogue{}, err
	}
	listings, checks := m.Listings, m.Checks
	if changedAfter == 0 { // the full catalogue is what routes; changes also carry removals
		listings = slices.DeleteFunc(listings, func(l catalogue.Listing) bool { return l.Status == catalogue.StatusDelisted })
	}
	out := routing.Catalogue{Revision: rev, HealthAsOf: s.Now().UTC(), Listings: make([]routing.CatalogueListing, 0, len(listings))}
	for i := range listings {
		out.Listings = append(out.Listings, routing.ListingDocument(&listings[i], checks[listings[i].ID]))
	}
	return out, nil
}

func (s *Server) handleAPICatalogue(c echo.Context) error {
	model := c.QueryParam("model")
	if msg := textcheck.Problem(model, 200); msg != "" {
		return apperr.Invalid(map[string]string{"model": msg})
	}
	snap, err := s.Routing.Current(c.Request().Context())
	if err != nil {
		return err
	}
	etag := fmt.Sprintf(`"%d"`, snap.Revision)
	h := c.Response().Header()
	h.Set("ETag", etag)
	h.Set("Cache-Control", "no-cache")
	h.Set("Vary", "Accept-Encoding")
	if etagMatches(c.Request().Header.Get("If-None-Match"), etag) {
		return c.NoContent(http.StatusNotModified)
	}
	// Pre-encoded once per snapshot: a 200 is a copy of bytes, gzipped when
	// the gateway asks.
	body := snap.Catalogue(model)
	if acceptsGzip(c.Request().Header.Get("Accept-Encoding")) {
		h.Set("Content-Encoding", "gzip")
		return c.Blob(http.StatusOK, echo.MIMEApplicationJSON, body.Gzip)
	}
	return c.Blob(http.StatusOK, echo.MIMEApplicationJSON, body.Plain)
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
// through LISTEN/NOTIFY).
func (s *Server) handleAPIChanges(c echo.Context) error {
	since, err := strconv.ParseInt(c.QueryParam("since"), 10, 64)
	if err != nil || since < 0 {
		return apperr.Invalid(map[string]string{"since": "a catalogue revision: a whole number, 0 for everything"})
	}
	wait, err := parseWait(c.QueryParam("wait"))
	if err != nil {
		return err
	}
	deadline := s.Now().Add(wait)
	for {
		woken := s.Publications.Published() // before reading, so no publication slips between
		body, err := s.catalogueAt(c, c.QueryParam("model"), since)
		if err != nil {
			return err
		}
		remaining := time.Until(deadline)
		if body.Revision > since || remaining <= 0 {
			return c.JSON(http.StatusOK, body)
		}
		recheck := s.LongPollRecheck
		if recheck <= 0 {
			recheck = 5 * time.Second
		}
		select {
		case <-woken:
		case <-time.After(min(remaining, recheck)):
		case <-c.Request().Context().Done():
			return nil
		}
	}
}

// electBody is the elect request as typed: decoding into it first makes a
// value of the wrong type a 400 naming its field, before the contract's
// rules (422) are applied to the same bytes.
type electBody struct {
	Model            string         `json:"model"`
	PromptTokens     *int64         `json:"promptTokens"`
	Streaming        *bool          `json:"streaming"`
	Routing          *string        `json:"routing"`
	Workload         *string        `json:"workload"`
	SessionOpening   *bool          `json:"sessionOpening"`
	Requires         []string       `json:"requires"`
	At               *string        `json:"at"`
	CacheHitRate     *float64       `json:"cacheHitRate"`
	CacheOutputRatio *float64       `json:"cacheOutputRatio"`
	Observed         *observedRates `json:"observed"`
	Weights          *struct {
		Price, Uptime, Throughput, Latency, Cache *float64
	} `json:"weights"`
	Usage map[string]struct {
		RPM *int64 `json:"rpm"`
		RPD *int64 `json:"rpd"`
	} `json:"usage"`
}

type observedRates struct {
	CacheHitRate     *float64 `json:"cacheHitRate"`
	CacheOutputRatio *float64 `json:"cacheOutputRatio"`
}

// handleAPIElect runs the election of the contract's request part on the
// published catalogue with current health, at the server's time unless the
// request names one. "usage" is keyed by listing id or "carrier/model".
func (s *Server) handleAPIElect(c echo.Context) error {
	raw, err := io.ReadAll(c.Request().Body)
	var tooLarge *http.MaxBytesError
	var he *echo.HTTPError
	switch {
	case errors.As(err, &tooLarge), errors.As(err, &he) && he.Code == http.StatusRequestEntityTooLarge:
		return echo.NewHTTPError(http.StatusRequestEntityTooLarge, "The request body is larger than Airside accepts (4 MB).")
	case err != nil:
		return badRequest("The request body could not be read.", nil)
	}
	var body electBody
	c.Request().Body = io.NopCloser(bytes.NewReader(raw))
	if err := decodeJSON(c, &body); err != nil {
		return err
	}
	var fields map[string]json.RawMessage
	if err := json.Unmarshal(raw, &fields); err != nil {
		return badRequest("The request body must be a JSON object.", nil)
	}
	wrapped := map[string]json.RawMessage{"request": raw}
	if w, ok := fields["weights"]; ok {
		wrapped["weights"] = w
	}
	ballot, err := election.UnmarshalBallot(mustJSON(wrapped))
	if err != nil {
		var ie *election.InputError
		if errors.As(err, &ie) {
			return apperr.Invalid(map[string]string{strings.TrimPrefix(ie.Field, "request."): ie.Msg})
		}
		return err
	}
	model := ballot.Request.Model
	if model == "" {
		return apperr.Invalid(map[string]string{"model": "required: the model's slug"})
	}
	if msg := textcheck.Problem(model, 200); msg != "" {
		return apperr.Invalid(map[string]string{"model": msg})
	}
	if body.At == nil {
		ballot.Request.At = s.Now().UTC() // live traffic: the prices in force now
	}
	snap, err := s.Routing.Current(c.Request().Context())
	if err != nil {
		return err
	}
	if m, ok := snap.Market(model); !ok || len(m.Listings) == 0 {
		return apperr.Errorf(apperr.ENOTFOUND, "Unknown model %q.", model)
	}
	market, _ := snap.Market(model)
	rev := snap.Revision
	usage, err := usageByCandidate(market.Listings, body)
	if err != nil {
		return err
	}
	full, _ := snap.Ballot(ballot.Request) // compiled once per snapshot
	full.AutoWeights = ballot.AutoWeights
	for i := range full.Candidates {
		full.Candidates[i].Usage = usage[full.Candidates[i].ID]
	}
	var res election.Result
	election.ElectInto(&full, &res)
	out, err := res.AppendJSON(make([]byte, 0, 512+400*len(res.Candidates)))
	if err != nil {
		return err
	}
	c.Response().Header().Set("X-Airside-Revision", strconv.FormatInt(rev, 10))
	return c.Blob(http.StatusOK, echo.MIMEApplicationJSON, append(out, '\n'))
}

// usageByCandidate maps the request's usage, keyed by listing id or by
// "carrier/model", to the ballot's candidate ids; an unknown key or a
// negative count is refused, not ignored.
func usageByCandidate(listings []catalogue.Listing, body electBody) (map[string]election.Usage, error) {
	out := map[string]election.Usage{}
	if len(body.Usage) == 0 {
		return out, nil
	}
	byKey := map[string]string{}
	for i := range listings {
		id := preview.CandidateID(&listings[i])
		byKey[id] = id
		byKey[strconv.FormatInt(listings[i].ID, 10)] = id
	}
	fields := map[string]string{}
	for key, u := range body.Usage {
		id, ok := byKey[key]
		if !ok {
			fields["usage."+key] = "not a listing of this model (key usage by listing id or by carrier/model)"
			continue
		}
		var got election.Usage
		for _, v := range []struct {
			name string
			n    *int64
			dst  *int64
		}{{"rpm", u.RPM, &got.RPM}, {"rpd", u.RPD, &got.RPD}} {
			if v.n == nil {
				continue
			}
			if *v.n < 0 {
				fields["usage."+key+"."+v.name] = "must be 0 or more"
			}
			*v.dst = *v.n
		}
		out[id] = got
	}
	if len(fields) > 0 {
		return nil, apperr.Invalid(fields)
	}
	return out, nil
}

func mustJSON(v any) json.RawMessage {
	b, err := json.Marshal(v)
	if err != nil {
		panic(err)
	}
	return b
}

// bucketBody is one metric bucket as posted.
type bucketBody struct {
	Listing           string    `json:"listing"`
	ListingID         int64     `json:"listingId"`
	Minute            time.Time `json:"minute"`
	Requests          *int64    `json:"requests"`
	Errors            int64     `json:"errors"`
	ClientErrors      int64     `json:"clientErrors"`
	TTFTMsSum         int64     `json:"ttftMsSum"`
	OutputTokens      int64     `json:"outputTokens"`
	DurationMs        int64     `json:"durationMs"`
	InputTokens       int64     `json:"inputTokens"`
	CachedInputTokens int64     `json:"cachedInputTokens"`
}

// handleAPIMetrics stores a batch of per-minute buckets: all or nothing,
// idempotent per (listing, minute). Problems are named by bucket and field.
func (s *Server) handleAPIMetrics(c echo.Context) error {
	var body struct {
		Buckets []bucketBody `json:"buckets"`
	}
	if err := decodeJSON(c, &body); err != nil {
		return err
	}
	posted := make([]catalogue.PostedBucket, len(body.Buckets))
	missing := map[string]string{}
	for i, b := range body.Buckets {
		if b.Requests == nil { // 0 requests is a report; no requests field is a mistake
			missing[fmt.Sprintf("buckets[%d].requests", i)] = "required: the requests in this minute (0 for none)"
			continue
		}
		posted[i] = catalogue.PostedBucket{Listing: b.Listing, ListingID: b.ListingID, Bucket: catalogue.Bucket{
			Minute: b.Minute, Requests: *b.Requests, Errors: b.Errors, ClientErrors: b.ClientErrors, TTFTMsSum: b.TTFTMsSum,
			OutputTokens: b.OutputTokens, DurationMs: b.DurationMs, InputTokens: b.InputTokens, CachedInputTokens: b.CachedInputTokens}}
	}
	if len(missing) > 0 {
		return apperr.Invalid(missing)
	}
	n, err := s.Metrics.Record(c.Request().Context(), posted)
	if err != nil {
		return err
	}
	return c.JSON(http.StatusAccepted, map[string]any{"accepted": n})
}
