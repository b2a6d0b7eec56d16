package store

import (
	"context"
	"fmt"
	"strconv"
	"sync"
	"time"

	"github.com/jackc/pgx/v5"
	"gorm.io/gorm"
)

// NotifyChannel is the PostgreSQL channel publications are announced on.
const NotifyChannel = "airside_catalogue"

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
		s.pubs.signal() // anything may have been missed: let waiters look
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
	if _, err := conn.Exec(ctx, "LISTEN "+NotifyChannel); err != nil {
		return fmt.Errorf("listen: %w", err)
	}
	for {
		if _, err := conn.WaitForNotification(ctx); err != nil {
			return fmt.Errorf("listen: wait: %w", err)
		}
		s.pubs.signal()
	}
}
