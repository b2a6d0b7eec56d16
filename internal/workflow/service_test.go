package workflow

import (
	"context"
	"fmt"
	"slices"
	"strings"
	"testing"
	"time"

	"github.com/airside/airside/internal/account"
	"github.com/airside/airside/internal/apperr"
	"github.com/airside/airside/internal/catalogue"
	"github.com/airside/airside/internal/fare"
	"github.com/airside/airside/internal/money"
)

// fakeStore keeps listings and filings in memory and records what the
// service asked it to persist, so the rules are tested as plain functions.
type fakeStore struct {
	// sweptBefore is the time keys were last swept before.
	sweptBefore time.Time
	listings    map[int64]*catalogue.Listing
	filings     map[int64]*Filing
	created     []NewFiling
	calls       []string
	notes       []Notification
	read        bool
	pauses      map[int64]fakePause
}

type fakePause struct {
	at     time.Time
	fareID int64
}

func newFakeStore() *fakeStore {
	input, output := money.Micros(500000), money.Micros(2000000)
	published := &fare.Fare{Input: input, Output: output, LandingFee: fare.BaselineLandingFee, CapScope: fare.ScopeGlobal}
	return &fakeStore{
		listings: map[int64]*catalogue.Listing{
			10: {ID: 10, CarrierID: carrierA, CarrierSlug: "nebula", CarrierName: "Nebula", Model: catalogue.Model{ID: 1, Slug: "kimi"}, Status: catalogue.StatusInService, Published: published},
			11: {ID: 11, CarrierID: carrierA, CarrierSlug: "nebula", CarrierName: "Nebula", Model: catalogue.Model{ID: 2, Slug: "glm"}, Status: catalogue.StatusPaused},
			12: {ID: 12, CarrierID: carrierA, CarrierSlug: "nebula", CarrierName: "Nebula", Model: catalogue.Model{ID: 3, Slug: "old"}, Status: catalogue.StatusDelisted},
			20: {ID: 20, CarrierID: carrierB, CarrierSlug: "orbit", CarrierName: "Orbit", Model: catalogue.Model{ID: 1, Slug: "kimi"}, Status: catalogue.StatusInService},
		},
		filings: map[int64]*Filing{},
	}
}

func (s *fakeStore) inScope(carrierID int64, carrierIDs []int64) bool {
	return carrierIDs == nil || slices.Contains(carrierIDs, carrierID)
}

func (s *fakeStore) FindListingHeader(_ context.Context, id int64, carrierIDs []int64) (*catalogue.Listing, error) {
	l, ok := s.listings[id]
	if !ok || !s.inScope(l.CarrierID, carrierIDs) {
		return nil, apperr.Errorf(apperr.ENOTFOUND, "Listing not found.")
	}
	return l, nil
}

func (s *fakeStore) FindListings(_ context.Context, f catalogue.ListingFilter) ([]catalogue.Listing, error) {
	var out []catalogue.Listing
	for _, id := range []int64{10, 11, 12, 20} {
		if l := s.listings[id]; s.inScope(l.CarrierID, f.CarrierIDs) {
			out = append(out, *l)
		}
	}
	return out, nil
}

func (s *fakeStore) CreateFilings(_ context.Context, _ int64, nfs []NewFiling) ([]int64, error) {
	var ids []int64
	for _, nf := range nfs {
		s.created = append(s.created, nf)
		ids = append(ids, int64(len(s.created)))
	}
	return ids, nil
}

func (s *fakeStore) CreateListing(_ context.Context, _ *int64, carrierID, modelID int64) (int64, error) {
	s.calls = append(s.calls, "create listing")
	return 99, nil
}

func (s *fakeStore) FindFiling(_ context.Context, id int64, carrierIDs []int64) (*Filing, error) {
	f, ok := s.filings[id]
	if !ok || !s.inScope(f.CarrierID, carrierIDs) {
		return nil, apperr.Errorf(apperr.ENOTFOUND, "Filing not found.")
	}
	return f, nil
}

func (s *fakeStore) CreateFiling(_ context.Context, _ int64, nf NewFiling) (int64, error) {
	s.created = append(s.created, nf)
	return int64(len(s.created)), nil
}

func (s *fakeStore) CreateFilingOnce(ctx context.Context, actorID int64, nf NewFiling) (int64, bool, error) {
	if id, found, err := s.FindFilingByKey(ctx, *nf.Idempotency); found || err != nil {
		return id, found, err
	}
	id, _ := s.CreateFiling(ctx, actorID, nf)
	return id, false, nil
}

