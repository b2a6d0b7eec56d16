package web

import (
	"fmt"
	"net/http"
	"slices"
	"strconv"
	"strings"
	"time"

	"github.com/labstack/echo/v4"

	"github.com/airside/airside/internal/catalogue"
	"github.com/airside/airside/internal/earnings"
	"github.com/airside/airside/internal/fare"
	"github.com/airside/airside/internal/money"
	"github.com/airside/airside/internal/storefront"
	"github.com/airside/airside/templates"
)

func profileView(page templates.Page, prof *storefront.Profile, carriers []templates.Choice, pending *storefront.ProfileChange, canEdit bool) templates.ProfileView {
	v := templates.ProfileView{Page: page, Carrier: prof.Name, Slug: prof.Slug, Carriers: carriers, Description: prof.Description,
		Website: prof.Website, SupportContact: prof.SupportContact, StatusURL: prof.StatusURL, HasLogo: prof.LogoType != "",
		LogoURL: "/carriers/" + prof.Slug + "/logo", PublicURL: "/carriers/" + prof.Slug, CanEdit: canEdit,
		Domain: prof.Domain, DomainToken: prof.DomainToken, TXT: storefront.TXTRecord(prof.DomainToken),
		FileURL: "https://" + prof.Domain + storefront.FilePath, DomainVerified: prof.DomainVerifiedAt != nil}
	if pending != nil {
		switch pending.State {
		case storefront.Submitted:
			v.Pending = "A profile change is waiting for review (filed " + stamp(&pending.CreatedAt) + ")."
			v.Description, v.Website, v.SupportContact, v.StatusURL = pending.Description, pending.Website, pending.SupportContact, pending.StatusURL
		case storefront.Declined:
			v.Pending = "Your last profile change was declined: " + pending.DecisionNote
		}
	}
	return v
}

var modalityLabels = []string{"text", "image", "audio", "video", "file"}

func modalityOptions(selected []string) []templates.Option {
	var out []templates.Option
	for _, m := range modalityLabels {
		out = append(out, templates.Option{Value: m, Label: m, Selected: slices.Contains(selected, m)})
	}
	return out
}

func proposalRows(rows []storefront.Proposal, staff bool) []templates.ProposalRow {
	var out []templates.ProposalRow
	for _, r := range rows {
		out = append(out, templates.ProposalRow{ID: r.ID, Carrier: r.CarrierName, Name: r.Name, Slug: r.Slug, Family: r.Family,
			Context: strconv.FormatInt(r.ContextTokens, 10), MaxOutput: strconv.FormatInt(r.MaxOutputTokens, 10), Input: r.InputModalities,
			Output: r.OutputModalities, Note: r.Note, State: r.State, DecisionNote: r.DecisionNote, Author: r.AuthorEmail,
			CanDecide: staff && r.State == storefront.Submitted})
	}
	return out
}

// publicCache lets browsers and shared caches keep a public page a minute
// when it is read anonymously (a logged-in reader's page carries its nav).
func publicCache(c echo.Context) {
	// Never share a response that sets a cookie (a first visit gets its
	// CSRF cookie): a cache would hand it to everyone.
	if principal(c) != nil || c.Response().Header().Get("Set-Cookie") != "" {
		return
	}
	c.Response().Header().Set("Cache-Control", "public, max-age=60")
	c.Response().Header().Set("Vary", "Cookie")
}

