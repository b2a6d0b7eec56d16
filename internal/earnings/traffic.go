package earnings

import (
	"slices"
	"time"

	"github.com/airside/airside/internal/catalogue"
	"github.com/airside/airside/internal/election"
	"github.com/airside/airside/internal/fare"
)

// Period is how a traffic page groups hours.
type Period string

// The periods: the last 48 hours by hour, the last 30 days by day, the last
// 12 months by month.
const (
	ByHour  Period = "hour"
	ByDay   Period = "day"
	ByMonth Period = "month"
)

// ParsePeriod reads a period, defaulting to days.
func ParsePeriod(s string) Period {
	switch Period(s) {
	case ByHour, ByMonth:
		return Period(s)
	}
	return ByDay
}

// Grouping is a period read in a time zone: days and months start at local
// midnight. Offsets are whole hours (the rollups are UTC hours).
type Grouping struct {
	Period Period
	Loc    *time.Location
}

// UTC groups by a period in UTC.
func (p Period) UTC() Grouping { return Grouping{Period: p, Loc: time.UTC} }

// Offset is a fixed zone minutes east of UTC, within -12:00..+14:00 (the
// half- and quarter-hour zones included: India's +05:30, Nepal's +05:45),
// named as every page writes an offset ("UTC+05:30").
func Offset(minutes int) *time.Location {
	minutes = max(-12*60, min(14*60, minutes))
	if minutes == 0 {
		return time.UTC
	}
	return time.FixedZone(fare.OffsetText(minutes), minutes*60)
}

func (g Grouping) loc() *time.Location {
	if g.Loc == nil {
		return time.UTC
	}
	return g.Loc
}

// Window is the span a grouping shows at now: [Since, Until).
func (g Grouping) Window(now time.Time) (since, until time.Time) {
	now = now.In(g.loc())
	switch g.Period {
	case ByHour:
		until = now.Truncate(time.Hour).Add(time.Hour)
		return until.Add(-48 * time.Hour), until
	case ByMonth:
		until = time.Date(now.Year(), now.Month(), 1, 0, 0, 0, 0, g.loc()).AddDate(0, 1, 0)
		return until.AddDate(-1, 0, 0), until
	}
	until = time.Date(now.Year(), now.Month(), now.Day(), 0, 0, 0, 0, g.loc()).AddDate(0, 0, 1)
	return until.AddDate(0, 0, -30), until
}

// Start is the start of the group an hour falls in.
func (g Grouping) Start(t time.Time) time.Time {
	t = t.In(g.loc())
	switch g.Period {
	case ByHour:
		return t.Truncate(time.Hour)
	case ByMonth:
		return time.Date(t.Year(), t.Month(), 1, 0, 0, 0, 0, g.loc())
	}
	return time.Date(t.Year(), t.Month(), t.Day(), 0, 0, 0, 0, g.loc())
}

// Next is the start of the group after the one starting at t.
func (g Grouping) Next(t time.Time) time.Time {
	switch g.Period {
	case ByHour:
		return t.Add(time.Hour)
	case ByMonth:
		return t.AddDate(0, 1, 0)
	}
	return t.AddDate(0, 0, 1)
}

// Point is one group of a listing's series.
type Point struct {
	Start time.Time
	Traffic
	Money
	// Unpriced counts the requests served before the listing's first fare
	// (in Requests, earning nothing).
	Unpriced int64
	// ModelRequests is every listing of the model together (the listing's
	// share is Requests / ModelRequests); competitors are never named.
	ModelRequests int64
	// TTFTMsSum, OutputTokens and DurationMs give speed.
	TTFTMsSum, DurationMs int64
}

// Share is the listing's share of its model's requests, or -1 without any.
func (p Point) Share() float64 {
	if p.ModelRequests <= 0 {
		return -1
	}
	return float64(p.Requests) / float64(p.ModelRequests)
}

// LatencyMs is the average time to first token, or -1.
func (p Point) LatencyMs() float64 {
	return catalogue.TTFTPerSuccess(p.TTFTMsSum, p.Requests-p.Errors-p.ClientErrors)
}

// Throughput is output tokens per second of generation, or -1.
func (p Point) Throughput() float64 { return catalogue.Speed(p.OutputTokens, p.DurationMs) }

