package projection

import (
	"context"
	"math"
	"slices"
	"testing"
	"time"

	"github.com/airside/airside/internal/catalogue"
	"github.com/airside/airside/internal/election"
	"github.com/airside/airside/internal/traffic"
)

// TestHeldAtTakesTheLatestReportedMinute: a part starting at a time starts
// from, per shape, the holder of the latest reported election at or before
// it (a minute's first, or a move later in the minute at its second), of
// several gateways the latest of any; a listing off the market, or a later
// election, is not used.
func TestHeldAtTakesTheLatestReportedMinute(t *testing.T) {
	t0 := time.Date(2026, 12, 2, 12, 0, 0, 0, time.UTC)
	candidates := map[int64]string{1: "a/m", 2: "b/m", 3: "c/m"}
	row := func(minutes int, source string, listing int64, cache bool) catalogue.ShapeHolder {
		return catalogue.ShapeHolder{Model: "m", Workload: "general", CacheRelevant: cache, ListingID: listing,
			Minute: t0.Add(time.Duration(minutes) * time.Minute), Source: source}
	}
	moved := func(h catalogue.ShapeHolder, second int, listing int64) catalogue.ShapeHolder {
		h.Second, h.ListingID = second, listing
		return h
	}
	// In the store's order: by minute, source, second.
	reported := []catalogue.ShapeHolder{row(0, "", 1, false), row(0, "", 3, true), row(5, "x", 2, false), moved(row(5, "x", 2, false), 50, 1),
		moved(row(5, "y", 3, false), 10, 3), row(9, "", 4, true), row(12, "", 2, false), moved(row(12, "", 2, false), 40, 1), row(20, "", 3, false)}
	small := traffic.Shape{Model: "m", Mode: election.ModeAuto, Workload: election.WorkloadGeneral}
	large := small
	large.CacheRelevant = true
	for _, c := range []struct {
		at         time.Time
		small, big string
	}{
		{t0.Add(-time.Second), "", ""},
		{t0.Add(30 * time.Second), "a/m", "c/m"},
		{t0.Add(5 * time.Minute), "b/m", "c/m"},                 // x at 5:00
		{t0.Add(5*time.Minute + 30*time.Second), "c/m", "c/m"},  // y at 5:10
		{t0.Add(5*time.Minute + 50*time.Second), "a/m", "c/m"},  // x at 5:50
		{t0.Add(12*time.Minute + 39*time.Second), "b/m", "c/m"}, // listing 4 is off the market
		{t0.Add(12*time.Minute + 40*time.Second), "a/m", "c/m"}, // the move at 12:40
		{t0.Add(20 * time.Minute), "c/m", "c/m"},
	} {
		got := heldAt(reported, candidates, c.at)
		if got[small] != c.small || got[large] != c.big {
			t.Errorf("at %s: %v, want small %q and large %q", c.at.Format(time.TimeOnly), got, c.small, c.big)
		}
	}
}

// TestHolderChangesAreWhereAGatewayMovedAShape: an hour is cut at the
// second a reported holder of a shape differs from the one reported before
// it by any gateway, and not where it is named again.
func TestHolderChangesAreWhereAGatewayMovedAShape(t *testing.T) {
	t0 := time.Date(2026, 12, 2, 12, 0, 0, 0, time.UTC)
	row := func(minutes, second int, source string, listing int64) catalogue.ShapeHolder {
		return catalogue.ShapeHolder{Model: "m", Workload: "general", ListingID: listing, Minute: t0.Add(time.Duration(minutes) * time.Minute),
			Second: second, Source: source}
	}
	got := holderChanges(heldEvents([]catalogue.ShapeHolder{row(0, 0, "a", 1), row(0, 0, "b", 2), row(1, 0, "a", 1), row(2, 0, "a", 2), row(3, 0, "b", 2),
		row(7, 0, "a", 2), row(7, 30, "a", 3), row(7, 5, "b", 1), row(9, 0, "a", 1)}))
	var seconds []int
	for _, at := range got {
		seconds = append(seconds, int(at.Sub(t0).Seconds()))
	}
	if want := []int{0, 0, 60, 120, 425, 450, 540}; !slices.Equal(seconds, want) {
		t.Errorf("cuts at seconds %v, want %v (the first report, then where the holder moved: b at 0, a at 1, 7:05, 7:30, 9)", seconds, want)
	}
}

