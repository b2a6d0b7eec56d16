package projection

import (
	"context"
	"sync"
	"time"

	"github.com/airside/airside/internal/catalogue"
	"github.com/airside/airside/internal/election"
)

// MixWindow is how far back a model's measured workload mix looks.
const MixWindow = 7 * 24 * time.Hour

// demandFresh is how long a model's measured workload mix is reused: it is a
// week of demand, which a minute more or less does not move, and reading it
// scans every minute of the week (every preview keystroke and traffic page
// asked for it). Demand posted to this process is read at once; posted to
// another, within demandFresh.
const demandFresh = time.Minute

// demandCache holds each model's workload demand over MixWindow, as last
// read.
type demandCache struct {
	mu     sync.Mutex
	models map[string]demandEntry
}

type demandEntry struct {
	at     time.Time
	shapes map[string]catalogue.WorkloadDemand
}

// Demand is the model's workload demand over the last MixWindow, read at
// most once every demandFresh per process. The map is shared: callers only
// read it.
func (pj *Projector) Demand(ctx context.Context, model string) (map[string]catalogue.WorkloadDemand, error) {
	now := pj.Now()
	pj.demands.mu.Lock()
	e, ok := pj.demands.models[model]
	pj.demands.mu.Unlock()
	if ok && keptFresh(e.at, now, demandFresh) {
		return e.shapes, nil
	}
	shapes, err := pj.Reads.DemandShapes(ctx, model, now.Add(-MixWindow), election.CachePromptTokens)
	if err != nil {
		return nil, err
	}
	pj.demands.mu.Lock()
	if pj.demands.models == nil {
		pj.demands.models = map[string]demandEntry{}
	}
	pj.demands.models[model] = demandEntry{at: now, shapes: shapes}
	pj.demands.mu.Unlock()
	return shapes, nil
}

// ForgetDemand drops a model's cached demand: new demand was recorded.
func (pj *Projector) ForgetDemand(model string) {
	pj.demands.mu.Lock()
	delete(pj.demands.models, model)
	pj.demands.mu.Unlock()
}
