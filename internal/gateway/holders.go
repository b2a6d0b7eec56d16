package gateway

import (
	"sort"
	"time"

	"github.com/airside/airside/internal/catalogue"
	"github.com/airside/airside/internal/traffic"
)

// holderKey is one shape in one minute.
type holderKey struct {
	shape  traffic.Shape
	minute time.Time
}

// HeldMinute is the listing that held a shape from a second of a minute:
// the holder after the minute's first election, at its second, and after
// each later election that moved the shape, with the elections it held
// (the portal's projection starts a part from it at every second a holder
// changed, and weighs the parts of a minute by the elections).
type HeldMinute struct {
	Shape     traffic.Shape
	Minute    time.Time
	Second    int
	ListingID int64
	Requests  int64
}

// heldRow is a holder within a shape's minute, from its second, with the
// elections it held.
type heldRow struct {
	second   int
	listing  int64
	requests int64
}

// Held notes the holder of an auto shape after an election at at, and
// counts the election: a row at the minute's first election and at each
// later one that moved the shape (of the elections in one second, the last
// one's holder stands), up to catalogue.MaxHolderRows rows a minute (the
// last row counts the minute's elections after it). Every election is
// spooled: the counts come back whole after a restart.
func (r *Recorder) Held(shape traffic.Shape, route Route, at time.Time) {
	at = at.UTC()
	k := holderKey{shape, at.Truncate(time.Minute)}
	id, second := route.ListingID, at.Second()
	r.mu.Lock()
	defer r.mu.Unlock()
	if r.holders == nil {
		r.holders = map[holderKey]*[]heldRow{}
	}
	rows := r.holders[k]
	if rows == nil {
		rows = &[]heldRow{}
		r.holders[k] = rows
	}
	n := len(*rows)
	switch {
	case n > 0 && (*rows)[n-1].listing == id: // the shape stays where it was
		(*rows)[n-1].requests++
	case n > 0 && (*rows)[n-1].second == second:
		(*rows)[n-1].listing = id
		(*rows)[n-1].requests++
	case n >= catalogue.MaxHolderRows:
		(*rows)[n-1].requests++
	default:
		*rows = append(*rows, heldRow{second: second, listing: id, requests: 1})
	}
	r.spool(spoolEntry{Op: opHeld, At: at, Route: routeOf(route), Shape: &shape})
}

// TakeClosedHolders removes and returns the holders of every minute that
// ended before until, in time order (then by model, workload and cache).
func (r *Recorder) TakeClosedHolders(until time.Time) []HeldMinute {
	r.mu.Lock()
	defer r.mu.Unlock()
	var out []HeldMinute
	for k, rows := range takeClosed(r.holders, func(k holderKey) time.Time { return k.minute }, until) {
		for _, row := range rows {
			out = append(out, HeldMinute{Shape: k.shape, Minute: k.minute, Second: row.second, ListingID: row.listing, Requests: row.requests})
		}
	}
	sort.Slice(out, func(i, j int) bool {
		a, b := out[i], out[j]
		switch {
		case !a.Minute.Equal(b.Minute):
			return a.Minute.Before(b.Minute)
		case a.Second != b.Second:
			return a.Second < b.Second
		case a.Shape.Model != b.Shape.Model:
			return a.Shape.Model < b.Shape.Model
		case a.Shape.Workload != b.Shape.Workload:
			return a.Shape.Workload < b.Shape.Workload
		}
		return !a.Shape.CacheRelevant && b.Shape.CacheRelevant
	})
	return out
}
