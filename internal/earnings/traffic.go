package earnings

import (
	"time"

	"github.com/airside/airside/internal/catalogue"
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

// Window is the span a period shows at now: [Since, Until).
func (p Period) Window(now time.Time) (since, until time.Time) {
	now = now.UTC()
	switch p {
	case ByHour:
		until = now.Truncate(time.Hour).Add(time.Hour)
		return until.Add(-48 * time.Hour), until
	case ByMonth:
		until = MonthOf(now).AddDate(0, 1, 0)
		return until.AddDate(-1, 0, 0), until
	}
	until = time.Date(now.Year(), now.Month(), now.Day(), 0, 0, 0, 0, time.UTC).AddDate(0, 0, 1)
	return until.AddDate(0, 0, -30), until
}

// Start is the start of the group an hour falls in.
func (p Period) Start(t time.Time) time.Time {
	t = t.UTC()
	switch p {
	case ByHour:
		return t.Truncate(time.Hour)
	case ByMonth:
		return MonthOf(t)
	}
	return time.Date(t.Year(), t.Month(), t.Day(), 0, 0, 0, 0, time.UTC)
}

// Next is the start of the group after the one starting at t.
func (p Period) Next(t time.Time) time.Time {
	switch p {
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
	ok := p.Requests - p.Errors - p.ClientErrors
	if ok <= 0 || p.TTFTMsSum <= 0 {
		return -1
	}
	return float64(p.TTFTMsSum) / float64(ok)
}

// Throughput is output tokens per second of generation, or -1.
func (p Point) Throughput() float64 {
	if p.DurationMs <= 0 {
		return -1
	}
	return float64(p.OutputTokens) / (float64(p.DurationMs) / 1000)
}

// Series groups a listing's hours by period over [since, until), with
// earnings under the fare of each hour and the model's total for share.
// Every group of the window is present, empty ones included.
func Series(p Period, since, until time.Time, hours []catalogue.HourlyPoint, history []FareSpan, model map[time.Time]int64) []Point {
	var out []Point
	index := map[time.Time]int{}
	for t := p.Start(since); t.Before(until); t = p.Next(t) {
		index[t] = len(out)
		out = append(out, Point{Start: t})
	}
	sums := make([]Sum, len(out))
	for _, h := range hours {
		i, ok := index[p.Start(h.Hour)]
		if !ok {
			continue
		}
		sums[i].Add(h, FareAt(history, h.Hour))
		out[i].TTFTMsSum += h.TTFTMsSum
		out[i].DurationMs += h.DurationMs
	}
	for t, n := range model {
		if i, ok := index[p.Start(t)]; ok {
			out[i].ModelRequests += n
		}
	}
	for i := range out {
		out[i].Traffic, out[i].Money = sums[i].Traffic, sums[i].Money()
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
const UptimeLine = 0.95

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
		tr := Traffic{Requests: h.Requests, Errors: h.Errors, ClientErrors: h.ClientErrors}
		up := tr.Uptime()
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
