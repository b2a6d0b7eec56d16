package store_test

import (
	"context"
	"fmt"
	"sort"
	"strings"
	"sync"
	"testing"
	"time"

	"github.com/google/go-cmp/cmp"

	"github.com/airside/airside/internal/account"
	"github.com/airside/airside/internal/apperr"
	"github.com/airside/airside/internal/audit"
	"github.com/airside/airside/internal/catalogue"
	"github.com/airside/airside/internal/election"
	"github.com/airside/airside/internal/fare"
	"github.com/airside/airside/internal/money"
	"github.com/airside/airside/internal/store"
	"github.com/airside/airside/internal/store/storetest"
)

var ctx = context.Background()

// TestDialectsReachTheSameSchema proves both migration folders produce the same
// tables and columns.
func TestDialectsReachTheSameSchema(t *testing.T) {
	schemas := map[store.Dialect]map[string][]string{}
	for _, d := range storetest.Dialects {
		s := storetest.Open(t, d)
		cols, err := s.Columns(ctx)
		if err != nil {
			t.Fatal(err)
		}
		schemas[d] = cols
	}
	if len(schemas[store.SQLite]) < 15 {
		t.Fatalf("only %d tables on SQLite", len(schemas[store.SQLite]))
	}
	if diff := cmp.Diff(schemas[store.SQLite], schemas[store.Postgres]); diff != "" {
		t.Errorf("schema mismatch (-sqlite, +postgres):\n%s", diff)
	}
}

func TestMigrateIsIdempotent(t *testing.T) {
	storetest.ForEach(t, func(t *testing.T, s *store.Store) {
		if err := s.Migrate(ctx); err != nil {
			t.Fatalf("second migrate: %v", err)
		}
	})
}

func mustPrice(t *testing.T, s string) money.Micros {
	t.Helper()
	m, err := money.ParsePrice(s)
	if err != nil {
		t.Fatal(err)
	}
	return m
}

func TestFareRoundTripIsExact(t *testing.T) {
	storetest.ForEach(t, func(t *testing.T, s *store.Store) {
		c, err := s.CreateCarrier(ctx, nil, "nebula", "Nebula")
		if err != nil {
			t.Fatal(err)
		}
		m, err := s.CreateModel(ctx, nil, catalogue.Model{Slug: "kimi-k2.5", Name: "Kimi K2.5", ContextTokens: 262144})
		if err != nil {
			t.Fatal(err)
		}
		listingID, err := s.CreateListing(ctx, nil, c.ID, m.ID)
		if err != nil {
			t.Fatal(err)
		}
		p := func(v string) *money.Micros { m := mustPrice(t, v); return &m }
		eff := time.Date(2026, 8, 16, 16, 0, 0, 0, time.UTC)
		rpm := int64(600)
		want := &fare.Fare{
			ListingID: listingID, Input: mustPrice(t, "0.1"), Output: mustPrice(t, "2.200001"), CachedInput: p("0.3"),
			CacheRead: p("0.05"), LandingFee: 3000, Discount: 1000, MaxRPM: &rpm, CapScope: fare.ScopePerOrg,
			Capabilities: []election.Capability{election.CapTools, election.CapJSONSchema},
			Tiers:        []fare.Tier{{AboveTokens: 32768, Prices: fare.Prices{Input: p("1.1"), Output: p("4.4"), Request: p("0.001")}}},
			TimeBased: &fare.TimeBased{EffectiveAt: &eff, PeakHours: []fare.PeakWindow{{Start: 1, End: 4}, {Start: 6, End: 10}},
				OffPeakDays: []time.Weekday{0, 6}, UTCOffsetMinutes: 480,
				Peak: fare.Prices{Input: p("0.66"), Image: p("0.004")}, OffPeak: fare.Prices{Input: p("0.33"), CachedInput: p("0.18")}},
		}
		// The market's attributes (sec. 7), a declared "not kept" (0) and
		// "does not train" (false) kept apart from undeclared.
		ctxLen, retention, trains := int64(131072), int64(0), false
		want.Market = fare.Market{ContextLength: &ctxLen, Quantization: "fp8", RetentionDays: &retention, TrainsOnPrompts: &trains,
			Regions: []string{"DE", "US"}, RequestPrice: p("0.0005"), ImagePrice: p("0.002")}
		fareID, err := s.PublishSeedFare(ctx, want)
		if err != nil {
			t.Fatal(err)
		}
		l, err := s.FindListing(ctx, listingID, nil)
		if err != nil {
			t.Fatal(err)
		}
		got := l.Published
		if got == nil || got.ID != fareID {
			t.Fatalf("published fare %+v, want id %d", got, fareID)
		}
		if got.Input.String() != "0.10" || got.Input.Float() != 0.1 {
			t.Errorf("0.1 read back as %s (%v)", got.Input, got.Input.Float())
		}
		if diff := cmp.Diff(want, got, cmp.FilterPath(func(p cmp.Path) bool {
			return p.String() == "ID" || p.String() == "CreatedAt" || p.String() == "TimeBased.EffectiveAt"
		}, cmp.Ignore())); diff != "" {
			t.Errorf("fare mismatch (-want, +got):\n%s", diff)
		}
		if !got.TimeBased.EffectiveAt.Equal(eff) {
			t.Errorf("effective at %v, want %v", got.TimeBased.EffectiveAt, eff)
		}
		if l.Status != catalogue.StatusInService {
			t.Errorf("status %s after publication", l.Status)
		}
		if rev, _ := s.CatalogueRevision(ctx); rev != 1 {
			t.Errorf("catalogue revision %d, want 1", rev)
		}
	})
}

