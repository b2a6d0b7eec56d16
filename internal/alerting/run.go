package alerting

import (
	"bytes"
	"context"
	"crypto/rand"
	"fmt"
	"io"
	"log/slog"
	"net/http"
	"sort"
	"strconv"
	"sync"
	"sync/atomic"
	"time"
)

// Listing is a listing alerts are judged for.
type Listing struct {
	ID, CarrierID, ModelID int64
	Name                   string // carrier/model
}

// EvalStore is what the evaluator needs from storage.
type EvalStore interface {
	AlertSignals(ctx context.Context, now time.Time, window time.Duration) ([]Listing, map[int64]Signals, error)
	OpenAlerts(ctx context.Context) ([]Alert, error)
	OpenAlert(ctx context.Context, a Alert, message string) (bool, error)
	ResolveAlert(ctx context.Context, a Alert, message, detail string) (bool, error)
	ListingRanks(ctx context.Context) (map[int64]map[string][2]int64, error)
	SaveListingRanks(ctx context.Context, ranks map[int64]map[string][2]int64) error
}

// Ranks are listings' ranks now in each standard scenario, with each
// listing's own catalogue revision (a rank that moved while the listing's
// revision did not was moved by someone else) and the scenarios' names.
type Ranks struct {
	Rank     map[int64]map[string]int64
	Revision map[int64]int64
	Names    map[string]string
}

// Mailer sends one e-mail (mailer.SMTP).
type Mailer interface {
	Send(ctx context.Context, to, subject, body string) error
}

// Evaluator opens and resolves alerts, inside serve, every minute.
type Evaluator struct {
	Store EvalStore
	Rules Rules
	// Mail, when set (AIRSIDE_SMTP_URL), e-mails each alert that opens or
	// recovers to Recipients(carrier): the carrier's admins by default,
	// and whoever chose it on their account page.
	Mail       Mailer
	Recipients func(ctx context.Context, carrierID int64) ([]string, error)
	// Outbox keeps e-mails the relay refused for another attempt (nil: a
	// refused e-mail is only logged).
	Outbox MailOutbox
	// Ranks computes the ranks now (from the routing snapshot); nil skips
	// the rank alerts.
	Ranks func(ctx context.Context, now time.Time) (Ranks, error)
	Now   func() time.Time
	Log   *slog.Logger
}

// Once judges every listing in service now.
func (e *Evaluator) Once(ctx context.Context) error {
	e.retryMail(ctx)
	now := e.Now().UTC()
	rules := e.Rules.withDefaults()
	listings, signals, err := e.Store.AlertSignals(ctx, now, rules.Window)
	if err != nil {
		return err
	}
	open, err := e.Store.OpenAlerts(ctx)
	if err != nil {
		return err
	}
	type key struct {
		listing int64
		kind    Kind
	}
	openBy := map[key]Alert{}
	for _, a := range open {
		openBy[key{a.ListingID, a.Kind}] = a
	}
	for _, l := range listings {
		for kind, f := range Judge(rules, signals[l.ID]) {
			a, isOpen := openBy[key{l.ID, kind}]
			switch {
			case f.Holds && !isOpen:
				msg := NoticeOpened(l.Name, kind, f.Detail)
				opened, err := e.Store.OpenAlert(ctx, Alert{CarrierID: l.CarrierID, ListingID: l.ID, Listing: l.Name, Kind: kind, Detail: f.Detail}, msg)
				if err != nil {
					return err
				}
				if opened { // only the process that opened it: one e-mail per alert
					e.mail(ctx, l.CarrierID, EmailSubjectOpened(l.Name, kind), msg)
				}
			case !f.Holds && isOpen:
				a.Listing = l.Name
				msg := NoticeRecovered(l.Name, kind, f.Detail)
				resolved, err := e.Store.ResolveAlert(ctx, a, msg, f.Detail)
				if err != nil {
					return err
				}
				if resolved {
					e.mail(ctx, l.CarrierID, EmailSubjectRecovered(l.Name, kind), msg)
				}
			}
		}
	}
	if e.Ranks == nil {
		return nil
	}
	return e.rankAlerts(ctx, now, listings, openBy2(open))
}

// mail e-mails an alert's message to the carrier's recipients. A refused
// e-mail goes to the outbox, tried again at later passes: a relay that is
// down must not hold this one.
func (e *Evaluator) mail(ctx context.Context, carrierID int64, subject, body string) {
	if e.Mail == nil || e.Recipients == nil {
		return
	}
	to, err := e.Recipients(ctx, carrierID)
	if err != nil {
		e.Log.Warn("alerts: e-mail recipients", "carrier", carrierID, "err", err)
		return
	}
	for _, addr := range to {
		send, cancel := context.WithTimeout(ctx, 20*time.Second)
		text := body + "\n\n" + EmailFooter
		err := e.Mail.Send(send, addr, subject, text)
		cancel()
		if err == nil {
			continue
		}
		e.Log.Warn("alerts: e-mail", "to", addr, "err", err)
		if e.Outbox != nil {
			m := QueuedEmail{To: addr, Subject: subject, Body: text, Attempts: 1, NextAttemptAt: e.Now().Add(MailRetryWait(1)), LastError: err.Error()}
			if err := e.Outbox.QueueAlertEmail(ctx, m); err != nil {
				e.Log.Warn("alerts: e-mail outbox", "to", addr, "err", err)
			}
		}
	}
}

