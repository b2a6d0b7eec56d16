package projection

import (
	"context"
	"sync"
	"time"

	"github.com/airside/airside/internal/catalogue"
	"github.com/airside/airside/internal/election"
	"github.com/airside/airside/internal/fare"
	"github.com/airside/airside/internal/preview"
)

// MixWindow is how far back a model's measured workload mix looks.
const MixWindow = 7 * 24 * time.Hour

// demandFresh is how long a model's measured workload mix is reused: it is a
// week of demand, which a minute more or less does not move, and reading it
// scans every minute of the week (every preview keystroke and traffic page
// asked for it). Demand posted to this process is read at once; posted to
// another, at once on PostgreSQL (the store announces metric writes, and
// ForgetAllDemand drops what was kept), else within demandFresh.
const demandFresh = time.Minute

// demandCache holds each model's workload demand and what its requests
// asked for over MixWindow, as last read.
type demandCache struct {
	mu     sync.Mutex
	models map[string]kept[map[string]catalogue.WorkloadDemand]
	asked  map[string]kept[catalogue.AskedSums]
}

// kept is a value read at a moment.
type kept[T any] struct {
	at    time.Time
	value T
}

// readKept is (*entries)[model] when read less than demandFresh ago, else
// read again and kept: the demand reads share one freshness rule.
func readKept[T any](pj *Projector, entries *map[string]kept[T], model string, read func(now time.Time) (T, error)) (T, error) {
	now := pj.Now()
	pj.demands.mu.Lock()
	e, ok := (*entries)[model]
	pj.demands.mu.Unlock()
	if ok && keptFresh(e.at, now, demandFresh) {
		return e.value, nil
	}
	v, err := read(now)
	if err != nil {
		return v, err
	}
	pj.demands.mu.Lock()
	if *entries == nil {
		*entries = map[string]kept[T]{}
	}
	(*entries)[model] = kept[T]{at: now, value: v}
	pj.demands.mu.Unlock()
	return v, nil
}

// Asked is what the model's requests over the last MixWindow asked for
// besides the model (election.md sec. 7), read at most once every
// demandFresh per process, as Demand is.
func (pj *Projector) Asked(ctx context.Context, model string) (catalogue.AskedSums, error) {
	return readKept(pj, &pj.demands.asked, model, func(now time.Time) (catalogue.AskedSums, error) {
		return pj.Reads.DemandAsked(ctx, model, now.Add(-MixWindow), now.Add(time.Minute))
	})
}

// Demand is the model's workload demand over the last MixWindow, read at
// most once every demandFresh per process. The map is shared: callers only
// read it.
func (pj *Projector) Demand(ctx context.Context, model string) (map[string]catalogue.WorkloadDemand, error) {
	return readKept(pj, &pj.demands.models, model, func(now time.Time) (map[string]catalogue.WorkloadDemand, error) {
		return pj.Reads.DemandShapes(ctx, model, now.Add(-MixWindow), election.CachePromptTokens)
	})
}

// ForgetDemand drops a model's cached demand: new demand was recorded.
func (pj *Projector) ForgetDemand(model string) {
	pj.demands.mu.Lock()
	delete(pj.demands.models, model)
	delete(pj.demands.asked, model)
	pj.demands.mu.Unlock()
}

// ForgetAllDemand drops every model's cached demand: another serve process
// recorded demand (which models, its announcement does not say).
func (pj *Projector) ForgetAllDemand() {
	pj.demands.mu.Lock()
	clear(pj.demands.models)
	clear(pj.demands.asked)
	pj.demands.mu.Unlock()
}

// Unserved is a part of a model's requests a listing cannot serve (the
// preview's, named here so pages ask the Projector, not the preview).
type Unserved = preview.Unserved

// Unserved are the parts of the model's requests over the last MixWindow a
// listing offering m cannot serve for something other than price
// (preview.UnservedBy on Asked).
func (pj *Projector) Unserved(ctx context.Context, model string, m *fare.Market) ([]Unserved, error) {
	sums, err := pj.Asked(ctx, model)
	if err != nil {
		return nil, err
	}
	return preview.UnservedBy(m, sums), nil
}

// DemandGaps are the model's requests in a period that the projection
// could not follow as routing did, for the traffic page's share gap
// (Projector.DemandGaps).
type DemandGaps struct {
	// Unservable are requests whose customers' preferences the listing's
	// published fare could not meet. Requests whose sets of preferences
	// demand reported (prefs: keys) are left out: the projection elected
	// them on their own ballots, so they are in the projected share
	// already.
	Unservable int64
	// OnModelRates are requests that carried a set of preferences or came
	// under the share policy, from a gateway that names API projects:
	// routing elected them on the rates it learned of their project, the
	// replay on the model's (demand counts sets and projects apart, not
	// together, so which project sent which set is not known). Up to: a
	// request may count as a set and under the policy both.
	OnModelRates int64
}

// DemandGaps are what of the model's requests from from until until the
// projection could not follow as routing did, for listing l.
func (pj *Projector) DemandGaps(ctx context.Context, l *catalogue.Listing, from, until time.Time) (DemandGaps, error) {
	sums, err := pj.Reads.DemandAsked(ctx, l.Model.Slug, from, until)
	if err != nil {
		return DemandGaps{}, err
	}
	var out DemandGaps
	sets, projects := false, false
	for key, n := range sums.Asked {
		switch {
		case catalogue.IsPreferenceSet(key):
			sets = true
			out.OnModelRates += n
		case key == catalogue.AskedSharePolicy:
			out.OnModelRates += n
		case catalogue.IsProjectKey(key):
			projects = true
		}
	}
	if !projects {
		out.OnModelRates = 0
	}
	if !sets && l.Published != nil {
		out.Unservable = preview.UnservableRequests(&l.Published.Market, sums)
	}
	return out, nil
}
