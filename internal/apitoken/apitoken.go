// Package apitoken is the gateway's machine credentials for /api/v1: named
// tokens with scopes, shown once, stored only as a hash, revocable.
package apitoken

import (
	"context"
	"fmt"
	"slices"
	"strings"
	"time"

	"github.com/airside/airside/internal/account"
	"github.com/airside/airside/internal/apperr"
	"github.com/airside/airside/internal/textcheck"
)

// The scopes a token may carry.
const (
	ScopeCatalogueRead = "catalogue:read"
	ScopeMetricsWrite  = "metrics:write"
	ScopeElect         = "elect"
	// ScopeCredentialsRead reads carriers' endpoint keys; no other scope
	// implies it, and every read is audited.
	ScopeCredentialsRead = "credentials:read"
	// ScopeMetricsRead scrapes the portal's own Prometheus figures.
	ScopeMetricsRead = "metrics:read"
)

// Scopes lists every scope.
var Scopes = []string{ScopeCatalogueRead, ScopeMetricsWrite, ScopeElect, ScopeCredentialsRead, ScopeMetricsRead}

// ScopeMeanings says what each scope lets a token do, for the person
// choosing them.
var ScopeMeanings = map[string]string{
	ScopeCatalogueRead:   "read the routing catalogue, its health and its changes (GET /api/v1/catalogue...)",
	ScopeMetricsWrite:    "report the gateway's traffic and health figures (POST /api/v1/metrics)",
	ScopeElect:           "run elections on the published catalogue (POST /api/v1/elect)",
	ScopeCredentialsRead: "read carriers' endpoint keys to call them (every read is audited): only the gateway that routes needs it",
	ScopeMetricsRead:     "scrape the portal's own Prometheus figures (GET /metrics): for the monitoring system, not a gateway",
}

// Prefix starts every token, so a leaked one is recognisable.
const Prefix = "airside_"

// Token is a machine credential for /api/v1.
type Token struct {
	ID         int64
	Name       string
	Scopes     []string
	CreatedAt  time.Time
	LastUsedAt *time.Time
	RevokedAt  *time.Time
}

// Has reports whether the token carries a scope.
func (t *Token) Has(scope string) bool { return slices.Contains(t.Scopes, scope) }

// TouchEvery is how often a token's last use is written at most, so busy
// gateways do not write on every request.
const TouchEvery = time.Minute

// Store is what the token service needs from storage.
type Store interface {
	CreateToken(ctx context.Context, actorID int64, name string, scopes []string, hash string) (int64, error)
	FindTokens(ctx context.Context) ([]Token, error)
	RevokeToken(ctx context.Context, actorID, id int64) error
	// FindLiveToken finds the unrevoked token with this hash and, when its
	// last use is older than TouchEvery, records a use.
	FindLiveToken(ctx context.Context, hash string, touchBefore time.Time) (*Token, error)
	// TouchToken records a use unless one was recorded after touchBefore.
	TouchToken(ctx context.Context, id int64, touchBefore time.Time) error
}

// Service issues, lists, revokes and checks tokens.
type Service struct {
	Store Store
	Now   func() time.Time
}

// Validate names what is wrong with a token to create, by form field.
func Validate(name string, scopes []string) map[string]string {
	fields := map[string]string{}
	if name == "" || textcheck.Problem(name, 100) != "" {
		fields["name"] = "Name the token (1-100 characters), e.g. the gateway that uses it."
	}
	if len(scopes) == 0 {
		fields["scopes"] = "Choose at least one scope."
	}
	for _, sc := range scopes {
		if !slices.Contains(Scopes, sc) {
			fields["scopes"] = fmt.Sprintf("Unknown scope %q.", sc)
		}
	}
	return fields
}

// Create makes a named token with scopes and returns its secret, which is
// shown once: only its hash is kept. Only gateway admins create tokens.
func (s *Service) Create(ctx context.Context, p *account.Principal, name string, scopes []string) (string, error) {
	if !p.IsAdmin() {
		return "", apperr.Errorf(apperr.EFORBIDDEN, "Only gateway admins manage API tokens.")
	}
	name = strings.TrimSpace(name)
	if fields := Validate(name, scopes); len(fields) > 0 {
		return "", apperr.Invalid(fields)
	}
	// Two live tokens of one name cannot be told apart on the page or in
	// the audit log: the name must say which gateway holds which.
	tokens, err := s.Store.FindTokens(ctx)
	if err != nil {
		return "", err
	}
	for _, t := range tokens {
		if t.RevokedAt == nil && strings.EqualFold(t.Name, name) {
			return "", apperr.Invalid(map[string]string{"name": "A live token is already named " + t.Name + ": choose another name, or revoke that one first."})
		}
	}
	secret, _, err := account.NewToken()
	if err != nil {
		return "", err
	}
	secret = Prefix + secret
	if _, err := s.Store.CreateToken(ctx, p.User.ID, name, scopes, account.HashToken(secret)); err != nil {
		return "", fmt.Errorf("create token: %w", err)
	}
	return secret, nil
}

// List lists every token, newest first (admins only).
func (s *Service) List(ctx context.Context, p *account.Principal) ([]Token, error) {
	if !p.IsAdmin() {
		return nil, apperr.Errorf(apperr.EFORBIDDEN, "Only gateway admins manage API tokens.")
	}
	return s.Store.FindTokens(ctx)
}

// Revoke revokes a token; it stops working at once.
func (s *Service) Revoke(ctx context.Context, p *account.Principal, id int64) error {
	if !p.IsAdmin() {
		return apperr.Errorf(apperr.EFORBIDDEN, "Only gateway admins manage API tokens.")
	}
	return s.Store.RevokeToken(ctx, p.User.ID, id)
}

// Authenticate finds the live token for a presented secret: ENOTFOUND when
// it is unknown or revoked.
func (s *Service) Authenticate(ctx context.Context, secret string) (*Token, error) {
	if secret == "" || len(secret) > 200 {
		return nil, apperr.Errorf(apperr.ENOTFOUND, "Token not found.")
	}
	return s.Store.FindLiveToken(ctx, account.HashToken(secret), s.Now().Add(-TouchEvery))
}

// NewService is the token service on a store, on the wall clock.
func NewService(st Store) *Service { return &Service{Store: st, Now: time.Now} }

// Touch records a use of a token checked from memory, at most once per
// TouchEvery (the caller runs it in the background).
func (s *Service) Touch(ctx context.Context, id int64) error {
	return s.Store.TouchToken(ctx, id, s.Now().Add(-TouchEvery))
}
