// Package ratelimit counts requests against quotas per window, the model of
// the IETF RateLimit header fields (draft-ietf-httpapi-ratelimit-headers): a
// policy allows Quota requests per Window, and each answer says how many are
// left and when the window resets. Windows are fixed and start with a
// subject's first request, so a client that reads the fields can pace itself
// exactly.
package ratelimit

import (
	"sync"
	"time"
)

// Policy is a quota of requests per window, by name.
type Policy struct {
	Name   string
	Quota  int
	Window time.Duration
}

// Decision is one request counted against a policy.
type Decision struct {
	Policy  Policy
	Allowed bool
	// Remaining is how many more requests the window allows.
	Remaining int
	// Reset is how long until the window ends and the quota is whole again.
	Reset time.Duration
}

// Limiter keeps a window per subject and policy. The zero value is not
// usable; New makes one.
type Limiter struct {
	now     func() time.Time
	mu      sync.Mutex
	windows map[key]*window
	swept   time.Time
}

type key struct{ subject, policy string }

type window struct {
	start time.Time
	end   time.Time
	used  int
}

// New is a limiter reading time from now (injected, so tests move it).
func New(now func() time.Time) *Limiter {
	return &Limiter{now: now, windows: map[key]*window{}}
}

// Take counts one request of subject against p. A refused request is not
// counted, so a client that waits for Reset finds its whole quota.
func (l *Limiter) Take(subject string, p Policy) Decision {
	now := l.now()
	l.mu.Lock()
	defer l.mu.Unlock()
	l.sweep(now, p.Window)
	k := key{subject, p.Name}
	w := l.windows[k]
	if w == nil || !now.Before(w.end) {
		w = &window{start: now, end: now.Add(p.Window)}
		l.windows[k] = w
	}
	d := Decision{Policy: p, Reset: w.end.Sub(now)}
	if w.used >= p.Quota {
		return d
	}
	w.used++
	d.Allowed, d.Remaining = true, p.Quota-w.used
	return d
}

// sweep drops windows that have ended, at most once per window length, so
// the map holds only subjects seen lately.
func (l *Limiter) sweep(now time.Time, every time.Duration) {
	if now.Sub(l.swept) < every {
		return
	}
	l.swept = now
	for k, w := range l.windows {
		if !now.Before(w.end) {
			delete(l.windows, k)
		}
	}
}

// Len is how many windows are held (for tests and the metrics page).
func (l *Limiter) Len() int {
	l.mu.Lock()
	defer l.mu.Unlock()
	return len(l.windows)
}
