package store_test

import (
	"fmt"
	"strings"
	"sync"
	"testing"
	"time"

	"github.com/airside/airside/internal/apperr"
	"github.com/airside/airside/internal/audit"
	"github.com/airside/airside/internal/catalogue"
	"github.com/airside/airside/internal/election"
	"github.com/airside/airside/internal/preflight"
	"github.com/airside/airside/internal/store"
	"github.com/airside/airside/internal/store/storetest"
	"github.com/airside/airside/internal/workflow"
)

// registerApproved registers an endpoint for the fixture's listing and
// approves it, returning the endpoint id now published.
func registerApproved(t *testing.T, s *store.Store, fx fixture, url string) int64 {
	t.Helper()
	id, err := s.RegisterEndpoint(ctx, fx.authorID, workflow.NewEndpoint{ListingID: fx.listingID, BaseURL: url,
		UpstreamModel: "glm-5", KeySealed: "v1.sealed", KeyHint: "sk-...abcd"})
	if err != nil {
		t.Fatal(err)
	}
	reviewer := newReviewer(t, s, "rev-"+strings.ReplaceAll(url[8:], "/", "")+"@airside.example")
	if _, err := s.DecideFiling(ctx, reviewer, id, workflow.Approve, "", versionOf(t, s, id)); err != nil {
		t.Fatal(err)
	}
	l, _ := s.FindListing(ctx, fx.listingID, nil)
	if l.Endpoint == nil || l.Endpoint.BaseURL != url {
		t.Fatalf("published endpoint %+v, want %s", l.Endpoint, url)
	}
	return l.Endpoint.ID
}

func runProbes(t *testing.T, s *store.Store, verdicts map[string]preflight.State) *preflight.Job {
	t.Helper()
	job, err := s.ClaimPreflight(ctx, "test", 2, time.Hour)
	if err != nil || job == nil {
		t.Fatalf("claim: %v, %v", job, err)
	}
	for probe, state := range verdicts {
		if err := s.RecordProbe(ctx, job, preflight.Result{Probe: probe, State: state, At: s.Now()}); err != nil {
			t.Fatal(err)
		}
	}
	if err := s.FinishPreflight(ctx, job, 7*24*time.Hour); err != nil {
		t.Fatal(err)
	}
	return job
}

func TestEndpointFilingAndProbeVerdicts(t *testing.T) {
	storetest.ForEach(t, func(t *testing.T, s *store.Store) {
		fx := newFixture(t, s)
		epID := registerApproved(t, s, fx, "https://api.nebula.example/v1")

		f, _ := s.FindFilings(ctx, workflow.FilingFilter{ListingID: fx.listingID, States: []workflow.State{workflow.Published}})
		if len(f) == 0 || !f[0].IsEndpoint() || len(f[0].Changes()) != 3 {
			t.Fatalf("published endpoint filing: %+v", f)
		}
		rev0, _ := s.CatalogueRevision(ctx)
		runProbes(t, s, map[string]preflight.State{preflight.ProbeReachable: preflight.Passed, "tools": preflight.Passed, "json_schema": preflight.Failed})
		checks, _ := s.FindCapabilityChecks(ctx, fx.listingID)
		if checks["tools"] != workflow.CapabilityVerified || checks["json_schema"] != workflow.CapabilityFailed || checks["vision"] != "" {
			t.Errorf("verdicts %v: tools verified, json_schema failed, vision none", checks)
		}
		if rev, _ := s.CatalogueRevision(ctx); rev != rev0+1 {
			t.Errorf("a changed verdict must raise the revision: %d, want %d", rev, rev0+1)
		}
		// The same verdicts again change nothing in routing.
		if _, err := s.RequestPreflight(ctx, fx.authorID, fx.listingID, 0); err != nil {
			t.Fatal(err)
		}
		runProbes(t, s, map[string]preflight.State{preflight.ProbeReachable: preflight.Passed, "tools": preflight.Passed, "json_schema": preflight.Failed})
		if rev, _ := s.CatalogueRevision(ctx); rev != rev0+1 {
			t.Errorf("unchanged verdicts raised the revision to %d", rev)
		}
		// A reviewer's override stands over the probe.
		reviewer := newReviewer(t, s, "override@airside.example")
		if err := s.SetCapabilityCheck(ctx, reviewer, fx.listingID, "json_schema", workflow.CapabilityVerified, "checked by hand"); err != nil {
			t.Fatal(err)
		}
		if checks, _ := s.FindCapabilityChecks(ctx, fx.listingID); checks["json_schema"] != workflow.CapabilityVerified {
			t.Errorf("override lost: %v", checks)
		}
		// Verdicts expire: eight days on, the pass no longer counts.
		clock := s.Now
		s.Now = func() time.Time { return clock().Add(8 * 24 * time.Hour) }
		if checks, _ := s.FindCapabilityChecks(ctx, fx.listingID); checks["tools"] != "" {
			t.Errorf("a week-old pass still counts: %v", checks)
		}
		s.Now = clock
		// A probe of an endpoint not (yet) published earns nothing in routing.
		if _, err := s.RegisterEndpoint(ctx, fx.authorID, workflow.NewEndpoint{ListingID: fx.listingID, BaseURL: "https://new.nebula.example/v1",
			UpstreamModel: "glm-5", KeySealed: "v1.sealed", KeyHint: "sk-...abcd"}); err != nil {
			t.Fatal(err)
		}
		job := runProbes(t, s, map[string]preflight.State{"vision": preflight.Passed})
		if job.EndpointID == epID || job.KeySealed != "v1.sealed" {
			t.Errorf("the new endpoint's run: endpoint %d (published %d), key %q kept from the last", job.EndpointID, epID, job.KeySealed)
		}
		if checks, _ := s.FindCapabilityChecks(ctx, fx.listingID); checks["vision"] != "" {
			t.Errorf("a pending endpoint's probe counted: %v", checks)
		}
		events, _ := s.FindAuditEvents(ctx, audit.Filter{CarrierIDs: []int64{fx.carrierID}})
		for _, e := range events {
			if strings.Contains(e.After+e.Before, "v1.sealed") {
				t.Errorf("audit row %s holds the sealed key", e.Action)
			}
		}
	})
}

