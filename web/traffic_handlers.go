package web

import (
	"bytes"
	"cmp"
	"context"
	"fmt"
	"net/http"
	"slices"
	"strconv"
	"strings"
	"time"

	"github.com/labstack/echo/v4"

	"github.com/airside/airside/internal/account"
	"github.com/airside/airside/internal/apperr"
	"github.com/airside/airside/internal/catalogue"
	"github.com/airside/airside/internal/earnings"
	"github.com/airside/airside/internal/fare"
	"github.com/airside/airside/internal/payout"
	"github.com/airside/airside/internal/projection"
	"github.com/airside/airside/internal/workflow"
	"github.com/airside/airside/templates"
)

// TrafficReads is what the traffic pages read themselves; every projected
// figure, and the rollups the projection keeps, come through the Projector.
// OrgReads is what the traffic page reads of customer organisations.
type OrgReads interface {
	OrgHours(ctx context.Context, listingIDs []int64, since, until time.Time) (map[int64]map[string][]catalogue.HourlyPoint, error)
}

type TrafficReads interface {
	PeerTraffic(ctx context.Context, modelID, exceptListing int64, since, until time.Time) (catalogue.HourlyPoint, error)
	MetricSeries(ctx context.Context, listingID int64, since time.Time, step time.Duration) ([]catalogue.SeriesPoint, error)
	HourlyTraffic(ctx context.Context, listingIDs []int64, since, until time.Time) (map[int64][]catalogue.HourlyPoint, error)
	FareHistory(ctx context.Context, listingIDs []int64) (map[int64][]earnings.FareSpan, error)
	LimitMinutes(ctx context.Context, listingID int64, since time.Time) ([]catalogue.Bucket, error)
	MinuteSums(ctx context.Context, modelID int64, since, until time.Time) (map[int64]catalogue.Counts, error)
}

// trafficCarrier picks the carrier a traffic page shows: one of p's
// carriers (or, for staff, any), by ?carrier=slug, else the first. It also
// returns the choices to switch between.
func (s *Server) trafficCarrier(c echo.Context, p *account.Principal, path string) (*account.Carrier, []templates.Choice, error) {
	carriers, err := workflow.CarriersInScope(p, func() ([]account.Carrier, error) {
		all, err := s.AccountReads.FindCarriers(c.Request().Context())
		out := make([]account.Carrier, len(all))
		for i, cs := range all {
			out[i] = cs.Carrier
		}
		return out, err
	})
	if err != nil {
		return nil, nil, err
	}
	if len(carriers) == 0 {
		return nil, nil, apperr.Errorf(apperr.ENOTFOUND, "You belong to no carrier.")
	}
	want := c.QueryParam("carrier")
	chosen := &carriers[0]
	found := want == ""
	for i := range carriers {
		if carriers[i].Slug == want {
			chosen, found = &carriers[i], true
		}
	}
	if !found {
		return nil, nil, apperr.Errorf(apperr.ENOTFOUND, "Carrier not found.")
	}
	var choices []templates.Choice
	for _, cr := range carriers {
		choices = append(choices, templates.Choice{Label: cr.Name, URL: path + "?carrier=" + cr.Slug, Active: cr.ID == chosen.ID})
	}
	return chosen, choices, nil
}

// trafficData is what a traffic page reads for a set of listings.
type trafficData struct {
	hours map[int64][]catalogue.HourlyPoint
	// models are each model's requests by hour (for a listing's share per
	// period), modelTotals over the whole window (for the overview's share
	// column); each only when the page asked for it.
	models      map[int64]map[time.Time]int64
	modelTotals map[int64]int64
	history     map[int64][]earnings.FareSpan
	// listingTotals are each listing's requests over the window, for a
	// page that reads only its last hours (operations).
	listingTotals map[int64]int64
}

// modelFigures says which of the model's figures a traffic page reads: by
// hour, as a total over the window, or none (a statement bills only the
// carrier's own traffic).
type modelFigures int

const (
	modelByHour modelFigures = iota
	modelTotal
	modelNone
)