// Series groups a listing's hours by period over [since, until), with
// earnings under the fare of each hour and the model's total for share.
// Every group of the window is present, empty ones included.
func Series(p Grouping, since, until time.Time, hours []catalogue.HourlyPoint, history []FareSpan, model map[time.Time]int64) []Point {
	var out []Point
	for t := p.Start(since); t.Before(until); t = p.Next(t) {
		out = append(out, Point{Start: t})
	}
	// The groups are in order: a group is found by its start, compared as
	// instants (the zone of a time is no part of it).
	index := func(t time.Time) (int, bool) {
		return slices.BinarySearchFunc(out, p.Start(t), func(pt Point, t time.Time) int { return pt.Start.Compare(t) })
	}
	sums := make([]Sum, len(out))
	for _, h := range hours {
		i, ok := index(h.Hour)
		if !ok {
			continue
		}
		sums[i].Add(h, FareAt(history, h.Hour))
		out[i].TTFTMsSum += h.TTFTMsSum
		out[i].DurationMs += h.DurationMs
	}
	for t, n := range model {
		if i, ok := index(t); ok {
			out[i].ModelRequests += n
		}
	}
	for i := range out {
		out[i].Traffic, out[i].Money, out[i].Unpriced = sums[i].Traffic, sums[i].Money(), sums[i].Unpriced
	}
	return out
}

// Incident is a run of hours whose uptime stayed under the 95 % line.
type Incident struct {
	Start, End time.Time // End is the end of the last hour under the line
	Worst      float64
	Failed     int64 // requests that failed for the listing's reasons
	Requests   int64
}

// UptimeLine is where the uptime penalty starts.
const UptimeLine = election.PenaltyUptime / 100

// minIncidentRequests keeps an hour of a handful of requests from making an
// incident of one unlucky failure.
const minIncidentRequests = 20

// Incidents finds the runs of consecutive hours under the 95 % line, oldest
// first. Hours are used because minute buckets are kept only a day; an
// outage of a few minutes inside a busy hour may not cross the line.
func Incidents(hours []catalogue.HourlyPoint) []Incident {
	var out []Incident
	var cur *Incident
	for _, h := range hours {
		up := TrafficOf([]catalogue.HourlyPoint{h}).Uptime()
		below := h.Requests-h.ClientErrors >= minIncidentRequests && up >= 0 && up < UptimeLine
		if !below {
			cur = nil
			continue
		}
		if cur == nil || !cur.End.Equal(h.Hour) {
			out = append(out, Incident{Start: h.Hour, Worst: up})
			cur = &out[len(out)-1]
		}
		cur.End = h.Hour.Add(time.Hour)
		cur.Worst = min(cur.Worst, up)
		cur.Failed += h.Errors
		cur.Requests += h.Requests
	}
	return out
}

// CapAdvice says what a per-minute cap cost: the requests turned away, and
// the cap that would have served the busiest hour (its requests, served and
// turned away, spread over its minutes, rounded up to a ten). Hours hide
// bursts within them, so the figure is a floor.
func CapAdvice(hours []catalogue.HourlyPoint) (capped, suggestRPM int64) {
	var busiest int64
	for _, h := range hours {
		capped += h.Capped
		if h.Capped > 0 {
			busiest = max(busiest, h.Requests+h.Capped)
		}
	}
	if capped == 0 {
		return 0, 0
	}
	perMinute := (busiest + 59) / 60
	return capped, (perMinute + 9) / 10 * 10
}

// ShareAround is a listing's share of its model's requests over the span
// before at and the span from at: what a fare change did, compared over the
// same hours of the week when span is whole weeks. -1 means no traffic.
func ShareAround(hours []catalogue.HourlyPoint, model map[time.Time]int64, at time.Time, span time.Duration) (before, after float64) {
	var mine, all [2]int64
	side := func(t time.Time) int {
		switch {
		case !t.Before(at.Add(-span)) && t.Before(at):
			return 0
		case !t.Before(at) && t.Before(at.Add(span)):
			return 1
		}
		return -1
	}
	for _, h := range hours {
		if i := side(h.Hour); i >= 0 {
			mine[i] += h.Requests
		}
	}
	for t, n := range model {
		if i := side(t); i >= 0 {
			all[i] += n
		}
	}
	ratio := func(i int) float64 {
		if all[i] == 0 {
			return -1
		}
		return float64(mine[i]) / float64(all[i])
	}
	return ratio(0), ratio(1)
}