func (s *fakeStore) FindFilingByKey(_ context.Context, idem Idempotency) (int64, bool, error) {
	for i, nf := range s.created {
		if k := nf.Idempotency; k != nil && k.CarrierID == idem.CarrierID && k.Key == idem.Key {
			if k.BodyHash != idem.BodyHash {
				return 0, true, ErrKeyReused()
			}
			return int64(i + 1), true, nil
		}
	}
	return 0, false, nil
}

func (s *fakeStore) DeleteIdempotencyKeysBefore(_ context.Context, before time.Time) (int64, error) {
	s.sweptBefore = before
	return 0, nil
}

func (s *fakeStore) record(call string) error { s.calls = append(s.calls, call); return nil }

func (s *fakeStore) ListingPause(_ context.Context, id int64) (*time.Time, *int64, error) {
	p, ok := s.pauses[id]
	if !ok {
		return nil, nil, nil
	}
	return &p.at, &p.fareID, nil
}

func (s *fakeStore) ResumeListing(_ context.Context, _, id int64, why string) error {
	s.listings[id].Status = catalogue.StatusInService
	return s.record("resume " + why)
}

func (s *fakeStore) UpdateFiling(context.Context, int64, int64, FilingUpdate) error {
	return s.record("update")
}
func (s *fakeStore) SubmitFiling(context.Context, int64, int64) error   { return s.record("submit") }
func (s *fakeStore) WithdrawFiling(context.Context, int64, int64) error { return s.record("withdraw") }
func (s *fakeStore) DecideFiling(_ context.Context, _, _ int64, a Action, _ string, _ int64) (State, error) {
	s.calls = append(s.calls, "decide "+string(a))
	return Next(Submitted, a)
}
func (s *fakeStore) RebaseFiling(context.Context, int64, int64) error { return s.record("rebase") }
func (s *fakeStore) AddComment(_ context.Context, _, _ int64, body string, fromStaff bool) error {
	if fromStaff {
		return s.record("comment from staff: " + body)
	}
	return s.record("comment: " + body)
}
func (s *fakeStore) SetCapabilityCheck(_ context.Context, _, _ int64, capability, state, _ string) error {
	return s.record("check " + capability + " " + state)
}
func (s *fakeStore) SetListingPriority(_ context.Context, _, _ int64, bp int64) error {
	return s.record(fmt.Sprintf("priority %d", bp))
}
func (s *fakeStore) DelistListing(context.Context, int64, int64, string) error {
	return s.record("delist")
}
func (s *fakeStore) PauseListing(_ context.Context, _, _ int64, reason string) error {
	return s.record("pause now: " + reason)
}
func (s *fakeStore) FindNotifications(context.Context, int64, int) ([]Notification, error) {
	return s.notes, nil
}
func (s *fakeStore) MarkNotificationsRead(context.Context, int64) error { s.read = true; return nil }
func (s *fakeStore) PublishDue(context.Context) (int, error)            { return 3, nil }

var _ Store = (*fakeStore)(nil)

const (
	carrierA, carrierB = int64(1), int64(2)
)

var (
	adminA    = &account.Principal{User: account.User{ID: 1}, Memberships: []account.Membership{{CarrierID: carrierA, Role: account.CarrierAdmin, Carrier: account.Carrier{ID: carrierA, Slug: "nebula"}}}}
	memberA   = &account.Principal{User: account.User{ID: 2}, Memberships: []account.Membership{{CarrierID: carrierA, Role: account.CarrierMember, Carrier: account.Carrier{ID: carrierA, Slug: "nebula"}}}}
	memberB   = &account.Principal{User: account.User{ID: 3}, Memberships: []account.Membership{{CarrierID: carrierB, Role: account.CarrierMember, Carrier: account.Carrier{ID: carrierB, Slug: "orbit"}}}}
	reviewer  = &account.Principal{User: account.User{ID: 4, Staff: account.StaffReviewer}}
	reviewer2 = &account.Principal{User: account.User{ID: 5, Staff: account.StaffReviewer}}
	admin     = &account.Principal{User: account.User{ID: 6, Staff: account.StaffAdmin}}
	// adminInA is a gateway admin who also belongs to carrier A.
	adminInA = &account.Principal{User: account.User{ID: 7, Staff: account.StaffAdmin}, Memberships: []account.Membership{{CarrierID: carrierA, Role: account.CarrierMember}}}
)

func newService() (*Service, *fakeStore) {
	st := newFakeStore()
	return &Service{Store: st, Now: func() time.Time { return time.Date(2026, 12, 1, 12, 0, 0, 0, time.UTC) }}, st
}

func goodForm() fare.Form {
	return fare.Form{Input: "0.40", Output: "1.60", LandingFee: "20", Discount: "0", CapScope: "global"}
}

