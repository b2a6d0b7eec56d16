package web

import (
	"context"
	"fmt"
	"math"
	"net/http"
	"net/url"
	"slices"
	"strconv"
	"strings"
	"time"

	"github.com/a-h/templ"
	"github.com/labstack/echo/v4"

	"github.com/airside/airside/internal/catalogue"
	"github.com/airside/airside/internal/election"
	"github.com/airside/airside/internal/fare"
	"github.com/airside/airside/internal/projection"
	"github.com/airside/airside/internal/workflow"
	"github.com/airside/airside/templates"
)

// previewControls are the preview's own fields: workload mix, custom
// scenario and chart focus.
type previewControls struct {
	mix    map[string]float64
	text   map[string]string
	custom *projection.Scenario
	form   templates.CustomScenario
	focus  string
}

var mixKeys = []struct{ key, label string }{
	{"small", "Small one-shot"}, {"large", "Large prompt"}, {"coding", "Coding agent session"}, {"chat", "Chat"},
}

func parsePreviewControls(c echo.Context, now time.Time) previewControls {
	ctl := previewControls{mix: map[string]float64{}, text: map[string]string{}, focus: c.FormValue("focus")}
	for _, k := range mixKeys {
		v := strings.TrimSpace(c.FormValue("mix_" + k.key))
		ctl.text[k.key] = v
		if f, err := strconv.ParseFloat(v, 64); err == nil && f >= 0 && f <= 1e6 && !math.IsNaN(f) {
			ctl.mix[k.key] = f
		}
	}
	ctl.form = templates.CustomScenario{Prompt: c.FormValue("custom_prompt"), Workload: c.FormValue("custom_workload"),
		Routing: c.FormValue("custom_routing"), Hour: c.FormValue("custom_hour"), Day: c.FormValue("custom_day"),
		Streaming: c.FormValue("custom_streaming") != ""}
	requires := map[string]bool{}
	if err := c.Request().ParseForm(); err == nil {
		for _, r := range c.Request().Form["custom_requires"] {
			requires[r] = true
		}
	}
	for _, flag := range election.AllCapabilities() {
		ctl.form.Requires = append(ctl.form.Requires, templates.CapabilityOption{Name: flag.String(),
			Label: strings.ReplaceAll(flag.String(), "_", " "), Checked: requires[flag.String()]})
	}
	prompt, err := strconv.ParseInt(strings.TrimSpace(ctl.form.Prompt), 10, 64)
	if err != nil || prompt <= 0 || prompt > 10_000_000 {
		return ctl
	}
	sc := projection.Scenario{Key: "custom", PromptTokens: prompt, Streaming: ctl.form.Streaming}
	sc.Workload, _ = election.ParseWorkload(ctl.form.Workload)
	sc.Routing, _ = election.ParseMode(ctl.form.Routing)
	for name := range requires {
		if flag, ok := election.ParseCapability(name); ok {
			sc.Requires = sc.Requires.With(flag)
		}
	}
	if hour, err := strconv.Atoi(strings.TrimSpace(ctl.form.Hour)); err == nil && hour >= 0 && hour <= 23 {
		day, _ := strconv.Atoi(ctl.form.Day)
		today := time.Date(now.Year(), now.Month(), now.Day(), 0, 0, 0, 0, time.UTC)
		offset := (day - int(today.Weekday()) + 7) % 7
		sc.At = today.AddDate(0, 0, offset).Add(time.Duration(hour) * time.Hour)
	}
	sc.Name = fmt.Sprintf("Custom: %d tokens, %s, %s", prompt, sc.Workload, sc.Routing)
	ctl.custom = &sc
	return ctl
}

