package web

import (
	"fmt"
	"net/http"
	"time"

	"github.com/labstack/echo/v4"

	"github.com/airside/airside/internal/apperr"
	"github.com/airside/airside/internal/fare"
	"github.com/airside/airside/internal/workflow"
	"github.com/airside/airside/templates"
)

// maintenanceRows are windows as listed; names maps a listing to its label
// (the operations page's listing column).
func maintenanceRows(windows []workflow.MaintenanceWindow, canManage func(carrierID int64) bool, names func(listingID int64) string) []templates.MaintenanceRow {
	rows := make([]templates.MaintenanceRow, 0, len(windows))
	for _, w := range windows {
		r := templates.MaintenanceRow{ID: w.ID, ListingURL: fmt.Sprintf("/listings/%d", w.ListingID),
			Start: w.StartsAt.Format(maintenanceShown), End: w.EndsAt.Format(maintenanceShown), Duration: spanWords(w.EndsAt.Sub(w.StartsAt)),
			Reason: w.Reason, By: w.CreatedBy, State: string(w.State()), Outcome: w.Outcome}
		if names != nil {
			r.Listing = names(w.ListingID)
		}
		switch w.State() {
		case workflow.MaintenanceActive:
			r.StateClass = "paused"
		case workflow.MaintenanceScheduled:
			r.StateClass = "submitted"
		default:
			r.StateClass = "muted"
		}
		if canManage != nil && canManage(w.CarrierID) {
			switch w.State() {
			case workflow.MaintenanceScheduled:
				r.CancelLabel = "Cancel"
			case workflow.MaintenanceActive:
				r.CancelLabel = "End now"
			}
		}
		rows = append(rows, r)
	}
	return rows
}

const maintenanceShown = "2006-01-02 15:04"

// spanWords says how long a window lasts ("2 h", "1 d 4 h", "45 min").
func spanWords(d time.Duration) string {
	d = d.Round(time.Minute)
	days, hours, mins := int(d/(24*time.Hour)), int(d%(24*time.Hour)/time.Hour), int(d%time.Hour/time.Minute)
	switch {
	case days > 0 && hours > 0:
		return fmt.Sprintf("%d d %d h", days, hours)
	case days > 0:
		return fmt.Sprintf("%d d", days)
	case hours > 0 && mins > 0:
		return fmt.Sprintf("%d h %d min", hours, mins)
	case hours > 0:
		return fmt.Sprintf("%d h", hours)
	}
	return fmt.Sprintf("%d min", mins)
}

// listingMaintenance fills the listing page's maintenance card.
func (s *Server) listingMaintenance(c echo.Context, v *templates.ListingView, listingID, carrierID int64, canPlan bool) error {
	p := principal(c)
	windows, err := s.Maintenance.Windows(c.Request().Context(), p, listingID)
	if err != nil {
		return err
	}
	v.Maintenance = maintenanceRows(windows, func(cid int64) bool { return workflow.CanManageListings(p, cid) }, nil)
	v.CanPlan = canPlan
	if v.MaintenanceForm.Start == "" && !v.MaintenanceOpen {
		// A sensible start: the next whole hour, for two hours.
		start := s.Now().UTC().Truncate(time.Hour).Add(time.Hour)
		v.MaintenanceForm.Start, v.MaintenanceForm.End = start.Format(fare.TimeLayout), start.Add(2*time.Hour).Format(fare.TimeLayout)
	}
	return nil
}

func (s *Server) handlePlanMaintenance(c echo.Context) error {
	id, err := pathID(c, "id")
	if err != nil {
		return err
	}
	form := workflow.MaintenanceForm{Start: c.FormValue("start"), End: c.FormValue("end"), Reason: c.FormValue("reason")}
	_, err = s.Maintenance.Schedule(c.Request().Context(), principal(c), id, form)
	switch apperr.Code(err) {
	case "":
		if err := s.setFlash(c, "Maintenance planned: the listing leaves routing at its start and comes back at its end."); err != nil {
			return err
		}
		return c.Redirect(http.StatusSeeOther, fmt.Sprintf("/listings/%d#maintenance", id))
	case apperr.EINVALID, apperr.ECONFLICT:
		errs := apperr.FieldErrors(err)
		if apperr.Code(err) == apperr.ECONFLICT {
			errs = map[string]string{"start": apperr.Message(err)}
		}
		status := statusOf(err)
		return s.renderListing(c, id, status, func(v *templates.ListingView) {
			v.MaintenanceOpen = true
			v.MaintenanceForm = templates.MaintenanceFormView{Start: form.Start, End: form.End, Reason: form.Reason, Errors: errs}
		})
	}
	return err
}

func (s *Server) handleCancelMaintenance(c echo.Context) error {
	id, err := pathID(c, "id")
	if err != nil {
		return err
	}
	windowID, err := pathID(c, "wid")
	if err != nil {
		return err
	}
	if err := s.Maintenance.Cancel(c.Request().Context(), principal(c), id, windowID); err != nil {
		return err
	}
	if err := s.setFlash(c, "Maintenance window called off."); err != nil {
		return err
	}
	return c.Redirect(http.StatusSeeOther, fmt.Sprintf("/listings/%d#maintenance", id))
}
