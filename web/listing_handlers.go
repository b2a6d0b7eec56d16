package web

import (
	"fmt"
	"net/http"
	"strconv"
	"strings"
	"time"

	"github.com/labstack/echo/v4"

	"github.com/airside/airside/internal/account"
	"github.com/airside/airside/internal/apperr"
	"github.com/airside/airside/internal/catalogue"
	"github.com/airside/airside/internal/fare"
	"github.com/airside/airside/internal/money"
	"github.com/airside/airside/internal/store"
	"github.com/airside/airside/internal/workflow"
	"github.com/airside/airside/templates"
)

// visibleCarriers is the carrier scope of a user: nil (all) for staff, their
// own carriers otherwise.
func visibleCarriers(p *account.Principal) []int64 {
	if p.IsStaff() {
		return nil
	}
	return p.CarrierIDs()
}

func (s *Server) handleListings(c echo.Context) error {
	p := principal(c)
	listings, err := s.Store.FindListings(c.Request().Context(), catalogue.ListingFilter{CarrierIDs: visibleCarriers(p)})
	if err != nil {
		return err
	}
	heading := "All listings"
	if !p.IsStaff() {
		names := make([]string, len(p.Memberships))
		for i, m := range p.Memberships {
			names[i] = m.Carrier.Name
		}
		heading = "Listings of " + strings.Join(names, ", ")
	}
	inFlight, err := s.Store.InFlightFilings(c.Request().Context(), visibleCarriers(p))
	if err != nil {
		return err
	}
	view := templates.ListingsView{Page: s.page(c, "Listings", "listings"), Heading: heading, ShowCarrier: p.IsStaff() || len(p.Memberships) > 1,
		CanBulk: !p.IsStaff() && len(p.Memberships) > 0}
	for i := range listings {
		row := listingRow(&listings[i])
		if f, ok := inFlight[listings[i].ID]; ok {
			row.FilingURL, row.FilingState = fmt.Sprintf("/filings/%d", f.ID), f.State.Label()
		}
		view.Rows = append(view.Rows, row)
	}
	if view.AddModels, err = s.addableModels(c, p, listings); err != nil {
		return err
	}
	return render(c, http.StatusOK, templates.Listings(view))
}

func (s *Server) handleListing(c echo.Context) error {
	id, err := pathID(c, "id")
	if err != nil {
		return err
	}
	// Another carrier's listing is not found, exactly like a missing one.
	ctx, p := c.Request().Context(), principal(c)
	l, err := s.Store.FindListing(ctx, id, visibleCarriers(p))
	if err != nil {
		return err
	}
	filings, err := s.Store.FindFilings(ctx, store.FilingFilter{ListingID: l.ID})
	if err != nil {
		return err
	}
	v := listingView(s.page(c, l.Model.Name, "listings"), l)
	for i := range filings {
		row := filingRow(&filings[i])
		v.Filings = append(v.Filings, row)
		if filings[i].State.InFlight() && v.InFlight == nil {
			if filings[i].State == workflow.Scheduled && filings[i].EffectiveAt != nil {
				row.State = "approved, effective " + stamp(filings[i].EffectiveAt)
			}
			v.InFlight = &row
		}
	}
	if v.Traffic, err = s.trafficChart(c, l.ID); err != nil {
		return err
	}
	carrierAdmin := workflow.CanManageListings(p, l.CarrierID)
	v.CanFile = workflow.CanFileFor(p, l.CarrierID) && l.Status != catalogue.StatusDelisted
	v.FileURL = fmt.Sprintf("/listings/%d/file", l.ID)
	v.CanPause = carrierAdmin && l.Status == catalogue.StatusInService && v.InFlight == nil
	v.CanResume = carrierAdmin && l.Status == catalogue.StatusPaused && v.InFlight == nil
	v.CanAdminister = p.IsAdmin()
	if canVerify(p, l.CarrierID) {
		checks, err := s.Store.FindCapabilityChecks(ctx, l.ID)
		if err != nil {
			return err
		}
		var inFlight *workflow.Filing
		for i := range filings {
			if filings[i].State.InFlight() {
				inFlight = &filings[i]
			}
		}
		v.Verify = verifyRows(l, inFlight, checks)
		v.CanVerify = len(v.Verify) > 0
	}
	return render(c, http.StatusOK, templates.Listing(v))
}

func dollars(m money.Micros) string { return "$" + m.String() }

func optDollars(m *money.Micros) string {
	if m == nil {
		return "—"
	}
	return dollars(*m)
}

func optNumber(v *float64, format string) string {
	if v == nil {
		return "—"
	}
	return fmt.Sprintf(format, *v)
}

// listingRow is what a listings table shows of a listing. Only the owner and
// staff reach these pages, so the landing fee and discount may be shown.
func listingRow(l *catalogue.Listing) templates.ListingRow {
	row := templates.ListingRow{
		ID: l.ID, URL: "/listings/" + strconv.FormatInt(l.ID, 10), Model: l.Model.Name, ModelSlug: l.Model.Slug,
		Carrier: l.CarrierName, Status: l.Status.Label(), StatusClass: string(l.Status),
		Input: "—", Output: "—", Cached: "—", LandingFee: "—", Discount: "—",
		Uptime:     optNumber(l.Health.UptimePct, "%.2f %%"),
		Latency:    optNumber(l.Health.LatencyMs, "%.0f ms"),
		Throughput: optNumber(l.Health.ThroughputTPS, "%.0f"),
	}
	if f := l.Published; f != nil {
		row.Input, row.Output, row.Cached = dollars(f.Input), dollars(f.Output), optDollars(f.CachedInput)
		row.LandingFee, row.Discount = f.LandingFee.Percent()+" %", f.Discount.Percent()+" %"
	}
	return row
}