func TestFileRules(t *testing.T) {
	for _, test := range []struct {
		name     string
		p        *account.Principal
		listing  int64
		form     fare.Form
		wantCode string
	}{
		{"a carrier admin files", adminA, 10, goodForm(), ""},
		{"a carrier member files", memberA, 10, goodForm(), ""},
		{"another carrier's listing is not found", memberB, 10, goodForm(), apperr.ENOTFOUND},
		{"staff do not file", reviewer, 10, goodForm(), apperr.EFORBIDDEN},
		{"a delisted listing takes no filings", adminA, 12, goodForm(), apperr.ECONFLICT},
		{"a bad fare is refused with field messages", adminA, 10, fare.Form{Input: "-1", Output: "x"}, apperr.EINVALID},
		{"the published fare again is not sent to review", adminA, 10, fare.FormOf(newFakeStore().listings[10].Published), apperr.ECONFLICT},
	} {
		t.Run(test.name, func(t *testing.T) {
			svc, st := newService()
			_, err := svc.File(context.Background(), test.p, test.listing, test.form, true)
			if got := apperr.Code(err); got != test.wantCode {
				t.Fatalf("code %q (%v), want %q", got, err, test.wantCode)
			}
			if test.wantCode == "" && (len(st.created) != 1 || !st.created[0].Submit || st.created[0].Fare == nil) {
				t.Errorf("created %+v", st.created)
			}
			if test.wantCode != "" && len(st.created) != 0 {
				t.Errorf("a refused filing was created: %+v", st.created)
			}
			if test.wantCode == apperr.EINVALID && len(apperr.FieldErrors(err)) == 0 {
				t.Errorf("no field messages: %v", err)
			}
		})
	}
	// As a draft, the same fare is kept: the carrier may be halfway.
	svc, st := newService()
	if _, err := svc.File(context.Background(), adminA, 10, fare.FormOf(st.listings[10].Published), false); err != nil || len(st.created) != 1 {
		t.Errorf("saving the published fare as a draft: %v", err)
	}
}

func filing(id int64, state State, carrier int64, author int64) *Filing {
	base := int64(1)
	return &Filing{ID: id, ListingID: 10, CarrierID: carrier, CarrierName: "Nebula", State: state, AuthorID: author,
		Fare: &fare.Fare{}, BaseFareID: &base, CurrentFareID: &base, Kinds: []fare.Kind{fare.KindPrice}}
}

func TestFilingMoves(t *testing.T) {
	for _, test := range []struct {
		name     string
		p        *account.Principal
		f        *Filing
		act      func(*Service, *account.Principal, int64) error
		wantCode string
		wantCall string
	}{
		{"submit a draft", memberA, filing(1, Draft, carrierA, 2), submitFn, "", "submit"},
		{"a submitted filing is not submitted again", memberA, filing(1, Submitted, carrierA, 2), submitFn, apperr.ECONFLICT, ""},
		{"withdraw a submitted filing", memberA, filing(1, Submitted, carrierA, 2), withdrawFn, "", "withdraw"},
		{"a published filing is not withdrawn", memberA, filing(1, Published, carrierA, 2), withdrawFn, apperr.ECONFLICT, ""},
		{"another carrier cannot see it", memberB, filing(1, Draft, carrierA, 2), submitFn, apperr.ENOTFOUND, ""},
		{"staff do not submit", reviewer, filing(1, Draft, carrierA, 2), submitFn, apperr.EFORBIDDEN, ""},
		{"a member cannot submit a pause", memberA, pauseFiling(filing(1, Draft, carrierA, 1)), submitFn, apperr.EFORBIDDEN, ""},
		{"an admin submits a pause", adminA, pauseFiling(filing(1, Draft, carrierA, 1)), submitFn, "", "submit"},
		{"edit an open filing", memberA, filing(1, ChangesRequested, carrierA, 2), editFn, "", "update"},
		{"a bad edit is refused", memberA, filing(1, Draft, carrierA, 2), badEditFn, apperr.EINVALID, ""},
		{"refresh a stale draft", memberA, stale(filing(1, Draft, carrierA, 2)), refreshFn, "", "rebase"},
		{"a stale draft is not submitted", memberA, stale(filing(1, Draft, carrierA, 2)), submitFn, apperr.ECONFLICT, ""},
		{"nor edited and submitted", memberA, stale(filing(1, Draft, carrierA, 2)), editSubmitFn, apperr.ECONFLICT, ""},
		{"a stale draft can still be saved", memberA, stale(filing(1, Draft, carrierA, 2)), editFn, "", "update"},
		{"a fresh draft needs no refresh", memberA, filing(1, Draft, carrierA, 2), refreshFn, apperr.ECONFLICT, ""},
	} {
		t.Run(test.name, func(t *testing.T) {
			svc, st := newService()
			st.filings[test.f.ID] = test.f
			err := test.act(svc, test.p, test.f.ID)
			if got := apperr.Code(err); got != test.wantCode {
				t.Fatalf("code %q (%v), want %q", got, err, test.wantCode)
			}
			if test.wantCall != "" && !slices.Contains(st.calls, test.wantCall) {
				t.Errorf("calls %v, want %q", st.calls, test.wantCall)
			}
			if test.wantCall == "" && len(st.calls) != 0 {
				t.Errorf("a refused move reached the store: %v", st.calls)
			}
		})
	}
}

