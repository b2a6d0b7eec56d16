package web

import (
	"cmp"
	"errors"
	"fmt"
	"math"
	"slices"
	"strings"
	"time"

	"github.com/airside/airside/internal/account"
	"github.com/airside/airside/internal/apperr"
	"github.com/airside/airside/internal/catalogue"
	"github.com/airside/airside/internal/earnings"
	"github.com/airside/airside/internal/election"
	"github.com/airside/airside/internal/money"
	"github.com/airside/airside/internal/payout"
	"github.com/airside/airside/internal/projection"
	"github.com/airside/airside/internal/workflow"
	"github.com/airside/airside/templates"
)

func periodLabel(p earnings.Period, t time.Time) string {
	switch p {
	case earnings.ByHour:
		return t.Format("Jan 2 15:04")
	case earnings.ByMonth:
		return t.Format("Jan 2006")
	}
	return t.Format("Jan 2")
}

func windowText(g earnings.Grouping, since, until time.Time) string {
	return fmt.Sprintf("%s to %s (%s)", since.In(g.Loc).Format("2006-01-02 15:04"), until.In(g.Loc).Format("2006-01-02 15:04"), g.Loc)
}

// listingTotals sums a listing's series.
func listingTotals(points []earnings.Point) (earnings.Point, int64) {
	var t earnings.Point
	for _, p := range points {
		t.Requests += p.Requests
		t.Errors += p.Errors
		t.ClientErrors += p.ClientErrors
		t.Capped += p.Capped
		t.InputTokens += p.InputTokens
		t.CachedInputTokens += p.CachedInputTokens
		t.OutputTokens += p.OutputTokens
		t.Filed += p.Filed
		t.Discount += p.Discount
		t.LandingFee += p.LandingFee
		t.Kept += p.Kept
		t.ModelRequests += p.ModelRequests
		t.TTFTMsSum += p.TTFTMsSum
		t.DurationMs += p.DurationMs
	}
	return t, t.ModelRequests
}

func uptimeText(t earnings.Traffic) string {
	u := t.Uptime()
	if u < 0 {
		return "–"
	}
	return templates.Pct2(100 * u)
}

func carrierTrafficView(page templates.Page, carrier *account.Carrier, carriers []templates.Choice, g earnings.Grouping, tz int,
	since, until, now time.Time, listings []catalogue.Listing, d trafficData, projected map[int64]string) templates.CarrierTrafficView {
	period := g.Period
	v := templates.CarrierTrafficView{Page: page, Carrier: carrier.Name, Carriers: carriers, Window: windowText(g, since, until),
		Periods: periodChoices(fmt.Sprintf("/traffic?carrier=%s&tz=%s", carrier.Slug, tzParam(tz)), period), Zones: tzChoices(tz),
		ZoneAction: "/traffic", Hidden: map[string]string{"carrier": carrier.Slug, "period": string(period)}}
	var all earnings.Point
	var kept []float64
	var labels []string
	var rows [][]string
	lastPartial := false
	for _, l := range listings {
		pts := earnings.Series(g, since, until, d.hours[l.ID], d.history[l.ID], nil)
		if kept == nil {
			kept = make([]float64, len(pts))
			for _, p := range pts {
				labels = append(labels, periodLabel(period, p.Start))
			}
			lastPartial = len(pts) > 0 && g.Next(pts[len(pts)-1].Start).After(now)
		}
		for i, p := range pts {
			kept[i] += p.Kept.Float()
		}
		t, _ := listingTotals(pts)
		shareAll := -1.0
		if model := d.modelTotals[l.Model.ID]; model > 0 {
			shareAll = float64(t.Requests) / float64(model)
		}
		all.Requests += t.Requests
		all.InputTokens += t.InputTokens
		all.OutputTokens += t.OutputTokens
		all.Filed += t.Filed
		all.Kept += t.Kept
		all.Capped += t.Capped
		v.Rows = append(v.Rows, templates.TrafficRow{URL: fmt.Sprintf("/traffic/listings/%d?period=%s", l.ID, period), Model: l.Model.Name,
			Requests: templates.Count(t.Requests), Share: templates.Share(shareAll),
			Tokens: templates.Count(t.InputTokens) + " / " + templates.Count(t.OutputTokens), Filed: templates.AmountUSD(t.Filed), Kept: templates.AmountUSD(t.Kept),
			Uptime: uptimeText(t.Traffic), Capped: templates.Count(t.Capped), Projected: cmp.Or(projected[l.ID], "–")})
	}
	for i, k := range kept {
		rows = append(rows, []string{labels[i], templates.AmountUSD(money.Micros(math.Round(k * 1e6)))})
	}
	v.Figures = []templates.Figure{
		{Label: "requests answered (" + templates.Count(all.Errors+all.ClientErrors) + " of them failed)", Value: templates.Count(all.Requests), TestID: "fig-requests"},
		{Label: "tokens in / out", Value: templates.Count(all.InputTokens) + " / " + templates.Count(all.OutputTokens)},
		{Label: "filed", Value: templates.AmountUSD(all.Filed)},
		{Label: "you kept", Value: templates.AmountUSD(all.Kept), TestID: "fig-kept"},
		{Label: "turned away at your caps", Value: templates.Count(all.Capped)},
	}
	v.Earnings = templates.NewSeriesChart(templates.SeriesSpec{Title: "What you kept", TestID: "earnings-chart",
		Description: "What the carrier kept per " + string(period) + ", all listings, after discount and landing fee, in USD.",
		YLabel:      "USD kept", XLabel: "Time (UTC)", Labels: labels, Bars: kept, BarName: "USD kept", Partial: lastPartial,
		Format: templates.CompactUSD, TableHead: []string{"Period (UTC)", "Kept"}, TableRows: rows})
	first := now
	for _, l := range listings {
		if l.CreatedAt.Before(first) {
			first = l.CreatedAt
		}
	}
	for _, m := range statementMonths(now, first) {
		label := m.Format("January 2006")
		if m.Equal(earnings.MonthOf(now)) {
			label += " (to date)"
		}
		v.Statements = append(v.Statements, templates.Choice{Label: label, URL: "/traffic/statements/" + m.Format("2006-01") + "?carrier=" + carrier.Slug})
	}
	return v
}