func (s *Server) loadTraffic(ctx context.Context, listings []catalogue.Listing, since, until time.Time, need modelFigures) (trafficData, error) {
	var ids, modelIDs []int64
	for _, l := range listings {
		ids = append(ids, l.ID)
		if !slices.Contains(modelIDs, l.Model.ID) {
			modelIDs = append(modelIDs, l.Model.ID)
		}
	}
	var d trafficData
	var err error
	if d.hours, err = s.Projector.Hourly(ctx, ids, since, until); err != nil {
		return d, err
	}
	switch need {
	case modelByHour:
		d.models, err = s.Projector.ModelHours(ctx, modelIDs, since, until)
	case modelTotal:
		d.modelTotals, err = s.Projector.ModelTotals(ctx, modelIDs, since, until)
	}
	if err != nil {
		return d, err
	}
	d.history, err = s.Projector.FareHistory(ctx, ids)
	return d, err
}

// grouping reads the period and the time zone a traffic page is shown in:
// ?tz= whole hours east of UTC ("-5") or hours and minutes ("5:30",
// "-9:30"), as tzParam writes it; the zone in minutes is returned for the
// page's links.
func grouping(c echo.Context) (earnings.Grouping, int) {
	minutes := max(-12*60, min(14*60, parseTZ(c.QueryParam("tz"))))
	return earnings.Grouping{Period: earnings.ParsePeriod(c.QueryParam("period")), Loc: earnings.Offset(minutes)}, minutes
}

// parseTZ reads ?tz= in minutes (0, UTC, for anything else).
func parseTZ(text string) int {
	hours, mins, half := strings.Cut(strings.TrimSpace(text), ":")
	h, err := strconv.Atoi(hours)
	if err != nil {
		return 0
	}
	if !half {
		return h * 60
	}
	m, err := strconv.Atoi(mins)
	if err != nil || m < 0 || m >= 60 {
		return 0
	}
	if h < 0 || strings.HasPrefix(hours, "-") {
		return h*60 - m
	}
	return h*60 + m
}

// tzParam writes a zone of minutes east of UTC as ?tz= takes it: whole
// hours as before ("-5"), others with their minutes ("5:30").
func tzParam(minutes int) string {
	if minutes%60 == 0 {
		return strconv.Itoa(minutes / 60)
	}
	sign := ""
	if minutes < 0 {
		sign, minutes = "-", -minutes
	}
	return fmt.Sprintf("%s%d:%02d", sign, minutes/60, minutes%60)
}

// zoneOffsets are the UTC offsets in use, in minutes: every whole hour from
// -12 to +14 and the half- and quarter-hour zones (Newfoundland, India,
// Nepal, Iran, Afghanistan, Myanmar, South Australia, Chatham...).
var zoneOffsets = func() []int {
	out := []int{-9*60 - 30, -3*60 - 30, 3*60 + 30, 4*60 + 30, 5*60 + 30, 5*60 + 45, 6*60 + 30, 8*60 + 45, 9*60 + 30, 10*60 + 30, 12*60 + 45}
	for h := -12; h <= 14; h++ {
		out = append(out, h*60)
	}
	slices.Sort(out)
	return out
}()

// tzChoices are the zones a carrier may read its charts in.
func tzChoices(current int) []templates.Option {
	var out []templates.Option
	for _, m := range zoneOffsets {
		out = append(out, templates.Option{Value: tzParam(m), Label: fare.OffsetText(m), Selected: m == current})
	}
	return out
}

func periodChoices(base string, current earnings.Period) []templates.Choice {
	sep := "?"
	if strings.Contains(base, "?") {
		sep = "&"
	}
	var out []templates.Choice
	for _, p := range []struct {
		p     earnings.Period
		label string
	}{{earnings.ByHour, "Last 48 hours"}, {earnings.ByDay, "Last 30 days"}, {earnings.ByMonth, "Last 12 months"}} {
		out = append(out, templates.Choice{Label: p.label, URL: base + sep + "period=" + string(p.p), Active: p.p == current})
	}
	return out
}

