package web

import (
	"context"
	"fmt"
	"math"
	"net/http"
	"sort"
	"strconv"
	"strings"
	"time"

	"github.com/labstack/echo/v4"

	"github.com/airside/airside/internal/catalogue"
	"github.com/airside/airside/internal/election"
	"github.com/airside/airside/internal/fare"
	"github.com/airside/airside/internal/money"
	"github.com/airside/airside/internal/preview"
	"github.com/airside/airside/internal/workflow"
	"github.com/airside/airside/templates"
)

// previewControls are the preview's own fields: workload mix, custom
// scenario and chart focus.
type previewControls struct {
	mix    map[string]float64
	text   map[string]string
	custom *preview.Scenario
	form   templates.CustomScenario
	focus  string
}

var mixKeys = []struct{ key, label string }{
	{"small", "Small one-shot"}, {"large", "Large prompt"}, {"coding", "Coding agent session"}, {"chat", "Chat"},
}

func parsePreviewControls(c echo.Context, now time.Time) previewControls {
	ctl := previewControls{mix: map[string]float64{}, text: map[string]string{}, focus: c.FormValue("focus")}
	for _, k := range mixKeys {
		v := strings.TrimSpace(c.FormValue("mix_" + k.key))
		ctl.text[k.key] = v
		if f, err := strconv.ParseFloat(v, 64); err == nil && f >= 0 && f <= 1e6 && !math.IsNaN(f) {
			ctl.mix[k.key] = f
		}
	}
	ctl.form = templates.CustomScenario{Prompt: c.FormValue("custom_prompt"), Workload: c.FormValue("custom_workload"),
		Routing: c.FormValue("custom_routing"), Hour: c.FormValue("custom_hour"), Day: c.FormValue("custom_day"),
		Streaming: c.FormValue("custom_streaming") != ""}
	requires := map[string]bool{}
	if err := c.Request().ParseForm(); err == nil {
		for _, r := range c.Request().Form["custom_requires"] {
			requires[r] = true
		}
	}
	for _, flag := range election.AllCapabilities() {
		ctl.form.Requires = append(ctl.form.Requires, templates.CapabilityOption{Name: flag.String(),
			Label: strings.ReplaceAll(flag.String(), "_", " "), Checked: requires[flag.String()]})
	}
	prompt, err := strconv.ParseInt(strings.TrimSpace(ctl.form.Prompt), 10, 64)
	if err != nil || prompt <= 0 || prompt > 10_000_000 {
		return ctl
	}
	sc := preview.Scenario{Key: "custom", PromptTokens: prompt, Streaming: ctl.form.Streaming}
	sc.Workload, _ = election.ParseWorkload(ctl.form.Workload)
	sc.Routing, _ = election.ParseMode(ctl.form.Routing)
	for name := range requires {
		if flag, ok := election.ParseCapability(name); ok {
			sc.Requires = sc.Requires.With(flag)
		}
	}
	if hour, err := strconv.Atoi(strings.TrimSpace(ctl.form.Hour)); err == nil && hour >= 0 && hour <= 23 {
		day, _ := strconv.Atoi(ctl.form.Day)
		today := time.Date(now.Year(), now.Month(), now.Day(), 0, 0, 0, 0, time.UTC)
		offset := (day - int(today.Weekday()) + 7) % 7
		sc.At = today.AddDate(0, 0, offset).Add(time.Duration(hour) * time.Hour)
	}
	sc.Name = fmt.Sprintf("Custom: %d tokens, %s, %s", prompt, sc.Workload, sc.Routing)
	ctl.custom = &sc
	return ctl
}

func usd(v float64) string {
	if v != 0 && math.Abs(v) < 0.01 {
		return fmt.Sprintf("$%.6f", v)
	}
	return fmt.Sprintf("$%.4f", v)
}

func score(v float64) string { return strconv.FormatFloat(v, 'f', 4, 64) }

func pct(v float64) string { return strconv.FormatFloat(v, 'f', 2, 64) + " %" }

// previewPanel computes the preview of fare f for listing l.
func (s *Server) previewPanel(ctx context.Context, l *catalogue.Listing, f *fare.Fare, ctl previewControls, formID, fragmentURL string) (templates.PreviewPanel, error) {
	m, err := s.market(ctx, l.Model.ID)
	if err != nil {
		return templates.PreviewPanel{}, err
	}
	res := preview.Build(preview.Input{Market: m, Model: l.Model.Slug, ListingID: l.ID, Fare: f, At: s.Now().UTC(),
		Custom: ctl.custom, Mix: ctl.mix, Focus: ctl.focus})
	return panelView(res, f, ctl, formID, fragmentURL), nil
}