func submitFn(s *Service, p *account.Principal, id int64) error {
	return s.Submit(context.Background(), p, id)
}
func withdrawFn(s *Service, p *account.Principal, id int64) error {
	return s.Withdraw(context.Background(), p, id)
}
func editFn(s *Service, p *account.Principal, id int64) error {
	return s.Edit(context.Background(), p, id, 0, goodForm(), false)
}
func editSubmitFn(s *Service, p *account.Principal, id int64) error {
	return s.Edit(context.Background(), p, id, 0, goodForm(), true)
}
func badEditFn(s *Service, p *account.Principal, id int64) error {
	return s.Edit(context.Background(), p, id, 0, fare.Form{Input: "abc"}, false)
}
func refreshFn(s *Service, p *account.Principal, id int64) error {
	return s.Refresh(context.Background(), p, id)
}

func pauseFiling(f *Filing) *Filing {
	f.Kinds, f.Fare, f.TargetStatus = []fare.Kind{fare.KindPause}, nil, catalogue.StatusPaused
	return f
}

func stale(f *Filing) *Filing {
	current := *f.BaseFareID + 1
	f.CurrentFareID = &current
	return f
}

func TestDecide(t *testing.T) {
	decided := filing(1, Rejected, carrierA, 2)
	decided.DeciderEmail = "ada@airside.example"
	for _, test := range []struct {
		name     string
		p        *account.Principal
		f        *Filing
		action   Action
		note     string
		wantCode string
		wantMsg  string
	}{
		{"a reviewer approves", reviewer, filing(1, Submitted, carrierA, 2), Approve, "", "", ""},
		{"a reviewer rejects with a reason", reviewer, filing(1, Submitted, carrierA, 2), Reject, "too dear", "", ""},
		{"a rejection needs a reason", reviewer, filing(1, Submitted, carrierA, 2), Reject, "  ", apperr.EINVALID, "Give the carrier a reason."},
		{"changes need a reason", reviewer, filing(1, Submitted, carrierA, 2), RequestChanges, "", apperr.EINVALID, "Give the carrier a reason."},
		{"no one decides their own filing", reviewer, filing(1, Submitted, carrierA, 4), Approve, "", apperr.EFORBIDDEN, "You wrote this filing"},
		{"no one decides for their own carrier", adminInA, filing(1, Submitted, carrierA, 2), Approve, "", apperr.EFORBIDDEN, "You belong to Nebula"},
		{"carriers do not decide", adminA, filing(1, Submitted, carrierA, 2), Approve, "", apperr.EFORBIDDEN, "Only reviewers decide"},
		{"an already decided filing names its decider", reviewer, decided, Approve, "", apperr.ECONFLICT, "Already decided by ada@airside.example"},
		{"a draft is not awaiting review", reviewer, filing(1, Draft, carrierA, 2), Approve, "", apperr.ECONFLICT, "not awaiting review"},
		{"a stale base cannot be approved", reviewer, stale(filing(1, Submitted, carrierA, 2)), Approve, "", apperr.ECONFLICT, "refresh"},
		{"a reason must be valid text", reviewer, filing(1, Submitted, carrierA, 2), Reject, "bad\x00", apperr.EINVALID, ""},
	} {
		t.Run(test.name, func(t *testing.T) {
			svc, st := newService()
			st.filings[1] = test.f
			next, err := svc.Decide(context.Background(), test.p, 1, test.action, test.note, test.f.LockVersion)
			if got := apperr.Code(err); got != test.wantCode {
				t.Fatalf("code %q (%v), want %q", got, err, test.wantCode)
			}
			msg := apperr.Message(err)
			if f := apperr.FieldErrors(err); f["note"] != "" {
				msg = f["note"]
			}
			if !strings.Contains(msg, test.wantMsg) {
				t.Errorf("message %q, want it to contain %q", msg, test.wantMsg)
			}
			if test.wantCode == "" {
				want, _ := Next(Submitted, test.action)
				if next != want || len(st.calls) != 1 {
					t.Errorf("next %q calls %v", next, st.calls)
				}
			}
		})
	}
}

