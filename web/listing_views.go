package web

import (
	"cmp"
	"context"
	"fmt"
	"net/url"
	"slices"
	"strconv"
	"strings"
	"time"

	"github.com/airside/airside/internal/account"
	"github.com/airside/airside/internal/catalogue"
	"github.com/airside/airside/internal/election"
	"github.com/airside/airside/internal/fare"
	"github.com/airside/airside/internal/money"
	"github.com/airside/airside/internal/projection"
	"github.com/airside/airside/internal/workflow"
	"github.com/airside/airside/templates"
)

// The view builders of listing pages: plain functions of what was read, so
// they are tested without a server.

// listingsView is the listings table for p: every listing for staff, p's own
// carriers' otherwise, with the filing in flight of each and the models p may
// still add (models is only read for carrier admins).
func listingsView(page templates.Page, p *account.Principal, entries []catalogue.ListingEntry, models []catalogue.Model) templates.ListingsView {
	heading := "All listings"
	if !p.IsStaff() {
		names := make([]string, len(p.Memberships))
		for i, m := range p.Memberships {
			names[i] = m.Carrier.Name
		}
		heading = "Listings of " + strings.Join(names, ", ")
	}
	view := templates.ListingsView{Page: page, Heading: heading, ShowCarrier: p.IsStaff() || len(p.Memberships) > 1,
		CanBulk: workflow.AuthorizeBulk(p) == nil}
	view.AddModels = addableModels(p, entries, models)
	view.StartHint = startHint(p)
	return view
}

// startHint tells a person who just logged in where their work starts.
func startHint(p *account.Principal) string {
	switch {
	case p.IsReviewer():
		return "Where to start: the Review queue holds the filings waiting for a decision; Operations shows every listing's health and share, and the planned maintenance."
	case p.IsStaff():
		return "Where to start: Operations shows every listing's health and share."
	}
	return "Where to start: open a listing to see its published fare, health and traffic. \"Preview a fare\" shows where a price would rank before you file it; \"File a fare change\" sends it for review. Traffic and earnings are under Traffic."
}

// listingRows are the table's rows of the listings shown, each with the
// filing under way on it.
func listingRows(shown []catalogue.Listing, inFlight map[int64]workflow.Filing) []templates.ListingRow {
	rows := make([]templates.ListingRow, len(shown))
	for i := range shown {
		rows[i] = listingRow(&shown[i])
		if f, ok := inFlight[shown[i].ID]; ok {
			rows[i].FilingURL, rows[i].FilingState = fmt.Sprintf("/filings/%d", f.ID), f.State.Label()
		}
	}
	return rows
}

// listingPageView is one listing's page for p: its fare, health, filings and
// the buttons p may use (decided by the workflow, never here).
func listingPageView(page templates.Page, p *account.Principal, l *catalogue.Listing, filings []workflow.Filing) templates.ListingView {
	v := listingView(page, l)
	v.MarketNote = marketNote(l, filings)
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
	can := workflow.ListingActionsFor(p, l, v.InFlight != nil)
	v.CanFile, v.FileURL = can.File, fmt.Sprintf("/listings/%d/file", l.ID)
	v.CanPause, v.CanResume = can.Pause, can.Resume
	v.PauseAdminsOnly = !can.Pause && !can.Resume && p.RoleIn(l.CarrierID) == account.CarrierMember &&
		(l.Status == catalogue.StatusInService || l.Status == catalogue.StatusPaused)
	v.CanAdminister = can.Administer
	v.CanVerify = can.Verify
	return v
}

// inFlightOf is the filing under way among a listing's filings, if any.
func inFlightOf(filings []workflow.Filing) *workflow.Filing {
	for i := range filings {
		if filings[i].State.InFlight() {
			return &filings[i]
		}
	}
	return nil
}

// adminMemberships are the carriers p administers.
func adminMemberships(p *account.Principal) []account.Membership {
	var admin []account.Membership
	for _, m := range p.Memberships {
		if workflow.CanManageListings(p, m.CarrierID) {
			admin = append(admin, m)
		}
	}
	return admin
}

