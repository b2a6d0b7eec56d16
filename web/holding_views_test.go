package web

import (
	"slices"
	"testing"

	"github.com/airside/airside/internal/projection"
)

func TestHoldingLinesSayWhatLeadTakesAWorkload(t *testing.T) {
	holds := []projection.Hold{
		{Scenario: "Small one-shot (auto)", Holder: "Orbit", Eligible: true, Kept: true, Lead: 0.042},
		{Scenario: "Large prompt, general API (auto)", Holder: "Nebula", Eligible: true, Mine: true},
		{Scenario: "Coding agent session opener (auto)", Holder: "Orbit", Eligible: true, Lead: -0.3},
		{Scenario: "Chat (auto)", Holder: "Orbit"},
		{Scenario: "Odd (auto)"},
	}
	want := []string{
		"Small one-shot (auto): Orbit keeps it as the incumbent: this listing's score leads by 0.042, and a lead of more than 0.150 takes it.",
		"Large prompt, general API (auto): this listing serves it.",
		"Coding agent session opener (auto): Orbit serves it; this listing's score trails by 0.300.",
		"Chat (auto): Orbit serves it; this listing is not on its ballot.",
		"Odd (auto): no listing is eligible.",
	}
	if got := holdingLines(holds, 0.15); !slices.Equal(got, want) {
		t.Errorf("got\n%q\nwant\n%q", got, want)
	}
}

func TestWinsWordsNameThePartsThatGoElsewhere(t *testing.T) {
	const large = "Large prompt, general API (auto)"
	cases := []struct {
		name string
		wins []projection.Win
		want string
	}{
		{"held whole", []projection.Win{{Scenario: large}}, large},
		{"held but a set's part", []projection.Win{{Scenario: large, Elsewhere: 0.2}}, large + " (not the 20.0 % whose preferences go elsewhere)"},
		{"held but a project's part", []projection.Win{{Scenario: large, ProjectsElsewhere: 0.5}},
			large + " (not the 50.0 % from projects whose learned rates go elsewhere)"},
		{"held but both", []projection.Win{{Scenario: large, Elsewhere: 0.2, ProjectsElsewhere: 0.3}},
			large + " (not the 20.0 % whose preferences go elsewhere, nor the 30.0 % from projects whose learned rates go elsewhere)"},
		{"a project's part taken", []projection.Win{{Scenario: large, Projects: true, Part: 0.5}},
			large + ": the 50.0 % from projects routing learned cache rates of apart"},
	}
	for _, c := range cases {
		if got := winsWords(c.wins); got != c.want {
			t.Errorf("%s: got %q, want %q", c.name, got, c.want)
		}
	}
}