func TestListingsAreScopedToCarriers(t *testing.T) {
	storetest.ForEach(t, func(t *testing.T, s *store.Store) {
		a, _ := s.CreateCarrier(ctx, nil, "carrier-a", "A")
		b, _ := s.CreateCarrier(ctx, nil, "carrier-b", "B")
		m, _ := s.CreateModel(ctx, nil, catalogue.Model{Slug: "glm-5", Name: "GLM-5", ContextTokens: 200000})
		la, err := s.CreateListing(ctx, nil, a.ID, m.ID)
		if err != nil {
			t.Fatal(err)
		}
		lb, _ := s.CreateListing(ctx, nil, b.ID, m.ID)
		if _, err := s.CreateListing(ctx, nil, a.ID, m.ID); apperr.Code(err) != apperr.EINVALID {
			t.Errorf("duplicate listing: %v", err)
		}
		if _, err := s.FindListing(ctx, lb, []int64{a.ID}); apperr.Code(err) != apperr.ENOTFOUND {
			t.Errorf("carrier A found carrier B's listing: %v", err)
		}
		if _, err := s.FindListing(ctx, la, []int64{a.ID}); err != nil {
			t.Errorf("carrier A cannot find its own listing: %v", err)
		}
		all, _ := s.FindListings(ctx, catalogue.ListingFilter{})
		mine, _ := s.FindListings(ctx, catalogue.ListingFilter{CarrierIDs: []int64{a.ID}})
		none, _ := s.FindListings(ctx, catalogue.ListingFilter{CarrierIDs: []int64{}})
		if len(all) != 2 || len(mine) != 1 || mine[0].ID != la || len(none) != 0 {
			t.Errorf("all=%d mine=%d none=%d", len(all), len(mine), len(none))
		}
	})
}

