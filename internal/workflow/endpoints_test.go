package workflow

import (
	"context"
	"strings"
	"testing"
	"time"

	"github.com/airside/airside/internal/apperr"
	"github.com/airside/airside/internal/catalogue"
	"github.com/airside/airside/internal/preflight"
)

// runsStore answers FindPreflightRuns with fixed verdicts; the rest of
// EndpointStore is not used by ReadyForService.
type runsStore struct {
	EndpointStore
	latest map[string]preflight.Result
}

func (s runsStore) FindPreflightRuns(context.Context, int64, int64) (*preflight.Run, map[string]preflight.Result, error) {
	return &preflight.Run{State: preflight.RunDone}, s.latest, nil
}

// TestTheGoLiveGateNeedsStreamingWithUsage: a listing goes into service only
// when its endpoint passed reachability, chat and streaming (whose probe
// fails on a stream without usage): a gateway streams and bills by the
// usage the stream reports.
func TestTheGoLiveGateNeedsStreamingWithUsage(t *testing.T) {
	l := &catalogue.Listing{ID: 7, Endpoint: &catalogue.Endpoint{ID: 3}}
	pass := preflight.Result{State: preflight.Passed, At: time.Now()}
	fail := preflight.Result{State: preflight.Failed, At: time.Now(), Error: "No usage came back in the stream (stream_options.include_usage)."}
	for _, test := range []struct {
		name   string
		latest map[string]preflight.Result
		want   string // the probe named in the refusal, "" for ready
	}{
		{"all three passed", map[string]preflight.Result{preflight.ProbeReachable: pass, preflight.ProbeChat: pass, preflight.ProbeStreaming: pass}, ""},
		{"streaming without usage", map[string]preflight.Result{preflight.ProbeReachable: pass, preflight.ProbeChat: pass, preflight.ProbeStreaming: fail}, "Streaming"},
		{"streaming never probed", map[string]preflight.Result{preflight.ProbeReachable: pass, preflight.ProbeChat: pass}, "Streaming"},
		{"chat failed", map[string]preflight.Result{preflight.ProbeReachable: pass, preflight.ProbeChat: fail, preflight.ProbeStreaming: pass}, "Chat"},
	} {
		err := (&Endpoints{Store: runsStore{latest: test.latest}}).ReadyForService(context.Background(), l)
		switch {
		case test.want == "" && err != nil:
			t.Errorf("%s: %v", test.name, err)
		case test.want != "" && (apperr.Code(err) != apperr.ECONFLICT || !strings.Contains(apperr.Message(err), test.want)):
			t.Errorf("%s: %v, want a conflict naming %q", test.name, err, test.want)
		}
	}
}
