package workflow

import (
	"context"
	"strings"
	"testing"
	"time"

	"github.com/airside/airside/internal/apperr"
	"github.com/airside/airside/internal/catalogue"
	"github.com/airside/airside/internal/fare"
	"github.com/airside/airside/internal/preflight"
)

// TestResumeSkipsReviewOnlyWithTheSameFareAndAFreshPreflight: the fare in
// force at the pause and an endpoint that passed preflight since bring the
// listing back at once; a changed fare (or no record of the pause) files the
// resume for review; the same fare without a fresh preflight changes
// nothing and says what to do.
func TestResumeSkipsReviewOnlyWithTheSameFareAndAFreshPreflight(t *testing.T) {
	pausedAt := time.Date(2026, 12, 2, 10, 0, 0, 0, time.UTC)
	for _, test := range []struct {
		name        string
		pause       *fakePause
		fareID      int64
		passedAt    time.Time // the probes' last pass
		who         string
		wantAtOnce  bool
		wantFiled   bool
		wantErr     string
		wantErrCode string
	}{
		{name: "same fare, preflight since the pause", pause: &fakePause{pausedAt, 7}, fareID: 7, passedAt: pausedAt.Add(time.Minute), wantAtOnce: true},
		{name: "same fare, preflight only before the pause", pause: &fakePause{pausedAt, 7}, fareID: 7, passedAt: pausedAt.Add(-time.Minute),
			wantErr: "has not passed", wantErrCode: apperr.ECONFLICT},
		{name: "a fare changed since the pause", pause: &fakePause{pausedAt, 7}, fareID: 8, passedAt: pausedAt.Add(time.Minute), wantFiled: true},
		{name: "no record of the pause", fareID: 7, passedAt: pausedAt.Add(time.Minute), wantFiled: true},
		{name: "a member may not", pause: &fakePause{pausedAt, 7}, fareID: 7, passedAt: pausedAt.Add(time.Minute), who: "member",
			wantErrCode: apperr.EFORBIDDEN},
	} {
		t.Run(test.name, func(t *testing.T) {
			st := newFakeStore()
			l := st.listings[11]
			l.Published = &fare.Fare{ID: test.fareID, ListingID: 11, LandingFee: fare.BaselineLandingFee, CapScope: fare.ScopeGlobal}
			l.Endpoint = &catalogue.Endpoint{ID: 3, ListingID: 11}
			st.pauses = map[int64]fakePause{}
			if test.pause != nil {
				st.pauses[11] = *test.pause
			}
			probes := &Endpoints{Store: &preflightRuns{at: test.passedAt}}
			s := &Service{Store: st, Now: func() time.Time { return pausedAt.Add(time.Hour) }, PassedPreflightSince: probes.PassedPreflightSince}
			who := adminA
			if test.who == "member" {
				who = memberA
			}
			got, err := s.Resume(context.Background(), who, 11, "back")
			switch {
			case test.wantErrCode != "":
				if apperr.Code(err) != test.wantErrCode || !strings.Contains(apperr.Message(err), test.wantErr) {
					t.Fatalf("error %v, want %s saying %q", err, test.wantErrCode, test.wantErr)
				}
				if len(st.created) != 0 || l.Status != catalogue.StatusPaused {
					t.Errorf("a refused resume changed something: %d filings, status %s", len(st.created), l.Status)
				}
				return
			case err != nil:
				t.Fatal(err)
			}
			if got.AtOnce != test.wantAtOnce || (got.FilingID != 0) != test.wantFiled {
				t.Errorf("resumed %+v, want at once %v, filed %v", got, test.wantAtOnce, test.wantFiled)
			}
			if test.wantAtOnce && (l.Status != catalogue.StatusInService || !strings.Contains(strings.Join(st.calls, ";"), "not needed")) {
				t.Errorf("not back in service with the reason audited: %s %v", l.Status, st.calls)
			}
			if test.wantFiled && (len(st.created) != 1 || st.created[0].TargetStatus != catalogue.StatusInService || got.Why == "") {
				t.Errorf("the resume was not filed for review with a reason: %+v %+v", st.created, got)
			}
		})
	}
}

// preflightRuns answers every probe as passed at one moment.
type preflightRuns struct {
	EndpointStore
	at time.Time
}

func (p *preflightRuns) FindPreflightRuns(context.Context, int64, int64) (*preflight.Run, map[string]preflight.Result, error) {
	out := map[string]preflight.Result{}
	for _, probe := range []string{preflight.ProbeReachable, preflight.ProbeChat, preflight.ProbeStreaming} {
		out[probe] = preflight.Result{Probe: probe, State: preflight.Passed, At: p.at}
	}
	return nil, out, nil
}
