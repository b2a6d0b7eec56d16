package gateway

import (
	crand "crypto/rand"
	"crypto/subtle"
	"encoding/hex"
	"encoding/json"
	"errors"
	"fmt"
	"io"
	"log/slog"
	"math/rand/v2"
	"net/http"
	"slices"
	"strconv"
	"strings"
	"sync"
	"time"

	"github.com/airside/airside/internal/fleet"
	"github.com/airside/airside/internal/traffic"
)

// MaxRequestBytes bounds a customer's request body.
const MaxRequestBytes = 16 << 20

// Gateway is the reference gateway's request path.
type Gateway struct {
	Config   *Config
	Follower *Follower
	Creds    *Credentials
	Recorder *Recorder
	// HTTP is the client carriers are called with; the relay uses its
	// Transport alone (no redirects followed, no client timeout: each
	// try's context bounds it). Nil: http.DefaultTransport.
	HTTP *http.Client
	Now  func() time.Time
	// Rand draws exploration; seed it for a reproducible run.
	Rand *rand.Rand
	Log  *slog.Logger
	// FirstByteTimeout bounds the wait for a carrier's first byte
	// (default 60 s).
	FirstByteTimeout time.Duration
	// Cache, when set, answers exact repeats of non-streamed requests.
	Cache *ResponseCache
	// StreamLimits bound what a carrier's stream can make the gateway hold
	// or wait for; zero fields take DefaultStreamLimits.
	StreamLimits StreamLimits
	// ClientTimeouts bound slow callers; zero fields take
	// DefaultClientTimeouts. HTTPServer applies them.
	ClientTimeouts ClientTimeouts

	// Fleet is the state a fleet of replicas shares in Redis (rate caps,
	// sessions, incumbents, the limits that opened); nil keeps it in this
	// process.
	Fleet *fleet.State
	alone fleet.State
	// limits are each listing's 429 backoff, latency backoff and breaker,
	// from this gateway's own tries (election.md sec. 8).
	limits traffic.Limits
	rates  learnedRates
	randMu sync.Mutex
	// labels name customers' organisations to carriers (made once from
	// Config).
	labelsOnce sync.Once
	labels     *OrgLabels
}

// orgLabels are the organisation labels of the gateway's configuration.
func (g *Gateway) orgLabels() *OrgLabels {
	g.labelsOnce.Do(func() {
		if g.Config != nil {
			g.labels = NewOrgLabels(g.Config)
		}
	})
	return g.labels
}

// ProjectLabel is the pseudonym under which the gateway names an API
// project to the portal (OrgLabels.Project): the reporter's, and the
// demand rows' project: key.
func (g *Gateway) ProjectLabel(name string) string { return g.orgLabels().Project(name) }

// DeclaredRates are the cache rates project name declares in the
// configuration (Project.CacheHitRate, CacheOutputRatio), which its
// elections take before anything learned: the reporter sends them with the
// project's minutes so the projection elects its requests on them too. Nil
// for one not declared or a project not configured.
func (g *Gateway) DeclaredRates(name string) (hitRate, outputRatio *float64) {
	if g.Config == nil {
		return nil, nil
	}
	for i := range g.Config.Projects {
		if p := &g.Config.Projects[i]; p.Name == name {
			return p.CacheHitRate, p.CacheOutputRatio
		}
	}
	return nil, nil
}

// ClientTimeouts bound how long a caller may take: to send its headers
// (10 s) and its body (30 s), and to leave a connection idle between
// requests (60 s). Without them 200 idle unauthenticated connections, or a
// body sent a byte a second, stayed open for as long as the caller liked.
type ClientTimeouts struct {
	Header, Body, Idle time.Duration
}

// DefaultClientTimeouts are the portal's, with a shorter idle time: a
// gateway has many more callers than the portal has people.
var DefaultClientTimeouts = ClientTimeouts{Header: 10 * time.Second, Body: 30 * time.Second, Idle: 60 * time.Second}

func (g *Gateway) clientTimeouts() ClientTimeouts {
	t, d := g.ClientTimeouts, DefaultClientTimeouts
	return ClientTimeouts{Header: positiveOr(t.Header, d.Header), Body: positiveOr(t.Body, d.Body), Idle: positiveOr(t.Idle, d.Idle)}
}

// answerGrace is how long after a carrier's own limits (the first token,
// a stream's deadline) the gateway still waits to finish writing the answer
// to a slow reader.
const answerGrace = 30 * time.Second

// HTTPServer is the server the gateway listens with: header, body and idle
// timeouts for callers, and a write deadline per request (set in
// handleChat: a stream may write for StreamLimits.Deadline, any other
// answer for the first-token wait and answerGrace). The body's read
// deadline is set per request and lifted once the body is in, so it bounds
// the body and nothing after it.
func (g *Gateway) HTTPServer(h http.Handler) *http.Server {
	t := g.clientTimeouts()
	return &http.Server{Handler: h, ReadHeaderTimeout: t.Header, IdleTimeout: t.Idle, WriteTimeout: answerGrace}
}

