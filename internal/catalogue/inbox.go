package catalogue

import (
	"context"
	"errors"
	"log/slog"
	"sync"
	"sync/atomic"
	"time"

	"github.com/airside/airside/internal/apperr"
)

// The inbox takes a gateway's batch when it asks for an answer before its
// rows are folded (Prefer: respond-async). Storing a batch (a row per
// bucket, its index entries, its hour's rollup) costs 70-110 µs a bucket
// on its own and 33-36 µs folded with others; writing it whole to the
// inbox costs one row, and commits of several batches are shared. The answer then says the batch is durable and valid,
// not that it is folded: a batch that replays a recorded minute with other
// figures is refused when it is folded (whole, as the synchronous path
// refuses it), logged and counted, instead of answered 409.

// QueuedBatch is a checked batch waiting in the inbox.
type QueuedBatch struct {
	Buckets []Bucket
	Demand  []Demand
}

// Folded is what one fold of the inbox did.
type Folded struct {
	// Batches folded (stored or found to be replays of stored rows), and
	// the buckets and demand rows stored of them.
	Batches, Buckets, DemandRows int
	// Refused are the batches refused in part (rows that replay a recorded
	// key with other figures; their other rows were stored, and the batch
	// is counted in Batches) or whole (it could not be read).
	Refused []RefusedBatch
	// Models whose demand was recorded.
	Models []string
	// More says batches are still waiting.
	More bool
}

// RefusedBatch is an inbox batch refused when it was folded.
type RefusedBatch struct {
	ID         int64
	ReceivedAt time.Time
	Sources    []string
	Err        error // a *ReplayError, or the batch could not be read
	// Partial is set when only the rows the ReplayError names were
	// refused: the batch's other rows were stored.
	Partial bool
}

// InboxStore is what the inbox needs from storage.
type InboxStore interface {
	// AddToInbox stores batches in the inbox, in one transaction.
	AddToInbox(ctx context.Context, batches []QueuedBatch) error
	// FoldInbox folds the oldest batches into the metrics, each all or
	// nothing under RecordBatch's rules, and removes them from the inbox,
	// in one transaction that stops taking batches after budget (at least
	// one) or max.
	FoldInbox(ctx context.Context, budget time.Duration, max int) (Folded, error)
	// InboxSize counts the batches waiting.
	InboxSize(ctx context.Context) (int64, error)
}

// DefaultInboxLimit bounds the batches waiting to be folded: past it a
// batch is refused with 503 and Retry-After (a gateway keeps it and posts
// again) rather than the inbox growing without end. A full inbox of
// 63-bucket batches is about two minutes of folding.
const DefaultInboxLimit = 50000

// ErrInboxFull refuses a batch while the inbox is at its limit.
var ErrInboxFull = &apperr.Error{Code: apperr.EUNAVAILABLE, RetryAfter: 5,
	Message: "The metrics inbox is full: batches are waiting to be folded. Post this batch again after the Retry-After."}

// errInboxStopped refuses a batch when the inbox is not running (or has
// stopped): the caller records it synchronously instead.
var errInboxStopped = errors.New("metrics inbox not running")

// Inbox queues checked batches durably and folds them in the background.
// Commits are shared: the batches that arrive while one commit is under way
// are written together by the next.
type Inbox struct {
	Store InboxStore
	Log   *slog.Logger
	// Limit bounds the batches waiting (DefaultInboxLimit when 0).
	Limit int64
	// Folded, when set, hears of each fold that folded or refused a batch.
	Folded func(Folded)
	// FoldBudget is how long one fold transaction may take batches
	// (default 4 ms): on SQLite a fold holds the one writer, and a commit
	// of new batches waits for it.
	FoldBudget time.Duration

	once    sync.Once
	pending chan *queued
	wake    chan struct{}
	running atomic.Bool
	backlog atomic.Int64
	// arrived counts the batches offered to the writer, committed or not:
	// what tells the fold that gateways are waiting (on SQLite a fold
	// holds the one writer, so no commit completes while it runs).
	arrived  atomic.Uint64
	received atomic.Uint64
	folded   atomic.Uint64
	refused  atomic.Uint64
	stopped  chan struct{}

	recentMu sync.Mutex
	recent   []RefusedBatch // the last refusals, newest last (RecentRefusals)
}

// recentRefusals is how many refusals a process keeps for the operations
// page.
const recentRefusals = 20

