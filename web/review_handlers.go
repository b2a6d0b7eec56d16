package web

import (
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
	"github.com/airside/airside/internal/fare"
	"github.com/airside/airside/internal/preview"
	"github.com/airside/airside/internal/store"
	"github.com/airside/airside/internal/workflow"
	"github.com/airside/airside/templates"
)

// requireReviewer lets only reviewers and admins through.
func requireReviewer(next echo.HandlerFunc) echo.HandlerFunc {
	return func(c echo.Context) error {
		if p := principal(c); p == nil || !p.IsReviewer() {
			return apperr.Errorf(apperr.EFORBIDDEN, "This page is for reviewers.")
		}
		return next(c)
	}
}

var allKinds = []fare.Kind{fare.KindPrice, fare.KindFares, fare.KindCaps, fare.KindCapabilities, fare.KindPause}

func (s *Server) handleQueue(c echo.Context) error {
	ctx := c.Request().Context()
	carrierID, _ := strconv.ParseInt(c.QueryParam("carrier"), 10, 64)
	modelID, _ := strconv.ParseInt(c.QueryParam("model"), 10, 64)
	kind := fare.Kind(c.QueryParam("kind"))
	if !slices.Contains(allKinds, kind) {
		kind = "" // an unknown kind filters nothing
	}
	filings, err := s.Store.FindFilings(ctx, store.FilingFilter{States: []workflow.State{workflow.Submitted}, OldestFirst: true,
		CarrierID: carrierID, ModelID: modelID, Kind: kind})
	if err != nil {
		return err
	}
	carriers, err := s.Store.FindCarriers(ctx)
	if err != nil {
		return err
	}
	models, err := s.Store.FindModels(ctx)
	if err != nil {
		return err
	}
	v := templates.QueueView{Page: s.page(c, "Review queue", "review")}
	for _, cr := range carriers {
		v.Carriers = append(v.Carriers, templates.Option{Value: itoa64(cr.ID), Label: cr.Name, Selected: cr.ID == carrierID})
	}
	for _, m := range models {
		v.Models = append(v.Models, templates.Option{Value: itoa64(m.ID), Label: m.Name, Selected: m.ID == modelID})
	}
	for _, k := range allKinds {
		v.Kinds = append(v.Kinds, templates.Option{Value: string(k), Label: string(k), Selected: k == kind})
	}
	now := time.Now()
	for i := range filings {
		f := &filings[i]
		submitted := f.CreatedAt
		if f.SubmittedAt != nil {
			submitted = *f.SubmittedAt
		}
		v.Rows = append(v.Rows, templates.QueueRow{ID: f.ID, URL: fmt.Sprintf("/filings/%d", f.ID), Carrier: f.CarrierName,
			Model: f.Model.Name, Kinds: kindsLabel(f.Kinds), Author: f.AuthorEmail, Submitted: stamp(&submitted),
			Age: age(now.Sub(submitted)), Stale: f.StaleBase()})
	}
	return render(c, http.StatusOK, templates.Queue(v))
}

// age says how long something has waited, coarsely.
func age(d time.Duration) string {
	switch {
	case d < time.Hour:
		return fmt.Sprintf("%d min", int(d.Minutes()))
	case d < 48*time.Hour:
		return fmt.Sprintf("%d h", int(d.Hours()))
	}
	return fmt.Sprintf("%d d", int(d.Hours()/24))
}

// market loads a model's listings with their capability verifications.
func (s *Server) market(ctx context.Context, modelID int64) (preview.Market, error) {
	listings, err := s.Store.FindListings(ctx, catalogue.ListingFilter{ModelID: modelID})
	if err != nil {
		return preview.Market{}, err
	}
	ids := make([]int64, len(listings))
	for i, l := range listings {
		ids[i] = l.ID
	}
	checks, err := s.Store.FindCapabilityChecksFor(ctx, ids)
	if err != nil {
		return preview.Market{}, err
	}
	return preview.Market{Listings: listings, Checks: checks}, nil
}

