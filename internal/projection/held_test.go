package projection

import (
	"slices"
	"testing"
	"time"

	"github.com/airside/airside/internal/catalogue"
	"github.com/airside/airside/internal/election"
	"github.com/airside/airside/internal/traffic"
)

// TestHeldAtTakesTheLatestReportedMinute: a part starting at a time starts
// from, per shape, the holder of the latest reported minute at or before
// it (that minute included: its first election opened the part), of
// several gateways the first source's; a listing off the market, or a later
// minute, is not used.
func TestHeldAtTakesTheLatestReportedMinute(t *testing.T) {
	t0 := time.Date(2026, 12, 2, 12, 0, 0, 0, time.UTC)
	candidates := map[int64]string{1: "a/m", 2: "b/m", 3: "c/m"}
	row := func(minutes int, source string, listing int64, cache bool) catalogue.ShapeHolder {
		return catalogue.ShapeHolder{Model: "m", Workload: "general", CacheRelevant: cache, ListingID: listing,
			Minute: t0.Add(time.Duration(minutes) * time.Minute), Source: source}
	}
	reported := []catalogue.ShapeHolder{row(0, "", 1, false), row(0, "", 3, true), row(5, "x", 2, false), row(5, "y", 3, false),
		row(9, "", 4, true), row(20, "", 3, false)}
	small := traffic.Shape{Model: "m", Mode: election.ModeAuto, Workload: election.WorkloadGeneral}
	large := small
	large.CacheRelevant = true
	for _, c := range []struct {
		at         time.Time
		small, big string
	}{
		{t0.Add(-time.Second), "", ""},
		{t0.Add(30 * time.Second), "a/m", "c/m"},
		{t0.Add(5 * time.Minute), "b/m", "c/m"},  // minute 5's first source, x
		{t0.Add(19 * time.Minute), "b/m", "c/m"}, // listing 4 is off the market
		{t0.Add(20 * time.Minute), "c/m", "c/m"},
	} {
		got := heldAt(reported, candidates, c.at)
		if got[small] != c.small || got[large] != c.big {
			t.Errorf("at %s: %v, want small %q and large %q", c.at.Format(time.TimeOnly), got, c.small, c.big)
		}
	}
}

// TestHolderChangesAreWhereAGatewayMovedAShape: an hour is cut where a
// reporting gateway named another holder of a shape than it named before,
// and not where it named the same one again.
func TestHolderChangesAreWhereAGatewayMovedAShape(t *testing.T) {
	t0 := time.Date(2026, 12, 2, 12, 0, 0, 0, time.UTC)
	row := func(minutes int, source string, listing int64) catalogue.ShapeHolder {
		return catalogue.ShapeHolder{Model: "m", Workload: "general", ListingID: listing, Minute: t0.Add(time.Duration(minutes) * time.Minute), Source: source}
	}
	got := holderChanges([]catalogue.ShapeHolder{row(0, "a", 1), row(0, "b", 2), row(1, "a", 1), row(2, "a", 2), row(3, "b", 2), row(7, "a", 2), row(9, "a", 1)})
	var minutes []int
	for _, at := range got {
		minutes = append(minutes, int(at.Sub(t0).Minutes()))
	}
	if want := []int{0, 0, 2, 9}; !slices.Equal(minutes, want) {
		t.Errorf("cuts at minutes %v, want %v (each source's first report, then where its holder moved)", minutes, want)
	}
}