// panelView shapes a preview for the page.
func panelView(res preview.Result, f *fare.Fare, ctl previewControls, formID, fragmentURL string) templates.PreviewPanel {
	v := templates.PreviewPanel{FormID: formID, FragmentURL: fragmentURL, Custom: ctl.form}
	if f == nil {
		v.Error = "This listing has no fare yet: type one to preview it."
		return v
	}
	e := res.Effective
	v.Effective = []templates.KV{
		{Label: "Input", Value: dollars(f.Input), Hint: "routes at " + dollars(e.Input)},
		{Label: "Output", Value: dollars(f.Output), Hint: "routes at " + dollars(e.Output)},
		{Label: "Cached input", Value: optDollars(f.CachedInput), Hint: effectiveHint(e.CachedInput)},
		{Label: "You keep", Value: e.Kept.Percent() + " cents", Hint: "of every filed dollar"},
	}
	for _, sc := range res.Scenarios {
		v.Rows = append(v.Rows, scenarioRow(sc))
		v.Win = append(v.Win, winRow(sc))
		b := templates.BallotView{Scenario: sc.Scenario.Name, Key: sc.Scenario.Key}
		for _, c := range sc.Ballot {
			rank := strconv.Itoa(c.Rank)
			if !c.Eligible {
				rank = "excluded"
			}
			b.Rows = append(b.Rows, templates.BallotRow{Rank: rank, Name: c.Name, Me: c.IsMe, Input: dollars(c.Input), Output: dollars(c.Output),
				Cached: optDollars(c.CachedInput), Uptime: optNumber(c.Uptime, "%.2f %%"), TTFT: optNumber(c.Latency, "%.0f ms"),
				TPS: optNumber(c.TPS, "%.0f"), Score: scoreOrDash(c)})
		}
		v.Ballots = append(v.Ballots, b)
		v.Focus = append(v.Focus, templates.Option{Value: sc.Scenario.Key, Label: sc.Scenario.Name, Selected: sc.Scenario.Key == res.Focus})
	}
	v.Share = templates.ShareView{Total: pct(res.Share.Total * 100), Revenue: fmt.Sprintf("$%.2f", res.Share.RevenuePerMillion)}
	for i, ms := range res.Share.Mix {
		outcome := "rank 1"
		switch {
		case ms.Eligible == 0 || ms.Share == 0:
			outcome = "not eligible"
		case !ms.Wins:
			outcome = "exploration only"
		}
		v.Share.Rows = append(v.Share.Rows, templates.ShareRow{Name: ms.Name, Percent: fmt.Sprintf("%.1f", ms.Percent), Outcome: outcome,
			Share: pct(ms.Share * 100), PerRequest: fmt.Sprintf("$%.6f", ms.RevenuePerRequest)})
		value := ctl.text[mixKeys[i].key]
		if value == "" {
			value = fmt.Sprintf("%g", math.Round(ms.Percent*10)/10)
		}
		v.Mix = append(v.Mix, templates.MixInput{Name: "mix_" + mixKeys[i].key, Label: mixKeys[i].label, Value: value})
	}
	var series []templates.FeeSeries
	for _, s := range res.FeeCurve.Series {
		series = append(series, templates.FeeSeries{Name: s.Name, IsMe: s.IsMe, Points: s.Points})
	}
	v.FeeChart = templates.NewFeeChart(res.FeeCurve.Scenario, res.FeeCurve.FeesBP, series, res.FeeCurve.CurrentBP)
	var groups []string
	var bars [][]templates.BarInput
	for _, b := range res.Bars {
		groups = append(groups, shortScenario(b.Scenario))
		var in []templates.BarInput
		for _, bar := range b.Bars {
			in = append(in, templates.BarInput{Name: bar.Name, IsMe: bar.IsMe, Value: bar.Value})
		}
		bars = append(bars, in)
	}
	v.Bars = templates.NewBarsChart(groups, bars)
	if res.Heatmap != nil {
		v.Heatmap = templates.NewHeatmap(res.Heatmap.Scenario, res.Heatmap.Ranks, res.Heatmap.Of)
	}
	return v
}

func effectiveHint(m *money.Micros) string {
	if m == nil {
		return "no cached price: cache hits rank at the input price"
	}
	return "routes at " + dollars(*m)
}

func scoreOrDash(c preview.Competitor) string {
	if !c.Eligible {
		return strings.Join(c.Excluded, ", ")
	}
	return score(c.Score)
}

