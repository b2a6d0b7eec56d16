package web

import (
	"context"
	"fmt"
	"net/http"
	"sort"
	"strconv"
	"strings"

	"github.com/labstack/echo/v4"

	"github.com/airside/airside/internal/apperr"
	"github.com/airside/airside/internal/catalogue"
	"github.com/airside/airside/internal/preflight"
	"github.com/airside/airside/internal/workflow"
	"github.com/airside/airside/templates"
)

// ListingReads is what the listing pages, the fare form and the preview read.
type ListingReads interface {
	FindModels(ctx context.Context) ([]catalogue.Model, error)
	FindListings(ctx context.Context, f catalogue.ListingFilter) ([]catalogue.Listing, error)
	FindListingEntries(ctx context.Context, carrierIDs []int64) ([]catalogue.ListingEntry, error)
	FindListing(ctx context.Context, id int64, carrierIDs []int64) (*catalogue.Listing, error)
	FindListingHeader(ctx context.Context, id int64, carrierIDs []int64) (*catalogue.Listing, error)
	FindCapabilityChecks(ctx context.Context, listingID int64) (map[string]string, error)
	FindCapabilityChecksFor(ctx context.Context, listingIDs []int64) (map[int64]map[string]string, error)
	FindPreflightRuns(ctx context.Context, listingID, endpointID int64) (*preflight.Run, map[string]preflight.Result, error)
	FindCapabilityOverrides(ctx context.Context, listingID int64) (map[string]workflow.Override, error)
}

func (s *Server) handleListings(c echo.Context) error {
	ctx, p := c.Request().Context(), principal(c)
	// The table narrows names, statuses and prices (one light query), then
	// reads in full only the rows on its page: thousands of listings cost
	// what a page of them does.
	entries, err := s.ListingReads.FindListingEntries(ctx, workflow.Scope(p))
	if err != nil {
		return err
	}
	// Health comes from the routing snapshot (seconds old), not from the
	// metrics of every listing on every page view.
	snap, err := s.Routing.Current(ctx)
	if err != nil {
		return err
	}
	var models []catalogue.Model
	if len(adminMemberships(p)) > 0 {
		if models, err = s.ListingReads.FindModels(ctx); err != nil {
			return err
		}
	}
	page := s.page(c, "Listings", "listings")
	page.Wide = true
	v := listingsView(page, p, entries, models)
	pageNumber, _ := strconv.Atoi(c.QueryParam("page"))
	table := listingsTable{query: c.QueryParam("q"), status: c.QueryParam("status"), sort: c.QueryParam("sort"), page: pageNumber}
	ids := narrowListings(&v, entries, table, func(id int64) *float64 {
		h, _ := snap.Health(id)
		return h.UptimePct
	})
	shown, err := s.ListingReads.FindListings(ctx, catalogue.ListingFilter{CarrierIDs: workflow.Scope(p), IDs: ids, StoredHealth: true})
	if err != nil {
		return err
	}
	position := make(map[int64]int, len(ids))
	for i, id := range ids {
		position[id] = i
	}
	sort.Slice(shown, func(i, j int) bool { return position[shown[i].ID] < position[shown[j].ID] })
	for i := range shown {
		if h, ok := snap.Health(shown[i].ID); ok {
			shown[i].Health = h
		}
	}
	inFlight, err := s.FilingReads.InFlightFilings(ctx, workflow.Scope(p))
	if err != nil {
		return err
	}
	// A draft shows where nothing is in flight, so a carrier finds it.
	drafts, err := s.FilingReads.FindFilings(ctx, workflow.FilingFilter{CarrierIDs: workflow.Scope(p), States: []workflow.State{workflow.Draft}})
	if err != nil {
		return err
	}
	for _, d := range drafts {
		if _, busy := inFlight[d.ListingID]; !busy {
			inFlight[d.ListingID] = d
		}
	}
	v.Rows = listingRows(shown, inFlight)
	return render(c, http.StatusOK, templates.Listings(v))
}

func (s *Server) handleListing(c echo.Context) error {
	id, err := pathID(c, "id")
	if err != nil {
		return err
	}
	// ?pause=1 opens the pause form: the on-call view links here with it.
	return s.renderListing(c, id, http.StatusOK, func(v *templates.ListingView) { v.PauseOpen = c.QueryParam("pause") == "1" })
}

