package web

import (
	"fmt"
	"time"

	"github.com/airside/airside/internal/alerting"
	"github.com/airside/airside/templates"
)

func alertsView(page templates.Page, carrierName, slug string, carriers []templates.Choice, alerts []alerting.Alert,
	hook *alerting.Webhook, deliveries []alerting.Delivery, canManage bool, now time.Time) templates.AlertsView {
	v := templates.AlertsView{Page: page, Carrier: carrierName, Slug: slug, Carriers: carriers, CanManage: canManage}
	for _, a := range alerts {
		row := templates.AlertRow{Listing: a.Listing, Kind: a.Kind.Label(), Detail: a.Detail, Opened: a.OpenedAt.Format("2006-01-02 15:04"),
			State: "open", Class: "failed"}
		if a.ResolvedAt != nil {
			row.State, row.Class = "resolved "+ago(*a.ResolvedAt, now), "verified"
		}
		v.Alerts = append(v.Alerts, row)
	}
	if hook != nil {
		v.URL, v.HookSince = hook.URL, hook.UpdatedAt.Format("2006-01-02 15:04 UTC")
		if hook.PreviousSecretUntil != nil {
			v.PreviousUntil = hook.PreviousSecretUntil.Format("2006-01-02 15:04 UTC")
		}
	}
	for _, d := range deliveries {
		row := templates.DeliveryRow{ID: fmt.Sprint(d.ID), Event: d.Event, State: string(d.State), Attempts: fmt.Sprint(d.Attempts),
			Created: d.CreatedAt.Format("2006-01-02 15:04:05"), Error: d.LastError}
		if d.LastStatus != 0 {
			row.Status = fmt.Sprint(d.LastStatus)
		}
		if d.State == alerting.Pending && d.Attempts > 0 {
			row.State = "retry at " + d.NextAttemptAt.Format("15:04:05") + " UTC"
		}
		row.CanResend = canManage && (d.State == alerting.Failed || d.State == alerting.Pending && d.Attempts > 0)
		v.Deliveries = append(v.Deliveries, row)
	}
	return v
}
