package web

import (
	"bytes"
	"encoding/json"
	"errors"
	"io"
	"net/http"
	"strconv"
	"strings"

	"github.com/airside/airside/internal/apperr"
	"github.com/airside/airside/internal/catalogue"
	"github.com/airside/airside/internal/election"
	"github.com/airside/airside/internal/preview"
	"github.com/airside/airside/internal/routing"
	"github.com/airside/airside/internal/textcheck"
	"github.com/labstack/echo/v4"
)

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
	call, err := s.electCall(c)
	if err != nil {
		return err
	}
	full := call.fullBallot()
	var res election.Result
	election.ElectInto(&full, &res)
	out, err := res.AppendJSON(make([]byte, 0, 512+400*len(res.Candidates)))
	if err != nil {
		return err
	}
	c.Response().Header().Set("X-Airside-Revision", strconv.FormatInt(call.snap.Revision, 10))
	return c.Blob(http.StatusOK, echo.MIMEApplicationJSON, append(out, '\n'))
}

// handleAPIElectWinner answers only who wins, from the snapshot's compiled
// ballot (the gateway's question on every request); the same request as
// elect, the same winner and score.
func (s *Server) handleAPIElectWinner(c echo.Context) error {
	call, err := s.electCall(c)
	if err != nil {
		return err
	}
	var id string
	var score float64
	if call.ballot.AutoWeights == nil {
		id, score, _ = call.snap.Winner(&call.ballot.Request, call.usage)
	} else { // the compiled ballot holds the standard weights: elect in full
		full := call.fullBallot()
		var res election.Result
		election.ElectWinnerInto(&full, &res)
		if res.Winner >= 0 {
			id, score = res.WinnerID(), res.Candidates[res.Winner].Score
		}
	}
	out := make([]byte, 0, 128)
	if id == "" {
		out = append(out, `{"winner":null,"score":null}`...)
	} else {
		out = append(out, `{"winner":`...)
		out = strconv.AppendQuote(out, id)
		out = append(out, `,"score":`...)
		out = strconv.AppendFloat(out, score, 'g', -1, 64)
		out = append(out, '}')
	}
	c.Response().Header().Set("X-Airside-Revision", strconv.FormatInt(call.snap.Revision, 10))
	return c.Blob(http.StatusOK, echo.MIMEApplicationJSON, append(out, '\n'))
}

// electCall is an elect request read and checked against the snapshot it
// will be elected on.
type electCall struct {
	ballot *election.Ballot // the request and the auto weights; no candidates
	snap   *routing.Snapshot
	usage  map[string]election.Usage
}

// fullBallot is the request's ballot on the snapshot's candidates (compiled
// once per snapshot, copied here), with the request's weights and usage.
func (call *electCall) fullBallot() election.Ballot {
	full, _ := call.snap.Ballot(call.ballot.Request)
	full.AutoWeights = call.ballot.AutoWeights
	for i := range full.Candidates {
		full.Candidates[i].Usage = call.usage[full.Candidates[i].ID]
	}
	return full
}

// electCall reads an elect request: its types (400), the contract's rules
// (422), the model (404 when unknown) and the usage keys; without at it
// elects at the server's time.
func (s *Server) electCall(c echo.Context) (*electCall, error) {
	raw, err := io.ReadAll(c.Request().Body)
	var tooLarge *http.MaxBytesError
	var he *echo.HTTPError
	switch {
	case errors.As(err, &tooLarge), errors.As(err, &he) && he.Code == http.StatusRequestEntityTooLarge:
		return nil, echo.NewHTTPError(http.StatusRequestEntityTooLarge, "The request body is larger than Airside accepts (4 MB).")
	case err != nil:
		return nil, badRequest("The request body could not be read.", nil)
	}
	var body electBody
	c.Request().Body = io.NopCloser(bytes.NewReader(raw))
	if err := decodeJSON(c, &body); err != nil {
		return nil, err
	}
	var fields map[string]json.RawMessage
	if err := json.Unmarshal(raw, &fields); err != nil {
		return nil, badRequest("The request body must be a JSON object.", nil)
	}
	wrapped := map[string]json.RawMessage{"request": raw}
	if w, ok := fields["weights"]; ok {
		wrapped["weights"] = w
	}
	ballot, err := election.UnmarshalBallot(mustJSON(wrapped))
	if err != nil {
		var ie *election.InputError
		if errors.As(err, &ie) {
			return nil, apperr.Invalid(map[string]string{strings.TrimPrefix(ie.Field, "request."): ie.Msg})
		}
		return nil, err
	}
	model := ballot.Request.Model
	if model == "" {
		return nil, apperr.Invalid(map[string]string{"model": "required: the model's slug"})
	}
	if msg := textcheck.Problem(model, 200); msg != "" {
		return nil, apperr.Invalid(map[string]string{"model": msg})
	}
	if body.At == nil {
		ballot.Request.At = s.Now().UTC() // live traffic: the prices in force now
	}
	snap, err := s.Routing.Current(c.Request().Context())
	if err != nil {
		return nil, err
	}
	market, ok := snap.Market(model)
	if !ok || len(market.Listings) == 0 {
		return nil, apperr.Errorf(apperr.ENOTFOUND, "Unknown model %q.", model)
	}
	usage, err := usageByCandidate(market.Listings, body)
	if err != nil {
		return nil, err
	}
	return &electCall{ballot: ballot, snap: snap, usage: usage}, nil
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
