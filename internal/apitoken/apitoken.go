// Package apitoken is the machine credentials for /api/v1: named tokens with
// scopes, shown once, stored only as a hash, revocable. A gateway admin
// issues a gateway's tokens (the catalogue, elections, metrics,
// credentials); a carrier admin issues its carrier's (its own fares on
// /api/v1/carrier/). The two sets of scopes never mix.
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

// The scopes of a carrier's token.
const (
	// ScopeFaresRead reads the carrier's listings, their published fares
	// and its filings with their review.
	ScopeFaresRead = "fares:read"
	// ScopeFaresWrite files fares (to review, as the form does) and
	// withdraws open filings.
	ScopeFaresWrite = "fares:write"
	// ScopeTrafficRead reads the traffic the gateway reported for the
	// carrier's listings.
	ScopeTrafficRead = "traffic:read"
	// ScopeEndpointsWrite files new endpoints (URL, model, key) for
	// review and runs preflight on them.
	ScopeEndpointsWrite = "endpoints:write"
)

// Scopes lists every scope of a gateway's token.
var Scopes = []string{ScopeCatalogueRead, ScopeMetricsWrite, ScopeElect, ScopeCredentialsRead, ScopeMetricsRead}

// CarrierScopes lists every scope of a carrier's token.
var CarrierScopes = []string{ScopeFaresRead, ScopeFaresWrite, ScopeEndpointsWrite, ScopeTrafficRead}

// ScopeMeanings says what each scope lets a token do, for the person
// choosing them.
var ScopeMeanings = map[string]string{
	ScopeCatalogueRead:   "read the routing catalogue, its health and its changes (GET /api/v1/catalogue...)",
	ScopeMetricsWrite:    "report the gateway's traffic and health figures (POST /api/v1/metrics)",
	ScopeElect:           "run elections on the published catalogue (POST /api/v1/elect)",
	ScopeCredentialsRead: "read carriers' endpoint keys to call them (every read is audited): only the gateway that routes needs it",
	ScopeMetricsRead:     "scrape the portal's own Prometheus figures (GET /metrics): for the monitoring system, not a gateway",
	ScopeFaresRead:       "read your listings, their published fares, your filings with their review and your endpoints' preflight (GET /api/v1/carrier/...)",
	ScopeFaresWrite:      "file fares for review and withdraw open filings, as the fare form does (POST /api/v1/carrier/...)",
	ScopeEndpointsWrite:  "file a new endpoint (URL, model, key) for review and run preflight on it, as the listing page does (POST /api/v1/carrier/listings/{id}/endpoint, /preflight)",
	ScopeTrafficRead:     "read your listings' hourly traffic as the gateway reported it, what it earned and your monthly statements, in JSON or CSV (GET /api/v1/carrier/traffic, /earnings, /statements/{month})",
}

// Prefix starts every token, so a leaked one is recognisable.
const Prefix = "airside_"

