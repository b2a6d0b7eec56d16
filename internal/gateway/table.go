package gateway

import (
	"encoding/json"
	"fmt"
	"strings"

	"github.com/airside/airside/internal/election"
	"github.com/airside/airside/internal/gatewayclient"
	"github.com/airside/airside/internal/traffic"
)

// Table is the catalogue at one revision as the gateway routes by it: each
// model's ballot, decoded once per catalogue read.
type Table struct {
	Revision int64
	Models   map[string]*Market
	// catalogue and health are what the follower built the table from
	// (nil for a table built elsewhere), kept for the routing snapshot.
	catalogue *gatewayclient.Catalogue
	health    map[int64]gatewayclient.Health
}

// Market is one model's candidates and where each is served. Candidates and
// Listings are in the same order.
type Market struct {
	Candidates []election.Candidate
	Listings   []Route
}

// Route is where a candidate's requests go.
type Route struct {
	ID        string // "carrier/model", the candidate id
	ListingID int64
	Revision  int64
	PerOrg    bool
	BaseURL   string
}

// Carrier is the listing's carrier slug, the part of its id before "/".
func (r Route) Carrier() string {
	carrier, _, _ := strings.Cut(r.ID, "/")
	return carrier
}

// contractCandidate is a catalogue listing in the election contract's words:
// the catalogue's field names already follow it but for the capabilities
// (a list there, a set here). The cache-hit rate is left out: the gateway
// ranks on what it learned of each project's own traffic (seed 001).
type contractCandidate struct {
	ID           string             `json:"id"`
	Priority     float64            `json:"priority"`
	Capabilities map[string]bool    `json:"capabilities"`
	Metrics      contractMetrics    `json:"metrics"`
	Fare         gatewayclient.Fare `json:"fare"`
}

type contractMetrics struct {
	Uptime     *float64 `json:"uptime"`
	LatencyMs  *float64 `json:"latencyMs"`
	Throughput *float64 `json:"throughput"`
}

// BuildTable turns a catalogue and its listings' health (by listing id; a
// listing without any is unmeasured, and takes the model's median health)
// into ballots through the election
// contract's own decoder, so a fare reads the same here as in `airside
// elect`. Only listings in service with an endpoint can serve; paused and
// delisted ones stay off.
func BuildTable(cat *gatewayclient.Catalogue, health map[int64]gatewayclient.Health) (*Table, error) {
	byModel := map[string][]contractCandidate{}
	samples := map[string][]float64{}
	routes := map[string][]Route{}
	for _, l := range cat.Listings {
		if l.Endpoint == nil || l.Status != gatewayclient.InService {
			continue
		}
		caps := make(map[string]bool, len(l.Capabilities))
		for _, c := range l.Capabilities {
			caps[string(c)] = true
		}
		h := health[l.ListingId]
		byModel[l.Model] = append(byModel[l.Model], contractCandidate{ID: l.Id, Priority: l.Priority, Capabilities: caps,
			Metrics: contractMetrics{Uptime: h.Uptime, LatencyMs: h.LatencyMs, Throughput: h.Throughput},
			Fare:    l.Fare})
		samples[l.Model] = append(samples[l.Model], traffic.PeerSample(h.Requests))
		routes[l.Model] = append(routes[l.Model], Route{ID: l.Id, ListingID: l.ListingId, Revision: l.Revision,
			PerOrg: l.Fare.CapScope == "per_org", BaseURL: l.Endpoint.BaseUrl})
	}
	t := &Table{Revision: cat.Revision, Models: make(map[string]*Market, len(byModel))}
	for model, cands := range byModel {
		data, err := json.Marshal(map[string]any{"request": map[string]any{"model": model}, "candidates": cands})
		if err != nil {
			return nil, fmt.Errorf("catalogue model %s: %w", model, err)
		}
		b, err := election.UnmarshalBallot(data)
		if err != nil {
			return nil, fmt.Errorf("catalogue model %s: %w", model, err)
		}
		// Health with little traffic starts as a typical peer (election
		// spec section 4), as the portal's elections blend it.
		traffic.BlendWithPeers(b.Candidates, samples[model])
		t.Models[model] = &Market{Candidates: b.Candidates, Listings: routes[model]}
	}
	return t, nil
}

// index is the position of a candidate id in the market, -1 when absent.
func (m *Market) index(id string) int {
	for i := range m.Listings {
		if m.Listings[i].ID == id {
			return i
		}
	}
	return -1
}
