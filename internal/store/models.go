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
	ID               int64 `gorm:"primaryKey"`
	Slug             string
	Name             string
	ContextTokens    int64
	Family           string
	MaxOutputTokens  int64
	InputModalities  string
	OutputModalities string
	CreatedAt        time.Time
}

func (modelRow) TableName() string { return "models" }

func (r modelRow) toDomain() catalogue.Model {
	return catalogue.Model{ID: r.ID, Slug: r.Slug, Name: r.Name, ContextTokens: r.ContextTokens, Family: r.Family,
		MaxOutputTokens: r.MaxOutputTokens, InputModalities: r.InputModalities, OutputModalities: r.OutputModalities}
}

// CreateModel adds a model to the catalogue.
func (s *Store) CreateModel(ctx context.Context, actorID *int64, m catalogue.Model) (*catalogue.Model, error) {
	var out catalogue.Model
	err := s.tx(ctx, func(tx *gorm.DB, now time.Time) error {
		var err error
		out, err = createModel(tx, now, actorID, m)
		return err
	})
	if err != nil {
		return nil, fmt.Errorf("create model %s: %w", m.Slug, err)
	}
	return &out, nil
}

func createModel(tx *gorm.DB, now time.Time, actorID *int64, m catalogue.Model) (catalogue.Model, error) {
	row := modelRow{Slug: m.Slug, Name: m.Name, ContextTokens: m.ContextTokens, Family: m.Family, MaxOutputTokens: m.MaxOutputTokens,
		InputModalities: m.InputModalities, OutputModalities: m.OutputModalities, CreatedAt: now}
	if row.InputModalities == "" {
		row.InputModalities = "text"
	}
	if row.OutputModalities == "" {
		row.OutputModalities = "text"
	}
	if err := tx.Create(&row).Error; err != nil {
		if isDuplicate(err) {
			return catalogue.Model{}, apperr.Invalid(map[string]string{"slug": "A model with this slug already exists."})
		}
		return catalogue.Model{}, err
	}
	return row.toDomain(), appendAudit(tx, now, auditEvent{ActorID: actorID, Action: "model.create", SubjectType: "model",
		SubjectID: row.ID, After: map[string]any{"slug": m.Slug, "name": m.Name}})
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