// TestListingEntriesAgreeWithListings: the light entries a table narrows are
// the listings FindListings reads (same order, names, status and published
// input), scoped to carriers the same way; reading by ids reads only those.
func TestListingEntriesAgreeWithListings(t *testing.T) {
	storetest.ForEach(t, func(t *testing.T, s *store.Store) {
		a, _ := s.CreateCarrier(ctx, nil, "carrier-a", "A")
		b, _ := s.CreateCarrier(ctx, nil, "carrier-b", "B")
		var ids []int64
		for i, name := range []string{"Zeta", "Alpha", "Mid"} {
			m, _ := s.CreateModel(ctx, nil, catalogue.Model{Slug: strings.ToLower(name), Name: name, ContextTokens: 8192})
			for _, c := range []int64{a.ID, b.ID} {
				id, err := s.CreateListing(ctx, nil, c, m.ID)
				if err != nil {
					t.Fatal(err)
				}
				ids = append(ids, id)
				if i != 1 {
					continue // Alpha stays a draft without a fare
				}
				if _, err := s.PublishSeedFare(ctx, &fare.Fare{ListingID: id, Input: mustPrice(t, "0.1"), Output: mustPrice(t, "0.3"),
					LandingFee: fare.BaselineLandingFee, CapScope: fare.ScopeGlobal}); err != nil {
					t.Fatal(err)
				}
			}
		}
		for _, scope := range [][]int64{nil, {b.ID}, {}} {
			entries, err := s.FindListingEntries(ctx, scope)
			if err != nil {
				t.Fatal(err)
			}
			listings, _ := s.FindListings(ctx, catalogue.ListingFilter{CarrierIDs: scope})
			if len(entries) != len(listings) {
				t.Fatalf("scope %v: %d entries, %d listings", scope, len(entries), len(listings))
			}
			for i, l := range listings {
				e := entries[i]
				var input *money.Micros
				if l.Published != nil {
					input = &l.Published.Input
				}
				if e.ID != l.ID || e.CarrierID != l.CarrierID || e.CarrierName != l.CarrierName || e.CarrierSlug != l.CarrierSlug ||
					e.Model.ID != l.Model.ID || e.Model.Name != l.Model.Name || e.Model.Slug != l.Model.Slug || e.Status != l.Status ||
					(input == nil) != (e.PublishedInput == nil) || (input != nil && *input != *e.PublishedInput) {
					t.Errorf("scope %v, row %d: entry %+v, listing %+v", scope, i, e, l)
				}
			}
		}
		// Without fares: the same listings, in service as before, none with a fare.
		full, _ := s.FindListings(ctx, catalogue.ListingFilter{})
		bare, err := s.FindListings(ctx, catalogue.ListingFilter{WithoutFares: true})
		if err != nil || len(bare) != len(full) {
			t.Fatalf("without fares: %d listings (%v), want %d", len(bare), err, len(full))
		}
		published := 0
		for i := range full {
			if full[i].Published != nil {
				published++
			}
			if bare[i].ID != full[i].ID || bare[i].Status != full[i].Status || bare[i].Published != nil {
				t.Errorf("without fares, row %d: %+v; with them %+v", i, bare[i], full[i])
			}
		}
		if published == 0 {
			t.Error("no listing with a fare to leave out")
		}
		some, _ := s.FindListings(ctx, catalogue.ListingFilter{IDs: []int64{ids[1], ids[4]}})
		if len(some) != 2 || some[0].ID != ids[4] || some[1].ID != ids[1] { // Mid before Zeta
			t.Errorf("by ids %d and %d: %+v", ids[4], ids[1], some)
		}
		if none, _ := s.FindListings(ctx, catalogue.ListingFilter{IDs: []int64{}}); len(none) != 0 {
			t.Errorf("no ids read %d listings", len(none))
		}
	})
}