func (s *Server) handleTraffic(c echo.Context) error {
	ctx, p := c.Request().Context(), principal(c)
	carrier, carriers, err := s.trafficCarrier(c, p, "/traffic")
	if err != nil {
		return err
	}
	g, tz := grouping(c)
	now := s.Now().UTC()
	since, until := g.Window(now)
	listings, err := s.ListingReads.FindListings(ctx, catalogue.ListingFilter{CarrierIDs: []int64{carrier.ID}, StoredHealth: true})
	if err != nil {
		return err
	}
	data, err := s.loadTraffic(ctx, listings, since, until, modelTotal)
	if err != nil {
		return err
	}
	// Beside each share served, the share projected from what was in force
	// hour by hour, every model at once; and the hour under way so far,
	// served and projected, from the same projection.
	hour := now.Truncate(time.Hour)
	whole, tail, err := s.Projector.SharesIn(ctx, listings, since, until, hour)
	if err != nil {
		return err
	}
	var modelIDs []int64
	for _, l := range listings {
		modelIDs = append(modelIDs, l.Model.ID)
	}
	modelHour, err := s.Projector.ModelTotals(ctx, slices.Compact(slices.Sorted(slices.Values(modelIDs))), hour, hour.Add(time.Hour))
	if err != nil {
		return err
	}
	projected, thisHour := map[int64]string{}, map[int64]string{}
	for _, l := range listings {
		if sh, ok := whole[l.ID]; ok {
			projected[l.ID] = templates.Share(sh.Total)
		}
		if model := modelHour[l.Model.ID]; model > 0 {
			thisHour[l.ID] = templates.Share(float64(requestsIn(data.hours[l.ID], hour)) / float64(model))
			if sh, ok := tail[l.ID]; ok {
				thisHour[l.ID] += " (" + templates.Share(sh.Total) + ")"
			}
		}
	}
	v := carrierTrafficView(s.page(c, "Traffic", "traffic"), carrier, carriers, g, tz, since, until, now, listings, data, projected)
	for i, l := range listings {
		v.Rows[i].ThisHour = cmp.Or(thisHour[l.ID], "–")
	}
	v.ThisHourSince = hour.Format("15:04") + " UTC"
	if v.Mixes, err = s.demandMixes(ctx, listings); err != nil {
		return err
	}
	ids := make([]int64, len(listings))
	for i, l := range listings {
		ids[i] = l.ID
	}
	orgHours, err := s.OrgReads.OrgHours(ctx, ids, since, until)
	if err != nil {
		return err
	}
	v.Orgs, v.OrgsOthers = orgRows(earnings.ByOrganisation(orgHours, data.history))
	return render(c, http.StatusOK, templates.CarrierTraffic(v))
}

// demandMixes is the measured workload mix of each model the listings are
// of, over projection.MixWindow (models with no demand measured are left out).
func (s *Server) demandMixes(ctx context.Context, listings []catalogue.Listing) ([]templates.MixRow, error) {
	var rows []templates.MixRow
	seen := map[string]bool{}
	for _, l := range listings {
		if seen[l.Model.Slug] {
			continue
		}
		seen[l.Model.Slug] = true
		d, err := s.Projector.MeasuredDemand(ctx, l.Model.Slug)
		if err != nil {
			return nil, err
		}
		mix, total := d.Mix, d.Requests
		if total == 0 {
			continue
		}
		pc := func(key string) string { return templates.WholePct(100 * mix[key] / float64(total)) }
		rows = append(rows, templates.MixRow{Model: l.Model.Name, Requests: templates.Count(total), Small: pc("small"), Large: pc("large"),
			Coding: pc("coding"), Chat: pc("chat")})
	}
	return rows, nil
}

