package workflow

import (
	"strings"
	"testing"
	"time"

	"github.com/airside/airside/internal/election"
	"github.com/airside/airside/internal/fare"
	"github.com/airside/airside/internal/money"
)

func TestDecisionOutcome(t *testing.T) {
	now := time.Date(2026, 12, 2, 12, 0, 0, 0, time.UTC)
	later, earlier := now.Add(48*time.Hour), now.Add(-time.Minute)
	for _, tc := range []struct {
		name      string
		state     State
		action    Action
		at        *time.Time
		next      State
		publish   bool
		noticeHas string
		fails     bool
	}{
		{"approve now", Submitted, Approve, nil, Published, true, "now published", false},
		{"approve with a date ahead", Submitted, Approve, &later, Scheduled, false, "will be published on " + later.Format("2006-01-02 15:04"), false},
		{"approve a date already reached", Submitted, Approve, &earlier, Published, true, "now published", false},
		{"reject", Submitted, Reject, nil, Rejected, false, "rejected: too cheap", false},
		{"ask for changes", Submitted, RequestChanges, &later, ChangesRequested, false, "Changes were requested", false},
		{"approve a draft", Draft, Approve, nil, "", false, "", true},
		{"reject a published filing", Published, Reject, nil, "", false, "", true},
	} {
		t.Run(tc.name, func(t *testing.T) {
			o, err := DecisionOutcome(MoveFacts{State: tc.state, EffectiveAt: tc.at, Label: "#7 (Acme, M)"}, tc.action, "too cheap", now)
			if tc.fails {
				if err == nil {
					t.Fatalf("decided %+v, want an error", o)
				}
				return
			}
			if err != nil {
				t.Fatal(err)
			}
			if o.Next != tc.next || o.Publish != tc.publish || !strings.Contains(o.CarrierNotice, tc.noticeHas) ||
				!strings.Contains(o.CarrierNotice, "#7 (Acme, M)") || o.ReviewerNotice != "" || o.Probe {
				t.Errorf("got %+v", o)
			}
		})
	}
}

func TestCarrierOutcome(t *testing.T) {
	cheap := &fare.Fare{Input: money.Micros(500_000), Output: money.Micros(2_000_000)}
	cached := &fare.Fare{Input: money.Micros(500_000), Output: money.Micros(2_000_000), CachedInput: ptr(money.Micros(100_000))}
	tools := &fare.Fare{Input: money.Micros(500_000), Output: money.Micros(2_000_000), Capabilities: []election.Capability{election.CapTools}}
	for _, tc := range []struct {
		name           string
		state          State
		action         Action
		base, proposed *fare.Fare
		next           State
		reviewerHas    string
		probe          bool
	}{
		{"submit a draft", Draft, Submit, cheap, cheap, Submitted, "New filing", false},
		{"resubmit after changes", ChangesRequested, Submit, nil, cheap, Submitted, "resubmitted after changes", false},
		{"submit adding a cached price", Draft, Submit, cheap, cached, Submitted, "New filing", true},
		{"submit adding a capability", Draft, Submit, cheap, tools, Submitted, "New filing", true},
		{"a first fare with a capability", Draft, Submit, nil, tools, Submitted, "New filing", true},
		{"withdraw a submitted filing", Submitted, Withdraw, cheap, tools, Withdrawn, "withdrawn by the carrier", false},
		{"withdraw a scheduled filing", Scheduled, Withdraw, cheap, cheap, Withdrawn, "withdrawn by the carrier", false},
		{"withdraw a draft", Draft, Withdraw, cheap, cached, Withdrawn, "", false},
	} {
		t.Run(tc.name, func(t *testing.T) {
			o, err := CarrierOutcome(MoveFacts{State: tc.state, Label: "#3", Base: tc.base, Proposed: tc.proposed}, tc.action)
			if err != nil {
				t.Fatal(err)
			}
			if o.Next != tc.next || o.Probe != tc.probe || o.Publish || o.CarrierNotice != "" ||
				(tc.reviewerHas == "") != (o.ReviewerNotice == "") || !strings.Contains(o.ReviewerNotice, tc.reviewerHas) {
				t.Errorf("got %+v", o)
			}
		})
	}
	if _, err := CarrierOutcome(MoveFacts{State: Published}, Submit); err == nil {
		t.Error("submitted a published filing")
	}
}

func ptr[T any](v T) *T { return &v }
