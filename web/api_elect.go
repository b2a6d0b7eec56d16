package web

import (
	"context"
	"errors"
	"net/http"
	"strconv"
	"strings"
	"sync"

	"github.com/labstack/echo/v4"
	"go.opentelemetry.io/otel/attribute"
	"go.opentelemetry.io/otel/trace"

	"github.com/airside/airside/internal/apperr"
	"github.com/airside/airside/internal/election"
	"github.com/airside/airside/internal/routing"
	"github.com/airside/airside/internal/textcheck"
	"github.com/airside/airside/internal/tracing"
)

// electBody is the elect request, decoded once: a value of the wrong type is
// a 400 naming its field; the contract's rules (422) are then applied to the
// decoded values by the election package.
type electBody struct {
	election.RequestInput
	Weights *election.WeightsInput         `json:"weights"`
	Usage   map[string]election.UsageInput `json:"usage"`
	// Policy and State are election.md sec. 8's: the project's policy, and
	// each listing's state under the asking gateway's limits (keyed as
	// usage is).
	Policy *string                        `json:"policy"`
	State  map[string]election.StateInput `json:"state"`
}

// handleAPIElect runs the election of the contract's request part on the
// published catalogue with current health, at the server's time unless the
// request names one. "usage" is keyed by listing id or "carrier/model".
func (s *Server) handleAPIElect(c echo.Context) error {
	call, err := s.electCall(c)
	if err != nil {
		return err
	}
	scratch := electScratchPool.Get().(*electScratch)
	defer electScratchPool.Put(scratch)
	full := call.fullBallot(scratch)
	_, span := s.electionSpan(c, "full", call.request.Model, len(full.Candidates))
	election.ElectInto(&full, &scratch.result)
	span.End()
	s.telemetry.election("full")
	out, err := scratch.result.AppendJSON(scratch.body[:0])
	if err != nil {
		return err
	}
	scratch.body = append(out, '\n')
	c.Response().Header().Set("X-Airside-Revision", strconv.FormatInt(call.snap.Revision, 10))
	return c.Blob(http.StatusOK, echo.MIMEApplicationJSON, scratch.body)
}

// electScratch is what one election needs, kept between requests: the
// ballot's candidates, the result and the encoded answer (c.Blob has
// written the answer when the handler returns).
type electScratch struct {
	candidates []election.Candidate
	result     election.Result
	body       []byte
}

var electScratchPool = sync.Pool{New: func() any { return new(electScratch) }}

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
	if call.autoWeights == nil && !call.extended {
		_, span := s.electionSpan(c, "winner_compiled", call.request.Model, 0)
		id, score, _ = call.snap.Winner(&call.request, call.usage)
		span.End()
		s.telemetry.election("winner_compiled")
	} else { // the compiled ballot holds the standard weights and no limits: elect in full
		scratch := electScratchPool.Get().(*electScratch)
		defer electScratchPool.Put(scratch)
		full := call.fullBallot(scratch)
		res := &scratch.result
		_, span := s.electionSpan(c, "winner_full", call.request.Model, len(full.Candidates))
		if call.extended {
			election.ElectInto(&full, res) // the share policy ranks to find its winner
		} else {
			election.ElectWinnerInto(&full, res)
		}
		span.End()
		s.telemetry.election("winner_full")
		if res.Winner >= 0 {
			id, score = res.WinnerID(), res.Candidates[res.Winner].Score
		}
	}
	out, err := election.AppendWinnerJSON(make([]byte, 0, 128), id, score)
	if err != nil {
		return err
	}
	c.Response().Header().Set("X-Airside-Revision", strconv.FormatInt(call.snap.Revision, 10))
	return c.Blob(http.StatusOK, echo.MIMEApplicationJSON, append(out, '\n'))
}

// electCall is an elect request read and checked against the snapshot it
// will be elected on.
type electCall struct {
	request     election.Request
	autoWeights *election.Weights // the request's weights; nil for the standard ones
	snap        *routing.Snapshot
	usage       map[string]election.Usage
	// policy, state and extended are sec. 8's: a call that uses them is
	// elected in full and answered with the order of tries.
	policy   election.Policy
	state    map[string]election.State
	extended bool
}

// fullBallot is the request's ballot on the snapshot's candidates (compiled
// once per snapshot, copied here into the scratch's storage, kept for the
// next election), with the request's weights and usage.
func (call *electCall) fullBallot(scratch *electScratch) election.Ballot {
	full, _ := call.snap.Ballot(call.request, scratch.candidates)
	scratch.candidates = full.Candidates
	full.AutoWeights = call.autoWeights
	full.Policy, full.Extended = call.policy, call.extended
	for i := range full.Candidates {
		c := &full.Candidates[i]
		c.Usage = call.usage[c.ID]
		c.State = call.state[c.ID]
		if call.policy == election.PolicyShare {
			c.ShareMetrics = election.ShareMetricsFromHealth(c.Metrics)
		}
	}
	return full
}

