package web

import (
	"fmt"
	"net/http"
	"slices"
	"strconv"
	"strings"
	"time"

	"github.com/labstack/echo/v4"

	"github.com/airside/airside/internal/apperr"
	"github.com/airside/airside/internal/election"
	"github.com/airside/airside/internal/fare"
	"github.com/airside/airside/internal/projection"
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
	filings, err := s.FilingReads.FindFilings(ctx, workflow.FilingFilter{States: []workflow.State{workflow.Submitted}, OldestFirst: true,
		CarrierID: carrierID, ModelID: modelID, Kind: kind})
	if err != nil {
		return err
	}
	carriers, err := s.AccountReads.FindCarriers(ctx)
	if err != nil {
		return err
	}
	models, err := s.ListingReads.FindModels(ctx)
	if err != nil {
		return err
	}
	v := templates.QueueView{Page: s.page(c, "Review queue", "review")}
	changes, err := s.StorefrontReads.PendingProfileChanges(c.Request().Context())
	if err != nil {
		return err
	}
	p := principal(c)
	v.ProfileChanges = profileChangeRows(changes, func(carrierID, authorID int64) bool {
		return !workflow.CanFileFor(p, carrierID) && authorID != p.User.ID
	})
	for _, cr := range carriers {
		v.Carriers = append(v.Carriers, templates.Option{Value: itoa64(cr.ID), Label: cr.Name, Selected: cr.ID == carrierID})
	}
	for _, m := range models {
		v.Models = append(v.Models, templates.Option{Value: itoa64(m.ID), Label: m.Name, Selected: m.ID == modelID})
	}
	for _, k := range allKinds {
		v.Kinds = append(v.Kinds, templates.Option{Value: string(k), Label: string(k), Selected: k == kind})
	}
	now := s.Now()
	for i := range filings {
		f := &filings[i]
		submitted := f.CreatedAt
		if f.SubmittedAt != nil {
			submitted = *f.SubmittedAt
		}
		v.Rows = append(v.Rows, templates.QueueRow{ID: f.ID, URL: fmt.Sprintf("/filings/%d", f.ID), Carrier: f.CarrierName,
			Model: f.Model.Name, Kinds: kindsLabel(f.Kinds), Author: f.AuthorEmail, Submitted: stamp(&submitted),
			Age: age(now.Sub(submitted)), Stale: f.StaleBase(), Quarantine: s.Filings.Quarantined(f)})
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

// addReviewPanels fills the parts of the filing page read beside the
// filing: the impact on routing and the thread.
func (s *Server) addReviewPanels(c echo.Context, f *workflow.Filing, v *templates.FilingView) error {
	ctx := c.Request().Context()
	// firstOfTwo: approving now records the first of a quarantined
	// filing's two approvals, and publishes nothing.
	firstOfTwo := false
	if f.State == workflow.Submitted && s.Filings.Quarantined(f) {
		approvers, err := s.FilingReads.ApproverEmails(ctx, f.ID, f.LockVersion)
		if err != nil {
			return err
		}
		firstOfTwo = len(approvers) == 0
		v.Quarantine = "Quarantine: this filing moves a price threefold or more, so two different reviewers must approve it."
		if len(approvers) > 0 {
			v.Quarantine += " Approved so far by " + strings.Join(approvers, ", ") + "; one more approval publishes it."
		}
		if slices.Contains(approvers, principal(c).User.Email) {
			// Their approval is recorded: a second from them would be
			// refused, so the page does not offer it.
			v.ApprovedByYou = true
		}
	}
	if f.Fare != nil && f.State != workflow.Published {
		if earliest, raises := s.Filings.EarliestEffective(f.Base, f.Fare); raises {
			if f.SubmittedAt != nil { // the notice runs from the submission
				earliest = f.SubmittedAt.Add(s.Filings.NoticePeriod())
			}
			v.Notice = "This filing raises a price or cuts the discount: it may take effect no earlier than " +
				earliest.UTC().Format("2006-01-02 15:04") + " UTC (developers get notice of increases; decreases apply at once)."
		}
	}
	if f.State == workflow.Submitted || f.State.Open() {
		change := projection.Change{ListingID: f.ListingID, Fare: f.Fare}
		if f.IsPause() {
			change = projection.Change{ListingID: f.ListingID, Status: f.TargetStatus}
		}
		now := s.Now().UTC()
		// A fare with a time-of-day block ranks differently at peak and
		// off-peak: show both, whatever the hour of review.
		blocks := blockTimes(f, now)
		at := []time.Time{now}
		for _, b := range blocks {
			at = append(at, b.at)
		}
		impact, err := s.Projector.ImpactOf(ctx, f.Model.ID, f.Model.Slug, change, at...)
		if err != nil {
			return err
		}
		v.ImpactTitle = "Impact on routing, now (" + now.Format("Mon 15:04") + " UTC)"
		for _, imp := range impact.Sets[0] {
			v.Impact = append(v.Impact, impactRows(imp, impact.Names)...)
		}
		for i, b := range blocks {
			set := templates.ImpactSet{Title: b.label + " (" + b.at.Format("Mon 15:04") + " UTC)"}
			for _, imp := range impact.Sets[i+1] {
				set.Rows = append(set.Rows, impactRows(imp, impact.Names)...)
			}
			v.ImpactSets = append(v.ImpactSets, set)
		}
		if rev, err := s.HealthReads.CatalogueRevision(ctx); err == nil {
			v.PublishNote = fmt.Sprintf("publishes to routing now: catalogue revision %d -> %d", rev, rev+1)
			if f.EffectiveAt != nil && f.EffectiveAt.After(now) {
				v.PublishNote = "schedules it for " + stamp(f.EffectiveAt) + "; routing changes then"
			}
		}
		if firstOfTwo {
			v.PublishNote = "records the first of two approvals: nothing reaches routing until another reviewer approves"
		}
	}
	comments, err := s.FilingReads.FindComments(ctx, f.ID)
	if err != nil {
		return err
	}
	for _, cm := range comments {
		v.Comments = append(v.Comments, templates.CommentRow{Author: cm.AuthorEmail, Staff: cm.AuthorStaff, At: stamp(&cm.At), Body: cm.Body})
	}
	return nil
}

func standingText(st projection.Standing) (rank, score string) {
	switch {
	case !st.OnBallot:
		return "not listed", "—"
	case !st.Eligible:
		return "excluded", strings.Join(st.Excluded, ", ")
	}
	return fmt.Sprintf("%d of %d", st.Rank, st.Of), templates.Score(st.Score)
}

// shareText is a share-policy standing as the impact panel shows it.
func shareText(st projection.ShareStanding) string {
	if !st.OnBallot {
		return "—"
	}
	return templates.Share(st.Outcome.Share)
}

// impactRows are a scenario's row of the impact panel and, under it, a row
// for each part of its requests that carried a set of preferences and for
// each part from projects routing learned rates of apart (named as the
// preview and "wins now" name them; the share policy applies to neither).
func impactRows(imp projection.ScenarioImpact, names map[string]string) []templates.ImpactRow {
	row := impactRow(imp.Scenario.Name, imp.Before, imp.After, names)
	row.ShareBefore, row.ShareAfter = shareText(imp.ShareBefore), shareText(imp.ShareAfter)
	rows := []templates.ImpactRow{row}
	for _, set := range imp.Sets {
		r := impactRow(setPartName(imp.Scenario.Name, set.Part, set.Set), set.Before, set.After, names)
		r.ShareBefore, r.ShareAfter = "—", "—"
		rows = append(rows, r)
	}
	for _, p := range imp.Projects {
		r := impactRow(projectsPartName(imp.Scenario.Name, p.Part), p.Before, p.After, names)
		r.ShareBefore, r.ShareAfter = "—", "—"
		rows = append(rows, r)
	}
	return rows
}

// impactRow is the listing's standing on one ballot before and after.
func impactRow(scenario string, b, a projection.Standing, names map[string]string) templates.ImpactRow {
	name := func(id string) string {
		if n, ok := names[id]; ok {
			return n
		}
		return orDash(id)
	}
	row := templates.ImpactRow{Scenario: scenario, WinnerBefore: name(b.Winner), Winner: name(a.Winner)}
	row.BeforeRank, row.BeforeScore = standingText(b)
	row.AfterRank, row.AfterScore = standingText(a)
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

// decide runs a reviewer's decision. A refusal (already decided, stale base,
// missing reason) is shown on the filing page with what was typed.
func (s *Server) decide(c echo.Context, action workflow.Action, note string) error {
	f, err := s.filingInScope(c)
	if err != nil {
		return err
	}
	seen, _ := strconv.ParseInt(c.FormValue("seen_version"), 10, 64)
	next, err := s.Filings.Decide(c.Request().Context(), principal(c), f.ID, action, note, seen)
	switch apperr.Code(err) {
	case "":
		if err := s.setFlash(c, "%s", workflow.Outcome(next)); err != nil {
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
		if ref := apperr.RefOf(err); ref != 0 {
			v.ConflictURL = fmt.Sprintf("/filings/%d", ref)
		}
		return render(c, statusOf(err), templates.Filing(v))
	}
	return err
}

// handleBackToFiling answers a GET of a filing action's URL (a reloaded
// refusal) with the filing itself.
func (s *Server) handleBackToFiling(c echo.Context) error {
	f, err := s.filingInScope(c)
	if err != nil {
		return err
	}
	return c.Redirect(http.StatusSeeOther, fmt.Sprintf("/filings/%d", f.ID))
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

type blockTime struct {
	label string
	at    time.Time
}

// blockTimes finds, within the next week, the first hour at peak and the
// first off-peak under the filing's fare (or the published one).
func blockTimes(f *workflow.Filing, now time.Time) []blockTime {
	fr := f.Fare
	if fr == nil || fr.TimeBased == nil {
		fr = f.Base
	}
	if fr == nil || fr.TimeBased == nil {
		return nil
	}
	ef := fr.ForElection()
	var out []blockTime
	seen := map[election.Block]bool{}
	start := now.Truncate(time.Hour).Add(time.Hour)
	for h := range 7 * 24 {
		at := start.Add(time.Duration(h) * time.Hour)
		b := election.BlockAt(&ef, at)
		if seen[b] || b == election.BlockBase {
			continue
		}
		seen[b] = true
		label := "At peak"
		if b == election.BlockOffPeak {
			label = "Off-peak"
		}
		out = append(out, blockTime{label: label, at: at})
	}
	return out
}
