package traffic

import (
	"math"
	"testing"

	"github.com/airside/airside/internal/election"
)

func f(v float64) *float64 { return &v }

// TestBlendWithPeers: the section 4 blend, figure by figure.
func TestBlendWithPeers(t *testing.T) {
	type fig struct {
		uptime, latency *float64
		n               float64
	}
	for _, test := range []struct {
		name        string
		in          []fig
		wantUptime  []*float64
		wantLatency []*float64
	}{
		{"one failure in two requests barely moves a listing among good peers",
			[]fig{{f(50), f(500), 2}, {f(99), f(400), 500}, {f(100), f(600), 500}, {f(98), f(800), 500}},
			// median of 50, 98, 99, 100 is 98.5; (2x50 + 20x98.5)/22
			[]*float64{f((2*50 + 20*98.5) / 22.0), f((500*99 + 20*98.5) / 520.0), f((500*100 + 20*98.5) / 520.0), f((500*98 + 20*98.5) / 520.0)},
			[]*float64{f((2*500 + 20*550) / 22.0), f((500*400 + 20*550) / 520.0), f((500*600 + 20*550) / 520.0), f((500*800 + 20*550) / 520.0)}},
		{"a listing with no figures starts as the median",
			[]fig{{nil, nil, 0}, {f(90), f(300), 100}, {f(100), f(500), 100}},
			[]*float64{f(95), f((100*90 + 20*95) / 120.0), f((100*100 + 20*95) / 120.0)},
			[]*float64{f(400), f((100*300 + 20*400) / 120.0), f((100*500 + 20*400) / 120.0)}},
		{"unknown n: own figures stand, missing ones take the median",
			[]fig{{f(80), nil, -1}, {f(100), f(200), -1}, {nil, nil, -1}},
			[]*float64{f(80), f(100), f(90)},
			[]*float64{f(200), f(200), f(200)}},
		{"no listing has a figure: nothing to blend", []fig{{nil, nil, 0}, {nil, nil, 3}},
			[]*float64{nil, nil}, []*float64{nil, nil}},
		{"one listing alone keeps its figures", []fig{{f(50), f(900), 2}},
			[]*float64{f(50)}, []*float64{f(900)}},
	} {
		t.Run(test.name, func(t *testing.T) {
			cands := make([]election.Candidate, len(test.in))
			samples := make([]float64, len(test.in))
			shared := make([]election.Metrics, len(test.in))
			for i, in := range test.in {
				cands[i].Metrics = election.Metrics{Uptime: in.uptime, LatencyMs: in.latency}
				shared[i] = cands[i].Metrics
				samples[i] = in.n
			}
			BlendWithPeers(cands, samples)
			for i := range cands {
				check := func(what string, got, want *float64) {
					if (got == nil) != (want == nil) || got != nil && math.Abs(*got-*want) > 1e-9 {
						t.Errorf("candidate %d %s: %v, want %v", i, what, deref(got), deref(want))
					}
				}
				check("uptime", cands[i].Metrics.Uptime, test.wantUptime[i])
				check("latency", cands[i].Metrics.LatencyMs, test.wantLatency[i])
				// The figures are replaced, not written through.
				if in := test.in[i].uptime; in != nil && *shared[i].Uptime != *in {
					t.Errorf("candidate %d: the original uptime was written through", i)
				}
			}
		})
	}
}

func deref(p *float64) any {
	if p == nil {
		return nil
	}
	return *p
}