func openBy2(open []Alert) map[int64]Alert {
	out := map[int64]Alert{}
	for _, a := range open {
		if a.Kind == RankMoved {
			out[a.ListingID] = a
		}
	}
	return out
}

// rankAlerts tells a carrier when its rank in a standard scenario got worse
// while its own listing did not change: a competitor moved it. The alert is
// an event: it resolves, silently, at the next pass with no such move.
func (e *Evaluator) rankAlerts(ctx context.Context, now time.Time, listings []Listing, open map[int64]Alert) error {
	ranks, err := e.Ranks(ctx, now)
	if err != nil {
		return err
	}
	before, err := e.Store.ListingRanks(ctx)
	if err != nil {
		return err
	}
	seen := map[int64]map[string][2]int64{}
	for _, l := range listings {
		var moves []string
		scenarios := make([]string, 0, len(ranks.Rank[l.ID]))
		for sc := range ranks.Rank[l.ID] {
			scenarios = append(scenarios, sc)
		}
		sort.Strings(scenarios)
		for _, sc := range scenarios {
			r := ranks.Rank[l.ID][sc]
			if seen[l.ID] == nil {
				seen[l.ID] = map[string][2]int64{}
			}
			seen[l.ID][sc] = [2]int64{r, ranks.Revision[l.ID]}
			prev, ok := before[l.ID][sc]
			if ok && prev[1] == ranks.Revision[l.ID] && r > prev[0] {
				moves = append(moves, rankMove(ranks.Names[sc], r, prev[0]))
			}
		}
		a, isOpen := open[l.ID]
		switch {
		case len(moves) > 0 && !isOpen:
			detail := rankMovedDetail(moves)
			msg := NoticeRankMoved(l.Name, detail)
			opened, err := e.Store.OpenAlert(ctx, Alert{CarrierID: l.CarrierID, ListingID: l.ID, Listing: l.Name, Kind: RankMoved, Detail: detail}, msg)
			if err != nil {
				return err
			}
			if opened {
				e.mail(ctx, l.CarrierID, EmailSubjectOpened(l.Name, RankMoved), msg)
			}
		case len(moves) == 0 && isOpen:
			if _, err := e.Store.ResolveAlert(ctx, a, "", ""); err != nil {
				return err
			}
		}
	}
	return e.Store.SaveListingRanks(ctx, seen)
}

func joinMoves(m []string) string {
	var b bytes.Buffer
	for i, s := range m {
		if i > 0 {
			b.WriteString("; ")
		}
		b.WriteString(s)
	}
	return b.String()
}

// Run evaluates every interval until ctx ends.
func (e *Evaluator) Run(ctx context.Context, every time.Duration) {
	t := time.NewTicker(every)
	defer t.Stop()
	for {
		if err := e.Once(ctx); err != nil && ctx.Err() == nil {
			e.Log.Warn("alerts: evaluate", "err", err)
		}
		select {
		case <-ctx.Done():
			return
		case <-t.C:
		}
	}
}

// SendStore is what the webhook sender needs from storage.
type SendStore interface {
	ClaimDeliveries(ctx context.Context, lease time.Duration, limit int) ([]Delivery, error)
	FinishDelivery(ctx context.Context, id int64, delivered bool, status int, errText string, next time.Time) error
}

// Sender posts queued events to carriers' webhooks: signed, through the
// outbound-address rule (its HTTP client), retried with backoff.
type Sender struct {
	Store      SendStore
	HTTP       *http.Client
	OpenSecret func(sealed string, carrierID int64) (string, error)
	Now        func() time.Time
	Log        *slog.Logger
	// IDKey keys the webhook-id of each delivery (StandardMessageID); every
	// process of one portal must hold the same (wire derives it from the
	// portal's secret key). Nil: a random key made once for this sender.
	IDKey []byte

	once     sync.Once
	wake     chan struct{}
	keyOnce  sync.Once
	ownIDKey []byte

	// For the operator (Stats): attempts by outcome.
	delivered, retried, gaveUp atomic.Int64
}

// SenderStats are a sender's delivery attempts since start, by outcome.
type SenderStats struct {
	// Delivered got a 2xx; Retried failed and wait for another attempt;
	// GaveUp failed their last attempt.
	Delivered, Retried, GaveUp int64
}

