package audit

import (
	"encoding/json"
	"fmt"
	"sort"
	"strings"
)

// What an event says, in words: the audit log reads as sentences ("reviewer@…
// approved filing #12"), not as codes and JSON.

var verbs = map[string]string{
	"filing.create": "created the draft of", "filing.edit": "edited", "filing.submit": "submitted",
	"filing.withdraw": "withdrew", "filing.approve": "approved", "filing.reject": "rejected",
	"filing.request_changes": "asked for changes on", "filing.publish": "published to routing",
	"filing.schedule": "scheduled", "filing.comment": "commented on", "filing.refresh": "refreshed",
	"listing.create": "added", "listing.delist": "delisted", "listing.pause": "paused routing to", "listing.resume": "resumed routing, without review, to", "listing.priority": "set the routing priority of",
	"capability.check": "judged a capability of", "carrier.create": "created", "invite.create": "made the sign-up link",
	"invite.accept": "signed up through an invite as", "user.create": "created", "token.create": "created",
	"token.revoke": "revoked", "token.use": "used", "login": "logged in as", "login.fail": "failed to log in as",
	"login.throttle": "was held back logging in as", "logout": "logged out as", "logout.everywhere": "logged out everywhere as",
	"throttle.clear": "cleared a login throttle as", "fare.publish.seed": "seeded the fare of", "model.create": "added",
	"filing.approve.first": "gave the first of two approvals to", "endpoint.publish.seed": "seeded the endpoint of",
	"credentials.read": "read the endpoint credentials of", "preflight.request": "asked for a preflight run of",
	"preflight.finish": "finished a preflight run of", "member.role": "changed the carrier role of", "member.remove": "removed from the carrier",
	"user.deactivate": "deactivated", "user.activate": "reactivated", "user.password": "changed the password of",
	"user.reset.issue": "issued a password reset link for", "user.reset.use": "set a new password by reset link for",
	"application.create": "applied to the storefront in", "application.approve": "approved", "application.decline": "declined",
	"application.message": "wrote on", "profile.submit": "submitted", "domain.set": "set the domain of",
	"domain.verified": "verified the domain of", "model.propose": "proposed", "model.proposal.decline": "declined",
	"webhook.set": "set the alert webhook of", "webhook.delete": "removed the alert webhook of",
	"webhook.resend": "resent the alert webhook's", "webhook.rotate": "rotated the alert webhook secret of",
	"user.alert_email": "changed how alerts are e-mailed to", "alert.rules": "changed the alert rules of",
	"alert.mute": "muted the alerts of", "alert.unmute": "ended a mute of the alerts of",
	"two_factor.begin": "began setting up two-factor sign-in for", "two_factor.enable": "turned on two-factor sign-in for",
	"two_factor.disable": "turned off two-factor sign-in for", "two_factor.forget_browsers": "forgot the remembered browsers of", "two_factor.reset": "reset the two-factor sign-in of",
	"two_factor.recovery_codes": "made new recovery codes for", "two_factor.recovery_used": "used a recovery code of",
	"login.two_factor": "gave the second factor of", "login.two_factor_fail": "gave a wrong second factor for",
	"policy.two_factor":    "changed whether two-factor sign-in is required, as",
	"maintenance.schedule": "planned a maintenance window of", "maintenance.cancel": "called off a maintenance window of",
	"listing.maintenance_start": "took out of routing for maintenance", "listing.maintenance_end": "ended the maintenance window of",
	"feed.set": "set the provider feed of", "feed.map": "chose which listings the provider feed files to for", "feed.remove": "stopped reading the provider feed of",
}

// Actions lists the kinds of event there are, for a filter.
func Actions() []string {
	out := make([]string, 0, len(verbs))
	for a := range verbs {
		out = append(out, a)
	}
	sort.Strings(out)
	return out
}

// Verb is what an event of the action did, in words ("approved"); an
// action without words of its own reads as its code split into words
// ("filing.hold_over" reads "filing hold over").
func Verb(action string) string {
	if v, ok := verbs[action]; ok {
		return v
	}
	return strings.NewReplacer(".", " ", "_", " ").Replace(action)
}

