package traffic

import (
	"sync"
	"time"
)

// SessionIdle is how long a session is remembered after its last request.
const SessionIdle = time.Hour

// Sessions pins each session (the caller's x-session-id, within a project)
// to the listing that won its opening election. Safe for concurrent use.
type Sessions struct {
	mu    sync.Mutex
	pins  map[SessionKey]sessionPin
	swept time.Time
}

// SessionKey names a session: a project's own id for it, per model.
type SessionKey struct {
	Project, Model, ID string
}

type sessionPin struct {
	candidate string
	seen      time.Time
}

// Pinned returns the candidate a session is pinned to, if it is open.
func (s *Sessions) Pinned(key SessionKey, now time.Time) (string, bool) {
	s.mu.Lock()
	defer s.mu.Unlock()
	p, ok := s.pins[key]
	if !ok || now.Sub(p.seen) > SessionIdle {
		return "", false
	}
	return p.candidate, true
}

// Pin pins a session to a candidate (at its opening, or when it moves after
// a failure) and marks it used now.
func (s *Sessions) Pin(key SessionKey, candidate string, now time.Time) {
	s.mu.Lock()
	defer s.mu.Unlock()
	if s.pins == nil {
		s.pins = map[SessionKey]sessionPin{}
	}
	s.pins[key] = sessionPin{candidate: candidate, seen: now}
	if now.Sub(s.swept) > SessionIdle/4 { // forget idle sessions now and then
		s.swept = now
		for k, p := range s.pins {
			if now.Sub(p.seen) > SessionIdle {
				delete(s.pins, k)
			}
		}
	}
}

// Len is how many sessions are remembered (for the gateway's status).
func (s *Sessions) Len() int {
	s.mu.Lock()
	defer s.mu.Unlock()
	return len(s.pins)
}