func (s *Server) handleListingTraffic(c echo.Context) error {
	id, err := pathID(c, "id")
	if err != nil {
		return err
	}
	ctx, p := c.Request().Context(), principal(c)
	l, err := s.ListingReads.FindListingHeader(ctx, id, workflow.Scope(p))
	if err != nil {
		return err
	}
	g, tz := grouping(c)
	since, until := g.Window(s.Now())
	data, err := s.loadTraffic(ctx, []catalogue.Listing{*l}, since, until, modelByHour)
	if err != nil {
		return err
	}
	past, projects, err := s.Projector.ListingHours(ctx, l, since, until)
	if err != nil {
		return err
	}
	v := listingTrafficView(s.page(c, "Traffic · "+l.Model.Name, "traffic"), l, g, tz, since, until, data, past)
	v.ThisHour = thisHourView(s.Now(), l, data, past)
	if v.Changes, err = s.fareChangeEffects(ctx, l, data.history[l.ID], past); err != nil {
		return err
	}
	now, ok, said, err := s.projectedShare(ctx, l, past)
	if err != nil {
		return err
	}
	if ok {
		v.Projected, v.ProjectedMix = templates.Share(now.Total), said
		policy, err := s.Projector.SharePolicyNow(ctx, l)
		if err != nil {
			return err
		}
		if policy.OnBallot {
			v.SharePolicy = templates.Share(policy.Total)
			if policy.Demand > 0 {
				v.SharePolicyDemand, v.Blended = templates.Share(policy.Demand), templates.Share(policy.Blended(now.Total))
			}
			for _, sc := range policy.Scenarios {
				share := "not eligible"
				if sc.Standing.OnBallot {
					share = templates.Share(sc.Standing.Outcome.Share)
				}
				v.SharePolicyRows = append(v.SharePolicyRows, templates.Figure{Label: strings.ToLower(sc.Scenario.Name), Value: share,
					TestID: "share-policy-" + sc.Scenario.Key})
			}
		}
	}
	if projects {
		// Beside what routing served: what the preview projected from what
		// was in force hour by hour, weighed as the model's requests came.
		if then, any := past.Over(since, until); any {
			first := past.Hours()[0]
			gaps, err := s.Projector.DemandGaps(ctx, l, first, until)
			if err != nil {
				return err
			}
			v.Gap = shareGapView(then, past, first, data.hours[l.ID], data.models[l.Model.ID], gaps)
		}
	}
	peers, err := s.TrafficReads.PeerTraffic(ctx, l.Model.ID, l.ID, since, until)
	if err != nil {
		return err
	}
	v.Routing = routingFigures(data.hours[l.ID], peers)
	if v.Limits, err = s.limitSpells(ctx, l, g.Loc); err != nil {
		return err
	}
	return render(c, http.StatusOK, templates.ListingTraffic(v))
}

// statement loads a carrier's statement of the month in the path.
// statement builds the requested month's statement; since is the month of
// the carrier's first listing (no statement before it has anything).
// statement is the document of the month a statement URL names
// ("2026-11", "2026-11.csv", "2026-11.pdf") and the format asked for.
func (s *Server) statement(c echo.Context) (doc payout.Document, format string, carrier *account.Carrier, carriers []templates.Choice, err error) {
	ctx, p := c.Request().Context(), principal(c)
	text := c.Param("month")
	for _, ext := range []string{".csv", ".pdf"} {
		if strings.HasSuffix(text, ext) {
			text, format = strings.TrimSuffix(text, ext), ext[1:]
		}
	}
	month, err := statementMonth(text, s.Now())
	if err != nil {
		return doc, "", nil, nil, err
	}
	carrier, carriers, err = s.trafficCarrier(c, p, "/traffic/statements/"+text)
	if err != nil {
		return doc, "", nil, nil, err
	}
	doc, err = s.Payouts.Document(ctx, *carrier, month)
	return doc, format, carrier, carriers, err
}

func (s *Server) handleStatement(c echo.Context) error {
	doc, format, carrier, carriers, err := s.statement(c)
	if err != nil {
		return err
	}
	name := fmt.Sprintf("airside-%s-%s", carrier.Slug, doc.Month.Format("2006-01"))
	if doc.Number != "" {
		name += "-" + doc.Number
	}
	var buf bytes.Buffer
	switch format {
	case "csv":
		if err := payout.WriteCSV(&buf, doc); err != nil {
			return err
		}
		c.Response().Header().Set("Content-Disposition", fmt.Sprintf(`attachment; filename="%s.csv"`, name))
		return c.Blob(http.StatusOK, "text/csv; charset=utf-8", buf.Bytes())
	case "pdf":
		if err := payout.WritePDF(&buf, doc, carrier.Name); err != nil {
			return err
		}
		c.Response().Header().Set("Content-Disposition", fmt.Sprintf(`attachment; filename="%s.pdf"`, name))
		return c.Blob(http.StatusOK, "application/pdf", buf.Bytes())
	}
	v := statementView(s.page(c, "Statement "+doc.Month.Format("January 2006"), "traffic"), doc, carrier, carriers, s.Now())
	return render(c, http.StatusOK, templates.Statement(v))
}

