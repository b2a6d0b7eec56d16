package web

import (
	"fmt"
	"strconv"
	"strings"
	"sync"
	"time"

	"github.com/airside/airside/internal/catalogue"
)

// metricCache keeps what the traffic pages read of the metric rollups (a
// carrier's month of hours, each model's and listing's totals), per query,
// while no metric batch has been recorded in this process since (the
// store's MetricsWritten, as the projection's live day) and for at most
// liveFor (another portal's batches on a shared PostgreSQL). A page read
// again with nothing new reads no rollup; the first read after a batch
// reads them all. Readers never change what it returns.
type metricCache struct {
	mu      sync.Mutex
	version uint64
	by      map[string]metricEntry
	points  int
}

type metricEntry struct {
	at     time.Time
	value  any
	points int
}

// metricCacheBudget bounds the cache in points (an hour of a listing, or a
// total): about 70 MB at most; past it the cache starts again.
const metricCacheBudget = 400_000

// cachedMetrics answers a rollup query from the cache, or reads it and
// keeps it. key names the query and its arguments; points sizes a value.
func cachedMetrics[T any](s *Server, key string, points func(T) int, read func() (T, error)) (T, error) {
	c, now, version := &s.metricCache, s.Now(), s.TrafficReads.MetricsWritten()
	c.mu.Lock()
	if c.version != version || c.by == nil {
		c.version, c.by, c.points = version, map[string]metricEntry{}, 0
	}
	if e, ok := c.by[key]; ok && keptFresh(e.at, now, liveFor) {
		c.mu.Unlock()
		return e.value.(T), nil
	}
	c.mu.Unlock()
	v, err := read()
	if err != nil {
		return v, err
	}
	n := points(v)
	c.mu.Lock()
	defer c.mu.Unlock()
	if c.version == version { // not kept if a batch was recorded while reading
		if c.points+n > metricCacheBudget {
			c.by, c.points = map[string]metricEntry{}, 0
		}
		c.by[key], c.points = metricEntry{at: now, value: v, points: n}, c.points+n
	}
	return v, nil
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
