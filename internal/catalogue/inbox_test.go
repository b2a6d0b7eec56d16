package catalogue

import (
	"context"
	"errors"
	"sync"
	"testing"
	"time"

	"github.com/airside/airside/internal/apperr"
)

// inboxStore is an inbox in memory whose commits and folds the test can
// hold.
type inboxStore struct {
	mu      sync.Mutex
	commits [][]QueuedBatch
	waiting []QueuedBatch
	// holdCommit, when set, blocks each commit until it is closed;
	// entered hears of each commit begun.
	holdCommit chan struct{}
	entered    chan struct{}
	// holdFold, when set, blocks each fold until it is closed or sent to.
	holdFold chan struct{}
	folds    int
	// budgets are the fold budgets asked for, in order; perFold, when
	// set, bounds the batches a fold takes.
	budgets []time.Duration
	perFold int
}

func (s *inboxStore) AddToInbox(_ context.Context, batches []QueuedBatch) error {
	if s.entered != nil {
		s.entered <- struct{}{}
	}
	if s.holdCommit != nil {
		<-s.holdCommit
	}
	s.mu.Lock()
	defer s.mu.Unlock()
	s.commits = append(s.commits, batches)
	s.waiting = append(s.waiting, batches...)
	return nil
}

func (s *inboxStore) FoldInbox(_ context.Context, budget time.Duration, max int) (Folded, error) {
	s.mu.Lock()
	s.budgets = append(s.budgets, budget)
	s.mu.Unlock()
	if s.holdFold != nil {
		<-s.holdFold
	}
	s.mu.Lock()
	defer s.mu.Unlock()
	s.folds++
	if s.perFold > 0 {
		max = min(max, s.perFold)
	}
	n := min(max, len(s.waiting))
	var res Folded
	for _, b := range s.waiting[:n] {
		res.Batches++
		for _, d := range b.Demand {
			res.Models = append(res.Models, d.Model)
		}
	}
	s.waiting = s.waiting[n:]
	res.More = len(s.waiting) > 0
	return res, nil
}

func (s *inboxStore) InboxSize(context.Context) (int64, error) {
	s.mu.Lock()
	defer s.mu.Unlock()
	return int64(len(s.waiting)), nil
}

// runInbox runs x until the test ends, once it takes batches.
func runInbox(t *testing.T, x *Inbox) {
	t.Helper()
	ctx, cancel := context.WithCancel(context.Background())
	done := make(chan struct{})
	go func() { x.Run(ctx, time.Hour); close(done) }()
	t.Cleanup(func() { cancel(); <-done })
	eventually(t, "the inbox runs", x.Running)
}

// eventually waits for cond, failing the test after a deadline generous for
// a loaded machine.
func eventually(t *testing.T, what string, cond func() bool) {
	t.Helper()
	deadline := time.Now().Add(30 * time.Second)
	for !cond() {
		if time.Now().After(deadline) {
			t.Fatalf("gave up waiting: %s", what)
		}
		time.Sleep(time.Millisecond)
	}
}

// TestBatchesArrivingDuringACommitShareTheNext: while one commit is under
// way the batches that arrive wait and are written together by the next,
// and each caller hears only once its batch is durable.
func TestBatchesArrivingDuringACommitShareTheNext(t *testing.T) {
	st := &inboxStore{holdCommit: make(chan struct{}), holdFold: make(chan struct{}), entered: make(chan struct{}, 2)}
	x := &Inbox{Store: st}
	runInbox(t, x)
	var release sync.Once
	t.Cleanup(func() { release.Do(func() { close(st.holdCommit) }); close(st.holdFold) }) // before the inbox stops
	ctx := context.Background()
	results := make(chan error, 11)
	go func() { results <- x.Enqueue(ctx, QueuedBatch{Buckets: []Bucket{{ListingID: 1}}}) }()
	// The first commit is under way (held); ten more arrive meanwhile.
	<-st.entered
	for i := range 10 {
		go func() { results <- x.Enqueue(ctx, QueuedBatch{Buckets: []Bucket{{ListingID: int64(2 + i)}}}) }()
	}
	eventually(t, "ten batches wait for the next commit", func() bool { return len(x.pending) == 10 })
	select {
	case err := <-results:
		t.Fatalf("a caller heard before its commit: %v", err)
	default:
	}
	release.Do(func() { close(st.holdCommit) })
	for range 11 {
		if err := <-results; err != nil {
			t.Fatal(err)
		}
	}
	st.mu.Lock()
	defer st.mu.Unlock()
	if len(st.commits) != 2 || len(st.commits[0]) != 1 || len(st.commits[1]) != 10 {
		sizes := []int{}
		for _, c := range st.commits {
			sizes = append(sizes, len(c))
		}
		t.Errorf("commits of %v batches, want [1 10]", sizes)
	}
	if s := x.Stats(); s.Received != 11 || s.Waiting != 11 {
		t.Errorf("stats %+v, want 11 received and waiting (folding is held)", s)
	}
}

