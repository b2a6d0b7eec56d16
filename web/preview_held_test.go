package web

import (
	"strings"
	"testing"
	"time"

	"github.com/airside/airside/internal/election"
	"github.com/airside/airside/internal/fare"
	"github.com/airside/airside/internal/money"
	"github.com/airside/airside/internal/preview"
	"github.com/airside/airside/templates"
)

// TestRankOneWithoutTrafficIsSaidSo: a listing first on the ballot whose
// scenario an incumbent keeps (its lead within the margin) is not shown as
// a win: the summary says who keeps the traffic and why, and "what it
// takes" gives the price that takes it, not the one that only ranks.
func TestRankOneWithoutTrafficIsSaidSo(t *testing.T) {
	sc := preview.ScenarioResult{
		Scenario: preview.Scenario{Key: "small-auto", Name: "Small one-shot (auto)"},
		Prospect: preview.Prospect{
			Mine:   preview.Mine{OnBallot: true, Eligible: true, Rank: 1, Of: 5},
			Winner: "Nebula", Holder: "Orbit", HolderNote: "the incumbent keeps it: your lead 0.04 is within the 0.15 margin",
			Win: preview.WinPlan{WinsNow: true, Displace: election.Solution{CanWin: true, Value: 0.8},
				DisplaceInput: money.Micros(400_000), DisplaceOutput: money.Micros(1_600_000)}},
	}
	row := scenarioRow(sc)
	if row.Class != "held" || !strings.Contains(row.Held, "Orbit keeps its traffic") || !strings.Contains(row.Held, "within the 0.15 margin") {
		t.Errorf("summary row %+v: a rank of 1 without the traffic must say who keeps it", row)
	}
	win := winRow(sc.Scenario.Name, sc.Prospect)
	if win.Status != "Rank 1, not served" || win.Class == "win" {
		t.Errorf("what it takes: status %q class %q, want not a win", win.Status, win.Class)
	}
	if text := strings.Join(win.Lines, " "); !strings.Contains(text, "lead by more than 0.15") || !strings.Contains(text, "$0.4000") {
		t.Errorf("what it takes does not give the displacing price: %q", text)
	}

	// Holding the traffic itself, rank 1 is a plain win.
	sc.Holder, sc.HolderIsMe = "Nebula", true
	if row := scenarioRow(sc); row.Class != "win" || row.Held != "" {
		t.Errorf("the holder's own row %+v", row)
	}
	if win := winRow(sc.Scenario.Name, sc.Prospect); win.Status != "You win" {
		t.Errorf("the holder's plan: %q", win.Status)
	}
}

// TestALosingScenarioSaysWhereItStands: "where you stand" gives the rank
// and the gap, not only "To win" (issue 29 L16).
func TestALosingScenarioSaysWhereItStands(t *testing.T) {
	sc := preview.ScenarioResult{Scenario: preview.Scenario{Key: "large-auto", Name: "Large prompt (auto)"},
		Prospect: preview.Prospect{Mine: preview.Mine{OnBallot: true, Eligible: true, Rank: 3, Of: 5, Gap: 0.1234}, Winner: "Orbit", Holder: "Orbit",
			Win: preview.WinPlan{Price: election.Solution{CanWin: true, Value: 0.9}}}}
	if got := winRow(sc.Scenario.Name, sc.Prospect).Status; got != "Rank 3 of 5, "+templates.Points(0.1234)+" behind" {
		t.Errorf("status %q", got)
	}
}

