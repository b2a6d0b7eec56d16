package traffic

import (
	"github.com/airside/airside/internal/election"
)

// PeerWeight is the number of requests a model's median counts for when a
// listing's own health is blended with it (election spec section 4, "Health
// with little traffic"; seed 004: a new endpoint starts as a typical peer).
const PeerWeight = 20

// BlendWithPeers blends each candidate's uptime, latency and throughput with
// the model's median over the candidates that have the figure (the middle
// value, or the mean of the two middle ones), the candidate's own figure
// weighing n / (n + PeerWeight) for its n requests in the decay window:
// (n x own + 20 x median) / (n + 20), the median alone where the candidate
// has no figure, nothing where no candidate has one. A listing with two
// requests, one failed, is then about 95 % up, not 50 %: one failure does
// not move a model's traffic.
//
// samples[i] is candidate i's n; a negative n is unknown (a catalogue's
// stored figures, not measured by gateways): the candidate's own figures
// then stand as they are, and only a figure it lacks takes the median (a
// listing nobody has measured is a typical peer). cands are all of one
// model. The figures are replaced, never written
// through: a candidate's pointers may be shared with other ballots.
func BlendWithPeers(cands []election.Candidate, samples []float64) {
	if len(cands) < 2 {
		// One listing has no peers: its own figures stand, even when few.
		return
	}
	blend := func(get func(*election.Metrics) **float64) {
		var values []float64
		for i := range cands {
			if v := *get(&cands[i].Metrics); v != nil {
				values = append(values, *v)
			}
		}
		if len(values) == 0 {
			return
		}
		med := median(values)
		for i := range cands {
			n, p := samples[i], get(&cands[i].Metrics)
			if *p != nil && n < 0 {
				continue
			}
			v := med
			if *p != nil {
				v = (n**(*p) + PeerWeight*med) / (n + PeerWeight)
			}
			*p = &v
		}
	}
	blend(func(m *election.Metrics) **float64 { return &m.Uptime })
	blend(func(m *election.Metrics) **float64 { return &m.LatencyMs })
	blend(func(m *election.Metrics) **float64 { return &m.Throughput })
}

// PeerSample is a listing's n for BlendWithPeers from the requests its
// health figures rest on: -1 (unknown) when nobody reported them.
func PeerSample(requests *float64) float64 {
	if requests == nil {
		return -1
	}
	return *requests
}

// median is election.Median: one rule for the model's median everywhere.
func median(values []float64) float64 { return election.Median(values) }
