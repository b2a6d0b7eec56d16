package store_test

import (
	"context"
	"strings"
	"sync"
	"testing"
	"time"

	"github.com/airside/airside/internal/account"
	"github.com/airside/airside/internal/apperr"
	"github.com/airside/airside/internal/audit"
	"github.com/airside/airside/internal/store"
	"github.com/airside/airside/internal/store/storetest"
	"github.com/airside/airside/internal/workflow"
)

func newReviewer(t *testing.T, s *store.Store, email string) int64 {
	t.Helper()
	u, err := account.NewService(s).CreateUser(ctx, nil, account.NewUser{Email: email, Password: "long enough pw", Staff: account.StaffReviewer})
	if err != nil {
		t.Fatal(err)
	}
	return u.ID
}

func submitted(t *testing.T, s *store.Store, fx fixture, input string, effective *time.Time) int64 {
	t.Helper()
	id, err := s.CreateFiling(ctx, fx.authorID, workflow.NewFiling{ListingID: fx.listingID, Fare: proposed(t, input), Submit: true, EffectiveAt: effective})
	if err != nil {
		t.Fatal(err)
	}
	return id
}

func TestApprovalPublishesAtomically(t *testing.T) {
	storetest.ForEach(t, func(t *testing.T, s *store.Store) {
		fx := newFixture(t, s)
		reviewer := newReviewer(t, s, "rev@airside.example")
		revBefore, _ := s.CatalogueRevision(ctx)
		id := submitted(t, s, fx, "0.45", nil)
		if n, _ := s.CountUnread(ctx, reviewer); n != 1 {
			t.Errorf("reviewer has %d unread messages after a submit, want 1", n)
		}
		state, err := s.DecideFiling(ctx, reviewer, id, workflow.Approve, "fine", versionOf(t, s, id))
		if err != nil || state != workflow.Published {
			t.Fatalf("approve: %s, %v", state, err)
		}
		l, _ := s.FindListing(ctx, fx.listingID, nil)
		f, _ := s.FindFiling(ctx, id, nil)
		if l.Published.ID != *f.BaseFareID && l.Published.Input.String() != "0.45" {
			t.Errorf("published input %s, want 0.45", l.Published.Input)
		}
		if f.State != workflow.Published || f.PublishedAt == nil || f.DeciderEmail != "rev@airside.example" {
			t.Errorf("filing after approval: %+v", f)
		}
		if rev, _ := s.CatalogueRevision(ctx); rev != revBefore+1 {
			t.Errorf("revision %d, want %d", rev, revBefore+1)
		}
		events, _ := s.FindAuditEvents(ctx, audit.Filter{SubjectType: "filing", SubjectID: id})
		actions := map[string]bool{}
		for _, e := range events {
			actions[e.Action] = true
		}
		if !actions["filing.approve"] || !actions["filing.publish"] {
			t.Errorf("audit actions %v", actions)
		}
		if n, _ := s.CountUnread(ctx, fx.authorID); n != 1 {
			t.Errorf("the carrier has %d unread messages after approval, want 1", n)
		}
		if _, err := s.DecideFiling(ctx, reviewer, id, workflow.Reject, "no", versionOf(t, s, id)); apperr.Code(err) != apperr.ECONFLICT || !strings.Contains(err.Error(), "Already decided by rev@airside.example") {
			t.Errorf("deciding twice: %v", err)
		}
	})
}

func TestRejectAndRequestChanges(t *testing.T) {
	storetest.ForEach(t, func(t *testing.T, s *store.Store) {
		fx := newFixture(t, s)
		reviewer := newReviewer(t, s, "rev@airside.example")
		id := submitted(t, s, fx, "0.45", nil)
		if state, err := s.DecideFiling(ctx, reviewer, id, workflow.RequestChanges, "cached price please", versionOf(t, s, id)); err != nil || state != workflow.ChangesRequested {
			t.Fatalf("request changes: %s %v", state, err)
		}
		f, _ := s.FindFiling(ctx, id, nil)
		if err := s.UpdateFiling(ctx, fx.authorID, id, workflow.FilingUpdate{Fare: proposed(t, "0.44"), LockVersion: f.LockVersion, Submit: true}); err != nil {
			t.Fatalf("resubmit: %v", err)
		}
		if state, err := s.DecideFiling(ctx, reviewer, id, workflow.Reject, "too cheap to be true", versionOf(t, s, id)); err != nil || state != workflow.Rejected {
			t.Fatalf("reject: %s %v", state, err)
		}
		l, _ := s.FindListing(ctx, fx.listingID, nil)
		if l.Published.Input.String() != "0.50" {
			t.Errorf("a rejected filing reached routing: %s", l.Published.Input)
		}
	})
}