func TestPreflightRequestsAreThrottledAndOneAtATime(t *testing.T) {
	storetest.ForEach(t, func(t *testing.T, s *store.Store) {
		fx := newFixture(t, s)
		if _, err := s.RequestPreflight(ctx, fx.authorID, fx.listingID, time.Minute); apperr.Code(err) != apperr.ECONFLICT {
			t.Errorf("preflight without an endpoint: %v, want a conflict", err)
		}
		registerApproved(t, s, fx, "https://api.nebula.example/v1") // queues the registration run
		if _, err := s.RequestPreflight(ctx, fx.authorID, fx.listingID, time.Minute); apperr.Code(err) != apperr.ECONFLICT {
			t.Errorf("a second run while one is queued: %v, want a conflict", err)
		}
		runProbes(t, s, nil)
		if _, err := s.RequestPreflight(ctx, fx.authorID, fx.listingID, time.Minute); apperr.Code(err) != apperr.ETHROTTLED {
			t.Errorf("a run moments after the last: %v, want throttled", err)
		}
	})
}

// TestPreflightIsClaimedExactlyOnce races claimers of two stores (two serve
// processes) over one queue: every run is claimed once and only once.
func TestPreflightIsClaimedExactlyOnce(t *testing.T) {
	for _, d := range []store.Dialect{store.Postgres, store.SQLite} {
		t.Run(string(d), func(t *testing.T) {
			url := storetest.URL(t, d)
			a := storetest.OpenURL(t, url)
			b := storetest.OpenURL(t, url)
			fx := newFixture(t, a)
			registerApproved(t, a, fx, "https://api.nebula.example/v1")
			// More listings, each with a queued run.
			for i := range 6 {
				m, err := a.CreateModel(ctx, nil, catalogue.Model{Slug: fmt.Sprintf("model-%d", i), Name: fmt.Sprintf("Model %d", i), ContextTokens: 8192})
				if err != nil {
					t.Fatal(err)
				}
				l, err := a.CreateListing(ctx, nil, fx.carrierID, m.ID)
				if err != nil {
					t.Fatal(err)
				}
				if _, err := a.PublishSeedEndpoint(ctx, l, "https://x.example/v1", "m", "v1.k", "sk-...k"); err != nil {
					t.Fatal(err)
				}
			}
			var mu sync.Mutex
			claimed := map[int64]int{}
			var wg sync.WaitGroup
			for w, st := range []*store.Store{a, b, a, b} {
				wg.Add(1)
				go func() {
					defer wg.Done()
					for {
						job, err := st.ClaimPreflight(ctx, "worker-"+string(rune('a'+w)), 100, time.Hour)
						if err != nil {
							t.Error(err)
							return
						}
						if job == nil {
							return
						}
						mu.Lock()
						claimed[job.RunID]++
						mu.Unlock()
					}
				}()
			}
			wg.Wait()
			if len(claimed) != 7 {
				t.Errorf("%d runs claimed, want 7", len(claimed))
			}
			for run, n := range claimed {
				if n != 1 {
					t.Errorf("run %d claimed %d times", run, n)
				}
			}
		})
	}
}