func (g *Gateway) firstByteTimeout() time.Duration {
	return positiveOr(g.FirstByteTimeout, 60*time.Second)
}

// Handler serves the OpenAI-compatible API: POST /v1/chat/completions and
// GET /v1/models, plus /healthz.
func (g *Gateway) Handler() http.Handler {
	mux := http.NewServeMux()
	mux.HandleFunc("POST /v1/chat/completions", g.handleChat)
	mux.HandleFunc("GET /v1/models", g.handleModels)
	mux.HandleFunc("GET /v1/models/{id}", g.handleModel)
	mux.HandleFunc("GET /healthz", g.handleHealthz)
	return withRequestID(mux)
}

// RequestIDHeader names the id of a request on its answer: the caller's own
// when it sent a usable one, else one the gateway made. OpenAI's SDKs read
// it as the answer's request_id.
const RequestIDHeader = "X-Request-Id"

// withRequestID gives every answer an x-request-id.
func withRequestID(next http.Handler) http.Handler {
	return http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		id := r.Header.Get(RequestIDHeader)
		if !usableRequestID(id) {
			var b [12]byte
			_, _ = crand.Read(b[:])
			id = "req_" + hex.EncodeToString(b[:])
		}
		w.Header().Set(RequestIDHeader, id)
		next.ServeHTTP(w, r)
	})
}

// usableRequestID is a caller's id the gateway echoes: short, and only
// letters, digits and - _ . : (nothing a log or a header could be split on).
func usableRequestID(id string) bool {
	if id == "" || len(id) > 128 {
		return false
	}
	for _, c := range id {
		if !(c >= 'a' && c <= 'z' || c >= 'A' && c <= 'Z' || c >= '0' && c <= '9' || strings.ContainsRune("-_.:", c)) {
			return false
		}
	}
	return true
}

// handleModel answers one model as OpenAI does, or OpenAI's 404.
func (g *Gateway) handleModel(w http.ResponseWriter, r *http.Request) {
	if g.project(r) == nil {
		openAIError(w, http.StatusUnauthorized, "invalid_api_key", "Incorrect API key provided.")
		return
	}
	id := r.PathValue("id")
	if t := g.Follower.Current(); t != nil && t.Models[id] != nil {
		w.Header().Set("Content-Type", "application/json")
		_ = json.NewEncoder(w).Encode(map[string]any{"id": id, "object": "model", "created": 0, "owned_by": "airside"})
		return
	}
	openAIError(w, http.StatusNotFound, "model_not_found", fmt.Sprintf("The model %q does not exist or has no listing in service.", id))
}

// project is the caller's project by its API key, compared in constant time.
func (g *Gateway) project(r *http.Request) *Project {
	key, ok := strings.CutPrefix(r.Header.Get("Authorization"), "Bearer ")
	if !ok || key == "" {
		return nil
	}
	for i := range g.Config.Projects {
		p := &g.Config.Projects[i]
		if subtle.ConstantTimeCompare([]byte(p.APIKey), []byte(key)) == 1 {
			return p
		}
	}
	return nil
}

// openAIError writes the error shape OpenAI clients read.
func openAIError(w http.ResponseWriter, status int, code, message string) {
	w.Header().Set("Content-Type", "application/json")
	w.WriteHeader(status)
	_ = json.NewEncoder(w).Encode(map[string]any{"error": map[string]any{"message": message, "type": errorType(status), "code": code, "param": nil}})
}

func errorType(status int) string {
	switch {
	case status == http.StatusUnauthorized:
		return "authentication_error"
	case status == http.StatusTooManyRequests:
		return "rate_limit_error"
	case status >= 500:
		return "upstream_error"
	}
	return "invalid_request_error"
}

// statusWriter notes the status an answer went out with (for the metrics),
// and passes flushes and the ResponseController through.
type statusWriter struct {
	http.ResponseWriter
	status int
}

func (s *statusWriter) WriteHeader(code int) {
	if s.status == 0 {
		s.status = code
	}
	s.ResponseWriter.WriteHeader(code)
}

func (s *statusWriter) Write(b []byte) (int, error) {
	if s.status == 0 {
		s.status = http.StatusOK
	}
	return s.ResponseWriter.Write(b)
}

func (s *statusWriter) Flush() {
	if f, ok := s.ResponseWriter.(http.Flusher); ok {
		f.Flush()
	}
}

func (s *statusWriter) Unwrap() http.ResponseWriter { return s.ResponseWriter }