func TestConcurrentDecisionsOneStands(t *testing.T) {
	storetest.ForEach(t, func(t *testing.T, s *store.Store) {
		fx := newFixture(t, s)
		reviewers := []int64{newReviewer(t, s, "r1@airside.example"), newReviewer(t, s, "r2@airside.example")}
		for round := range 4 {
			id := submitted(t, s, fx, "0.4"+string(rune('1'+round)), nil)
			actions := []workflow.Action{workflow.Approve, workflow.Reject}
			if round%2 == 1 {
				actions[0], actions[1] = actions[1], actions[0]
			}
			var wg sync.WaitGroup
			errs := make([]error, 2)
			start := make(chan struct{})
			for i := range 2 {
				wg.Add(1)
				go func() {
					defer wg.Done()
					<-start
					_, errs[i] = s.DecideFiling(context.Background(), reviewers[i], id, actions[i], "because", versionOf(t, s, id))
				}()
			}
			close(start)
			wg.Wait()
			wins := 0
			for _, err := range errs {
				if err == nil {
					wins++
				} else if apperr.Code(err) != apperr.ECONFLICT || !strings.Contains(err.Error(), "Already decided by") {
					t.Fatalf("round %d: loser got %v", round, err)
				}
			}
			if wins != 1 {
				t.Fatalf("round %d: %d decisions stood (%v)", round, wins, errs)
			}
			events, _ := s.FindAuditEvents(ctx, audit.Filter{SubjectType: "filing", SubjectID: id})
			decisions := 0
			for _, e := range events {
				if e.Action == "filing.approve" || e.Action == "filing.reject" {
					decisions++
				}
			}
			if decisions != 1 {
				t.Fatalf("round %d: %d decision audit rows", round, decisions)
			}
		}
	})
}

func TestStaleBaseCannotBeApproved(t *testing.T) {
	storetest.ForEach(t, func(t *testing.T, s *store.Store) {
		fx := newFixture(t, s)
		reviewer := newReviewer(t, s, "rev@airside.example")
		old, err := s.CreateFiling(ctx, fx.authorID, workflow.NewFiling{ListingID: fx.listingID, Fare: proposed(t, "0.30")})
		if err != nil {
			t.Fatal(err)
		}
		other := submitted(t, s, fx, "0.45", nil)
		if _, err := s.DecideFiling(ctx, reviewer, other, workflow.Approve, "", versionOf(t, s, other)); err != nil {
			t.Fatal(err)
		}
		if err := s.SubmitFiling(ctx, fx.authorID, old); err != nil {
			t.Fatal(err)
		}
		f, _ := s.FindFiling(ctx, old, nil)
		if !f.StaleBase() {
			t.Fatal("the filing drafted against the old fare is not stale")
		}
		if _, err := s.DecideFiling(ctx, reviewer, old, workflow.Approve, "", versionOf(t, s, old)); apperr.Code(err) != apperr.ECONFLICT || !strings.Contains(err.Error(), "published fare changed") {
			t.Fatalf("approving a stale filing: %v", err)
		}
		if _, err := s.DecideFiling(ctx, reviewer, old, workflow.RequestChanges, "refresh please", versionOf(t, s, old)); err != nil {
			t.Fatal(err)
		}
		if err := s.RebaseFiling(ctx, fx.authorID, old); err != nil {
			t.Fatal(err)
		}
		f, _ = s.FindFiling(ctx, old, nil)
		if f.StaleBase() || f.Base.Input.String() != "0.45" {
			t.Errorf("after refresh: stale=%v base %s", f.StaleBase(), f.Base.Input)
		}
		if err := s.SubmitFiling(ctx, fx.authorID, old); err != nil {
			t.Fatal(err)
		}
		if _, err := s.DecideFiling(ctx, reviewer, old, workflow.Approve, "", versionOf(t, s, old)); err != nil {
			t.Fatalf("approving the refreshed filing: %v", err)
		}
	})
}