// addableModels lists, for each carrier p administers, the models it does
// not list yet.
func addableModels(p *account.Principal, listings []catalogue.ListingEntry, models []catalogue.Model) []templates.ModelOption {
	admin := adminMemberships(p)
	listed := map[[2]int64]bool{}
	for _, l := range listings {
		listed[[2]int64{l.CarrierID, l.Model.ID}] = true
	}
	var out []templates.ModelOption
	for _, m := range admin {
		for _, model := range models {
			if !listed[[2]int64{m.CarrierID, model.ID}] {
				label := model.Name
				if len(admin) > 1 {
					label = m.Carrier.Name + ": " + model.Name
				}
				out = append(out, templates.ModelOption{CarrierID: m.CarrierID, ModelID: model.ID, Label: label})
			}
		}
	}
	return out
}

// listingRow is what a listings table shows of a listing. Only the owner and
// staff reach these pages, so the landing fee and discount may be shown.
func listingRow(l *catalogue.Listing) templates.ListingRow {
	row := templates.ListingRow{
		ID: l.ID, URL: "/listings/" + strconv.FormatInt(l.ID, 10), Model: l.Model.Name, ModelSlug: l.Model.Slug,
		Carrier: l.CarrierName, Status: l.Status.Label(), StatusClass: string(l.Status),
		Input: "—", Output: "—", Cached: "—", LandingFee: "—", Discount: "—",
		Uptime:     templates.OptNumber(l.Health.UptimePct, "%.2f %%"),
		Latency:    templates.OptNumber(l.Health.LatencyMs, "%.0f ms"),
		Throughput: templates.OptNumber(l.Health.ThroughputTPS, "%.0f"),
	}
	if f := l.Published; f != nil {
		row.Input, row.Output, row.Cached = templates.Dollars(f.Input), templates.Dollars(f.Output), templates.OptDollars(f.CachedInput)
		row.LandingFee, row.Discount = f.LandingFee.Percent()+" %", f.Discount.Percent()+" %"
	}
	return row
}

// listingView is a listing's fare and health, without the actions.
func listingView(page templates.Page, l *catalogue.Listing) templates.ListingView {
	v := templates.ListingView{Page: page, Row: listingRow(l), Revision: l.Revision}
	v.Priority = templates.Plain(float64(l.PriorityBP) / 10000)
	v.Health = []templates.KV{
		{Label: "Routing priority", Value: v.Priority, Hint: "set by gateway staff"},
		{Label: "Uptime", Value: v.Row.Uptime, Hint: "60-minute decayed window"},
		{Label: "Time to first token", Value: v.Row.Latency},
		{Label: "Throughput", Value: v.Row.Throughput, Hint: "output tokens per second"},
		{Label: "Observed cache hit rate", Value: optShare(l.Health.CacheHitRate), Hint: "of prompt tokens read from cache"},
	}
	if l.Published != nil {
		d := describeFare(l.Published)
		v.Fare, v.Tiers, v.Schedule, v.Caps, v.Caps2, v.Market = d.prices, d.tiers, d.schedule, d.caps, d.capabilities, d.market
	}
	return v
}

// optShare writes a rate in [0, 1] as a percentage ("53.0 %"), or a dash.
func optShare(v *float64) string {
	if v == nil {
		return "—"
	}
	return templates.Pct(*v * 100)
}

// fareDescription is a fare in words, section by section.
type fareDescription struct {
	prices, schedule, caps, market []templates.KV
	tiers                          [][]string
	capabilities                   []string
}