// publicRows turns listings into what a public page shows: list prices,
// the approved discount, the flags earned, uptime over 30 days. Never a
// landing fee, a draft or an unpublished filing.
func (s *Server) publicRows(c echo.Context, listings []catalogue.Listing, byModel bool) ([]templates.PublicListingRow, []string, error) {
	ctx := c.Request().Context()
	var ids []int64
	var shown []catalogue.Listing
	for _, l := range listings {
		if l.Published != nil && (l.Status == catalogue.StatusInService || l.Status == catalogue.StatusPaused) {
			shown = append(shown, l)
			ids = append(ids, l.ID)
		}
	}
	checks, err := s.ListingReads.FindCapabilityChecksFor(ctx, ids)
	if err != nil {
		return nil, nil, err
	}
	now := s.Now().UTC()
	hours, err := s.TrafficReads.HourlyTraffic(ctx, ids, now.Add(-30*24*time.Hour), now)
	if err != nil {
		return nil, nil, err
	}
	var rows []templates.PublicListingRow
	var earned []string
	for _, l := range shown {
		f := l.Published
		row := templates.PublicListingRow{Input: templates.Dollars(f.Input), Output: templates.Dollars(f.Output), Cached: "–", Discount: "–", Uptime: "–"}
		if byModel {
			row.Name, row.URL = l.Model.Name, "/models/"+l.Model.Slug
		} else {
			row.Name, row.URL = l.CarrierName, "/carriers/"+l.CarrierSlug
		}
		if l.Status == catalogue.StatusPaused {
			row.Status = "paused"
		}
		if f.CachedInput != nil {
			row.Cached = templates.Dollars(*f.CachedInput)
		}
		row.PriceNotes = priceNotes(f, now)
		row.Offers = offers(&f.Market)
		if peak, _ := f.BlockPrices(now); peak != nil && (f.TimeBased.EffectiveAt == nil || !now.Before(*f.TimeBased.EffectiveAt)) {
			// In force, the schedule's peak prices are what developers pay
			// most of the time; the base prices only before it starts.
			row.Input, row.Output, row.Cached = templates.Dollars(peak.Input), templates.Dollars(peak.Output), templates.Dollars(peak.CachedInput)
		}
		if f.Discount > 0 {
			row.Discount = f.Discount.Percent() + " %"
		}
		if u := earnings.TrafficOf(hours[l.ID]).Uptime(); u >= 0 {
			row.Uptime = templates.Pct2(100 * u)
		}
		for _, flag := range f.Capabilities {
			if checks[l.ID][flag.String()] == "verified" {
				name := strings.ReplaceAll(flag.String(), "_", " ")
				row.Badges = append(row.Badges, templates.Badge{Label: name, Title: name + ": declared and passed preflight"})
				if !slices.Contains(earned, name) {
					earned = append(earned, name)
				}
			}
		}
		rows = append(rows, row)
	}
	return rows, earned, nil
}

// offers is what a listing offers besides price, in short, as developers
// filter on it (election.md sec. 7): only what the carrier declared.
func offers(m *fare.Market) []string {
	var out []string
	if m.ContextLength != nil {
		out = append(out, money.Grouped(*m.ContextLength)+"-token context")
	}
	if m.MaxOutputTokens != nil {
		out = append(out, money.Grouped(*m.MaxOutputTokens)+" output tokens at most")
	}
	if m.Quantization != "" {
		out = append(out, m.Quantization)
	}
	switch {
	case m.ZDR():
		out = append(out, "zero data retention")
	case m.RetentionDays != nil || m.TrainsOnPrompts != nil:
		out = append(out, m.DataPolicyText())
	}
	if len(m.Regions) > 0 {
		out = append(out, "served from "+strings.Join(m.Regions, ", "))
	}
	if m.RequestPrice != nil && *m.RequestPrice > 0 {
		out = append(out, "$"+m.RequestPrice.String()+" a request")
	}
	if m.ImagePrice != nil && *m.ImagePrice > 0 {
		out = append(out, "$"+m.ImagePrice.String()+" an image")
	}
	return out
}

func (s *Server) handlePublicCarrier(c echo.Context) error {
	ctx := c.Request().Context()
	prof, err := s.StorefrontReads.FindProfileBySlug(ctx, c.Param("slug"))
	if err != nil {
		return err
	}
	listings, err := s.ListingReads.FindListings(ctx, catalogue.ListingFilter{CarrierIDs: []int64{prof.CarrierID}, Published: true, StoredHealth: true})
	if err != nil {
		return err
	}
	rows, earned, err := s.publicRows(c, listings, true)
	if err != nil {
		return err
	}
	v := templates.PublicCarrierView{Page: s.page(c, prof.Name, ""), Name: prof.Name, Description: prof.Description, Website: prof.Website,
		Support: prof.SupportContact, StatusURL: prof.StatusURL, Rows: rows}
	if prof.LogoType != "" {
		v.LogoURL = "/carriers/" + prof.Slug + "/logo"
	}
	if prof.DomainVerifiedAt != nil {
		v.Badges = append(v.Badges, templates.Badge{Label: "domain " + prof.Domain, Title: "proved control of " + prof.Domain})
	}
	for _, e := range earned {
		v.Badges = append(v.Badges, templates.Badge{Label: e, Title: e + " passed preflight on at least one model"})
	}
	publicCache(c)
	return render(c, http.StatusOK, templates.PublicCarrier(v))
}

