package alerting

import (
	"context"
	"time"
)

// Alert e-mails a relay refused are not lost: they wait in an outbox and
// are sent again with growing waits (1, 2, 4 ... 60 minutes) for a day.

// QueuedEmail is an alert e-mail waiting for another attempt.
type QueuedEmail struct {
	ID                int64
	To, Subject, Body string
	CreatedAt         time.Time
	Attempts          int
	NextAttemptAt     time.Time
	LastError         string
}

// Attempt is how one more attempt went.
type Attempt struct {
	Sent, GiveUp  bool
	NextAttemptAt time.Time
	Error         string
}

// MailOutbox keeps alert e-mails for another attempt.
type MailOutbox interface {
	QueueAlertEmail(ctx context.Context, m QueuedEmail) error
	DueAlertEmails(ctx context.Context, now time.Time, limit int) ([]QueuedEmail, error)
	// ClaimAlertEmail takes m for one attempt (false: another process
	// took it), holding it until then.
	ClaimAlertEmail(ctx context.Context, m QueuedEmail, until time.Time) (bool, error)
	FinishAlertEmail(ctx context.Context, id int64, a Attempt) error
}

// The outbox's schedule.
const (
	mailRetryFirst = time.Minute
	mailRetryMax   = time.Hour
	mailGiveUp     = 24 * time.Hour
	mailClaim      = 5 * time.Minute // longer than one attempt takes
)

// MailRetryWait is how long after its nth failed attempt (1-based) an
// e-mail is tried again.
func MailRetryWait(n int) time.Duration {
	wait := mailRetryFirst
	for i := 1; i < n && wait < mailRetryMax; i++ {
		wait *= 2
	}
	return min(wait, mailRetryMax)
}

// retryMail sends the outbox's due e-mails once each.
func (e *Evaluator) retryMail(ctx context.Context) {
	if e.Outbox == nil || e.Mail == nil {
		return
	}
	now := e.Now().UTC()
	due, err := e.Outbox.DueAlertEmails(ctx, now, 50)
	if err != nil {
		e.Log.Warn("alerts: e-mail outbox", "err", err)
		return
	}
	for _, m := range due {
		claimed, err := e.Outbox.ClaimAlertEmail(ctx, m, now.Add(mailClaim))
		if err != nil || !claimed {
			continue
		}
		send, cancel := context.WithTimeout(ctx, 20*time.Second)
		err = e.Mail.Send(send, m.To, m.Subject, m.Body)
		cancel()
		a := Attempt{Sent: err == nil}
		if err != nil {
			a.Error = err.Error()
			a.GiveUp = now.Sub(m.CreatedAt) >= mailGiveUp
			a.NextAttemptAt = now.Add(MailRetryWait(m.Attempts + 1))
			e.Log.Warn("alerts: e-mail retry", "to", m.To, "attempt", m.Attempts+1, "giveUp", a.GiveUp, "err", err)
		}
		if err := e.Outbox.FinishAlertEmail(ctx, m.ID, a); err != nil {
			e.Log.Warn("alerts: e-mail outbox", "err", err)
		}
	}
}
