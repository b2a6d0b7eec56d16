package traffic

import (
	"sync"

	"github.com/airside/airside/internal/election"
)

// Shape groups requests whose elections are alike: the incumbent, stability
// and exploration are per shape.
type Shape struct {
	Model         string
	Mode          election.Mode
	Workload      election.Workload
	CacheRelevant bool
}

// ShapeOf is the shape of a request.
func ShapeOf(req *election.Request) Shape {
	return Shape{Model: req.Model, Mode: req.Routing, Workload: req.Workload,
		CacheRelevant: req.SessionOpening || req.PromptTokens >= election.CachePromptTokens}
}

// The stable-preference line: an incumbent keeps its shape while its uptime
// is at least MinStableUptime and no challenger's score is more than
// IncumbentMargin lower.
const (
	MinStableUptime = election.StableUptime
	IncumbentMargin = election.IncumbentMargin
)

// ExplorationRate is the share of routed auto requests sent to a uniformly
// random eligible candidate other than the incumbent.
const ExplorationRate = 0.01

// UptimeOf is a candidate's uptime as the score reads it: missing is 100.
func UptimeOf(c *election.Candidate) float64 {
	if c.Metrics.Uptime == nil {
		return 100
	}
	return *c.Metrics.Uptime
}

// Holder decides, under the stable-preference rule, which eligible candidate
// of res serves a shape whose incumbent is the candidate id incumbent (""
// for none): the incumbent while it is eligible, at or above
// MinStableUptime and within IncumbentMargin of the winner; otherwise the
// winner. It returns the index in the ballot (-1 when no one is eligible)
// and whether the incumbent kept it.
func Holder(b *election.Ballot, res *election.Result, incumbent string) (int, bool) {
	if res.Winner < 0 {
		return -1, false
	}
	for i := range res.Candidates {
		if res.Candidates[i].ID == incumbent {
			if Keeps(b, res, i) {
				return i, true
			}
			break
		}
	}
	return res.Winner, false
}

// Keeps reports whether candidate i of res, as its shape's incumbent, keeps
// the shape under the stable-preference rule: eligible, at or above
// MinStableUptime and within IncumbentMargin of the winner.
func Keeps(b *election.Ballot, res *election.Result, i int) bool {
	o := &res.Candidates[i]
	return res.Winner >= 0 && o.Eligible && UptimeOf(&b.Candidates[i]) >= MinStableUptime &&
		o.Score-res.Candidates[res.Winner].Score <= IncumbentMargin
}

// Incumbents remembers each shape's incumbent. Safe for concurrent use.
type Incumbents struct {
	mu sync.Mutex
	by map[Shape]string
}

// Hold applies Holder to a shape's election and records the holder as the
// shape's incumbent (HoldAfter says which).
func (in *Incumbents) Hold(shape Shape, b *election.Ballot, res *election.Result) int {
	in.mu.Lock()
	defer in.mu.Unlock()
	if in.by == nil {
		in.by = map[Shape]string{}
	}
	i, next := HoldAfter(in.by[shape], b, res)
	if next != "" {
		in.by[shape] = next
	}
	return i
}

// HoldAfter is a shape's election with its incumbent, under the gateway's
// limits (election.md sec. 8): the index of the holder (Holder), and the
// incumbent to record after it ("" to leave it as it is). An incumbent the
// 429 backoff or the breaker holds back for now keeps the shape for when
// it is back (the winner serves meanwhile: a short-term backoff is not a
// lost election), while a slow one (the latency backoff) loses it to the
// winner. Pure, so a replica's memory and the fleet's Redis keep
// incumbents by one rule.
func HoldAfter(incumbent string, b *election.Ballot, res *election.Result) (int, string) {
	i, kept := Holder(b, res, incumbent)
	if kept && i != res.Winner && b.Candidates[i].State.Slow {
		i, kept = res.Winner, false
	}
	if i < 0 {
		return i, ""
	}
	if !kept && heldBack(res, incumbent) {
		return i, ""
	}
	if id := res.Candidates[i].ID; id != incumbent {
		return i, id
	}
	return i, ""
}

// Of is a shape's incumbent ("" when it has none).
func (in *Incumbents) Of(shape Shape) string {
	in.mu.Lock()
	defer in.mu.Unlock()
	return in.by[shape]
}

// heldBack reports whether the candidate id is on res only excluded by the
// gateway's limits.
func heldBack(res *election.Result, id string) bool {
	for j := range res.Candidates {
		if res.Candidates[j].ID == id {
			return res.Candidates[j].Excluded.Limited()
		}
	}
	return false
}

// Explore draws whether a routed request explores and where: under auto
// only, with probability ExplorationRate (draw and pick are uniform in
// [0, 1)), to a uniformly random eligible candidate other than the holder.
// Excluded and capped candidates are never explored: after a fall-open
// (every eligible candidate capped) nothing is. It returns the index and
// true, or -1 and false.
func Explore(req *election.Request, res *election.Result, holder int, draw, pick float64) (int, bool) {
	if req.Routing != election.ModeAuto || res.FellOpen || draw >= ExplorationRate {
		return -1, false
	}
	others := 0
	for i := range res.Candidates {
		if res.Candidates[i].Eligible && i != holder {
			others++
		}
	}
	if others == 0 {
		return -1, false
	}
	n := min(int(pick*float64(others)), others-1)
	for i := range res.Candidates {
		if !res.Candidates[i].Eligible || i == holder {
			continue
		}
		if n == 0 {
			return i, true
		}
		n--
	}
	return -1, false
}

// FallbackOrder is the order a request tries candidates in: first, then the
// rest by rank, at most MaxTries in all.
func FallbackOrder(res *election.Result, first int) []int {
	order := make([]int, 0, MaxTries)
	if first >= 0 {
		order = append(order, first)
	}
	for _, i := range res.Ranked() {
		if len(order) == MaxTries {
			break
		}
		if i != first {
			order = append(order, i)
		}
	}
	return order
}
