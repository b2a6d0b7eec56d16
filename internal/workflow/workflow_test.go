package workflow

import (
	"testing"

	"github.com/airside/airside/internal/account"
	"github.com/airside/airside/internal/apperr"
	"github.com/airside/airside/internal/fare"
)

func TestTransitions(t *testing.T) {
	states := []State{Draft, Submitted, ChangesRequested, Scheduled, Published, Rejected, Withdrawn}
	want := map[Action]map[State]State{
		Save:           {Draft: Draft, ChangesRequested: ChangesRequested},
		Submit:         {Draft: Submitted, ChangesRequested: Submitted},
		Withdraw:       {Draft: Withdrawn, Submitted: Withdrawn, ChangesRequested: Withdrawn, Scheduled: Withdrawn},
		Approve:        {Submitted: Published},
		Reject:         {Submitted: Rejected},
		RequestChanges: {Submitted: ChangesRequested},
	}
	for action, allowed := range want {
		for _, from := range states {
			got, err := Next(from, action)
			to, ok := allowed[from]
			switch {
			case ok && (err != nil || got != to):
				t.Errorf("%s from %s: got %s, %v; want %s", action, from, got, err, to)
			case !ok && apperr.Code(err) != apperr.ECONFLICT:
				t.Errorf("%s from %s: got %s, %v; want a conflict", action, from, got, err)
			}
		}
	}
}

func TestAuthorize(t *testing.T) {
	const carrierA, carrierB = 1, 2
	member := func(id int64, carrier int64, role account.CarrierRole) *account.Principal {
		return &account.Principal{User: account.User{ID: id}, Memberships: []account.Membership{{CarrierID: carrier, Role: role}}}
	}
	staff := func(id int64, role account.StaffRole) *account.Principal {
		return &account.Principal{User: account.User{ID: id, Staff: role}}
	}
	adminA, memberA, memberB := member(10, carrierA, account.CarrierAdmin), member(11, carrierA, account.CarrierMember), member(20, carrierB, account.CarrierMember)
	reviewer, admin := staff(30, account.StaffReviewer), staff(31, account.StaffAdmin)
	reviewerInA := member(32, carrierA, account.CarrierMember)
	reviewerInA.User.Staff = account.StaffReviewer

	priceFiling := &Filing{CarrierID: carrierA, AuthorID: memberA.User.ID, Kinds: []fare.Kind{fare.KindPrice}}
	pauseFiling := &Filing{CarrierID: carrierA, AuthorID: adminA.User.ID, Kinds: []fare.Kind{fare.KindPause}}
	ownFiling := &Filing{CarrierID: carrierB, AuthorID: reviewer.User.ID}

	for _, test := range []struct {
		name   string
		who    *account.Principal
		filing *Filing
		action Action
		want   string // "" allowed, else the apperr code
	}{
		{"carrier member submits", memberA, priceFiling, Submit, ""},
		{"carrier admin withdraws", adminA, priceFiling, Withdraw, ""},
		{"another carrier cannot see it", memberB, priceFiling, Submit, apperr.ENOTFOUND},
		{"staff do not file", reviewer, priceFiling, Save, apperr.EFORBIDDEN},
		{"a member cannot pause", memberA, pauseFiling, Submit, apperr.EFORBIDDEN},
		{"an admin can pause", adminA, pauseFiling, Submit, ""},
		{"reviewer approves", reviewer, priceFiling, Approve, ""},
		{"admin rejects", admin, priceFiling, Reject, ""},
		{"carrier cannot approve", adminA, priceFiling, Approve, apperr.EFORBIDDEN},
		{"no one decides their own filing", reviewer, ownFiling, Approve, apperr.EFORBIDDEN},
		{"no one decides their own carrier's filing", reviewerInA, priceFiling, RequestChanges, apperr.EFORBIDDEN},
		{"reviewers comment", reviewer, priceFiling, Comment, ""},
		{"the carrier comments", memberA, priceFiling, Comment, ""},
		{"another carrier cannot comment", memberB, priceFiling, Comment, apperr.ENOTFOUND},
	} {
		t.Run(test.name, func(t *testing.T) {
			if got := apperr.Code(Authorize(test.who, test.filing, test.action)); got != test.want {
				t.Errorf("got %q, want %q", got, test.want)
			}
		})
	}
}
