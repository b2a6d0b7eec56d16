package web

import (
	"encoding/json"
	"fmt"
	"math"
	"strconv"
	"strings"
	"time"

	"github.com/airside/airside/internal/account"
	"github.com/airside/airside/internal/audit"
	"github.com/airside/airside/internal/catalogue"
	"github.com/airside/airside/internal/fare"
	"github.com/airside/airside/internal/workflow"
	"github.com/airside/airside/templates"
)

// The view builders of filing pages: plain functions of what was read.

// filingPageView is a filing's page for p: what it proposes against what is
// published, its history, and the buttons the workflow allows p.
func filingPageView(page templates.Page, p *account.Principal, f *workflow.Filing, l *catalogue.Listing, events []audit.Event) templates.FilingView {
	v := templates.FilingView{
		Page: page, ID: f.ID, Listing: listingHeader(l),
		State: f.State.Label(), StateClass: string(f.State), Kinds: kindsLabel(f.Kinds), Author: f.AuthorEmail, ViaToken: f.ViaToken,
		Created: stamp(&f.CreatedAt), Submitted: stamp(f.SubmittedAt), EffectiveAt: stamp(f.EffectiveAt),
		Justification: f.Justification, Changes: changeRows(f.Changes()),
		EditURL: fmt.Sprintf("/filings/%d/edit", f.ID), Version: f.LockVersion,
	}
	// The reviewer's note is a banner while it is the filing's answer; once
	// the carrier resubmitted, it is history, shown quietly.
	switch f.State {
	case workflow.ChangesRequested, workflow.Rejected, workflow.Scheduled, workflow.Published:
		v.DecisionNote = f.DecisionNote
	case workflow.Submitted:
		v.EarlierNote = f.DecisionNote
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
	can := workflow.FilingActionsFor(p, f)
	v.CanEdit, v.CanSubmit, v.CanWithdraw = can.Edit, can.Submit, can.Withdraw
	if can.Withdraw && f.AuthorEmail != "" && f.AuthorEmail != p.User.Email {
		v.WithdrawOthers = f.AuthorEmail
	}
	v.CanDecide, v.DecideNote = can.Decide, can.DecideNote
	v.CanComment = can.Comment
	if f.StaleBase() && (f.State.Open() || f.State == workflow.Submitted) {
		v.Stale = workflow.StaleBaseMessage
		v.CanRefresh = can.Refresh
	}
	return v
}

var historyWords = map[string]string{
	"filing.create": "created the draft", "filing.edit": "edited the filing", "filing.submit": "submitted it for review",
	"filing.withdraw": "withdrew it", "filing.approve": "approved it", "filing.reject": "rejected it",
	"filing.request_changes": "asked for changes", "filing.publish": "published it to routing", "filing.comment": "commented",
	"filing.schedule": "approved it for its effective date", "filing.approve.first": "gave it the first of two approvals",
	"filing.refresh": "refreshed it against the fare published since",
}

func historyText(e audit.Event) string {
	w, ok := historyWords[e.Action]
	if !ok {
		// An event of a kind the history has no words of its own for
		// reads as the audit log says it, never as its code.
		w = strings.TrimSuffix(strings.TrimPrefix(audit.Verb(e.Action), "filing "), " of") + " it"
	}
	if e.Action != "filing.edit" && e.Action != "filing.submit" {
		return w
	}
	var before struct{ State string }
	var after struct{ Edit []map[string]string }
	_ = json.Unmarshal([]byte(e.Before), &before) // older events lack the members: plain words then
	_ = json.Unmarshal([]byte(e.After), &after)
	if e.Action == "filing.submit" && before.State == string(workflow.ChangesRequested) {
		w = "resubmitted it for review"
	}
	if len(after.Edit) > 0 {
		parts := make([]string, len(after.Edit))
		for i, c := range after.Edit {
			parts[i] = fare.FieldLabel(c["field"]) + " " + orDash(c["old"]) + " → " + orDash(c["new"])
		}
		w += ", changing " + strings.Join(parts, "; ")
	}
	return w
}

// sentBack is the fare of the filing's last "asked for changes" and when it
// was sent back.
func sentBack(events []audit.Event, current *fare.Fare) (fareID int64, at time.Time, ok bool) {
	if current == nil {
		return 0, time.Time{}, false
	}
	for _, e := range events { // newest last or first: keep the latest
		if e.Action != "filing.request_changes" {
			continue
		}
		var after struct{ FareID *int64 }
		if json.Unmarshal([]byte(e.After), &after) != nil || after.FareID == nil {
			continue
		}
		if !ok || e.At.After(at) {
			fareID, at, ok = *after.FareID, e.At, true
		}
	}
	return fareID, at, ok
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

// DataPolicyNote tells the reviewer whose word a data-policy change is.
const DataPolicyNote = "The carrier's declaration: Airside cannot check it. Approving publishes it as theirs, with your name beside it on the listing page."

func changeRows(changes []fare.Change) []templates.ChangeRow {
	rows := make([]templates.ChangeRow, len(changes))
	for i, ch := range changes {
		row := templates.ChangeRow{Label: ch.Label, Old: ch.Old, New: ch.New}
		if ch.Field == "retention_days" || ch.Field == "trains_on_prompts" {
			row.Note = DataPolicyNote
		}
		switch {
		case ch.Points != nil:
			row.Percent = pointsText(*ch.Points)
		case ch.Percent != nil:
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

// filingRow is a filing in a list.
func filingRow(f *workflow.Filing) templates.FilingRow {
	row := templates.FilingRow{ID: f.ID, URL: fmt.Sprintf("/filings/%d", f.ID), Model: f.Model.Name, Carrier: f.CarrierName,
		Kinds: kindsLabel(f.Kinds), State: f.State.Label(), Class: string(f.State), Author: f.AuthorEmail,
		Created: stamp(&f.CreatedAt), Decided: stamp(f.DecidedAt)}
	return row
}

// pointsText is a change of a percentage in points: "+5 points",
// "-2.5 points", "+1 point".
func pointsText(p float64) string {
	unit := " points"
	if p == 1 || p == -1 {
		unit = " point"
	}
	sign := "+"
	if p < 0 {
		sign = "-"
	}
	return sign + strconv.FormatFloat(math.Abs(p), 'f', -1, 64) + unit
}