// statementMonths are the months a carrier has statements of, newest
// first: those readable now, and none before the month of its first
// listing (since).
func statementMonths(now, since time.Time) []time.Time {
	var out []time.Time
	for _, m := range earnings.StatementMonthsAt(now) {
		if m.Before(earnings.MonthOf(since)) {
			break
		}
		out = append(out, m)
	}
	return out
}

// statementMonth is the month a statement URL names ("2026-11"), when its
// statement is readable at now: not found otherwise (a month not yet
// begun, or older than the statements kept readable).
func statementMonth(text string, now time.Time) (time.Time, error) {
	month, err := time.Parse("2006-01", text)
	if err != nil {
		return month, apperr.Errorf(apperr.ENOTFOUND, "A statement is named by its month, like 2026-11.")
	}
	if !slices.ContainsFunc(earnings.StatementMonthsAt(now), month.Equal) {
		return month, apperr.Errorf(apperr.ENOTFOUND, "Statements cover the last %d months.", earnings.StatementMonths)
	}
	return month, nil
}

func listingTrafficView(page templates.Page, l *catalogue.Listing, g earnings.Grouping, tz int, since, until time.Time, d trafficData,
	past projection.Past) templates.ListingTrafficView {
	period := g.Period
	v := templates.ListingTrafficView{Page: page, Title: l.Model.Name + " · " + l.CarrierName, ListingURL: fmt.Sprintf("/listings/%d", l.ID),
		TrafficURL: fmt.Sprintf("/traffic?carrier=%s&tz=%s", l.CarrierSlug, tzParam(tz)), Window: windowText(g, since, until),
		Periods: periodChoices(fmt.Sprintf("/traffic/listings/%d?tz=%s", l.ID, tzParam(tz)), period), Zones: tzChoices(tz),
		ZoneAction: fmt.Sprintf("/traffic/listings/%d", l.ID), Hidden: map[string]string{"period": string(period)}}
	xLabel := "Time (" + g.Loc.String() + ")"
	pts := earnings.Series(g, since, until, d.hours[l.ID], d.history[l.ID], d.models[l.Model.ID])
	n := len(pts)
	// The window (Grouping.Window) ends with the period under way (today,
	// this hour): its bars are drawn as "so far" (L23).
	partial := n > 0
	labels := make([]string, n)
	req, others, shares, projected, kept, uptime, latency := make([]float64, n), make([]float64, n), make([]float64, n), make([]float64, n),
		make([]float64, n), make([]float64, n), make([]float64, n)
	var reqRows, healthRows, shareRows [][]string
	for i, p := range pts {
		labels[i] = periodLabel(period, p.Start)
		req[i], others[i] = float64(p.Requests), float64(max(p.ModelRequests-p.Requests, 0))
		shares[i], projected[i], kept[i] = math.NaN(), math.NaN(), p.Kept.Float()
		if s := p.Share(); s >= 0 {
			shares[i] = 100 * s
		}
		projectedText, gapText := "–", "–"
		if then, ok := past.Over(p.Start, g.Next(p.Start)); ok {
			projected[i] = 100 * then.Total
			projectedText = templates.Share(then.Total)
			if s := p.Share(); s >= 0 {
				gapText = fmt.Sprintf("%+.1f points", 100*(s-then.Total))
			}
		}
		shareRows = append(shareRows, []string{labels[i], templates.Share(p.Share()), projectedText, gapText})
		uptime[i], latency[i] = math.NaN(), math.NaN()
		if u := p.Uptime(); u >= 0 {
			uptime[i] = 100 * u
		}
		if ms := p.LatencyMs(); ms >= 0 {
			latency[i] = ms
		}
		reqRows = append(reqRows, []string{labels[i], templates.Count(p.Requests), templates.Count(max(p.ModelRequests-p.Requests, 0)), templates.Share(p.Share()),
			templates.AmountUSD(p.Filed), templates.AmountUSD(p.Kept)})
		tps := "–"
		if t := p.Throughput(); t >= 0 {
			tps = templates.Decimal1(t)
		}
		penalty := "–"
		if u := p.Uptime(); u >= 0 {
			penalty = templates.Score(election.UptimePenalty(100 * u))
		}
		healthRows = append(healthRows, []string{labels[i], uptimeText(p.Traffic), penalty, fmtMs(latency[i]), tps})
	}
	var markers []templates.Marker
	for _, f := range d.history[l.ID] {
		if !f.From.Before(since) && f.From.Before(until) {
			step := slices.IndexFunc(pts, func(p earnings.Point) bool { return g.Next(p.Start).After(f.From) && !f.From.Before(p.Start) })
			label := "Fare published " + f.From.Format("2006-01-02 15:04 UTC") + ": input $" + f.Fare.Input.String() + ", output $" + f.Fare.Output.String()
			if step >= 0 {
				markers = append(markers, templates.Marker{Step: step, Label: label})
			}
		}
		if len(f.Fare.Tiers) > 0 {
			v.TierNote = true
		}
	}
	v.Requests = templates.NewSeriesChart(templates.SeriesSpec{Title: "Requests answered", TestID: "requests-chart",
		Description: "Requests this listing served per " + string(period) + " (bars) and every other listing of the model together (line).",
		YLabel:      "Requests", XLabel: xLabel, Labels: labels, Bars: req, BarName: "your requests", Line: others, Partial: partial,
		LineName: "competitors together", Format: templates.Compact, Markers: markers,
		TableHead: []string{"Period", "Requests", "Competitors", "Share", "Filed", "Kept"}, TableRows: reqRows})
	v.Share = templates.NewSeriesChart(templates.SeriesSpec{Title: "Share of the model's traffic, served and projected", TestID: "share-chart",
		Description: "This listing's share of the model's requests per " + string(period) + " as routing served it (bars) and as the preview " +
			"projected it from the fares, health and workload mix in force in each hour (line); fare publications are marked.",
		YLabel: "Share (%)", XLabel: xLabel, Labels: labels, Bars: shares, BarName: "% served", Line: projected, LineName: "% projected",
		Max: 100, Format: templates.AxisWhole, Markers: markers, Partial: partial,
		TableHead: []string{"Period", "Served", "Projected", "Difference"}, TableRows: shareRows})
	v.Earnings = templates.NewSeriesChart(templates.SeriesSpec{Title: "What you kept", TestID: "listing-earnings-chart",
		Description: "USD kept per " + string(period) + " after discount and landing fee, at the fare published at each hour.",
		YLabel:      "USD", XLabel: xLabel, Labels: labels, Bars: kept, BarName: "USD kept", Markers: markers, Partial: partial,
		Format: templates.CompactUSD})
	incidents := earnings.Incidents(d.hours[l.ID])
	var spans [][2]int
	for _, inc := range incidents {
		first := slices.IndexFunc(pts, func(p earnings.Point) bool { return g.Next(p.Start).After(inc.Start) })
		last := slices.IndexFunc(pts, func(p earnings.Point) bool { return !g.Next(p.Start).Before(inc.End) })
		if first >= 0 && last >= first {
			spans = append(spans, [2]int{first, last})
		}
		v.Incidents = append(v.Incidents, templates.IncidentRow{Start: inc.Start.In(g.Loc).Format("2006-01-02 15:04"), End: inc.End.In(g.Loc).Format("2006-01-02 15:04"),
			Worst: templates.Pct(100 * inc.Worst), Failed: templates.Count(inc.Failed), Requests: templates.Count(inc.Requests)})
	}
	line := 100 * earnings.UptimeLine
	v.Uptime = templates.NewSeriesChart(templates.SeriesSpec{Title: "Uptime", TestID: "uptime-chart",
		Description: "Share of requests that did not fail for the listing's reasons, per " + string(period) + "; " + election.UptimePenaltyRule + "; incidents are shaded.",
		YLabel:      "Uptime (%)", XLabel: xLabel, Labels: labels, Line: uptime, LineName: "% uptime", Max: 100, Format: templates.AxisWhole,
		Ref: &line, RefLabel: election.Percent(election.PenaltyUptime) + " %: the uptime penalty starts", Spans: spans, SpanName: "incident",
		TableHead: []string{"Period", "Uptime", "Score penalty at that uptime", "First token", "Tokens/s"}, TableRows: healthRows})
	v.Latency = templates.NewSeriesChart(templates.SeriesSpec{Title: "Time to first token", TestID: "latency-chart",
		Description: "Average time to first token of successful requests per " + string(period) + ", in milliseconds.",
		YLabel:      "ms", XLabel: xLabel, Labels: labels, Line: latency, LineName: "ms to first token", Format: templates.AxisWhole})
	t, model := listingTotals(pts)
	shareAll := -1.0
	if model > 0 {
		shareAll = float64(t.Requests) / float64(model)
	}
	v.Figures = []templates.Figure{
		{Label: "requests answered (" + templates.Count(t.Errors+t.ClientErrors) + " of them failed)", Value: templates.Count(t.Requests), TestID: "fig-requests"},
		{Label: "share of the model", Value: templates.Share(shareAll), TestID: "fig-share"},
		{Label: "filed", Value: templates.AmountUSD(t.Filed)},
		{Label: "discount", Value: templates.AmountUSD(t.Discount)},
		{Label: "landing fee", Value: templates.AmountUSD(t.LandingFee)},
		{Label: "you kept", Value: templates.AmountUSD(t.Kept), TestID: "fig-kept"},
		{Label: "uptime", Value: uptimeText(t.Traffic)},
	}
	if capped, rpm := earnings.CapAdvice(d.hours[l.ID]); capped > 0 {
		cap := "your cap"
		if f := earnings.FareAt(d.history[l.ID], until); f != nil && f.MaxRPM != nil {
			cap = fmt.Sprintf("your cap of %s requests a minute", templates.Count(*f.MaxRPM))
		}
		v.CapNote = fmt.Sprintf("The gateway turned away %s requests at %s in this period. Raising the cap to about %s a minute would have served about %s more requests (hours hide bursts, so the cap that serves them all may be higher).",
			templates.Count(capped), cap, templates.Count(rpm), templates.Count(capped))
	}
	return v
}

