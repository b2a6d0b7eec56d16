package alerting

import (
	"bytes"
	"context"
	"crypto/rand"
	"fmt"
	"io"
	"log/slog"
	"net/http"
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
	// ResolvedSince lists the alerts resolved at or after since, for
	// folding one that opens again into the same alert.
	ResolvedSince(ctx context.Context, since time.Time) ([]Alert, error)
	// OpenAlert, ReopenAlert and ResolveAlert tell the carrier (inbox and
	// webhook) when message is not empty, and report whether this call
	// made the change (several processes judge at once).
	OpenAlert(ctx context.Context, a Alert, message string) (bool, error)
	ReopenAlert(ctx context.Context, a Alert, detail, message string) (bool, error)
	ResolveAlert(ctx context.Context, a Alert, message, detail string) (bool, error)
	AlertConditions(ctx context.Context) ([]Condition, error)
	SaveAlertConditions(ctx context.Context, changed []Condition) error
	AlertRules(ctx context.Context) (map[int64]CarrierRules, error)
	ActiveMutes(ctx context.Context, now time.Time) ([]Mute, error)
	ListingRanks(ctx context.Context) (map[int64]map[string]RankState, error)
	SaveListingRanks(ctx context.Context, ranks map[int64]map[string]RankState) error
}

// Ranks are listings' ranks now in each standard scenario, with each
// listing's own catalogue revision (a rank that moved while the listing's
// revision did not was moved by someone else), the scenarios' names, and
// each listing's model and name (to say which competitor moved it).
type Ranks struct {
	Rank     map[int64]map[string]int64
	Revision map[int64]int64
	Names    map[string]string
	Model    map[int64]string
	Listing  map[int64]string
	// Catalogue is the newest revision among the listings: a competitor
	// whose revision is newer than a baseline's changed since it.
	Catalogue int64
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
	// recovers to Recipients(carrier): whoever chose alerts one by one on
	// their account page (the daily digest, Digest, e-mails the others).
	Mail       Mailer
	Recipients func(ctx context.Context, carrierID int64) ([]string, error)
	// Outbox keeps e-mails the relay refused for another attempt (nil: a
	// refused e-mail is only logged).
	Outbox MailOutbox
	// Ranks computes the ranks now (from the routing snapshot); nil skips
	// the rank alerts.
	Ranks func(ctx context.Context, now time.Time) (Ranks, error)
	// Digest, when set, sends the day's digests at the end of a pass.
	Digest *Digest
	Now    func() time.Time
	Log    *slog.Logger
}

type condKey struct {
	listing int64
	kind    Kind
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
	recent, err := e.Store.ResolvedSince(ctx, now.Add(-FoldWindow))
	if err != nil {
		return err
	}
	stored, err := e.Store.AlertConditions(ctx)
	if err != nil {
		return err
	}
	carrierRules, err := e.Store.AlertRules(ctx)
	if err != nil {
		return err
	}
	mutes, err := e.Store.ActiveMutes(ctx, now)
	if err != nil {
		return err
	}
	openBy, lastResolved, conds := map[condKey]Alert{}, map[condKey]Alert{}, map[condKey]Condition{}
	for _, a := range open {
		openBy[condKey{a.ListingID, a.Kind}] = a
	}
	for _, a := range recent {
		k := condKey{a.ListingID, a.Kind}
		if prev, ok := lastResolved[k]; !ok || a.ResolvedAt.After(*prev.ResolvedAt) {
			lastResolved[k] = a
		}
	}
	for _, c := range stored {
		conds[condKey{c.ListingID, c.Kind}] = c
	}
	var rankFindings map[int64]Finding
	if e.Ranks != nil {
		if rankFindings, err = e.rankFindings(ctx, listings, signals, carrierRules, rules); err != nil {
			return err
		}
	}
	var changed []Condition
	for _, l := range listings {
		cr := carrierRules[l.CarrierID]
		verdict := Judge(rules, cr, signals[l.ID])
		if f, ok := rankFindings[l.ID]; ok {
			verdict[RankMoved] = f
		}
		for _, kind := range Kinds {
			f, judged := verdict[kind]
			if !judged {
				continue // too little to judge by: an open alert stays open
			}
			k := condKey{l.ID, kind}
			c, seen := conds[k]
			if !seen || c.Holds != f.Holds {
				c = Condition{ListingID: l.ID, Kind: kind, Holds: f.Holds, Since: now}
				changed = append(changed, c)
			}
			var openAlert, resolved *Alert
			if a, ok := openBy[k]; ok {
				openAlert = &a
			}
			if a, ok := lastResolved[k]; ok {
				resolved = &a
			}
			muted := false
			for _, m := range mutes {
				muted = muted || m.Covers(l.ID, kind, now)
			}
			if err := e.act(ctx, l, kind, f, Step(cr.Of(kind), c, openAlert, resolved, now), openAlert, resolved, muted); err != nil {
				return err
			}
		}
	}
	if err := e.Store.SaveAlertConditions(ctx, changed); err != nil {
		return err
	}
	if e.Digest != nil {
		if _, err := e.Digest.Once(ctx); err != nil {
			return fmt.Errorf("daily digest: %w", err)
		}
	}
	return nil
}

// act carries out a step's decision for one rule on one listing: the
// carrier hears of an opening, of the first time it flaps, and of the
// recovery, unless the listing's alerts of the kind are muted.
func (e *Evaluator) act(ctx context.Context, l Listing, kind Kind, f Finding, step Action, open, resolved *Alert, muted bool) error {
	switch step {
	case Open:
		msg := NoticeOpened(l.Name, kind, f.Detail)
		if muted {
			msg = ""
		}
		opened, err := e.Store.OpenAlert(ctx, Alert{CarrierID: l.CarrierID, ListingID: l.ID, Listing: l.Name, Kind: kind, Detail: f.Detail}, msg)
		if err != nil {
			return err
		}
		if opened && msg != "" { // only the process that opened it: one e-mail per alert
			e.mail(ctx, l.CarrierID, EmailSubjectOpened(l.Name, kind), msg)
		}
	case Fold:
		a := *resolved
		a.Listing = l.Name
		msg := ""
		if a.Flaps == 0 && !muted { // the first time it flaps: once
			msg = NoticeFlapping(l.Name, kind, f.Detail)
		}
		reopened, err := e.Store.ReopenAlert(ctx, a, f.Detail, msg)
		if err != nil {
			return err
		}
		if reopened && msg != "" {
			e.mail(ctx, l.CarrierID, EmailSubjectFlapping(l.Name, kind), msg)
		}
	case Resolve, Retire:
		a := *open
		a.Listing = l.Name
		msg := NoticeRecovered(l.Name, kind, f.Detail)
		if step == Retire || muted {
			msg = ""
		}
		resolvedNow, err := e.Store.ResolveAlert(ctx, a, msg, f.Detail)
		if err != nil {
			return err
		}
		if resolvedNow && msg != "" {
			e.mail(ctx, l.CarrierID, EmailSubjectRecovered(l.Name, kind), msg)
		}
	}
	return nil
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
		sendMail(ctx, e.Mail, e.Outbox, e.Log, e.Now(), addr, subject, body+"\n\n"+EmailFooter)
	}
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