// TestEachSetOfPreferencesSaysWhatItTakes: a set's row in "what it takes
// to win" says when no fare can win its requests (the listing is excluded,
// an order names another, no one serves them) rather than a price, and
// gives its own ballot's price otherwise, with the rule that routes them.
func TestEachSetOfPreferencesSaysWhatItTakes(t *testing.T) {
	eligible := preview.Mine{OnBallot: true, Eligible: true, Rank: 2, Of: 3, Gap: 0.05}
	for _, c := range []struct {
		name         string
		set          preview.SetProspect
		status, line string
	}{
		{"excluded", preview.SetProspect{Prospect: preview.Prospect{Mine: preview.Mine{OnBallot: true, Excluded: []string{"preference:zdr"}}, Winner: "Fathom", Holder: "Fathom"}},
			"Cannot win", "Excluded (preference:zdr): these requests go to Fathom."},
		{"an order naming another", preview.SetProspect{Prospect: preview.Prospect{Mine: eligible, Winner: "Orbit", Holder: "Orbit"}, OrderDecides: true},
			"Cannot win by price", "tries Orbit first, whatever the prices"},
		{"an order naming us", preview.SetProspect{Prospect: preview.Prospect{Mine: eligible, Winner: "Nebula", Holder: "Nebula", HolderIsMe: true}, OrderDecides: true},
			"You win", "tries you first"},
		{"no one", preview.SetProspect{Prospect: preview.Prospect{Mine: preview.Mine{OnBallot: true}}}, "No one serves these", "No listing of the model"},
		{"a price of its own", preview.SetProspect{Prospect: preview.Prospect{Mine: eligible, Winner: "Orbit", Holder: "Orbit",
			HolderNote: "the best score among the listings these preferences allow takes them",
			Win:        preview.WinPlan{Price: election.Solution{CanWin: true, Value: 0.9}, NewInput: money.Micros(450_000), NewOutput: money.Micros(1_800_000)}}},
			"Rank 2 of 3, " + templates.Points(0.05) + " behind", "input $0.4500"},
	} {
		c.set.Set, c.set.Part = "zero data retention", 0.15
		row := setWinRow("Small one-shot (auto)", c.set)
		text := strings.Join(row.Lines, " ")
		if row.Status != c.status || !strings.Contains(text, c.line) || !strings.Contains(row.Scenario, "asking for zero data retention") {
			t.Errorf("%s: %q %q: %q, want %q and %q", c.name, row.Scenario, row.Status, text, c.status, c.line)
		}
		if c.name == "a price of its own" && !strings.Contains(text, "The best score among the listings these preferences allow") {
			t.Errorf("%s: the rule that routes them is not said: %q", c.name, text)
		}
	}
}

// TestSetsPastTheSolvedOnesAreCounted: the sets of preferences past those
// solved get one row saying how many and how much they carry.
func TestSetsPastTheSolvedOnesAreCounted(t *testing.T) {
	sc := preview.ScenarioResult{Scenario: preview.Scenario{Key: "small-auto", Name: "Small one-shot (auto)"},
		Sets:     []preview.SetProspect{{Set: "zero data retention", Part: 0.2, Prospect: preview.Prospect{Mine: preview.Mine{OnBallot: true}}}},
		SetsLeft: 3, SetsLeftPart: 0.06}
	f := &fare.Fare{Input: money.Micros(500_000), Output: money.Micros(2_000_000)}
	v := panelView(preview.Result{Scenarios: []preview.ScenarioResult{sc}}, f, previewControls{}, "form", "/x", time.Date(2026, 12, 5, 12, 0, 0, 0, time.UTC))
	if len(v.Win) != 3 {
		t.Fatalf("%d rows, want the scenario's, its set's and the rest's: %+v", len(v.Win), v.Win)
	}
	if last := v.Win[2]; last.Scenario != "Small one-shot (auto): 3 smaller sets of preferences" || last.Status != templates.Pct(6)+" of its requests" {
		t.Errorf("the rest's row: %+v", last)
	}
}

// TestAProjectsPartHasItsOwnRow: the part of a scenario's requests from
// projects routing learned rates of apart gets a row of its own, named as
// "wins now" and the impact panel name it, saying the rule that routes it.
func TestAProjectsPartHasItsOwnRow(t *testing.T) {
	mine := preview.Mine{OnBallot: true, Eligible: true, Rank: 1, Of: 3}
	sc := preview.ScenarioResult{Scenario: preview.Scenario{Key: "large-auto", Name: "Large prompt, general API (auto)"},
		Prospect: preview.Prospect{Mine: preview.Mine{OnBallot: true, Eligible: true, Rank: 2, Of: 3}, Winner: "Orbit", Holder: "Orbit"},
		Projects: []preview.ProjectProspect{{Part: 0.3, Prospect: preview.Prospect{Mine: mine, Winner: "Nebula", Holder: "Nebula", HolderIsMe: true,
			HolderNote: "no incumbent on this ballot: the best score takes it", Win: preview.WinPlan{WinsNow: true}}}}}
	f := &fare.Fare{Input: money.Micros(500_000), Output: money.Micros(2_000_000)}
	v := panelView(preview.Result{Scenarios: []preview.ScenarioResult{sc}}, f, previewControls{}, "form", "/x", time.Date(2026, 12, 5, 12, 0, 0, 0, time.UTC))
	if len(v.Win) != 2 {
		t.Fatalf("%d rows, want the scenario's and its project part's: %+v", len(v.Win), v.Win)
	}
	row := v.Win[1]
	if row.Scenario != "Large prompt, general API (auto): the 30.0 % from projects routing learned cache rates of apart" || row.Status != "You win" {
		t.Errorf("the project part's row: %+v", row)
	}
	if text := strings.Join(row.Lines, " "); !strings.Contains(text, "the best score takes it") {
		t.Errorf("the rule that routes the part is not said: %q", text)
	}
}