func TestDailyPreflightsQueueOncePerListing(t *testing.T) {
	storetest.ForEach(t, func(t *testing.T, s *store.Store) {
		fx := newFixture(t, s)
		registerApproved(t, s, fx, "https://api.nebula.example/v1")
		runProbes(t, s, nil)
		noJitter := func(int64) time.Duration { return 0 }
		if n, err := s.QueueDailyPreflights(ctx, 24*time.Hour, noJitter); err != nil || n != 0 {
			t.Fatalf("a listing probed just now was queued again: %d, %v", n, err)
		}
		clock := s.Now
		s.Now = func() time.Time { return clock().Add(25 * time.Hour) }
		defer func() { s.Now = clock }()
		if n, err := s.QueueDailyPreflights(ctx, 24*time.Hour, noJitter); err != nil || n != 1 {
			t.Fatalf("a day later: queued %d, %v; want 1", n, err)
		}
		if n, _ := s.QueueDailyPreflights(ctx, 24*time.Hour, noJitter); n != 0 {
			t.Errorf("queued twice: %d", n)
		}
	})
}

func TestFilingThatAddsAFlagOrACachedPriceQueuesPreflight(t *testing.T) {
	storetest.ForEach(t, func(t *testing.T, s *store.Store) {
		fx := newFixture(t, s)
		// Without an endpoint there is nothing to probe, and nothing is queued.
		id := submitted(t, s, fx, "0.45", nil)
		if job, _ := s.ClaimPreflight(ctx, "test", 2, time.Hour); job != nil {
			t.Fatalf("a run was queued for a listing without an endpoint: %+v", job)
		}
		if err := s.WithdrawFiling(ctx, fx.authorID, id); err != nil {
			t.Fatal(err)
		}
		registerApproved(t, s, fx, "https://api.nebula.example/v1")
		runProbes(t, s, nil)
		// A price change alone queues nothing.
		id = submitted(t, s, fx, "0.45", nil)
		if job, _ := s.ClaimPreflight(ctx, "test", 2, time.Hour); job != nil {
			t.Errorf("a price change queued a run")
		}
		if err := s.WithdrawFiling(ctx, fx.authorID, id); err != nil {
			t.Fatal(err)
		}
		// A new flag does.
		f := proposed(t, "0.45")
		f.Capabilities = []election.Capability{election.CapVision}
		if _, err := s.CreateFiling(ctx, fx.authorID, workflow.NewFiling{ListingID: fx.listingID, Fare: f, Submit: true}); err != nil {
			t.Fatal(err)
		}
		job, err := s.ClaimPreflight(ctx, "test", 2, time.Hour)
		if err != nil || job == nil {
			t.Fatalf("a filing adding vision queued no run: %v", err)
		}
	})
}