// previewPanel computes the preview of fare f for listing l.
func (s *Server) previewPanel(ctx context.Context, l *catalogue.Listing, f *fare.Fare, ctl previewControls, formID, fragmentURL string) (templates.PreviewPanel, error) {
	// The model's real mix, as the gateway measured it, unless another one
	// was typed (the fields post with every live update, showing the
	// measured mix; one equal to it as shown is still the measured one).
	d, err := s.Projector.MeasuredDemand(ctx, l.Model.Slug)
	if err != nil {
		return templates.PreviewPanel{}, err
	}
	ask := projection.Ask{Mix: ctl.mix, Custom: ctl.custom, Focus: ctl.focus}
	source := "The mix is the one typed here (clear the fields for the measured one)."
	switch {
	case d.Requests > 0 && (len(ctl.mix) == 0 || sameMix(ctl.mix, d.Mix)):
		ask.Mix = nil
		source = fmt.Sprintf("The mix is what the gateway measured for this model over the last %d days (%s requests); type another to try it.",
			int(projection.MixWindow.Hours()/24), templates.GroupThousands(strconv.FormatInt(d.Requests, 10)))
	case d.Requests == 0 && len(ctl.mix) == 0:
		source = "The gateway has measured no demand for this model yet: an even mix; type your own to try another."
	}
	// Each shape's prompt is the size the gateway measured for it, as
	// routing elects it (a typed mix changes the weights, not the sizes).
	if len(d.Prompts) > 0 {
		source += " Each workload's prompt is its measured average size."
	}
	res, err := s.Projector.Preview(ctx, l, f, ask)
	if err != nil {
		return templates.PreviewPanel{}, err
	}
	v := panelView(res, f, ctl, formID, fragmentURL, s.Now())
	v.MixSource = source
	unserved, err := s.Projector.Unserved(ctx, l.Model.Slug, &f.Market)
	if err != nil {
		return templates.PreviewPanel{}, err
	}
	for _, u := range unserved {
		v.Unserved = append(v.Unserved, templates.UnservedRow{Why: u.Why, Fix: u.Fix})
	}
	return v, nil
}

// sameMix reports whether a typed mix is the measured one as the fields
// show it (percentages to one decimal).
func sameMix(typed, measured map[string]float64) bool {
	var sum float64
	for _, v := range measured {
		sum += v
	}
	if sum <= 0 {
		return false
	}
	for _, k := range mixKeys {
		shown := math.Round(measured[k.key]/sum*1000) / 10
		if math.Abs(typed[k.key]-shown) > 0.051 {
			return false
		}
	}
	return true
}

// previewTarget is a listing the user may preview: their carrier's, or any
// for staff.
func (s *Server) previewTarget(c echo.Context) (*catalogue.Listing, error) {
	id, err := pathID(c, "id")
	if err != nil {
		return nil, err
	}
	return s.ListingReads.FindListingHeader(c.Request().Context(), id, workflow.Scope(principal(c)))
}

func (s *Server) handlePreviewPage(c echo.Context) error {
	l, err := s.previewTarget(c)
	if err != nil {
		return err
	}
	return s.renderPreview(c, l, fare.FormOf(l.Published), true)
}

// handlePreview previews posted values: the compact form of the preview page
// or the whole filing form. With "X-Preview: fragment" it answers only the
// panel, for the script that keeps it current as the carrier types.
func (s *Server) handlePreview(c echo.Context) error {
	l, err := s.previewTarget(c)
	if err != nil {
		return err
	}
	var form fare.Form
	if c.FormValue("full_form") != "" {
		if form, err = parseFareForm(c); err != nil {
			return err
		}
	} else {
		form = fare.FormOf(l.Published)
		for _, key := range fare.CompactFields() {
			f := fare.MustField(key)
			if v, ok := c.Request().PostForm[f.PostName()]; ok && len(v) > 0 {
				f.Set(&form, v[0])
			}
		}
	}
	if c.Request().Header.Get("X-Preview") == "fragment" {
		formID, checked := "preview-form", fare.CompactFields()
		var effective *templates.Effective
		if c.FormValue("full_form") != "" {
			formID, checked = "fare-form", fare.LiveFields()
			e := effectiveOf(form)
			effective = &e
		}
		// The checks first: panelFor clears the effective date it previews.
		checks := liveChecks(form, c.Request().PostForm, checked, effective, s.Now(), effective != nil)
		panel, err := s.panelFor(c, l, form, formID)
		if err != nil {
			return err
		}
		return render(c, http.StatusOK, templ.Join(templates.PreviewPanelView(panel), templates.LiveChecks(checks)))
	}
	return s.renderPreview(c, l, form, false)
}

