package web

import (
	"fmt"
	"strconv"
	"time"

	"github.com/labstack/echo/v4"

	"github.com/airside/airside/internal/apitoken"
	"github.com/airside/airside/internal/apperr"
	"github.com/airside/airside/internal/ratelimit"
)

// DefaultAPILimits are each API token's quotas, by the scope a route needs.
// They are far above what one gateway's loop needs (a catalogue long poll
// is a request a minute or so, a metrics batch one a minute per gateway,
// credentials one per listing and rotation) and stop a runaway script before
// it slows every other gateway. A deployment that needs more sets
// Server.APILimits (AIRSIDE_API_LIMITS=off lifts them, for load tests).
var DefaultAPILimits = map[string]ratelimit.Policy{
	apitoken.ScopeCatalogueRead:   {Name: "catalogue", Quota: 1200, Window: time.Minute},
	apitoken.ScopeElect:           {Name: "elect", Quota: 6000, Window: time.Minute},
	apitoken.ScopeMetricsWrite:    {Name: "metrics", Quota: 600, Window: time.Minute},
	apitoken.ScopeCredentialsRead: {Name: "credentials", Quota: 3000, Window: time.Minute},
	// A carrier's automation: far above a repricing job's pace.
	apitoken.ScopeFaresRead:   {Name: "fares-read", Quota: 600, Window: time.Minute},
	apitoken.ScopeFaresWrite:  {Name: "fares-write", Quota: 120, Window: time.Minute},
	apitoken.ScopeTrafficRead: {Name: "traffic", Quota: 120, Window: time.Minute},
	// Each endpoint filing starts a preflight against the carrier's
	// server: a few a minute is plenty.
	apitoken.ScopeEndpointsWrite: {Name: "endpoints-write", Quota: 30, Window: time.Minute},
}

// limitAPI counts an authenticated API request against its token's quota
// for the scope, tells the client where it stands in the IETF RateLimit
// fields (RateLimit-Policy: the quota; RateLimit: what is left and when it
// resets), and answers 429 with Retry-After past the quota.
func (s *Server) limitAPI(c echo.Context, tok *apitoken.Token, scope string) error {
	p, limited := s.APILimits[scope]
	if !limited || s.apiLimiter == nil {
		return nil
	}
	d := s.apiLimiter.Take(strconv.FormatInt(tok.ID, 10), p)
	reset := int((d.Reset + time.Second - 1) / time.Second) // whole seconds, rounded up
	h := c.Response().Header()
	h.Set("RateLimit-Policy", fmt.Sprintf("%q;q=%d;w=%d", p.Name, p.Quota, int(p.Window/time.Second)))
	h.Set("RateLimit", fmt.Sprintf("%q;r=%d;t=%d", p.Name, d.Remaining, reset))
	if d.Allowed {
		return nil
	}
	e := apperr.Errorf(apperr.ETHROTTLED, "This token has used its %d %s requests per %d s; the quota is whole again in %d s.",
		p.Quota, p.Name, int(p.Window/time.Second), reset)
	e.RetryAfter = max(reset, 1)
	return e
}
