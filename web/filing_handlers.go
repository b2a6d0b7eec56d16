package web

import (
	"fmt"
	"math"
	"net/http"
	"strconv"
	"strings"
	"time"

	"github.com/labstack/echo/v4"

	"github.com/airside/airside/internal/account"
	"github.com/airside/airside/internal/apperr"
	"github.com/airside/airside/internal/catalogue"
	"github.com/airside/airside/internal/election"
	"github.com/airside/airside/internal/fare"
	"github.com/airside/airside/internal/money"
	"github.com/airside/airside/internal/store"
	"github.com/airside/airside/internal/workflow"
	"github.com/airside/airside/templates"
)

// parseFareForm reads the filing form as typed.
func parseFareForm(c echo.Context) (fare.Form, error) {
	r := c.Request()
	if err := r.ParseForm(); err != nil {
		return fare.Form{}, apperr.Errorf(apperr.EINVALID, "The form could not be read.")
	}
	v := r.PostForm
	f := fare.Form{
		Input: v.Get("input"), Output: v.Get("output"), CachedInput: v.Get("cached_input"),
		CacheRead: v.Get("cache_read"), CacheWrite: v.Get("cache_write"),
		LandingFee: v.Get("landing_fee"), Discount: v.Get("discount"),
		MaxRPM: v.Get("max_rpm"), MaxRPD: v.Get("max_rpd"), CapScope: v.Get("cap_scope"),
		Capabilities: v["capability"], OffPeakDays: v["off_peak_day"],
		UTCOffsetMinutes: v.Get("utc_offset"), TODEffectiveAt: v.Get("tod_effective_at"),
		Peak:          fare.PricesForm{Input: v.Get("peak_input"), Output: v.Get("peak_output"), CachedInput: v.Get("peak_cached_input")},
		OffPeak:       fare.PricesForm{Input: v.Get("off_peak_input"), Output: v.Get("off_peak_output"), CachedInput: v.Get("off_peak_cached_input")},
		Justification: v.Get("justification"), EffectiveAt: v.Get("effective_at"),
	}
	at := func(name string, i int) string {
		if vals := v[name]; i < len(vals) {
			return vals[i]
		}
		return ""
	}
	for i := range max(len(v["tier_above"]), len(v["tier_input"]), len(v["tier_output"]), len(v["tier_cached_input"])) {
		f.Tiers = append(f.Tiers, fare.TierForm{Above: at("tier_above", i), Input: at("tier_input", i), Output: at("tier_output", i), CachedInput: at("tier_cached_input", i)})
	}
	for i := range max(len(v["peak_start"]), len(v["peak_end"])) {
		f.PeakWindows = append(f.PeakWindows, fare.WindowForm{Start: at("peak_start", i), End: at("peak_end", i)})
	}
	return f, nil
}

// effectiveOf computes what the typed prices route at, as far as they parse.
func effectiveOf(form fare.Form) templates.Effective {
	lf, err1 := money.ParsePercent(form.LandingFee)
	d, err2 := money.ParsePercent(form.Discount)
	if strings.TrimSpace(form.LandingFee) == "" {
		lf, err1 = fare.BaselineLandingFee, nil
	}
	if strings.TrimSpace(form.Discount) == "" {
		d, err2 = 0, nil
	}
	out := templates.Effective{Input: "—", Output: "—", CachedInput: "—", KeptCents: "—"}
	if err1 != nil || err2 != nil || lf < fare.MinLandingFee || lf > fare.MaxLandingFee || d > fare.MaxDiscount {
		return out
	}
	f := &fare.Fare{LandingFee: lf, Discount: d}
	out.KeptCents = f.KeptPerDollar().Percent()
	for _, p := range []struct {
		typed string
		dst   *string
	}{{form.Input, &out.Input}, {form.Output, &out.Output}, {form.CachedInput, &out.CachedInput}} {
		if m, err := money.ParsePrice(strings.TrimPrefix(strings.TrimSpace(p.typed), "$")); err == nil && strings.TrimSpace(p.typed) != "" {
			*p.dst = dollars(f.Effective(m))
		}
	}
	return out
}

var weekdays = []string{"Sun", "Mon", "Tue", "Wed", "Thu", "Fri", "Sat"}

