package preflight

import (
	"context"
	"errors"
	"io"
	"log/slog"
	"testing"
	"time"
)

// flakyFinish fails FinishPreflight a given number of times, then records it.
type flakyFinish struct {
	WorkerStore
	failures int
	calls    int
	finished bool
}

func (f *flakyFinish) FinishPreflight(ctx context.Context, job *Job, freshness time.Duration) error {
	f.calls++
	if f.calls <= f.failures {
		return errors.New("another publication happened at the same moment")
	}
	f.finished = true
	return nil
}

// TestFinishingARunIsRetried: a run whose probes are done is finished even
// when the first attempts fail, and gives up, logged, after finishTries.
func TestFinishingARunIsRetried(t *testing.T) {
	for _, tc := range []struct {
		name      string
		failures  int
		finished  bool
		wantCalls int
	}{
		{"first try", 0, true, 1},
		{"after two failures", 2, true, 3},
		{"never", finishTries + 3, false, finishTries},
	} {
		t.Run(tc.name, func(t *testing.T) {
			store := &flakyFinish{failures: tc.failures}
			w := &Worker{Store: store, FinishBackoff: time.Microsecond, Log: slog.New(slog.NewTextHandler(io.Discard, nil))}
			w.finish(context.Background(), &Job{RunID: 7})
			if store.finished != tc.finished || store.calls != tc.wantCalls {
				t.Errorf("finished %v after %d calls, want %v after %d", store.finished, store.calls, tc.finished, tc.wantCalls)
			}
		})
	}
}