func TestUsersInvitesAndSessions(t *testing.T) {
	storetest.ForEach(t, func(t *testing.T, s *store.Store) {
		admin, err := account.NewService(s).CreateUser(ctx, nil, account.NewUser{Email: "Admin@Example.com", Password: "long enough pw", Staff: account.StaffAdmin})
		if err != nil {
			t.Fatal(err)
		}
		if admin.Email != "admin@example.com" {
			t.Errorf("email %q not normalised", admin.Email)
		}
		if _, err := account.NewService(s).CreateUser(ctx, nil, account.NewUser{Email: "admin@example.com", Password: "long enough pw"}); apperr.FieldErrors(err)["email"] == "" {
			t.Errorf("duplicate email: %v", err)
		}
		if _, err := account.NewService(s).CreateUser(ctx, nil, account.NewUser{Email: "x@example.com", Password: "short"}); apperr.FieldErrors(err)["password"] == "" {
			t.Errorf("short password: %v", err)
		}

		accounts := account.NewService(s)
		token, err := accounts.InviteCarrier(ctx, &account.Principal{User: *admin}, "orbit", "Orbit Compute", "first@orbit.example")
		if err != nil {
			t.Fatal(err)
		}
		inv, err := accounts.FindInvite(ctx, token)
		if err != nil || inv.Carrier.Slug != "orbit" || inv.Email != "first@orbit.example" {
			t.Fatalf("invite %+v, %v", inv, err)
		}
		user, err := accounts.AcceptInvite(ctx, token, "First", "a strong password")
		if err != nil {
			t.Fatal(err)
		}
		if _, err := accounts.AcceptInvite(ctx, token, "Again", "a strong password"); apperr.Code(err) != apperr.ENOTFOUND {
			t.Errorf("invite used twice: %v", err)
		}
		p, err := s.FindPrincipal(ctx, user.ID)
		if err != nil || p.RoleIn(inv.Carrier.ID) != account.CarrierAdmin {
			t.Fatalf("principal %+v, %v", p, err)
		}

		if err := s.SaveSession(ctx, "h1", account.Session{UserID: &user.ID, Data: "{}", ExpiresAt: time.Now().Add(time.Hour)}); err != nil {
			t.Fatal(err)
		}
		if err := s.SaveSession(ctx, "h1", account.Session{UserID: &user.ID, Data: `{"flash":"x"}`, ExpiresAt: time.Now().Add(time.Hour)}); err != nil {
			t.Fatal(err)
		}
		got, err := s.FindSession(ctx, "h1")
		if err != nil || got.Data != `{"flash":"x"}` {
			t.Fatalf("session %+v, %v", got, err)
		}
		if err := s.DeleteSession(ctx, "h1"); err != nil {
			t.Fatal(err)
		}
		if _, err := s.FindSession(ctx, "h1"); apperr.Code(err) != apperr.ENOTFOUND {
			t.Errorf("deleted session found: %v", err)
		}
		s.SaveSession(ctx, "old", account.Session{Data: "{}", ExpiresAt: time.Now().Add(-time.Minute)})
		if _, err := s.FindSession(ctx, "old"); apperr.Code(err) != apperr.ENOTFOUND {
			t.Errorf("expired session found: %v", err)
		}
		if n, err := s.DeleteExpiredSessions(ctx); err != nil || n != 1 {
			t.Errorf("deleted %d expired sessions, %v", n, err)
		}

		events, err := s.FindAuditEvents(ctx, audit.Filter{})
		if err != nil {
			t.Fatal(err)
		}
		var actions []string
		for _, e := range events {
			actions = append(actions, e.Action)
		}
		sort.Strings(actions)
		if diff := cmp.Diff([]string{"carrier.create", "invite.accept", "invite.create", "user.create"}, actions); diff != "" {
			t.Errorf("audit actions mismatch (-want, +got):\n%s", diff)
		}
		mine, _ := s.FindAuditEvents(ctx, audit.Filter{CarrierIDs: []int64{inv.Carrier.ID}})
		if len(mine) != 3 {
			t.Errorf("carrier sees %d audit events, want 3", len(mine))
		}
	})
}

