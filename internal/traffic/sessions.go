package traffic

import (
	"sync"
	"time"
)

// SessionIdle is how long a session is remembered after its last request.
const SessionIdle = time.Hour

// Sessions pins each session (the caller's x-session-id, within a project)
// to the listing that won its opening election, and to the region it was
// opened in. Safe for concurrent use.
type Sessions struct {
	mu    sync.Mutex
	pins  map[SessionKey]sessionPin
	swept time.Time
}

// SessionKey names a session: a project's own id for it, per model.
type SessionKey struct {
	Project, Model, ID string
}

// SessionPin is where a session is pinned: its listing, and the region it
// was opened in ("" when its project keeps no residency). A session's
// follow-ups stay in its region, wherever its listing moves (election.md
// sec. 7).
type SessionPin struct {
	Listing, Region string
}

type sessionPin struct {
	SessionPin
	seen time.Time
}

// Pinned returns where a session is pinned, if it is open.
func (s *Sessions) Pinned(key SessionKey, now time.Time) (SessionPin, bool) {
	s.mu.Lock()
	defer s.mu.Unlock()
	p, ok := s.pins[key]
	if !ok || now.Sub(p.seen) > SessionIdle {
		return SessionPin{}, false
	}
	return p.SessionPin, true
}

// Pin pins a session (at its opening, or when it moves after a failure)
// and marks it used now.
func (s *Sessions) Pin(key SessionKey, pin SessionPin, now time.Time) {
	s.mu.Lock()
	defer s.mu.Unlock()
	if s.pins == nil {
		s.pins = map[SessionKey]sessionPin{}
	}
	s.pins[key] = sessionPin{SessionPin: pin, seen: now}
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