// TestAFoldDuringWhichBatchesArriveKeepsTheNextShort: while gateways keep
// posting, each fold takes the short budget, so their commits wait behind
// short folds. A batch that arrives while a fold holds the writer cannot be
// committed before the fold ends (SQLite has one writer), so arrivals, not
// commits, say whether the inbox is quiet.
func TestAFoldDuringWhichBatchesArriveKeepsTheNextShort(t *testing.T) {
	backlog := []QueuedBatch{{Buckets: []Bucket{{ListingID: 1}}}, {Buckets: []Bucket{{ListingID: 2}}}, {Buckets: []Bucket{{ListingID: 3}}}}
	st := &inboxStore{waiting: backlog, perFold: 1, holdFold: make(chan struct{}), holdCommit: make(chan struct{}), entered: make(chan struct{}, 1)}
	x := &Inbox{Store: st, FoldBudget: 4 * time.Millisecond}
	runInbox(t, x)
	t.Cleanup(func() { close(st.holdCommit); close(st.holdFold) }) // before the inbox stops
	budgets := func(n int) func() bool {
		return func() bool { st.mu.Lock(); defer st.mu.Unlock(); return len(st.budgets) >= n }
	}
	// The first fold (of what an earlier process left) is under way; a
	// gateway posts meanwhile, and its commit waits for the writer.
	eventually(t, "the first fold begins", budgets(1))
	go func() { _ = x.Enqueue(context.Background(), QueuedBatch{Buckets: []Bucket{{ListingID: 9}}}) }()
	<-st.entered
	st.holdFold <- struct{}{} // the first fold ends; the commit is still held
	eventually(t, "the second fold begins", budgets(2))
	st.mu.Lock()
	defer st.mu.Unlock()
	if st.budgets[0] != 4*time.Millisecond || st.budgets[1] != 4*time.Millisecond {
		t.Errorf("fold budgets %v: a batch arrived during the first fold, so the second is short too (4ms)", st.budgets)
	}
}

// TestAFullInboxRefusesWithRetryAfter: at its limit the inbox refuses a
// batch as unavailable, with a Retry-After, instead of growing; once
// folding catches up it takes batches again.
func TestAFullInboxRefusesWithRetryAfter(t *testing.T) {
	st := &inboxStore{holdFold: make(chan struct{})}
	x := &Inbox{Store: st, Limit: 2}
	runInbox(t, x)
	ctx := context.Background()
	for i := range 2 {
		if err := x.Enqueue(ctx, QueuedBatch{Buckets: []Bucket{{ListingID: int64(i)}}}); err != nil {
			t.Fatal(err)
		}
	}
	err := x.Enqueue(ctx, QueuedBatch{Buckets: []Bucket{{ListingID: 9}}})
	if apperr.Code(err) != apperr.EUNAVAILABLE || apperr.RetryAfterOf(err) <= 0 {
		t.Fatalf("a third batch over a limit of 2: %v, want unavailable with a Retry-After", err)
	}
	close(st.holdFold)
	eventually(t, "the inbox is folded", func() bool { return x.Backlog() == 0 })
	if err := x.Enqueue(ctx, QueuedBatch{Buckets: []Bucket{{ListingID: 9}}}); err != nil {
		t.Errorf("a batch once the inbox was folded: %v", err)
	}
}

