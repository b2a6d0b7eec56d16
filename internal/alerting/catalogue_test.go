package alerting

import (
	"os"
	"strings"
	"testing"
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

// TestEveryRuleSaysItsThreshold: the rules table's sentence for each rule
// is made from the setting the evaluator runs: the default, or another.
func TestEveryRuleSaysItsThreshold(t *testing.T) {
	for _, k := range Kinds {
		if got := (Rules{}).Describe(k, DefaultSetting(k)); got == "" || got == k.Label() {
			t.Errorf("%s has no sentence of its own: %q", k, got)
		}
	}
	for _, test := range []struct {
		kind Kind
		set  Setting
		want string
	}{
		{AtCap, DefaultSetting(AtCap), "in 15 minutes of the last hour"},
		{AtCap, Setting{Threshold: 5}, "in 5 minutes of the last hour"},
		{ShareDown, DefaultSetting(ShareDown), "down more than 30 %"},
		{ShareDown, Setting{Threshold: 25}, "down more than 25 %"},
		{RankMoved, Setting{Threshold: 2}, "2 places worse"},
		{TTFTJump, Setting{Threshold: 1.5}, "at 1.5 times the hour before's"},
		{UptimePenalty, DefaultSetting(UptimePenalty), "over 10 minutes"},
	} {
		if got := (Rules{}).Describe(test.kind, test.set); !strings.Contains(got, test.want) {
			t.Errorf("%s %+v: %q does not say %q", test.kind, test.set, got, test.want)
		}
	}
}
