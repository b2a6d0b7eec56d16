package web

import (
	"fmt"
	"strconv"
	"time"

	"github.com/airside/airside/internal/alerting"
	"github.com/airside/airside/internal/catalogue"
	"github.com/airside/airside/templates"
)

func alertsView(page templates.Page, carrierName, slug string, carriers []templates.Choice, alerts []alerting.Alert,
	hook *alerting.Webhook, deliveries []alerting.Delivery, canManage bool, now time.Time) templates.AlertsView {
	v := templates.AlertsView{Page: page, Carrier: carrierName, Slug: slug, Carriers: carriers, CanManage: canManage}
	for _, a := range alerts {
		v.Alerts = append(v.Alerts, alertRow(a, now))
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

// alertTuningView fills the rules form (from the carrier's settings, or
// from what was typed when typed is not nil), the mutes in force and the
// mute form's choices, and marks each open alert row that a mute covers.
func alertTuningView(v *templates.AlertsView, rules alerting.CarrierRules, typed map[alerting.Kind]alerting.RuleForm, mutes []alerting.Mute,
	listings []catalogue.ListingEntry, chosen muteChoice, alerts []alerting.Alert, now time.Time) {
	for _, k := range alerting.Kinds {
		set, unit := rules.Of(k), alerting.ThresholdOf(k)
		row := templates.AlertRuleRow{Kind: string(k), Label: templates.Capitalise(k.Label()), Watches: alerting.Rules{}.Describe(k, set), On: set.On,
			OpenAfter: minutesOf(set.OpenAfter), CloseAfter: minutesOf(set.CloseAfter)}
		if unit.Label != "" {
			row.ThresholdLabel, row.ThresholdSuffix = unit.Label, unit.Suffix
			row.Threshold = strconv.FormatFloat(set.Threshold, 'f', -1, 64)
		}
		if def := alerting.DefaultSetting(k); set != def {
			row.Default = "Default: on, holds for " + minutesOf(def.OpenAfter) + " min, clears after " + minutesOf(def.CloseAfter) + " min"
			if unit.Label != "" {
				row.Default += ", threshold " + strconv.FormatFloat(def.Threshold, 'f', -1, 64) + " " + unit.Suffix
			}
			row.Default += "."
		}
		if f, ok := typed[k]; ok {
			row.On, row.OpenAfter, row.CloseAfter, row.Threshold = f.On == "on", f.OpenAfter, f.CloseAfter, f.Threshold
		}
		v.Rules = append(v.Rules, row)
	}
	for _, m := range mutes {
		v.Mutes = append(v.Mutes, templates.MuteRow{ID: fmt.Sprint(m.ID), Listing: m.Listing, Kind: muteKindWords(m.Kind),
			Until: m.Until.Format("2006-01-02 15:04 UTC"), By: m.By})
	}
	for i, a := range alerts {
		if !v.Alerts[i].Open {
			continue
		}
		for _, m := range mutes {
			if m.Covers(a.ListingID, a.Kind, now) {
				v.Alerts[i].Muted = m.Until.Format("2006-01-02 15:04 UTC")
			}
		}
	}
	for _, l := range listings {
		id := fmt.Sprint(l.ID)
		v.MuteListings = append(v.MuteListings, templates.Choice{Label: l.Model.Name, URL: id, Active: id == chosen.listing})
	}
	v.MuteKinds = append(v.MuteKinds, templates.Choice{Label: "Every alert", URL: "", Active: chosen.kind == ""})
	for _, k := range alerting.Kinds {
		v.MuteKinds = append(v.MuteKinds, templates.Choice{Label: templates.Capitalise(k.Label()), URL: string(k), Active: chosen.kind == string(k)})
	}
	for _, d := range alerting.MuteDurations {
		v.MuteDurations = append(v.MuteDurations, templates.Choice{Label: d.Label, URL: d.Value, Active: d.Value == chosen.duration ||
			chosen.duration == "" && d.Value == "24h"})
	}
}

// muteChoice is what the mute form had chosen (kept after an error).
type muteChoice struct{ listing, kind, duration string }

func muteKindWords(k alerting.Kind) string {
	if k == "" {
		return "every alert"
	}
	return k.Label()
}

func minutesOf(d time.Duration) string { return strconv.FormatInt(int64(d/time.Minute), 10) }

// alertRow is one alert as the alerts and on-call pages list it: the
// model's name, the kind in words, open or resolved, and how often it
// flapped.
func alertRow(a alerting.Alert, now time.Time) templates.AlertRow {
	name := a.ModelName
	if name == "" {
		name = a.Listing
	}
	row := templates.AlertRow{Listing: name, Kind: a.Kind.Label(), Detail: a.Detail, Opened: a.OpenedAt.Format("2006-01-02 15:04"),
		State: "open", Class: "failed", ListingID: fmt.Sprint(a.ListingID), KindValue: string(a.Kind), Open: a.ResolvedAt == nil}
	if a.ResolvedAt != nil {
		row.State, row.Class = "resolved "+ago(*a.ResolvedAt, now), "verified"
	}
	if a.Flaps > 0 {
		row.State += " · flapping: came back " + alerting.Times(a.Flaps)
	}
	return row
}