func fmtMs(ms float64) string {
	if math.IsNaN(ms) {
		return "–"
	}
	return templates.Millis(ms)
}

func statementView(page templates.Page, doc payout.Document, carrier *account.Carrier, carriers []templates.Choice, now time.Time) templates.StatementView {
	month := doc.Month.Format("2006-01")
	base := "/traffic/statements/" + month
	v := templates.StatementView{Page: page, Carrier: carrier.Name, Month: doc.Month.Format("January 2006"), State: "open, to date",
		CSVURL: base + ".csv?carrier=" + carrier.Slug, PDFURL: base + ".pdf?carrier=" + carrier.Slug, Number: doc.Number}
	switch {
	case doc.Number != "":
		v.State = "issued " + doc.IssuedAt.Format("2006-01-02")
		v.Issued = "Statement " + doc.Number + ", issued " + doc.IssuedAt.Format("2006-01-02 15:04") + " UTC: it never changes; a correction comes as a credit note below."
	case doc.Closed:
		v.State = "closed, provisional"
		v.Issued = "The month is over; gateways may still post its last minutes until " + doc.Month.AddDate(0, 1, 0).Add(payout.SettleAfter).Format("2006-01-02 15:04") +
			" UTC, when the statement is issued with its number."
	}
	v.Carriers = carriers
	for _, m := range statementMonths(now, doc.Since) {
		v.Months = append(v.Months, templates.Choice{Label: m.Format("Jan 2006"), URL: "/traffic/statements/" + m.Format("2006-01") + "?carrier=" + carrier.Slug,
			Active: m.Equal(doc.Month)})
	}
	for _, l := range doc.Lines {
		v.Lines = append(v.Lines, statementRow(l))
	}
	v.Total = statementRow(doc.Total)
	for _, n := range doc.Notes {
		note := templates.CreditNoteView{Number: n.Number, Issued: n.IssuedAt.Format("2006-01-02 15:04"), Reason: n.Reason, Total: statementRow(n.Total)}
		for _, l := range n.Lines {
			note.Lines = append(note.Lines, statementRow(l))
		}
		v.Notes = append(v.Notes, note)
	}
	owed := doc.Total
	if len(doc.Notes) > 0 {
		owed = doc.Net()
		v.Net = statementRow(owed)
	}
	v.Exact = fmt.Sprintf("filed %s, discount %s, landing fee (the gateway's share) %s, you are owed %s", payout.Exact(owed.Filed),
		payout.Exact(owed.Discount), payout.Exact(owed.LandingFee), payout.Exact(owed.Kept))
	if doc.Total.Unpriced > 0 {
		v.Unpriced = fmt.Sprintf("%s requests were served before a fare was published and are not billed here.", templates.Count(doc.Total.Unpriced))
	}
	return v
}