// NoteRefused keeps a refusal for the operations page (the folds' and the
// synchronous batches' alike).
func (x *Inbox) NoteRefused(r RefusedBatch) {
	if x == nil {
		return
	}
	x.recentMu.Lock()
	defer x.recentMu.Unlock()
	x.recent = append(x.recent, r)
	if n := len(x.recent); n > recentRefusals {
		x.recent = append(x.recent[:0], x.recent[n-recentRefusals:]...)
	}
}

// RecentRefusals are the last batches this process refused, in whole or in
// part, newest first.
func (x *Inbox) RecentRefusals() []RefusedBatch {
	if x == nil {
		return nil
	}
	x.recentMu.Lock()
	defer x.recentMu.Unlock()
	out := make([]RefusedBatch, len(x.recent))
	for i, r := range x.recent {
		out[len(out)-1-i] = r
	}
	return out
}

// InboxStats are the inbox's counts in this process.
type InboxStats struct {
	// Waiting batches, Received (written to the inbox), Folded and
	// Refused when folded.
	Waiting                   int64
	Received, Folded, Refused uint64
}

// Stats are the inbox's counts.
func (x *Inbox) Stats() InboxStats {
	if x == nil {
		return InboxStats{}
	}
	return InboxStats{Waiting: x.Backlog(), Received: x.received.Load(), Folded: x.folded.Load(), Refused: x.refused.Load()}
}

type queued struct {
	batch QueuedBatch
	done  chan error
}

func (x *Inbox) init() {
	x.once.Do(func() {
		x.pending = make(chan *queued, 1024)
		x.wake = make(chan struct{}, 1)
		x.stopped = make(chan struct{})
	})
}

// Backlog is how many batches wait to be folded, as this process knows.
func (x *Inbox) Backlog() int64 { return max(x.backlog.Load(), 0) }

// Running says the inbox takes batches.
func (x *Inbox) Running() bool { return x != nil && x.running.Load() }

// Enqueue writes a checked batch to the inbox and returns once it is
// durable. ErrInboxFull refuses it at the limit; errInboxStopped when the
// inbox is not running.
func (x *Inbox) Enqueue(ctx context.Context, batch QueuedBatch) error {
	if !x.Running() {
		return errInboxStopped
	}
	limit := x.Limit
	if limit <= 0 {
		limit = DefaultInboxLimit
	}
	if x.backlog.Load() >= limit {
		return ErrInboxFull
	}
	q := &queued{batch: batch, done: make(chan error, 1)}
	// Counted before it is handed over, so a fold that ends after the
	// writer took it has seen it arrive.
	x.arrived.Add(1)
	select {
	case x.pending <- q:
	case <-x.stopped:
		return errInboxStopped
	case <-ctx.Done():
		return ctx.Err()
	}
	select {
	case err := <-q.done:
		return err
	case <-x.stopped:
		// Queued after the writer stopped, or written just before: the
		// caller records it synchronously, a harmless replay in the
		// second case.
		return errInboxStopped
	case <-ctx.Done():
		// It may still be written: a replay of it is harmless.
		return ctx.Err()
	}
}

// maxCommit bounds the batches one inbox commit writes.
const maxCommit = 256

// Run writes and folds batches until ctx ends: the batches queued by
// Enqueue, and those left in the inbox by an earlier process (or, on a
// shared database, written by another). pollEvery is how often it looks for
// another process's batches.
func (x *Inbox) Run(ctx context.Context, pollEvery time.Duration) {
	x.init()
	if n, err := x.Store.InboxSize(ctx); err != nil {
		x.log().Warn("metrics inbox: count waiting batches", "err", err)
	} else {
		x.backlog.Store(n)
	}
	// What an earlier process left is folded now, not at the first poll.
	x.wake <- struct{}{}
	x.running.Store(true)
	var wg sync.WaitGroup
	wg.Go(func() { x.fold(ctx, pollEvery) })
	x.write(ctx)
	x.running.Store(false)
	close(x.stopped)
	wg.Wait()
}

// write commits queued batches until ctx ends, several to a transaction.
func (x *Inbox) write(ctx context.Context) {
	for {
		var group []*queued
		select {
		case <-ctx.Done():
			x.drainPending()
			return
		case q := <-x.pending:
			group = append(group, q)
		}
	gather:
		for len(group) < maxCommit {
			select {
			case q := <-x.pending:
				group = append(group, q)
			default:
				break gather
			}
		}
		batches := make([]QueuedBatch, len(group))
		for i, q := range group {
			batches[i] = q.batch
		}
		err := x.Store.AddToInbox(ctx, batches)
		if err != nil && ctx.Err() != nil {
			err = errInboxStopped // cut off by the stop: recorded synchronously instead
		}
		if err == nil {
			x.backlog.Add(int64(len(group)))
			x.received.Add(uint64(len(group)))
			select {
			case x.wake <- struct{}{}:
			default:
			}
		}
		for _, q := range group {
			q.done <- err
		}
	}
}