func (g *Gateway) handleChat(rw http.ResponseWriter, r *http.Request) {
	arrived := time.Now()
	tel := g.metrics()
	w := &statusWriter{ResponseWriter: rw}
	defer func() { tel.answered(w.status) }()
	p := g.project(r)
	if p == nil {
		openAIError(w, http.StatusUnauthorized, "invalid_api_key", "Incorrect API key provided.")
		return
	}
	rc := http.NewResponseController(w)
	timeouts := g.clientTimeouts()
	_ = rc.SetReadDeadline(time.Now().Add(timeouts.Body))
	body, err := io.ReadAll(http.MaxBytesReader(w, r.Body, MaxRequestBytes))
	if err != nil {
		var tooLarge *http.MaxBytesError
		if errors.As(err, &tooLarge) {
			openAIError(w, http.StatusRequestEntityTooLarge, "request_too_large", fmt.Sprintf("The body is larger than %d bytes.", MaxRequestBytes))
			return
		}
		w.Header().Set("Connection", "close")
		openAIError(w, http.StatusRequestTimeout, "request_timeout", fmt.Sprintf("The body did not arrive within %s.", timeouts.Body))
		return
	}
	// The body is in: lift its deadline (see HTTPServer) and give the
	// answer the time the carrier may take.
	_ = rc.SetReadDeadline(time.Time{})
	a, err := Analyze(body, r.Header)
	if err != nil {
		openAIError(w, http.StatusBadRequest, "invalid_request", err.Error())
		return
	}
	answerBy := g.firstByteTimeout() + answerGrace
	if a.Stream {
		answerBy = g.StreamLimits.withDefaults().Deadline + answerGrace
	}
	// A fallback can try up to three listings, each with its own wait.
	_ = rc.SetWriteDeadline(time.Now().Add(3 * answerBy))
	table := g.Follower.Current()
	if table == nil {
		w.Header().Set("Retry-After", "1")
		openAIError(w, http.StatusServiceUnavailable, "catalogue_unavailable", "The gateway has not read the routing catalogue yet.")
		return
	}
	m := table.Models[a.Model]
	if m == nil {
		openAIError(w, http.StatusNotFound, "model_not_found", fmt.Sprintf("The model %q has no listing in service.", a.Model))
		return
	}
	now := g.Now()
	g.Recorder.Demanded(a.Model, a.Workload, RequestKind{Streaming: a.Stream, Requires: a.Requires}, a.PromptTokens, askedBy(p, a, g.ProjectLabel(p.Name)), now)
	if !a.Stream {
		if answer, route, ok := g.Cache.get(p.Name, body, now); ok {
			g.Recorder.CacheHit(p.Name, a.Model, route, now)
			w.Header().Set("Content-Type", "application/json")
			w.Header().Set(ListingHeader, route.ID)
			w.Header().Set(CacheHeader, "hit")
			_, _ = w.Write(answer)
			return
		}
	}
	pl, err := g.plan(p, &a, m, now)
	if err != nil {
		if ref, ok := err.(*refusal); ok {
			openAIError(w, ref.status, ref.code, ref.message)
			return
		}
		openAIError(w, http.StatusInternalServerError, "internal", "The gateway failed to route this request.")
		return
	}
	defer pl.release()
	var last attempt
	tel.routing.Observe(time.Since(arrived).Seconds())
	tries := 0
	defer func() {
		if tries > 0 {
			tel.tries.Observe(float64(tries))
		}
	}()
	for n, i := range pl.tries {
		tries++
		route := m.Listings[i]
		kind := pl.kind
		if n > 0 {
			kind = Fallback
		}
		// The cap's place is taken before the try, atomically: replicas
		// racing for a cap's last place cannot both have it (after a
		// fall-open the caps are over already and nothing is refused).
		var maxRPM, maxRPD *int64
		if !pl.result.FellOpen {
			maxRPM, maxRPD = m.Candidates[i].Fare.MaxRPM, m.Candidates[i].Fare.MaxRPD
		}
		if !g.shared().Reserve(route.ID, p.Organisation, route.PerOrg, maxRPM, maxRPD, g.Now()) {
			g.Recorder.Capped(route, g.Now())
			continue
		}
		last = g.forward(r.Context(), w, &a, body, route)
		g.Recorder.Attempt(p.Name, a.Model, route, kind, last.Outcome, g.Now())
		g.Recorder.UsedBy(g.orgLabels().Label(p.Organisation, route), route, last.Outcome, g.Now())
		g.applyLimits(a.Model, route, last)
		if last.Class == traffic.Served {
			if pl.session != nil {
				g.shared().Pin(*pl.session, pl.sessionPin(i), g.Now())
			}
			if last.answer != nil {
				g.Cache.put(p.Name, body, last.answer, route, g.Now())
			}
			return
		}
		if last.written || !last.Class.FallsBack() || r.Context().Err() != nil {
			break
		}
	}
	if last.written {
		return
	}
	g.relayFailure(w, last.failure)
}

