package web

import (
	"strings"
	"testing"

	"github.com/airside/airside/internal/election"
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
		Mine:     preview.Mine{OnBallot: true, Eligible: true, Rank: 1, Of: 5},
		Winner:   "Nebula", Holder: "Orbit", HolderNote: "the incumbent keeps it: your lead 0.04 is within the 0.15 margin",
		Win: preview.WinPlan{WinsNow: true, Displace: election.Solution{CanWin: true, Value: 0.8},
			DisplaceInput: money.Micros(400_000), DisplaceOutput: money.Micros(1_600_000)},
	}
	row := scenarioRow(sc)
	if row.Class != "held" || !strings.Contains(row.Held, "Orbit keeps its traffic") || !strings.Contains(row.Held, "within the 0.15 margin") {
		t.Errorf("summary row %+v: a rank of 1 without the traffic must say who keeps it", row)
	}
	win := winRow(sc)
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
	if win := winRow(sc); win.Status != "You win" {
		t.Errorf("the holder's plan: %q", win.Status)
	}
}

// TestALosingScenarioSaysWhereItStands: "where you stand" gives the rank
// and the gap, not only "To win" (issue 29 L16).
func TestALosingScenarioSaysWhereItStands(t *testing.T) {
	sc := preview.ScenarioResult{Scenario: preview.Scenario{Key: "large-auto", Name: "Large prompt (auto)"},
		Mine: preview.Mine{OnBallot: true, Eligible: true, Rank: 3, Of: 5, Gap: 0.1234}, Winner: "Orbit", Holder: "Orbit",
		Win: preview.WinPlan{Price: election.Solution{CanWin: true, Value: 0.9}}}
	if got := winRow(sc).Status; got != "Rank 3 of 5, "+templates.Points(0.1234)+" behind" {
		t.Errorf("status %q", got)
	}
}
