package gateway

import (
	"sort"
	"time"

	"github.com/airside/airside/internal/traffic"
)

// holderKey is one shape in one minute.
type holderKey struct {
	shape  traffic.Shape
	minute time.Time
}

// HeldMinute is the listing that held a shape in a minute: the holder after
// the minute's first election of the shape (the portal's projection starts
// a part from it at every minute a holder changed).
type HeldMinute struct {
	Shape     traffic.Shape
	Minute    time.Time
	ListingID int64
}

// Held notes the holder of an auto shape after an election at at; the
// minute keeps its first.
func (r *Recorder) Held(shape traffic.Shape, route Route, at time.Time) {
	k := holderKey{shape, at.UTC().Truncate(time.Minute)}
	r.mu.Lock()
	defer r.mu.Unlock()
	if r.holders == nil {
		r.holders = map[holderKey]*int64{}
	}
	if _, ok := r.holders[k]; !ok {
		r.spool(spoolEntry{Op: opHeld, At: at, Route: routeOf(route), Shape: &shape})
		id := route.ListingID
		r.holders[k] = &id
	}
}

// TakeClosedHolders removes and returns the holders of every minute that
// ended before until, in time order (then by model, workload and cache).
func (r *Recorder) TakeClosedHolders(until time.Time) []HeldMinute {
	r.mu.Lock()
	defer r.mu.Unlock()
	var out []HeldMinute
	for k, id := range takeClosed(r.holders, func(k holderKey) time.Time { return k.minute }, until) {
		out = append(out, HeldMinute{Shape: k.shape, Minute: k.minute, ListingID: id})
	}
	sort.Slice(out, func(i, j int) bool {
		a, b := out[i], out[j]
		switch {
		case !a.Minute.Equal(b.Minute):
			return a.Minute.Before(b.Minute)
		case a.Shape.Model != b.Shape.Model:
			return a.Shape.Model < b.Shape.Model
		case a.Shape.Workload != b.Shape.Workload:
			return a.Shape.Workload < b.Shape.Workload
		}
		return !a.Shape.CacheRelevant && b.Shape.CacheRelevant
	})
	return out
}
