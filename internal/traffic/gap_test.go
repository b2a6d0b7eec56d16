package traffic

import (
	"math"
	"slices"
	"testing"
)

func TestExplainShareAddsUpAndNamesEachCause(t *testing.T) {
	for _, tc := range []struct {
		name  string
		p     Projection
		c     ShareCounts
		want  map[string]float64 // cause -> points
		named []string           // causes of at least 1 point, largest first
	}{
		{"the holder as projected", Projection{Total: 0.99}, ShareCounts{ModelRequests: 1000, Requests: 990, Routed: 990},
			map[string]float64{CauseElection: 0}, nil},
		{"a non-holder that got its exploration", Projection{Total: 0.0025, Exploration: 0.0025}, ShareCounts{ModelRequests: 1000, Requests: 3, Exploration: 3},
			map[string]float64{CauseExploration: 0.05}, nil},
		{"pins and fallbacks bring more", Projection{Total: 0.0025, Exploration: 0.0025},
			ShareCounts{ModelRequests: 1000, Requests: 63, Exploration: 3, Pinned: 40, Fallback: 20},
			map[string]float64{CausePins: 4, CauseFallbacks: 2}, []string{CausePins, CauseFallbacks}},
		{"pins the projection replayed are no cause", Projection{Total: 0.3025, Exploration: 0.0025, Pinned: 0.3},
			ShareCounts{ModelRequests: 1000, Requests: 310, Exploration: 3, Pinned: 307},
			map[string]float64{CausePins: 0.7, CauseElection: 0}, nil},
		{"a cap turns the holder's requests away", Projection{Total: 0.99},
			ShareCounts{ModelRequests: 1000, Requests: 720, Routed: 700, Failed: 20, Capped: 290},
			map[string]float64{CauseElection: 0, CauseCaps: -29, CauseFailures: 2}, []string{CauseCaps, CauseFailures}},
		{"the endpoint answers 429s, retried elsewhere", Projection{Total: 0.99},
			ShareCounts{ModelRequests: 1000, Requests: 850, Routed: 850, RateLimited: 140},
			map[string]float64{CauseElection: 0, CauseRateLimited: -14}, []string{CauseRateLimited}},
		{"the next best takes what the holder's cap turned away", Projection{Total: 0.005, Exploration: 0.005},
			ShareCounts{ModelRequests: 1000, Requests: 305, Routed: 300, Exploration: 5, OthersCapped: 340},
			map[string]float64{CauseOthersCaps: 30, CauseElection: 0}, []string{CauseOthersCaps}},
		{"a session carried over after losing the shape", Projection{Total: 0.0025, Exploration: 0.0025},
			ShareCounts{ModelRequests: 1000, Requests: 150, Routed: 150},
			map[string]float64{CauseElection: 15, CauseExploration: -0.25}, []string{CauseElection}},
		{"customers' preferences kept requests away", Projection{Total: 0.99},
			ShareCounts{ModelRequests: 1000, Requests: 700, Routed: 700, PreferenceHeld: 250},
			map[string]float64{CausePreferences: -24.75, CauseElection: -4.25}, []string{CausePreferences, CauseElection}},
		{"preferences do not explain more than was lost", Projection{Total: 0.5},
			ShareCounts{ModelRequests: 1000, Requests: 490, Routed: 490, PreferenceHeld: 600},
			map[string]float64{CausePreferences: -1, CauseElection: 0}, []string{CausePreferences}},
		{"the latency backoff held the holder out for a while", Projection{Total: 0.99},
			ShareCounts{ModelRequests: 1000, Requests: 880, Routed: 880, SlowHeld: 100},
			map[string]float64{CauseSlow: -9.9, CauseElection: -1.1}, []string{CauseSlow, CauseElection}},
		{"a latency backoff does not explain more than was lost", Projection{Total: 0.5},
			ShareCounts{ModelRequests: 1000, Requests: 480, Routed: 480, SlowHeld: 200},
			map[string]float64{CauseSlow: -2, CauseElection: 0}, []string{CauseSlow}},
		{"history without labels", Projection{Total: 0.5}, ShareCounts{ModelRequests: 100, Requests: 50},
			map[string]float64{CauseElection: -50, CauseUnlabelled: 50}, []string{CauseElection, CauseUnlabelled}},
		{"no traffic at all", Projection{Total: 0.99}, ShareCounts{}, map[string]float64{CauseElection: -99}, []string{CauseElection}},
	} {
		g := ExplainShare(tc.p, tc.c)
		sum := 0.0
		got := map[string]float64{}
		for _, c := range g.Causes {
			sum += c.Points
			got[c.Key] = c.Points
			if c.Name == "" {
				t.Errorf("%s: cause %s has no name", tc.name, c.Key)
			}
		}
		if math.Abs(sum-g.Gap) > 1e-9 || math.Abs(g.Gap-(g.Measured-g.Projected)) > 1e-9 {
			t.Errorf("%s: causes add up to %v, the gap is %v (measured %v, projected %v)", tc.name, sum, g.Gap, g.Measured, g.Projected)
		}
		for key, want := range tc.want {
			if math.Abs(got[key]-want) > 1e-9 {
				t.Errorf("%s: %s %v points, want %v", tc.name, key, got[key], want)
			}
		}
		var named []string
		for _, c := range g.Named(1) {
			named = append(named, c.Key)
		}
		if len(named) != len(tc.named) {
			t.Errorf("%s: named %v, want %v", tc.name, named, tc.named)
			continue
		}
		for i := range named {
			if named[i] != tc.named[i] {
				t.Errorf("%s: named %v, want %v", tc.name, named, tc.named)
			}
		}
	}
}

// TestAGapOfSmallPartsNamesItsLargest: a gap over a point made only of
// parts under a point names its largest part in the gap's direction; a
// gap under a point names nothing.
func TestAGapOfSmallPartsNamesItsLargest(t *testing.T) {
	for _, tc := range []struct {
		name  string
		gap   ShareGap
		named []string
	}{
		{"small parts", ShareGap{Gap: 1.4, Causes: []Cause{{Key: CauseElection, Points: 0.9}, {Key: CauseExploration, Points: 0.7}, {Key: CausePins, Points: -0.2}}},
			[]string{CauseElection}},
		{"against the gap", ShareGap{Gap: -1.2, Causes: []Cause{{Key: CauseElection, Points: 0.5}, {Key: CauseFallbacks, Points: -0.9}, {Key: CausePins, Points: -0.8}}},
			[]string{CauseFallbacks}},
		{"under a point", ShareGap{Gap: 0.8, Causes: []Cause{{Key: CauseElection, Points: 0.8}}}, nil},
		{"a part of a point", ShareGap{Gap: 1.5, Causes: []Cause{{Key: CauseElection, Points: 1.1}, {Key: CausePins, Points: 0.4}}},
			[]string{CauseElection}},
	} {
		var named []string
		for _, c := range tc.gap.Named(1) {
			named = append(named, c.Key)
		}
		if !slices.Equal(named, tc.named) {
			t.Errorf("%s: named %v, want %v", tc.name, named, tc.named)
		}
	}
}