// shortScenario is a scenario's label under a bar group.
func shortScenario(name string) string {
	r := strings.NewReplacer("Small one-shot", "small", "Large prompt, general API", "large", "Coding agent session opener", "coding",
		"Chat", "chat", " (", "/", ")", "")
	out := r.Replace(name)
	if strings.HasPrefix(out, "Custom") {
		return "custom"
	}
	return out
}

func scenarioRow(sc preview.ScenarioResult) templates.ScenarioRow {
	m := sc.Mine
	row := templates.ScenarioRow{Key: sc.Scenario.Key, Name: sc.Scenario.Name, Winner: orDash(sc.Winner)}
	switch {
	case !m.OnBallot:
		row.Class, row.Rank = "excluded", "not listed"
		return row
	case !m.Eligible:
		row.Class, row.Rank = "excluded", "excluded: "+strings.Join(m.Excluded, ", ")
		return row
	}
	c := m.Contributions
	row.TokenPrice, row.RoutingPrice = usd(m.TokenPrice), usd(m.RoutingPrice)
	row.Price, row.Uptime, row.Throughput, row.Latency, row.Cache = score(c.Price), score(c.Uptime), score(c.Throughput), score(c.Latency), score(c.Cache)
	row.Penalties, row.Score = score(m.UptimePenalty+m.PriorityPenalty), score(m.Score)
	row.Rank = fmt.Sprintf("%d of %d", m.Rank, m.Of)
	row.Gap = "—"
	row.Class = "lose"
	if m.Rank == 1 {
		row.Class = "win"
	} else {
		row.Gap = fmt.Sprintf("+%.4f", m.Gap)
	}
	return row
}

func winRow(sc preview.ScenarioResult) templates.WinRow {
	w := sc.Win
	row := templates.WinRow{Scenario: sc.Scenario.Name}
	multiplier := func(v float64) string { return strconv.FormatFloat(v, 'f', 3, 64) }
	if w.WinsNow {
		row.Status, row.Class = "You win", "win"
		if w.Price.Unbounded {
			row.Lines = append(row.Lines, "You win at any price: no eligible competitor.")
		} else if w.Price.CanWin {
			row.Lines = append(row.Lines, fmt.Sprintf("Room to raise prices: up to x%s (input %s, output %s) still wins.",
				multiplier(w.Price.Value), dollars(w.NewInput), dollars(w.NewOutput)))
		}
		if w.LandingFee.CanWin && w.LandingFeeBP > fare.MinLandingFee {
			row.Lines = append(row.Lines, fmt.Sprintf("A landing fee as low as %s %% still wins.", w.LandingFeeBP.Percent()))
		}
		if !w.Displace.WinsNow && w.Displace.CanWin {
			row.Lines = append(row.Lines, fmt.Sprintf("Your lead is under %.2f points: a challenger could displace you; x%s (input %s) would make it stable.",
				election.IncumbentMargin, multiplier(w.Displace.Value), dollars(w.DisplaceInput)))
		}
		return row
	}
	row.Status, row.Class = "To win", "lose"
	if !sc.Mine.Eligible {
		row.Status, row.Class = "Cannot win", "excluded"
		row.Lines = append(row.Lines, "Excluded: "+strings.Join(sc.Mine.Excluded, ", ")+". No fare changes that: a missing capability must be declared and verified, a rate cap must reset.")
		return row
	}
	if w.Price.CanWin {
		cached := ""
		if w.NewCachedInput != nil {
			cached = ", cached " + dollars(*w.NewCachedInput)
		}
		row.Lines = append(row.Lines, fmt.Sprintf("Prices x%s (%+.1f %%): input %s, output %s%s.", multiplier(w.Price.Value),
			(w.Price.Value-1)*100, dollars(w.NewInput), dollars(w.NewOutput), cached))
	}
	if w.LandingFee.CanWin {
		row.Lines = append(row.Lines, fmt.Sprintf("Or a landing fee of at least %s %% (at today's prices).", w.LandingFeeBP.Percent()))
	} else if w.LandingFee.Reason != "" {
		row.Lines = append(row.Lines, "No landing fee up to 50 % is enough on its own.")
	}
	if w.Discount.CanWin {
		row.Lines = append(row.Lines, fmt.Sprintf("Or a discount of at least %s %%.", w.DiscountBP.Percent()))
	}
	if w.Displace.CanWin && !w.Displace.Unbounded {
		row.Lines = append(row.Lines, fmt.Sprintf("To displace a stable incumbent (a lead of more than %.2f): x%s, input %s, output %s.",
			election.IncumbentMargin, multiplier(w.Displace.Value), dollars(w.DisplaceInput), dollars(w.DisplaceOutput)))
	}
	if !w.Price.CanWin && !w.LandingFee.CanWin && !w.Discount.CanWin {
		row.Status, row.Class = "Cannot win", "excluded"
		row.Lines = append(row.Lines, strings.TrimPrefix(w.Reason, "cannot win: "))
	}
	if w.Uptime.CanWin && sc.Mine.UptimePenalty > 0 {
		row.Lines = append(row.Lines, fmt.Sprintf("At today's fare, an uptime of %.2f %% would win.", math.Ceil(w.Uptime.Value*100)/100))
	}
	return row
}

