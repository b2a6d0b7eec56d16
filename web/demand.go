package web

import (
	"context"
	"sync"
	"time"

	"github.com/airside/airside/internal/catalogue"
	"github.com/airside/airside/internal/election"
)

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

// demand is the model's workload demand over the last MixWindow, read at
// most once every demandFresh per process. The map is shared: callers only
// read it.
func (s *Server) demand(ctx context.Context, model string) (map[string]catalogue.WorkloadDemand, error) {
	now := s.Now()
	s.demands.mu.Lock()
	e, ok := s.demands.models[model]
	s.demands.mu.Unlock()
	if ok && keptFresh(e.at, now, demandFresh) {
		return e.shapes, nil
	}
	shapes, err := s.TrafficReads.DemandShapes(ctx, model, now.Add(-MixWindow), election.CachePromptTokens)
	if err != nil {
		return nil, err
	}
	s.demands.mu.Lock()
	if s.demands.models == nil {
		s.demands.models = map[string]demandEntry{}
	}
	s.demands.models[model] = demandEntry{at: now, shapes: shapes}
	s.demands.mu.Unlock()
	return shapes, nil
}

// forgetDemand drops a model's cached demand: new demand was recorded.
func (s *Server) forgetDemand(model string) {
	s.demands.mu.Lock()
	delete(s.demands.models, model)
	s.demands.mu.Unlock()
}
