package store

import (
	"context"
	"fmt"
	"strings"
	"time"

	"gorm.io/gorm"

	"github.com/airside/airside/internal/apitoken"
	"github.com/airside/airside/internal/apperr"
)

var _ apitoken.Store = (*Store)(nil)

type tokenRow struct {
	ID         int64 `gorm:"primaryKey"`
	Name       string
	TokenHash  string
	Scopes     string
	CarrierID  *int64
	CreatedBy  *int64
	CreatedAt  time.Time
	LastUsedAt *time.Time
	RevokedAt  *time.Time
}

func (tokenRow) TableName() string { return "api_tokens" }

func (r *tokenRow) toDomain() apitoken.Token {
	return apitoken.Token{ID: r.ID, Name: r.Name, Scopes: strings.Split(r.Scopes, ","), CarrierID: r.CarrierID, CreatedBy: r.CreatedBy,
		CreatedAt: r.CreatedAt, LastUsedAt: r.LastUsedAt, RevokedAt: r.RevokedAt}
}

// CreateToken stores a new token by its hash, audited, and returns its id.
func (s *Store) CreateToken(ctx context.Context, actorID int64, carrierID *int64, name string, scopes []string, hash string) (int64, error) {
	var id int64
	err := s.tx(ctx, func(tx *gorm.DB, now time.Time) error {
		row := tokenRow{Name: name, TokenHash: hash, Scopes: strings.Join(scopes, ","), CarrierID: carrierID, CreatedBy: &actorID, CreatedAt: now}
		if err := tx.Create(&row).Error; err != nil {
			return err
		}
		id = row.ID
		if err := tokensChanged(tx); err != nil {
			return err
		}
		return appendAudit(tx, now, auditEvent{ActorID: &actorID, Action: "token.create", SubjectType: "api_token", SubjectID: row.ID,
			After: map[string]any{"name": name, "scopes": scopes, "carrier_id": carrierID}})
	})
	if err != nil {
		return 0, fmt.Errorf("create token: %w", err)
	}
	return id, nil
}

// FindTokens lists a carrier's tokens (nil: the gateways'), newest first.
func (s *Store) FindTokens(ctx context.Context, carrierID *int64) ([]apitoken.Token, error) {
	var rows []tokenRow
	if err := ofCarrier(s.read(ctx), carrierID).Order("id DESC").Find(&rows).Error; err != nil {
		return nil, fmt.Errorf("find tokens: %w", err)
	}
	out := make([]apitoken.Token, len(rows))
	for i := range rows {
		out[i] = rows[i].toDomain()
	}
	return out, nil
}

// ofCarrier narrows a token query to a carrier's tokens (nil: the
// gateways').
func ofCarrier(q *gorm.DB, carrierID *int64) *gorm.DB {
	if carrierID == nil {
		return q.Where("carrier_id IS NULL")
	}
	return q.Where("carrier_id = ?", *carrierID)
}

// RevokeToken revokes a carrier's token (nil: a gateway's); it stops
// working at once.
func (s *Store) RevokeToken(ctx context.Context, actorID int64, carrierID *int64, id int64) error {
	return s.tx(ctx, func(tx *gorm.DB, now time.Time) error {
		res := ofCarrier(tx.Model(&tokenRow{}), carrierID).Where("id = ? AND revoked_at IS NULL", id).Update("revoked_at", now)
		if res.Error != nil {
			return res.Error
		}
		if res.RowsAffected != 1 {
			return apperr.Errorf(apperr.ENOTFOUND, "No such active token.")
		}
		if err := tokensChanged(tx); err != nil {
			return err
		}
		return appendAudit(tx, now, auditEvent{ActorID: &actorID, Action: "token.revoke", SubjectType: "api_token", SubjectID: id})
	})
}

// FindLiveToken finds the unrevoked token with a hash and records its use
// when the last one is older than touchBefore.
func (s *Store) FindLiveToken(ctx context.Context, hash string, touchBefore time.Time) (*apitoken.Token, error) {
	var row tokenRow
	err := s.read(ctx).Where("token_hash = ? AND revoked_at IS NULL", hash).First(&row).Error
	if err != nil {
		return nil, notFound(err, "Token")
	}
	if row.LastUsedAt == nil || row.LastUsedAt.Before(touchBefore) {
		if err := s.TouchToken(ctx, row.ID, touchBefore); err != nil {
			return nil, fmt.Errorf("touch token: %w", err)
		}
		now := s.Now().UTC()
		row.LastUsedAt = &now
	}
	t := row.toDomain()
	return &t, nil
}

// tokensChanged announces, like a publication, that the set of live tokens
// changed, so every process's routing snapshot (which checks tokens from
// memory) rebuilds: a revoked token stops working everywhere.
func tokensChanged(tx *gorm.DB) error {
	markPublished(tx)
	return notifyPublication(tx, 0)
}

// FindLiveTokens maps the hashes of unrevoked tokens to them.
func (s *Store) FindLiveTokens(ctx context.Context) (map[string]apitoken.Token, error) {
	var rows []tokenRow
	if err := s.read(ctx).Where("revoked_at IS NULL").Find(&rows).Error; err != nil {
		return nil, fmt.Errorf("find live tokens: %w", err)
	}
	out := make(map[string]apitoken.Token, len(rows))
	for i := range rows {
		out[rows[i].TokenHash] = rows[i].toDomain()
	}
	return out, nil
}

// TouchToken records a token's use (and audits it) unless it was recorded
// after touchBefore.
func (s *Store) TouchToken(ctx context.Context, id int64, touchBefore time.Time) error {
	return s.tx(ctx, func(tx *gorm.DB, now time.Time) error {
		res := tx.Model(&tokenRow{}).Where("id = ? AND (last_used_at IS NULL OR last_used_at < ?)", id, touchBefore.UTC()).Update("last_used_at", now)
		if res.Error != nil || res.RowsAffected == 0 {
			return res.Error
		}
		var row tokenRow
		if err := tx.First(&row, id).Error; err != nil {
			return err
		}
		return appendAudit(tx, now, auditEvent{ActorID: row.CreatedBy, Action: "token.use", SubjectType: "api_token", SubjectID: id,
			After: map[string]any{"name": row.Name}})
	})
}
