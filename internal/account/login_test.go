package account

import (
	"context"
	"runtime"
	"sync"
	"sync/atomic"
	"testing"
	"time"

	"github.com/airside/airside/internal/apperr"
)

// loginStore is an in-memory account store with one user and no throttle,
// for the rules of Authenticate that need no database.
type loginStore struct {
	Store // the methods these tests do not reach panic
	user  *User
}

func (s *loginStore) FindUserByEmail(_ context.Context, email string) (*User, error) {
	if s.user != nil && email == s.user.Email {
		return s.user, nil
	}
	return nil, apperr.Errorf(apperr.ENOTFOUND, "User not found.")
}
func (s *loginStore) ReserveLoginAttempt(context.Context, string, ThrottlePolicy) (time.Duration, error) {
	return 0, nil
}
func (s *loginStore) LoginAttempts(context.Context, string, ThrottlePolicy) (int64, error) {
	return 1, nil
}
func (s *loginStore) RecordAudit(context.Context, *int64, string, string, int64, map[string]any) error {
	return nil
}

// countChecks replaces the password check with one that counts its calls
// and the most that ran at once, for the duration of a test.
func countChecks(t *testing.T, hold time.Duration) (calls, peak *atomic.Int64) {
	calls, peak = new(atomic.Int64), new(atomic.Int64)
	var running atomic.Int64
	saved := checkPassword
	checkPassword = func(hash, password string) bool {
		calls.Add(1)
		n := running.Add(1)
		for {
			p := peak.Load()
			if n <= p || peak.CompareAndSwap(p, n) {
				break
			}
		}
		time.Sleep(hold)
		running.Add(-1)
		return false
	}
	t.Cleanup(func() { checkPassword = saved })
	return calls, peak
}

// TestUnknownAccountsAreHashedToo: an address with no account costs the same
// one password hash as a known one, so timing does not tell which exist.
func TestUnknownAccountsAreHashedToo(t *testing.T) {
	calls, _ := countChecks(t, 0)
	svc := &Service{Store: &loginStore{user: &User{ID: 1, Email: "ada@example.com", PasswordHash: "x"}}, Now: time.Now}
	for _, email := range []string{"ada@example.com", "nobody@example.com"} {
		before := calls.Load()
		_, err := svc.Authenticate(context.Background(), Login{Email: email, Password: "wrong password", Addr: "10.0.0.1"})
		if err != ErrBadCredentials {
			t.Errorf("%s: %v", email, err)
		}
		if got := calls.Load() - before; got != 1 {
			t.Errorf("%s: %d password checks, want exactly 1", email, got)
		}
	}
	if !verifyHash(dummyHash(), "airside: no such account, constant-time answer") {
		t.Error("the dummy hash is not a real argon2id hash")
	}
}

// TestHashesAreBounded: a burst of logins runs at most one password hash per
// core at once (each costs 19 MiB), and a login that cannot get a slot in
// time is told to come back (429 with Retry-After), not queued for ever.
func TestHashesAreBounded(t *testing.T) {
	_, peak := countChecks(t, 20*time.Millisecond)
	svc := &Service{Store: &loginStore{}, Now: time.Now}
	saved := HashWait
	HashWait = time.Minute // this part checks the bound, not the give-up
	var wg sync.WaitGroup
	for range 8 * runtime.NumCPU() {
		wg.Add(1)
		go func() {
			defer wg.Done()
			svc.Authenticate(context.Background(), Login{Email: "x@example.com", Password: "guess", Addr: "10.0.0.1"})
		}()
	}
	wg.Wait()
	HashWait = saved
	if got := peak.Load(); got < 1 || got > int64(runtime.NumCPU()) {
		t.Errorf("%d hashes ran at once, want 1 to %d", got, runtime.NumCPU())
	}

	// Every slot taken: the next login gives up after HashWait.
	HashWait = 50 * time.Millisecond
	t.Cleanup(func() { HashWait = saved })
	releaseAll := takeEverySlot(t)
	_, err := svc.Authenticate(context.Background(), Login{Email: "x@example.com", Password: "guess", Addr: "10.0.0.1"})
	releaseAll()
	if apperr.Code(err) != apperr.ETHROTTLED || apperr.RetryAfterOf(err) < 1 {
		t.Errorf("a login with no hashing slot: %v", err)
	}
}

func TestThrottleDelays(t *testing.T) {
	p := ThrottlePolicy{Window: 15 * time.Minute, Free: 5, MaxDelay: 15 * time.Minute}
	for _, test := range []struct {
		attempt int64
		want    time.Duration
	}{{1, 0}, {4, 0}, {5, time.Second}, {6, 2 * time.Second}, {7, 4 * time.Second}, {14, 512 * time.Second}, {15, 15 * time.Minute}, {1000, 15 * time.Minute}} {
		if got := p.Delay(test.attempt); got != test.want {
			t.Errorf("delay after attempt %d = %v, want %v", test.attempt, got, test.want)
		}
	}
}

func TestPasswordRules(t *testing.T) {
	for _, test := range []struct {
		password string
		ok       bool
	}{
		{"1234567890", false},
		{"          ", false},
		{"\t\t\t\t\t\t\t\t\t\t", false},
		{"Password123", false},
		{"short", false},
		{"correct horse battery staple", true},
		{"a long pass phrase with spaces in it, which is welcome", true},
		{"airside-demo", true},
	} {
		if got := ValidatePassword(test.password) == ""; got != test.ok {
			t.Errorf("%q accepted=%v, want %v (%s)", test.password, got, test.ok, ValidatePassword(test.password))
		}
	}
}

// TestEveryHashTakesASlot (F1): with every hashing slot taken, nothing that
// hashes or checks a password runs; each gives up, throttled, after
// HashWait: a password check, a hash, a reset, a sign-up, a new user.
func TestEveryHashTakesASlot(t *testing.T) {
	saved := HashWait
	HashWait = 30 * time.Millisecond
	t.Cleanup(func() { HashWait = saved })
	defer takeEverySlot(t)()
	ctx := context.Background()
	const pw = "a long enough password"
	for name, run := range map[string]func() error{
		"a password check": func() error { _, err := VerifyPassword(ctx, dummyHash(), pw); return err },
		"a hash":           func() error { _, err := HashPassword(ctx, pw); return err },
		"a reset":          func() error { return (&SelfService{}).Reset(ctx, "token", pw, pw) },
		"a sign-up":        func() error { _, err := (&Service{}).AcceptInvite(ctx, "token", "Ann", pw); return err },
		"a new user": func() error {
			_, err := (&Service{}).CreateUser(ctx, nil, NewUser{Email: "a@example.com", Password: pw})
			return err
		},
	} {
		if err := run(); apperr.Code(err) != apperr.ETHROTTLED {
			t.Errorf("%s with every slot taken: %v, want throttled", name, err)
		}
	}
}

// takeEverySlot holds every hashing slot until the returned func is called.
func takeEverySlot(t *testing.T) (releaseAll func()) {
	t.Helper()
	var releases []func()
	for range runtime.NumCPU() {
		release, err := globalHashSlots.acquire(context.Background())
		if err != nil {
			t.Fatal(err)
		}
		releases = append(releases, release)
	}
	return func() {
		for _, release := range releases {
			release()
		}
	}
}