func statementRow(l earnings.Line) templates.StatementRow {
	return templates.StatementRow{Model: l.ModelName, URL: fmt.Sprintf("/traffic/listings/%d?period=month", l.ID),
		Requests: templates.Count(l.Requests), Input: templates.Count(l.InputTokens), Cached: templates.Count(l.CachedInputTokens), Output: templates.Count(l.OutputTokens),
		Filed: templates.AmountUSD(l.Filed), Discount: templates.AmountUSD(l.Discount), LandingFee: templates.AmountUSD(l.LandingFee), Kept: templates.AmountUSD(l.Kept)}
}

// winsWords puts a listing's wins now into words, in scenario order: a
// scenario it holds ("Small one-shot (auto)", with the parts whose
// preferences or projects' learned rates send them elsewhere), or the part
// of one it takes for a set of preferences, as the preview names such
// rows, or for API projects routing learned rates of apart.
func winsWords(wins []projection.Win) string {
	words := make([]string, len(wins))
	for i, w := range wins {
		var not []string
		if w.Elsewhere > 0 {
			not = append(not, fmt.Sprintf("the %s whose preferences go elsewhere", templates.Pct(100*w.Elsewhere)))
		}
		if w.ProjectsElsewhere > 0 {
			not = append(not, fmt.Sprintf("the %s from projects whose learned rates go elsewhere", templates.Pct(100*w.ProjectsElsewhere)))
		}
		switch {
		case w.Set != "":
			words[i] = setPartName(w.Scenario, w.Part, w.Set)
		case w.Projects:
			words[i] = projectsPartName(w.Scenario, w.Part)
		case len(not) > 0:
			words[i] = fmt.Sprintf("%s (not %s)", w.Scenario, strings.Join(not, ", nor "))
		default:
			words[i] = w.Scenario
		}
	}
	return strings.Join(words, ", ")
}

