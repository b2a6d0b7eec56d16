package preflight

import (
	"context"
	"hash/fnv"
	"log/slog"
	"sync"
	"sync/atomic"
	"time"
)

// WorkerStore is what the worker needs from storage.
type WorkerStore interface {
	ClaimPreflight(ctx context.Context, worker string, perCarrier int, stale time.Duration) (*Job, error)
	RecordProbe(ctx context.Context, job *Job, r Result) error
	FinishPreflight(ctx context.Context, job *Job, freshness time.Duration) error
	QueueDailyPreflights(ctx context.Context, every time.Duration, jitter func(listingID int64) time.Duration) (int, error)
}

// Worker runs queued preflights inside serve: every process runs one, and
// the store's claim gives each run to exactly one of them.
type Worker struct {
	Store  WorkerStore
	Runner *Runner
	// OpenKey unseals an endpoint's key for the probes.
	OpenKey func(sealed string, listingID int64) (string, error)
	Name    string // this process, as the claim records it
	// Slots bounds the runs in flight in this process, PerCarrier those of
	// one carrier across every process.
	Slots      int
	PerCarrier int
	// Daily is how often a listing in service is probed again; Jitter
	// spreads those runs; Freshness is how long a passed probe counts.
	Daily     time.Duration
	Jitter    time.Duration
	Freshness time.Duration
	// Poll is how often the queue is looked at without a wake-up.
	Poll time.Duration
	// FinishBackoff is the first wait before finishing a run is tried again
	// (default 200 ms, doubling).
	FinishBackoff time.Duration
	Log           *slog.Logger

	wake chan struct{}
	once sync.Once

	// For the operator (Stats): runs finished here, and probe verdicts.
	runs           atomic.Int64
	passed, failed atomic.Int64
}

// WorkerStats are a worker's counters since start.
type WorkerStats struct {
	// Runs counts runs this process carried out; Passed and Failed the
	// verdicts of their probes.
	Runs, Passed, Failed int64
}

// Stats are the worker's counters, for metrics.
func (w *Worker) Stats() WorkerStats {
	return WorkerStats{Runs: w.runs.Load(), Passed: w.passed.Load(), Failed: w.failed.Load()}
}

func (w *Worker) init() {
	w.once.Do(func() {
		w.wake = make(chan struct{}, 1)
		if w.Slots <= 0 {
			w.Slots = 4
		}
		if w.PerCarrier <= 0 {
			w.PerCarrier = 2
		}
		if w.Daily <= 0 {
			w.Daily = 24 * time.Hour
		}
		if w.Jitter <= 0 {
			w.Jitter = time.Hour
		}
		if w.Freshness <= 0 {
			w.Freshness = 7 * 24 * time.Hour
		}
		if w.Poll <= 0 {
			w.Poll = 2 * time.Second
		}
		if w.Log == nil {
			w.Log = slog.Default()
		}
	})
}

// Wake makes the worker look at the queue now (a run was just queued).
func (w *Worker) Wake() {
	w.init()
	select {
	case w.wake <- struct{}{}:
	default:
	}
}

// jitter spreads a listing's daily run over the jitter window, the same
// offset for the same listing every day.
func (w *Worker) jitter(listingID int64) time.Duration {
	h := fnv.New64a()
	var b [8]byte
	for i := range b {
		b[i] = byte(listingID >> (8 * i))
	}
	_, _ = h.Write(b[:])
	return time.Duration(h.Sum64() % uint64(w.Jitter))
}

// Run works the queue until ctx ends.
func (w *Worker) Run(ctx context.Context) {
	w.init()
	sem := make(chan struct{}, w.Slots)
	var wg sync.WaitGroup
	defer wg.Wait()
	tick := time.NewTicker(w.Poll)
	defer tick.Stop()
	lastDaily := time.Time{}
	for {
		if time.Since(lastDaily) > time.Minute {
			if n, err := w.Store.QueueDailyPreflights(ctx, w.Daily, w.jitter); err != nil && ctx.Err() == nil {
				w.Log.Warn("preflight: queue daily runs", "err", err)
			} else if n > 0 {
				w.Log.Info("preflight: daily runs queued", "count", n)
			}
			lastDaily = time.Now()
		}
	claim:
		for {
			select {
			case sem <- struct{}{}:
			default:
				break claim // every slot busy
			}
			job, err := w.Store.ClaimPreflight(ctx, w.Name, w.PerCarrier, w.staleAfter())
			if err != nil || job == nil {
				<-sem
				if err != nil && ctx.Err() == nil {
					w.Log.Warn("preflight: claim", "err", err)
				}
				break
			}
			wg.Add(1)
			go func() {
				defer wg.Done()
				defer func() { <-sem }()
				w.runJob(ctx, job)
				w.Wake() // a slot is free: look again
			}()
		}
		select {
		case <-ctx.Done():
			return
		case <-tick.C:
		case <-w.wake:
		}
	}
}

// staleAfter is when a running run is taken to be abandoned: well past the
// longest a run can take.
func (w *Worker) staleAfter() time.Duration {
	return time.Duration(len(Probes)+2) * w.Runner.perProbe()
}

// Drain runs every due run now, one at a time, and returns how many: for
// the demo's start and for tests.
func (w *Worker) Drain(ctx context.Context) (int, error) {
	w.init()
	n := 0
	for {
		job, err := w.Store.ClaimPreflight(ctx, w.Name, w.PerCarrier, w.staleAfter())
		if err != nil || job == nil {
			return n, err
		}
		w.runJob(ctx, job)
		n++
	}
}

func (w *Worker) runJob(ctx context.Context, job *Job) {
	key, err := w.OpenKey(job.KeySealed, job.ListingID)
	record := func(r Result) {
		switch r.State {
		case Passed:
			w.passed.Add(1)
		case Failed:
			w.failed.Add(1)
		}
		if err := w.Store.RecordProbe(ctx, job, r); err != nil && ctx.Err() == nil {
			w.Log.Warn("preflight: record probe", "run", job.RunID, "probe", r.Probe, "err", err)
		}
	}
	if err != nil {
		w.Log.Error("preflight: open the endpoint's key", "listing", job.ListingID, "err", err)
		record(Result{Probe: ProbeReachable, State: Failed, At: w.Runner.now(),
			Error: "Airside could not read this endpoint's key (it was sealed with a key this instance does not hold): register the key again."})
	} else {
		w.Runner.Run(ctx, Endpoint{BaseURL: job.BaseURL, Model: job.Model, APIKey: key}, record)
	}
	w.finish(context.WithoutCancel(ctx), job)
	w.runs.Add(1)
}

// finishTries bounds how often finishing a run is tried.
const finishTries = 5

// finish records a run whose probes are done, trying again with backoff when
// that fails (a passing database error, a publication that lost a race), so
// a run whose probes finished does not sit "running" with its verdicts
// unapplied until the stale-run reclaim, minutes later. It runs on a context
// that a shutdown does not cancel: the probes' work is not thrown away.
func (w *Worker) finish(ctx context.Context, job *Job) {
	backoff := w.FinishBackoff
	if backoff <= 0 {
		backoff = 200 * time.Millisecond
	}
	var err error
	for try := 1; try <= finishTries; try++ {
		attempt, cancel := context.WithTimeout(ctx, 10*time.Second)
		err = w.Store.FinishPreflight(attempt, job, w.Freshness)
		cancel()
		if err == nil {
			return
		}
		if try < finishTries {
			time.Sleep(backoff)
			backoff *= 2
		}
	}
	w.Log.Warn("preflight: finish run", "run", job.RunID, "tries", finishTries, "err", err)
}