// renderListing renders a listing's page; edit adjusts the view (a form
// shown again with what was typed and what is wrong with it).
func (s *Server) renderListing(c echo.Context, id int64, status int, edit func(v *templates.ListingView)) error {
	// Another carrier's listing is not found, exactly like a missing one.
	ctx, p := c.Request().Context(), principal(c)
	l, err := s.ListingReads.FindListing(ctx, id, workflow.Scope(p))
	if err != nil {
		return err
	}
	filings, err := s.FilingReads.FindFilings(ctx, workflow.FilingFilter{ListingID: l.ID})
	if err != nil {
		return err
	}
	page := s.page(c, l.Model.Name, "listings")
	v := listingPageView(page, p, l, filings)
	if v.Traffic, err = s.trafficChart(c, l.ID); err != nil {
		return err
	}
	ep, run, latest, err := s.Endpoints.Preflight(ctx, l.ID)
	if err != nil {
		return err
	}
	can := workflow.ListingActionsFor(p, l, v.InFlight != nil)
	v.ShowEndpoint = true
	v.Endpoint = endpointView(page.CSRF, l, inFlightOf(filings), can.Endpoint)
	v.Preflight = preflightView(page.CSRF, l, ep, run, latest, can.Preflight, s.Now())
	if v.CanVerify {
		checks, err := s.ListingReads.FindCapabilityChecks(ctx, l.ID)
		if err != nil {
			return err
		}
		overrides, err := s.ListingReads.FindCapabilityOverrides(ctx, l.ID)
		if err != nil {
			return err
		}
		v.Verify = verifyRows(l, inFlightOf(filings), checks, overrides, latest)
		v.CanVerify = len(v.Verify) > 0
	}
	if err := s.listingHolding(ctx, &v, l); err != nil {
		return err
	}
	if edit != nil {
		edit(&v)
	}
	if err := s.listingMaintenance(c, &v, l.ID, l.CarrierID, can.Pause); err != nil {
		return err
	}
	return render(c, status, templates.Listing(v))
}

func (s *Server) handleAddListing(c echo.Context) error {
	carrierText, modelText, _ := strings.Cut(c.FormValue("model"), ":")
	carrierID, err1 := strconv.ParseInt(carrierText, 10, 64)
	modelID, err2 := strconv.ParseInt(modelText, 10, 64)
	if err1 != nil || err2 != nil {
		return apperr.Errorf(apperr.EINVALID, "Choose a model to list.")
	}
	id, err := s.Filings.AddListing(c.Request().Context(), principal(c), carrierID, modelID)
	if err != nil {
		return err // a refused model is a 422 page saying why
	}
	if err := s.setFlash(c, "Listing added as a draft. File its first fare to bring it into service."); err != nil {
		return err
	}
	return c.Redirect(http.StatusSeeOther, fmt.Sprintf("/listings/%d", id))
}

// handlePause takes the listing out of routing at once, once its admin has
// given a reason and confirmed; without either the page says so beside the
// field, keeping what was typed, and nothing changes.
func (s *Server) handlePause(c echo.Context) error {
	id, err := pathID(c, "id")
	if err != nil {
		return err
	}
	reason := c.FormValue("reason")
	err = s.Filings.PauseNow(c.Request().Context(), principal(c), id, reason, c.FormValue("confirm") == "yes")
	switch apperr.Code(err) {
	case "":
		if err := s.setFlash(c, "Paused: gateways stop routing to this listing at their next catalogue read (seconds). "+
			"Resuming with this fare needs no review once the endpoint passes preflight again."); err != nil {
			return err
		}
		return c.Redirect(http.StatusSeeOther, fmt.Sprintf("/listings/%d", id))
	case apperr.EINVALID:
		return s.renderListing(c, id, http.StatusUnprocessableEntity, func(v *templates.ListingView) {
			v.PauseOpen, v.PauseReason, v.FieldErrors = true, reason, apperr.FieldErrors(err)
		})
	case apperr.ECONFLICT:
		if ferr := s.setFlash(c, "%s", apperr.Message(err)); ferr != nil {
			return ferr
		}
		return c.Redirect(http.StatusSeeOther, fmt.Sprintf("/listings/%d", id))
	}
	return err
}

// handleResume brings a paused listing back: at once with the fare of
// before the pause and a fresh preflight, else filed for review; when the
// preflight is missing, the listing page says so and nothing changes.
func (s *Server) handleResume(c echo.Context) error {
	id, err := pathID(c, "id")
	if err != nil {
		return err
	}
	res, err := s.Filings.Resume(c.Request().Context(), principal(c), id, strings.TrimSpace(c.FormValue("justification")))
	if apperr.Code(err) == apperr.ECONFLICT {
		if ferr := s.setFlash(c, "%s", apperr.Message(err)); ferr != nil {
			return ferr
		}
		return c.Redirect(http.StatusSeeOther, fmt.Sprintf("/listings/%d", id))
	}
	if err != nil {
		return err
	}
	if res.AtOnce {
		if err := s.setFlash(c, "Resumed: the fare is the one in force at the pause and the endpoint passed preflight since, so no review was needed. "+
			"Gateways route to this listing again at their next catalogue read (seconds)."); err != nil {
			return err
		}
		return c.Redirect(http.StatusSeeOther, fmt.Sprintf("/listings/%d", id))
	}
	if err := s.setFlash(c, "%s The resume was filed; the listing changes once a reviewer approves it.", res.Why); err != nil {
		return err
	}
	return c.Redirect(http.StatusSeeOther, fmt.Sprintf("/filings/%d", res.FilingID))
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
		l, lerr := s.ListingReads.FindListing(c.Request().Context(), id, nil)
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