func (s *Server) fareFormView(c echo.Context, l *catalogue.Listing, form fare.Form, errs fare.FieldErrors) (templates.FareFormView, error) {
	checks, err := s.Store.FindCapabilityChecks(c.Request().Context(), l.ID)
	if err != nil {
		return templates.FareFormView{}, err
	}
	v := templates.FareFormView{
		Page:    s.page(c, "File a fare · "+l.Model.Name, "listings"),
		Listing: listingHeader(l), Form: form, Errors: errs, Effective: effectiveOf(form),
		Heading: "File a fare for " + l.Model.Name, Action: fmt.Sprintf("/listings/%d/file", l.ID),
	}
	for _, flag := range election.AllCapabilities() {
		name := flag.String()
		state := checks[name]
		if state == "" {
			state = "not verified yet"
		}
		v.Capabilities = append(v.Capabilities, templates.CapabilityOption{Name: name, Label: strings.ReplaceAll(name, "_", " "),
			Checked: contains(form.Capabilities, name), Verification: state})
	}
	for i, d := range weekdays {
		value := strconv.Itoa(i)
		v.Days = append(v.Days, templates.DayOption{Value: value, Label: d, Checked: contains(form.OffPeakDays, value)})
	}
	if v.Preview, err = s.panelFor(c, l, form, "fare-form"); err != nil {
		return templates.FareFormView{}, err
	}
	return v, nil
}

func contains(list []string, s string) bool {
	for _, x := range list {
		if x == s {
			return true
		}
	}
	return false
}

func listingHeader(l *catalogue.Listing) templates.ListingHeader {
	return templates.ListingHeader{ID: l.ID, URL: fmt.Sprintf("/listings/%d", l.ID), Model: l.Model.Name, Carrier: l.CarrierName,
		Status: l.Status.Label(), Class: string(l.Status)}
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

// rowOp handles the form's "add a row" buttons (for browsers without
// JavaScript): the same form again with one more empty row, nothing saved.
func rowOp(op string, form *fare.Form) bool {
	switch op {
	case "preview": // the no-JavaScript Preview button: show the form with its preview
	case "add_tier":
		form.Tiers = append(form.Tiers, fare.TierForm{})
	case "add_window":
		form.PeakWindows = append(form.PeakWindows, fare.WindowForm{})
	default:
		return false
	}
	return true
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
		v, err := s.fareFormView(c, l, form, nil)
		if err != nil {
			return err
		}
		return render(c, http.StatusOK, templates.FareForm(v))
	}
	id, err := s.Filings.File(c.Request().Context(), principal(c), l.ID, form, op == "submit")
	if err != nil {
		return s.renderFareFormError(c, l, form, err, nil)
	}
	return s.filedRedirect(c, id, op == "submit")
}

// renderFareFormError shows the form again with what was typed: field
// messages (422) or the filing in flight that blocked a submit (409).
func (s *Server) renderFareFormError(c echo.Context, l *catalogue.Listing, form fare.Form, err error, edit *workflow.Filing) error {
	switch apperr.Code(err) {
	case apperr.EINVALID, apperr.ECONFLICT:
	default:
		return err
	}
	v, verr := s.fareFormView(c, l, form, apperr.FieldErrors(err))
	if verr != nil {
		return verr
	}
	if edit != nil {
		editFormView(&v, edit)
	}
	if apperr.Code(err) == apperr.ECONFLICT {
		v.Conflict = apperr.Message(err)
		if ref := apperr.RefOf(err); ref != 0 {
			v.ConflictURL = fmt.Sprintf("/filings/%d", ref)
		}
	}
	return render(c, statusOf(err), templates.FareForm(v))
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
	return s.Store.FindFiling(c.Request().Context(), id, workflow.Scope(principal(c)))
}

func editFormView(v *templates.FareFormView, f *workflow.Filing) {
	v.Heading = fmt.Sprintf("Edit filing #%d", f.ID)
	v.Action = fmt.Sprintf("/filings/%d/edit", f.ID)
	v.LockVersion = f.LockVersion
}

func formOfFiling(f *workflow.Filing) fare.Form {
	form := fare.FormOf(f.Fare)
	form.Justification = f.Justification
	if f.EffectiveAt != nil {
		form.EffectiveAt = f.EffectiveAt.UTC().Format(fare.TimeLayout)
	}
	return form
}

