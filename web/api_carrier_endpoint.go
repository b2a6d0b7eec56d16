package web

import (
	"bytes"
	"encoding/json"
	"fmt"
	"io"
	"net/http"
	"slices"
	"strconv"
	"strings"
	"time"

	"github.com/labstack/echo/v4"

	"github.com/airside/airside/internal/apitoken"
	"github.com/airside/airside/internal/apperr"
	"github.com/airside/airside/internal/preflight"
	"github.com/airside/airside/internal/workflow"
)

// endpointRequest is the endpoint API's body: the form's fields.
type endpointRequest struct {
	BaseURL       string `json:"baseUrl"`
	UpstreamModel string `json:"upstreamModel"`
	APIKey        string `json:"apiKey"`
	Justification string `json:"justification"`
}

// endpointFields names the form's fields as the API does.
var endpointFields = map[string]string{"base_url": "baseUrl", "upstream_model": "upstreamModel", "api_key": "apiKey", "justification": "justification"}

// decodeStrict reads the body as exactly one JSON object of v's fields:
// an unknown field, a second value or malformed JSON is a 422 saying
// what the body should be (shape).
func decodeStrict(c echo.Context, v any, shape string) ([]byte, error) {
	raw, err := io.ReadAll(c.Request().Body)
	if err != nil {
		return nil, apperr.Errorf(apperr.EINVALID, "The request body could not be read.")
	}
	dec := json.NewDecoder(bytes.NewReader(raw))
	dec.DisallowUnknownFields()
	if err := dec.Decode(v); err != nil || dec.More() {
		return nil, apperr.Errorf(apperr.EINVALID, "The body is one JSON object: %s.", shape)
	}
	return raw, nil
}

func listingIDParam(c echo.Context) (int64, error) {
	id, err := strconv.ParseInt(c.Param("listingId"), 10, 64)
	if err != nil || id < 1 {
		return 0, apperr.Invalid(map[string]string{"listingId": "a listing id is a positive whole number"})
	}
	return id, nil
}

// handleCarrierEndpoint files a new endpoint for one of the carrier's
// listings (base URL, upstream model, key; no key keeps the last one), as
// the listing page's form does: a filing for review, preflight probing
// it at once. The key is never answered back.
func (s *Server) handleCarrierEndpoint(c echo.Context) error {
	listingID, err := listingIDParam(c)
	if err != nil {
		return err
	}
	var req endpointRequest
	if _, err := decodeStrict(c, &req, `{"baseUrl": "https://...", "upstreamModel": "...", "apiKey": "...", "justification": "..."}`); err != nil {
		return err
	}
	ctx, p := c.Request().Context(), principal(c)
	tok, _ := c.Get(ctxToken).(*apitoken.Token)
	id, err := s.Endpoints.Register(ctx, p, listingID, workflow.EndpointForm{BaseURL: req.BaseURL, UpstreamModel: req.UpstreamModel,
		APIKey: req.APIKey, Justification: req.Justification, Via: tok.Name})
	if apperr.Code(err) == apperr.EINVALID {
		fields := map[string]string{}
		for k, msg := range apperr.FieldErrors(err) {
			if name, ok := endpointFields[k]; ok {
				k = name
			}
			fields[k] = msg
		}
		return apperr.Invalid(fields)
	}
	if err != nil {
		return err
	}
	return s.answerFiling(c, id, false)
}

// handleCarrierRunPreflight queues a preflight of the listing's latest
// endpoint, as the listing page's button does (throttled alike).
func (s *Server) handleCarrierRunPreflight(c echo.Context) error {
	listingID, err := listingIDParam(c)
	if err != nil {
		return err
	}
	runID, err := s.Endpoints.RunPreflight(c.Request().Context(), principal(c), listingID)
	if err != nil {
		return err
	}
	c.Response().Header().Set("Location", fmt.Sprintf("/api/v1/carrier/listings/%d/preflight", listingID))
	return c.JSON(http.StatusAccepted, struct {
		RunID int64 `json:"runId"`
	}{runID})
}

type preflightProbe struct {
	Probe     string    `json:"probe"`
	State     string    `json:"state"`
	Status    int       `json:"status,omitempty"`
	LatencyMs int64     `json:"latencyMs"`
	Error     string    `json:"error,omitempty"`
	At        time.Time `json:"at"`
}

type preflightRunBody struct {
	ID         int64            `json:"id"`
	State      string           `json:"state"`
	Reason     string           `json:"reason"`
	CreatedAt  time.Time        `json:"createdAt"`
	FinishedAt *time.Time       `json:"finishedAt,omitempty"`
	Probes     []preflightProbe `json:"probes"`
}

type preflightBody struct {
	Endpoint *struct {
		BaseURL       string `json:"baseUrl"`
		UpstreamModel string `json:"upstreamModel"`
		KeyHint       string `json:"keyHint"`
	} `json:"endpoint"`
	// Run is the newest run; Latest each probe's newest result of any
	// run, which is what earns a capability flag.
	Run    *preflightRunBody `json:"run"`
	Latest []preflightProbe  `json:"latest"`
}

func probesOf(results map[string]preflight.Result) []preflightProbe {
	out := []preflightProbe{}
	for name, r := range results {
		out = append(out, preflightProbe{Probe: name, State: string(r.State), Status: r.Status, LatencyMs: r.Latency.Milliseconds(), Error: r.Error, At: r.At.UTC()})
	}
	slices.SortFunc(out, func(a, b preflightProbe) int { return strings.Compare(a.Probe, b.Probe) })
	return out
}

// handleCarrierPreflight answers the listing's endpoint (never its key)
// and its preflight: the newest run's probes and each probe's latest
// result.
func (s *Server) handleCarrierPreflight(c echo.Context) error {
	listingID, err := listingIDParam(c)
	if err != nil {
		return err
	}
	ctx, p := c.Request().Context(), principal(c)
	l, err := s.ListingReads.FindListingHeader(ctx, listingID, workflow.Scope(p))
	if err != nil {
		return err
	}
	ep, run, latest, err := s.Endpoints.Preflight(ctx, l.ID)
	if err != nil {
		return err
	}
	body := preflightBody{Latest: probesOf(latest)}
	if ep != nil {
		body.Endpoint = &struct {
			BaseURL       string `json:"baseUrl"`
			UpstreamModel string `json:"upstreamModel"`
			KeyHint       string `json:"keyHint"`
		}{ep.BaseURL, ep.UpstreamModel, ep.KeyHint}
	}
	if run != nil {
		body.Run = &preflightRunBody{ID: run.ID, State: string(run.State), Reason: run.Reason, CreatedAt: run.CreatedAt.UTC(),
			FinishedAt: utc(run.FinishedAt), Probes: probesOf(run.Results)}
	}
	c.Response().Header().Set("Cache-Control", "no-store")
	return c.JSON(http.StatusOK, body)
}

func utc(t *time.Time) *time.Time {
	if t == nil {
		return nil
	}
	u := t.UTC()
	return &u
}
