package workflow

import (
	"context"
	"strings"
	"testing"

	"github.com/airside/airside/internal/apperr"
	"github.com/airside/airside/internal/fare"
	"github.com/airside/airside/internal/money"
)

// fakeApprovals keeps first approvals in memory.
type fakeApprovals map[int64][]int64

func (f fakeApprovals) FilingApprovals(_ context.Context, filingID, _ int64) ([]int64, error) {
	return f[filingID], nil
}
func (f fakeApprovals) RecordApproval(_ context.Context, reviewerID, filingID, _ int64) error {
	f[filingID] = append(f[filingID], reviewerID)
	return nil
}

// TestNoticePeriodBoundaries: the listing's published input is 0.50 and
// the service's clock 2026-12-01 12:00 UTC, so an increase may take effect
// from 2026-12-08 12:00.
func TestNoticePeriodBoundaries(t *testing.T) {
	for _, tc := range []struct {
		name, input, effective, wantErr string
	}{
		{"a decrease applies at once", "0.40", "", ""},
		{"an increase with no date", "0.60", "", "2026-12-08T12:00"},
		{"an increase a minute before the notice ends", "0.60", "2026-12-08T11:59", "2026-12-08T12:00"},
		{"an increase when the notice ends", "0.60", "2026-12-08T12:00", ""},
		{"an increase later", "0.60", "2026-12-20", ""},
	} {
		svc, st := newService()
		form := goodForm()
		form.Input, form.Output, form.EffectiveAt = tc.input, "2.00", tc.effective
		_, err := svc.File(context.Background(), adminA, 10, form, true)
		switch {
		case tc.wantErr == "" && err != nil:
			t.Errorf("%s: %v", tc.name, err)
		case tc.wantErr != "" && !strings.Contains(apperr.FieldErrors(err)["effective_at"], tc.wantErr):
			t.Errorf("%s: %v, want the earliest date %s next to the effective date", tc.name, apperr.FieldErrors(err), tc.wantErr)
		case tc.wantErr != "" && len(st.created) != 0:
			t.Errorf("%s: a refused filing was recorded", tc.name)
		}
		// Saving a draft is never refused for the notice: it is checked on submit.
		if _, err := svc.File(context.Background(), adminA, 10, form, false); err != nil {
			t.Errorf("%s, as a draft: %v", tc.name, err)
		}
	}
}

func TestQuarantineNeedsTwoReviewers(t *testing.T) {
	svc, st := newService()
	approvals := fakeApprovals{}
	svc.Approvals = approvals
	base := &fare.Fare{Input: money.Micros(500_000), Output: money.Micros(2_000_000)}
	tripled := &fare.Fare{Input: money.Micros(1_500_000), Output: money.Micros(2_000_000)}
	f := filing(7, Submitted, carrierA, 2)
	f.Base, f.Fare = base, tripled
	st.filings[7] = f
	if !svc.Quarantined(f) {
		t.Fatal("a tripled price is not quarantined")
	}
	next, err := svc.Decide(context.Background(), reviewer, 7, Approve, "", f.LockVersion)
	if err != nil || next != Submitted || len(st.calls) != 0 || len(approvals[7]) != 1 {
		t.Fatalf("first approval: %s, %v; calls %v; approvals %v", next, err, st.calls, approvals)
	}
	if _, err := svc.Decide(context.Background(), reviewer, 7, Approve, "", f.LockVersion); apperr.Code(err) != apperr.ECONFLICT {
		t.Errorf("the same reviewer approving twice: %v, want a conflict", err)
	}
	if _, err := svc.Decide(context.Background(), reviewer2, 7, Approve, "", f.LockVersion); err != nil || len(st.calls) != 1 {
		t.Errorf("the second reviewer: %v, calls %v; want the decision recorded", err, st.calls)
	}
	// Just under threefold: one reviewer decides.
	svc2, st2 := newService()
	svc2.Approvals = fakeApprovals{}
	g := filing(8, Submitted, carrierA, 2)
	g.Base, g.Fare = base, &fare.Fare{Input: money.Micros(1_499_999), Output: money.Micros(2_000_000)}
	st2.filings[8] = g
	if _, err := svc2.Decide(context.Background(), reviewer, 8, Approve, "", g.LockVersion); err != nil || len(st2.calls) != 1 {
		t.Errorf("a change under threefold: %v, calls %v", err, st2.calls)
	}
}
