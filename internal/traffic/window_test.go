package traffic

import (
	"math/rand/v2"
	"testing"
	"time"
)

// TestAWindowSumsItsOwnSeconds holds window, which looks only at the
// window's own seconds, to a scan of the whole ring: slots of the window,
// older ones not yet overwritten, and ones later than the reading (a try
// recorded a moment after another read) over random rings and windows.
func TestAWindowSumsItsOwnSeconds(t *testing.T) {
	rng := rand.New(rand.NewPCG(3, 5))
	base := int64(1_800_000_000)
	for range 2000 {
		var s limited
		for range rng.IntN(3 * ringSeconds) {
			sec := base + rng.Int64N(3*int64(ringSeconds))
			slot := &s.seconds[int(sec%int64(ringSeconds))]
			if slot.at < sec {
				*slot = second{at: sec}
			}
			slot.tries++
			slot.counted += rng.Int64N(2)
			slot.ttftSum += time.Duration(rng.IntN(1000)) * time.Millisecond
		}
		at := time.Unix(base+rng.Int64N(4*int64(ringSeconds)), 0)
		d := []time.Duration{BackoffBurstWindow, SlowWindow, BreakerWindow}[rng.IntN(3)]
		var want second
		from, now := at.Unix()-int64(d/time.Second)+1, at.Unix()
		for _, x := range s.seconds {
			if x.at >= from && x.at <= now {
				want.tries += x.tries
				want.counted += x.counted
				want.ttftSum += x.ttftSum
			}
		}
		got := s.window(at, d)
		if got.tries != want.tries || got.counted != want.counted || got.ttftSum != want.ttftSum {
			t.Fatalf("window(%d, %s) = %+v, a scan of the ring %+v", now, d, got, want)
		}
	}
}