// incidentHours is how recent a listing's latest hour must be for
// operations to show its incident as open.
const incidentHours = 2 * time.Hour

func operationsView(page templates.Page, model, carrier, sortBy string, listings []catalogue.Listing,
	d trafficData, projected map[int64]string, wins map[int64][]projection.Win, waiting []workflow.Filing, now time.Time) templates.OperationsView {
	v := templates.OperationsView{Page: page, Model: model, Carrier: carrier, Sort: sortBy, Waiting: len(waiting)}
	waitingOf := map[int64]workflow.Filing{}
	for _, f := range waiting {
		waitingOf[f.ListingID] = f
	}
	type row struct {
		templates.OperationsRow
		share, uptime float64
		requests      int64
	}
	var rows []row
	seenModels, seenCarriers := map[string]bool{}, map[string]bool{}
	for _, l := range listings {
		if !seenModels[l.Model.Slug] {
			seenModels[l.Model.Slug] = true
			v.Models = append(v.Models, templates.Choice{Label: l.Model.Name, URL: l.Model.Slug, Active: l.Model.Slug == model})
		}
		if !seenCarriers[l.CarrierSlug] {
			seenCarriers[l.CarrierSlug] = true
			v.Carriers = append(v.Carriers, templates.Choice{Label: l.CarrierName, URL: l.CarrierSlug, Active: l.CarrierSlug == carrier})
		}
		if model != "" && l.Model.Slug != model || carrier != "" && l.CarrierSlug != carrier {
			continue
		}
		requests := d.listingTotals[l.ID]
		var latest catalogue.HourlyPoint
		if n := len(d.hours[l.ID]); n > 0 {
			latest = d.hours[l.ID][n-1]
		}
		modelReq := d.modelTotals[l.Model.ID]
		r := row{OperationsRow: templates.OperationsRow{Model: l.Model.Name, Carrier: l.CarrierName, URL: fmt.Sprintf("/listings/%d", l.ID),
			Status: l.Status.Label(), Wins: winsWords(wins[l.ID]), Requests: templates.Count(requests)},
			share: -1, uptime: -1, requests: requests}
		if modelReq > 0 {
			r.share = float64(requests) / float64(modelReq)
		}
		r.Share = templates.Share(r.share)
		r.Projected = cmp.Or(projected[l.ID], "–")
		if u := l.Health.UptimePct; u != nil {
			r.uptime = *u
			r.Uptime = templates.Pct2(*u)
			if *u < election.PenaltyUptime {
				r.UptimeClass = "bad"
			}
		} else {
			r.Uptime = "–"
		}
		r.Latency = "–"
		if ms := l.Health.LatencyMs; ms != nil {
			r.Latency = templates.Millis(*ms)
		}
		if inc := earnings.Incidents([]catalogue.HourlyPoint{latest}); len(inc) > 0 && now.Sub(latest.Hour) < incidentHours {
			r.Incident = fmt.Sprintf("open since %s UTC (worst %s)", latest.Hour.Format("15:04"), templates.Share(inc[0].Worst))
		}
		if f, ok := waitingOf[l.ID]; ok {
			r.Waiting, r.WaitingURL = fmt.Sprintf("filing #%d", f.ID), fmt.Sprintf("/filings/%d", f.ID)
		}
		rows = append(rows, r)
	}
	switch sortBy {
	case "share":
		slices.SortStableFunc(rows, func(a, b row) int { return cmpDesc(a.share, b.share) })
	case "uptime":
		slices.SortStableFunc(rows, func(a, b row) int { return -cmpDesc(a.uptime, b.uptime) })
	case "requests":
		slices.SortStableFunc(rows, func(a, b row) int { return cmpDesc(float64(a.requests), float64(b.requests)) })
	}
	for _, r := range rows {
		v.Rows = append(v.Rows, r.OperationsRow)
	}
	base := "/operations?model=" + model + "&carrier=" + carrier + "&sort="
	for _, s := range []struct{ key, label string }{{"", "model"}, {"share", "share"}, {"requests", "requests"}, {"uptime", "lowest uptime"}} {
		v.Sorts = append(v.Sorts, templates.Choice{Label: s.label, URL: base + s.key, Active: s.key == sortBy})
	}
	return v
}

