package web

import (
	"fmt"
	"strconv"
	"strings"

	"github.com/labstack/echo/v4"

	"github.com/airside/airside/internal/apperr"
	"github.com/airside/airside/internal/catalogue"
	"github.com/airside/airside/internal/election"
	"github.com/airside/airside/internal/fare"
	"github.com/airside/airside/internal/money"
	"github.com/airside/airside/internal/preflight"
	"github.com/airside/airside/internal/workflow"
	"github.com/airside/airside/templates"
)

// parseFareForm reads the filing form as typed (its names come from the
// fare table, fare.Fields).
func parseFareForm(c echo.Context) (fare.Form, error) {
	r := c.Request()
	if err := r.ParseForm(); err != nil {
		return fare.Form{}, apperr.Errorf(apperr.EINVALID, "The form could not be read.")
	}
	return fare.FormOfValues(r.PostForm), nil
}

// effectiveOf computes what the typed prices route at, as far as they parse.
func effectiveOf(form fare.Form) templates.Effective {
	out := templates.Effective{Input: "—", Output: "—", CachedInput: "—", KeptCents: "—"}
	lf, d, ok := form.Levers()
	if !ok {
		return out
	}
	f := &fare.Fare{LandingFee: lf, Discount: d}
	out.KeptCents = f.KeptPerDollar().Percent()
	for _, p := range []struct {
		typed string
		dst   *string
	}{{form.Input, &out.Input}, {form.Output, &out.Output}, {form.CachedInput, &out.CachedInput}} {
		if m, err := money.ParsePrice(strings.TrimPrefix(strings.TrimSpace(p.typed), "$")); err == nil && strings.TrimSpace(p.typed) != "" {
			*p.dst = templates.RoutesAt(f.Effective(m))
		}
	}
	return out
}

var weekdays = []string{"Sun", "Mon", "Tue", "Wed", "Thu", "Fri", "Sat"}

func (s *Server) fareFormView(c echo.Context, l *catalogue.Listing, form fare.Form, errs fare.FieldErrors) (templates.FareFormView, error) {
	checks, err := s.ListingReads.FindCapabilityChecks(c.Request().Context(), l.ID)
	if err != nil {
		return templates.FareFormView{}, err
	}
	_, _, probes, err := s.Endpoints.Preflight(c.Request().Context(), l.ID)
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
		opt := templates.CapabilityOption{Name: name, Label: strings.ReplaceAll(name, "_", " "),
			Checked: contains(form.Capabilities, name), Verification: state}
		if probe, ok := preflight.ForCapability(name); ok && probes[probe.Name].State == preflight.Failed {
			opt.Why = probes[probe.Name].Error + " How to fix: " + probe.Fix
		}
		v.Capabilities = append(v.Capabilities, opt)
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
