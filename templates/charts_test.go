package templates

import (
	"bytes"
	"context"
	"flag"
	"fmt"
	"math"
	"os"
	"path/filepath"
	"sort"
	"strings"
	"testing"

	"github.com/a-h/templ"
)

var update = flag.Bool("update", false, "rewrite the golden files")

func golden(t *testing.T, name string, c templ.Component) {
	t.Helper()
	var buf bytes.Buffer
	if err := c.Render(context.Background(), &buf); err != nil {
		t.Fatal(err)
	}
	got := buf.String()
	path := filepath.Join("testdata", name+".svg.golden")
	if *update {
		if err := os.WriteFile(path, []byte(got), 0o644); err != nil {
			t.Fatal(err)
		}
	}
	want, err := os.ReadFile(path)
	if err != nil {
		t.Fatalf("%v (run go test ./templates -update to create it)", err)
	}
	if got != string(want) {
		t.Errorf("%s differs from %s; if the change is intended, run go test ./templates -update\ngot:\n%s", name, path, got)
	}
	for _, must := range []string{"<svg", "viewBox", "<desc>"} {
		if !strings.Contains(got, must) {
			t.Errorf("%s lacks %s", name, must)
		}
	}
}

func TestFeeChartGolden(t *testing.T) {
	fees := []int{500, 1000, 1500, 2000, 2500, 3000, 3500, 4000, 4500, 5000}
	mine := make([]float64, len(fees))
	for i := range fees {
		mine[i] = 0.4 - 0.04*float64(i)
	}
	rival := []float64{0.1, 0.1, 0.1, 0.12, 0.14, 0.16, 0.18, 0.2, 0.22, 0.24}
	excluded := []float64{math.NaN(), math.NaN(), 0.3, 0.3, 0.3, 0.3, 0.3, 0.3, 0.3, 0.3}
	v := NewFeeChart("Small one-shot (auto)", fees, []FeeSeries{{Name: "Nebula", IsMe: true, Points: mine}, {Name: "Orbit", Points: rival}, {Name: "Fathom", Points: excluded}}, 2000)
	if len(v.Lines) != 3 || v.Current <= v.Left || v.Current >= v.Left+v.plotW() {
		t.Fatalf("layout %+v", v)
	}
	if n := strings.Count(v.Lines[2].Points, ","); n != 8 {
		t.Errorf("the not-eligible points were drawn: %d points", n)
	}
	// The same figures as a table: one row per 5 points of fee.
	if want := []string{"Your landing fee", "Nebula (you)", "Orbit", "Fathom"}; fmt.Sprint(v.TableHead) != fmt.Sprint(want) {
		t.Errorf("table head %q", v.TableHead)
	}
	if len(v.TableRows) != len(fees) || fmt.Sprint(v.TableRows[0]) != "[5 % 0.400 0.100 not eligible]" || fmt.Sprint(v.TableRows[3]) != "[20 % 0.280 0.120 0.300]" {
		t.Errorf("table rows %q", v.TableRows)
	}
	golden(t, "fee-chart", FeeChart(v))
}

func TestBarsChartGolden(t *testing.T) {
	v := NewBarsChart([]string{"small/auto", "large/auto"}, [][]BarInput{
		{{Name: "Nebula", IsMe: true, Value: 1.2}, {Name: "Orbit", Value: 1.5}},
		{{Name: "Nebula", IsMe: true, Value: 0.4}, {Name: "Orbit", Value: 0.35}},
	})
	if v.Groups[0].Bars[1].H <= v.Groups[0].Bars[0].H {
		t.Error("a higher price drew a shorter bar")
	}
	if len(v.TableRows) != 4 || fmt.Sprint(v.TableRows[0]) != "[small/auto Nebula (you) $1.2000]" || fmt.Sprint(v.TableRows[3]) != "[large/auto Orbit $0.3500]" {
		t.Errorf("table rows %q", v.TableRows)
	}
	golden(t, "bars-chart", BarsChart(v))
}

func TestHeatmapGolden(t *testing.T) {
	var ranks [7][24]int
	for d := range 7 {
		for h := range 24 {
			ranks[d][h] = 1
			if h >= 8 && h < 18 {
				ranks[d][h] = 3
			}
		}
	}
	ranks[0][0] = 0
	v := NewHeatmap("Chat (auto)", ranks, 4)
	if len(v.Cells) != 168 {
		t.Fatalf("%d cells", len(v.Cells))
	}
	// Each cell's rank is written in it and in the table (not colour alone).
	if len(v.TableRows) != 7 || len(v.TableRows[0]) != 25 || v.TableRows[0][1] != "–" || v.TableRows[1][9] != "3" || v.TableRows[1][1] != "1" {
		t.Errorf("table %q", v.TableRows)
	}
	if !strings.Contains(renderString(t, HeatmapChart(v)), `<text class="heat-label heat r3"`) {
		t.Error("the rank is not written in its cell")
	}
	golden(t, "heatmap", HeatmapChart(v))
}

