package store

import (
	"context"
	"fmt"
	"time"

	"gorm.io/gorm"

	"github.com/airside/airside/internal/account"
	"github.com/airside/airside/internal/apperr"
)

type carrierRow struct {
	ID        int64 `gorm:"primaryKey"`
	Slug      string
	Name      string
	CreatedAt time.Time
}

func (carrierRow) TableName() string { return "carriers" }

func (r *carrierRow) toDomain() account.Carrier {
	return account.Carrier{ID: r.ID, Slug: r.Slug, Name: r.Name, CreatedAt: r.CreatedAt}
}

type membershipRow struct {
	UserID    int64 `gorm:"primaryKey"`
	CarrierID int64 `gorm:"primaryKey"`
	Role      string
	CreatedAt time.Time
}

func (membershipRow) TableName() string { return "memberships" }

// FindCarriers lists every carrier.
func (s *Store) FindCarriers(ctx context.Context) ([]account.CarrierSummary, error) {
	var rows []struct {
		Row      carrierRow `gorm:"embedded"`
		Members  int
		Listings int
	}
	err := s.read(ctx).Table("carriers").Select(`carriers.*,
		(SELECT COUNT(*) FROM memberships WHERE memberships.carrier_id = carriers.id) AS members,
		(SELECT COUNT(*) FROM listings WHERE listings.carrier_id = carriers.id) AS listings`).
		Order("carriers.name").Scan(&rows).Error
	if err != nil {
		return nil, fmt.Errorf("find carriers: %w", err)
	}
	out := make([]account.CarrierSummary, len(rows))
	for i := range rows {
		out[i] = account.CarrierSummary{Carrier: rows[i].Row.toDomain(), Members: rows[i].Members, Listings: rows[i].Listings}
	}
	return out, nil
}

// FindCarrierBySlug finds a carrier.
func (s *Store) FindCarrierBySlug(ctx context.Context, slug string) (*account.Carrier, error) {
	var row carrierRow
	if err := s.read(ctx).Where("slug = ?", slug).First(&row).Error; err != nil {
		return nil, notFound(err, "Carrier")
	}
	c := row.toDomain()
	return &c, nil
}

// CreateCarrier creates a carrier, audited.
func (s *Store) CreateCarrier(ctx context.Context, actorID *int64, slug, name string) (*account.Carrier, error) {
	var row carrierRow
	err := s.tx(ctx, func(tx *gorm.DB, now time.Time) error {
		var err error
		row, err = createCarrier(tx, now, actorID, slug, name)
		return err
	})
	if err != nil {
		return nil, fmt.Errorf("create carrier %s: %w", slug, err)
	}
	c := row.toDomain()
	return &c, nil
}

func createCarrier(tx *gorm.DB, now time.Time, actorID *int64, slug, name string) (carrierRow, error) {
	if fields := account.ValidateCarrier(slug, name); len(fields) > 0 { // the demo and the command line come here directly
		return carrierRow{}, apperr.Invalid(fields)
	}
	row := carrierRow{Slug: slug, Name: name, CreatedAt: now}
	if err := tx.Create(&row).Error; err != nil {
		if isDuplicate(err) {
			return row, apperr.Invalid(map[string]string{"slug": "A carrier with this slug already exists."})
		}
		return row, err
	}
	return row, appendAudit(tx, now, auditEvent{ActorID: actorID, CarrierID: &row.ID, Action: "carrier.create",
		SubjectType: "carrier", SubjectID: row.ID, After: map[string]any{"slug": slug, "name": name}})
}
