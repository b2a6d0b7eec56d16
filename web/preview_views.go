package web

import (
	"fmt"
	"math"
	"strconv"
	"strings"
	"time"

	"github.com/airside/airside/internal/election"
	"github.com/airside/airside/internal/fare"
	"github.com/airside/airside/internal/money"
	"github.com/airside/airside/internal/projection"
	"github.com/airside/airside/templates"
)

// The view builders of the preview panel: plain functions of a projection.Result.

// panelView shapes a preview for the page.
func panelView(res projection.Result, f *fare.Fare, ctl previewControls, formID, fragmentURL string, now time.Time) templates.PreviewPanel {
	v := templates.PreviewPanel{FormID: formID, FragmentURL: fragmentURL, Custom: ctl.form,
		ShareEdge: fmt.Sprintf("%.0f %% above the best speed-adjusted price", 100*election.ShareEdge)}
	if f == nil {
		v.Error = "This listing has no fare yet: type one to preview it."
		return v
	}
	e := res.Effective
	v.Effective = []templates.KV{
		{Label: "Input", Value: templates.Dollars(f.Input), Hint: "routes at " + templates.RoutesAt(e.Input)},
		{Label: "Output", Value: templates.Dollars(f.Output), Hint: "routes at " + templates.RoutesAt(e.Output)},
		{Label: "Cached input", Value: templates.OptDollars(f.CachedInput), Hint: effectiveHint(e.CachedInput)},
		{Label: "You keep", Value: e.Kept.Percent() + " cents", Hint: "of every filed dollar"},
	}
	// With a time-of-day schedule the base prices are not what developers
	// pay while it is in force: each block's prices are, so they are shown,
	// and the input row (which the summary beside the form repeats) says so.
	if peak, off := f.BlockPrices(now); peak != nil || off != nil {
		hint := v.Effective[0].Hint + " as the base price, " + baseUntil(f, now)
		for _, b := range []struct {
			name string
			p    *fare.Resolved
		}{{"Peak hours", peak}, {"Off-peak hours", off}} {
			if b.p == nil {
				continue
			}
			v.Effective = append(v.Effective, templates.KV{Label: b.name,
				Value: "input " + templates.Dollars(b.p.Input) + ", output " + templates.Dollars(b.p.Output) + ", cached " + templates.Dollars(b.p.CachedInput),
				Hint:  "route at " + templates.RoutesAt(f.Effective(b.p.Input)) + ", " + templates.RoutesAt(f.Effective(b.p.Output)) + ", " + templates.RoutesAt(f.Effective(b.p.CachedInput))})
			hint += "; " + strings.ToLower(b.name) + " " + templates.Dollars(b.p.Input) + " routes at " + templates.RoutesAt(f.Effective(b.p.Input))
		}
		v.Effective[0].Hint = hint
	}
	for _, sc := range res.Scenarios {
		v.Rows = append(v.Rows, scenarioRow(sc))
		v.Win = append(v.Win, winRow(sc.Scenario.Name, sc.Prospect))
		for _, set := range sc.Sets {
			v.Win = append(v.Win, setWinRow(sc.Scenario.Name, set))
		}
		for _, p := range sc.Projects {
			v.Win = append(v.Win, projectWinRow(sc.Scenario.Name, p))
		}
		if sc.SetsLeft > 0 {
			v.Win = append(v.Win, templates.WinRow{Scenario: fmt.Sprintf("%s: %d smaller sets of preferences", sc.Scenario.Name, sc.SetsLeft),
				Status: templates.Pct(100*sc.SetsLeftPart) + " of its requests",
				Lines:  []string{fmt.Sprintf("Each is won on a ballot of its own, and counts in the share; the %d largest sets are above.", len(sc.Sets))}})
		}
		if sc.UnderShare.OnBallot {
			v.UnderShare = append(v.UnderShare, underShareRow(sc))
		}
		b := templates.BallotView{Scenario: sc.Scenario.Name, Key: sc.Scenario.Key}
		for _, c := range sc.Ballot {
			rank := strconv.Itoa(c.Rank)
			if !c.Eligible {
				rank = "excluded"
			}
			b.Rows = append(b.Rows, templates.BallotRow{Rank: rank, Name: c.Name, Me: c.IsMe, Input: templates.Dollars(c.Input), Output: templates.Dollars(c.Output),
				Cached: templates.OptDollars(c.CachedInput), Uptime: templates.OptNumber(c.Uptime, "%.2f %%"), TTFT: templates.OptNumber(c.Latency, "%.0f ms"),
				TPS: templates.OptNumber(c.TPS, "%.0f"), Score: scoreOrDash(c)})
		}
		v.Ballots = append(v.Ballots, b)
		v.Focus = append(v.Focus, templates.Option{Value: sc.Scenario.Key, Label: sc.Scenario.Name, Selected: sc.Scenario.Key == res.Focus})
	}
	v.Share = templates.ShareView{Total: templates.Pct(res.Share.Total * 100), Revenue: templates.CentsUSD(res.Share.RevenuePerMillion)}
	for i, ms := range res.Share.Mix {
		outcome := "yours: " + ms.Why
		switch {
		case ms.Eligible == 0 || ms.Share == 0:
			outcome = "not eligible"
		case !ms.Wins:
			outcome = "exploration only: " + ms.Why
		}
		v.Share.Rows = append(v.Share.Rows, templates.ShareRow{Name: ms.Name, Percent: templates.Decimal1(ms.Percent), Outcome: outcome,
			Weight: templates.Pct(ms.Weight * 100), Share: templates.Pct(ms.ServedShare * 100), PerRequest: templates.USD(ms.RevenuePerRequest)})
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

// underShareRow says a scenario's share under the share policy and why:
// the adjusted price's parts, the speed against the median, and the edge.
func underShareRow(sc projection.ScenarioResult) templates.WinRow {
	st := sc.UnderShare
	o := st.Outcome
	row := templates.WinRow{Scenario: sc.Scenario.Name, Status: templates.Share(o.Share) + " of its requests", Class: "win"}
	usd := func(v float64) string { return templates.USD(v) }
	p, errs, malformed, firstToken, limited := o.AdjustedParts(st.RoutingPrice)
	parts := "adjusted price " + usd(o.AdjustedPrice) + " = routing price " + usd(p)
	if errs > 0 {
		parts += fmt.Sprintf(" + %s for errors (%.1f %% of tries, counted 8 times)", usd(errs), 100*o.ErrorRate)
	}
	if malformed > 0 {
		parts += fmt.Sprintf(" + %s for malformed tool calls (%.1f %%)", usd(malformed), 100*o.MalformedRate)
	}
	if firstToken > 0 {
		parts += fmt.Sprintf(" + %s for a first token of %.2f s", usd(firstToken), o.TTFTSeconds)
	}
	if limited > 0 {
		parts += fmt.Sprintf(" + %s for 429s (%.1f %% of tries, counted twice)", usd(limited), 100*o.RateLimitedRate)
	}
	row.Lines = append(row.Lines, parts)
	if o.HasSpeed && o.MedianSpeed > 0 {
		effect := 1/math.Sqrt(o.Speed/o.MedianSpeed) - 1
		verb := "costs you"
		if effect < 0 {
			verb, effect = "saves you", -effect
		}
		row.Lines = append(row.Lines, fmt.Sprintf("your speed of %.0f tokens/s against a median of %.0f %s %.1f %% of it", o.Speed, o.MedianSpeed, verb, 100*effect))
	}
	if st.Inside() {
		row.Lines = append(row.Lines, fmt.Sprintf("inside the edge: %.1f %% above the best speed-adjusted price (the edge is %.0f %%)",
			100*o.Distance, 100*election.ShareEdge))
	} else {
		row.Class = "lose"
		take := fmt.Sprintf("%.1f %% cheaper", 100*st.CheaperBy)
		if st.FasterBy > 0 {
			take += fmt.Sprintf(", or %.1f %% faster", 100*st.FasterBy)
		}
		row.Lines = append(row.Lines, fmt.Sprintf("%.1f %% above the best speed-adjusted price, past the %.0f %% edge: %s puts you inside it",
			100*o.Distance, 100*election.ShareEdge, take))
	}
	return row
}

// baseUntil says when a scheduled fare's base price applies: until its
// schedule starts, or, once the schedule is in force (every hour is then
// peak or off-peak), at no hour.
func baseUntil(f *fare.Fare, now time.Time) string {
	if at := f.TimeBased.EffectiveAt; at != nil && at.After(now) {
		return "until the schedule starts " + at.UTC().Format("2006-01-02 15:04") + " UTC"
	}
	return "which applies at no hour: every hour of the schedule is peak or off-peak"
}

func effectiveHint(m *money.Micros) string {
	if m == nil {
		return "no cached price: cache hits rank at the input price"
	}
	return "routes at " + templates.RoutesAt(*m)
}

func scoreOrDash(c projection.Competitor) string {
	if !c.Eligible {
		return strings.Join(c.Excluded, ", ")
	}
	return templates.Score(c.Score)
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

func scenarioRow(sc projection.ScenarioResult) templates.ScenarioRow {
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
	row.TokenPrice, row.RoutingPrice = templates.USD(m.TokenPrice), templates.USD(m.RoutingPrice)
	row.Price, row.Uptime, row.Throughput, row.Latency, row.Cache = templates.Score(c.Price), templates.Score(c.Uptime), templates.Score(c.Throughput), templates.Score(c.Latency), templates.Score(c.Cache)
	row.Penalties, row.Score = templates.Score(m.UptimePenalty+m.PriorityPenalty), templates.Score(m.Score)
	row.Rank = fmt.Sprintf("%d of %d", m.Rank, m.Of)
	row.Gap = "—"
	row.Class = "lose"
	if m.Rank == 1 {
		row.Class = "win"
	} else {
		row.Gap = templates.Points(m.Gap)
	}
	if m.Rank == 1 && !sc.HolderIsMe && sc.Holder != "" {
		// First on the ballot, yet the gateway keeps the traffic where it
		// is: say so beside the rank, or a rank of 1 reads as the share.
		row.Class = "held"
		row.Held = sc.Holder + " keeps its traffic: " + sc.HolderNote
	}
	return row
}

// displaceLine is the prices that lead an incumbent by more than the margin,
// after lead (a sentence's start naming the margin with %.2f).
func displaceLine(w projection.WinPlan, lead string) string {
	return fmt.Sprintf(lead+": x%s, input %s, output %s.", election.IncumbentMargin,
		templates.Multiplier(w.Displace.Value), templates.Dollars(w.DisplaceInput), templates.Dollars(w.DisplaceOutput))
}

// setPartName names the part of a scenario's requests that carried a set
// of preferences, as the preview's rows and "wins now" name it.
func setPartName(scenario string, part float64, set string) string {
	return fmt.Sprintf("%s: the %s asking for %s", scenario, templates.Pct(100*part), set)
}

// projectsPartName names the part of a scenario's requests from API
// projects whose cache rates routing learned apart.
func projectsPartName(scenario string, part float64) string {
	return fmt.Sprintf("%s: the %s from projects routing learned cache rates of apart", scenario, templates.Pct(100*part))
}

// setWinRow says what it takes to win the part of a scenario's requests
// that carried one set of preferences: their own ballot decides them.
func setWinRow(scenario string, set projection.SetProspect) templates.WinRow {
	name := setPartName(scenario, set.Part, set.Set)
	switch {
	case set.Winner == "":
		return templates.WinRow{Scenario: name, Status: "No one serves these", Class: "excluded",
			Lines: []string{"No listing of the model offers what these requests ask for."}}
	case !set.Mine.Eligible:
		return templates.WinRow{Scenario: name, Status: "Cannot win", Class: "excluded",
			Lines: []string{"Excluded (" + strings.Join(set.Mine.Excluded, ", ") + "): these requests go to " + set.Holder + ". No price changes that; what the listing offers does."}}
	case set.OrderDecides && set.HolderIsMe:
		return templates.WinRow{Scenario: name, Status: "You win", Class: "win",
			Lines: []string{"Their provider order tries you first, whatever the prices."}}
	case set.OrderDecides:
		return templates.WinRow{Scenario: name, Status: "Cannot win by price", Class: "excluded",
			Lines: []string{"Their provider order tries " + set.Holder + " first, whatever the prices."}}
	}
	row := winRow(name, set.Prospect)
	if set.HolderIsMe || set.Holder != set.Winner {
		return row
	}
	// Rank and traffic agree (no incumbent keeps these): say which rule.
	row.Lines = append(row.Lines, capitalised(set.HolderNote)+".")
	return row
}

// projectWinRow says what it takes to win the part of a scenario's
// requests from projects routing learned rates of apart: their own
// ballot, under the shape's incumbent.
func projectWinRow(scenario string, p projection.ProjectProspect) templates.WinRow {
	row := winRow(projectsPartName(scenario, p.Part), p.Prospect)
	if !p.HolderIsMe && p.Holder != "" && p.Holder != p.Winner {
		return row
	}
	row.Lines = append(row.Lines, "Elected on the cache-hit rates routing learned of these projects: "+p.HolderNote+".")
	return row
}

func capitalised(s string) string {
	if s == "" {
		return s
	}
	return strings.ToUpper(s[:1]) + s[1:]
}

func winRow(scenario string, sc projection.Prospect) templates.WinRow {
	w := sc.Win
	row := templates.WinRow{Scenario: scenario}
	if w.WinsNow && !sc.HolderIsMe && sc.Holder != "" {
		// Ranked first, but the incumbent keeps the shape: rank alone
		// brings no share; the lead over the margin does.
		row.Status, row.Class = "Rank 1, not served", "held"
		row.Lines = append(row.Lines, sc.Holder+" keeps this traffic: "+sc.HolderNote+".")
		if w.Displace.CanWin && !w.Displace.Unbounded {
			row.Lines = append(row.Lines, displaceLine(w, "To take it, lead by more than %.2f"))
		}
		return row
	}
	if w.WinsNow {
		row.Status, row.Class = "You win", "win"
		if w.Price.Unbounded {
			row.Lines = append(row.Lines, "You win at any price: no eligible competitor.")
		} else if w.Price.CanWin {
			row.Lines = append(row.Lines, fmt.Sprintf("Room to raise prices: up to x%s (input %s, output %s) still wins.",
				templates.Multiplier(w.Price.Value), templates.Dollars(w.NewInput), templates.Dollars(w.NewOutput)))
		}
		if w.LowerFeeWins() {
			row.Lines = append(row.Lines, fmt.Sprintf("A landing fee as low as %s %% still wins.", w.LandingFeeBP.Percent()))
		}
		if !w.Displace.WinsNow && w.Displace.CanWin {
			row.Lines = append(row.Lines, fmt.Sprintf("Your lead is under %.2f points: a challenger could displace you; x%s (input %s) would make it stable.",
				election.IncumbentMargin, templates.Multiplier(w.Displace.Value), templates.Dollars(w.DisplaceInput)))
		}
		return row
	}
	// Where it stands, not only that it loses (issue 29 L16).
	row.Status, row.Class = fmt.Sprintf("Rank %d of %d, %s behind", sc.Mine.Rank, sc.Mine.Of, templates.Points(sc.Mine.Gap)), "lose"
	if !sc.Mine.Eligible {
		row.Status, row.Class = "Cannot win", "excluded"
		row.Lines = append(row.Lines, "Excluded: "+strings.Join(sc.Mine.Excluded, ", ")+". No fare changes that: a missing capability must be declared and verified, a rate cap must reset.")
		return row
	}
	incumbentHolds := !sc.HolderIsMe && sc.Holder != "" && w.Displace.CanWin && !w.Displace.Unbounded
	if w.Price.CanWin {
		cached := ""
		if w.NewCachedInput != nil {
			cached = ", cached " + templates.Dollars(*w.NewCachedInput)
		}
		first := "Prices"
		if incumbentHolds {
			first = "To rank first (no traffic yet while " + sc.Holder + " keeps its margin): prices"
		}
		row.Lines = append(row.Lines, fmt.Sprintf("%s x%s (%+.1f %%): input %s, output %s%s.", first, templates.Multiplier(w.Price.Value),
			(w.Price.Value-1)*100, templates.Dollars(w.NewInput), templates.Dollars(w.NewOutput), cached))
	}
	if w.LandingFee.CanWin {
		row.Lines = append(row.Lines, fmt.Sprintf("Or a landing fee of at least %s %% (at today's prices).", w.LandingFeeBP.Percent()))
	} else if w.LandingFee.Reason != "" {
		row.Lines = append(row.Lines, "No landing fee up to "+fare.MaxLandingFee.Percent()+" % is enough on its own.")
	}
	if w.Discount.CanWin {
		row.Lines = append(row.Lines, fmt.Sprintf("Or a discount of at least %s %%.", w.DiscountBP.Percent()))
	}
	if w.Displace.CanWin && !w.Displace.Unbounded {
		row.Lines = append(row.Lines, displaceLine(w, "To displace a stable incumbent (a lead of more than %.2f)"))
	}
	if !w.Price.CanWin && !w.LandingFee.CanWin && !w.Discount.CanWin {
		row.Status, row.Class = "Cannot win", "excluded"
		row.Lines = append(row.Lines, strings.TrimPrefix(w.Reason, "cannot win: "))
	}
	if w.Uptime.CanWin && sc.Mine.UptimePenalty > 0 {
		row.Lines = append(row.Lines, "At today's fare, an uptime of "+templates.Pct2(math.Ceil(w.Uptime.Value*100)/100)+" would win.")
	}
	return row
}