func TestListingRules(t *testing.T) {
	ctx := context.Background()
	svc, st := newService()
	if _, err := svc.SetPaused(ctx, memberA, 10, true, ""); apperr.Code(err) != apperr.EFORBIDDEN {
		t.Errorf("a member paused a listing: %v", err)
	}
	if _, err := svc.SetPaused(ctx, adminA, 11, true, ""); apperr.Code(err) != apperr.ECONFLICT {
		t.Errorf("a paused listing paused again: %v", err)
	}
	if _, err := svc.SetPaused(ctx, adminA, 10, false, ""); apperr.Code(err) != apperr.ECONFLICT {
		t.Errorf("a listing in service resumed: %v", err)
	}
	if _, err := svc.SetPaused(ctx, adminA, 10, true, "bad\x00"); apperr.Code(err) != apperr.EINVALID {
		t.Errorf("a note with NUL accepted: %v", err)
	}
	if _, err := svc.SetPaused(ctx, adminA, 10, true, "maintenance"); err != nil {
		t.Fatal(err)
	}
	if nf := st.created[len(st.created)-1]; nf.TargetStatus != catalogue.StatusPaused || !nf.Submit {
		t.Errorf("pause filed as %+v", nf)
	}
	if _, err := svc.SetPaused(ctx, adminA, 11, false, ""); err != nil {
		t.Errorf("resume: %v", err)
	}
	// Pausing now: the carrier's admins only, a listing in service only, a
	// reason and the confirmation both required; then straight to the store,
	// no filing.
	for _, tc := range []struct {
		name      string
		p         *account.Principal
		listing   int64
		reason    string
		confirmed bool
		want      string
		fields    []string
	}{
		{"a member", memberA, 10, "down", true, apperr.EFORBIDDEN, nil},
		{"another carrier's member", memberB, 10, "down", true, apperr.ENOTFOUND, nil},
		{"a reviewer", reviewer, 10, "down", true, apperr.EFORBIDDEN, nil},
		{"a paused listing", adminA, 11, "down", true, apperr.ECONFLICT, nil},
		{"no reason, not confirmed", adminA, 10, " ", false, apperr.EINVALID, []string{"reason", "confirm"}},
		{"not confirmed", adminA, 10, "down", false, apperr.EINVALID, []string{"confirm"}},
	} {
		before := len(st.calls)
		err := svc.PauseNow(ctx, tc.p, tc.listing, tc.reason, tc.confirmed)
		if apperr.Code(err) != tc.want || len(st.calls) != before {
			t.Errorf("%s: %v (store calls %v), want %s and no change", tc.name, err, st.calls[before:], tc.want)
		}
		for _, f := range tc.fields {
			if apperr.FieldErrors(err)[f] == "" {
				t.Errorf("%s: no message for %s", tc.name, f)
			}
		}
	}
	created := len(st.created)
	if err := svc.PauseNow(ctx, adminA, 10, "  GPUs on fire ", true); err != nil || st.calls[len(st.calls)-1] != "pause now: GPUs on fire" || len(st.created) != created {
		t.Errorf("pause now: %v, calls %v, %d filings created", err, st.calls, len(st.created)-created)
	}
	if _, err := svc.AddListing(ctx, memberA, carrierA, 5); apperr.Code(err) != apperr.EFORBIDDEN {
		t.Errorf("a member added a listing: %v", err)
	}
	if _, err := svc.AddListing(ctx, adminA, carrierB, 5); apperr.Code(err) != apperr.ENOTFOUND {
		t.Errorf("an admin added a listing to another carrier: %v", err)
	}
	if id, err := svc.AddListing(ctx, adminA, carrierA, 5); err != nil || id != 99 {
		t.Errorf("add listing: %d, %v", id, err)
	}
	if l, err := svc.ListingToFile(ctx, memberA, 10); err != nil || l.ID != 10 {
		t.Errorf("listing to file: %v", err)
	}
}

