package alerting

import (
	"context"
	"fmt"
	"log/slog"
	"strings"
	"time"
)

// DigestStore is what the daily digest needs from storage.
type DigestStore interface {
	// CarriersWithAlerts are the carriers with an alert open now, or
	// opened, reopened or resolved at or after since.
	CarriersWithAlerts(ctx context.Context, since time.Time) ([]int64, error)
	// AlertsSince are those alerts of one carrier, with listing names.
	AlertsSince(ctx context.Context, carrierID int64, since time.Time) ([]Alert, error)
	// ClaimDigest records that the carrier's digest of day is sent,
	// reporting false when a process already did.
	ClaimDigest(ctx context.Context, carrierID int64, day string) (bool, error)
}

// Digest e-mails each carrier's people who chose it one summary a day of
// their alerts: what is open, what opened and resolved in the last 24
// hours. A carrier with nothing to report gets no e-mail.
type Digest struct {
	Store      DigestStore
	Mail       Mailer
	Recipients func(ctx context.Context, carrierID int64) ([]string, error)
	Outbox     MailOutbox
	// Hour is the UTC hour from which the day's digest is sent (7 by
	// default: before a European morning, after an American evening).
	Hour int
	Now  func() time.Time
	Log  *slog.Logger

	// done is the last day this process went through every carrier: the
	// evaluator calls Once every minute, and a day's digests are looked
	// for once.
	done string
}

// DefaultDigestHour is the UTC hour the digest goes out.
const DefaultDigestHour = 7

// Once sends the day's digests not yet sent, once the hour has come, and
// reports how many carriers' digests this call sent.
func (d *Digest) Once(ctx context.Context) (int, error) {
	if d.Mail == nil || d.Recipients == nil {
		return 0, nil
	}
	now := d.Now().UTC()
	hour := d.Hour
	if hour <= 0 {
		hour = DefaultDigestHour
	}
	if now.Hour() < hour {
		return 0, nil
	}
	day := now.Format(time.DateOnly)
	if d.done == day {
		return 0, nil
	}
	since := time.Date(now.Year(), now.Month(), now.Day(), hour, 0, 0, 0, time.UTC).Add(-24 * time.Hour)
	carriers, err := d.Store.CarriersWithAlerts(ctx, since)
	if err != nil {
		return 0, err
	}
	sent := 0
	for _, carrierID := range carriers {
		to, err := d.Recipients(ctx, carrierID)
		if err != nil {
			return sent, err
		}
		if len(to) == 0 {
			continue
		}
		claimed, err := d.Store.ClaimDigest(ctx, carrierID, day)
		if err != nil || !claimed {
			if err != nil {
				return sent, err
			}
			continue
		}
		alerts, err := d.Store.AlertsSince(ctx, carrierID, since)
		if err != nil {
			return sent, err
		}
		subject, body := DigestEmail(alerts, since, since.Add(24*time.Hour))
		for _, addr := range to {
			sendMail(ctx, d.Mail, d.Outbox, d.Log, now, addr, subject, body+"\n\n"+EmailFooter)
		}
		sent++
	}
	d.done = day
	return sent, nil
}

// DigestEmail is the subject and body of a digest of alerts over
// [from, to): open ones first, then those that opened and resolved.
func DigestEmail(alerts []Alert, from, to time.Time) (string, string) {
	var open, closed []Alert
	for _, a := range alerts {
		if a.ResolvedAt == nil {
			open = append(open, a)
		} else {
			closed = append(closed, a)
		}
	}
	subject := fmt.Sprintf("Airside daily digest: %d open, %d resolved", len(open), len(closed))
	var b strings.Builder
	fmt.Fprintf(&b, "Your Airside alerts from %s to %s UTC.\n", from.Format("2 Jan 15:04"), to.Format("2 Jan 15:04"))
	section := func(title string, list []Alert) {
		if len(list) == 0 {
			return
		}
		fmt.Fprintf(&b, "\n%s (%d):\n", title, len(list))
		for _, a := range list {
			fmt.Fprintf(&b, "- %s is %s: %s.\n  %s\n", a.Listing, a.Kind.Label(), a.Detail, alertSpan(a))
		}
	}
	section("Open now", open)
	section("Resolved", closed)
	return subject, b.String()
}

// alertSpan says when an alert opened, how often it flapped and when it
// resolved.
func alertSpan(a Alert) string {
	s := "Opened " + a.OpenedAt.UTC().Format("2 Jan 15:04") + " UTC"
	if a.Flaps > 0 {
		s += fmt.Sprintf(", came back %s within the hour of recovering (folded into this alert)", Times(a.Flaps))
	}
	if a.ResolvedAt != nil {
		s += ", resolved " + a.ResolvedAt.UTC().Format("2 Jan 15:04") + " UTC"
	}
	return s + "."
}

// Times says how many times in words: "once", "twice", "3 times".
func Times(n int64) string {
	switch n {
	case 1:
		return "once"
	case 2:
		return "twice"
	}
	return fmt.Sprintf("%d times", n)
}

// sendMail e-mails one message, queueing it in the outbox when the relay
// refuses it.
func sendMail(ctx context.Context, mail Mailer, outbox MailOutbox, log *slog.Logger, now time.Time, addr, subject, text string) {
	send, cancel := context.WithTimeout(ctx, 20*time.Second)
	err := mail.Send(send, addr, subject, text)
	cancel()
	if err == nil {
		return
	}
	if log != nil {
		log.Warn("alerts: e-mail", "to", addr, "err", err)
	}
	if outbox != nil {
		m := QueuedEmail{To: addr, Subject: subject, Body: text, Attempts: 1, NextAttemptAt: now.Add(MailRetryWait(1)), LastError: err.Error()}
		if err := outbox.QueueAlertEmail(ctx, m); err != nil && log != nil {
			log.Warn("alerts: e-mail outbox", "to", addr, "err", err)
		}
	}
}