// previewTarget is a listing the user may preview: their carrier's, or any
// for staff.
func (s *Server) previewTarget(c echo.Context) (*catalogue.Listing, error) {
	id, err := pathID(c, "id")
	if err != nil {
		return nil, err
	}
	return s.Reads.FindListingHeader(c.Request().Context(), id, workflow.Scope(principal(c)))
}

func (s *Server) handlePreviewPage(c echo.Context) error {
	l, err := s.previewTarget(c)
	if err != nil {
		return err
	}
	return s.renderPreview(c, l, fare.FormOf(l.Published), true)
}

// handlePreview previews posted values: the compact form of the preview page
// or the whole filing form. With "X-Preview: fragment" it answers only the
// panel, for the script that keeps it current as the carrier types.
func (s *Server) handlePreview(c echo.Context) error {
	l, err := s.previewTarget(c)
	if err != nil {
		return err
	}
	var form fare.Form
	if c.FormValue("full_form") != "" {
		if form, err = parseFareForm(c); err != nil {
			return err
		}
	} else {
		form = fare.FormOf(l.Published)
		for name, dst := range map[string]*string{"input": &form.Input, "output": &form.Output, "cached_input": &form.CachedInput,
			"landing_fee": &form.LandingFee, "discount": &form.Discount} {
			if v, ok := c.Request().PostForm[name]; ok && len(v) > 0 {
				*dst = v[0]
			}
		}
	}
	if c.Request().Header.Get("X-Preview") == "fragment" {
		formID := "preview-form"
		if c.FormValue("full_form") != "" {
			formID = "fare-form"
		}
		panel, err := s.panelFor(c, l, form, formID)
		if err != nil {
			return err
		}
		return render(c, http.StatusOK, templates.PreviewPanelView(panel))
	}
	return s.renderPreview(c, l, form, false)
}

// panelFor parses a typed form and previews it; a form that does not parse
// gets a panel naming what to fix.
func (s *Server) panelFor(c echo.Context, l *catalogue.Listing, form fare.Form, formID string) (templates.PreviewPanel, error) {
	fragment := fmt.Sprintf("/listings/%d/preview", l.ID)
	ctl := parsePreviewControls(c, s.Now().UTC())
	form.EffectiveAt = "" // a date in the past does not stop a preview
	parsed, errs := form.Parse(s.Now())
	if errs != nil {
		fields := make([]string, 0, len(errs))
		for f := range errs {
			fields = append(fields, strings.ReplaceAll(f, "_", " "))
		}
		sort.Strings(fields)
		return templates.PreviewPanel{FormID: formID, FragmentURL: fragment, Custom: ctl.form,
			Error: "Fix the marked fields to see the preview: " + strings.Join(fields, ", ") + "."}, nil
	}
	return s.previewPanel(c.Request().Context(), l, parsed.Fare, ctl, formID, fragment)
}

func (s *Server) renderPreview(c echo.Context, l *catalogue.Listing, form fare.Form, initial bool) error {
	v := templates.PreviewView{Page: s.page(c, "Preview · "+l.Model.Name, "listings"), Listing: listingHeader(l),
		Action: fmt.Sprintf("/listings/%d/preview", l.ID), FragmentURL: fmt.Sprintf("/listings/%d/preview", l.ID), Form: form,
		FileURL: fmt.Sprintf("/listings/%d/file", l.ID)}
	if !initial {
		if _, errs := form.Parse(s.Now()); errs != nil {
			v.Errors = errs
		}
	}
	panel, err := s.panelFor(c, l, form, "preview-form")
	if err != nil {
		return err
	}
	v.Panel = panel
	status := http.StatusOK
	if len(v.Errors) > 0 {
		status = http.StatusUnprocessableEntity
	}
	return render(c, status, templates.Preview(v))
}
