package web

import (
	"context"
	"fmt"
	"net/http"
	"strconv"
	"time"

	"github.com/labstack/echo/v4"

	"github.com/airside/airside/internal/apperr"
	"github.com/airside/airside/internal/audit"
	"github.com/airside/airside/internal/catalogue"
	"github.com/airside/airside/internal/fare"
	"github.com/airside/airside/internal/workflow"
	"github.com/airside/airside/templates"
)

// FilingReads is what the filing pages and the review queue read.
type FilingReads interface {
	FindFiling(ctx context.Context, id int64, carrierIDs []int64) (*workflow.Filing, error)
	FindFilings(ctx context.Context, f workflow.FilingFilter) ([]workflow.Filing, error)
	InFlightFilings(ctx context.Context, carrierIDs []int64) (map[int64]workflow.Filing, error)
	FindComments(ctx context.Context, filingID int64) ([]workflow.ThreadMessage, error)
	CountAwaitingReview(ctx context.Context) (int, error)
	ReviewDurations(ctx context.Context, since time.Time, limit int) ([]time.Duration, error)
	FindFiledFare(ctx context.Context, listingID, fareID int64) (*fare.Fare, error)
	ApproverEmails(ctx context.Context, filingID, lockVersion int64) ([]string, error)
}

// listingToFile finds the path's listing if the current user may file for it.
func (s *Server) listingToFile(c echo.Context) (*catalogue.Listing, error) {
	id, err := pathID(c, "id")
	if err != nil {
		return nil, err
	}
	return s.Filings.ListingToFile(c.Request().Context(), principal(c), id)
}

func (s *Server) handleFileForm(c echo.Context) error {
	l, err := s.listingToFile(c)
	if err != nil {
		return err
	}
	v, err := s.fareFormView(c, l, fare.FormOf(l.Published), nil)
	if err != nil {
		return err
	}
	return render(c, http.StatusOK, templates.FareForm(v))
}

func (s *Server) handleFile(c echo.Context) error {
	l, err := s.listingToFile(c)
	if err != nil {
		return err
	}
	form, err := parseFareForm(c)
	if err != nil {
		return err
	}
	op := c.FormValue("op")
	if rowOp(op, &form) {
		return s.renderFareForm(c, l, form, nil)
	}
	id, err := s.Filings.File(c.Request().Context(), principal(c), l.ID, form, op == "submit")
	if err != nil {
		return s.renderFareFormError(c, l, form, err, nil)
	}
	return s.filedRedirect(c, id, op == "submit")
}

func (s *Server) filedRedirect(c echo.Context, filingID int64, submitted bool) error {
	msg := "Draft saved. Submit it when it is ready for review."
	if submitted {
		msg = "Submitted for review. Nothing changes in routing until a reviewer approves it."
	}
	if err := s.setFlash(c, "%s", msg); err != nil {
		return err
	}
	return c.Redirect(http.StatusSeeOther, fmt.Sprintf("/filings/%d", filingID))
}

// filingInScope loads a filing the current user may see.
func (s *Server) filingInScope(c echo.Context) (*workflow.Filing, error) {
	id, err := pathID(c, "id")
	if err != nil {
		return nil, err
	}
	return s.FilingReads.FindFiling(c.Request().Context(), id, workflow.Scope(principal(c)))
}

func (s *Server) handleFilingEditForm(c echo.Context) error {
	f, l, err := s.editableFiling(c)
	if err != nil {
		return err
	}
	return s.renderFareForm(c, l, formOfFiling(f), f)
}

// editableFiling loads an open fare filing the current user may edit, and
// its listing.
func (s *Server) editableFiling(c echo.Context) (*workflow.Filing, *catalogue.Listing, error) {
	f, err := s.filingInScope(c)
	if err != nil {
		return nil, nil, err
	}
	p := principal(c)
	if err := workflow.Authorize(p, f, workflow.Save); err != nil {
		return nil, nil, err
	}
	if !workflow.FilingActionsFor(p, f).Edit {
		return nil, nil, apperr.Errorf(apperr.ECONFLICT, "A filing that is %s cannot be edited.", f.State.Label())
	}
	l, err := s.ListingReads.FindListingHeader(c.Request().Context(), f.ListingID, workflow.Scope(p))
	if err != nil {
		return nil, nil, err
	}
	return f, l, nil
}

func (s *Server) handleFilingEdit(c echo.Context) error {
	f, l, err := s.editableFiling(c)
	if err != nil {
		return err
	}
	form, err := parseFareForm(c)
	if err != nil {
		return err
	}
	op := c.FormValue("op")
	if rowOp(op, &form) {
		return s.renderFareForm(c, l, form, f)
	}
	lock, _ := strconv.ParseInt(c.FormValue("lock_version"), 10, 64)
	if err := s.Filings.Edit(c.Request().Context(), principal(c), f.ID, lock, form, op == "submit"); err != nil {
		if apperr.Code(err) == apperr.ECONFLICT && lock != f.LockVersion {
			return s.renderCrossedEdit(c, l, form, f)
		}
		return s.renderFareFormError(c, l, form, err, f)
	}
	return s.filedRedirect(c, f.ID, op == "submit")
}