// addReviewPanels fills the parts of the filing page about deciding it:
// the impact on routing, who may decide, the thread, a stale base.
func (s *Server) addReviewPanels(c echo.Context, f *workflow.Filing, v *templates.FilingView) error {
	ctx, p := c.Request().Context(), principal(c)
	if f.State == workflow.Submitted || f.State.Open() {
		m, err := s.market(ctx, f.Model.ID)
		if err != nil {
			return err
		}
		change := preview.Change{ListingID: f.ListingID, Fare: f.Fare}
		if f.IsPause() {
			change = preview.Change{ListingID: f.ListingID, Status: f.TargetStatus}
		}
		v.ImpactTitle = "Impact on routing"
		for _, imp := range preview.Impact(m, f.Model.Slug, change, time.Now().UTC()) {
			v.Impact = append(v.Impact, impactRow(imp))
		}
	}
	if f.State == workflow.Submitted && p.IsReviewer() {
		if err := workflow.Authorize(p, f, workflow.Approve); err != nil {
			v.DecideNote = apperr.Message(err)
		} else {
			v.CanDecide = true
		}
	}
	comments, err := s.Store.FindComments(ctx, f.ID)
	if err != nil {
		return err
	}
	for _, cm := range comments {
		v.Comments = append(v.Comments, templates.CommentRow{Author: cm.AuthorEmail, Staff: cm.AuthorStaff, At: stamp(&cm.At), Body: cm.Body})
	}
	v.CanComment = workflow.Authorize(p, f, workflow.Comment) == nil
	if f.StaleBase() && (f.State.Open() || f.State == workflow.Submitted) {
		v.Stale = store.StaleBaseMessage
		v.CanRefresh = f.State.Open() && workflow.Authorize(p, f, workflow.Save) == nil
	}
	return nil
}

func standingText(st preview.Standing) (rank, score string) {
	switch {
	case !st.OnBallot:
		return "not listed", "—"
	case !st.Eligible:
		return "excluded", strings.Join(st.Excluded, ", ")
	}
	return fmt.Sprintf("%d of %d", st.Rank, st.Of), fmt.Sprintf("%.4f", st.Score)
}

func impactRow(imp preview.ScenarioImpact) templates.ImpactRow {
	row := templates.ImpactRow{Scenario: imp.Scenario.Name, Winner: orDash(imp.After.Winner)}
	row.BeforeRank, row.BeforeScore = standingText(imp.Before)
	row.AfterRank, row.AfterScore = standingText(imp.After)
	b, a := imp.Before, imp.After
	switch {
	case a.Eligible && (!b.Eligible || a.Rank < b.Rank):
		row.Class = "better"
	case b.Eligible && (!a.Eligible || a.Rank > b.Rank):
		row.Class = "worse"
	}
	return row
}

func (s *Server) handleApprove(c echo.Context) error {
	return s.decide(c, workflow.Approve, c.FormValue("note"))
}

func (s *Server) handleDecline(c echo.Context) error {
	action := workflow.Action(c.FormValue("action"))
	if action != workflow.Reject && action != workflow.RequestChanges {
		return apperr.Errorf(apperr.EINVALID, "Choose reject or ask for changes.")
	}
	return s.decide(c, action, c.FormValue("note"))
}

var decided = map[workflow.State]string{
	workflow.Published:        "Approved and published to routing.",
	workflow.Scheduled:        "Approved; it will be published on its effective date.",
	workflow.Rejected:         "Rejected; the carrier has been told why.",
	workflow.ChangesRequested: "Sent back to the carrier for changes.",
}

// decide runs a reviewer's decision. A refusal (already decided, stale base,
// missing reason) is shown on the filing page with what was typed.
func (s *Server) decide(c echo.Context, action workflow.Action, note string) error {
	f, err := s.filingInScope(c)
	if err != nil {
		return err
	}
	next, err := s.Filings.Decide(c.Request().Context(), principal(c), f.ID, action, note)
	switch apperr.Code(err) {
	case "":
		if err := s.setFlash(c, "%s", decided[next]); err != nil {
			return err
		}
		return c.Redirect(http.StatusSeeOther, fmt.Sprintf("/filings/%d", f.ID))
	case apperr.EINVALID, apperr.ECONFLICT:
		f, ferr := s.filingInScope(c) // reload: the state may have moved
		if ferr != nil {
			return ferr
		}
		v, verr := s.filingView(c, f)
		if verr != nil {
			return verr
		}
		v.Note = note
		if msg := apperr.FieldErrors(err)["note"]; msg != "" && v.CanDecide {
			v.NoteError = msg
		} else if msg != "" {
			v.Conflict = msg
		} else {
			v.Conflict = apperr.Message(err)
		}
		return render(c, statusOf(err), templates.Filing(v))
	}
	return err
}