func (s *Server) handlePublicLogo(c echo.Context) error {
	data, typ, err := s.StorefrontReads.FindLogo(c.Request().Context(), c.Param("slug"))
	if err != nil {
		return err
	}
	if typ != storefront.LogoPNG && typ != storefront.LogoSVG {
		return echo.ErrNotFound
	}
	h := c.Response().Header()
	h.Set("Cache-Control", "public, max-age=300")
	h.Set("X-Content-Type-Options", "nosniff")
	// An SVG opened on its own runs nothing, even if a sanitiser missed it.
	h.Set("Content-Security-Policy", "default-src 'none'; style-src 'unsafe-inline'; sandbox")
	return c.Blob(http.StatusOK, typ, data)
}

func (s *Server) handlePublicModel(c echo.Context) error {
	ctx := c.Request().Context()
	models, err := s.ListingReads.FindModels(ctx)
	if err != nil {
		return err
	}
	i := slices.IndexFunc(models, func(m catalogue.Model) bool { return m.Slug == c.Param("slug") })
	if i < 0 {
		return echo.NewHTTPError(http.StatusNotFound)
	}
	m := models[i]
	listings, err := s.ListingReads.FindListings(ctx, catalogue.ListingFilter{ModelID: m.ID, Published: true, StoredHealth: true})
	if err != nil {
		return err
	}
	sortBy := c.QueryParam("sort")
	switch sortBy {
	case "price":
		slices.SortStableFunc(listings, func(a, b catalogue.Listing) int { return cmpPrice(a.Published, b.Published) })
	case "name":
		slices.SortStableFunc(listings, func(a, b catalogue.Listing) int { return strings.Compare(a.CarrierName, b.CarrierName) })
	}
	rows, _, err := s.publicRows(c, listings, false)
	if err != nil {
		return err
	}
	if sortBy == "uptime" {
		slices.SortStableFunc(rows, func(a, b templates.PublicListingRow) int { return strings.Compare(b.Uptime, a.Uptime) })
	}
	v := templates.PublicModelView{Page: s.page(c, m.Name, ""), Name: m.Name, Slug: m.Slug, Family: m.Family,
		Context: templates.Count(m.ContextTokens), Input: m.InputModalities, Output: m.OutputModalities, Sort: sortBy, Rows: rows}
	if m.MaxOutputTokens > 0 {
		v.MaxOutput = templates.Count(m.MaxOutputTokens)
	}
	for _, s := range []struct{ key, label string }{{"", "carrier"}, {"price", "input price"}, {"uptime", "uptime"}} {
		v.Sorts = append(v.Sorts, templates.Choice{Label: s.label, URL: "/models/" + m.Slug + "?sort=" + s.key, Active: s.key == sortBy})
	}
	publicCache(c)
	return render(c, http.StatusOK, templates.PublicModel(v))
}

func cmpPrice(a, b *fare.Fare) int {
	switch {
	case a == nil || b == nil:
		return 0
	case a.Input < b.Input:
		return -1
	case a.Input > b.Input:
		return 1
	}
	return 0
}

// profileChangeRows are the profile changes awaiting review, for the queue.
func profileChangeRows(changes []storefront.ProfileChange, canDecide func(carrierID, authorID int64) bool) []templates.ProfileChangeRow {
	var out []templates.ProfileChangeRow
	for _, ch := range changes {
		row := templates.ProfileChangeRow{ID: ch.ID, Carrier: ch.CarrierName, Author: ch.AuthorEmail, Submitted: stamp(&ch.CreatedAt),
			Description: ch.Description, Website: ch.Website, Support: ch.SupportContact, Status: ch.StatusURL,
			CanDecide: canDecide(ch.CarrierID, ch.AuthorID)}
		if ch.LogoType != "" {
			row.Logo = fmt.Sprintf("/profiles/%d/logo", ch.ID)
		}
		out = append(out, row)
	}
	return out
}