// TestAnEndpointRegisteredWhileARunIsOpenIsProbedAfterIt: a second endpoint
// registered while the first one's run is running could not queue a run
// (one open run a listing); when the open run finishes, the new endpoint's
// own run is queued, so the reviewer never decides on it without evidence.
func TestAnEndpointRegisteredWhileARunIsOpenIsProbedAfterIt(t *testing.T) {
	storetest.ForEach(t, func(t *testing.T, s *store.Store) {
		fx := newFixture(t, s)
		register := func(url string) {
			t.Helper()
			if _, err := s.RegisterEndpoint(ctx, fx.authorID, workflow.NewEndpoint{ListingID: fx.listingID, BaseURL: url,
				UpstreamModel: "glm-5", KeySealed: "v1.sealed", KeyHint: "sk-...abcd"}); err != nil {
				t.Fatal(err)
			}
		}
		registerApproved(t, s, fx, "https://first.nebula.example/v1")
		job, err := s.ClaimPreflight(ctx, "test", 2, time.Hour)
		if err != nil || job == nil {
			t.Fatalf("claim the first run: %v %v", job, err)
		}
		register("https://second.nebula.example/v1") // a move, while the first endpoint's run is running
		// Meanwhile the new endpoint shows no run: never the first one's.
		second, _, err := s.LatestEndpoint(ctx, fx.listingID)
		if err != nil {
			t.Fatal(err)
		}
		if run, _, err := s.FindPreflightRuns(ctx, fx.listingID, second.ID); err != nil || run != nil {
			t.Errorf("the new endpoint shows run %+v (%v), want none of its own yet", run, err)
		}
		if err := s.FinishPreflight(ctx, job, 7*24*time.Hour); err != nil {
			t.Fatal(err)
		}
		next, err := s.ClaimPreflight(ctx, "test", 2, time.Hour)
		if err != nil || next == nil {
			t.Fatalf("no run queued for the endpoint registered meanwhile: %v %v", next, err)
		}
		if next.EndpointID == job.EndpointID || next.BaseURL != "https://second.nebula.example/v1" {
			t.Errorf("the queued run probes %s (endpoint %d), want the second endpoint", next.BaseURL, next.EndpointID)
		}
		if err := s.FinishPreflight(ctx, next, 7*24*time.Hour); err != nil {
			t.Fatal(err)
		}
		if again, _ := s.ClaimPreflight(ctx, "test", 2, time.Hour); again != nil {
			t.Errorf("a third run was queued (endpoint %d): each endpoint needs one", again.EndpointID)
		}
	})
}

// TestOverridesAreHonest: a reviewer's override shows who set it, when and
// until when; a later failing probe of an overridden "verified" flag is
// flagged to the carrier and to staff; and after AIRSIDE_OVERRIDE_FOR the
// override no longer counts (the probes decide again).
func TestOverridesAreHonest(t *testing.T) {
	storetest.ForEach(t, func(t *testing.T, s *store.Store) {
		fx := newFixture(t, s)
		registerApproved(t, s, fx, "https://api.nebula.example/v1")
		runProbes(t, s, map[string]preflight.State{preflight.ProbeReachable: preflight.Passed, "json_schema": preflight.Failed})
		reviewer := newReviewer(t, s, "judge@airside.example")
		if err := s.SetCapabilityCheck(ctx, reviewer, fx.listingID, "json_schema", workflow.CapabilityVerified, "checked by hand"); err != nil {
			t.Fatal(err)
		}
		o, err := s.FindCapabilityOverrides(ctx, fx.listingID)
		if err != nil {
			t.Fatal(err)
		}
		if got := o["json_schema"]; got.By != "judge@airside.example" || got.Expired || !got.Until.After(s.Now()) || got.Note != "checked by hand" {
			t.Errorf("override %+v: want who, a future expiry and the note", got)
		}
		// A later run's probe of the flag fails: both sides are told.
		if _, err := s.RequestPreflight(ctx, fx.authorID, fx.listingID, 0); err != nil {
			t.Fatal(err)
		}
		runProbes(t, s, map[string]preflight.State{preflight.ProbeReachable: preflight.Passed, "json_schema": preflight.Failed})
		flagged := func(userID int64) bool {
			notes, err := s.FindNotifications(ctx, userID, 50)
			if err != nil {
				t.Fatal(err)
			}
			for _, n := range notes {
				if strings.Contains(n.Message, "override says json_schema is verified") {
					return true
				}
			}
			return false
		}
		if !flagged(fx.authorID) || !flagged(reviewer) {
			t.Errorf("the contradicted override was not flagged (carrier %v, staff %v)", flagged(fx.authorID), flagged(reviewer))
		}
		if checks, _ := s.FindCapabilityChecks(ctx, fx.listingID); checks["json_schema"] != workflow.CapabilityVerified {
			t.Errorf("a live override stopped counting: %v", checks)
		}
		// Past its period the override no longer counts; the failing probe
		// decides (it is within its own freshness here).
		s.OverrideFor = time.Hour
		clock := s.Now
		s.Now = func() time.Time { return clock().Add(2 * time.Hour) }
		defer func() { s.Now = clock }()
		if checks, _ := s.FindCapabilityChecks(ctx, fx.listingID); checks["json_schema"] != workflow.CapabilityFailed {
			t.Errorf("an expired override still counts: %v", checks)
		}
		if o, _ := s.FindCapabilityOverrides(ctx, fx.listingID); !o["json_schema"].Expired {
			t.Errorf("the expired override is not shown as expired: %+v", o["json_schema"])
		}
	})
}