// liveChecks are the server's messages on the checked fields as typed,
// for the live preview to put beside them: the form's own check (one rule,
// the one a submission meets), on the fields something is typed in (an
// empty field is not told it is required while it is being retyped).
func liveChecks(form fare.Form, posted url.Values, fields []string, effective *templates.Effective, now time.Time, rows bool) templates.LiveChecksView {
	_, errs := form.Parse(now)
	shown := map[string]string{}
	for _, f := range fields {
		if msg, bad := errs[f]; bad && strings.TrimSpace(posted.Get(f)) != "" {
			shown[f] = msg
		}
	}
	if rows { // the filing form's tiers and peak windows: each cell has its slot
		fields = slices.Clone(fields)
		for _, cell := range fare.RowCells(&form) {
			fields = append(fields, cell.Key)
			typed := posted[cell.Post]
			if msg, bad := errs[cell.Key]; bad && cell.Row < len(typed) && strings.TrimSpace(typed[cell.Row]) != "" {
				shown[cell.Key] = msg
			}
		}
	}
	return templates.LiveChecksView{Fields: fields, Errors: shown, Effective: effective}
}

// panelFor parses a typed form and previews it; a form that does not parse
// gets a panel naming what to fix.
func (s *Server) panelFor(c echo.Context, l *catalogue.Listing, form fare.Form, formID string) (templates.PreviewPanel, error) {
	fragment := fmt.Sprintf("/listings/%d/preview", l.ID)
	ctl := parsePreviewControls(c, s.Now().UTC())
	form.EffectiveAt = "" // a date in the past does not stop a preview
	parsed, errs := form.Parse(s.Now())
	if strings.TrimSpace(form.Input) == "" && strings.TrimSpace(form.Output) == "" {
		// Nothing typed yet (a new listing): an invitation, not an error.
		return templates.PreviewPanel{FormID: formID, FragmentURL: fragment, Custom: ctl.form, Waiting: true}, nil
	}
	if errs != nil {
		// Named as the form names them, in its order, with the first
		// message (a decimal comma's hint reads best here).
		problems := fare.Problems(errs)
		fields := make([]string, len(problems))
		for i, p := range problems {
			fields[i] = p.Label
		}
		return templates.PreviewPanel{FormID: formID, FragmentURL: fragment, Custom: ctl.form,
			Error: "Fix the marked fields to see the preview: " + strings.Join(fields, ", ") + ". " + problems[0].Label + ": " + problems[0].Message}, nil
	}
	return s.previewPanel(c.Request().Context(), l, parsed.Fare, ctl, formID, fragment)
}

func (s *Server) renderPreview(c echo.Context, l *catalogue.Listing, form fare.Form, initial bool) error {
	v := templates.PreviewView{Page: s.page(c, "Preview · "+l.Model.Name, "listings"), Listing: listingHeader(l),
		Action: fmt.Sprintf("/listings/%d/preview", l.ID), FragmentURL: fmt.Sprintf("/listings/%d/preview", l.ID), Form: form,
		FileURL: fmt.Sprintf("/listings/%d/file", l.ID)}
	if !initial {
		if _, errs := form.Parse(s.Now()); errs != nil {
			v.Errors = errs
		}
	}
	panel, err := s.panelFor(c, l, form, "preview-form")
	if err != nil {
		return err
	}
	v.Panel = panel
	status := http.StatusOK
	if len(v.Errors) > 0 {
		status = http.StatusUnprocessableEntity
	}
	return render(c, status, templates.Preview(v))
}
