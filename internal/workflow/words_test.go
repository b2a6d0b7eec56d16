package workflow

import (
	"strings"
	"testing"

	"github.com/airside/airside/internal/catalogue"
	"github.com/airside/airside/internal/fare"
)

// TestNoticePreflightNamesTheModel: the inbox says which listing's probes
// finished by its model, not only by a number (issue 29 L13).
func TestNoticePreflightNamesTheModel(t *testing.T) {
	msg := NoticePreflight("Kimi K2.5", 27, 5, 1, false)
	if msg != "Preflight of Kimi K2.5 (listing #27) finished: 5 probes passed, 1 failed." {
		t.Errorf("notice %q", msg)
	}
	if !strings.Contains(NoticePreflight("GLM-5", 3, 4, 0, true), "prefix caching") {
		t.Error("a cached price without cache hits is not explained")
	}
}

// TestAPauseFilingSaysTheStatusItLeaves: the change summary of a pause or
// resume names the status before as well as after (issue 29 L11).
func TestAPauseFilingSaysTheStatusItLeaves(t *testing.T) {
	for target, from := range map[catalogue.ListingStatus]string{catalogue.StatusPaused: "in service", catalogue.StatusInService: "paused"} {
		f := &Filing{Kinds: []fare.Kind{fare.KindPause}, TargetStatus: target}
		changes := f.Changes()
		if len(changes) != 1 || changes[0].Old != from || changes[0].New != target.Label() {
			t.Errorf("to %s: %+v, want from %q", target, changes, from)
		}
	}
}