// TestLineLabelsNeverOverlap: nine carriers ending at the same score get
// labels at least a line apart, inside the plot, each in its own colour.
func TestLineLabelsNeverOverlap(t *testing.T) {
	fees := []int{500, 2000, 5000}
	var series []FeeSeries
	for i := range 9 {
		series = append(series, FeeSeries{Name: fmt.Sprintf("Carrier %d", i), IsMe: i == 4, Points: []float64{0.3, 0.2, 0.1}})
	}
	v := NewFeeChart("Small one-shot (auto)", fees, series, 2000)
	classes := map[string]bool{}
	ys := make([]float64, 0, len(v.Lines))
	for _, l := range v.Lines {
		ys = append(ys, l.Label.Y)
		classes[l.Class] = true
		if l.Label.Y < v.Top || l.Label.Y > v.Top+v.plotH()+4 {
			t.Errorf("label %s at %.1f is outside the plot", l.Name, l.Label.Y)
		}
	}
	sort.Float64s(ys)
	for i := 1; i < len(ys); i++ {
		if ys[i]-ys[i-1] < 13-1e-9 {
			t.Errorf("labels %.1f and %.1f overlap", ys[i-1], ys[i])
		}
	}
	if len(classes) != 9 {
		t.Errorf("%d distinct colours for 9 carriers", len(classes))
	}
}

func renderString(t *testing.T, c templ.Component) string {
	t.Helper()
	var buf bytes.Buffer
	if err := c.Render(context.Background(), &buf); err != nil {
		t.Fatal(err)
	}
	return buf.String()
}

// TestAPeriodUnderWayIsDrawnSoFar (L23): the last bar of a series whose
// period is still running is drawn apart and named so, with a legend entry;
// without Partial every bar is whole.
func TestAPeriodUnderWayIsDrawnSoFar(t *testing.T) {
	spec := SeriesSpec{Labels: []string{"Mon", "Tue", "Wed"}, Bars: []float64{10, 12, 3}, BarName: "requests"}
	whole := NewSeriesChart(spec)
	for _, b := range whole.Bars {
		if strings.Contains(b.Class, "partial") {
			t.Errorf("a whole period drawn as partial: %+v", b)
		}
	}
	spec.Partial = true
	v := NewSeriesChart(spec)
	last := v.Bars[len(v.Bars)-1]
	if !strings.Contains(last.Class, "partial") || !strings.Contains(last.Title, "so far") {
		t.Errorf("the running period's bar is %+v", last)
	}
	for _, b := range v.Bars[:len(v.Bars)-1] {
		if strings.Contains(b.Class, "partial") {
			t.Errorf("an ended period drawn as partial: %+v", b)
		}
	}
	found := false
	for _, l := range v.Legend {
		found = found || strings.Contains(l.Label, "so far")
	}
	if !found {
		t.Error("the legend does not explain the lighter bar")
	}
}

// TestBarsChartNamesEachCompetitor (L15): each competitor keeps one colour
// across the scenarios and is named in the legend beside "your routing
// price".
func TestBarsChartNamesEachCompetitor(t *testing.T) {
	v := NewBarsChart([]string{"small", "large"}, [][]BarInput{
		{{Name: "Nebula", IsMe: true, Value: 1}, {Name: "Orbit", Value: 2}, {Name: "Fathom", Value: 3}},
		{{Name: "Fathom", Value: 1}, {Name: "Nebula", IsMe: true, Value: 2}, {Name: "Orbit", Value: 3}},
	})
	classOf := map[string]map[string]bool{}
	for _, g := range v.Groups {
		for _, b := range g.Bars {
			name := strings.SplitN(b.Title, ":", 2)[0]
			if classOf[name] == nil {
				classOf[name] = map[string]bool{}
			}
			classOf[name][b.Class] = true
		}
	}
	for name, classes := range classOf {
		if len(classes) != 1 {
			t.Errorf("%s is drawn in %d colours", name, len(classes))
		}
	}
	var legend []string
	for _, l := range v.Legend {
		legend = append(legend, l.Label)
	}
	if strings.Join(legend, ",") != "your routing price,Orbit,Fathom" {
		t.Errorf("legend %v", legend)
	}
}

// TestTheTrafficChartLabelsItsTime: a short chart (a listing's first half
// hour) labels each step; six hours of 10-minute steps are labelled hourly.
func TestTheTrafficChartLabelsItsTime(t *testing.T) {
	steps := func(n int) []TrafficStep {
		out := make([]TrafficStep, n)
		for i := range out {
			out[i] = TrafficStep{Label: fmt.Sprintf("%02d:%02d", 10+i/6, i%6*10), OK: 5}
		}
		return out
	}
	for _, test := range []struct{ steps, labels int }{{1, 1}, {3, 3}, {6, 6}, {12, 6}, {36, 6}} {
		if got := len(NewTrafficChart(steps(test.steps)).XTicks); got != test.labels {
			t.Errorf("%d steps: %d time labels, want %d", test.steps, got, test.labels)
		}
	}
}