func listingView(page templates.Page, l *catalogue.Listing) templates.ListingView {
	v := templates.ListingView{Page: page, Row: listingRow(l)}
	v.Priority = strconv.FormatFloat(float64(l.PriorityBP)/10000, 'f', -1, 64)
	v.Health = []templates.KV{
		{Label: "Routing priority", Value: v.Priority, Hint: "set by gateway staff"},
		{Label: "Uptime", Value: v.Row.Uptime, Hint: "60-minute decayed window"},
		{Label: "Time to first token", Value: v.Row.Latency},
		{Label: "Throughput", Value: v.Row.Throughput, Hint: "output tokens per second"},
		{Label: "Observed cache hit rate", Value: optNumber(l.Health.CacheHitRate, "%.2f")},
	}
	f := l.Published
	if f == nil {
		return v
	}
	effective := func(m money.Micros) string { return "routes at " + dollars(f.Effective(m)) }
	v.Fare = []templates.KV{
		{Label: "Input", Value: dollars(f.Input), Hint: effective(f.Input)},
		{Label: "Output", Value: dollars(f.Output), Hint: effective(f.Output)},
		{Label: "Cached input", Value: optDollars(f.CachedInput)},
		{Label: "Cache read (explicit)", Value: optDollars(f.CacheRead), Hint: "billed, not ranked"},
		{Label: "Cache write", Value: optDollars(f.CacheWrite), Hint: "billed, not ranked"},
		{Label: "Landing fee", Value: f.LandingFee.Percent() + " %", Hint: "you keep " + f.KeptPerDollar().Percent() + " cents of every filed dollar"},
		{Label: "Traffic discount", Value: f.Discount.Percent() + " %"},
	}
	for _, t := range f.Tiers {
		v.Tiers = append(v.Tiers, []string{strconv.FormatInt(t.AboveTokens, 10), optDollars(t.Input), optDollars(t.Output), optDollars(t.CachedInput)})
	}
	if tb := f.TimeBased; tb != nil {
		windows := make([]string, len(tb.PeakHours))
		for i, w := range tb.PeakHours {
			windows[i] = fmt.Sprintf("%02d:00-%02d:00", w.Start, w.End)
		}
		days := make([]string, len(tb.OffPeakDays))
		for i, d := range tb.OffPeakDays {
			days[i] = d.String()
		}
		eff := "always"
		if tb.EffectiveAt != nil {
			eff = tb.EffectiveAt.UTC().Format(time.DateTime) + " UTC"
		}
		v.Schedule = []templates.KV{
			{Label: "Peak windows (UTC)", Value: orDash(strings.Join(windows, ", "))},
			{Label: "Off-peak days", Value: orDash(strings.Join(days, ", ")), Hint: offsetHint(len(days), tb.UTCOffsetMinutes)},
			{Label: "Peak prices", Value: priceTriple(tb.Peak)},
			{Label: "Off-peak prices", Value: priceTriple(tb.OffPeak)},
			{Label: "Effective from", Value: eff},
		}
	}
	scope := "global"
	if f.CapScope == fare.ScopePerOrg {
		scope = "per organization"
	}
	v.Caps = []templates.KV{
		{Label: "Requests per minute", Value: optInt(f.MaxRPM)},
		{Label: "Requests per day", Value: optInt(f.MaxRPD)},
		{Label: "Scope", Value: scope},
	}
	for _, c := range f.Capabilities {
		v.Caps2 = append(v.Caps2, strings.ReplaceAll(c.String(), "_", " "))
	}
	return v
}

func priceTriple(p fare.Prices) string {
	return "in " + optDollars(p.Input) + " · out " + optDollars(p.Output) + " · cached " + optDollars(p.CachedInput)
}

func optInt(v *int64) string {
	if v == nil {
		return "no cap"
	}
	return strconv.FormatInt(*v, 10)
}

func orDash(s string) string {
	if s == "" {
		return "—"
	}
	return s
}

func itoa64(v int64) string { return strconv.FormatInt(v, 10) }

func offsetHint(days, offsetMinutes int) string {
	if days == 0 {
		return ""
	}
	return fmt.Sprintf("whole days at UTC%+.1f h", float64(offsetMinutes)/60)
}

func (s *Server) handleSetPriority(c echo.Context) error {
	return s.administer(c, func(id int64) (string, error) {
		err := s.Filings.SetPriority(c.Request().Context(), principal(c), id, c.FormValue("priority"))
		return "Priority set; the catalogue revision rose with it.", err
	})
}

func (s *Server) handleDelist(c echo.Context) error {
	return s.administer(c, func(id int64) (string, error) {
		err := s.Filings.Delist(c.Request().Context(), principal(c), id, c.FormValue("reason"))
		return "Listing delisted; its carrier has been told.", err
	})
}

// administer runs an admin's action on a listing; a refused value is shown
// next to its field on the listing page.
func (s *Server) administer(c echo.Context, act func(id int64) (string, error)) error {
	id, err := pathID(c, "id")
	if err != nil {
		return err
	}
	done, err := act(id)
	switch apperr.Code(err) {
	case "":
		if err := s.setFlash(c, "%s", done); err != nil {
			return err
		}
		return c.Redirect(http.StatusSeeOther, fmt.Sprintf("/listings/%d", id))
	case apperr.EINVALID:
		l, lerr := s.Store.FindListing(c.Request().Context(), id, nil)
		if lerr != nil {
			return lerr
		}
		v := listingView(s.page(c, l.Model.Name, "listings"), l)
		v.CanAdminister, v.FieldErrors = true, apperr.FieldErrors(err)
		if typed := c.FormValue("priority"); typed != "" {
			v.Priority = typed
		}
		return render(c, http.StatusUnprocessableEntity, templates.Listing(v))
	}
	return err
}
