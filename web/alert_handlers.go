package web

import (
	"context"
	"fmt"
	"net/http"
	"strconv"
	"time"

	"github.com/labstack/echo/v4"

	"github.com/airside/airside/internal/alerting"
	"github.com/airside/airside/internal/apperr"
	"github.com/airside/airside/internal/workflow"
	"github.com/airside/airside/templates"
)

// AlertReads is what the alerts page reads.
type AlertReads interface {
	FindAlerts(ctx context.Context, carrierID int64, limit int) ([]alerting.Alert, error)
	CarrierAlertRules(ctx context.Context, carrierID int64) (alerting.CarrierRules, error)
	CarrierMutes(ctx context.Context, carrierID int64, now time.Time) ([]alerting.Mute, error)
	FindWebhook(ctx context.Context, carrierID int64) (*alerting.Webhook, error)
	FindDeliveries(ctx context.Context, carrierID int64, limit int) ([]alerting.Delivery, error)
}

func (s *Server) handleAlerts(c echo.Context) error {
	return s.renderAlerts(c, http.StatusOK, "", nil)
}

// renderAlerts renders the alerts page; newSecret is a webhook secret to
// show once, errs the webhook form's problems.
func (s *Server) renderAlerts(c echo.Context, status int, newSecret string, errs map[string]string) error {
	return s.renderAlertsWith(c, status, alertForms{newSecret: newSecret, hookErrs: errs})
}

// alertForms is what the alerts page shows of a form just posted: a new
// webhook secret, and each form's problems with what was typed.
type alertForms struct {
	newSecret          string
	hookErrs, ruleErrs map[string]string
	typedRules         map[alerting.Kind]alerting.RuleForm
	muteErrs           map[string]string
	mute               muteChoice
}

func (s *Server) renderAlertsWith(c echo.Context, status int, f alertForms) error {
	newSecret, errs := f.newSecret, f.hookErrs
	ctx, p := c.Request().Context(), principal(c)
	carrier, carriers, err := s.trafficCarrier(c, p, "/alerts")
	if err != nil {
		return err
	}
	alerts, err := s.AlertReads.FindAlerts(ctx, carrier.ID, 100)
	if err != nil {
		return err
	}
	hook, err := s.AlertReads.FindWebhook(ctx, carrier.ID)
	if err != nil {
		return err
	}
	deliveries, err := s.AlertReads.FindDeliveries(ctx, carrier.ID, 30)
	if err != nil {
		return err
	}
	rules, err := s.AlertReads.CarrierAlertRules(ctx, carrier.ID)
	if err != nil {
		return err
	}
	mutes, err := s.AlertReads.CarrierMutes(ctx, carrier.ID, s.Now())
	if err != nil {
		return err
	}
	listings, err := s.ListingReads.FindListingEntries(ctx, []int64{carrier.ID})
	if err != nil {
		return err
	}
	v := alertsView(s.page(c, "Alerts", "alerts"), carrier.Name, carrier.Slug, carriers, alerts, hook, deliveries,
		workflow.CanManageListings(p, carrier.ID), s.Now())
	alertTuningView(&v, rules, f.typedRules, mutes, listings, f.mute, alerts, s.Now())
	v.NewSecret, v.Errors, v.RuleErrors, v.MuteErrors = newSecret, errs, f.ruleErrs, f.muteErrs
	v.AcceptsLocal = s.Hooks.AcceptsLocal()
	if typed := c.FormValue("url"); typed != "" {
		v.URL = typed
	}
	return render(c, status, templates.Alerts(v))
}

// hookCarrier is the carrier a webhook form acts on (?carrier=slug).
func (s *Server) hookCarrier(c echo.Context) (int64, string, error) {
	carrier, _, err := s.trafficCarrier(c, principal(c), "/alerts")
	if err != nil {
		return 0, "", err
	}
	return carrier.ID, carrier.Slug, nil
}

func (s *Server) handleSetWebhook(c echo.Context) error {
	id, _, err := s.hookCarrier(c)
	if err != nil {
		return err
	}
	secret, err := s.Hooks.Set(c.Request().Context(), principal(c), id, c.FormValue("url"))
	switch apperr.Code(err) {
	case "":
		return s.renderAlerts(c, http.StatusOK, secret, nil)
	case apperr.EINVALID:
		return s.renderAlerts(c, http.StatusUnprocessableEntity, "", apperr.FieldErrors(err))
	}
	return err
}

// handleRotateWebhookSecret makes a new signing secret, shown once; the old
// one keeps signing beside it for alerting.RotationOverlap.
func (s *Server) handleRotateWebhookSecret(c echo.Context) error {
	id, slug, err := s.hookCarrier(c)
	if err != nil {
		return err
	}
	secret, err := s.Hooks.Rotate(c.Request().Context(), principal(c), id)
	switch apperr.Code(err) {
	case "":
		return s.renderAlerts(c, http.StatusOK, secret, nil)
	case apperr.ECONFLICT:
		if err := s.setFlash(c, "%s", apperr.Message(err)); err != nil {
			return err
		}
		return c.Redirect(http.StatusSeeOther, "/alerts?carrier="+slug)
	}
	return err
}