func describeFare(f *fare.Fare) fareDescription {
	var d fareDescription
	effective := func(m money.Micros) string { return "routes at " + templates.RoutesAt(f.Effective(m)) }
	d.prices = []templates.KV{
		{Label: fare.FieldLabel("input"), Value: templates.Dollars(f.Input), Hint: effective(f.Input)},
		{Label: fare.FieldLabel("output"), Value: templates.Dollars(f.Output), Hint: effective(f.Output)},
		{Label: fare.FieldLabel("cached_input"), Value: templates.OptDollars(f.CachedInput)},
	}
	for _, b := range fare.BilledPrices(f) {
		d.prices = append(d.prices, templates.KV{Label: b.Label, Value: templates.OptDollars(b.Price), Hint: strings.ToLower(strings.TrimSuffix(fare.BilledHint, "."))})
	}
	d.prices = append(d.prices, []templates.KV{
		{Label: fare.FieldLabel("landing_fee"), Value: f.LandingFee.Percent() + " %", Hint: "you keep " + f.KeptPerDollar().Percent() + " cents of every filed dollar"},
		{Label: fare.FieldLabel("discount"), Value: f.Discount.Percent() + " %"},
	}...)
	for _, t := range f.Tiers {
		d.tiers = append(d.tiers, []string{templates.Count(t.AboveTokens), templates.OptDollars(t.Input), templates.OptDollars(t.Output), templates.OptDollars(t.CachedInput)})
	}
	if tb := f.TimeBased; tb != nil {
		windows := make([]string, len(tb.PeakHours))
		for i, w := range tb.PeakHours {
			windows[i] = fmt.Sprintf("%02d:00-%02d:00", w.Start, w.End)
		}
		days := make([]string, len(tb.OffPeakDays))
		for i, day := range tb.OffPeakDays {
			days[i] = day.String()
		}
		// A schedule without its own start applies from when the fare
		// does (the filing's effective date, or its approval).
		eff := "with the fare"
		if tb.EffectiveAt != nil {
			eff = tb.EffectiveAt.UTC().Format(time.DateTime) + " UTC"
		}
		d.schedule = []templates.KV{
			{Label: "Peak windows (UTC)", Value: orDash(strings.Join(windows, ", "))},
			{Label: fare.FieldLabel("off_peak_days"), Value: orDash(strings.Join(days, ", ")), Hint: offsetHint(len(days), tb.UTCOffsetMinutes)},
			{Label: "Peak prices", Value: priceTriple(tb.Peak)},
			{Label: "Off-peak prices", Value: priceTriple(tb.OffPeak)},
			{Label: fare.FieldLabel("tod_effective_at"), Value: eff},
		}
	}
	scope := "global"
	if f.CapScope == fare.ScopePerOrg {
		scope = "per organization"
	}
	d.caps = []templates.KV{
		{Label: fare.FieldLabel("max_rpm"), Value: templates.OptInt(f.MaxRPM)},
		{Label: fare.FieldLabel("max_rpd"), Value: templates.OptInt(f.MaxRPD)},
		{Label: fare.FieldLabel("cap_scope"), Value: scope},
	}
	for _, c := range f.Capabilities {
		d.capabilities = append(d.capabilities, strings.ReplaceAll(c.String(), "_", " "))
	}
	d.market = marketKVs(&f.Market)
	return d
}

// marketKVs are a fare's attributes of election.md sec. 7 in words.
func marketKVs(m *fare.Market) []templates.KV {
	return []templates.KV{
		{Label: fare.FieldLabel("context_length"), Value: fare.TokensText(m.ContextLength), Hint: "prompt plus output"},
		{Label: fare.FieldLabel("max_output_tokens"), Value: fare.TokensText(m.MaxOutputTokens)},
		{Label: fare.FieldLabel("quantization"), Value: fare.QuantizationText(m.Quantization)},
		{Label: "Data policy", Value: m.DataPolicyText(), Hint: "the carrier's declaration"},
		{Label: fare.FieldLabel("regions"), Value: fare.RegionsText(m.Regions)},
		{Label: fare.FieldLabel("request_price"), Value: fare.FeeText(m.RequestPrice)},
		{Label: fare.FieldLabel("image_price"), Value: fare.FeeText(m.ImagePrice)},
	}
}

