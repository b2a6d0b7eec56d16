package web

import (
	"context"
	"fmt"
	"time"
)

// startBackground starts the work every serve process does beside answering
// requests: sweeping sessions and old metrics, publishing filings that
// reached their date, and relaying other processes' publications.
func (s *Server) startBackground(ctx context.Context) {
	s.background.Go(func() { s.sweep(ctx, 10*time.Minute) })
	if s.Metrics != nil && s.Metrics.Inbox != nil {
		// Folds what gateways posted with respond-async; looks every
		// second for batches another serve process took.
		s.background.Go(func() { s.Metrics.Inbox.Run(ctx, time.Second) })
	}
	s.background.Go(func() { s.watchWriter(ctx, 15*time.Second) })
	every := s.ScheduleEvery
	if every <= 0 {
		every = 30 * time.Second
	}
	s.background.Go(func() { s.runScheduler(ctx, every) })
	if s.Preflight != nil {
		s.background.Go(func() { s.Preflight.Run(ctx) }) // returns once its runs are recorded
	}
	s.background.Go(func() { s.Alerts.Run(ctx, time.Minute) })
	if s.Payouts != nil {
		// Issues each month's statements once settled, and credit notes
		// where a settled month's figures moved.
		s.background.Go(func() { s.Payouts.Run(ctx, time.Hour) })
	}
	if s.Feeds != nil {
		// Carriers' provider feeds, each read every 15 minutes.
		s.background.Go(func() { s.Feeds.Run(ctx, func(err error) { s.Log.Warn("provider feeds", "err", err) }) })
	}
	s.background.Go(func() { s.sampleHealth(ctx, 15*time.Second) })
	s.background.Go(func() { s.Webhooks.Run(ctx, 15*time.Second) })
	s.background.Go(func() {
		s.Publications.ListenForPublications(ctx, func(err error) { s.Log.Warn("catalogue listener", "err", err) })
	})
}

// waitBackground waits, until ctx ends, for the background work to stop at
// its safe point (the turn under way finished, a preflight run recorded),
// so the store is not closed under it.
func (s *Server) waitBackground(ctx context.Context) error {
	done := make(chan struct{})
	go func() {
		s.background.Wait()
		if s.Projector != nil {
			s.Projector.Wait()
		}
		close(done)
	}()
	select {
	case <-done:
		return nil
	case <-ctx.Done():
		return fmt.Errorf("background work still running after the grace: %w", ctx.Err())
	}
}

// runScheduler publishes due filings, and starts and ends maintenance
// windows, every interval until ctx ends.
func (s *Server) runScheduler(ctx context.Context, every time.Duration) {
	repeat(ctx, "scheduler", &s.watch, every, true, func(turn context.Context) {
		n, err := s.Filings.PublishDue(turn)
		switch {
		case err != nil && ctx.Err() == nil: // not when shutting down
			s.Log.Error("scheduler: publish due filings", "err", err)
		case n > 0:
			s.Log.Info("scheduler: published due filings", "count", n)
		}
		n, err = s.Maintenance.Apply(turn)
		switch {
		case err != nil && ctx.Err() == nil:
			s.Log.Error("scheduler: maintenance windows", "err", err)
		case n > 0:
			s.Log.Info("scheduler: maintenance windows started or ended", "count", n)
		}
	})
}

// sweep deletes expired sessions, metric buckets older than any metric
// reads and Idempotency-Keys past their day, periodically until ctx ends.
func (s *Server) sweep(ctx context.Context, every time.Duration) {
	repeat(ctx, "session sweep", &s.watch, every, false, func(ctx context.Context) {
		if n, err := s.Accounts.SweepSessions(ctx); err != nil {
			s.Log.Warn("session sweep failed", "err", err)
		} else if n > 0 {
			s.Log.Info("expired sessions removed", "count", n)
		}
		if n, err := s.Metrics.Prune(ctx); err != nil {
			s.Log.Warn("metric bucket sweep failed", "err", err)
		} else if n > 0 {
			s.Log.Info("old metric buckets removed", "count", n)
		}
		if n, err := s.Filings.SweepIdempotencyKeys(ctx); err != nil {
			s.Log.Warn("idempotency key sweep failed", "err", err)
		} else if n > 0 {
			s.Log.Info("old idempotency keys removed", "count", n)
		}
	})
}

// sampleHealth records, once per sample interval, the live health the
// routing catalogue serves (what gateways elect on), for the projection to
// replay (projection.Projector.SampleHealth).
func (s *Server) sampleHealth(ctx context.Context, every time.Duration) {
	repeat(ctx, "health samples", &s.watch, every, true, func(turn context.Context) {
		if _, err := s.Projector.SampleHealth(turn); err != nil && ctx.Err() == nil {
			s.Log.Warn("health sample", "err", err)
		}
	})
}

// turnDeadline bounds one turn of a background loop: a stuck database call
// becomes an error the loop logs, well before the watchdog's StuckAfter.
const turnDeadline = time.Minute

// repeat runs fn every interval (and once at once when now is set) until
// ctx ends, each turn under the watchdog as name and with a context that ends
// after turnDeadline.
func repeat(ctx context.Context, name string, w *watchdog, every time.Duration, now bool, fn func(context.Context)) {
	turn := func() {
		done := w.begin(name)
		defer done()
		turnCtx, cancel := context.WithTimeout(ctx, turnDeadline)
		defer cancel()
		fn(turnCtx)
	}
	if now {
		turn()
	}
	t := time.NewTicker(every)
	defer t.Stop()
	for {
		select {
		case <-ctx.Done():
			return
		case <-t.C:
			turn()
		}
	}
}
