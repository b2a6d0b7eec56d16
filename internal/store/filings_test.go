package store_test

import (
	"context"
	"sync"
	"testing"
	"time"

	"github.com/airside/airside/internal/account"
	"github.com/airside/airside/internal/apperr"
	"github.com/airside/airside/internal/audit"
	"github.com/airside/airside/internal/catalogue"
	"github.com/airside/airside/internal/fare"
	"github.com/airside/airside/internal/store"
	"github.com/airside/airside/internal/store/storetest"
	"github.com/airside/airside/internal/workflow"
)

// fixture is a carrier with a published listing and an author.
type fixture struct {
	listingID, authorID, carrierID int64
	published                      *fare.Fare
}

func newFixture(t *testing.T, s *store.Store) fixture {
	t.Helper()
	c, err := s.CreateCarrier(ctx, nil, "nebula", "Nebula")
	if err != nil {
		t.Fatal(err)
	}
	u, err := account.NewService(s).CreateUser(ctx, nil, account.NewUser{Email: "a@nebula.example", Password: "long enough pw", CarrierSlug: "nebula", CarrierRole: account.CarrierAdmin})
	if err != nil {
		t.Fatal(err)
	}
	m, _ := s.CreateModel(ctx, nil, catalogue.Model{Slug: "glm-5", Name: "GLM-5", ContextTokens: 200000})
	l, err := s.CreateListing(ctx, nil, c.ID, m.ID)
	if err != nil {
		t.Fatal(err)
	}
	published := &fare.Fare{ListingID: l, Input: mustPrice(t, "0.50"), Output: mustPrice(t, "2.00"), LandingFee: 2000, CapScope: fare.ScopeGlobal}
	if _, err := s.PublishSeedFare(ctx, published); err != nil {
		t.Fatal(err)
	}
	return fixture{listingID: l, authorID: u.ID, carrierID: c.ID, published: published}
}

func proposed(t *testing.T, input string) *fare.Fare {
	return &fare.Fare{Input: mustPrice(t, input), Output: mustPrice(t, "2.00"), LandingFee: 3000, CapScope: fare.ScopeGlobal}
}

func TestFilingLifecycle(t *testing.T) {
	storetest.ForEach(t, func(t *testing.T, s *store.Store) {
		fx := newFixture(t, s)
		id, err := s.CreateFiling(ctx, fx.authorID, workflow.NewFiling{ListingID: fx.listingID, Fare: proposed(t, "0.45"), Justification: "cheaper GPUs"})
		if err != nil {
			t.Fatal(err)
		}
		f, err := s.FindFiling(ctx, id, []int64{fx.carrierID})
		if err != nil {
			t.Fatal(err)
		}
		if f.State != workflow.Draft || f.Base == nil || f.Base.Input.String() != "0.50" || f.Fare.Input.String() != "0.45" {
			t.Fatalf("draft %+v", f)
		}
		if len(f.Kinds) != 2 || f.Kinds[0] != fare.KindPrice || f.Kinds[1] != fare.KindFares {
			t.Errorf("kinds %v", f.Kinds)
		}
		if _, err := s.FindFiling(ctx, id, []int64{fx.carrierID + 1}); apperr.Code(err) != apperr.ENOTFOUND {
			t.Errorf("another carrier found the filing: %v", err)
		}

		// A stale edit is refused and changes nothing.
		if err := s.UpdateFiling(ctx, fx.authorID, id, workflow.FilingUpdate{Fare: proposed(t, "0.40"), LockVersion: f.LockVersion + 1}); apperr.Code(err) != apperr.ECONFLICT {
			t.Errorf("stale edit: %v", err)
		}
		if err := s.UpdateFiling(ctx, fx.authorID, id, workflow.FilingUpdate{Fare: proposed(t, "0.42"), Justification: "even cheaper", LockVersion: f.LockVersion, Submit: true}); err != nil {
			t.Fatal(err)
		}
		f, _ = s.FindFiling(ctx, id, nil)
		if f.State != workflow.Submitted || f.Fare.Input.String() != "0.42" || f.Justification != "even cheaper" || f.SubmittedAt == nil {
			t.Errorf("after edit and submit: %+v", f)
		}
		if err := s.UpdateFiling(ctx, fx.authorID, id, workflow.FilingUpdate{Fare: proposed(t, "0.1"), LockVersion: f.LockVersion}); apperr.Code(err) != apperr.ECONFLICT {
			t.Errorf("edited a submitted filing: %v", err)
		}
		if err := s.WithdrawFiling(ctx, fx.authorID, id); err != nil {
			t.Fatal(err)
		}
		if err := s.WithdrawFiling(ctx, fx.authorID, id); apperr.Code(err) != apperr.ECONFLICT {
			t.Errorf("withdrew twice: %v", err)
		}
		events, _ := s.FindAuditEvents(ctx, audit.Filter{SubjectType: "filing", SubjectID: id})
		if len(events) != 3 {
			t.Errorf("%d audit events for the filing, want 3 (create, submit, withdraw)", len(events))
		}
		// Nothing reached routing.
		l, _ := s.FindListing(ctx, fx.listingID, nil)
		if l.Published.Input.String() != "0.50" {
			t.Errorf("published fare changed to %s before any approval", l.Published.Input)
		}
	})
}

