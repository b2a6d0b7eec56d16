package alerting

import (
	"os"
	"strings"
	"testing"
	"time"
)

// TestTheEventCatalogueIsComplete: the webhook event catalogue (docs/using.md)
// names every event and every alert kind a delivery can carry, so a
// carrier writing a receiver from it meets nothing unlisted.
func TestTheEventCatalogueIsComplete(t *testing.T) {
	readme, err := os.ReadFile("../../docs/using.md")
	if err != nil {
		t.Fatal(err)
	}
	_, section, ok := strings.Cut(string(readme), "**Webhook event catalogue.**")
	if !ok {
		t.Fatal("docs/using.md has no webhook event catalogue")
	}
	section, _, _ = strings.Cut(section, "\n\n**")
	for _, e := range Events {
		if !strings.Contains(section, "| `"+e+"` |") {
			t.Errorf("event %s has no row in the catalogue", e)
		}
	}
	for _, k := range Kinds {
		if !strings.Contains(section, "`"+string(k)+"`") {
			t.Errorf("alert kind %s is not listed in the catalogue", k)
		}
	}
}

// TestTheWatchedSentenceCarriesTheRules: the alerts page's sentence is
// made from the rules the evaluator runs: the defaults, or others.
func TestTheWatchedSentenceCarriesTheRules(t *testing.T) {
	for _, test := range []struct {
		rules Rules
		want  []string
	}{
		{Rules{}, []string{"for 10 minutes", "15 minutes at a rate cap", "more than 30 %"}},
		{Rules{Window: 20 * time.Minute, CapMinutes: 5, ShareDrop: 0.25}, []string{"for 20 minutes", "5 minutes at a rate cap", "more than 25 %"}},
	} {
		got := test.rules.Watched()
		for _, w := range test.want {
			if !strings.Contains(got, w) {
				t.Errorf("%+v: %q does not say %q", test.rules, got, w)
			}
		}
	}
}