func cmpDesc(a, b float64) int {
	switch {
	case a > b:
		return -1
	case a < b:
		return 1
	}
	return 0
}

// routingFigures sums what routing did over a listing's hours: how the
// served requests came (routed, pinned, exploration, fallback), failures by
// class (counted against uptime, the callers' own), 429s, requests turned
// away at the cap, and the tool calls with the share malformed; then the
// failure rate, 429 rate and time to first token beside the model's other
// listings (peers, summed over the same period). Nil when the gateway
// reported none of it (hours from before it did).
func routingFigures(hours []catalogue.HourlyPoint, peers catalogue.HourlyPoint) []templates.Figure {
	var total catalogue.Counts
	for _, h := range hours {
		total.Add(h.Counts)
	}
	g := total.GatewayCounts
	if g == (catalogue.GatewayCounts{}) {
		return nil
	}
	mine := catalogue.HourlyPoint{Counts: total}
	errs, clientErrs, capped := total.Errors, total.ClientErrors, total.Capped
	malformed := "–"
	if g.ToolCalls > 0 {
		malformed = templates.Pct(100 * float64(g.MalformedToolCalls) / float64(g.ToolCalls))
	}
	return []templates.Figure{
		{Label: "routed by the election", Value: templates.Count(g.Routed), TestID: "routed"},
		{Label: "pinned by the caller", Value: templates.Count(g.Pinned), TestID: "pinned"},
		{Label: "exploration (1 %)", Value: templates.Count(g.Exploration), TestID: "exploration"},
		{Label: "fallbacks from another listing", Value: templates.Count(g.Fallback), TestID: "fallback"},
		{Label: "failures held against uptime", Value: templates.Count(errs), TestID: "counted-errors"},
		{Label: "callers' errors (not counted)", Value: templates.Count(clientErrs), TestID: "client-errors"},
		{Label: "429s (moved on, not counted)", Value: templates.Count(g.RateLimited), TestID: "rate-limited"},
		{Label: "turned away at your cap", Value: templates.Count(capped), TestID: "capped"},
		{Label: "tool calls", Value: templates.Count(g.ToolCalls), TestID: "tool-calls"},
		{Label: "malformed tool calls", Value: malformed, TestID: "malformed-tool-calls"},
		{Label: "429 backoffs (held back 10 s or more, election.md sec. 8)", Value: templates.Count(g.Backoffs), TestID: "backoffs"},
		{Label: "latency backoffs (first tokens slow against your hour before: held back 60 s)", Value: templates.Count(g.SlowBackoffs), TestID: "slow-backoffs"},
		{Label: "breaker opened / closed (failing well beyond the model's other listings)", Value: templates.Count(g.BreakerOpenings) + " / " + templates.Count(g.BreakerClosings), TestID: "breaker"},
		{Label: "the model's requests elected while a 429 backoff or the breaker held you off the ballot", Value: templates.Count(g.HeldBack), TestID: "held-back"},
		{Label: "failure rate (the model's other listings " + rateText(peers.FailureRate()) + ")", Value: rateText(mine.FailureRate()), TestID: "failure-rate"},
		{Label: "429 rate (the model's other listings " + rateText(peers.LimitRate()) + ")", Value: rateText(mine.LimitRate()), TestID: "rate-limited-rate"},
		{Label: "time to first token (the model's other listings " + msText(peers.TTFTPerSuccess()) + ")", Value: msText(mine.TTFTPerSuccess()), TestID: "ttft-vs-peers"},
		{Label: "end-to-end speed, output tokens a second of the whole answer (the model's other listings " + speedText(peers.Speed()) + ")",
			Value: speedText(mine.Speed()), TestID: "speed-vs-peers"},
	}
}

