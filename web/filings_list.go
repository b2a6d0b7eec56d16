package web

import (
	"fmt"
	"net/http"
	"slices"
	"strconv"
	"strings"

	"github.com/labstack/echo/v4"

	"github.com/airside/airside/internal/apperr"
	"github.com/airside/airside/internal/workflow"
	"github.com/airside/airside/templates"
)

// filingStates are the groups of /filings.
var filingStates = []struct {
	key, label string
	states     []workflow.State
}{
	{"draft", "Drafts", []workflow.State{workflow.Draft}},
	{"pending", "Pending review", []workflow.State{workflow.Submitted}},
	{"changes", "Changes requested", []workflow.State{workflow.ChangesRequested}},
	{"scheduled", "Scheduled", []workflow.State{workflow.Scheduled}},
	{"decided", "Decided", []workflow.State{workflow.Published, workflow.Rejected, workflow.Withdrawn}},
	{"all", "All", nil},
}

func parseIDs(text string) []int64 {
	var out []int64
	for _, part := range strings.Split(text, ",") {
		if id, err := strconv.ParseInt(strings.TrimSpace(part), 10, 64); err == nil && id > 0 {
			out = append(out, id)
		}
	}
	return out
}

func (s *Server) handleFilings(c echo.Context) error {
	p := principal(c)
	key := c.QueryParam("state")
	if key == "" {
		key = "draft"
	}
	group := slices.IndexFunc(filingStates, func(g struct {
		key, label string
		states     []workflow.State
	}) bool {
		return g.key == key
	})
	if group < 0 {
		group = 0
	}
	batch := c.QueryParam("batch")
	filings, err := s.FilingReads.FindFilings(c.Request().Context(), workflow.FilingFilter{CarrierIDs: workflow.Scope(p), States: filingStates[group].states})
	if err != nil {
		return err
	}
	v := templates.FilingsView{Page: s.page(c, "Filings", "filings"), Batch: batch, AllURL: "/filings?state=" + filingStates[group].key,
		ShowCarrier: p.IsStaff() || len(p.Memberships) > 1,
		CanSubmit:   workflow.CanSubmitFilings(p) && (key == "draft" || key == "changes")}
	ids := parseIDs(batch)
	for i := range filings {
		if len(ids) > 0 && !slices.Contains(ids, filings[i].ID) {
			continue
		}
		v.Rows = append(v.Rows, filingRow(&filings[i]))
	}
	for _, g := range filingStates {
		v.States = append(v.States, templates.Choice{Label: g.label, URL: "/filings?state=" + g.key, Active: g.key == filingStates[group].key})
	}
	return render(c, http.StatusOK, templates.Filings(v))
}

// handleSubmitFilings submits the selected open filings, each on its own:
// one that cannot go (stale, a notice date missing, another in flight) is
// named with why, the others go.
func (s *Server) handleSubmitFilings(c echo.Context) error {
	form, _ := c.FormParams()
	var ok []string
	var problems []string
	for _, text := range form["id"] {
		id, err := strconv.ParseInt(text, 10, 64)
		if err != nil {
			continue
		}
		err = s.Filings.Submit(c.Request().Context(), principal(c), id)
		switch {
		case err == nil:
			ok = append(ok, "#"+text)
		case apperr.Code(err) == apperr.ENOTFOUND || apperr.Code(err) == apperr.EFORBIDDEN:
			return err
		default:
			msg := apperr.Message(err)
			if fields := apperr.FieldErrors(err); len(fields) > 0 {
				msg = strings.Join(mapValues(fields), " ")
			}
			problems = append(problems, fmt.Sprintf("#%s: %s", text, msg))
		}
	}
	msg := fmt.Sprintf("Submitted %d filings for review.", len(ok))
	if len(problems) > 0 {
		msg += " Not submitted: " + strings.Join(problems, " ")
	}
	if err := s.setFlash(c, "%s", msg); err != nil {
		return err
	}
	return c.Redirect(http.StatusSeeOther, "/filings?state=pending")
}
