package account

import (
	"context"
	"fmt"
	"runtime"
	"sync"
	"time"

	"github.com/airside/airside/internal/apperr"
)

// Login throttling. Every attempt is reserved before its password is
// checked, per account (or per known device) and per client address, by a
// compare-and-swap in the store: of any number of parallel guesses, only as
// many as the policy allows are checked at all. A failure keeps its
// reservation and pushes the next allowed attempt further away (growing
// delays, never a hard lock); a success clears the account and refunds the
// address, so busy offices behind one address are not held back by their own
// good logins.

// ThrottlePolicy says how many attempts a subject may make freely within a
// window, and how long it waits after each attempt beyond them.
type ThrottlePolicy struct {
	Window   time.Duration
	Free     int
	MaxDelay time.Duration
}

// Delay is how long a subject waits after its n-th attempt in a window:
// nothing between the first Free-1, then 1 s after the Free-th, 2 s, 4 s ...
// up to MaxDelay. So a burst runs at most Free attempts at once.
func (p ThrottlePolicy) Delay(n int64) time.Duration {
	over := n - int64(p.Free) + 1
	if over <= 0 {
		return 0
	}
	if over > 20 {
		return p.MaxDelay
	}
	return min(time.Duration(1<<(over-1))*time.Second, p.MaxDelay)
}

// The policies: an account (or a known device) gets 5 free attempts, an
// address 20 (offices and proxies share one), each within 15 minutes.
var (
	AccountThrottle = ThrottlePolicy{Window: 15 * time.Minute, Free: 5, MaxDelay: 15 * time.Minute}
	AddressThrottle = ThrottlePolicy{Window: 15 * time.Minute, Free: 20, MaxDelay: 15 * time.Minute}
)

// PasswordChangeThrottle bounds guesses at the current password through the
// change-password form, per account and per session: a stolen session
// cannot use it to guess the password faster than the login form allows.
var PasswordChangeThrottle = ThrottlePolicy{Window: 15 * time.Minute, Free: 5, MaxDelay: 15 * time.Minute}

// ThrottleWindow is how long a throttle row is kept after its last attempt.
const ThrottleWindow = 15 * time.Minute

// Throttle is a subject's standing, as admins see it.
type Throttle struct {
	Subject       string
	Attempts      int64
	NextAllowedAt time.Time
	UpdatedAt     time.Time
}

// ErrThrottled refuses an attempt, saying when to come back.
func ErrThrottled(wait time.Duration) error {
	secs := int(wait.Round(time.Second).Seconds())
	if secs < 1 {
		secs = 1
	}
	e := apperr.Errorf(apperr.ETHROTTLED, "Too many attempts. Try again in %s.", humanWait(secs))
	e.RetryAfter = secs
	return e
}

func humanWait(secs int) string {
	switch {
	case secs == 1:
		return "1 second"
	case secs < 90:
		return fmt.Sprintf("%d seconds", secs)
	default:
		return fmt.Sprintf("%d minutes", (secs+59)/60)
	}
}

// hashSlots bounds how many argon2id hashes (19 MiB each) run at once, so a
// burst of logins costs bounded memory and leaves CPU for everyone else.
type hashSlots struct {
	once  sync.Once
	slots chan struct{}
}

// HashWait is how long a login waits for a hashing slot before it is told
// to come back.
var HashWait = 2 * time.Second

func (h *hashSlots) acquire(ctx context.Context) (release func(), err error) {
	h.once.Do(func() { h.slots = make(chan struct{}, max(1, runtime.NumCPU())) })
	t := time.NewTimer(HashWait)
	defer t.Stop()
	select {
	case h.slots <- struct{}{}:
		return func() { <-h.slots }, nil
	case <-t.C:
		return nil, ErrThrottled(time.Second)
	case <-ctx.Done():
		return nil, ctx.Err()
	}
}

// globalHashSlots is shared by every service of the process: the bound is
// on the machine, not on a service value.
var globalHashSlots hashSlots

// dummyHash is checked against when an address has no account, so an
// unknown address takes as long as a known one.
var dummyHash = sync.OnceValue(func() string {
	h, err := hashPassword("airside: no such account, constant-time answer")
	if err != nil {
		panic(err)
	}
	return h
})