func TestLoginThrottle(t *testing.T) {
	storetest.ForEach(t, func(t *testing.T, s *store.Store) {
		if _, err := account.NewService(s).CreateUser(ctx, nil, account.NewUser{Email: "ada@example.com", Password: "the right password"}); err != nil {
			t.Fatal(err)
		}
		now := time.Now().UTC()
		s.Now = func() time.Time { return now }
		svc := &account.Service{Store: s, Now: s.Now}
		login := func(email, password, addr, device string) (*account.LoggedIn, error) {
			return svc.Authenticate(ctx, account.Login{Email: email, Password: password, Addr: addr, DeviceToken: device})
		}
		if _, err := login("ada@example.com", "wrong", "10.0.0.1", ""); apperr.Code(err) != apperr.EUNAUTHORIZED {
			t.Fatalf("wrong password: %v", err)
		}
		if _, err := login("nobody@example.com", "wrong", "10.0.0.1", ""); err != account.ErrBadCredentials {
			t.Errorf("unknown account gets a different message: %v", err)
		}
		ok, err := login("ADA@example.com", "the right password", "10.0.0.1", "")
		if err != nil || ok.Principal.User.Email != "ada@example.com" || ok.DeviceToken == "" {
			t.Fatalf("right password: %+v, %v", ok, err)
		}
		device := ok.DeviceToken

		// The attacker's failures hold the account back with growing delays,
		// and the last free attempts say so before the waits start.
		var messages []string
		for range account.AccountThrottle.Free {
			_, err := login("ada@example.com", "wrong", "10.0.0.2", "")
			messages = append(messages, apperr.Message(err))
		}
		for i, want := range []string{"", "", "After 2 more wrong attempts", "After 1 more wrong attempt,", "Each further attempt now waits longer"} {
			if got := messages[i]; want == "" && got != account.ErrBadCredentials.Message || want != "" && !strings.Contains(got, want) {
				t.Errorf("failure %d says %q, want %q", i+1, got, want)
			}
		}
		_, err = login("ada@example.com", "the right password", "10.0.0.3", "")
		if apperr.Code(err) != apperr.ETHROTTLED || apperr.RetryAfterOf(err) < 1 {
			t.Fatalf("account not held back after %d failures: %v", account.AccountThrottle.Free, err)
		}
		// ... but not the browser Ada logged in from before,
		if _, err := login("ada@example.com", "the right password", "10.0.0.3", device); err != nil {
			t.Errorf("a known device is held back by others' failures: %v", err)
		}
		// and not for good: after the delay the right password works.
		now = now.Add(account.AccountThrottle.Delay(int64(account.AccountThrottle.Free)) + time.Second)
		if _, err := login("ada@example.com", "the right password", "10.0.0.3", ""); err != nil {
			t.Errorf("still held back after the delay: %v", err)
		}

		// An address spraying many accounts is held back, other addresses not.
		for i := range account.AddressThrottle.Free {
			login(fmt.Sprintf("spray%d@example.com", i), "wrong", "10.9.9.9", "")
		}
		if _, err := login("ada@example.com", "the right password", "10.9.9.9", ""); apperr.Code(err) != apperr.ETHROTTLED {
			t.Errorf("address not held back after %d failures: %v", account.AddressThrottle.Free, err)
		}
		if _, err := login("ada@example.com", "the right password", "10.0.0.4", ""); err != nil {
			t.Errorf("another address is held back: %v", err)
		}
		// F2: the browser Ada logged in from before keeps working behind the
		// throttled address (an office or proxy where someone sprays made-up
		// e-mails): the address throttle slows unknown devices only.
		for i := range 3 * account.AddressThrottle.Free {
			login(fmt.Sprintf("made-up%d@example.com", i), "wrong", "10.9.9.9", "")
		}
		if _, err := login("ada@example.com", "the right password", "10.9.9.9", device); err != nil {
			t.Errorf("a known device behind an address others throttled: %v", err)
		}
		if _, err := login("ada@example.com", "the right password", "10.9.9.9", ""); apperr.Code(err) != apperr.ETHROTTLED {
			t.Errorf("an unknown device behind the throttled address: %v, want throttled", err)
		}
		throttles, err := s.FindLoginThrottles(ctx)
		if err != nil || len(throttles) == 0 {
			t.Fatalf("throttles %v, %v", throttles, err)
		}
		admin := &account.Principal{User: account.User{ID: ok.Principal.User.ID, Staff: account.StaffAdmin}}
		if err := svc.ClearThrottle(ctx, admin, "addr:10.9.9.9"); err != nil {
			t.Fatal(err)
		}
		if _, err := login("ada@example.com", "the right password", "10.9.9.9", ""); err != nil {
			t.Errorf("a cleared address is still held back: %v", err)
		}
	})
}

// TestLoginThrottleParallel: a burst of parallel guesses cannot outrun the
// throttle: attempts are reserved before any password is checked, so no
// more than the free attempts are checked, and the right password deep in
// the burst is held back with the rest.
func TestLoginThrottleParallel(t *testing.T) {
	storetest.ForEach(t, func(t *testing.T, s *store.Store) {
		if _, err := account.NewService(s).CreateUser(ctx, nil, account.NewUser{Email: "bob@example.com", Password: "the right password"}); err != nil {
			t.Fatal(err)
		}
		// The clock stands still: on a busy machine the burst can outlast
		// the 1 s delay after the fifth guess, which then rightly admits a
		// sixth. What this tests is the reservation, not the machine's speed.
		frozen := time.Now().UTC().Truncate(time.Microsecond)
		s.Now = func() time.Time { return frozen }
		svc := account.NewService(s)
		const guesses = 40
		var wg sync.WaitGroup
		results := make([]error, guesses)
		for i := range guesses {
			wg.Add(1)
			go func() {
				defer wg.Done()
				password := fmt.Sprintf("guess %d", i)
				if i == guesses-7 {
					password = "the right password"
				}
				_, results[i] = svc.Authenticate(ctx, account.Login{Email: "bob@example.com", Password: password, Addr: fmt.Sprintf("10.1.0.%d", i)})
			}()
		}
		wg.Wait()
		checked := 0
		for _, err := range results {
			switch apperr.Code(err) {
			case apperr.ETHROTTLED:
			case "", apperr.EUNAUTHORIZED:
				checked++
			default:
				t.Errorf("unexpected error: %v", err)
			}
		}
		// A successful login clears the account's count (its owner is in), so
		// when the right password happened to be checked within the burst,
		// another Free guesses may follow it; never more.
		limit := account.AccountThrottle.Free
		if results[guesses-7] == nil {
			limit *= 2
		}
		if checked > limit || checked == 0 {
			t.Errorf("%d of %d parallel guesses were checked, want 1 to %d", checked, guesses, limit)
		}
	})
}

