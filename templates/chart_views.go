package templates

import (
	"fmt"
	"math"
	"sort"
	"strconv"
	"strings"

	"github.com/airside/airside/internal/fare"
)

// The charts are inline SVG drawn on the server: readable without
// JavaScript, with axis labels and units, and testable as text. This file
// turns chart data into geometry; charts.templ draws it.

// Point is a pixel position.
type Point struct{ X, Y float64 }

// Tick is an axis tick with its label.
type Tick struct {
	Pos   float64
	Label string
}

// Line is one polyline of a chart.
type Line struct {
	Name   string
	Points string // "x,y x,y ..." for <polyline>
	Class  string
	Label  Point // where the legend label goes
}

// ChartFrame is the shared geometry of a chart.
type ChartFrame struct {
	Width, Height                      float64
	Left, Right, Top, Bottom           float64
	XTicks, YTicks                     []Tick
	XLabel, YLabel, Title, Description string
}

// ChartTable is a chart's figures as text, shown under it in a <details>:
// what a keyboard or screen reader cannot take from the marks and their
// tooltips.
type ChartTable struct {
	TableHead []string
	TableRows [][]string
}

// FeeChartView is score against landing fee, one line per candidate.
type FeeChartView struct {
	ChartFrame
	ChartTable
	Lines   []Line
	Current float64 // x of the carrier's current fee
}

// BarRect is one bar.
type BarRect struct {
	X, Y, W, H float64
	Class      string
	Title      string
}

// BarGroup is one scenario's bars with its label.
type BarGroup struct {
	Label  string
	LabelX float64
	Bars   []BarRect
}

// BarsChartView is routing prices per scenario.
type BarsChartView struct {
	ChartFrame
	ChartTable
	Groups []BarGroup
	// Legend names every bar's colour: yours, then each competitor (L15).
	Legend []LegendItem
}

// HeatCell is one hour of the week.
type HeatCell struct {
	X, Y, W, H float64
	Class      string
	Title      string
	Text       string
}

// HeatmapView is the rank for each hour of the week.
type HeatmapView struct {
	ChartFrame
	ChartTable
	Cells   []HeatCell
	Days    []Tick
	Hours   []Tick
	Legend  []HeatCell
	Present bool
}

// FeeSeries is chart input: a line's name and y values (NaN = not eligible).
type FeeSeries struct {
	Name   string
	IsMe   bool
	Points []float64
}

// niceMax rounds a maximum up to 1, 2 or 5 times a power of ten.
func niceMax(v float64) float64 {
	if v <= 0 || math.IsNaN(v) {
		return 1
	}
	p := math.Pow(10, math.Floor(math.Log10(v)))
	for _, m := range []float64{1, 2, 5, 10} {
		if v <= m*p {
			return m * p
		}
	}
	return 10 * p
}

func frame(title, desc, xLabel, yLabel string) ChartFrame {
	return ChartFrame{Width: 680, Height: 320, Left: 64, Right: 150, Top: 28, Bottom: 48,
		Title: title, Description: desc, XLabel: xLabel, YLabel: yLabel}
}

func (f ChartFrame) plotW() float64 { return f.Width - f.Left - f.Right }
func (f ChartFrame) plotH() float64 { return f.Height - f.Top - f.Bottom }

// yTicks puts five ticks from 0 to max.
func (f *ChartFrame) yTicks(max float64, format func(float64) string) func(float64) float64 {
	y := func(v float64) float64 { return f.Top + f.plotH()*(1-v/max) }
	for i := range 5 {
		v := max * float64(i) / 4
		f.YTicks = append(f.YTicks, Tick{Pos: y(v), Label: format(v)})
	}
	return y
}