// TestAHolderMovedWithinAMinuteIsProjectedFromItsSecond: a gateway whose
// first election of 10:20 came at 10:20:30 and moved the shape to b, and
// whose first of 10:40 moved it back to a (b inside a's incumbent margin,
// so the replay keeps each where routing put it), projects b the part of
// the hour from 10:20:30, not from 10:20: the hour's requests even, 19.5
// of its 60 minutes.
func TestAHolderMovedWithinAMinuteIsProjectedFromItsSecond(t *testing.T) {
	now := time.Date(2026, 11, 20, 14, 20, 0, 0, time.UTC)
	m := newMarket(now, 300000, 303000)
	h := now.Truncate(time.Hour).Add(-5 * time.Hour)
	at := func(minute, second, listing int) catalogue.ShapeHolder {
		return catalogue.ShapeHolder{Model: "glm-5", Workload: "general", ListingID: int64(listing), Minute: h.Add(time.Duration(minute) * time.Minute), Second: second}
	}
	m.holders = []catalogue.ShapeHolder{at(0, 2, 1), at(19, 1, 1), at(20, 30, 2), at(21, 4, 2), at(40, 0, 1)}
	b := hourShares(t, projectorOn(m, &now), &m.listings[1], now.Add(-26*time.Hour), now.Add(time.Hour))
	explored := b[h.Add(-time.Hour)] // b's share while a holds the shape
	if explored > 0.05 {
		t.Fatalf("b projected %.3f the hour before: the test needs a holding the shape", explored)
	}
	if after := b[h.Add(time.Hour)]; math.Abs(after-explored) > 1e-9 {
		t.Errorf("b projected %.4f the hour after a took the shape back, want %.4f as before", after, explored)
	}
	held := (b[h] - explored) / (1 - 2*explored) // the part of the hour b held the shape
	if want := 19.5 / 60; math.Abs(held-want) > 1e-6 {
		t.Errorf("b held the shape for %.4f of the hour in the projection, want %.4f (from 10:20:30 to 10:40)", held, want)
	}
}

// TestAPartLearnsWhatRoutingHadLearnedByItsStart: a part of an hour
// starting at 10:30 learns from the hour's requests up to learnedLag
// before it (a gateway's rates are up to traffic.LearnedCacheFor old), and
// weighs the requests from its start; with no minute counted, the hour's
// length stands for them.
func TestAPartLearnsWhatRoutingHadLearnedByItsStart(t *testing.T) {
	now := time.Date(2026, 11, 20, 14, 20, 0, 0, time.UTC)
	m := newMarket(now, 300000, 500000)
	h := now.Truncate(time.Hour).Add(-4 * time.Hour)
	pj := projectorOn(m, &now)
	cut := h.Add(30 * time.Minute)
	for _, counted := range []bool{false, true} {
		if counted {
			for i := range 60 {
				m.minutes[h.Add(time.Duration(i)*time.Minute)] = 10
			}
		}
		starts, weights, learned, err := pj.hourSplits(context.Background(), []int64{1, 2}, h, []time.Time{cut}, nil)
		if err != nil {
			t.Fatal(err)
		}
		if len(starts) != 2 || !starts[1].Equal(cut) || math.Abs(weights[1]-0.5) > 1e-12 {
			t.Fatalf("counted %v: parts %v weighing %v, want two halves", counted, starts, weights)
		}
		if want := (30*time.Minute - learnedLag).Hours(); math.Abs(learned[1]-want) > 1e-12 || learned[0] != 0 {
			t.Errorf("counted %v: the part from 10:30 learned from %.6f of the hour, want %.6f (up to %s before it)", counted, learned[1], want, learnedLag)
		}
	}
}