// TestPasswordChangeGuessesAreThrottled (F1): a stolen session guessing the
// current password through the change form, 100 at once, gets at most the
// free attempts checked, per session and per account (a second session of
// the same account is held back too); the right password then still works
// once the wait has passed, and clears the count.
func TestPasswordChangeGuessesAreThrottled(t *testing.T) {
	storetest.ForEach(t, func(t *testing.T, s *store.Store) {
		user, err := account.NewService(s).CreateUser(ctx, nil, account.NewUser{Email: "eve@example.com", Password: "the right password"})
		if err != nil {
			t.Fatal(err)
		}
		p, err := s.FindPrincipal(ctx, user.ID)
		if err != nil {
			t.Fatal(err)
		}
		now := time.Now().UTC().Truncate(time.Microsecond)
		s.Now = func() time.Time { return now }
		self := &account.SelfService{Store: s, Now: s.Now}
		const guesses = 100
		results := make([]error, guesses)
		var wg sync.WaitGroup
		for i := range guesses {
			wg.Go(func() {
				results[i] = self.ChangePassword(ctx, p, fmt.Sprintf("guess %d", i), "a new long password", "a new long password", "stolen-session")
			})
		}
		wg.Wait()
		checked := 0
		for _, err := range results {
			switch apperr.Code(err) {
			case apperr.ETHROTTLED:
			case apperr.EINVALID:
				checked++
			default:
				t.Errorf("unexpected answer: %v", err)
			}
		}
		if checked < 1 || checked > account.PasswordChangeThrottle.Free {
			t.Errorf("%d of %d parallel guesses at the current password were checked, want 1 to %d", checked, guesses, account.PasswordChangeThrottle.Free)
		}
		if err := self.ChangePassword(ctx, p, "another guess", "x", "x", "second-session"); apperr.Code(err) != apperr.ETHROTTLED {
			t.Errorf("another session of the same account: %v, want throttled", err)
		}
		now = now.Add(account.PasswordChangeThrottle.MaxDelay + time.Second)
		if err := self.ChangePassword(ctx, p, "the right password", "a new long password", "a new long password", "owner-session"); err != nil {
			t.Fatalf("the owner, after the wait, with the right password: %v", err)
		}
		if n, _ := s.LoginAttempts(ctx, fmt.Sprintf("password:user:%d", user.ID), account.PasswordChangeThrottle); n != 0 {
			t.Errorf("%d attempts still counted after the right password", n)
		}
	})
}