func (s *Server) handleFilingEditForm(c echo.Context) error {
	f, l, err := s.editableFiling(c)
	if err != nil {
		return err
	}
	v, err := s.fareFormView(c, l, formOfFiling(f), nil)
	if err != nil {
		return err
	}
	editFormView(&v, f)
	return render(c, http.StatusOK, templates.FareForm(v))
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
	if !f.State.Open() || f.Fare == nil {
		return nil, nil, apperr.Errorf(apperr.ECONFLICT, "A filing that is %s cannot be edited.", f.State.Label())
	}
	l, err := s.Store.FindListingHeader(c.Request().Context(), f.ListingID, workflow.Scope(p))
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
		v, err := s.fareFormView(c, l, form, nil)
		if err != nil {
			return err
		}
		editFormView(&v, f)
		return render(c, http.StatusOK, templates.FareForm(v))
	}
	lock, _ := strconv.ParseInt(c.FormValue("lock_version"), 10, 64)
	if err := s.Filings.Edit(c.Request().Context(), principal(c), f.ID, lock, form, op == "submit"); err != nil {
		return s.renderFareFormError(c, l, form, err, f)
	}
	return s.filedRedirect(c, f.ID, op == "submit")
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
	l, err := s.Store.FindListingHeader(ctx, f.ListingID, workflow.Scope(p))
	if err != nil {
		return templates.FilingView{}, err
	}
	events, err := s.Store.FindAuditEvents(ctx, store.AuditFilter{SubjectType: "filing", SubjectID: f.ID})
	if err != nil {
		return templates.FilingView{}, err
	}
	v := templates.FilingView{
		Page: s.page(c, fmt.Sprintf("Filing #%d", f.ID), "listings"), ID: f.ID, Listing: listingHeader(l),
		State: f.State.Label(), StateClass: string(f.State), Kinds: kindsLabel(f.Kinds), Author: f.AuthorEmail,
		Created: stamp(&f.CreatedAt), Submitted: stamp(f.SubmittedAt), EffectiveAt: stamp(f.EffectiveAt),
		Justification: f.Justification, DecisionNote: f.DecisionNote, Changes: changeRows(f.Changes()),
		EditURL: fmt.Sprintf("/filings/%d/edit", f.ID),
	}
	if f.IsPause() {
		v.Proposed = []templates.KV{{Label: "Status", Value: f.TargetStatus.Label()}}
	} else {
		v.Proposed = fareKVs(f.Fare)
	}
	if l.Published != nil {
		v.Published = fareKVs(l.Published)
	}
	for _, e := range events {
		v.History = append(v.History, templates.HistoryRow{At: e.At.UTC().Format(time.DateTime), Who: orDash(e.ActorEmail), What: historyText(e)})
	}
	if err := s.addReviewPanels(c, f, &v); err != nil {
		return templates.FilingView{}, err
	}
	canCarrier := workflow.Authorize(p, f, workflow.Save) == nil
	v.CanEdit = canCarrier && f.State.Open() && !f.IsPause()
	v.CanSubmit = canCarrier && f.State.Open()
	v.CanWithdraw = workflow.Authorize(p, f, workflow.Withdraw) == nil && slicesContains(workflow.From(workflow.Withdraw), f.State)
	return v, nil
}

func slicesContains(states []workflow.State, s workflow.State) bool {
	for _, x := range states {
		if x == s {
			return true
		}
	}
	return false
}

var historyWords = map[string]string{
	"filing.create": "created the draft", "filing.edit": "edited the filing", "filing.submit": "submitted it for review",
	"filing.withdraw": "withdrew it", "filing.approve": "approved it", "filing.reject": "rejected it",
	"filing.request_changes": "asked for changes", "filing.publish": "published it to routing", "filing.comment": "commented",
	"filing.schedule": "approved it for its effective date",
}

func historyText(e store.AuditEvent) string {
	if w, ok := historyWords[e.Action]; ok {
		return w
	}
	return e.Action
}

func kindsLabel(kinds []fare.Kind) string {
	parts := make([]string, len(kinds))
	for i, k := range kinds {
		parts[i] = string(k)
	}
	if len(parts) == 0 {
		return "no change"
	}
	return strings.Join(parts, ", ")
}

func stamp(t *time.Time) string {
	if t == nil {
		return ""
	}
	return t.UTC().Format("2006-01-02 15:04") + " UTC"
}

func changeRows(changes []fare.Change) []templates.ChangeRow {
	rows := make([]templates.ChangeRow, len(changes))
	for i, ch := range changes {
		row := templates.ChangeRow{Label: ch.Label, Old: ch.Old, New: ch.New}
		if ch.Percent != nil {
			row.Percent = fmt.Sprintf("%+.1f %%", *ch.Percent)
			if math.Abs(*ch.Percent) < 0.05 {
				row.Percent = fmt.Sprintf("%+.2f %%", *ch.Percent)
			}
		}
		switch ch.Direction {
		case 1:
			row.Class = "up"
		case -1:
			row.Class = "down"
		}
		rows[i] = row
	}
	return rows
}

