package store

import (
	"context"
	"crypto/rand"
	"fmt"
	"strconv"
	"strings"
	"sync"
	"time"

	"github.com/jackc/pgx/v5"
	"gorm.io/gorm"
)

// NotifyChannel is the PostgreSQL channel publications are announced on.
const NotifyChannel = "airside_catalogue"

// MetricsChannel is the PostgreSQL channel metric writes are announced on,
// so every serve process's kept figures (the projection's hours, the
// demand mix) know another process's writes made them stale, as they know
// their own: two portals never show a carrier two shares for one hour.
// The payload is the writing process's token and the earliest minute the
// writes touched (Unix seconds; empty: not known).
const MetricsChannel = "airside_metrics"

// announceEvery coalesces a process's metric announcements: at most one
// NOTIFY this often, naming the earliest minute touched since the last.
const announceEvery = 100 * time.Millisecond

// metricAnnouncer gathers this process's metric writes for one NOTIFY.
type metricAnnouncer struct {
	mu      sync.Mutex
	token   string
	pending bool
	from    time.Time // earliest touched; zero with unknown
	unknown bool
	// remote are called after another process's writes are counted.
	remote []func()
}

// announce tells the other serve processes of a metric write (PostgreSQL
// only; SQLite is one process), coalesced so a burst of batches costs one
// NOTIFY.
func (s *Store) announce(from time.Time) {
	if s.dialect != Postgres {
		return
	}
	a := &s.announced
	a.mu.Lock()
	defer a.mu.Unlock()
	if from.IsZero() {
		a.unknown = true
	} else if a.from.IsZero() || from.Before(a.from) {
		a.from = from
	}
	if a.pending {
		return
	}
	a.pending = true
	time.AfterFunc(announceEvery, s.sendAnnouncement)
}

func (s *Store) sendAnnouncement() {
	a := &s.announced
	a.mu.Lock()
	if a.token == "" {
		a.token = rand.Text()
	}
	payload := a.token + "|"
	if !a.unknown && !a.from.IsZero() {
		payload += strconv.FormatInt(a.from.Unix(), 10)
	}
	a.pending, a.from, a.unknown = false, time.Time{}, false
	a.mu.Unlock()
	ctx, cancel := context.WithTimeout(context.Background(), 5*time.Second)
	defer cancel()
	// Lost, the other processes' figures are stale until they expire
	// (a minute): nothing to retry for.
	_ = s.db.WithContext(ctx).Exec("SELECT pg_notify(?, ?)", MetricsChannel, payload).Error
}

// OnRemoteMetrics calls fn after every metric write another serve process
// announced (with ListenForPublications running): the demand mix forgets
// what it kept.
func (s *Store) OnRemoteMetrics(fn func()) {
	s.announced.mu.Lock()
	defer s.announced.mu.Unlock()
	s.announced.remote = append(s.announced.remote, fn)
}

// remoteMetrics counts another process's announced writes as this
// process's own would be, then calls the hooks.
func (s *Store) remoteMetrics(payload string) {
	token, from, _ := strings.Cut(payload, "|")
	s.announced.mu.Lock()
	own := token != "" && token == s.announced.token
	hooks := s.announced.remote
	s.announced.mu.Unlock()
	if own {
		return
	}
	var at time.Time
	if secs, err := strconv.ParseInt(from, 10, 64); err == nil {
		at = time.Unix(secs, 0).UTC()
	}
	s.markWrite(at)
	for _, h := range hooks {
		h()
	}
}

// publications wakes waiters of this process when the catalogue revision
// rises: closing the current channel wakes every waiter at once.
type publications struct {
	mu    sync.Mutex
	ch    chan struct{}
	hooks []func()
}

func (p *publications) next() <-chan struct{} {
	p.mu.Lock()
	defer p.mu.Unlock()
	if p.ch == nil {
		p.ch = make(chan struct{})
	}
	return p.ch
}

// signal runs the hooks first, then wakes the waiters: a long poll woken by
// a publication reads the routing snapshot, which must already know it is
// stale (the hook invalidates it), or the poll would answer the old revision
// and wait again.
func (p *publications) signal() {
	p.mu.Lock()
	hooks := p.hooks
	p.mu.Unlock()
	for _, h := range hooks {
		h()
	}
	p.mu.Lock()
	if p.ch != nil {
		close(p.ch)
		p.ch = nil
	}
	p.mu.Unlock()
}

// OnPublished calls fn, synchronously and quickly, after every publication
// this process sees (its own once committed, or another's with
// ListenForPublications running): the routing snapshot invalidates itself.
func (s *Store) OnPublished(fn func()) {
	s.pubs.mu.Lock()
	defer s.pubs.mu.Unlock()
	s.pubs.hooks = append(s.pubs.hooks, fn)
}

// Published returns a channel closed at the next publication seen by this
// process: its own, or (with ListenForPublications running on PostgreSQL)
// another process's.
func (s *Store) Published() <-chan struct{} { return s.pubs.next() }

// notifyPublication announces a revision inside the publishing transaction:
// PostgreSQL delivers NOTIFY on commit, so waiters elsewhere see only
// committed revisions.
func notifyPublication(tx *gorm.DB, rev int64) error {
	if tx.Dialector.Name() != "postgres" {
		return nil
	}
	if err := tx.Exec("SELECT pg_notify(?, ?)", NotifyChannel, strconv.FormatInt(rev, 10)).Error; err != nil {
		return fmt.Errorf("notify publication: %w", err)
	}
	return nil
}

// ListenForPublications relays PostgreSQL notifications of publications by any
// serve process to this process's waiters, until ctx ends. It reconnects after
// a failure. On SQLite (one process) it returns at once.
func (s *Store) ListenForPublications(ctx context.Context, onError func(error)) {
	if s.dialect != Postgres {
		return
	}
	for ctx.Err() == nil {
		err := s.listenOnce(ctx)
		if ctx.Err() != nil {
			return
		}
		onError(err)
		s.markSuspect()
		s.pubs.signal()      // anything may have been missed: let waiters look
		s.remoteMetrics("|") // and kept figures read again
		select {
		case <-ctx.Done():
			return
		case <-time.After(2 * time.Second):
		}
	}
}

func (s *Store) listenOnce(ctx context.Context) error {
	conn, err := pgx.Connect(ctx, s.url)
	if err != nil {
		return fmt.Errorf("listen: connect: %w", err)
	}
	defer conn.Close(context.Background())
	if _, err := conn.Exec(ctx, "LISTEN "+NotifyChannel+"; LISTEN "+MetricsChannel); err != nil {
		return fmt.Errorf("listen: %w", err)
	}
	for {
		n, err := conn.WaitForNotification(ctx)
		if err != nil {
			return fmt.Errorf("listen: wait: %w", err)
		}
		if n.Channel == MetricsChannel {
			s.remoteMetrics(n.Payload)
			continue
		}
		s.pubs.signal()
	}
}