// TestPasswordSetSpendsOlderResetLinks (F5): setting the password, by a reset
// link or by its owner, spends every other reset link of the account.
func TestPasswordSetSpendsOlderResetLinks(t *testing.T) {
	storetest.ForEach(t, func(t *testing.T, s *store.Store) {
		admin, err := account.NewService(s).CreateUser(ctx, nil, account.NewUser{Email: "admin@example.com", Password: "the admin password", Staff: account.StaffAdmin})
		if err != nil {
			t.Fatal(err)
		}
		user, err := account.NewService(s).CreateUser(ctx, nil, account.NewUser{Email: "ann@example.com", Password: "the right password"})
		if err != nil {
			t.Fatal(err)
		}
		ap, _ := s.FindPrincipal(ctx, admin.ID)
		self := &account.SelfService{Store: s, Now: time.Now}
		links := make([]string, 3)
		for i := range links {
			if links[i], err = self.IssueReset(ctx, ap, user.ID); err != nil {
				t.Fatal(err)
			}
		}
		if err := self.Reset(ctx, links[0], "a brand new password", "a brand new password"); err != nil {
			t.Fatal(err)
		}
		if err := self.Reset(ctx, links[1], "the attacker's password", "the attacker's password"); apperr.Code(err) != apperr.ENOTFOUND {
			t.Errorf("an older link after a reset: %v, want refused", err)
		}
		later, _ := self.IssueReset(ctx, ap, user.ID)
		up, _ := s.FindPrincipal(ctx, user.ID)
		if err := self.ChangePassword(ctx, up, "a brand new password", "yet another password", "yet another password", "own-session"); err != nil {
			t.Fatal(err)
		}
		for _, link := range []string{links[2], later} {
			if err := self.Reset(ctx, link, "the attacker's password", "the attacker's password"); apperr.Code(err) != apperr.ENOTFOUND {
				t.Errorf("a link issued before the owner changed the password: %v, want refused", err)
			}
		}
	})
}

// TestAuditIsAppendOnly: the database itself refuses to change or delete an
// audit row, whatever role the application connects as.
func TestAuditIsAppendOnly(t *testing.T) {
	storetest.ForEach(t, func(t *testing.T, s *store.Store) {
		if _, err := account.NewService(s).CreateUser(ctx, nil, account.NewUser{Email: "ada@example.com", Password: "the right password"}); err != nil {
			t.Fatal(err)
		}
		events, err := s.FindAuditEvents(ctx, audit.Filter{})
		if err != nil || len(events) == 0 {
			t.Fatalf("no audit row to tamper with: %v", err)
		}
		for _, stmt := range []string{
			"UPDATE audit_events SET action = 'nothing.happened'",
			"DELETE FROM audit_events",
		} {
			if err := s.ExecForTest(ctx, stmt); err == nil || !strings.Contains(err.Error(), "append-only") {
				t.Errorf("%s: %v, want the append-only refusal", stmt, err)
			}
		}
		after, _ := s.FindAuditEvents(ctx, audit.Filter{})
		if len(after) != len(events) || after[0].Action != events[0].Action {
			t.Errorf("audit rows changed: %+v", after)
		}
	})
}

// TestAuditFilters: the audit log's filters and paging on both databases.
func TestAuditFilters(t *testing.T) {
	storetest.ForEach(t, func(t *testing.T, s *store.Store) {
		accounts := account.NewService(s)
		ada, err := accounts.CreateUser(ctx, nil, account.NewUser{Email: "ada@example.com", Password: "a long password", Staff: account.StaffAdmin})
		if err != nil {
			t.Fatal(err)
		}
		if _, err := s.CreateCarrier(ctx, &ada.ID, "zephyr", "Zephyr"); err != nil {
			t.Fatal(err)
		}
		for i := range 5 {
			if err := s.RecordAudit(ctx, &ada.ID, "token.use", "api_token", int64(i+1), nil); err != nil {
				t.Fatal(err)
			}
		}
		count := func(f audit.Filter) int {
			events, err := s.FindAuditEvents(ctx, f)
			if err != nil {
				t.Fatal(err)
			}
			return len(events)
		}
		for name, test := range map[string]struct {
			f    audit.Filter
			want int
		}{
			"a family":           {audit.Filter{Action: "token."}, 5},
			"one action":         {audit.Filter{Action: "carrier.create"}, 1},
			"one person":         {audit.Filter{Actor: "ada@example.com"}, 6},
			"nobody":             {audit.Filter{Actor: "nobody@example.com"}, 0},
			"one carrier":        {audit.Filter{CarrierSlug: "zephyr"}, 1},
			"a future period":    {audit.Filter{Since: time.Now().Add(time.Hour)}, 0},
			"a period until now": {audit.Filter{Action: "token.", Until: time.Now().Add(time.Hour)}, 5},
			"a page":             {audit.Filter{Action: "token.", Limit: 2, Offset: 4}, 1},
		} {
			if got := count(test.f); got != test.want {
				t.Errorf("%s: %d events, want %d", name, got, test.want)
			}
		}
	})
}
