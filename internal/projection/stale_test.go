package projection

import (
	"maps"
	"testing"
	"time"

	"github.com/airside/airside/internal/catalogue"
)

// TestAViewTakesTheLastProjectionWhileTheNextIsWorkedOut: with StaleFor
// set, a view after a metric batch answers from the projection made before
// it without reading anything (the holders' reads are held shut); once
// that projection is refreshGap old the next is worked out in the
// background, and the view after that answers from it: what a batch moved
// (a gateway reporting b holding the shape) shows one view later. A projection older than StaleFor is not taken: that view
// projects anew before it answers.
func TestAViewTakesTheLastProjectionWhileTheNextIsWorkedOut(t *testing.T) {
	now := time.Date(2026, 11, 20, 14, 20, 0, 0, time.UTC)
	m := newMarket(now, 300000, 303000)
	pj := projectorOn(m, &now)
	pj.StaleFor = time.Minute
	defer pj.Wait()
	since, until, hour := now.Add(-26*time.Hour), now.Add(time.Hour), now.Truncate(time.Hour)
	first := hourShares(t, pj, &m.listings[1], since, until)

	// A batch, a view within refreshGap of the last projection: taken,
	// nothing projected.
	m.written++
	now = now.Add(refreshGap - time.Second)
	m.gate = make(chan struct{})
	if again := hourShares(t, pj, &m.listings[1], since, until); !maps.Equal(again, first) {
		t.Errorf("the view within %s of the last projection answered %v, want it %v", refreshGap, again, first)
	}
	pj.refreshes.mu.Lock()
	running := len(pj.refreshes.running)
	pj.refreshes.mu.Unlock()
	if running > 0 {
		close(m.gate)
		t.Fatalf("a view within %s of the last projection started %d background projections", refreshGap, running)
	}

	// Another batch after refreshGap: a gateway reports b holding the
	// small requests' shape since the hour began (b within a's incumbent
	// margin keeps it). Taken, and the next projection worked out.
	now = now.Add(time.Second)
	m.holders = append(m.holders, catalogue.ShapeHolder{Model: "glm-5", Workload: "general", ListingID: 2, Minute: hour})
	m.written++
	projected := pj.HoursProjected()
	answered := make(chan map[time.Time]float64, 1)
	go func() { answered <- hourShares(t, pj, &m.listings[1], since, until) }()
	select {
	case stale := <-answered:
		if !maps.Equal(stale, first) {
			t.Errorf("the view after the batch answered %v, want the projection before it %v", stale, first)
		}
	case <-time.After(30 * time.Second):
		close(m.gate)
		t.Fatal("the view after the batch waited on the holders' read: it projected instead of taking the last projection")
	}
	if got := pj.HoursProjected(); got != projected {
		t.Errorf("%d hours projected before the background's reads were let through", got-projected)
	}
	close(m.gate)
	pj.Wait()
	m.gate = nil

	reads, projected := m.reads, pj.HoursProjected()
	next := hourShares(t, pj, &m.listings[1], since, until)
	if m.reads != reads || pj.HoursProjected() != projected {
		t.Errorf("the view after the background projection read %d rollups and projected %d hours, want it taken", m.reads-reads, pj.HoursProjected()-projected)
	}
	if next[hour] < first[hour]+0.5 {
		t.Errorf("b projected %.3f of the hour after the batch, %.3f before: the batch's holder did not reach the next view", next[hour], first[hour])
	}
	if fresh := hourShares(t, projectorOn(m, &now), &m.listings[1], since, until); !maps.Equal(next, fresh) {
		t.Errorf("the background's projection %v differs from one worked out from nothing %v", next, fresh)
	}

	// Older than StaleFor: not taken; the view projects the batch inline.
	now = now.Add(pj.StaleFor)
	m.written++
	projected = pj.HoursProjected()
	hourShares(t, pj, &m.listings[1], since, until)
	if pj.HoursProjected() == projected {
		t.Errorf("a view %s after the last projection took it: want it projected anew", pj.StaleFor)
	}
}