// marketNote says whose word the published data policy is: the carrier's,
// approved by the reviewer of the filing that published the fare.
func marketNote(l *catalogue.Listing, filings []workflow.Filing) string {
	if l.Published == nil {
		return ""
	}
	for i := range filings {
		f := &filings[i]
		if f.Fare != nil && f.Fare.ID == l.Published.ID && f.DecidedAt != nil && f.DeciderEmail != "" {
			return fmt.Sprintf("The data policy is %s's declaration, approved by %s on %s.", l.CarrierName, f.DeciderEmail, stamp(f.DecidedAt))
		}
	}
	return "The data policy is " + l.CarrierName + "'s declaration."
}

// fareKVs lists a fare's fields for a side-by-side view.
func fareKVs(f *fare.Fare) []templates.KV {
	if f == nil {
		return nil
	}
	d := describeFare(f)
	kvs := append([]templates.KV{}, d.prices...)
	if len(d.tiers) > 0 {
		var parts []string
		for _, t := range d.tiers {
			parts = append(parts, fmt.Sprintf("above %s: %s / %s / %s", t[0], t[1], t[2], t[3]))
		}
		kvs = append(kvs, templates.KV{Label: "Context tiers", Value: strings.Join(parts, "; ")})
	}
	kvs = append(kvs, d.schedule...)
	kvs = append(kvs, d.caps...)
	kvs = append(kvs, d.market...)
	caps := "none"
	if len(d.capabilities) > 0 {
		caps = strings.Join(d.capabilities, ", ")
	}
	return append(kvs, templates.KV{Label: "Capabilities", Value: caps})
}

func priceTriple(p fare.Prices) string {
	return "in " + templates.OptDollars(p.Input) + " · out " + templates.OptDollars(p.Output) + " · cached " + templates.OptDollars(p.CachedInput)
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
	return "whole days at " + fare.OffsetText(offsetMinutes)
}

func listingHeader(l *catalogue.Listing) templates.ListingHeader {
	return templates.ListingHeader{ID: l.ID, URL: fmt.Sprintf("/listings/%d", l.ID), Model: l.Model.Name, Carrier: l.CarrierName,
		Status: l.Status.Label(), Class: string(l.Status)}
}

func mapValues(m map[string]string) []string {
	var out []string
	for _, v := range m {
		out = append(out, v)
	}
	return out
}

// ListingsPerPage is how many listings a page of the listings table shows.
const ListingsPerPage = 100

// listingsTable is the listings table's state, all kept in the URL: a
// search, a status filter, a sort and a page.
type listingsTable struct {
	query, status, sort string
	page                int
}