// NewFeeChart lays out score against landing fee (basis points on x).
func NewFeeChart(scenario string, feesBP []int, series []FeeSeries, currentBP int) FeeChartView {
	v := FeeChartView{ChartFrame: frame("Score against your landing fee", "Scores of every candidate in "+scenario+
		" as your landing fee goes from "+fare.MinLandingFee.Percent()+" % to "+fare.MaxLandingFee.Percent()+" %; lower wins.", "Your landing fee (%)", "Score (lower wins)")}
	if len(feesBP) < 2 {
		return v
	}
	maxY := 0.0
	for _, s := range series {
		for _, p := range s.Points {
			if !math.IsNaN(p) {
				maxY = math.Max(maxY, p)
			}
		}
	}
	maxY = niceMax(maxY)
	lo, hi := float64(feesBP[0]), float64(feesBP[len(feesBP)-1])
	x := func(bp float64) float64 { return v.Left + v.plotW()*(bp-lo)/(hi-lo) }
	y := v.yTicks(maxY, AxisNumber)
	for bp := 500; bp <= 5000; bp += 500 {
		v.XTicks = append(v.XTicks, Tick{Pos: x(float64(bp)), Label: fmtNum(float64(bp) / 100)})
	}
	v.Current = x(float64(currentBP))
	for i, s := range series {
		var pts []string
		var last Point
		for j, p := range s.Points {
			if math.IsNaN(p) {
				continue
			}
			last = Point{X: x(float64(feesBP[j])), Y: y(p)}
			pts = append(pts, fmt.Sprintf("%.1f,%.1f", last.X, last.Y))
		}
		class := fmt.Sprintf("series s%d", i%len(seriesPalette))
		if s.IsMe {
			class = "series me"
		}
		v.Lines = append(v.Lines, Line{Name: s.Name, Points: strings.Join(pts, " "), Class: class, Label: Point{X: last.X + 6, Y: last.Y + 4}})
	}
	spreadLabels(v.Lines, v.Top+8, v.Top+v.plotH()+4, 13)
	v.TableHead = []string{"Your landing fee"}
	for _, s := range series {
		name := s.Name
		if s.IsMe {
			name += " (you)"
		}
		v.TableHead = append(v.TableHead, name)
	}
	for j, bp := range feesBP {
		if bp%500 != 0 && j != 0 && j != len(feesBP)-1 {
			continue // every 5 points: the table is for reading, not plotting
		}
		row := []string{fmtNum(float64(bp)/100) + " %"}
		for _, s := range series {
			if j >= len(s.Points) || math.IsNaN(s.Points[j]) {
				row = append(row, "not eligible")
			} else {
				row = append(row, strconv.FormatFloat(s.Points[j], 'f', 3, 64))
			}
		}
		v.TableRows = append(v.TableRows, row)
	}
	return v
}

// seriesPalette is ten colours told apart with common colour blindness
// (Okabe-Ito first), matched by the s0..s9 classes of airside.css.
var seriesPalette = []string{"#E69F00", "#56B4E9", "#009E73", "#0072B2", "#D55E00", "#CC79A7", "#6b6b6b", "#8c564b", "#7f7f00", "#17becf"}

// spreadLabels moves line-end labels apart so no two overlap: sorted by
// height, each at least gap below the one above, then pushed back up from
// the bottom if they ran past it.
func spreadLabels(lines []Line, top, bottom, gap float64) {
	order := make([]int, len(lines))
	for i := range order {
		order[i] = i
	}
	sort.SliceStable(order, func(a, b int) bool { return lines[order[a]].Label.Y < lines[order[b]].Label.Y })
	prev := top - gap
	for _, i := range order {
		lines[i].Label.Y = math.Max(lines[i].Label.Y, prev+gap)
		prev = lines[i].Label.Y
	}
	next := bottom + gap
	for k := len(order) - 1; k >= 0; k-- {
		i := order[k]
		lines[i].Label.Y = math.Min(lines[i].Label.Y, next-gap)
		next = lines[i].Label.Y
	}
}

// BarInput is one bar of chart input.
type BarInput struct {
	Name  string
	IsMe  bool
	Value float64
}

// NewBarsChart lays out routing prices per scenario.
func NewBarsChart(groups []string, bars [][]BarInput) BarsChartView {
	v := BarsChartView{ChartFrame: frame("Routing price by scenario", "Routing price of every eligible candidate in each scenario, "+
		"USD per million tokens; your bar is highlighted.", "Scenario", "Routing price (USD / M tokens)")}
	v.Right = 20
	v.Height = 320
	// Room for the group labels and the axis title right under them: no
	// gap between the two (L15).
	v.Bottom = 48
	maxY := 0.0
	for _, g := range bars {
		for _, b := range g {
			maxY = math.Max(maxY, b.Value)
		}
	}
	maxY = niceMax(maxY)
	y := v.yTicks(maxY, AxisUSD)
	if len(groups) == 0 {
		return v
	}
	v.TableHead = []string{"Scenario", "Candidate", "Routing price (USD / M tokens)"}
	// Each competitor keeps one colour across the groups, named in the
	// legend, so its bars can be followed from scenario to scenario.
	colour := map[string]string{}
	v.Legend = []LegendItem{{Class: "bars", Label: "your routing price"}}
	for _, g := range bars {
		for _, b := range g {
			if _, seen := colour[b.Name]; !seen && !b.IsMe {
				colour[b.Name] = "s" + strconv.Itoa(len(colour)%10)
				v.Legend = append(v.Legend, LegendItem{Class: "fill-" + colour[b.Name], Label: b.Name})
			}
		}
	}
	slot := v.plotW() / float64(len(groups))
	for i, name := range groups {
		g := BarGroup{Label: name, LabelX: v.Left + slot*(float64(i)+0.5)}
		n := len(bars[i])
		if n > 0 {
			w := math.Min(18, (slot-8)/float64(n))
			start := v.Left + slot*float64(i) + (slot-w*float64(n))/2
			for j, b := range bars[i] {
				class := "bar fill-" + colour[b.Name]
				if b.IsMe {
					class = "bar me"
				}
				top := y(b.Value)
				g.Bars = append(g.Bars, BarRect{X: start + w*float64(j), Y: top, W: w - 1, H: v.Top + v.plotH() - top, Class: class,
					Title: b.Name + ": " + USD(b.Value)})
				who := b.Name
				if b.IsMe {
					who += " (you)"
				}
				v.TableRows = append(v.TableRows, []string{name, who, USD(b.Value)})
			}
		}
		v.Groups = append(v.Groups, g)
	}
	return v
}

