package web

import (
	"context"
	"fmt"
	"sort"
	"sync"
	"time"
)

// StuckAfter is how long one iteration of a background loop, or one write
// check, may run before /healthz calls the process stuck. Every database call
// has a deadline far below it, so only a wedged process (goroutines waiting on
// each other, as the statement-cache deadlock did) gets there, and restarting
// it is the cure: an outage makes calls fail, not hang, and /readyz says so.
const StuckAfter = 2 * time.Minute

// watchdog records when each watched piece of work started its current turn.
type watchdog struct {
	mu      sync.Mutex
	started map[string]time.Time
}

// begin marks name as working from now; the returned func marks it done.
func (w *watchdog) begin(name string) (done func()) {
	w.mu.Lock()
	if w.started == nil {
		w.started = map[string]time.Time{}
	}
	w.started[name] = time.Now()
	w.mu.Unlock()
	return func() {
		w.mu.Lock()
		delete(w.started, name)
		w.mu.Unlock()
	}
}

// stuck names the work that has been at its current turn longer than limit.
func (w *watchdog) stuck(limit time.Duration) []string {
	w.mu.Lock()
	defer w.mu.Unlock()
	var out []string
	for name, at := range w.started {
		if d := time.Since(at); d > limit {
			out = append(out, fmt.Sprintf("%s for %s", name, d.Round(time.Second)))
		}
	}
	sort.Strings(out)
	return out
}

// watchWriter proves every interval that the database takes a write, under
// the watchdog: a check that neither succeeds nor fails (a writer waiting on
// something that never comes) is what makes /healthz fail.
func (s *Server) watchWriter(ctx context.Context, every time.Duration) {
	repeat(ctx, "write check", &s.watch, every, true, func(turn context.Context) {
		if err := s.HealthReads.CheckWrite(turn); err != nil && ctx.Err() == nil {
			s.Log.Warn("write check", "err", err)
		}
	})
}