// TestFoldingHearsOfEachFold: a batch is folded without anyone asking once
// it is written, and the fold is reported (the portal drops the demand it
// cached for the models named).
func TestFoldingHearsOfEachFold(t *testing.T) {
	st := &inboxStore{}
	heard := make(chan Folded, 10)
	x := &Inbox{Store: st, Folded: func(f Folded) { heard <- f }}
	runInbox(t, x)
	minute := time.Now().UTC().Truncate(time.Minute)
	if err := x.Enqueue(context.Background(), QueuedBatch{Demand: []Demand{{Model: "kimi", Workload: "chat", Minute: minute, Requests: 1}}}); err != nil {
		t.Fatal(err)
	}
	select {
	case f := <-heard:
		if f.Batches != 1 || len(f.Models) != 1 || f.Models[0] != "kimi" {
			t.Errorf("fold reported %+v", f)
		}
	case <-time.After(30 * time.Second):
		t.Fatal("the batch was never folded")
	}
	eventually(t, "nothing waits", func() bool { return x.Backlog() == 0 })
	if s := x.Stats(); s.Folded != 1 || s.Refused != 0 {
		t.Errorf("stats %+v", s)
	}
}

// TestBatchesLeftByAnEarlierProcessAreFolded: a run starts by counting and
// folding what an earlier process left in the inbox.
func TestBatchesLeftByAnEarlierProcessAreFolded(t *testing.T) {
	st := &inboxStore{waiting: []QueuedBatch{{Buckets: []Bucket{{ListingID: 1}}}, {Buckets: []Bucket{{ListingID: 2}}}}}
	x := &Inbox{Store: st}
	runInbox(t, x)
	eventually(t, "the batches left are folded", func() bool {
		n, _ := st.InboxSize(context.Background())
		return n == 0 && x.Stats().Folded == 2
	})
}

// TestEnqueueWithoutARunningInboxRecordsAtOnce: a batch asking for
// respond-async while the inbox is not running (a process without its
// background work, or stopping) is recorded synchronously, with the
// synchronous path's 409 on a conflicting replay.
func TestEnqueueWithoutARunningInboxRecordsAtOnce(t *testing.T) {
	st := &ingestStore{}
	in := &Ingest{Store: st, Now: time.Now, Inbox: &Inbox{Store: &inboxStore{}}}
	minute := time.Now().UTC().Truncate(time.Minute)
	n, queued, err := in.Enqueue(context.Background(), []PostedBucket{posted("nebula/kimi", Bucket{Minute: minute, Counts: Counts{Requests: 3}})}, nil)
	if err != nil || queued || n != 1 || len(st.recorded) != 1 {
		t.Fatalf("Enqueue: %d %v %v, recorded %d", n, queued, err, len(st.recorded))
	}
	st.replay = []int{0}
	_, _, err = in.Enqueue(context.Background(), []PostedBucket{posted("nebula/kimi", Bucket{Minute: minute, Counts: Counts{Requests: 4}})}, nil)
	if apperr.Code(err) != apperr.ECONFLICT {
		t.Errorf("a conflicting replay recorded at once: %v, want a conflict", err)
	}
	// A bad batch is refused before anything, running inbox or not.
	_, _, err = in.Enqueue(context.Background(), []PostedBucket{posted("nobody/x", Bucket{Minute: minute, Counts: Counts{Requests: 1}})}, nil)
	if fields := apperr.FieldErrors(err); fields["buckets[0].listing"] == "" || errors.Is(err, errInboxStopped) {
		t.Errorf("an unknown listing: %v", err)
	}
}

// TestAStoppedInboxHandsBatchesBack: once the inbox has stopped (the
// process shutting down) a batch is recorded synchronously, not left in a
// queue nobody writes.
func TestAStoppedInboxHandsBatchesBack(t *testing.T) {
	st := &ingestStore{}
	x := &Inbox{Store: &inboxStore{}}
	ctx, cancel := context.WithCancel(context.Background())
	done := make(chan struct{})
	go func() { x.Run(ctx, time.Hour); close(done) }()
	eventually(t, "the inbox runs", x.Running)
	cancel()
	<-done
	if err := x.Enqueue(context.Background(), QueuedBatch{Buckets: []Bucket{{ListingID: 7}}}); !errors.Is(err, errInboxStopped) {
		t.Errorf("Enqueue on a stopped inbox: %v, want it handed back", err)
	}
	in := &Ingest{Store: st, Now: time.Now, Inbox: x}
	minute := time.Now().UTC().Truncate(time.Minute)
	n, queued, err := in.Enqueue(context.Background(), []PostedBucket{posted("nebula/kimi", Bucket{Minute: minute, Counts: Counts{Requests: 3}})}, nil)
	if err != nil || queued || n != 1 || len(st.recorded) != 1 {
		t.Errorf("a batch after the stop: %d %v %v, recorded %d; want it recorded at once", n, queued, err, len(st.recorded))
	}
}