func TestAdministerRules(t *testing.T) {
	ctx := context.Background()
	for _, test := range []struct {
		name     string
		p        *account.Principal
		priority string
		wantCode string
		wantCall string
	}{
		{"an admin sets priority", admin, "0.5", "", "priority 5000"},
		{"zero takes a listing off the ballots", admin, "0", "", "priority 0"},
		{"priority is bounded", admin, "10.01", apperr.EINVALID, ""},
		{"priority is a number", admin, "high", apperr.EINVALID, ""},
		{"reviewers do not set priority", reviewer, "1", apperr.EFORBIDDEN, ""},
		{"carriers do not set priority", adminA, "1", apperr.EFORBIDDEN, ""},
		{"an admin of the gateway who belongs to the carrier does not", adminInA, "1", apperr.EFORBIDDEN, ""},
	} {
		t.Run(test.name, func(t *testing.T) {
			svc, st := newService()
			err := svc.SetPriority(ctx, test.p, 10, test.priority)
			if got := apperr.Code(err); got != test.wantCode {
				t.Fatalf("code %q (%v), want %q", got, err, test.wantCode)
			}
			if test.wantCall != "" && !slices.Contains(st.calls, test.wantCall) {
				t.Errorf("calls %v, want %q", st.calls, test.wantCall)
			}
		})
	}
	svc, st := newService()
	if err := svc.Delist(ctx, admin, 10, " "); apperr.Code(err) != apperr.EINVALID {
		t.Errorf("delist without a reason: %v", err)
	}
	if err := svc.Delist(ctx, admin, 12, "gone"); apperr.Code(err) != apperr.ECONFLICT {
		t.Errorf("delist twice: %v", err)
	}
	if err := svc.Delist(ctx, adminInA, 10, "gone"); apperr.Code(err) != apperr.EFORBIDDEN {
		t.Errorf("delist own carrier: %v", err)
	}
	if err := svc.Delist(ctx, admin, 10, "gone"); err != nil || !slices.Contains(st.calls, "delist") {
		t.Errorf("delist: %v %v", err, st.calls)
	}
}

func TestCommentsAndVerification(t *testing.T) {
	ctx := context.Background()
	svc, st := newService()
	st.filings[1] = filing(1, Submitted, carrierA, 2)
	if err := svc.Comment(ctx, memberA, 1, "  "); apperr.Code(err) != apperr.EINVALID {
		t.Errorf("empty comment: %v", err)
	}
	if err := svc.Comment(ctx, memberB, 1, "hi"); apperr.Code(err) != apperr.ENOTFOUND {
		t.Errorf("another carrier commented: %v", err)
	}
	if err := svc.Comment(ctx, memberA, 1, strings.Repeat("x", MaxComment+1)); apperr.Code(err) != apperr.EINVALID {
		t.Errorf("an overlong comment: %v", err)
	}
	if err := svc.Comment(ctx, memberA, 1, " why? "); err != nil {
		t.Fatal(err)
	}
	if err := svc.Comment(ctx, reviewer, 1, "because"); err != nil {
		t.Fatal(err)
	}
	if !slices.Equal(st.calls, []string{"comment: why?", "comment from staff: because"}) {
		t.Errorf("calls %v", st.calls)
	}

	st.calls = nil
	for _, test := range []struct {
		name, capability, state string
		p                       *account.Principal
		wantCode                string
	}{
		{"a reviewer verifies", "tools", CapabilityVerified, reviewer, ""},
		{"a reviewer fails a flag", "vision", CapabilityFailed, reviewer2, ""},
		{"carriers do not verify", "tools", CapabilityVerified, adminA, apperr.EFORBIDDEN},
		{"no one verifies their own carrier", "tools", CapabilityVerified, adminInA, apperr.EFORBIDDEN},
		{"an unknown flag", "telepathy", CapabilityVerified, reviewer, apperr.EINVALID},
		{"an unknown state", "tools", "maybe", reviewer, apperr.EINVALID},
	} {
		err := svc.VerifyCapability(ctx, test.p, 10, test.capability, test.state, "checked", st.listings[10].Revision)
		if got := apperr.Code(err); got != test.wantCode {
			t.Errorf("%s: code %q (%v), want %q", test.name, got, err, test.wantCode)
		}
	}
	if err := svc.VerifyCapability(ctx, reviewer, 10, "tools", CapabilityVerified, "", st.listings[10].Revision-1); apperr.Code(err) != apperr.ECONFLICT {
		t.Errorf("a verdict on a listing changed since: %v", err)
	}
	if !slices.Equal(st.calls, []string{"check tools verified", "check vision failed"}) {
		t.Errorf("calls %v", st.calls)
	}
}