func TestSchedulerPublishesDueFilingsOnce(t *testing.T) {
	for _, d := range storetest.Dialects {
		t.Run(string(d), func(t *testing.T) {
			url := storetest.URL(t, d)
			open := func() *store.Store {
				s, err := store.Open(ctx, url)
				if err != nil {
					t.Fatal(err)
				}
				t.Cleanup(func() { s.Close() })
				return s
			}
			s := open()
			if err := s.Migrate(ctx); err != nil {
				t.Fatal(err)
			}
			fx := newFixture(t, s)
			reviewer := newReviewer(t, s, "rev@airside.example")
			effective := time.Now().UTC().Add(time.Hour)
			id := submitted(t, s, fx, "0.45", &effective)
			if state, err := s.DecideFiling(ctx, reviewer, id, workflow.Approve, "", versionOf(t, s, id)); err != nil || state != workflow.Scheduled {
				t.Fatalf("approve with a future date: %s %v", state, err)
			}
			if n, err := s.PublishDue(ctx); err != nil || n != 0 {
				t.Fatalf("published %d before the date (%v)", n, err)
			}
			revBefore, _ := s.CatalogueRevision(ctx)

			// Two schedulers (as two serve processes) run once the date has come.
			later := func() time.Time { return time.Now().UTC().Add(2 * time.Hour) }
			schedulers := []*store.Store{s, open()}
			var wg sync.WaitGroup
			counts := make([]int, len(schedulers))
			errs := make([]error, len(schedulers))
			for i, sch := range schedulers {
				sch.Now = later
				wg.Add(1)
				go func() { defer wg.Done(); counts[i], errs[i] = sch.PublishDue(context.Background()) }()
			}
			wg.Wait()
			for i, err := range errs {
				if err != nil {
					t.Fatalf("scheduler %d: %v", i, err)
				}
			}
			if counts[0]+counts[1] != 1 {
				t.Fatalf("published %v times, want exactly once", counts)
			}
			if rev, _ := s.CatalogueRevision(ctx); rev != revBefore+1 {
				t.Errorf("revision %d, want %d", rev, revBefore+1)
			}
			l, _ := s.FindListing(ctx, fx.listingID, nil)
			if l.Published.Input.String() != "0.45" {
				t.Errorf("published input %s after the date", l.Published.Input)
			}
		})
	}
}

// TestCrashMidPublicationLeavesNothingHalfDone makes the last step of a
// publication fail (a trigger refuses the catalogue revision) and checks the
// earlier steps were rolled back with it.
func TestCrashMidPublicationLeavesNothingHalfDone(t *testing.T) {
	for _, d := range storetest.Dialects {
		t.Run(string(d), func(t *testing.T) {
			url := storetest.URL(t, d)
			s, err := store.Open(ctx, url)
			if err != nil {
				t.Fatal(err)
			}
			defer s.Close()
			if err := s.Migrate(ctx); err != nil {
				t.Fatal(err)
			}
			fx := newFixture(t, s)
			reviewer := newReviewer(t, s, "rev@airside.example")
			effective := time.Now().UTC().Add(time.Hour)
			id := submitted(t, s, fx, "0.45", &effective)
			if _, err := s.DecideFiling(ctx, reviewer, id, workflow.Approve, "", versionOf(t, s, id)); err != nil {
				t.Fatal(err)
			}
			breakRevisions(t, s, d, url, true)
			s.Now = func() time.Time { return time.Now().UTC().Add(2 * time.Hour) }
			if _, err := s.PublishDue(ctx); err == nil {
				t.Fatal("publication succeeded despite the failing step")
			}
			f, _ := s.FindFiling(ctx, id, nil)
			l, _ := s.FindListing(ctx, fx.listingID, nil)
			if f.State != workflow.Scheduled || f.PublishedAt != nil || l.Published.Input.String() != "0.50" {
				t.Fatalf("half-published: filing %s, listing input %s", f.State, l.Published.Input)
			}
			breakRevisions(t, s, d, url, false)
			if n, err := s.PublishDue(ctx); err != nil || n != 1 {
				t.Fatalf("after recovery: %d, %v", n, err)
			}
		})
	}
}

func breakRevisions(t *testing.T, s *store.Store, d store.Dialect, url string, broken bool) {
	t.Helper()
	var stmts []string
	switch {
	case d == store.SQLite && broken:
		stmts = []string{`CREATE TRIGGER fail_revision BEFORE INSERT ON catalogue_revisions BEGIN SELECT RAISE(ABORT, 'simulated crash'); END`}
	case d == store.SQLite:
		stmts = []string{`DROP TRIGGER fail_revision`}
	case broken:
		stmts = []string{
			`CREATE FUNCTION fail_revision() RETURNS trigger AS $$ BEGIN RAISE EXCEPTION 'simulated crash'; END $$ LANGUAGE plpgsql`,
			`CREATE TRIGGER fail_revision BEFORE INSERT ON catalogue_revisions FOR EACH ROW EXECUTE FUNCTION fail_revision()`,
		}
	default:
		stmts = []string{`DROP TRIGGER fail_revision ON catalogue_revisions`, `DROP FUNCTION fail_revision()`}
	}
	if err := s.ExecForTest(ctx, stmts...); err != nil {
		t.Fatal(err)
	}
}

