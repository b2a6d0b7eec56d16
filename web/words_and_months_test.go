package web

import (
	"slices"
	"strings"
	"testing"
	"time"

	"github.com/airside/airside/internal/audit"
)

// TestAFilingsHistoryReadsAsWords: every kind of filing event, the two
// approvals' first included, reads in a filing's history as words, never
// as its code ("filing.approve.first").
func TestAFilingsHistoryReadsAsWords(t *testing.T) {
	for _, action := range append(audit.Actions(), "filing.unheard_of") {
		if !strings.HasPrefix(action, "filing.") {
			continue
		}
		got := historyText(audit.Event{Action: action})
		if strings.Contains(got, ".") || strings.Contains(got, "_") || strings.TrimSpace(got) == "" {
			t.Errorf("%s reads %q in a filing's history", action, got)
		}
	}
	if got := historyText(audit.Event{Action: "filing.approve.first"}); got != "gave it the first of two approvals" {
		t.Errorf("the first of two approvals reads %q", got)
	}
}

// TestStatementsStartWithTheCarriersFirstListing: the months a carrier is
// offered statements of are the last 13 at most, and none before the month
// of its first listing.
func TestStatementsStartWithTheCarriersFirstListing(t *testing.T) {
	now := time.Date(2026, 12, 4, 7, 0, 0, 0, time.UTC)
	month := func(y int, m time.Month) time.Time { return time.Date(y, m, 1, 0, 0, 0, 0, time.UTC) }
	for _, tc := range []struct {
		name  string
		since time.Time
		want  []time.Time
	}{
		{"a listing added this month", now.Add(-time.Hour), []time.Time{month(2026, 12)}},
		{"since October", time.Date(2026, 10, 31, 23, 0, 0, 0, time.UTC), []time.Time{month(2026, 12), month(2026, 11), month(2026, 10)}},
		{"for years", now.AddDate(-3, 0, 0), nil},
	} {
		got := statementMonths(now, tc.since)
		if tc.want == nil {
			if len(got) != 13 || !got[12].Equal(month(2025, 12)) {
				t.Errorf("%s: %v, want the 13 months from December 2025", tc.name, got)
			}
			continue
		}
		if !slices.EqualFunc(got, tc.want, time.Time.Equal) {
			t.Errorf("%s: %v, want %v", tc.name, got, tc.want)
		}
	}
}

// TestTheZoneParameterRoundTrips: ?tz= reads whole hours as it always did
// and hours and minutes for the half- and quarter-hour zones; what a page
// writes in its links reads back the same; nonsense is UTC.
func TestTheZoneParameterRoundTrips(t *testing.T) {
	for text, want := range map[string]int{"-5": -300, "0": 0, "14": 840, "5:30": 330, "5:45": 345, "-9:30": -570, "-0:30": -30,
		"": 0, "abc": 0, "5:75": 0, "5:x": 0} {
		if got := parseTZ(text); got != want {
			t.Errorf("parseTZ(%q) = %d, want %d", text, got, want)
		}
	}
	for _, m := range zoneOffsets {
		if got := parseTZ(tzParam(m)); got != m {
			t.Errorf("%d minutes written as %q read back as %d", m, tzParam(m), got)
		}
	}
}