// Token is a machine credential for /api/v1.
type Token struct {
	ID     int64
	Name   string
	Scopes []string
	// CarrierID is the carrier a carrier's token acts for (nil: a
	// gateway's token).
	CarrierID *int64
	// CreatedBy is who issued it: a carrier's token acts as that person
	// within its carrier, while they are still its admin.
	CreatedBy  *int64
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
	// CreateToken stores a token for a carrier (nil: a gateway's).
	CreateToken(ctx context.Context, actorID int64, carrierID *int64, name string, scopes []string, hash string) (int64, error)
	// FindTokens lists a carrier's tokens (nil: the gateways'), newest first.
	FindTokens(ctx context.Context, carrierID *int64) ([]Token, error)
	// RevokeToken revokes a carrier's token (nil: a gateway's).
	RevokeToken(ctx context.Context, actorID int64, carrierID *int64, id int64) error
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

// Validate names what is wrong with a token to create, by form field:
// allowed are the scopes given (Scopes or CarrierScopes).
func Validate(name string, scopes, allowed []string) map[string]string {
	fields := map[string]string{}
	if name == "" || textcheck.Problem(name, 100) != "" {
		fields["name"] = "Name the token (1-100 characters), e.g. the gateway or the job that uses it."
	}
	if len(scopes) == 0 {
		fields["scopes"] = "Choose at least one scope."
	}
	for _, sc := range scopes {
		if !slices.Contains(allowed, sc) {
			fields["scopes"] = fmt.Sprintf("Unknown scope %q.", sc)
		}
	}
	return fields
}

// Create makes a named gateway token with scopes and returns its secret,
// which is shown once: only its hash is kept. Only gateway admins create
// them.
func (s *Service) Create(ctx context.Context, p *account.Principal, name string, scopes []string) (string, error) {
	if !p.IsAdmin() {
		return "", apperr.Errorf(apperr.EFORBIDDEN, "Only gateway admins manage API tokens.")
	}
	return s.create(ctx, p, nil, name, scopes, Scopes)
}

// CreateForCarrier makes a named token acting for a carrier: only that
// carrier's admins create, list and revoke its tokens.
func (s *Service) CreateForCarrier(ctx context.Context, p *account.Principal, carrierID int64, name string, scopes []string) (string, error) {
	if err := carrierAdmin(p, carrierID); err != nil {
		return "", err
	}
	return s.create(ctx, p, &carrierID, name, scopes, CarrierScopes)
}

func carrierAdmin(p *account.Principal, carrierID int64) error {
	if p.RoleIn(carrierID) != account.CarrierAdmin {
		return apperr.Errorf(apperr.EFORBIDDEN, "Only the carrier's admins manage its API tokens.")
	}
	return nil
}

func (s *Service) create(ctx context.Context, p *account.Principal, carrierID *int64, name string, scopes, allowed []string) (string, error) {
	name = strings.TrimSpace(name)
	if fields := Validate(name, scopes, allowed); len(fields) > 0 {
		return "", apperr.Invalid(fields)
	}
	// Two live tokens of one name cannot be told apart on the page or in
	// the audit log: the name must say which gateway or job holds which.
	tokens, err := s.Store.FindTokens(ctx, carrierID)
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
	if _, err := s.Store.CreateToken(ctx, p.User.ID, carrierID, name, scopes, account.HashToken(secret)); err != nil {
		return "", fmt.Errorf("create token: %w", err)
	}
	return secret, nil
}

// List lists every gateway token, newest first (admins only).
func (s *Service) List(ctx context.Context, p *account.Principal) ([]Token, error) {
	if !p.IsAdmin() {
		return nil, apperr.Errorf(apperr.EFORBIDDEN, "Only gateway admins manage API tokens.")
	}
	return s.Store.FindTokens(ctx, nil)
}

// ListForCarrier lists a carrier's tokens, newest first (its admins only).
func (s *Service) ListForCarrier(ctx context.Context, p *account.Principal, carrierID int64) ([]Token, error) {
	if err := carrierAdmin(p, carrierID); err != nil {
		return nil, err
	}
	return s.Store.FindTokens(ctx, &carrierID)
}

// Revoke revokes a gateway token; it stops working at once.
func (s *Service) Revoke(ctx context.Context, p *account.Principal, id int64) error {
	if !p.IsAdmin() {
		return apperr.Errorf(apperr.EFORBIDDEN, "Only gateway admins manage API tokens.")
	}
	return s.Store.RevokeToken(ctx, p.User.ID, nil, id)
}

// RevokeForCarrier revokes one of a carrier's tokens (its admins only).
func (s *Service) RevokeForCarrier(ctx context.Context, p *account.Principal, carrierID, id int64) error {
	if err := carrierAdmin(p, carrierID); err != nil {
		return err
	}
	return s.Store.RevokeToken(ctx, p.User.ID, &carrierID, id)
}

// ActsFor is the principal a carrier's token acts as: its issuer, within
// the token's carrier only and with no staff powers, while the issuer is
// still that carrier's admin (removed or demoted, the token stops
// working). issuer is the issuer's principal as loaded now.
func ActsFor(t *Token, issuer *account.Principal) (*account.Principal, error) {
	if t.CarrierID == nil {
		return nil, apperr.Errorf(apperr.EFORBIDDEN, "This is a gateway's token: the carrier API wants a token a carrier's admin issued.")
	}
	if issuer == nil || issuer.User.Deactivated || issuer.RoleIn(*t.CarrierID) != account.CarrierAdmin {
		return nil, apperr.Errorf(apperr.EFORBIDDEN, "The person who issued this token is no longer an admin of its carrier: ask a current admin for a new one.")
	}
	return account.WithinCarrier(issuer, *t.CarrierID), nil
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