// relayFailure gives the caller the last carrier's refusal (its status,
// and its error as carrierError relays it), or says there was none.
func (g *Gateway) relayFailure(w http.ResponseWriter, f *upstreamFailure) {
	if f == nil {
		openAIError(w, http.StatusBadGateway, "no_response", "No carrier answered.")
		return
	}
	if secs, err := strconv.Atoi(f.retryAfter); err == nil && secs >= 0 {
		w.Header().Set("Retry-After", strconv.Itoa(secs))
	} else if at, err := http.ParseTime(f.retryAfter); err == nil {
		w.Header().Set("Retry-After", at.UTC().Format(http.TimeFormat))
	}
	if len(f.body) > 0 {
		w.Header().Set("Content-Type", "application/json")
		w.WriteHeader(f.status)
		_, _ = w.Write(f.body)
		return
	}
	msg := f.message
	if msg == "" {
		msg = fmt.Sprintf("The carrier answered %d.", f.status)
	}
	openAIError(w, f.status, "upstream_error", msg)
}

func (g *Gateway) handleModels(w http.ResponseWriter, r *http.Request) {
	if g.project(r) == nil {
		openAIError(w, http.StatusUnauthorized, "invalid_api_key", "Incorrect API key provided.")
		return
	}
	data := []map[string]any{}
	if t := g.Follower.Current(); t != nil {
		models := make([]string, 0, len(t.Models))
		for m := range t.Models {
			models = append(models, m)
		}
		slices.Sort(models)
		for _, m := range models {
			data = append(data, map[string]any{"id": m, "object": "model", "created": 0, "owned_by": "airside"})
		}
	}
	w.Header().Set("Content-Type", "application/json")
	_ = json.NewEncoder(w).Encode(map[string]any{"object": "list", "data": data})
}

// handleHealthz is 200 once a catalogue is in, with its revision.
func (g *Gateway) handleHealthz(w http.ResponseWriter, _ *http.Request) {
	t := g.Follower.Current()
	if t == nil {
		http.Error(w, "no catalogue read yet", http.StatusServiceUnavailable)
		return
	}
	// Still ok (200) with Redis away: the replica routes on its own state,
	// and says so here and in airside_gateway_fleet_redis_down.
	sessions := fmt.Sprintf("%d open sessions", g.alone.Sessions())
	switch {
	case g.Fleet != nil && g.Fleet.Down():
		sessions = "warning: Redis unreachable, routing on this replica's own state until it is back"
	case g.Fleet != nil:
		sessions = "sessions shared with the fleet"
	}
	from := ""
	if g.Follower.Restored() {
		from = " (from the saved snapshot: the portal has not answered since this process started)"
	}
	fmt.Fprintf(w, "ok: catalogue revision %d%s, %d models, %s\n", t.Revision, from, len(t.Models), sessions)
	if missing := g.Creds.missingOrNone(); len(missing) > 0 {
		fmt.Fprintf(w, "warning: %d listings without credentials: %s (not routed until the portal gives them)\n", len(missing), strings.Join(missing, ", "))
	}
}

// applyLimits takes a try into its listing's limits and reports what they
// did: counted in the minute's metrics and logged.
func (g *Gateway) applyLimits(model string, route Route, last attempt) {
	now := g.Now()
	try := traffic.Try{Listing: route.ID, Model: model, Class: last.Class, TTFT: last.TTFT, At: now,
		ToolCalls: last.ToolCalls, MalformedToolCalls: last.BadToolCalls}
	if last.failure != nil {
		try.RetryAfter = retryAfterOf(last.failure.retryAfter, now)
	}
	for _, e := range g.limits.Record(try) {
		g.Recorder.Limited(route, e)
		g.shared().Limited(e)
		attrs := []any{"listing", e.Listing, "limit", string(e.Limit), "opened", e.Opened, "why", e.Detail}
		if e.Opened {
			attrs = append(attrs, "until", e.Until)
		}
		g.Log.Info("limit", attrs...)
	}
}

// retryAfterOf reads a Retry-After header (seconds or an HTTP date) as a
// wait from now; 0 when there is none or it cannot be read.
func retryAfterOf(v string, now time.Time) time.Duration {
	if v == "" {
		return 0
	}
	if secs, err := strconv.Atoi(v); err == nil && secs > 0 {
		return time.Duration(secs) * time.Second
	}
	if at, err := http.ParseTime(v); err == nil && at.After(now) {
		return at.Sub(now)
	}
	return 0
}

// shared is the fleet's state, or this process's own.
func (g *Gateway) shared() *fleet.State {
	if g.Fleet != nil {
		return g.Fleet
	}
	return &g.alone
}
