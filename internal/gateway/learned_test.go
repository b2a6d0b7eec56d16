package gateway

import (
	"testing"
	"time"
)

// TestLearnedRatesNotAskedForADayAreDropped: the gateway's cache of learned
// rates keeps what routing asks for and drops a model's entry once nothing
// has asked for it in a day, as others are refreshed.
func TestLearnedRatesNotAskedForADayAreDropped(t *testing.T) {
	g := &Gateway{Recorder: NewRecorder()}
	now := time.Date(2026, 12, 4, 10, 0, 0, 0, time.UTC)
	g.learned("p", "old-model", now)
	g.learned("p", "kept-model", now.Add(12*time.Hour))
	g.learned("p", "new-model", now.Add(25*time.Hour))
	g.rates.mu.Lock()
	defer g.rates.mu.Unlock()
	_, old := g.rates.by[[2]string{"p", "old-model"}]
	_, kept := g.rates.by[[2]string{"p", "kept-model"}]
	if old || !kept || len(g.rates.by) != 2 {
		t.Errorf("entries %v: want kept-model and new-model only", g.rates.by)
	}
}
