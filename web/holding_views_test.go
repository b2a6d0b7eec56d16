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