// renderCrossedEdit answers an edit made on a form opened before someone
// else saved the filing: what was typed stays in the form, beside it what
// the other person saved, field by field, and the form now carries the
// current version, so saving again keeps what was typed on purpose (L21).
func (s *Server) renderCrossedEdit(c echo.Context, l *catalogue.Listing, typed fare.Form, current *workflow.Filing) error {
	v, err := s.fareFormView(c, l, typed, nil)
	if err != nil {
		return err
	}
	editFormView(&v, current)
	theirs := formOfFiling(current)
	for _, d := range fare.Differences(&theirs, &typed) {
		v.Crossed = append(v.Crossed, templates.CrossedField{Label: d.Label, Theirs: orDash(d.A), Yours: orDash(d.B)})
	}
	return render(c, http.StatusConflict, templates.FareForm(v))
}

func (s *Server) handleFilingSubmit(c echo.Context) error {
	return s.filingAction(c, workflow.Submit, "Submitted for review. Nothing changes in routing until a reviewer approves it.")
}

func (s *Server) handleFilingWithdraw(c echo.Context) error {
	return s.filingAction(c, workflow.Withdraw, "Filing withdrawn.")
}

// filingAction runs a button on the filing page; a refusal is shown on the
// filing page itself, with a link to the filing in flight when that is why.
func (s *Server) filingAction(c echo.Context, action workflow.Action, done string) error {
	f, err := s.filingInScope(c)
	if err != nil {
		return err
	}
	ctx, p := c.Request().Context(), principal(c)
	switch action {
	case workflow.Submit:
		err = s.Filings.Submit(ctx, p, f.ID)
	case workflow.Withdraw:
		err = s.Filings.Withdraw(ctx, p, f.ID)
	case "refresh":
		err = s.Filings.Refresh(ctx, p, f.ID)
	}
	if apperr.Code(err) == apperr.ECONFLICT {
		v, verr := s.filingView(c, f)
		if verr != nil {
			return verr
		}
		v.Conflict = apperr.Message(err)
		if ref := apperr.RefOf(err); ref != 0 && ref != f.ID {
			v.ConflictURL = fmt.Sprintf("/filings/%d", ref)
		}
		return render(c, http.StatusConflict, templates.Filing(v))
	}
	if err != nil {
		return err
	}
	if err := s.setFlash(c, "%s", done); err != nil {
		return err
	}
	return c.Redirect(http.StatusSeeOther, fmt.Sprintf("/filings/%d", f.ID))
}

func (s *Server) handleFilingPage(c echo.Context) error {
	f, err := s.filingInScope(c)
	if err != nil {
		return err
	}
	v, err := s.filingView(c, f)
	if err != nil {
		return err
	}
	return render(c, http.StatusOK, templates.Filing(v))
}

func (s *Server) filingView(c echo.Context, f *workflow.Filing) (templates.FilingView, error) {
	ctx, p := c.Request().Context(), principal(c)
	l, err := s.ListingReads.FindListingHeader(ctx, f.ListingID, workflow.Scope(p))
	if err != nil {
		return templates.FilingView{}, err
	}
	events, err := s.AccountReads.FindAuditEvents(ctx, audit.Filter{SubjectType: "filing", SubjectID: f.ID})
	if err != nil {
		return templates.FilingView{}, err
	}
	v := filingPageView(s.page(c, fmt.Sprintf("Filing #%d", f.ID), "listings"), p, f, l, events)
	ep := l.Endpoint
	if f.IsEndpoint() {
		ep = f.Endpoint
	}
	if ep != nil {
		run, latest, err := s.ListingReads.FindPreflightRuns(ctx, l.ID, ep.ID)
		if err != nil {
			return templates.FilingView{}, err
		}
		pv := preflightView(v.CSRF, l, ep, run, latest, false, s.Now())
		v.Preflight = &pv
	}
	if err := s.addReviewPanels(c, f, &v); err != nil {
		return templates.FilingView{}, err
	}
	if id, at, ok := sentBack(events, f.Fare); ok && f.State != workflow.ChangesRequested {
		returned, err := s.FilingReads.FindFiledFare(ctx, f.ListingID, id)
		if err != nil {
			return templates.FilingView{}, err
		}
		v.SinceSentBack = changeRows(fare.Diff(returned, f.Fare))
		v.SentBackAt = at.UTC().Format("2006-01-02 15:04") + " UTC"
	}
	if f.State == workflow.Submitted {
		durations, err := s.FilingReads.ReviewDurations(ctx, s.Now().Add(-workflow.ReviewWindow), 500)
		if err != nil {
			return templates.FilingView{}, err
		}
		waiting, err := s.FilingReads.CountAwaitingReview(ctx)
		if err != nil {
			return templates.FilingView{}, err
		}
		v.ExpectedWait = templates.ReviewWait(workflow.EstimateReview(durations, waiting))
	}
	return v, nil
}

// renderFareForm shows the fare form with what was typed: a new filing, or
// the edit of filing edit when it is not nil.
func (s *Server) renderFareForm(c echo.Context, l *catalogue.Listing, form fare.Form, edit *workflow.Filing) error {
	v, err := s.fareFormView(c, l, form, nil)
	if err != nil {
		return err
	}
	if edit != nil {
		editFormView(&v, edit)
	}
	return render(c, http.StatusOK, templates.FareForm(v))
}