// drainPending refuses what is queued but not written when the inbox stops.
func (x *Inbox) drainPending() {
	for {
		select {
		case q := <-x.pending:
			q.done <- errInboxStopped
		default:
			return
		}
	}
}

// fold folds the inbox whenever batches wait. While batches keep arriving
// it folds a tenth of the time, so answering gateways comes first and a
// burst is folded once it has passed; the limit bounds what waits.
func (x *Inbox) fold(ctx context.Context, pollEvery time.Duration) {
	budget := x.FoldBudget
	if budget <= 0 {
		budget = 4 * time.Millisecond
	}
	poll := time.NewTicker(pollEvery)
	defer poll.Stop()
	failures := 0
	for {
		select {
		case <-ctx.Done():
			return
		case <-x.wake:
		case <-poll.C:
		}
		// quiet says nothing arrived during the last fold: no gateway
		// waits for a commit, so the next fold takes ten times as long and
		// more batches share their hours. Arrivals, not commits, are
		// counted: on SQLite no commit completes while a fold holds the
		// writer, and counting commits took every fold of a burst for
		// quiet (40 ms folds, answers waiting behind them). Not known
		// after a wake (a commit wakes it, and others may follow).
		quiet := false
		for ctx.Err() == nil {
			arrived := x.arrived.Load()
			b, most := budget, 64
			if quiet {
				b, most = 10*budget, 256
			}
			start := time.Now()
			res, err := x.Store.FoldInbox(ctx, b, most)
			took := time.Since(start)
			if err != nil {
				if ctx.Err() == nil {
					failures++
					x.log().Error("metrics inbox: fold", "err", err, "waiting", x.Backlog())
					sleep(ctx, min(time.Duration(failures)*time.Second, 30*time.Second))
				}
				break
			}
			failures = 0
			quiet = x.arrived.Load() == arrived
			x.report(res)
			if !res.More {
				if res.Batches == 0 && len(res.Refused) == 0 {
					x.backlog.Store(0) // nothing waits (another process may have folded ours)
				}
				break
			}
			if !quiet {
				sleep(ctx, 9*took)
			}
		}
	}
}

// report counts a fold and logs what it refused.
func (x *Inbox) report(res Folded) {
	n := res.Batches
	for _, r := range res.Refused {
		if !r.Partial {
			n++ // refused whole: not counted as folded
		}
	}
	if n == 0 && len(res.Refused) == 0 {
		return
	}
	x.backlog.Add(-int64(n))
	x.folded.Add(uint64(res.Batches))
	x.refused.Add(uint64(len(res.Refused)))
	for _, r := range res.Refused {
		x.NoteRefused(r)
		x.log().Error("metrics inbox: refused rows that replay recorded minutes with other figures; the first write stands, the batch's other rows were stored",
			"batch", r.ID, "received", r.ReceivedAt, "sources", r.Sources, "partial", r.Partial, "err", r.Err)
	}
	if x.Folded != nil {
		x.Folded(res)
	}
}

func (x *Inbox) log() *slog.Logger {
	if x.Log == nil {
		return slog.Default()
	}
	return x.Log
}

func sleep(ctx context.Context, d time.Duration) {
	t := time.NewTimer(d)
	defer t.Stop()
	select {
	case <-ctx.Done():
	case <-t.C:
	}
}

// Enqueue checks a gateway's batch as RecordBatch does (problems named by
// row and field) and writes it to the inbox, to be folded in the
// background. queued is false when the inbox is not running: the batch was
// then recorded synchronously, as RecordBatch records it.
func (in *Ingest) Enqueue(ctx context.Context, posted []PostedBucket, demand []Demand) (n int, queued bool, err error) {
	buckets, err := in.check(ctx, posted, demand)
	if err != nil || len(buckets) == 0 && len(demand) == 0 {
		return 0, false, err
	}
	if in.Inbox.Running() {
		err := in.Inbox.Enqueue(ctx, QueuedBatch{Buckets: buckets, Demand: demand})
		if !errors.Is(err, errInboxStopped) {
			return len(buckets), err == nil, err
		}
	}
	if err := in.Store.RecordBatch(ctx, buckets, demand); err != nil {
		in.noteReplay(err, buckets, demand)
		return 0, false, replayConflict(err)
	}
	return len(buckets), false, nil
}