// Subject names what an event is about: "filing #12", "listing 7".
func Subject(e Event) string {
	switch e.SubjectType {
	case "filing":
		return fmt.Sprintf("filing #%d", e.SubjectID)
	case "api_token":
		return fmt.Sprintf("API token %d", e.SubjectID)
	}
	return fmt.Sprintf("%s %d", strings.ReplaceAll(e.SubjectType, "_", " "), e.SubjectID)
}

// Link is the page of what an event is about, or "".
func Link(e Event) string {
	switch e.SubjectType {
	case "filing":
		return fmt.Sprintf("/filings/%d", e.SubjectID)
	case "listing":
		return fmt.Sprintf("/listings/%d", e.SubjectID)
	}
	return ""
}

// Sentence says what happened: who did what to what, and what changed.
func Sentence(e Event) string {
	who := e.ActorEmail
	if who == "" {
		who = "Airside"
	}
	s := who + " " + Verb(e.Action) + " " + Subject(e)
	if d := Details(e); d != "" {
		s += ": " + d
	}
	return s
}

// Details says what changed, from the event's before and after: "state
// submitted → published", "priorityBp 10000 → 5000".
func Details(e Event) string {
	before, after := decode(e.Before), decode(e.After)
	keys := map[string]bool{}
	for k := range before {
		keys[k] = true
	}
	for k := range after {
		keys[k] = true
	}
	names := make([]string, 0, len(keys))
	for k := range keys {
		names = append(names, k)
	}
	sort.Strings(names)
	var parts []string
	for _, k := range names {
		b, hasB := before[k]
		a, hasA := after[k]
		switch {
		case hasB && hasA && b != a:
			parts = append(parts, fmt.Sprintf("%s %s → %s", words(k), b, a))
		case hasA && !hasB && a != "":
			parts = append(parts, fmt.Sprintf("%s %s", words(k), a))
		case hasB && !hasA:
			parts = append(parts, fmt.Sprintf("%s was %s", words(k), b))
		}
	}
	return strings.Join(parts, ", ")
}

// decode reads a before/after JSON object as text values; a change list or
// object inside becomes a short summary.
func decode(raw string) map[string]string {
	out := map[string]string{}
	if raw == "" {
		return out
	}
	var m map[string]any
	if err := json.Unmarshal([]byte(raw), &m); err != nil {
		return out
	}
	for k, v := range m {
		switch x := v.(type) {
		case nil:
			out[k] = "none"
		case string:
			out[k] = x
		case float64:
			out[k] = fmt.Sprint(x)
		case bool:
			out[k] = fmt.Sprint(x)
		case []any:
			if k == "changes" {
				out[k] = changesText(x)
			} else {
				items := make([]string, len(x))
				for i, it := range x {
					items[i] = fmt.Sprint(it)
				}
				out[k] = strings.Join(items, ", ")
			}
		default:
			b, _ := json.Marshal(x)
			out[k] = string(b)
		}
	}
	return out
}

// changesText summarises a filing's change list: "input $0.50 → $0.45".
func changesText(list []any) string {
	var parts []string
	for _, it := range list {
		c, ok := it.(map[string]any)
		if !ok {
			continue
		}
		label, _ := c["label"].(string)
		if label == "" {
			label, _ = c["field"].(string)
		}
		old, _ := c["old"].(string)
		new, _ := c["new"].(string)
		parts = append(parts, fmt.Sprintf("%s %s → %s", strings.ToLower(label), orNone(old), orNone(new)))
	}
	return strings.Join(parts, "; ")
}

func orNone(s string) string {
	if s == "" {
		return "none"
	}
	return s
}

// words turns a JSON key into words: "priorityBp" → "priority bp".
func words(key string) string {
	var b strings.Builder
	for i, r := range key {
		if r >= 'A' && r <= 'Z' {
			if i > 0 {
				b.WriteByte(' ')
			}
			b.WriteRune(r + ('a' - 'A'))
			continue
		}
		b.WriteRune(r)
	}
	return b.String()
}
