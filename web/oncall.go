package web

import (
	"context"
	"fmt"
	"net/http"
	"time"

	"github.com/labstack/echo/v4"

	"github.com/airside/airside/internal/alerting"
	"github.com/airside/airside/internal/catalogue"
	"github.com/airside/airside/internal/workflow"
	"github.com/airside/airside/templates"
)

// OnCallReads is what the on-call view reads.
type OnCallReads interface {
	OnCallFigures(ctx context.Context, carrierID int64, since, limitsSince time.Time) (map[int64]catalogue.Recent, error)
	FindMaintenanceWindows(ctx context.Context, f workflow.MaintenanceFilter) ([]workflow.MaintenanceWindow, error)
}

// onCallWindow is the span of the on-call view's traffic figures.
const onCallWindow = 10 * time.Minute

// handleOnCall is /oncall: each listing's live state (serving, paused, in
// a maintenance window, backed off, breaker open), its open alerts and
// the action it allows, and the last alerts; a carrier's page at 390 px.
func (s *Server) handleOnCall(c echo.Context) error {
	ctx, p := c.Request().Context(), principal(c)
	carrier, carriers, err := s.trafficCarrier(c, p, "/oncall")
	if err != nil {
		return err
	}
	now := s.Now().UTC()
	listings, err := s.ListingReads.FindListingEntries(ctx, []int64{carrier.ID})
	if err != nil {
		return err
	}
	figures, err := s.OnCallReads.OnCallFigures(ctx, carrier.ID, now.Add(-onCallWindow), now.Add(-24*time.Hour))
	if err != nil {
		return err
	}
	windows, err := s.OnCallReads.FindMaintenanceWindows(ctx, workflow.MaintenanceFilter{CarrierIDs: []int64{carrier.ID}, OpenOnly: true})
	if err != nil {
		return err
	}
	alerts, err := s.AlertReads.FindAlerts(ctx, carrier.ID, 100)
	if err != nil {
		return err
	}
	v := onCallView(s.page(c, "On call", "oncall"), carrier.Name, carrier.Slug, carriers, listings, figures, windows, alerts,
		workflow.CanManageListings(p, carrier.ID), now)
	return render(c, http.StatusOK, templates.OnCall(v))
}

// liveWords are each live state's badge, colour and sentence.
var liveWords = map[string]struct{ badge, class, words string }{
	"serving":     {"serving", "in_service", ""},
	"breaker":     {"breaker open", "delisted", "A gateway's breaker holds it out of routing: it probes it now and then, and brings it back after good answers."},
	"backoff":     {"backed off (429s)", "paused", "A gateway backed off after 429 answers: it routes to it again within a minute."},
	"slow":        {"backed off (slow first tokens)", "paused", "A gateway backed off after slow first tokens: it routes to it again within a minute."},
	"maintenance": {"in maintenance", "paused", ""},
	"paused":      {"paused", "paused", "Out of routing until resumed."},
	"draft":       {"not in service", "draft", "No fare approved yet."},
	"delisted":    {"delisted", "delisted", ""},
}

func onCallView(page templates.Page, carrierName, slug string, carriers []templates.Choice, listings []catalogue.ListingEntry,
	figures map[int64]catalogue.Recent, windows []workflow.MaintenanceWindow, alerts []alerting.Alert, canAct bool, now time.Time) templates.OnCallView {
	v := templates.OnCallView{Page: page, Carrier: carrierName, Slug: slug, Carriers: carriers, CanAct: canAct, Checked: now.Format("15:04:05")}
	inWindow := map[int64]*time.Time{}
	for _, w := range windows {
		if w.State() == workflow.MaintenanceActive {
			end := w.EndsAt
			inWindow[w.ListingID] = &end
		}
	}
	open := map[int64][]string{}
	for _, a := range alerts {
		if a.ResolvedAt == nil {
			open[a.ListingID] = append(open[a.ListingID], a.Kind.Label())
		}
	}
	for _, l := range listings {
		f := figures[l.ID]
		live := catalogue.LiveOf(l.Status, inWindow[l.ID], catalogue.LimitSpells(f.LimitMinutes), now)
		words := liveWords[live.State]
		row := templates.OnCallRow{ID: fmt.Sprint(l.ID), Model: l.Model.Name, URL: fmt.Sprintf("/listings/%d", l.ID), State: words.badge,
			StateClass: words.class, StateWords: words.words, OpenAlerts: open[l.ID], Traffic: onCallTraffic(f.Window)}
		switch {
		case live.Since != nil:
			row.State += " since " + live.Since.Format("15:04")
		case live.Until != nil:
			row.State += " until " + live.Until.UTC().Format("15:04")
			row.StateWords = "A planned maintenance window: routing resumes at its end, " + live.Until.UTC().Format("2006-01-02 15:04") + " UTC."
		}
		row.CanPause = canAct && l.Status == catalogue.StatusInService
		row.CanResume = canAct && live.State == "paused"
		row.CanMute = canAct && len(open[l.ID]) > 0
		v.Listings = append(v.Listings, row)
	}
	for _, a := range alerts[:min(len(alerts), 10)] {
		v.Alerts = append(v.Alerts, alertRow(a, now))
	}
	return v
}

// onCallTraffic says the last window's traffic in words.
func onCallTraffic(w catalogue.Counts) string {
	answered := w.Requests - w.ClientErrors
	if w.Requests == 0 && w.RateLimited == 0 {
		return "No requests in the last 10 minutes."
	}
	s := fmt.Sprintf("Last 10 minutes: %s requests", templates.Count(w.Requests))
	if answered > 0 {
		s += fmt.Sprintf(", %.1f %% answered well", 100*float64(answered-w.Errors)/float64(answered))
	}
	if w.RateLimited > 0 {
		s += fmt.Sprintf(", %s answered 429", templates.Count(w.RateLimited))
	}
	if w.Capped > 0 {
		s += fmt.Sprintf(", %s turned away at the cap", templates.Count(w.Capped))
	}
	return s + "."
}