func (s *Server) handleOperations(c echo.Context) error {
	ctx := c.Request().Context()
	listings, err := s.ListingReads.FindListings(ctx, catalogue.ListingFilter{StoredHealth: true, WithoutFares: true})
	if err != nil {
		return err
	}
	snap, err := s.Routing.Current(ctx)
	if err != nil {
		return err
	}
	for i := range listings {
		if h, ok := snap.Health(listings[i].ID); ok {
			listings[i].Health = h
		}
	}
	now := s.Now().UTC()
	until := now.Truncate(time.Hour).Add(time.Hour)
	// Every listing's total over the day, its hours of the last two (an
	// open incident is one of those), and each model's total: a row a
	// listing, not a day of rows (it read 12,000 at 500 listings).
	var ids []int64
	for _, l := range listings {
		ids = append(ids, l.ID)
	}
	data := trafficData{modelTotals: map[int64]int64{}}
	if data.listingTotals, err = s.Projector.ListingTotals(ctx, ids, until.Add(-24*time.Hour), until); err != nil {
		return err
	}
	// Every listing is here, so each model's total is its listings' sum.
	for _, l := range listings {
		data.modelTotals[l.Model.ID] += data.listingTotals[l.ID]
	}
	if data.hours, err = s.Projector.Hourly(ctx, ids, until.Add(-incidentHours), until); err != nil {
		return err
	}
	waiting, err := s.FilingReads.FindFilings(ctx, workflow.FilingFilter{States: []workflow.State{workflow.Submitted}})
	if err != nil {
		return err
	}
	// Beside each share, the projection of the same hours, for the models
	// the filter shows.
	model, carrier := c.QueryParam("model"), c.QueryParam("carrier")
	var shown []catalogue.Listing
	for _, l := range listings {
		if (model == "" || l.Model.Slug == model) && (carrier == "" || l.CarrierSlug == carrier) {
			shown = append(shown, l)
		}
	}
	projected, err := s.projectedShares(ctx, shown, until.Add(-24*time.Hour), until)
	if err != nil {
		return err
	}
	// "Wins now": what the gateway does now, the incumbents where the
	// projection beside it leaves them.
	wins, err := s.Projector.WinsNow(ctx, snap, listings, until.Add(-24*time.Hour), until, now)
	if err != nil {
		return err
	}
	v := operationsView(s.page(c, "Operations", "operations"), model, carrier, c.QueryParam("sort"),
		listings, data, projected, wins, waiting, now)
	windows, err := s.Maintenance.Upcoming(ctx, principal(c))
	if err != nil {
		return err
	}
	names := map[int64]string{}
	for _, l := range listings {
		names[l.ID] = l.CarrierName + " · " + l.Model.Name
	}
	slices.SortFunc(windows, func(a, b workflow.MaintenanceWindow) int { return a.StartsAt.Compare(b.StartsAt) })
	v.Maintenance = maintenanceRows(windows, nil, func(id int64) string { return names[id] })
	if s.Metrics != nil {
		v.Refusals = refusalLines(s.Metrics.Inbox.RecentRefusals())
	}
	return render(c, http.StatusOK, templates.Operations(v))
}