// fareKVs lists a fare's fields for a side-by-side view.
func fareKVs(f *fare.Fare) []templates.KV {
	if f == nil {
		return nil
	}
	l := &catalogue.Listing{Published: f}
	v := listingView(templates.Page{}, l)
	kvs := append([]templates.KV{}, v.Fare...)
	if len(v.Tiers) > 0 {
		var parts []string
		for _, t := range v.Tiers {
			parts = append(parts, fmt.Sprintf("above %s: %s / %s / %s", t[0], t[1], t[2], t[3]))
		}
		kvs = append(kvs, templates.KV{Label: "Context tiers", Value: strings.Join(parts, "; ")})
	}
	kvs = append(kvs, v.Schedule...)
	kvs = append(kvs, v.Caps...)
	caps := "none"
	if len(v.Caps2) > 0 {
		caps = strings.Join(v.Caps2, ", ")
	}
	return append(kvs, templates.KV{Label: "Capabilities", Value: caps})
}

func (s *Server) handlePause(c echo.Context) error  { return s.setPaused(c, true) }
func (s *Server) handleResume(c echo.Context) error { return s.setPaused(c, false) }

func (s *Server) setPaused(c echo.Context, pause bool) error {
	id, err := pathID(c, "id")
	if err != nil {
		return err
	}
	filingID, err := s.Filings.SetPaused(c.Request().Context(), principal(c), id, pause, strings.TrimSpace(c.FormValue("justification")))
	if apperr.Code(err) == apperr.ECONFLICT {
		if ferr := s.setFlash(c, "%s", apperr.Message(err)); ferr != nil {
			return ferr
		}
		return c.Redirect(http.StatusSeeOther, fmt.Sprintf("/listings/%d", id))
	}
	if err != nil {
		return err
	}
	what := "pause"
	if !pause {
		what = "resume"
	}
	if err := s.setFlash(c, "The %s was filed for review; the listing changes once a reviewer approves it.", what); err != nil {
		return err
	}
	return c.Redirect(http.StatusSeeOther, fmt.Sprintf("/filings/%d", filingID))
}

func (s *Server) handleAddListing(c echo.Context) error {
	carrierText, modelText, _ := strings.Cut(c.FormValue("model"), ":")
	carrierID, err1 := strconv.ParseInt(carrierText, 10, 64)
	modelID, err2 := strconv.ParseInt(modelText, 10, 64)
	if err1 != nil || err2 != nil {
		return apperr.Errorf(apperr.EINVALID, "Choose a model to list.")
	}
	p := principal(c)
	if p.RoleIn(carrierID) == "" {
		return apperr.Errorf(apperr.ENOTFOUND, "Carrier not found.")
	}
	id, err := s.Filings.AddListing(c.Request().Context(), p, carrierID, modelID)
	if apperr.Code(err) == apperr.EINVALID {
		if ferr := s.setFlash(c, "%s", strings.Join(mapValues(apperr.FieldErrors(err)), " ")); ferr != nil {
			return ferr
		}
		return c.Redirect(http.StatusSeeOther, "/listings")
	}
	if err != nil {
		return err
	}
	if err := s.setFlash(c, "Listing added as a draft. File its first fare to bring it into service."); err != nil {
		return err
	}
	return c.Redirect(http.StatusSeeOther, fmt.Sprintf("/listings/%d", id))
}

func mapValues(m map[string]string) []string {
	var out []string
	for _, v := range m {
		out = append(out, v)
	}
	return out
}

// filingRow is a filing in a list.
func filingRow(f *workflow.Filing) templates.FilingRow {
	row := templates.FilingRow{ID: f.ID, URL: fmt.Sprintf("/filings/%d", f.ID), Model: f.Model.Name, Carrier: f.CarrierName,
		Kinds: kindsLabel(f.Kinds), State: f.State.Label(), Class: string(f.State), Author: f.AuthorEmail,
		Created: stamp(&f.CreatedAt), Decided: stamp(f.DecidedAt)}
	return row
}

// addableModels lists, for each carrier p administers, the models it does
// not list yet.
func (s *Server) addableModels(c echo.Context, p *account.Principal, listings []catalogue.Listing) ([]templates.ModelOption, error) {
	var admin []account.Membership
	for _, m := range p.Memberships {
		if m.Role == account.CarrierAdmin {
			admin = append(admin, m)
		}
	}
	if len(admin) == 0 {
		return nil, nil
	}
	models, err := s.Store.FindModels(c.Request().Context())
	if err != nil {
		return nil, err
	}
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
	return out, nil
}