// narrowListings applies the table's search, status filter, sort and page to
// the entries, sets the view's navigation and returns the ids of the rows on
// the page, in order. uptime is a listing's live uptime, for the uptime sort.
func narrowListings(v *templates.ListingsView, entries []catalogue.ListingEntry, t listingsTable, uptimeOf func(id int64) *float64) []int64 {
	q, status, sortBy := strings.ToLower(strings.TrimSpace(t.query)), t.status, t.sort
	var kept []*catalogue.ListingEntry
	for i := range entries {
		l := &entries[i]
		if q != "" && !strings.Contains(strings.ToLower(l.Model.Name+" "+l.Model.Slug+" "+l.CarrierName+" "+l.CarrierSlug), q) {
			continue
		}
		if status != "" && string(l.Status) != status {
			continue
		}
		kept = append(kept, l)
	}
	input := func(l *catalogue.ListingEntry) int64 {
		if l.PublishedInput == nil {
			return 1 << 62
		}
		return int64(*l.PublishedInput)
	}
	switch sortBy {
	case "carrier":
		slices.SortStableFunc(kept, func(a, b *catalogue.ListingEntry) int { return strings.Compare(a.CarrierName, b.CarrierName) })
	case "price":
		slices.SortStableFunc(kept, func(a, b *catalogue.ListingEntry) int { return cmp.Compare(input(a), input(b)) })
	case "uptime":
		uptime := make(map[int64]float64, len(kept))
		for _, l := range kept {
			uptime[l.ID] = -1 // not measured yet: first
			if u := uptimeOf(l.ID); u != nil {
				uptime[l.ID] = *u
			}
		}
		slices.SortStableFunc(kept, func(a, b *catalogue.ListingEntry) int { return cmp.Compare(uptime[a.ID], uptime[b.ID]) })
	}
	pages := max(1, (len(kept)+ListingsPerPage-1)/ListingsPerPage)
	page := max(1, min(t.page, pages))
	from, to := (page-1)*ListingsPerPage, min(page*ListingsPerPage, len(kept))
	ids := make([]int64, 0, to-from)
	for _, l := range kept[from:to] {
		ids = append(ids, l.ID)
	}
	v.Query, v.Status, v.Sort, v.Total = q, status, sortBy, len(kept)
	link := func(status, sortBy string, page int) string {
		u := url.Values{}
		for k, val := range map[string]string{"q": q, "status": status, "sort": sortBy} {
			if val != "" {
				u.Set(k, val)
			}
		}
		if page > 1 {
			u.Set("page", strconv.Itoa(page))
		}
		if len(u) == 0 {
			return "/listings"
		}
		return "/listings?" + u.Encode()
	}
	for _, st := range []struct{ key, label string }{{"", "all"}, {"in_service", "in service"}, {"paused", "paused"}, {"draft", "draft"}, {"delisted", "delisted"}} {
		v.Statuses = append(v.Statuses, templates.Choice{Label: st.label, URL: link(st.key, sortBy, 1), Active: st.key == status})
	}
	for _, so := range []struct{ key, label string }{{"", "model"}, {"carrier", "carrier"}, {"price", "input price"}, {"uptime", "lowest uptime"}} {
		if so.key == "carrier" && !v.ShowCarrier {
			continue // a carrier's own listings are all one carrier's (issue 29 L20)
		}
		v.Sorts = append(v.Sorts, templates.Choice{Label: so.label, URL: link(status, so.key, 1), Active: so.key == sortBy})
	}
	if page > 1 {
		v.Prev = link(status, sortBy, page-1)
	}
	if page < pages {
		v.Next = link(status, sortBy, page+1)
	}
	v.Showing = fmt.Sprintf("%d listings", len(kept))
	if pages > 1 {
		v.Showing = fmt.Sprintf("%d to %d of %d listings", from+1, to, len(kept))
	}
	return ids
}

// listingHolding says, on the listing's page, who serves each standard
// workload under auto routing now (for a paused listing: if it resumed
// now), from the projector's incumbents and the gateway's stable
// preference; nothing for a listing that was never published.
func (s *Server) listingHolding(ctx context.Context, v *templates.ListingView, l *catalogue.Listing) error {
	if l.Published == nil || (l.Status != catalogue.StatusInService && l.Status != catalogue.StatusPaused) {
		return nil
	}
	paused := l.Status == catalogue.StatusPaused
	holds, err := s.Projector.Holding(ctx, l, paused)
	if err != nil {
		return err
	}
	v.HoldingTitle = "Who routing gives this model's traffic now"
	if paused {
		v.HoldingTitle = "If you resumed now"
	}
	v.Holding = holdingLines(holds, election.IncumbentMargin)
	return nil
}

// holdingLines words each workload's holder as the listing sees it.
func holdingLines(holds []projection.Hold, margin float64) []string {
	var out []string
	points := func(v float64) string { return strconv.FormatFloat(v, 'f', 3, 64) }
	for _, h := range holds {
		var line string
		switch {
		case h.Holder == "":
			line = "no listing is eligible"
		case !h.Eligible:
			line = h.Holder + " serves it; this listing is not on its ballot"
		case h.Mine:
			line = "this listing serves it"
		case h.Kept:
			line = h.Holder + " keeps it as the incumbent: this listing's score leads by " + points(h.Lead) +
				", and a lead of more than " + points(margin) + " takes it"
		default:
			line = h.Holder + " serves it; this listing's score trails by " + points(-h.Lead)
		}
		out = append(out, h.Scenario+": "+line+".")
	}
	return out
}