func TestOneFilingInFlight(t *testing.T) {
	storetest.ForEach(t, func(t *testing.T, s *store.Store) {
		fx := newFixture(t, s)
		first, err := s.CreateFiling(ctx, fx.authorID, workflow.NewFiling{ListingID: fx.listingID, Fare: proposed(t, "0.45"), Submit: true})
		if err != nil {
			t.Fatal(err)
		}
		_, err = s.CreateFiling(ctx, fx.authorID, workflow.NewFiling{ListingID: fx.listingID, Fare: proposed(t, "0.44"), Submit: true})
		if apperr.Code(err) != apperr.ECONFLICT || apperr.RefOf(err) != first {
			t.Fatalf("second submit: %v (ref %d), want a conflict naming filing %d", err, apperr.RefOf(err), first)
		}
		// A draft beside it is fine; submitting it is not.
		draft, err := s.CreateFiling(ctx, fx.authorID, workflow.NewFiling{ListingID: fx.listingID, Fare: proposed(t, "0.44")})
		if err != nil {
			t.Fatal(err)
		}
		if err := s.SubmitFiling(ctx, fx.authorID, draft); apperr.RefOf(err) != first {
			t.Errorf("submitting the draft: %v", err)
		}
		if f, _ := s.FindFiling(ctx, draft, nil); f.State != workflow.Draft {
			t.Errorf("refused submit left the draft %s", f.State)
		}
	})
}

func TestConcurrentSubmitsOneWins(t *testing.T) {
	storetest.ForEach(t, func(t *testing.T, s *store.Store) {
		fx := newFixture(t, s)
		for round := range 5 {
			var drafts [2]int64
			for i := range drafts {
				id, err := s.CreateFiling(ctx, fx.authorID, workflow.NewFiling{ListingID: fx.listingID, Fare: proposed(t, "0.4"+string(rune('1'+i)))})
				if err != nil {
					t.Fatal(err)
				}
				drafts[i] = id
			}
			var wg sync.WaitGroup
			errs := make([]error, 2)
			start := make(chan struct{})
			for i := range drafts {
				wg.Add(1)
				go func() {
					defer wg.Done()
					<-start
					errs[i] = s.SubmitFiling(context.Background(), fx.authorID, drafts[i])
				}()
			}
			close(start)
			wg.Wait()
			wins := 0
			for _, err := range errs {
				switch apperr.Code(err) {
				case "":
					wins++
				case apperr.ECONFLICT:
				default:
					t.Fatalf("round %d: unexpected error %v", round, err)
				}
			}
			if wins != 1 {
				t.Fatalf("round %d: %d submits won, want exactly 1 (%v)", round, wins, errs)
			}
			inFlight, _ := s.FindFilings(ctx, workflow.FilingFilter{ListingID: fx.listingID, States: workflow.InFlightStates})
			if len(inFlight) != 1 {
				t.Fatalf("round %d: %d filings in flight", round, len(inFlight))
			}
			if err := s.WithdrawFiling(ctx, fx.authorID, inFlight[0].ID); err != nil {
				t.Fatal(err)
			}
		}
	})
}

// TestOldIdempotencyKeysAreSwept: keys recorded before the sweep's time go,
// of every carrier (filing again sweeps only the filer's own), newer ones
// stay and still answer their filing.
func TestOldIdempotencyKeysAreSwept(t *testing.T) {
	storetest.ForEach(t, func(t *testing.T, s *store.Store) {
		fx := newFixture(t, s)
		orbit, err := s.CreateCarrier(ctx, nil, "orbit", "Orbit")
		if err != nil {
			t.Fatal(err)
		}
		m, err := s.CreateModel(ctx, nil, catalogue.Model{Slug: "kimi-k2.5", Name: "Kimi K2.5", ContextTokens: 200000})
		if err != nil {
			t.Fatal(err)
		}
		second, err := s.CreateListing(ctx, nil, orbit.ID, m.ID)
		if err != nil {
			t.Fatal(err)
		}
		now := time.Date(2026, 12, 4, 10, 0, 0, 0, time.UTC)
		s.Now = func() time.Time { return now }
		old := workflow.Idempotency{CarrierID: fx.carrierID, Key: "old", BodyHash: "h1"}
		if _, _, err := s.CreateFilingOnce(ctx, fx.authorID, workflow.NewFiling{ListingID: fx.listingID, Fare: proposed(t, "0.45"), Idempotency: &old}); err != nil {
			t.Fatal(err)
		}
		now = now.Add(25 * time.Hour)
		fresh := workflow.Idempotency{CarrierID: orbit.ID, Key: "fresh", BodyHash: "h2"}
		id, _, err := s.CreateFilingOnce(ctx, fx.authorID, workflow.NewFiling{ListingID: second, Fare: proposed(t, "0.45"), Idempotency: &fresh})
		if err != nil {
			t.Fatal(err)
		}
		if n, err := s.DeleteIdempotencyKeysBefore(ctx, now.Add(-workflow.IdempotentFor)); err != nil || n != 1 {
			t.Errorf("swept %d keys (%v), want the old one", n, err)
		}
		if got, found, err := s.FindFilingByKey(ctx, fresh); err != nil || !found || got != id {
			t.Errorf("the fresh key answers %d, %v, %v; want filing %d", got, found, err, id)
		}
	})
}