func TestBulk(t *testing.T) {
	ctx := context.Background()
	svc, st := newService()
	if _, err := svc.FileBulk(ctx, reviewer, nil); apperr.Code(err) != apperr.EFORBIDDEN {
		t.Errorf("staff filed in bulk: %v", err)
	}
	rows := []fare.CSVRow{
		{Line: 2, Carrier: "orbit", Model: "kimi", Form: goodForm()},
		{Line: 3, Carrier: "nebula", Model: "nope", Form: goodForm()},
		{Line: 4, Carrier: "nebula", Model: "old", Form: goodForm()},
		{Line: 5, Carrier: "nebula", Model: "kimi", Form: fare.Form{Input: "x"}},
		{Line: 6, Carrier: "nebula", Model: "glm", Form: goodForm()},
		{Line: 7, Carrier: "nebula", Model: "glm", Form: goodForm()},
	}
	res, err := svc.FileBulk(ctx, adminA, rows)
	if err != nil {
		t.Fatal(err)
	}
	lines := map[int]bool{}
	for _, p := range res.Problems {
		lines[p.Row] = true
	}
	for _, line := range []int{2, 3, 4, 5, 7} {
		if !lines[line] {
			t.Errorf("row %d has no problem: %+v", line, res.Problems)
		}
	}
	if len(st.created) != 0 {
		t.Errorf("a bad file created filings: %+v", st.created)
	}
	published := fare.FormOf(st.listings[10].Published)
	res, err = svc.FileBulk(ctx, adminA, []fare.CSVRow{{Line: 2, Carrier: "nebula", Model: "kimi", Form: published},
		{Line: 3, Carrier: "nebula", Model: "glm", Form: goodForm()}})
	if err != nil || res.Unchanged != 1 || len(res.Created) != 1 || len(st.created) != 1 || st.created[0].ListingID != 11 {
		t.Errorf("res %+v err %v created %+v", res, err, st.created)
	}
	tmpl, err := svc.BulkTemplate(ctx, adminA)
	if err != nil || len(tmpl) != 2 { // the delisted listing is left out
		t.Errorf("template %d rows, %v", len(tmpl), err)
	}
}

func TestInboxAndScheduler(t *testing.T) {
	svc, st := newService()
	st.notes = []Notification{{ID: 1, Message: "hello"}}
	notes, err := svc.Inbox(context.Background(), memberA, 10)
	if err != nil || len(notes) != 1 || !st.read {
		t.Errorf("inbox %v %v read=%v", notes, err, st.read)
	}
	if n, err := svc.PublishDue(context.Background()); n != 3 || err != nil {
		t.Errorf("publish due %d %v", n, err)
	}
}

func TestActionsFor(t *testing.T) {
	st := newFakeStore()
	inService, paused, delisted := st.listings[10], st.listings[11], st.listings[12]
	for _, test := range []struct {
		name     string
		p        *account.Principal
		l        *catalogue.Listing
		inFlight bool
		want     ListingActions
	}{
		{"admin of the carrier, in service", adminA, inService, false, ListingActions{File: true, Pause: true, Endpoint: true, Preflight: true}},
		{"admin of the carrier, paused", adminA, paused, false, ListingActions{File: true, Resume: true, Endpoint: true, Preflight: true}},
		{"a filing in flight blocks a new endpoint, not a pause (it is an emergency stop)", adminA, inService, true, ListingActions{File: true, Pause: true, Preflight: true}},
		{"member files and runs preflight only", memberA, inService, false, ListingActions{File: true, Preflight: true}},
		{"delisted takes nothing", adminA, delisted, false, ListingActions{}},
		{"reviewer verifies and runs preflight", reviewer, inService, false, ListingActions{Verify: true, Preflight: true}},
		{"gateway admin verifies and administers", admin, inService, false, ListingActions{Verify: true, Administer: true, Preflight: true}},
		{"gateway admin of the carrier files but does not judge", adminInA, inService, false, ListingActions{File: true, Preflight: true}},
	} {
		if got := ListingActionsFor(test.p, test.l, test.inFlight); got != test.want {
			t.Errorf("%s: %+v, want %+v", test.name, got, test.want)
		}
	}

	for _, test := range []struct {
		name string
		p    *account.Principal
		f    *Filing
		want FilingActions
	}{
		{"carrier on a draft", memberA, filing(1, Draft, carrierA, 2), FilingActions{Edit: true, Submit: true, Withdraw: true, Comment: true}},
		{"carrier on a stale draft: refresh, not submit", memberA, stale(filing(1, Draft, carrierA, 2)), FilingActions{Edit: true, Refresh: true, Withdraw: true, Comment: true}},
		{"carrier on a submitted filing", memberA, filing(1, Submitted, carrierA, 2), FilingActions{Withdraw: true, Comment: true}},
		{"member on a pause", memberA, pauseFiling(filing(1, Draft, carrierA, 1)), FilingActions{Comment: true}},
		{"reviewer on a submitted filing", reviewer, filing(1, Submitted, carrierA, 2), FilingActions{Comment: true, Decide: true}},
		{"reviewer on their own filing", reviewer, filing(1, Submitted, carrierA, 4), FilingActions{Comment: true, DecideNote: "You wrote this filing: another reviewer must decide it."}},
		{"reviewer on a published filing", reviewer, filing(1, Published, carrierA, 2), FilingActions{Comment: true}},
		{"another carrier", memberB, filing(1, Draft, carrierA, 2), FilingActions{}},
	} {
		if got := FilingActionsFor(test.p, test.f); got != test.want {
			t.Errorf("%s: %+v, want %+v", test.name, got, test.want)
		}
	}
}