// TestCancelAScheduledFiling: the carrier withdraws an approved filing before
// its date; it never reaches routing, and the listing takes filings again.
func TestCancelAScheduledFiling(t *testing.T) {
	storetest.ForEach(t, func(t *testing.T, s *store.Store) {
		fx := newFixture(t, s)
		reviewer := newReviewer(t, s, "rev@airside.example")
		effective := time.Now().UTC().Add(time.Hour)
		id := submitted(t, s, fx, "0.45", &effective)
		if state, err := s.DecideFiling(ctx, reviewer, id, workflow.Approve, "", versionOf(t, s, id)); err != nil || state != workflow.Scheduled {
			t.Fatalf("approve with a future date: %s %v", state, err)
		}
		if err := s.WithdrawFiling(ctx, fx.authorID, id); err != nil {
			t.Fatalf("cancel a scheduled filing: %v", err)
		}
		s.Now = func() time.Time { return time.Now().UTC().Add(2 * time.Hour) }
		if n, err := s.PublishDue(ctx); err != nil || n != 0 {
			t.Fatalf("a cancelled filing was published: %d, %v", n, err)
		}
		f, err := s.FindFiling(ctx, id, nil)
		if err != nil || f.State != workflow.Withdrawn {
			t.Fatalf("filing %+v, %v", f, err)
		}
		events, _ := s.FindAuditEvents(ctx, audit.Filter{SubjectType: "filing", SubjectID: id})
		if len(events) == 0 || events[0].Action != "filing.withdraw" {
			t.Errorf("the cancellation is not audited: %+v", events)
		}
		// The one slot in flight is free again.
		submitted(t, s, fx, "0.44", nil)
	})
}

// versionOf is a filing's version as a reviewer's page would show it.
func versionOf(t *testing.T, s *store.Store, filingID int64) int64 {
	t.Helper()
	f, err := s.FindFiling(ctx, filingID, nil)
	if err != nil {
		t.Fatal(err)
	}
	return f.LockVersion
}

// TestReviewDurationsFromTheLastSubmission: a review lasts from the last
// submission (a resubmission restarts it) to the decision; reviews decided
// before the window are left out.
func TestReviewDurationsFromTheLastSubmission(t *testing.T) {
	storetest.ForEach(t, func(t *testing.T, s *store.Store) {
		now := time.Date(2026, 12, 1, 9, 0, 0, 0, time.UTC)
		s.Now = func() time.Time { return now }
		fx := newFixture(t, s)
		reviewer := newReviewer(t, s, "rev@airside.example")
		id := submitted(t, s, fx, "0.45", nil) // at 09:00
		now = now.Add(3 * time.Hour)
		if _, err := s.DecideFiling(ctx, reviewer, id, workflow.RequestChanges, "cached price please", versionOf(t, s, id)); err != nil {
			t.Fatal(err)
		}
		now = now.Add(24 * time.Hour) // the carrier answers a day later
		f, _ := s.FindFiling(ctx, id, nil)
		if err := s.UpdateFiling(ctx, fx.authorID, id, workflow.FilingUpdate{Fare: proposed(t, "0.44"), LockVersion: f.LockVersion, Submit: true}); err != nil {
			t.Fatal(err)
		}
		now = now.Add(90 * time.Minute)
		if _, err := s.DecideFiling(ctx, reviewer, id, workflow.Reject, "no", versionOf(t, s, id)); err != nil {
			t.Fatal(err)
		}
		got, err := s.ReviewDurations(ctx, now.Add(-time.Hour), 10)
		if err != nil {
			t.Fatal(err)
		}
		if len(got) != 1 || got[0] != 90*time.Minute {
			t.Errorf("review durations %v, want the resubmission's 1h30m", got)
		}
		if got, _ := s.ReviewDurations(ctx, now.Add(time.Minute), 10); len(got) != 0 {
			t.Errorf("a review decided before the window counted: %v", got)
		}
	})
}
