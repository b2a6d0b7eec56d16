package web

import (
	"context"
	"fmt"
	"net/http"
	"strconv"

	"github.com/labstack/echo/v4"

	"github.com/airside/airside/internal/alerting"
	"github.com/airside/airside/internal/apperr"
	"github.com/airside/airside/internal/workflow"
	"github.com/airside/airside/templates"
)

// AlertReads is what the alerts page reads.
type AlertReads interface {
	FindAlerts(ctx context.Context, carrierID int64, limit int) ([]alerting.Alert, error)
	FindWebhook(ctx context.Context, carrierID int64) (*alerting.Webhook, error)
	FindDeliveries(ctx context.Context, carrierID int64, limit int) ([]alerting.Delivery, error)
}

func (s *Server) handleAlerts(c echo.Context) error {
	return s.renderAlerts(c, http.StatusOK, "", nil)
}

// renderAlerts renders the alerts page; newSecret is a webhook secret to
// show once, errs the webhook form's problems.
func (s *Server) renderAlerts(c echo.Context, status int, newSecret string, errs map[string]string) error {
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
	v := alertsView(s.page(c, "Alerts", "alerts"), carrier.Name, carrier.Slug, carriers, alerts, hook, deliveries,
		workflow.CanManageListings(p, carrier.ID), s.Now())
	v.NewSecret, v.Errors = newSecret, errs
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
