package gateway

import (
	"fmt"
	"strings"
	"testing"
	"time"

	"github.com/airside/airside/internal/catalogue"
	"github.com/airside/airside/internal/election"
	"github.com/airside/airside/internal/traffic"
)

// TestAShapesMinuteIsReportedAtEachMoveWithItsElections: a shape's minute
// reports the holder after its first election, at that election's second,
// and after each later election that moved it (of the elections in one
// second, the last one's holder), each row with the elections it held; the
// next minute restates its first holder at its own second. A shape that
// moves more than catalogue.MaxHolderRows times in a minute keeps its last
// row to the minute's end, counting the elections after it, so the rows'
// elections add up to the minute's.
func TestAShapesMinuteIsReportedAtEachMoveWithItsElections(t *testing.T) {
	rec := NewRecorder()
	shape := traffic.Shape{Model: "m", Mode: election.ModeAuto, Workload: election.WorkloadGeneral}
	routes := map[string]Route{"a": {ID: "a/m", ListingID: 1}, "b": {ID: "b/m", ListingID: 2}, "c": {ID: "c/m", ListingID: 3}}
	t0 := time.Date(2026, 12, 5, 10, 0, 0, 0, time.UTC)
	type election struct {
		second  int
		listing string
	}
	elections := []election{{5, "c"}, {5, "a"}, {10, "a"}, {20, "b"}, {21, "b"}, {40, "c"}, {63, "b"}, {70, "a"}}
	// The third minute moves every second, past the cap.
	for i := range catalogue.MaxHolderRows + 2 {
		elections = append(elections, election{120 + i, []string{"a", "b"}[i%2]})
	}
	for _, e := range elections {
		rec.Held(shape, routes[e.listing], t0.Add(time.Duration(e.second)*time.Second))
	}
	var got []string
	perMinute := map[string]int{}
	var counted int64
	for _, h := range rec.TakeClosedHolders(t0.Add(3 * time.Minute)) {
		if h.Shape != shape {
			t.Errorf("a row of shape %+v", h.Shape)
		}
		minute := h.Minute.Format("15:04")
		perMinute[minute]++
		counted += h.Requests
		if minute != "10:02" {
			got = append(got, fmt.Sprintf("%s+%ds:%dx%d", minute, h.Second, h.ListingID, h.Requests))
		} else if perMinute[minute] == catalogue.MaxHolderRows && h.Requests != 3 {
			t.Errorf("the capped minute's last row at %ds counts %d elections, want 3 (its own and the two after the cap)", h.Second, h.Requests)
		}
	}
	want := "10:00+5s:1x3 10:00+20s:2x2 10:00+40s:3x1 10:01+3s:2x1 10:01+10s:1x1"
	if strings.Join(got, " ") != want {
		t.Errorf("holders reported\n%s\nwant\n%s", strings.Join(got, " "), want)
	}
	if perMinute["10:02"] != catalogue.MaxHolderRows {
		t.Errorf("a minute moving every second reported %d rows, want the cap, %d", perMinute["10:02"], catalogue.MaxHolderRows)
	}
	if counted != int64(len(elections)) {
		t.Errorf("the rows count %d elections, want every one, %d", counted, len(elections))
	}
}