// handleProfileChangeLogo shows a proposed logo to reviewers.
func (s *Server) handleProfileChangeLogo(c echo.Context) error {
	id, err := pathID(c, "id")
	if err != nil {
		return err
	}
	ch, err := s.StorefrontReads.FindProfileChange(c.Request().Context(), id)
	if err != nil || ch.LogoType == "" {
		return echo.NewHTTPError(http.StatusNotFound)
	}
	h := c.Response().Header()
	h.Set("X-Content-Type-Options", "nosniff")
	h.Set("Content-Security-Policy", "default-src 'none'; style-src 'unsafe-inline'; sandbox")
	return c.Blob(http.StatusOK, ch.LogoType, ch.Logo)
}

// priceNotes are a published fare's prices beyond its columns, for
// developers: the peak hours and what off-peak hours cost, and each context
// tier.
func priceNotes(f *fare.Fare, now time.Time) []string {
	var notes []string
	if peak, off := f.BlockPrices(now); peak != nil && off != nil {
		var hours []string
		for _, w := range f.TimeBased.PeakHours {
			hours = append(hours, fmt.Sprintf("%02d:00-%02d:00", w.Start, w.End))
		}
		note := "Peak " + strings.Join(hours, ", ") + " UTC"
		if len(f.TimeBased.OffPeakDays) > 0 {
			var days []string
			for _, d := range f.TimeBased.OffPeakDays {
				days = append(days, d.String())
			}
			note += fmt.Sprintf("; %s off-peak all day (%s)", strings.Join(days, " and "), fare.OffsetText(f.TimeBased.UTCOffsetMinutes))
		}
		notes = append(notes, note+fmt.Sprintf("; off-peak input %s, output %s", templates.Dollars(off.Input), templates.Dollars(off.Output)))
	}
	for _, t := range f.Tiers {
		note := "Prompts over " + templates.Count(t.AboveTokens) + " tokens:"
		if t.Input != nil {
			note += " input " + templates.Dollars(*t.Input)
		}
		if t.Output != nil {
			note += " output " + templates.Dollars(*t.Output)
		}
		if t.CachedInput != nil {
			note += " cached " + templates.Dollars(*t.CachedInput)
		}
		notes = append(notes, note)
	}
	return notes
}

// handlePublicModels is /models: every model with a listing in service, its
// lowest filed input price and the carriers serving it.
func (s *Server) handlePublicModels(c echo.Context) error {
	ctx := c.Request().Context()
	models, err := s.ListingReads.FindModels(ctx)
	if err != nil {
		return err
	}
	listings, err := s.ListingReads.FindListings(ctx, catalogue.ListingFilter{Published: true})
	if err != nil {
		return err
	}
	byModel := map[int64][]catalogue.Listing{}
	for _, l := range listings {
		if l.Published != nil && l.Status == catalogue.StatusInService {
			byModel[l.Model.ID] = append(byModel[l.Model.ID], l)
		}
	}
	v := templates.PublicModelsView{Page: s.page(c, "Models and carriers", "models")}
	for _, m := range models {
		serving := byModel[m.ID]
		if len(serving) == 0 {
			continue
		}
		slices.SortFunc(serving, func(a, b catalogue.Listing) int { return strings.Compare(a.CarrierName, b.CarrierName) })
		lowest := serving[0].Published.Input
		row := templates.PublicModelRow{Name: m.Name, URL: "/models/" + m.Slug, Context: templates.Count(m.ContextTokens)}
		for _, l := range serving {
			lowest = min(lowest, l.Published.Input)
			row.Carriers = append(row.Carriers, templates.Choice{Label: l.CarrierName, URL: "/carriers/" + l.CarrierSlug})
		}
		row.LowestInput = templates.Dollars(lowest)
		v.Rows = append(v.Rows, row)
	}
	slices.SortFunc(v.Rows, func(a, b templates.PublicModelRow) int { return strings.Compare(a.Name, b.Name) })
	publicCache(c)
	return render(c, http.StatusOK, templates.PublicModels(v))
}
