package workflow

import (
	"testing"
	"time"
)

func TestEstimateReview(t *testing.T) {
	h := time.Hour
	for _, test := range []struct {
		name        string
		durations   []time.Duration
		known       bool
		median, p90 time.Duration
	}{
		{"too few to say", []time.Duration{h, 2 * h, 3 * h, 4 * h}, false, 0, 0},
		{"five", []time.Duration{5 * h, h, 3 * h, 2 * h, 4 * h}, true, 3 * h, 5 * h},
		{"ten, one slow", []time.Duration{h, h, h, 2 * h, 2 * h, 2 * h, 3 * h, 3 * h, 4 * h, 48 * h}, true, 2 * h, 4 * h},
		{"all equal", []time.Duration{30 * time.Minute, 30 * time.Minute, 30 * time.Minute, 30 * time.Minute, 30 * time.Minute}, true, 30 * time.Minute, 30 * time.Minute},
	} {
		t.Run(test.name, func(t *testing.T) {
			e := EstimateReview(test.durations, 7)
			if e.Known != test.known || e.Median != test.median || e.P90 != test.p90 || e.Reviews != len(test.durations) || e.Waiting != 7 {
				t.Errorf("got %+v, want known %v, median %s, p90 %s", e, test.known, test.median, test.p90)
			}
		})
	}
}
