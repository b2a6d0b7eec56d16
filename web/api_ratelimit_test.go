package web_test

import (
	"net/http"
	"slices"
	"testing"
	"time"

	"github.com/airside/airside/internal/apitoken"
	"github.com/airside/airside/internal/ratelimit"
	"github.com/airside/airside/internal/store"
	"github.com/airside/airside/web"
)

// TestAPIRateLimitHeaders: every limited API answer carries the IETF
// RateLimit-Policy and RateLimit fields; past the quota the token gets 429
// with Retry-After, another token does not, and the window's end restores
// the quota.
func TestAPIRateLimitHeaders(t *testing.T) {
	p := newPortal(t, store.SQLite)
	now := time.Date(2026, 12, 2, 10, 0, 0, 0, time.UTC)
	p.server.Now = func() time.Time { return now }
	p.server.APILimits = map[string]ratelimit.Policy{apitoken.ScopeElect: {Name: "elect", Quota: 2, Window: time.Minute}}
	tok := apiToken(t, p.store, apitoken.ScopeElect)
	other := apiToken(t, p.store, apitoken.ScopeElect)
	body := `{"model":"kimi-k2.5"}`

	for i, want := range []struct {
		status    int
		rateLimit string
	}{
		{http.StatusOK, `"elect";r=1;t=60`},
		{http.StatusOK, `"elect";r=0;t=60`},
		{http.StatusTooManyRequests, `"elect";r=0;t=60`},
	} {
		res := apiCall(t, p.srv.URL, "POST", "/api/v1/elect", tok, body)
		wantStatus(t, "elect", res, want.status)
		if got := res.header.Get("RateLimit-Policy"); got != `"elect";q=2;w=60` {
			t.Errorf("call %d: RateLimit-Policy %q", i, got)
		}
		if got := res.header.Get("RateLimit"); got != want.rateLimit {
			t.Errorf("call %d: RateLimit %q, want %q", i, got, want.rateLimit)
		}
		if want.status == http.StatusTooManyRequests {
			if res.header.Get("Retry-After") != "60" {
				t.Errorf("429 with Retry-After %q, want 60", res.header.Get("Retry-After"))
			}
			if res.header.Get("Content-Type") != "application/problem+json" {
				t.Errorf("429 as %q, not problem details", res.header.Get("Content-Type"))
			}
		}
	}
	wantStatus(t, "another token", apiCall(t, p.srv.URL, "POST", "/api/v1/elect", other, body), http.StatusOK)
	// A route of another scope is not limited here: no fields.
	cat := apiToken(t, p.store, apitoken.ScopeCatalogueRead)
	if res := apiCall(t, p.srv.URL, "GET", "/api/v1/catalogue", cat, ""); res.header.Get("RateLimit") != "" {
		t.Errorf("an unlimited route says %q", res.header.Get("RateLimit"))
	}

	now = now.Add(45 * time.Second)
	res := apiCall(t, p.srv.URL, "POST", "/api/v1/elect", tok, body)
	wantStatus(t, "still in the window", res, http.StatusTooManyRequests)
	if res.header.Get("Retry-After") != "15" || res.header.Get("RateLimit") != `"elect";r=0;t=15` {
		t.Errorf("15 s before the reset: Retry-After %q, RateLimit %q", res.header.Get("Retry-After"), res.header.Get("RateLimit"))
	}
	now = now.Add(15 * time.Second)
	res = apiCall(t, p.srv.URL, "POST", "/api/v1/elect", tok, body)
	wantStatus(t, "a new window", res, http.StatusOK)
	if got := res.header.Get("RateLimit"); got != `"elect";r=1;t=60` {
		t.Errorf("a new window: RateLimit %q", got)
	}
}

// TestDefaultAPILimitsCoverEveryGatewayScope: each scope a gateway's or a
// carrier's token uses has a quota, so no API route is unlimited by
// omission.
func TestDefaultAPILimitsCoverEveryGatewayScope(t *testing.T) {
	for _, scope := range append(slices.Clone(apitoken.Scopes), apitoken.CarrierScopes...) {
		if scope == apitoken.ScopeMetricsRead {
			continue // a scraper's pace is the operator's own setting
		}
		p, ok := web.DefaultAPILimits[scope]
		if !ok || p.Quota <= 0 || p.Window <= 0 || p.Name == "" {
			t.Errorf("scope %s: policy %+v", scope, p)
		}
	}
}
