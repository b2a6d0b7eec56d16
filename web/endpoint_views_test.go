package web

import (
	"strings"
	"testing"
	"time"

	"github.com/airside/airside/internal/catalogue"
	"github.com/airside/airside/internal/preflight"
)

// TestPreflightRunLabelSaysQueuedOrRunning: a queued run is not said to
// have started (issue 29 L12); a running one says when it was queued.
func TestPreflightRunLabelSaysQueuedOrRunning(t *testing.T) {
	now := time.Date(2026, 12, 2, 10, 0, 0, 0, time.UTC)
	ep := &catalogue.Endpoint{ID: 3, BaseURL: "https://api.nebula.example/v1", UpstreamModel: "kimi"}
	l := &catalogue.Listing{ID: 27, Endpoint: ep}
	for state, want := range map[preflight.RunState]string{
		preflight.RunQueued:  "Run #9 queued 5 min ago; it starts when a probe slot is free",
		preflight.RunRunning: "Run #9 running (queued 5 min ago)",
	} {
		run := &preflight.Run{ID: 9, ListingID: 27, EndpointID: 3, State: state, CreatedAt: now.Add(-5 * time.Minute)}
		v := preflightView("", l, ep, run, nil, false, now)
		if v.RunLabel != want {
			t.Errorf("%s: %q, want %q", state, v.RunLabel, want)
		}
		if state == preflight.RunQueued && strings.Contains(v.RunLabel, "started") {
			t.Error("a queued run is said to have started")
		}
	}
}
