package catalogue

import (
	"time"
)

// ListingHour is one hourly rollup of one listing.
type ListingHour struct {
	ListingID int64
	HourlyPoint
}

// MetricRows are what the health mirror reads from storage: minute buckets
// and hourly rollups, either every one it covers (a full read) or those
// recorded or changed since a cursor.
type MetricRows struct {
	Buckets []Bucket
	Hours   []ListingHour
	// Latest is the latest time among the rows' recorded and changed times
	// (zero when there is none, or only rows from before the cursor existed).
	Latest time.Time
}

// HealthCursorSlack is how long after taking its time a transaction may
// commit and its rows still reach the mirror (longer than an ingest
// transaction stays open, and than the clocks of two serve processes
// differ): once every HealthCursorSlack the mirror reads twice that far back
// before its cursor, so a row committed that late is read within a minute
// of its commit. Rows read twice are set again, never added twice.
const HealthCursorSlack = time.Minute

// HealthCursorShortSlack is how far before its cursor the mirror reads at
// the refreshes between: what a transaction usually takes. Reading a
// minute back at every refresh (every 5 s) read each recorded row thirteen
// times, the largest cost of a fleet's ingest once a burst was folded.
const HealthCursorShortSlack = 5 * time.Second

// HealthSpan is what the mirror needs to cover to answer health at now: the
// minute buckets from WindowFrom on (the decayed hour) and those of EdgeHour
// (the hour the 24-hour day starts in, counted by the minute), and the hourly
// rollups from EdgeHour on.
type HealthSpan struct {
	WindowFrom, EdgeHour time.Time
}

// SpanAt is the span health at now is computed over.
func SpanAt(now time.Time) HealthSpan {
	now = now.UTC()
	return HealthSpan{
		WindowFrom: now.Truncate(time.Minute).Add(-(WindowMinutes - 1) * time.Minute),
		EdgeHour:   now.Add(-24 * time.Hour).Truncate(time.Hour),
	}
}

// HealthMirror holds, in memory, the metrics live health is computed from:
// the window's and the edge hour's minutes and the day's hourly rollups. It
// is built from a full read and then kept current from the rows changed since
// (buckets are written once and rollups are read whole, so applying a row
// twice sets it twice and changes nothing). It gives the same health as the
// store computes from its tables (a test holds them equal); it is not safe
// for concurrent use.
type HealthMirror struct {
	span    HealthSpan
	minutes map[int64]map[minuteSource]Bucket // listing -> minute (unix) and reporting gateway -> bucket
	hours   map[int64]map[int64]DaySums       // listing -> hour (unix) -> the hour's day sums
}

// minuteSource keys one gateway's report of one minute.
type minuteSource struct {
	minute int64
	source string
}

// NewHealthMirror is a mirror of a full read for a span.
func NewHealthMirror(span HealthSpan, full MetricRows) *HealthMirror {
	m := &HealthMirror{span: span, minutes: map[int64]map[minuteSource]Bucket{}, hours: map[int64]map[int64]DaySums{}}
	m.Apply(full)
	return m
}

// Covers reports whether the mirror can answer at now: the day has not moved
// into another edge hour since its full read.
func (m *HealthMirror) Covers(now time.Time) bool {
	return m != nil && SpanAt(now).EdgeHour.Equal(m.span.EdgeHour)
}

// Apply sets the rows read into the mirror.
func (m *HealthMirror) Apply(rows MetricRows) {
	edgeEnd := m.span.EdgeHour.Add(time.Hour)
	for _, b := range rows.Buckets {
		t := b.Minute.UTC()
		inEdge := !t.Before(m.span.EdgeHour) && t.Before(edgeEnd)
		if t.Before(m.span.WindowFrom) && !inEdge {
			continue
		}
		mins := m.minutes[b.ListingID]
		if mins == nil {
			mins = map[minuteSource]Bucket{}
			m.minutes[b.ListingID] = mins
		}
		b.Minute = t
		// Set, not added: a row read again (the cursor's slack) replaces
		// itself, while each gateway's report of a minute is its own row.
		mins[minuteSource{t.Unix(), b.Source}] = b
	}
	for _, h := range rows.Hours {
		t := h.Hour.UTC()
		if t.Before(m.span.EdgeHour) {
			continue
		}
		hrs := m.hours[h.ListingID]
		if hrs == nil {
			hrs = map[int64]DaySums{}
			m.hours[h.ListingID] = hrs
		}
		hrs[t.Unix()] = DaySums{Successes: h.Requests - h.Errors - h.ClientErrors, InputTokens: h.InputTokens,
			CachedInputTokens: h.CachedInputTokens, OutputTokens: h.OutputTokens}
	}
}

// Prune forgets the minutes that have left the window (outside the edge
// hour), at now, so the mirror stays the size of an hour of minutes.
func (m *HealthMirror) Prune(now time.Time) {
	windowFrom := SpanAt(now).WindowFrom
	edge, edgeEnd := m.span.EdgeHour.Unix(), m.span.EdgeHour.Add(time.Hour).Unix()
	for id, mins := range m.minutes {
		for k := range mins {
			if t := k.minute; t < windowFrom.Unix() && (t < edge || t >= edgeEnd) {
				delete(mins, k)
			}
		}
		if len(mins) == 0 {
			delete(m.minutes, id)
		}
	}
	m.span.WindowFrom = windowFrom
}

// Health is the live health at now of every listing the gateway has reported
// on: the decayed window where it has minutes in it, else the day's observed
// rates once past the gates. now must be covered (Covers).
func (m *HealthMirror) Health(now time.Time) map[int64]Health {
	span := SpanAt(now)
	current := now.UTC().Truncate(time.Minute)
	dayAgo := now.UTC().Add(-24 * time.Hour)
	firstHour := span.EdgeHour.Add(time.Hour)
	windows := map[int64]WindowSums{}
	days := map[int64]DaySums{}
	for id, mins := range m.minutes {
		var w WindowSums
		var d DaySums
		inWindow := false
		for _, b := range mins {
			if !b.Minute.Before(span.WindowFrom) {
				w.add(b, current)
				inWindow = true
			}
			if b.Minute.After(dayAgo) && b.Minute.Before(firstHour) {
				d.add(b)
			}
		}
		if inWindow {
			windows[id] = w
		}
		days[id] = d
	}
	for id, hrs := range m.hours {
		d := days[id]
		for t, s := range hrs {
			if t >= firstHour.Unix() {
				d.Successes += s.Successes
				d.InputTokens += s.InputTokens
				d.CachedInputTokens += s.CachedInputTokens
				d.OutputTokens += s.OutputTokens
			}
		}
		days[id] = d
	}
	out := make(map[int64]Health, len(days))
	for id, d := range days {
		if w, ok := windows[id]; ok {
			out[id] = HealthFrom(w, d)
		} else if PassesGates(d) {
			out[id] = HealthFrom(WindowSums{}, d)
		}
	}
	return out
}

// add adds a minute's day figures.
func (d *DaySums) add(b Bucket) {
	d.Successes += b.Requests - b.Errors - b.ClientErrors
	d.InputTokens += b.InputTokens
	d.CachedInputTokens += b.CachedInputTokens
	d.OutputTokens += b.OutputTokens
}
