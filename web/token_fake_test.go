package web

import (
	"context"
	"net/http"
	"net/http/httptest"
	"strings"
	"testing"
	"time"

	"github.com/labstack/echo/v4"

	"github.com/airside/airside/internal/account"
	"github.com/airside/airside/internal/apitoken"
)

// fakeTokens lists fixed tokens to whoever asks; other calls are left to
// the embedded nil interface.
type fakeTokens struct {
	TokenService
	tokens []apitoken.Token
	asked  []*account.Principal
}

func (f *fakeTokens) List(_ context.Context, p *account.Principal) ([]apitoken.Token, error) {
	f.asked = append(f.asked, p)
	return f.tokens, nil
}

// fakeNav answers the counts the page's navigation shows.
type fakeNav struct {
	AccountReads
	FilingReads
}

func (fakeNav) CountUnread(context.Context, int64) (int, error)  { return 3, nil }
func (fakeNav) CountAwaitingReview(context.Context) (int, error) { return 2, nil }

// TestTheTokensPageShowsWhatTheServiceLists: the API tokens page over a
// fake token service and navigation counts (no database): each token with
// its scopes, when it was last used ("–" never) and revoked, and a secret
// shown only from the page's own reveal cookie.
func TestTheTokensPageShowsWhatTheServiceLists(t *testing.T) {
	used := time.Date(2026, 12, 4, 9, 30, 0, 0, time.UTC)
	tokens := &fakeTokens{tokens: []apitoken.Token{
		{ID: 1, Name: "fleet-gateway", Scopes: []string{"catalogue:read", "metrics:write"}, CreatedAt: used.Add(-48 * time.Hour), LastUsedAt: &used},
		{ID: 2, Name: "old-gateway", Scopes: []string{"catalogue:read"}, CreatedAt: used.Add(-96 * time.Hour), RevokedAt: &used},
	}}
	nav := fakeNav{}
	s := &Server{Tokens: tokens, AccountReads: nav, FilingReads: nav, sessions: &dbSessionStore{}}
	admin := &account.Principal{User: account.User{ID: 1, Email: "admin@airside.example", Staff: account.StaffAdmin}}
	get := func(cookie *http.Cookie) string {
		req := httptest.NewRequest(http.MethodGet, "/admin/tokens", nil)
		if cookie != nil {
			req.AddCookie(cookie)
		}
		rec := httptest.NewRecorder()
		c := echo.New().NewContext(req, rec)
		c.Set(ctxPrincipal, admin)
		if err := s.handleTokens(c); err != nil {
			t.Fatal(err)
		}
		return rec.Body.String()
	}
	body := get(nil)
	for _, want := range []string{"fleet-gateway", "catalogue:read, metrics:write", "old-gateway", "admin@airside.example"} {
		if !strings.Contains(body, want) {
			t.Errorf("the page does not show %q", want)
		}
	}
	if len(tokens.asked) != 1 || tokens.asked[0] != admin {
		t.Errorf("the service was asked for %v, want the signed-in admin", tokens.asked)
	}
	secret := apitoken.Prefix + "abcdefghijklmnop"
	if !strings.Contains(get(&http.Cookie{Name: revealCookie, Value: secret}), secret) {
		t.Error("a secret the page made is not shown once")
	}
	if strings.Contains(get(&http.Cookie{Name: revealCookie, Value: "not-ours"}), "not-ours") {
		t.Error("a cookie the page did not make was shown as a secret")
	}
}
