package projection

import (
	"context"
	"fmt"
	"slices"
	"strconv"
	"strings"
	"sync"
	"time"

	"github.com/airside/airside/internal/catalogue"
)

// metricCache keeps what the traffic pages read of the metric rollups (a
// carrier's month of hours, each model's and listing's totals), per query,
// while no metric batch recorded in this process since touched a minute
// before the query's window ends (the store's MetricsTouchedSince) and for
// at most liveFor (another portal's batches on a shared PostgreSQL). The
// pages read a window as the hours before the one under way and that hour
// (splitMetrics), so a batch of the minute under way has only that hour
// read again. Readers never change what it returns.
type metricCache struct {
	mu     sync.Mutex
	by     map[string]metricEntry
	points int
}

type metricEntry struct {
	at      time.Time
	version uint64 // MetricsWritten before the read
	value   any
	points  int
}

// metricCacheBudget bounds the cache in points (an hour of a listing, or a
// total): about 70 MB at most; past it the cache starts again.
const metricCacheBudget = 400_000

// cachedMetrics answers a rollup query over a window ending at until from
// the cache, or reads it and keeps it. key names the query and its
// arguments; points sizes a value.
func cachedMetrics[T any](pj *Projector, key string, until time.Time, points func(T) int, read func() (T, error)) (T, error) {
	c, now, version := &pj.metricCache, pj.Now(), pj.Reads.MetricsWritten()
	c.mu.Lock()
	e, ok := c.by[key]
	c.mu.Unlock()
	if ok && keptFresh(e.at, now, liveFor) && (e.version == version || pj.untouchedBefore(e.version, until)) {
		return e.value.(T), nil
	}
	v, err := read()
	if err != nil {
		return v, err
	}
	n := points(v)
	pj.pointsRead.Add(int64(n))
	c.keep(key, metricEntry{at: now, version: version, value: v, points: n})
	return v, nil
}

// keep keeps e under key. e.version is the count before the read: a batch
// recorded while reading is judged by what it touched at the next read.
func (c *metricCache) keep(key string, e metricEntry) {
	c.mu.Lock()
	defer c.mu.Unlock()
	if c.by == nil || c.points+e.points > metricCacheBudget {
		c.by, c.points = map[string]metricEntry{}, 0
	}
	c.by[key], c.points = e, c.points+e.points
}

// untouchedBefore reports whether no metric write since version touched a
// minute before until.
func (pj *Projector) untouchedBefore(version uint64, until time.Time) bool {
	at, ok := pj.Reads.MetricsTouchedSince(version)
	return ok && (at.IsZero() || !at.Before(until))
}

// splitMetrics reads a rollup of the hours from since to until (the
// store's reads take the hours starting in that window) as two kept reads:
// the hours before the one under way (by the clock, not by until: a window
// ending at the next hour's start holds the hour under way too), which a
// batch of the minute under way leaves as they were, and the hour under
// way; merge joins them into a value of its own.
func splitMetrics[T any](pj *Projector, kind string, ids []int64, since, until time.Time, points func(T) int,
	read func(since, until time.Time) (T, error), merge func(head, tail T) T) (T, error) {
	since, until = since.UTC(), until.UTC()
	split := pj.Now().UTC().Truncate(time.Hour)
	first := since.Truncate(time.Hour)
	if first.Before(since) {
		first = first.Add(time.Hour) // the first hour starting in the window
	}
	whole := func(from, to time.Time) (T, error) {
		return cachedMetrics(pj, metricKey(kind, ids, from, to), to, points, func() (T, error) { return read(from, to) })
	}
	if !split.After(first) || !split.Before(until) {
		return whole(first, until) // the hour under way is not in the window, or is all of it
	}
	head, err := whole(first, split)
	if err != nil {
		return head, err
	}
	// The hour under way (and any after it the window holds): the same
	// hours start before until or before the hour's end, so the key does
	// not move with until's minutes.
	tail, err := whole(split, maxTime(until, split.Add(time.Hour)))
	if err != nil {
		return tail, err
	}
	return merge(head, tail), nil
}