// TestAMinutesPartsAreWeighedByItsElections: where a gateway counted its
// elections per holder row, a minute cut at a move gives each part the
// minute's requests elected in it (each row's elections taken as even from
// its second to its shape's next row from the same source, or the minute's
// end), not its length; a minute whose rows count none, from a gateway
// that does not say, is taken as even. What routing had learned from is
// still taken as even (the buckets count requests when they answered).
func TestAMinutesPartsAreWeighedByItsElections(t *testing.T) {
	now := time.Date(2026, 11, 20, 14, 20, 0, 0, time.UTC)
	m := newMarket(now, 300000, 500000)
	h := now.Truncate(time.Hour).Add(-4 * time.Hour)
	for i := range 60 {
		m.minutes[h.Add(time.Duration(i)*time.Minute)] = 60
	}
	pj := projectorOn(m, &now)
	minute := h.Add(20 * time.Minute)
	cut := minute.Add(30 * time.Second)
	row := func(second int, listing int64, cache bool, source string, elections int64) catalogue.ShapeHolder {
		return catalogue.ShapeHolder{Model: "glm-5", Workload: "general", CacheRelevant: cache, ListingID: listing, Minute: minute,
			Second: second, Source: source, Requests: elections}
	}
	for _, c := range []struct {
		name string
		rows []catalogue.ShapeHolder
		// in is the minute's requests elected after the cut.
		in float64
	}{
		// 50 of the small shape's elections after its move at :30, half
		// of the large shape's 40 over its whole minute: 70 of 100.
		{"counted", []catalogue.ShapeHolder{row(30, 2, false, "x", 50), row(0, 1, true, "x", 40), row(0, 1, false, "x", 10)}, 42},
		// Another source's row of the same shape ends at its own minute's
		// end, not at x's move: 10 before, 50 + 30 of 60 after.
		{"two sources", []catalogue.ShapeHolder{row(0, 1, false, "x", 10), row(30, 2, false, "x", 50), row(0, 1, false, "y", 60)}, 60 * 80.0 / 120},
		{"not counted", []catalogue.ShapeHolder{row(0, 1, false, "x", 0), row(30, 2, false, "x", 0)}, 30},
	} {
		starts, weights, learned, err := pj.hourSplits(context.Background(), []int64{1, 2}, h, []time.Time{cut}, electedSpans(c.rows))
		if err != nil {
			t.Fatal(err)
		}
		want := (c.in + 39*60) / 3600
		if len(starts) != 2 || !starts[1].Equal(cut) || math.Abs(weights[1]-want) > 1e-12 || math.Abs(weights[0]+weights[1]-1) > 1e-12 {
			t.Errorf("%s: parts %v weighing %v, want the part from %s to weigh %.6f", c.name, starts, weights, cut.Format(time.TimeOnly), want)
		}
		if even := (20*60 + 30 - learnedLag.Seconds()) / 3600; math.Abs(learned[1]-even) > 1e-12 {
			t.Errorf("%s: the part learned from %.6f of the hour, want %.6f (as even)", c.name, learned[1], even)
		}
	}
}

// TestAPartHoldsTheMixRoutingElectedInIt: where the gateway counted its
// elections, each shape's requests of the hour are spread over the parts
// as its elections were (a burst of 16 small requests in 13:00's first
// second, the small shape moved at 13:00:01 and 5 more after it, the
// large and coding shapes' elections over the whole minute), so the part
// before the move holds mostly small requests; a shape no row counted
// (chat) keeps the parts' weights; the parts' weights add up to the hour.
// An hour without counted elections keeps the hour's mix in every part.
func TestAPartHoldsTheMixRoutingElectedInIt(t *testing.T) {
	h := time.Date(2026, 12, 2, 13, 0, 0, 0, time.UTC)
	row := func(second int, workload string, cache bool, elections int64) catalogue.ShapeHolder {
		return catalogue.ShapeHolder{Model: "kimi", Workload: workload, CacheRelevant: cache, ListingID: 1, Minute: h, Second: second, Requests: elections}
	}
	rows := []catalogue.ShapeHolder{row(0, "general", false, 16), row(1, "general", false, 5), row(0, "general", true, 7), row(0, "coding", true, 9)}
	rows[1].ListingID = 2
	mix := map[string]float64{"small": 21, "large": 7, "coding": 9, "chat": 3}
	starts := []time.Time{h, h.Add(time.Second)}
	given := []float64{0.25, 0.75}
	mixes, weights := partMixes(mix, h, starts, given, electedSpans(rows))
	if len(mixes) != 2 {
		t.Fatalf("mixes %v", mixes)
	}
	const total = 40.0
	want := map[string][2]float64{
		"small":  {21 / total * 16 / 21, 21 / total * 5 / 21},
		"large":  {7 / total / 60, 7 / total * 59 / 60},
		"coding": {9 / total / 60, 9 / total * 59 / 60},
		"chat":   {3 / total * given[0], 3 / total * given[1]},
	}
	for k, w := range want {
		for i := range 2 {
			if math.Abs(mixes[i][k]-w[i]) > 1e-12 {
				t.Errorf("part %d holds %.6f of the hour as %s, want %.6f", i, mixes[i][k], k, w[i])
			}
		}
	}
	if math.Abs(weights[0]+weights[1]-1) > 1e-12 || math.Abs(weights[0]-(want["small"][0]+want["large"][0]+want["coding"][0]+want["chat"][0])) > 1e-12 {
		t.Errorf("parts weigh %v, want the sums of their mixes, adding up to 1", weights)
	}
	uncounted := slices.Clone(rows)
	for i := range uncounted {
		uncounted[i].Requests = 0
	}
	if mixes, weights := partMixes(mix, h, starts, given, electedSpans(uncounted)); mixes != nil || !slices.Equal(weights, given) {
		t.Errorf("without counted elections: mixes %v, weights %v; want none and the weights given", mixes, weights)
	}
}