// thisHourView is the listing's share of the hour under way so far, served
// (the gateway's reports so far) and projected (the same projection as
// every closed hour, over its parts so far); nil when the model had no
// request in it yet.
func thisHourView(now time.Time, l *catalogue.Listing, d trafficData, past projection.Past) *templates.ThisHourView {
	hour := now.UTC().Truncate(time.Hour)
	model := d.models[l.Model.ID][hour]
	if model <= 0 {
		return nil
	}
	v := &templates.ThisHourView{Since: hour.Format("15:04") + " UTC", Served: templates.Share(float64(requestsIn(d.hours[l.ID], hour)) / float64(model)),
		Requests: templates.Count(model), Projected: "–"}
	if then, ok := past.Over(hour, hour.Add(time.Hour)); ok {
		v.Projected = templates.Share(then.Total)
	}
	return v
}

// requestsIn is the listing's requests in the hour starting at hour (0
// without a report of it).
func requestsIn(hours []catalogue.HourlyPoint, hour time.Time) int64 {
	for _, h := range hours {
		if h.Hour.Equal(hour) {
			return h.Requests
		}
	}
	return 0
}

func speedText(tps float64) string {
	if tps < 0 {
		return "–"
	}
	return templates.TokensPerSecond(tps)
}

// shareGapView sets the projected share beside the one routing served in
// the hours, with the causes of the difference (projection.Gap) and what
// the projection could not follow (gaps); model are the model's requests
// by hour over the same period.
func shareGapView(projected projection.Share, past projection.Past, from time.Time, hours []catalogue.HourlyPoint, model map[time.Time]int64,
	gaps projection.DemandGaps) *templates.ShareGapView {
	g, modelRequests := projection.Gap(projected, past, from, hours, model, gaps.Unservable)
	points := func(p float64) string { return fmt.Sprintf("%+.1f points", p) }
	v := &templates.ShareGapView{Projected: templates.Pct(g.Projected), Measured: templates.Pct(g.Measured), Gap: points(g.Gap),
		Since: from.Format("2006-01-02 15:04 UTC")}
	if modelRequests == 0 {
		v.Measured = "– (no requests for the model in this period)"
	}
	for _, cause := range g.Named(1) {
		v.Causes = append(v.Causes, templates.CauseRow{Key: cause.Key, Name: cause.Name, Points: points(cause.Points)})
	}
	if n := gaps.OnModelRates; n > 0 && modelRequests > 0 {
		v.OnModelRates = fmt.Sprintf("%s requests (%s of the model's)", templates.Count(min(n, modelRequests)),
			templates.Share(float64(min(n, modelRequests))/float64(modelRequests)))
	}
	return v
}