// mergeLists joins two kept reads of lists in time order (splitMetrics:
// a listing's hourly points, a model's project hours), the earlier first.
func mergeLists[K comparable, V any](head, tail map[K][]V) map[K][]V {
	out := make(map[K][]V, len(head)+len(tail))
	for k, h := range head {
		out[k] = h[:len(h):len(h)] // append below copies
	}
	for k, h := range tail {
		out[k] = append(out[k], h...)
	}
	return out
}

func mergeModelHours(head, tail map[int64]map[time.Time]int64) map[int64]map[time.Time]int64 {
	out := make(map[int64]map[time.Time]int64, len(head)+len(tail))
	for _, part := range []map[int64]map[time.Time]int64{head, tail} {
		for id, hours := range part {
			if out[id] == nil {
				out[id] = map[time.Time]int64{}
			}
			for h, n := range hours {
				out[id][h] += n
			}
		}
	}
	return out
}

func mergeTotals(head, tail map[int64]int64) map[int64]int64 {
	out := make(map[int64]int64, len(head)+len(tail))
	for _, part := range []map[int64]int64{head, tail} {
		for id, n := range part {
			out[id] += n
		}
	}
	return out
}

// metricKey names a rollup query by its kind, ids and window.
func metricKey(kind string, ids []int64, since, until time.Time) string {
	var b strings.Builder
	fmt.Fprintf(&b, "%s|%d|%d|", kind, since.Unix(), until.Unix())
	for _, id := range ids {
		b.WriteString(strconv.FormatInt(id, 10))
		b.WriteByte(',')
	}
	return b.String()
}

func hourlyPoints(m map[int64][]catalogue.HourlyPoint) int {
	n := 1
	for _, h := range m {
		n += len(h)
	}
	return n
}

func totalPoints(m map[int64]int64) int { return len(m) + 1 }

func modelHourPoints(m map[int64]map[time.Time]int64) int {
	n := 1
	for _, h := range m {
		n += len(h)
	}
	return n
}

// RequestsByMinute is the listings' requests per minute of the hour
// starting at h (the store's RequestsByMinute), kept as the rollups are:
// after a batch that touched minutes of the hour, only the minutes from the
// earliest one it touched are read again (an hour in which a fare was
// published is split by them, and the hour under way takes a batch a few
// seconds under a live fleet).
func (pj *Projector) RequestsByMinute(ctx context.Context, ids []int64, h time.Time) (map[time.Time]int64, error) {
	minutes, err := pj.requestsByMinuteOf(ctx, []minuteAsk{{ids: ids, hour: h}})
	if err != nil {
		return nil, err
	}
	return minutes[0], nil
}

// minuteAsk is an hour of a group of listings (a model's) whose requests
// by minute are wanted.
type minuteAsk struct {
	ids  []int64
	hour time.Time
}

