package store_test

import (
	"context"
	"errors"
	"sync"
	"testing"
	"time"

	"github.com/airside/airside/internal/alerting"
	"github.com/airside/airside/internal/store"
	"github.com/airside/airside/internal/store/storetest"
)

// flakyMailer refuses the first failures sends, then delivers.
type flakyMailer struct {
	mu        sync.Mutex
	failures  int
	delivered []string
	attempts  int
}

func (m *flakyMailer) Send(_ context.Context, to, subject, _ string) error {
	m.mu.Lock()
	defer m.mu.Unlock()
	m.attempts++
	if m.failures > 0 {
		m.failures--
		return errors.New("421 try again later")
	}
	m.delivered = append(m.delivered, to+": "+subject)
	return nil
}

// TestAlertEmailsRefusedAreSentAgain: an alert e-mail the relay refused is
// tried again on the outbox's schedule, by one process of two, until it
// goes; one refused for a whole day is given up.
func TestAlertEmailsRefusedAreSentAgain(t *testing.T) {
	storetest.ForEach(t, func(t *testing.T, s *store.Store) {
		ctx := context.Background()
		now := time.Date(2026, 12, 2, 9, 0, 0, 0, time.UTC)
		s.Now = func() time.Time { return now }
		mail := &flakyMailer{failures: 1}
		evaluators := []*alerting.Evaluator{{Store: s, Now: s.Now, Log: quiet, Mail: mail, Outbox: s},
			{Store: s, Now: s.Now, Log: quiet, Mail: mail, Outbox: s}}
		first := alerting.QueuedEmail{To: "ops@nebula.example", Subject: "Airside alert: uptime", Body: "b", Attempts: 1,
			NextAttemptAt: now.Add(alerting.MailRetryWait(1)), LastError: "421"}
		if err := s.QueueAlertEmail(ctx, first); err != nil {
			t.Fatal(err)
		}
		once := func() {
			t.Helper()
			var wg sync.WaitGroup
			for _, e := range evaluators {
				wg.Go(func() {
					if err := e.Once(ctx); err != nil {
						t.Error(err)
					}
				})
			}
			wg.Wait()
		}
		once()
		if mail.attempts != 0 {
			t.Fatalf("%d attempts before the retry was due", mail.attempts)
		}
		now = now.Add(time.Minute)
		once() // refused again: next in 2 minutes
		if mail.attempts != 1 || len(mail.delivered) != 0 {
			t.Fatalf("after the first retry: %d attempts, %d delivered; want 1, 0", mail.attempts, len(mail.delivered))
		}
		now = now.Add(time.Minute)
		once()
		if mail.attempts != 1 {
			t.Fatalf("retried before its 2-minute wait: %d attempts", mail.attempts)
		}
		now = now.Add(time.Minute)
		once()
		if mail.attempts != 2 || len(mail.delivered) != 1 {
			t.Fatalf("two processes at the due retry: %d attempts, %d delivered; want 2, 1", mail.attempts, len(mail.delivered))
		}
		now = now.Add(time.Hour)
		once()
		if mail.attempts != 2 {
			t.Error("a delivered e-mail was sent again")
		}

		// Refused for a day: given up, and then left alone.
		mail.failures = 1 << 20
		if err := s.QueueAlertEmail(ctx, alerting.QueuedEmail{To: "ops@nebula.example", Subject: "x", Body: "b", Attempts: 1,
			NextAttemptAt: now.Add(time.Minute)}); err != nil {
			t.Fatal(err)
		}
		for range 40 {
			now = now.Add(time.Hour)
			once()
		}
		n := mail.attempts
		now = now.Add(2 * time.Hour)
		once()
		if mail.attempts != n {
			t.Error("an e-mail refused for a day is still being tried")
		}
		if due, _ := s.DueAlertEmails(ctx, now.Add(365*24*time.Hour), 10); len(due) != 0 {
			t.Errorf("%d e-mails still due after giving up", len(due))
		}
	})
}
