package store

import (
	"context"
	"fmt"
	"time"

	"gorm.io/gorm"

	"github.com/airside/airside/internal/apperr"
	"github.com/airside/airside/internal/catalogue"
)

type modelRow struct {
	ID            int64 `gorm:"primaryKey"`
	Slug          string
	Name          string
	ContextTokens int64
	CreatedAt     time.Time
}

func (modelRow) TableName() string { return "models" }

func (r modelRow) toDomain() catalogue.Model {
	return catalogue.Model{ID: r.ID, Slug: r.Slug, Name: r.Name, ContextTokens: r.ContextTokens}
}

// CreateModel adds a model to the catalogue.
func (s *Store) CreateModel(ctx context.Context, actorID *int64, m catalogue.Model) (*catalogue.Model, error) {
	row := modelRow{Slug: m.Slug, Name: m.Name, ContextTokens: m.ContextTokens}
	err := s.tx(ctx, func(tx *gorm.DB, now time.Time) error {
		row.CreatedAt = now
		if err := tx.Create(&row).Error; err != nil {
			if isDuplicate(err) {
				return apperr.Invalid(map[string]string{"slug": "A model with this slug already exists."})
			}
			return err
		}
		return appendAudit(tx, now, auditEvent{ActorID: actorID, Action: "model.create", SubjectType: "model",
			SubjectID: row.ID, After: map[string]any{"slug": m.Slug, "name": m.Name}})
	})
	if err != nil {
		return nil, fmt.Errorf("create model %s: %w", m.Slug, err)
	}
	out := row.toDomain()
	return &out, nil
}

// FindModels lists the catalogue's models by name.
func (s *Store) FindModels(ctx context.Context) ([]catalogue.Model, error) {
	var rows []modelRow
	if err := s.read(ctx).Order("name").Find(&rows).Error; err != nil {
		return nil, fmt.Errorf("find models: %w", err)
	}
	out := make([]catalogue.Model, len(rows))
	for i, r := range rows {
		out[i] = r.toDomain()
	}
	return out, nil
}
