package projection

import (
	"context"
	"log/slog"
	"strings"
	"sync"
	"time"
)

// refreshFor bounds a projection worked out in the background: one that
// takes longer is given up (and the next view projects inline).
const refreshFor = time.Minute

// refreshGap is how long a projection taken stale is kept before batches
// recorded since start the next: a live fleet posts a batch a second, and
// every model's hour under way projected after each would keep a core
// busy; a page then trails routing by a few seconds, not a batch.
const refreshGap = 5 * time.Second

// refreshes are the projections being worked out in the background, by
// the models and window start they are of, so a batch answered by many
// views starts one.
type refreshes struct {
	mu      sync.Mutex
	running map[string]bool
	wg      sync.WaitGroup
}

// refreshing marks a context whose projection is the background one: it
// projects, never takes what was served.
type refreshing struct{}

// takeServed is what a view takes without waiting when the projector may
// serve a projection a batch behind (StaleFor): every model's last
// projection, when each was made at most StaleFor ago for the same hours
// and catalogue revision. Where metric batches have been recorded since it
// was made refreshGap ago (or it is half its life old, for another
// process's batches), the projection is worked out again in the background
// for the next view. ok is false
// when a model has none to take: the view projects as before.
func (pj *Projector) takeServed(ctx context.Context, entries map[string]*frozenProjection, live liveKey, now time.Time,
	models []string, since, until time.Time) (map[string]modelProjection, bool) {
	if pj.StaleFor <= 0 || len(entries) == 0 || ctx.Value(refreshing{}) != nil {
		return nil, false
	}
	out := make(map[string]modelProjection, len(entries))
	stale, gap := false, min(refreshGap, pj.StaleFor/2)
	for model, e := range entries {
		s := e.served.Load()
		if s == nil || s.key.from != live.from || s.key.last != live.last || s.key.revision != live.revision || !keptFresh(s.at, now, pj.StaleFor) {
			return nil, false
		}
		if s.key.metrics != live.metrics && !keptFresh(s.at, now, gap) || !keptFresh(s.at, now, pj.StaleFor/2) {
			stale = true
		}
		out[model] = s.whole
	}
	if stale {
		pj.refresh(ctx, models, since, until)
	}
	return out, true
}

// refresh works out the models' projection from since to until in the
// background, unless it is already being worked out.
func (pj *Projector) refresh(ctx context.Context, models []string, since, until time.Time) {
	key := strings.Join(models, ",") + "|" + since.Format(time.RFC3339)
	r := &pj.refreshes
	r.mu.Lock()
	if r.running[key] {
		r.mu.Unlock()
		return
	}
	if r.running == nil {
		r.running = map[string]bool{}
	}
	r.running[key] = true
	r.wg.Add(1)
	r.mu.Unlock()
	// The view's trace and values, not its deadline: the view has been
	// answered by the time this is done.
	ctx, cancel := context.WithTimeout(context.WithValue(context.WithoutCancel(ctx), refreshing{}, true), refreshFor)
	go func() {
		defer r.wg.Done()
		defer cancel()
		defer func() {
			r.mu.Lock()
			delete(r.running, key)
			r.mu.Unlock()
		}()
		if _, err := pj.projectModels(ctx, models, since, until); err != nil {
			log := pj.Log
			if log == nil {
				log = slog.Default()
			}
			log.Warn("projection: background refresh", "models", len(models), "err", err)
		}
	}()
}

// Wait returns once the projections being worked out in the background
// are done (tests; a process closing its store).
func (pj *Projector) Wait() { pj.refreshes.wg.Wait() }
