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

// TestAShapesMinuteIsReportedAtItsFirstElectionsSecond: a shape's minute
// reports the holder after its first election, at that election's second
// (of the elections in that second, the last one's holder; later ones add
// nothing: catalogue.MaxHolderRows); the next minute restates its first
// holder at its own second.
func TestAShapesMinuteIsReportedAtItsFirstElectionsSecond(t *testing.T) {
	rec := NewRecorder()
	shape := traffic.Shape{Model: "m", Mode: election.ModeAuto, Workload: election.WorkloadGeneral}
	routes := map[string]Route{"a": {ID: "a/m", ListingID: 1}, "b": {ID: "b/m", ListingID: 2}, "c": {ID: "c/m", ListingID: 3}}
	t0 := time.Date(2026, 12, 5, 10, 0, 0, 0, time.UTC)
	for _, e := range []struct {
		second  int
		listing string
	}{{5, "c"}, {5, "a"}, {10, "a"}, {20, "b"}, {21, "b"}, {40, "c"}, {63, "b"}, {70, "a"}} {
		rec.Held(shape, routes[e.listing], t0.Add(time.Duration(e.second)*time.Second))
	}
	var got []string
	for _, h := range rec.TakeClosedHolders(t0.Add(2 * time.Minute)) {
		if h.Shape != shape {
			t.Errorf("a row of shape %+v", h.Shape)
		}
		got = append(got, fmt.Sprintf("%s+%ds:%d", h.Minute.Format("15:04"), h.Second, h.ListingID))
	}
	want := "10:00+5s:1 10:01+3s:2"
	if strings.Join(got, " ") != want {
		t.Errorf("holders reported\n%s\nwant\n%s", strings.Join(got, " "), want)
	}
	if rows := strings.Count(want, "10:00"); rows != catalogue.MaxHolderRows {
		t.Fatalf("the test's first minute has %d rows, want the cap, %d", rows, catalogue.MaxHolderRows)
	}
}