func rateText(r float64) string {
	if r < 0 {
		return "–"
	}
	return templates.Pct(100 * r)
}

func msText(ms float64) string {
	if ms < 0 {
		return "–"
	}
	return templates.Millis(ms)
}

// maxOrgRows is how many organisations the traffic page lists; the rest
// are summed in a line under the table.
const maxOrgRows = 25

func orgRows(lines []earnings.OrgLine) ([]templates.OrgRow, string) {
	var rows []templates.OrgRow
	var others earnings.OrgLine
	for i, l := range lines {
		if i >= maxOrgRows {
			others.Requests += l.Requests
			others.Kept += l.Kept
			continue
		}
		rows = append(rows, templates.OrgRow{Organisation: l.Organisation, Listings: fmt.Sprint(l.Listings), Requests: templates.Count(l.Requests),
			Failed: templates.Count(l.Errors), Input: templates.Count(l.InputTokens), Cached: templates.Count(l.CachedInputTokens),
			Output: templates.Count(l.OutputTokens), Kept: templates.AmountUSD(l.Kept)})
	}
	if n := len(lines) - maxOrgRows; n > 0 {
		return rows, fmt.Sprintf("%d more organisations: %s requests, %s kept.", n, templates.Count(others.Requests), templates.AmountUSD(others.Kept))
	}
	return rows, ""
}

// refusalLines say each refused batch in a line: when, from which
// gateways, and how many of its rows.
func refusalLines(refused []catalogue.RefusedBatch) []string {
	var out []string
	for _, r := range refused {
		line := r.ReceivedAt.UTC().Format("2006-01-02 15:04:05") + " UTC"
		if len(r.Sources) > 0 {
			line += " from " + strings.Join(r.Sources, ", ")
		}
		var replay *catalogue.ReplayError
		switch {
		case errors.As(r.Err, &replay):
			line += fmt.Sprintf(": %d bucket(s) and %d demand row(s) refused, the batch's other rows stored", len(replay.Indexes), len(replay.DemandIndexes))
		default:
			line += ": the batch could not be read, nothing of it stored"
		}
		out = append(out, line)
	}
	return out
}