// electCall reads an elect request: its types (400), the contract's rules
// (422), the model (404 when unknown) and the usage keys; without at it
// elects at the server's time.
func (s *Server) electCall(c echo.Context) (*electCall, error) {
	var body electBody
	if err := decodeJSON(c, &body); err != nil {
		return nil, err
	}
	call := &electCall{}
	var err error
	if call.request, err = body.Request(); err == nil && body.Weights != nil {
		var w election.Weights
		w, err = body.Weights.Weights()
		call.autoWeights = &w
	}
	if err != nil {
		var ie *election.InputError
		if errors.As(err, &ie) {
			return nil, apperr.Invalid(map[string]string{strings.TrimPrefix(ie.Field, "request."): ie.Msg})
		}
		return nil, err
	}
	model := call.request.Model
	if model == "" {
		return nil, apperr.Invalid(map[string]string{"model": "required: the model's slug"})
	}
	if msg := textcheck.Problem(model, 200); msg != "" {
		return nil, apperr.Invalid(map[string]string{"model": msg})
	}
	if body.At == nil {
		call.request.At = s.Now().UTC() // live traffic: the prices in force now
	}
	snap, err := s.Routing.Current(c.Request().Context())
	if err != nil {
		return nil, err
	}
	if err := knownModel(snap, model); err != nil {
		return nil, err
	}
	if call.usage, err = usageByCandidate(snap, model, body); err != nil {
		return nil, err
	}
	if body.Policy != nil {
		p, ok := election.ParsePolicy(*body.Policy)
		if !ok {
			return nil, apperr.Invalid(map[string]string{"policy": "election or share"})
		}
		call.policy, call.extended = p, true
	}
	if call.state, err = stateByCandidate(snap, model, body); err != nil {
		return nil, err
	}
	call.extended = call.extended || len(call.state) > 0 || body.UsesMarket()
	call.snap = snap
	return call, nil
}

// usageByCandidate maps the request's usage, keyed by listing id or by
// "carrier/model", to the ballot's candidate ids; an unknown key or a
// negative count is refused, not ignored.
func usageByCandidate(snap *routing.Snapshot, model string, body electBody) (map[string]election.Usage, error) {
	return byCandidate(snap, model, "usage", body.Usage, election.UsageInput.Usage)
}

// stateByCandidate maps the request's limit states, keyed as usage is, to
// the ballot's candidate ids; an unknown key or breaker state is refused.
func stateByCandidate(snap *routing.Snapshot, model string, body electBody) (map[string]election.State, error) {
	return byCandidate(snap, model, "state", body.State, election.StateInput.State)
}

// byCandidate maps a request's per-listing member (name), keyed by listing
// id or by "carrier/model", to the ballot's candidate ids, each value read
// by read; every unknown key and bad value is named in one refusal.
func byCandidate[In, Out any](snap *routing.Snapshot, model, name string, in map[string]In, read func(In, string) (Out, error)) (map[string]Out, error) {
	if len(in) == 0 {
		return nil, nil
	}
	out := map[string]Out{}
	fields := map[string]string{}
	for key, v := range in {
		id, ok := snap.CandidateID(model, key)
		if !ok {
			fields[name+"."+key] = "not a listing of this model (key " + name + " by listing id or by carrier/model)"
			continue
		}
		got, err := read(v, name+"."+key)
		var bad *election.InputError
		if errors.As(err, &bad) {
			fields[bad.Field] = bad.Msg
		}
		out[id] = got
	}
	if len(fields) > 0 {
		return nil, apperr.Invalid(fields)
	}
	return out, nil
}

// electionSpanNames are the span names by path, built once (the elect
// path allocates as little as it can).
var electionSpanNames = map[string]string{"full": "election full", "winner_compiled": "election winner_compiled", "winner_full": "election winner_full"}

// electionSpan starts the span of one election under the request's, named
// by the path it takes (as the airside_elections_total series are).
func (s *Server) electionSpan(c echo.Context, path, model string, candidates int) (context.Context, trace.Span) {
	ctx, span := tracing.Tracer("election").Start(c.Request().Context(), electionSpanNames[path])
	if span.IsRecording() {
		span.SetAttributes(attribute.String("airside.election.path", path), attribute.String("airside.model", model))
		if candidates > 0 {
			span.SetAttributes(attribute.Int("airside.election.candidates", candidates))
		}
	}
	return ctx, span
}