func (s *Server) handleTestWebhook(c echo.Context) error {
	id, slug, err := s.hookCarrier(c)
	if err != nil {
		return err
	}
	msg := "A test event is queued; its delivery shows below within seconds."
	switch err := s.Hooks.Test(c.Request().Context(), principal(c), id); apperr.Code(err) {
	case "":
		s.Webhooks.Wake()
	case apperr.ECONFLICT:
		msg = apperr.Message(err)
	default:
		return err
	}
	if err := s.setFlash(c, "%s", msg); err != nil {
		return err
	}
	return c.Redirect(http.StatusSeeOther, "/alerts?carrier="+slug)
}

func (s *Server) handleDeleteWebhook(c echo.Context) error {
	id, slug, err := s.hookCarrier(c)
	if err != nil {
		return err
	}
	if err := s.Hooks.Delete(c.Request().Context(), principal(c), id); err != nil {
		return err
	}
	if err := s.setFlash(c, "Webhook removed; alerts still reach your inbox."); err != nil {
		return err
	}
	return c.Redirect(http.StatusSeeOther, fmt.Sprintf("/alerts?carrier=%s", slug))
}

// handleResendDelivery puts a failed delivery back in the queue, now.
func (s *Server) handleResendDelivery(c echo.Context) error {
	id, slug, err := s.hookCarrier(c)
	if err != nil {
		return err
	}
	// A malformed id finds nothing; who may resend is decided first.
	delivery, _ := strconv.ParseInt(c.Param("id"), 10, 64)
	if err := s.Hooks.Resend(c.Request().Context(), principal(c), id, delivery); err != nil {
		return err
	}
	s.Webhooks.Wake()
	if err := s.setFlash(c, "Delivery #%d is queued again; its new attempt shows below within seconds.", delivery); err != nil {
		return err
	}
	return c.Redirect(http.StatusSeeOther, "/alerts?carrier="+slug)
}

// handleSetAlertRules saves the carrier's alert rules: every rule's fields
// at once, or, when one is wrong, none, with the form as typed.
func (s *Server) handleSetAlertRules(c echo.Context) error {
	id, slug, err := s.hookCarrier(c)
	if err != nil {
		return err
	}
	form := map[alerting.Kind]alerting.RuleForm{}
	for _, k := range alerting.Kinds {
		form[k] = alerting.RuleForm{On: c.FormValue(string(k) + "-on"), OpenAfter: c.FormValue(string(k) + "-open"),
			CloseAfter: c.FormValue(string(k) + "-close"), Threshold: c.FormValue(string(k) + "-threshold")}
	}
	switch err := s.Tuning.SetRules(c.Request().Context(), principal(c), id, form); apperr.Code(err) {
	case "":
	case apperr.EINVALID:
		return s.renderAlertsWith(c, http.StatusUnprocessableEntity, alertForms{ruleErrs: apperr.FieldErrors(err), typedRules: form})
	default:
		return err
	}
	if err := s.setFlash(c, "Alert rules saved; the next pass (within a minute) judges by them."); err != nil {
		return err
	}
	return c.Redirect(http.StatusSeeOther, "/alerts?carrier="+slug)
}

// handleMuteAlerts mutes a listing's alerts (of one kind, or all) for a
// while.
func (s *Server) handleMuteAlerts(c echo.Context) error {
	id, slug, err := s.hookCarrier(c)
	if err != nil {
		return err
	}
	chosen := muteChoice{listing: c.FormValue("listing"), kind: c.FormValue("kind"), duration: c.FormValue("for")}
	// A malformed listing finds none of the carrier's: refused by the
	// store beside the field, after who may mute is decided.
	listing, _ := strconv.ParseInt(chosen.listing, 10, 64)
	until, err := s.Tuning.Mute(c.Request().Context(), principal(c), id, listing, chosen.kind, chosen.duration)
	switch apperr.Code(err) {
	case "":
	case apperr.EINVALID:
		return s.renderAlertsWith(c, http.StatusUnprocessableEntity, alertForms{muteErrs: apperr.FieldErrors(err), mute: chosen})
	default:
		return err
	}
	if err := s.setFlash(c, "Muted until %s: its alerts still show on the Alerts page, and tell no one until then.", until.Format("2006-01-02 15:04 UTC")); err != nil {
		return err
	}
	if c.QueryParam("back") == "oncall" { // muted from the on-call view: back there
		return c.Redirect(http.StatusSeeOther, "/oncall?carrier="+slug)
	}
	return c.Redirect(http.StatusSeeOther, "/alerts?carrier="+slug)
}

// handleUnmute ends a mute now.
func (s *Server) handleUnmute(c echo.Context) error {
	id, slug, err := s.hookCarrier(c)
	if err != nil {
		return err
	}
	mute, _ := strconv.ParseInt(c.Param("id"), 10, 64) // a malformed id finds nothing
	if err := s.Tuning.Unmute(c.Request().Context(), principal(c), id, mute); err != nil {
		return err
	}
	if err := s.setFlash(c, "Unmuted: its alerts tell you again."); err != nil {
		return err
	}
	return c.Redirect(http.StatusSeeOther, "/alerts?carrier="+slug)
}
