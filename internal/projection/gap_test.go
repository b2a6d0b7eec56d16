package projection

import (
	"math"
	"testing"
	"time"

	"github.com/airside/airside/internal/catalogue"
	"github.com/airside/airside/internal/preview"
	"github.com/airside/airside/internal/traffic"
)

func TestSlowHeldTakesEachLatencyBackoffAsItsHold(t *testing.T) {
	for _, tc := range []struct {
		name            string
		backoffs, model int64
		want            int64
	}{
		{"none", 0, 6000, 0},
		{"one holds a minute of the hour", 1, 6000, 100},
		{"three", 3, 6000, 300},
		{"more than the hour holds", 90, 6000, 6000},
		{"no requests for the model", 2, 0, 0},
	} {
		if got := slowHeld(tc.backoffs, tc.model); got != tc.want {
			t.Errorf("%s: slowHeld(%d, %d) = %d, want %d", tc.name, tc.backoffs, tc.model, got, tc.want)
		}
	}
}

// A holder projected at 99 % that served less after the gateway held it
// back for slow first tokens: without the shapes' holders reported, the gap
// names the latency backoff with its size, from the backoffs reported, and
// leaves the rest to the election; with them, it names no backoff.
func TestGapNamesTheLatencyBackoffWithItsSize(t *testing.T) {
	h := time.Date(2026, 12, 4, 13, 0, 0, 0, time.UTC)
	hour := func(at time.Time, routed, slow int64) catalogue.HourlyPoint {
		p := catalogue.HourlyPoint{Hour: at}
		p.Requests, p.Routed, p.SlowBackoffs = routed, routed, slow
		return p
	}
	hours := []catalogue.HourlyPoint{hour(h, 5400, 6), hour(h.Add(time.Hour), 5940, 0)}
	model := map[time.Time]int64{h: 6000, h.Add(time.Hour): 6000}
	g, n := Gap(preview.Share{Total: 0.99}, Past{}, h, hours, model, 0)
	if n != 12000 {
		t.Fatalf("model requests %d, want 12000", n)
	}
	points := map[string]float64{}
	for _, c := range g.Causes {
		points[c.Key] = c.Points
	}
	// 6 backoffs hold the listing out 6 minutes of the first hour: 600 of
	// the model's requests, 99 % of them projected here (4.95 points of
	// 12,000); served 11,340 against 11,880 projected, 4.5 points short.
	if want := -4.5; math.Abs(points[traffic.CauseSlow]-want) > 1e-9 || math.Abs(points[traffic.CauseElection]) > 1e-9 {
		t.Errorf("slow %v points, election %v points; want %v and 0 (the backoff explains no more than was lost)", points[traffic.CauseSlow], points[traffic.CauseElection], want)
	}
	named := g.Named(1)
	if len(named) != 1 || named[0].Key != traffic.CauseSlow {
		t.Errorf("named causes %+v, want the latency backoff alone", named)
	}
	// Where the gateway reported the shapes' holders, the replay followed
	// the slow incumbent's loss from the next minute's first election: what
	// is left is no backoff's.
	followed := Past{hours: []time.Time{h, h.Add(time.Hour)}, capped: []int64{0, 0}, reported: []bool{true, true}}
	g, _ = Gap(preview.Share{Total: 0.99}, followed, h, hours, model, 0)
	for _, c := range g.Causes {
		if c.Key == traffic.CauseSlow && c.Points != 0 {
			t.Errorf("with the holders reported, the latency backoff is still named: %v points", c.Points)
		}
	}
}

// A listing that keeps prompts, projected at 60 %, served less because a
// fifth of the model's requests asked for zero data retention: the gap
// names the customers' preferences, up to the projected share of those.
func TestGapNamesTheCustomersPreferences(t *testing.T) {
	h := time.Date(2026, 12, 4, 13, 0, 0, 0, time.UTC)
	p := catalogue.HourlyPoint{Hour: h}
	p.Requests, p.Routed = 480, 480
	g, _ := Gap(preview.Share{Total: 0.6}, Past{}, h, []catalogue.HourlyPoint{p}, map[time.Time]int64{h: 1000}, 200)
	points := map[string]float64{}
	for _, c := range g.Causes {
		points[c.Key] = c.Points
	}
	// 200 requests asked what it lacks, 60 % of them projected here: 12
	// points, exactly the 12 it was short.
	if math.Abs(points[traffic.CausePreferences]+12) > 1e-9 || math.Abs(points[traffic.CauseElection]) > 1e-9 {
		t.Errorf("preferences %v points, election %v points; want -12 and 0", points[traffic.CausePreferences], points[traffic.CauseElection])
	}
}