// fareChangeEffects says, for each fare the listing published in the last
// 400 days, its share of the model the week before and the week after
// (whole weeks: the same hours of the week on both sides).
//
// Beside each, the share the preview projected for the same weeks from
// what was in force hour by hour, for a change whose week before is within
// projection.Reach ("–" for older ones): from the page's own projection when
// it reaches back far enough (past), else projected from the earliest such
// week on.
func (s *Server) fareChangeEffects(ctx context.Context, l *catalogue.Listing, history []earnings.FareSpan, past projection.Past) ([]templates.FareChangeRow, error) {
	now := s.Now().UTC()
	const week = 7 * 24 * time.Hour
	var changes []earnings.FareSpan
	for _, f := range history {
		if f.From.After(now.Add(-400 * 24 * time.Hour)) {
			changes = append(changes, f)
		}
	}
	if len(changes) == 0 {
		return nil, nil
	}
	data, err := s.loadTraffic(ctx, []catalogue.Listing{*l}, changes[0].From.Add(-week), now.Add(time.Hour), modelByHour)
	if err != nil {
		return nil, err
	}
	until := now.Add(time.Hour)
	reach := until.Add(-projection.Reach).Truncate(time.Hour)
	var from time.Time // the first hour a projection is needed from
	for _, f := range changes {
		if start := f.From.Add(-week).Truncate(time.Hour); !start.Before(reach) && (from.IsZero() || start.Before(from)) {
			from = start
		}
	}
	projected := past
	if hours := past.Hours(); !from.IsZero() && (len(hours) == 0 || hours[0].After(from)) {
		var ok bool
		if projected, ok, err = s.Projector.ListingHours(ctx, l, from, until); err != nil {
			return nil, err
		} else if !ok {
			from = time.Time{}
		}
	}
	var out []templates.FareChangeRow
	for i := len(changes) - 1; i >= 0; i-- { // newest first
		f := changes[i]
		before, after := earnings.ShareAround(data.hours[l.ID], data.models[l.Model.ID], f.From, week)
		row := templates.FareChangeRow{When: f.From.Format("2006-01-02 15:04"), Fare: "input $" + f.Fare.Input.String() + ", output $" + f.Fare.Output.String(),
			Before: templates.Share(before), After: templates.Share(after), ProjectedBefore: "–", ProjectedAfter: "–"}
		if !from.IsZero() && !f.From.Add(-week).Truncate(time.Hour).Before(from) {
			if p, any := projected.Over(f.From.Add(-week), f.From); any {
				row.ProjectedBefore = templates.Share(p.Total)
			}
			if p, any := projected.Over(f.From, f.From.Add(week)); any {
				row.ProjectedAfter = templates.Share(p.Total)
			}
		}
		if now.Before(f.From.Add(week)) {
			row.After += " (so far)"
		}
		out = append(out, row)
	}
	return out, nil
}

// projectedShare is the preview's projection of the listing's share with
// what is in force now (projectNow: the rule of every past hour, carried on
// from past), weighed by the model's measured workload mix (an even one
// without demand measured), and the words saying which mix; ok is false for
// a listing not in service.
func (s *Server) projectedShare(ctx context.Context, l *catalogue.Listing, past projection.Past) (projection.Share, bool, string, error) {
	now, err := s.Projector.ShareNow(ctx, l, past)
	if err != nil || !now.OK {
		return projection.Share{}, false, "", err
	}
	said := "assuming an even mix of the four workloads (the gateway has reported no demand for this model in the last 7 days)"
	if now.Requests > 0 {
		var parts []string
		for _, k := range mixKeys {
			parts = append(parts, strings.ToLower(k.label)+" "+templates.WholePct(100*now.Mix[k.key]/float64(now.Requests)))
		}
		said = "weighed by the model's workload mix the gateway measured over the last 7 days (" + strings.Join(parts, ", ") + ")"
	}
	return now.Share, true, said, nil
}

// projectedShares is each listing's projected share over since to until,
// as a page shows it (Projector.Shares).
func (s *Server) projectedShares(ctx context.Context, listings []catalogue.Listing, since, until time.Time) (map[int64]string, error) {
	shares, err := s.Projector.Shares(ctx, listings, since, until)
	if err != nil {
		return nil, err
	}
	out := make(map[int64]string, len(shares))
	for id, sh := range shares {
		out[id] = templates.Share(sh.Total)
	}
	return out, nil
}
