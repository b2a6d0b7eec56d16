package gateway

import (
	"crypto/subtle"
	"encoding/json"
	"fmt"
	"io"
	"log/slog"
	"math/rand/v2"
	"net/http"
	"slices"
	"strings"
	"sync"
	"time"

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
	// HTTP is the client carriers are called with.
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

	incumbents traffic.Incumbents
	sessions   traffic.Sessions
	caps       traffic.Caps
	rates      learnedRates
	randMu     sync.Mutex
}

func (g *Gateway) firstByteTimeout() time.Duration {
	if g.FirstByteTimeout <= 0 {
		return 60 * time.Second
	}
	return g.FirstByteTimeout
}

// Handler serves the OpenAI-compatible API: POST /v1/chat/completions and
// GET /v1/models, plus /healthz.
func (g *Gateway) Handler() http.Handler {
	mux := http.NewServeMux()
	mux.HandleFunc("POST /v1/chat/completions", g.handleChat)
	mux.HandleFunc("GET /v1/models", g.handleModels)
	mux.HandleFunc("GET /healthz", g.handleHealthz)
	return mux
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

func (g *Gateway) handleChat(w http.ResponseWriter, r *http.Request) {
	p := g.project(r)
	if p == nil {
		openAIError(w, http.StatusUnauthorized, "invalid_api_key", "Incorrect API key provided.")
		return
	}
	body, err := io.ReadAll(http.MaxBytesReader(w, r.Body, MaxRequestBytes))
	if err != nil {
		openAIError(w, http.StatusRequestEntityTooLarge, "request_too_large", fmt.Sprintf("The body is larger than %d bytes.", MaxRequestBytes))
		return
	}
	a, err := Analyze(body, r.Header)
	if err != nil {
		openAIError(w, http.StatusBadRequest, "invalid_request", err.Error())
		return
	}
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
	g.Recorder.Demanded(a.Model, a.Workload, RequestKind{Streaming: a.Stream, Requires: a.Requires}, a.PromptTokens, now)
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
	var last attempt
	for n, i := range pl.tries {
		route := m.Listings[i]
		kind := pl.kind
		if n > 0 {
			kind = Fallback
		}
		g.caps.Take(route.ID, p.Organisation, route.PerOrg, g.Now())
		last = g.forward(r.Context(), w, &a, body, route)
		g.Recorder.Attempt(p.Name, a.Model, route, kind, last.Outcome, g.Now())
		if last.Class == traffic.Served {
			if pl.session != nil {
				g.sessions.Pin(*pl.session, route.ID, g.Now())
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

// relayFailure gives the caller the last carrier's own answer (status and
// body), or says there was none.
func (g *Gateway) relayFailure(w http.ResponseWriter, f *upstreamFailure) {
	if f == nil {
		openAIError(w, http.StatusBadGateway, "no_response", "No carrier answered.")
		return
	}
	if f.retryAfter != "" {
		w.Header().Set("Retry-After", f.retryAfter)
	}
	if len(f.body) > 0 && json.Valid(f.body) {
		w.Header().Set("Content-Type", "application/json")
		w.WriteHeader(f.status)
		_, _ = w.Write(f.body)
		return
	}
	msg := f.message
	if msg == "" {
		msg = fmt.Sprintf("The carrier answered %d: %.300s", f.status, f.body)
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
	fmt.Fprintf(w, "ok: catalogue revision %d, %d models, %d open sessions\n", t.Revision, len(t.Models), g.sessions.Len())
}
