package store

import (
	"context"
	"fmt"
	"slices"
	"strings"
	"time"

	"gorm.io/gorm"

	"github.com/airside/airside/internal/account"
	"github.com/airside/airside/internal/apperr"
	"github.com/airside/airside/internal/textcheck"
)

// API token scopes.
const (
	ScopeCatalogueRead = "catalogue:read"
	ScopeMetricsWrite  = "metrics:write"
	ScopeElect         = "elect"
)

// Scopes lists every API token scope.
var Scopes = []string{ScopeCatalogueRead, ScopeMetricsWrite, ScopeElect}

type tokenRow struct {
	ID         int64 `gorm:"primaryKey"`
	Name       string
	TokenHash  string
	Scopes     string
	CreatedBy  *int64
	CreatedAt  time.Time
	LastUsedAt *time.Time
	RevokedAt  *time.Time
}

func (tokenRow) TableName() string { return "api_tokens" }

// APIToken is a machine credential for /api/v1.
type APIToken struct {
	ID         int64
	Name       string
	Scopes     []string
	CreatedAt  time.Time
	LastUsedAt *time.Time
	RevokedAt  *time.Time
}

// Has reports whether the token carries a scope.
func (t *APIToken) Has(scope string) bool { return slices.Contains(t.Scopes, scope) }

func (r *tokenRow) toDomain() APIToken {
	return APIToken{ID: r.ID, Name: r.Name, Scopes: strings.Split(r.Scopes, ","), CreatedAt: r.CreatedAt, LastUsedAt: r.LastUsedAt, RevokedAt: r.RevokedAt}
}

// TokenPrefix starts every API token, so a leaked one is recognisable.
const TokenPrefix = "airside_"

// CreateToken makes a named token with scopes and returns it; only its hash
// is stored, so it is shown once.
func (s *Store) CreateToken(ctx context.Context, actorID int64, name string, scopes []string) (string, error) {
	fields := map[string]string{}
	name = strings.TrimSpace(name)
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
	if len(fields) > 0 {
		return "", apperr.Invalid(fields)
	}
	token, hash, err := account.NewToken()
	if err != nil {
		return "", err
	}
	token = TokenPrefix + token
	hash = account.HashToken(token)
	err = s.tx(ctx, func(tx *gorm.DB, now time.Time) error {
		row := tokenRow{Name: name, TokenHash: hash, Scopes: strings.Join(scopes, ","), CreatedBy: &actorID, CreatedAt: now}
		if err := tx.Create(&row).Error; err != nil {
			return err
		}
		return appendAudit(tx, now, auditEvent{ActorID: &actorID, Action: "token.create", SubjectType: "api_token", SubjectID: row.ID,
			After: map[string]any{"name": name, "scopes": scopes}})
	})
	if err != nil {
		return "", fmt.Errorf("create token: %w", err)
	}
	return token, nil
}

// FindTokens lists every token, newest first.
func (s *Store) FindTokens(ctx context.Context) ([]APIToken, error) {
	var rows []tokenRow
	if err := s.read(ctx).Order("id DESC").Find(&rows).Error; err != nil {
		return nil, fmt.Errorf("find tokens: %w", err)
	}
	out := make([]APIToken, len(rows))
	for i := range rows {
		out[i] = rows[i].toDomain()
	}
	return out, nil
}

// RevokeToken revokes a token; it stops working at once.
func (s *Store) RevokeToken(ctx context.Context, actorID, id int64) error {
	return s.tx(ctx, func(tx *gorm.DB, now time.Time) error {
		res := tx.Model(&tokenRow{}).Where("id = ? AND revoked_at IS NULL", id).Update("revoked_at", now)
		if res.Error != nil {
			return res.Error
		}
		if res.RowsAffected != 1 {
			return apperr.Errorf(apperr.ENOTFOUND, "No such active token.")
		}
		return appendAudit(tx, now, auditEvent{ActorID: &actorID, Action: "token.revoke", SubjectType: "api_token", SubjectID: id})
	})
}

// AuthenticateToken finds the live token for a presented secret and records
// its use (at most once a minute, so busy gateways do not write per request).
func (s *Store) AuthenticateToken(ctx context.Context, secret string) (*APIToken, error) {
	var row tokenRow
	err := s.read(ctx).Where("token_hash = ? AND revoked_at IS NULL", account.HashToken(secret)).First(&row).Error
	if err != nil {
		return nil, notFound(err, "Token")
	}
	now := s.Now().UTC()
	if row.LastUsedAt == nil || now.Sub(*row.LastUsedAt) > time.Minute {
		if err := s.read(ctx).Model(&tokenRow{}).Where("id = ?", row.ID).Update("last_used_at", now).Error; err != nil {
			return nil, fmt.Errorf("touch token: %w", err)
		}
		row.LastUsedAt = &now
	}
	t := row.toDomain()
	return &t, nil
}