var dayNames = []string{"Sun", "Mon", "Tue", "Wed", "Thu", "Fri", "Sat"}

// NewHeatmap lays out ranks per weekday and UTC hour (0 = not eligible).
func NewHeatmap(scenario string, ranks [7][24]int, of int) HeatmapView {
	v := HeatmapView{ChartFrame: frame("Rank for each hour of the week", "Your rank in "+scenario+" for each UTC hour of each weekday.",
		"Hour (UTC)", "Weekday"), Present: true}
	v.Height = 260
	v.Right = 20
	cw, ch := v.plotW()/24, (v.plotH()-16)/7
	v.TableHead = []string{"Weekday"}
	for h := range 24 {
		v.TableHead = append(v.TableHead, fmt.Sprintf("%02d", h))
	}
	for d := range 7 {
		row := []string{dayNames[d]}
		v.Days = append(v.Days, Tick{Pos: v.Top + ch*(float64(d)+0.5), Label: dayNames[d]})
		for h := range 24 {
			r := ranks[d][h]
			class, text := "heat excluded", "–"
			switch {
			case r == 1:
				class, text = "heat r1", "1"
			case r == 2:
				class, text = "heat r2", "2"
			case r > 2:
				class, text = "heat r3", strconv.Itoa(r)
			}
			title := fmt.Sprintf("%s %02d:00 UTC: rank %d of %d", dayNames[d], h, r, of)
			if r == 0 {
				title = fmt.Sprintf("%s %02d:00 UTC: not eligible", dayNames[d], h)
			}
			v.Cells = append(v.Cells, HeatCell{X: v.Left + cw*float64(h), Y: v.Top + ch*float64(d), W: cw - 1, H: ch - 1, Class: class, Title: title, Text: text})
			row = append(row, text)
		}
		v.TableRows = append(v.TableRows, row)
	}
	for h := 0; h < 24; h += 3 {
		v.Hours = append(v.Hours, Tick{Pos: v.Left + cw*(float64(h)+0.5), Label: fmt.Sprintf("%02d", h)})
	}
	for i, l := range []struct{ class, text string }{{"heat r1", "rank 1"}, {"heat r2", "rank 2"}, {"heat r3", "rank 3+"}, {"heat excluded", "not eligible"}} {
		v.Legend = append(v.Legend, HeatCell{X: v.Left + float64(i)*120, Y: v.Height - 22, W: 14, H: 14, Class: l.class, Text: l.text})
	}
	return v
}

// TrafficStep is chart input: one step's successful and failed requests.
type TrafficStep struct {
	Label       string
	OK, Failed  int64
	Description string
}

// NewTrafficChart lays out requests per step, failures stacked on top.
func NewTrafficChart(steps []TrafficStep) TrafficView {
	v := TrafficView{ChartFrame: frame("Requests, last 6 hours", "Your successful (blue) and failed (red) requests per 10 minutes, as the gateway reported them.",
		"Time (UTC)", "Requests per 10 min"), Present: len(steps) > 0}
	v.Right, v.Height = 20, 240
	maxY := 0.0
	for _, s := range steps {
		maxY = math.Max(maxY, float64(s.OK+s.Failed))
	}
	maxY = niceMax(maxY)
	y := v.yTicks(maxY, AxisWhole)
	if len(steps) == 0 {
		return v
	}
	w := v.plotW() / float64(len(steps))
	base := v.Top + v.plotH()
	// About six time labels whatever the span: hourly over 6 hours of
	// 10-minute steps, every step over a listing's first half hour (a
	// label every sixth step left such a chart one label).
	every := max(1, (len(steps)+5)/6)
	for i, s := range steps {
		x := v.Left + w*float64(i)
		okTop := y(float64(s.OK))
		errTop := y(float64(s.OK + s.Failed))
		v.Bars = append(v.Bars, TrafficBar{X: x, W: math.Max(w-1, 1), OkY: okTop, OkH: base - okTop, ErrY: errTop, ErrH: okTop - errTop, Title: s.Description})
		if i%every == 0 {
			v.XTicks = append(v.XTicks, Tick{Pos: x + w/2, Label: s.Label})
		}
	}
	return v
}
