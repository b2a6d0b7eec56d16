package web

import (
	"sync"

	"github.com/labstack/echo/v4"

	"github.com/airside/airside/internal/apperr"
)

// MaxExpensivePerUser bounds how many expensive requests (previews, the fare
// form with its preview, bulk uploads) one user runs at once: a person needs
// one or two; a script firing sixteen would slow every other user's pages.
const MaxExpensivePerUser = 2

// userLimiter counts each user's expensive requests in flight.
type userLimiter struct {
	mu       sync.Mutex
	inFlight map[int64]int
	max      int
}

func newUserLimiter(max int) *userLimiter {
	return &userLimiter{inFlight: map[int64]int{}, max: max}
}

// acquire takes a slot for the user, or reports false when they have max in
// flight already.
func (l *userLimiter) acquire(userID int64) bool {
	l.mu.Lock()
	defer l.mu.Unlock()
	if l.inFlight[userID] >= l.max {
		return false
	}
	l.inFlight[userID]++
	return true
}

func (l *userLimiter) release(userID int64) {
	l.mu.Lock()
	defer l.mu.Unlock()
	if l.inFlight[userID]--; l.inFlight[userID] <= 0 {
		delete(l.inFlight, userID)
	}
}

// limitExpensive answers 429 with Retry-After to a user who already has
// MaxExpensivePerUser expensive requests running.
func (s *Server) limitExpensive(next echo.HandlerFunc) echo.HandlerFunc {
	return func(c echo.Context) error {
		p := principal(c)
		if p == nil {
			return next(c)
		}
		if !s.expensive.acquire(p.User.ID) {
			e := apperr.Errorf(apperr.ETHROTTLED, "You have %d previews or uploads running already; wait for them to finish.", MaxExpensivePerUser)
			e.RetryAfter = 1
			return e
		}
		defer s.expensive.release(p.User.ID)
		return next(c)
	}
}