// Stats are the sender's counters, for metrics.
func (s *Sender) Stats() SenderStats {
	return SenderStats{Delivered: s.delivered.Load(), Retried: s.retried.Load(), GaveUp: s.gaveUp.Load()}
}

// Once attempts every due delivery and returns how many it attempted.
func (s *Sender) Once(ctx context.Context) (int, error) {
	due, err := s.Store.ClaimDeliveries(ctx, 2*time.Minute, 50)
	if err != nil {
		return 0, err
	}
	for _, d := range due {
		status, sendErr := s.send(ctx, d)
		delivered := sendErr == nil && status >= 200 && status < 300
		errText := ""
		if sendErr != nil {
			errText = deliveryProblem(sendErr)
			if s.Log != nil { // the Go error, for operators; the carrier reads the words above
				s.Log.Info("webhooks: delivery failed", "delivery", d.ID, "err", sendErr)
			}
		} else if !delivered {
			errText = "the receiver answered " + strconv.Itoa(status)
		}
		var next time.Time
		if !delivered {
			if wait := Backoff(d.Attempts + 1); wait > 0 {
				next = s.Now().Add(wait)
			}
		}
		switch {
		case delivered:
			s.delivered.Add(1)
		case next.IsZero():
			s.gaveUp.Add(1)
		default:
			s.retried.Add(1)
		}
		if err := s.Store.FinishDelivery(ctx, d.ID, delivered, status, errText, next); err != nil {
			return 0, err
		}
	}
	return len(due), nil
}

func (s *Sender) send(ctx context.Context, d Delivery) (int, error) {
	if d.URL == "" {
		return 0, errNoWebhook
	}
	secret, err := s.OpenSecret(d.SecretSealed, d.CarrierID)
	if err != nil {
		return 0, fmt.Errorf("the webhook's secret cannot be read: %w", err)
	}
	req, err := http.NewRequestWithContext(ctx, http.MethodPost, d.URL, bytes.NewReader([]byte(d.Body)))
	if err != nil {
		return 0, err
	}
	req.Header.Set("Content-Type", "application/json")
	req.Header.Set("User-Agent", "Airside-Webhooks/1")
	req.Header.Set("Airside-Event", d.Event)
	msgID := StandardMessageID(s.idKey(), d.ID)
	req.Header.Set("Airside-Delivery", msgID)
	now := s.Now()
	req.Header.Set("Airside-Signature", Signature(secret, now, []byte(d.Body))) // the 1.x scheme, for one version
	sig, err := StandardSignature(secret, msgID, now, []byte(d.Body))
	if err != nil {
		return 0, err
	}
	if d.PreviousSecretSealed != "" {
		// During a rotation both secrets sign, space-separated, and a
		// receiver holding either accepts the delivery.
		previous, err := s.OpenSecret(d.PreviousSecretSealed, d.CarrierID)
		if err != nil {
			return 0, fmt.Errorf("the webhook's previous secret cannot be read: %w", err)
		}
		old, err := StandardSignature(previous, msgID, now, []byte(d.Body))
		if err != nil {
			return 0, err
		}
		sig += " " + old
	}
	req.Header.Set("webhook-id", msgID)
	req.Header.Set("webhook-timestamp", strconv.FormatInt(now.Unix(), 10))
	req.Header.Set("webhook-signature", sig)
	resp, err := s.HTTP.Do(req)
	if err != nil {
		return 0, err
	}
	defer resp.Body.Close()
	_, _ = io.Copy(io.Discard, io.LimitReader(resp.Body, 64<<10))
	return resp.StatusCode, nil
}

// idKey is IDKey, or a random key of this sender's own.
func (s *Sender) idKey() []byte {
	if s.IDKey != nil {
		return s.IDKey
	}
	s.keyOnce.Do(func() {
		s.ownIDKey = make([]byte, 32)
		_, _ = rand.Read(s.ownIDKey)
	})
	return s.ownIDKey
}

// Run sends every interval, or when woken, until ctx ends.
func (s *Sender) Run(ctx context.Context, every time.Duration) {
	s.init()
	t := time.NewTicker(every)
	defer t.Stop()
	for {
		if _, err := s.Once(ctx); err != nil && ctx.Err() == nil {
			s.Log.Warn("webhooks: send", "err", err)
		}
		select {
		case <-ctx.Done():
			return
		case <-t.C:
		case <-s.wake:
		}
	}
}

// Wake makes the sender look at the queue now (a delivery was queued).
func (s *Sender) Wake() {
	s.init()
	select {
	case s.wake <- struct{}{}:
	default:
	}
}

func (s *Sender) init() {
	s.once.Do(func() { s.wake = make(chan struct{}, 1) })
}
