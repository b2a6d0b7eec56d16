package templates

import (
	"math"
	"strings"
)

// SeriesSpec is chart input for a time series: bars, a line, or both, over
// the same steps, with a reference line (the 95 % uptime line), markers
// (fare changes) and shaded spans (incidents). NaN is a gap.
type SeriesSpec struct {
	Title, Description, YLabel, XLabel, TestID string
	Labels                                     []string // one per step
	Bars                                       []float64
	BarName                                    string
	Line                                       []float64
	LineName                                   string
	// Max fixes the top of the y axis (0: from the data).
	Max    float64
	Format func(float64) string
	Ref    *float64
	// RefLabel names the reference line in the legend.
	RefLabel string
	Markers  []Marker
	Spans    [][2]int // [first, last] step of each span
	SpanName string
	// Partial says the last step's period is still running: its bar is
	// drawn as "so far", not as a whole period.
	Partial bool
	// Table is the same data as text, under a <details>.
	TableHead []string
	TableRows [][]string
}

// Marker is a vertical line at a step.
type Marker struct {
	Step  int
	Label string
}

// SeriesChartView is a laid-out series chart.
type SeriesChartView struct {
	ChartFrame
	TestID    string
	Bars      []BarRect
	Line      string
	LineTitle string
	Dots      []SeriesDot
	Ref       *RefLine
	Markers   []MarkerLine
	Spans     []BarRect
	Legend    []LegendItem
	ChartTable
}

// SeriesDot is a point of the line with its hover text.
type SeriesDot struct {
	X, Y  float64
	Title string
}

// RefLine is a horizontal reference line.
type RefLine struct {
	Y     float64
	Label string
}

// MarkerLine is a vertical marker.
type MarkerLine struct {
	X     float64
	Label string
}

// LegendItem is one entry of the legend under the chart.
type LegendItem struct {
	Class, Label string
}

// NewSeriesChart lays out a series chart.
func NewSeriesChart(s SeriesSpec) SeriesChartView {
	v := SeriesChartView{ChartFrame: frame(s.Title, s.Description, s.XLabel, s.YLabel), TestID: s.TestID,
		ChartTable: ChartTable{TableHead: s.TableHead, TableRows: s.TableRows}}
	v.Right, v.Height = 24, 260
	format := s.Format
	if format == nil {
		format = AxisExact
	}
	n := max(len(s.Labels), len(s.Bars), len(s.Line))
	if n == 0 {
		return v
	}
	top := s.Max
	if top == 0 {
		for _, vals := range [][]float64{s.Bars, s.Line} {
			for _, x := range vals {
				if !math.IsNaN(x) {
					top = math.Max(top, x)
				}
			}
		}
		top = niceMax(top)
	}
	y := v.yTicks(top, format)
	w := v.plotW() / float64(n)
	base := v.Top + v.plotH()
	label := func(i int) string {
		if i < len(s.Labels) {
			return s.Labels[i]
		}
		return ""
	}
	for i, b := range s.Bars {
		if math.IsNaN(b) || b <= 0 {
			continue
		}
		x := v.Left + w*float64(i)
		bar := BarRect{X: x + w*0.1, Y: y(b), W: math.Max(w*0.8, 1), H: base - y(b), Class: "bar me",
			Title: label(i) + ": " + format(b) + " " + s.BarName}
		if s.Partial && i == len(s.Bars)-1 {
			bar.Class, bar.Title = "bar me partial", bar.Title+" so far (the period is not over)"
		}
		v.Bars = append(v.Bars, bar)
	}
	var pts []string
	for i, l := range s.Line {
		if math.IsNaN(l) {
			continue
		}
		x, yy := v.Left+w*(float64(i)+0.5), y(math.Min(l, top))
		pts = append(pts, f1(x)+","+f1(yy))
		v.Dots = append(v.Dots, SeriesDot{X: x, Y: yy, Title: label(i) + ": " + format(l) + " " + s.LineName})
	}
	v.Line, v.LineTitle = strings.Join(pts, " "), s.LineName
	if s.Ref != nil {
		v.Ref = &RefLine{Y: y(*s.Ref), Label: s.RefLabel}
	}
	for _, m := range s.Markers {
		v.Markers = append(v.Markers, MarkerLine{X: v.Left + w*float64(m.Step), Label: m.Label})
	}
	for _, sp := range s.Spans {
		x := v.Left + w*float64(sp[0])
		v.Spans = append(v.Spans, BarRect{X: x, Y: v.Top, W: w * float64(sp[1]-sp[0]+1), H: v.plotH(), Class: "span",
			Title: s.SpanName + ": " + label(sp[0]) + " to " + label(sp[1])})
	}
	every := max(1, (n+5)/6)
	for i := 0; i < n; i += every {
		v.XTicks = append(v.XTicks, Tick{Pos: v.Left + w*(float64(i)+0.5), Label: label(i)})
	}
	if len(s.Bars) > 0 {
		v.Legend = append(v.Legend, LegendItem{Class: "bars", Label: s.BarName})
		if s.Partial {
			v.Legend = append(v.Legend, LegendItem{Class: "bars partial", Label: "so far (the last period is not over)"})
		}
	}
	if len(s.Line) > 0 {
		v.Legend = append(v.Legend, LegendItem{Class: "line", Label: s.LineName})
	}
	if s.Ref != nil {
		v.Legend = append(v.Legend, LegendItem{Class: "ref", Label: s.RefLabel})
	}
	if len(s.Markers) > 0 {
		v.Legend = append(v.Legend, LegendItem{Class: "marker", Label: "fare published"})
	}
	if len(s.Spans) > 0 {
		v.Legend = append(v.Legend, LegendItem{Class: "span", Label: s.SpanName})
	}
	return v
}