func TestScope(t *testing.T) {
	if Scope(reviewer) != nil || Scope(admin) != nil {
		t.Error("staff see a limited scope")
	}
	if got := Scope(memberA); !slices.Equal(got, []int64{carrierA}) {
		t.Errorf("member scope %v", got)
	}
	if got := Scope(&account.Principal{}); got == nil || len(got) != 0 {
		t.Errorf("a user of no carrier sees %v, want nothing (not everything)", got)
	}
}

func TestWording(t *testing.T) {
	at := time.Date(2026, 12, 24, 8, 30, 0, 0, time.UTC)
	label := FilingLabel(12, "Nebula Inference", "Kimi K2.5")
	for _, test := range []struct{ got, want string }{
		{label, "#12 (Nebula Inference, Kimi K2.5)"},
		{NoticeSubmitted(label, Draft), "New filing #12 (Nebula Inference, Kimi K2.5) awaits review."},
		{NoticeSubmitted(label, ChangesRequested), "Filing #12 (Nebula Inference, Kimi K2.5) was resubmitted after changes."},
		{NoticeWithdrawn(label), "Filing #12 (Nebula Inference, Kimi K2.5) was withdrawn by the carrier."},
		{NoticeDecided(label, Published, nil, ""), "Filing #12 (Nebula Inference, Kimi K2.5) was approved and is now published to routing."},
		{NoticeDecided(label, Scheduled, &at, ""), "Filing #12 (Nebula Inference, Kimi K2.5) was approved and will be published on 2026-12-24 08:30 UTC."},
		{NoticeDecided(label, Rejected, nil, "too dear"), "Filing #12 (Nebula Inference, Kimi K2.5) was rejected: too dear"},
		{NoticeDecided(label, ChangesRequested, nil, "lower it"), "Changes were requested on filing #12 (Nebula Inference, Kimi K2.5): lower it"},
		{NoticeDue(label), "Filing #12 (Nebula Inference, Kimi K2.5) reached its effective date and is now published to routing."},
		{NoticeComment(label), "New comment on filing #12 (Nebula Inference, Kimi K2.5)"},
		{NoticeCapability("tools", 7, "verified"), "Capability tools of listing 7 was marked verified."},
		{NoticeDelisted(7, "fraud"), "Listing 7 was delisted by the gateway: fraud"},
		{Outcome(Published), "Approved and published to routing."},
		{Outcome(Scheduled), "Approved; it will be published on its effective date."},
		{Outcome(Rejected), "Rejected; the carrier has been told why."},
		{Outcome(ChangesRequested), "Sent back to the carrier for changes."},
		{apperr.Message(ErrAlreadyDecided("", Published)), "This filing is published, not awaiting review."},
		{apperr.Message(ErrStaleBase()), StaleBaseMessage},
	} {
		if test.got != test.want {
			t.Errorf("got %q, want %q", test.got, test.want)
		}
	}
	if !SameBase(nil, nil) || SameBase(nil, new(int64)) {
		t.Error("SameBase with nil bases")
	}
	for _, code := range []error{ErrChangedMeanwhile(), ErrEditedSinceOpened()} {
		if apperr.Code(code) != apperr.ECONFLICT {
			t.Errorf("%v is not a conflict", code)
		}
	}
}

// TestDecideOnlyWhatWasSeen: reviewer 1 opened version 3; the carrier
// resubmitted (version 5); reviewer 1's stale page cannot approve it.
func TestDecideOnlyWhatWasSeen(t *testing.T) {
	svc, st := newService()
	f := filing(1, Submitted, carrierA, 2)
	f.LockVersion = 5
	st.filings[1] = f
	_, err := svc.Decide(context.Background(), reviewer, 1, Approve, "", 3)
	if apperr.Code(err) != apperr.ECONFLICT || !strings.Contains(apperr.Message(err), "changed since you opened it") || apperr.RefOf(err) != 1 {
		t.Fatalf("a decision on an unseen version: %v", err)
	}
	if len(st.calls) != 0 {
		t.Errorf("it reached the store: %v", st.calls)
	}
	if _, err := svc.Decide(context.Background(), reviewer, 1, Approve, "", 5); err != nil {
		t.Errorf("the seen version: %v", err)
	}
}

// TestTheSweepForgetsKeysPastTheirDay: the periodic sweep asks the store
// to forget the keys recorded more than IdempotentFor ago.
func TestTheSweepForgetsKeysPastTheirDay(t *testing.T) {
	svc, st := newService()
	if _, err := svc.SweepIdempotencyKeys(context.Background()); err != nil {
		t.Fatal(err)
	}
	if want := svc.Now().Add(-IdempotentFor); !st.sweptBefore.Equal(want) {
		t.Errorf("swept before %v, want %v", st.sweptBefore, want)
	}
}