func (s *Server) handleComment(c echo.Context) error {
	f, err := s.filingInScope(c)
	if err != nil {
		return err
	}
	body := c.FormValue("body")
	err = s.Filings.Comment(c.Request().Context(), principal(c), f.ID, body)
	if apperr.Code(err) == apperr.EINVALID {
		v, verr := s.filingView(c, f)
		if verr != nil {
			return verr
		}
		v.Conflict = apperr.FieldErrors(err)["body"]
		return render(c, http.StatusUnprocessableEntity, templates.Filing(v))
	}
	if err != nil {
		return err
	}
	return c.Redirect(http.StatusSeeOther, fmt.Sprintf("/filings/%d#comments", f.ID))
}

func (s *Server) handleRefresh(c echo.Context) error {
	return s.filingAction(c, "refresh", "Refreshed against the published fare. Check the change summary, then submit it again.")
}

func (s *Server) handleInbox(c echo.Context) error {
	ctx, p := c.Request().Context(), principal(c)
	notes, err := s.Store.FindNotifications(ctx, p.User.ID, 200)
	if err != nil {
		return err
	}
	if err := s.Store.MarkNotificationsRead(ctx, p.User.ID); err != nil {
		return err
	}
	v := templates.InboxView{Page: s.page(c, "Inbox", "inbox")}
	for _, n := range notes {
		row := templates.InboxRow{Message: n.Message, At: stamp(&n.At), Unread: !n.Read}
		if n.FilingID != nil {
			row.URL = fmt.Sprintf("/filings/%d", *n.FilingID)
		}
		v.Rows = append(v.Rows, row)
	}
	return render(c, http.StatusOK, templates.Inbox(v))
}

func (s *Server) handleVerifyCapability(c echo.Context) error {
	id, err := pathID(c, "id")
	if err != nil {
		return err
	}
	capability, state := c.FormValue("capability"), c.FormValue("state")
	if err := s.Filings.VerifyCapability(c.Request().Context(), principal(c), id, capability, state, c.FormValue("note")); err != nil {
		if apperr.Code(err) != apperr.EINVALID {
			return err
		}
		if ferr := s.setFlash(c, "%s", strings.Join(mapValues(apperr.FieldErrors(err)), " ")); ferr != nil {
			return ferr
		}
		return c.Redirect(http.StatusSeeOther, fmt.Sprintf("/listings/%d", id))
	}
	if err := s.setFlash(c, "Capability %s marked %s.", capability, state); err != nil {
		return err
	}
	return c.Redirect(http.StatusSeeOther, fmt.Sprintf("/listings/%d", id))
}

// verifyRows lists the capabilities declared in a listing's published fare or
// its filing in flight, with their verification state.
func verifyRows(l *catalogue.Listing, inFlight *workflow.Filing, checks map[string]string) []templates.VerifyRow {
	seen := map[string]bool{}
	var rows []templates.VerifyRow
	for _, f := range []*fare.Fare{l.Published, filingFare(inFlight)} {
		if f == nil {
			continue
		}
		for _, flag := range f.Capabilities {
			name := flag.String()
			if seen[name] {
				continue
			}
			seen[name] = true
			state := checks[name]
			if state == "" {
				state = "not verified yet"
			}
			rows = append(rows, templates.VerifyRow{Capability: name, Label: strings.ReplaceAll(name, "_", " "), State: state})
		}
	}
	return rows
}

func filingFare(f *workflow.Filing) *fare.Fare {
	if f == nil {
		return nil
	}
	return f.Fare
}

// canVerify: reviewers from outside the carrier verify its capabilities.
func canVerify(p *account.Principal, carrierID int64) bool {
	return p.IsReviewer() && p.RoleIn(carrierID) == ""
}

// runScheduler publishes due filings every interval until ctx ends.
func (s *Server) runScheduler(ctx context.Context, every time.Duration) {
	t := time.NewTicker(every)
	defer t.Stop()
	for {
		n, err := s.Store.PublishDue(ctx)
		switch {
		case err != nil && ctx.Err() == nil:
			s.Log.Error("scheduler: publish due filings", "err", err)
		case n > 0:
			s.Log.Info("scheduler: published due filings", "count", n)
		}
		select {
		case <-ctx.Done():
			return
		case <-t.C:
		}
	}
}