// requestsByMinuteOf is RequestsByMinute of several groups and hours at
// once, in the order asked: what is not kept is read in one query, from
// the earliest minute any of it needs to the end of the last hour, rather
// than one query a model and hour (after each batch a carrier's overview
// projects the hour under way of every model it lists).
func (pj *Projector) requestsByMinuteOf(ctx context.Context, asks []minuteAsk) ([]map[time.Time]int64, error) {
	c, now, version := &pj.metricCache, pj.Now(), pj.Reads.MetricsWritten()
	out := make([]map[time.Time]int64, len(asks))
	type stale struct {
		ask       int
		key       string
		from, end time.Time
		kept      map[time.Time]int64
	}
	var todo []stale
	var ids []int64
	var readFrom, readUntil time.Time
	for i, a := range asks {
		h := a.hour.UTC()
		end := h.Add(time.Hour)
		key := metricKey("minutes", a.ids, h, end)
		c.mu.Lock()
		e, ok := c.by[key]
		c.mu.Unlock()
		from, kept := h, map[time.Time]int64(nil)
		if ok && keptFresh(e.at, now, liveFor) {
			if e.version == version {
				out[i] = e.value.(map[time.Time]int64)
				continue
			}
			if at, known := pj.Reads.MetricsTouchedSince(e.version); known {
				if at.IsZero() || !at.Before(end) {
					out[i] = e.value.(map[time.Time]int64)
					continue
				}
				if at = at.UTC().Truncate(time.Minute); at.After(h) {
					from, kept = at, e.value.(map[time.Time]int64)
				}
			}
		}
		todo = append(todo, stale{ask: i, key: key, from: from, end: end, kept: kept})
		ids = append(ids, a.ids...)
		if readFrom.IsZero() || from.Before(readFrom) {
			readFrom = from
		}
		readUntil = maxTime(readUntil, end)
	}
	if len(todo) == 0 {
		return out, nil
	}
	read, err := pj.Reads.RequestsByMinute(ctx, slices.Compact(slices.Sorted(slices.Values(ids))), readFrom, readUntil)
	if err != nil {
		return nil, err
	}
	for _, t := range todo {
		minutes := make(map[time.Time]int64, len(t.kept)+60)
		for m, n := range t.kept {
			if m.Before(t.from) {
				minutes[m] = n
			}
		}
		fresh := 0 // the minutes read, as PointsRead counts them
		for _, id := range asks[t.ask].ids {
			for m, n := range read[id] {
				if !m.Before(t.from) && m.Before(t.end) {
					if _, ok := minutes[m]; !ok {
						fresh++
					}
					minutes[m] += n
				}
			}
		}
		pj.pointsRead.Add(int64(fresh + 1))
		c.keep(t.key, metricEntry{at: now, version: version, value: minutes, points: len(minutes) + 1})
		out[t.ask] = minutes
	}
	return out, nil
}

// Hourly is each listing's hours from since to until, kept (splitMetrics).
func (pj *Projector) Hourly(ctx context.Context, ids []int64, since, until time.Time) (map[int64][]catalogue.HourlyPoint, error) {
	return splitMetrics(pj, "hourly", ids, since, until, hourlyPoints, func(from, to time.Time) (map[int64][]catalogue.HourlyPoint, error) {
		return pj.Reads.HourlyTraffic(ctx, ids, from, to)
	}, mergeLists)
}

// ModelHours is each model's requests by hour from since to until, kept.
func (pj *Projector) ModelHours(ctx context.Context, modelIDs []int64, since, until time.Time) (map[int64]map[time.Time]int64, error) {
	return splitMetrics(pj, "model-hours", modelIDs, since, until, modelHourPoints, func(from, to time.Time) (map[int64]map[time.Time]int64, error) {
		return pj.Reads.ModelTraffic(ctx, modelIDs, from, to)
	}, mergeModelHours)
}

// ModelTotals is each model's requests from since to until, kept.
func (pj *Projector) ModelTotals(ctx context.Context, modelIDs []int64, since, until time.Time) (map[int64]int64, error) {
	return splitMetrics(pj, "model-totals", modelIDs, since, until, totalPoints, func(from, to time.Time) (map[int64]int64, error) {
		return pj.Reads.ModelTotals(ctx, modelIDs, from, to)
	}, mergeTotals)
}

// ListingTotals is each listing's requests from since to until, kept.
func (pj *Projector) ListingTotals(ctx context.Context, ids []int64, since, until time.Time) (map[int64]int64, error) {
	return splitMetrics(pj, "listing-totals", ids, since, until, totalPoints, func(from, to time.Time) (map[int64]int64, error) {
		return pj.Reads.ListingTotals(ctx, ids, from, to)
	}, mergeTotals)
}
