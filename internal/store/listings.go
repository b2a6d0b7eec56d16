package store

import (
	"context"
	"fmt"
	"time"

	"gorm.io/gorm"

	"github.com/airside/airside/internal/apperr"
	"github.com/airside/airside/internal/catalogue"
	"github.com/airside/airside/internal/money"
)

type listingRow struct {
	ID              int64 `gorm:"primaryKey"`
	CarrierID       int64
	ModelID         int64
	Status          string
	PriorityBP      int64 `gorm:"column:priority_bp"`
	PublishedFareID *int64
	EndpointID      *int64
	Revision        int64
	CreatedAt       time.Time
	UpdatedAt       time.Time
}

func (listingRow) TableName() string { return "listings" }

type healthRow struct {
	ListingID     int64 `gorm:"primaryKey"`
	UptimePct     *float64
	LatencyMs     *float64
	ThroughputTPS *float64 `gorm:"column:throughput_tps"`
	CacheHitRate  *float64
	UpdatedAt     time.Time
}

func (healthRow) TableName() string { return "listing_health" }

// CreateListing adds a draft listing (no fare yet) for a carrier and model.
func (s *Store) CreateListing(ctx context.Context, actorID *int64, carrierID, modelID int64) (int64, error) {
	var row listingRow
	err := s.tx(ctx, func(tx *gorm.DB, now time.Time) error {
		var model modelRow
		if err := tx.Where("id = ?", modelID).Limit(1).Find(&model).Error; err != nil {
			return err
		}
		if model.ID == 0 {
			return apperr.Invalid(map[string]string{"model": "Choose a model from the catalogue."})
		}
		row = listingRow{CarrierID: carrierID, ModelID: modelID, Status: string(catalogue.StatusDraft), PriorityBP: 10000,
			CreatedAt: now, UpdatedAt: now}
		if err := tx.Create(&row).Error; err != nil {
			if isDuplicate(err) {
				return apperr.Invalid(map[string]string{"model": "This carrier already lists this model."})
			}
			return err
		}
		return appendAudit(tx, now, auditEvent{ActorID: actorID, CarrierID: &carrierID, Action: "listing.create",
			SubjectType: "listing", SubjectID: row.ID, After: map[string]any{"modelId": modelID, "status": row.Status}})
	})
	if err != nil {
		return 0, fmt.Errorf("create listing: %w", err)
	}
	return row.ID, nil
}

// UpsertHealth records a listing's measured health.
func (s *Store) UpsertHealth(ctx context.Context, listingID int64, h catalogue.Health) error {
	return s.tx(ctx, func(tx *gorm.DB, now time.Time) error {
		row := healthRow{ListingID: listingID, UptimePct: h.UptimePct, LatencyMs: h.LatencyMs,
			ThroughputTPS: h.ThroughputTPS, CacheHitRate: h.CacheHitRate, UpdatedAt: now}
		res := tx.Model(&healthRow{}).Where("listing_id = ?", listingID).Updates(map[string]any{
			"uptime_pct": h.UptimePct, "latency_ms": h.LatencyMs, "throughput_tps": h.ThroughputTPS,
			"cache_hit_rate": h.CacheHitRate, "updated_at": now})
		if res.Error != nil {
			return fmt.Errorf("update health of listing %d: %w", listingID, res.Error)
		}
		if res.RowsAffected == 0 {
			if err := tx.Create(&row).Error; err != nil {
				return fmt.Errorf("create health of listing %d: %w", listingID, err)
			}
		}
		return nil
	})
}

// FindListingEntries lists the listings of some carriers (nil: every
// carrier) by name, status and published input price, ordered by model then
// carrier: one query, what a table of thousands narrows before it reads the
// rows it shows.
func (s *Store) FindListingEntries(ctx context.Context, carrierIDs []int64) ([]catalogue.ListingEntry, error) {
	var rows []struct {
		ID, CarrierID, ModelID int64
		Status                 string
		CarrierSlug            string
		CarrierName            string
		ModelSlug              string
		ModelName              string
		InputMicros            *int64
	}
	err := s.readTx(ctx, func(tx *gorm.DB) error {
		q := tx.Table("listings").Select(`listings.id, listings.carrier_id, listings.model_id, listings.status,
			carriers.slug AS carrier_slug, carriers.name AS carrier_name, models.slug AS model_slug, models.name AS model_name,
			fares.input_micros`).
			Joins("JOIN carriers ON carriers.id = listings.carrier_id").
			Joins("JOIN models ON models.id = listings.model_id").
			Joins("LEFT JOIN fares ON fares.id = listings.published_fare_id").
			Order("models.name, carriers.name")
		if carrierIDs != nil {
			q = q.Where("listings.carrier_id IN ?", append(carrierIDs, -1))
		}
		return q.Scan(&rows).Error
	})
	if err != nil {
		return nil, fmt.Errorf("find listing entries: %w", err)
	}
	out := make([]catalogue.ListingEntry, len(rows))
	for i, r := range rows {
		out[i] = catalogue.ListingEntry{ID: r.ID, CarrierID: r.CarrierID, CarrierSlug: r.CarrierSlug, CarrierName: r.CarrierName,
			Model: catalogue.Model{ID: r.ModelID, Slug: r.ModelSlug, Name: r.ModelName}, Status: catalogue.ListingStatus(r.Status)}
		if r.InputMicros != nil {
			in := money.Micros(*r.InputMicros)
			out[i].PublishedInput = &in
		}
	}
	return out, nil
}

// FindListings lists listings with their carrier, model, published fare and
// health, ordered by model then carrier.
func (s *Store) FindListings(ctx context.Context, f catalogue.ListingFilter) ([]catalogue.Listing, error) {
	var out []catalogue.Listing
	err := s.readTx(ctx, func(tx *gorm.DB) error {
		var err error
		out, err = findListings(tx, f, 0, s.Now())
		return err
	})
	if err != nil {
		return nil, fmt.Errorf("find listings: %w", err)
	}
	return out, nil
}

// FindListing finds one listing with its live health. A caller limited to
// some carriers passes them: another carrier's listing is then simply not
// found.
func (s *Store) FindListing(ctx context.Context, id int64, carrierIDs []int64) (*catalogue.Listing, error) {
	return s.findListing(ctx, id, carrierIDs, s.Now())
}

// FindListingHeader is FindListing without computing live health (its
// Health is the stored snapshot): for checking access and naming a listing.
func (s *Store) FindListingHeader(ctx context.Context, id int64, carrierIDs []int64) (*catalogue.Listing, error) {
	return s.findListing(ctx, id, carrierIDs, time.Time{})
}

func (s *Store) findListing(ctx context.Context, id int64, carrierIDs []int64, now time.Time) (*catalogue.Listing, error) {
	var out []catalogue.Listing
	err := s.readTx(ctx, func(tx *gorm.DB) error {
		var err error
		out, err = findListings(tx, catalogue.ListingFilter{CarrierIDs: carrierIDs}, id, now)
		return err
	})
	if err != nil {
		return nil, fmt.Errorf("find listing %d: %w", id, err)
	}
	if len(out) == 0 {
		return nil, apperr.Errorf(apperr.ENOTFOUND, "Listing not found.")
	}
	return &out[0], nil
}

func findListings(tx *gorm.DB, f catalogue.ListingFilter, id int64, now time.Time) ([]catalogue.Listing, error) {
	type row struct {
		Row           listingRow
		CarrierSlug   string
		CarrierName   string
		ModelSlug     string
		ModelName     string
		ContextTokens int64
		UptimePct     *float64
		LatencyMs     *float64
		ThroughputTPS *float64
		CacheHitRate  *float64
		EndpointURL   *string
		EndpointModel *string
		EndpointHint  *string
		EndpointAt    *time.Time
	}
	// Scanned by hand, column by column: every listing page and the
	// operations page read all of them, and gorm's reflection per row was
	// half the read.
	q := tx.Table("listings").Select(`listings.id, listings.carrier_id, listings.model_id, listings.status, listings.priority_bp,
		listings.published_fare_id, listings.endpoint_id, listings.revision, listings.created_at,
		carriers.slug, carriers.name, models.slug, models.name, models.context_tokens,
		listing_health.uptime_pct, listing_health.latency_ms, listing_health.throughput_tps, listing_health.cache_hit_rate,
		endpoints.base_url, endpoints.upstream_model, endpoints.key_hint, endpoints.created_at`).
		Joins("JOIN carriers ON carriers.id = listings.carrier_id").
		Joins("JOIN models ON models.id = listings.model_id").
		Joins("LEFT JOIN listing_health ON listing_health.listing_id = listings.id").
		Joins("LEFT JOIN endpoints ON endpoints.id = listings.endpoint_id").
		Order("models.name, carriers.name")
	if f.CarrierIDs != nil {
		q = q.Where("listings.carrier_id IN ?", append(f.CarrierIDs, -1))
	}
	if f.ModelID != 0 {
		q = q.Where("listings.model_id = ?", f.ModelID)
	}
	if f.ModelSlug != "" {
		q = q.Where("models.slug = ?", f.ModelSlug)
	}
	if f.Published {
		q = q.Where("listings.published_fare_id IS NOT NULL")
	}
	if f.ChangedAfter > 0 {
		q = q.Where("listings.revision > ?", f.ChangedAfter)
	}
	if f.IDs != nil {
		q = q.Where("listings.id IN ?", append(f.IDs, -1))
	}
	if id != 0 {
		q = q.Where("listings.id = ?", id)
	}
	cursor, err := q.Rows()
	if err != nil {
		return nil, err
	}
	defer cursor.Close()
	var rows []row
	for cursor.Next() {
		var r row
		l := &r.Row
		if err := cursor.Scan(&l.ID, &l.CarrierID, &l.ModelID, &l.Status, &l.PriorityBP, &l.PublishedFareID, &l.EndpointID, &l.Revision, &l.CreatedAt,
			&r.CarrierSlug, &r.CarrierName, &r.ModelSlug, &r.ModelName, &r.ContextTokens,
			&r.UptimePct, &r.LatencyMs, &r.ThroughputTPS, &r.CacheHitRate,
			&r.EndpointURL, &r.EndpointModel, &r.EndpointHint, &r.EndpointAt); err != nil {
			return nil, err
		}
		rows = append(rows, r)
	}
	if err := cursor.Err(); err != nil {
		return nil, err
	}
	var fareIDs []int64
	for _, r := range rows {
		if r.Row.PublishedFareID != nil && !f.WithoutFares {
			fareIDs = append(fareIDs, *r.Row.PublishedFareID)
		}
	}
	fares, err := loadFares(tx, fareIDs)
	if err != nil {
		return nil, err
	}
	out := make([]catalogue.Listing, len(rows))
	for i, r := range rows {
		out[i] = catalogue.Listing{
			ID: r.Row.ID, CarrierID: r.Row.CarrierID, CarrierSlug: r.CarrierSlug, CarrierName: r.CarrierName,
			Model:  catalogue.Model{ID: r.Row.ModelID, Slug: r.ModelSlug, Name: r.ModelName, ContextTokens: r.ContextTokens},
			Status: catalogue.ListingStatus(r.Row.Status), PriorityBP: r.Row.PriorityBP, CreatedAt: r.Row.CreatedAt, Revision: r.Row.Revision,
			Health: catalogue.Health{UptimePct: r.UptimePct, LatencyMs: r.LatencyMs, ThroughputTPS: r.ThroughputTPS, CacheHitRate: r.CacheHitRate},
		}
		if r.Row.PublishedFareID != nil {
			out[i].Published = fares[*r.Row.PublishedFareID]
		}
		if r.Row.EndpointID != nil && r.EndpointURL != nil {
			out[i].Endpoint = &catalogue.Endpoint{ID: *r.Row.EndpointID, ListingID: r.Row.ID, BaseURL: *r.EndpointURL,
				UpstreamModel: valueOf(r.EndpointModel), KeyHint: valueOf(r.EndpointHint), CreatedAt: valueOf(r.EndpointAt)}
		}
	}
	// Live health from the gateway's buckets replaces the stored snapshot
	// wherever the gateway has reported (a zero now asks for the snapshot).
	if now.IsZero() || f.StoredHealth {
		return out, nil
	}
	ids := make([]int64, len(out))
	for i := range out {
		ids[i] = out[i].ID
	}
	live, err := liveHealth(tx, ids, now)
	if err != nil {
		return nil, err
	}
	for i := range out {
		if h, ok := live[out[i].ID]; ok {
			out[i].Health = h
		}
	}
	return out, nil
}

// FindListingSnapshots lists every listing with its stored health snapshot
// (not the live one computed from buckets): the demo simulator's baseline.
func (s *Store) FindListingSnapshots(ctx context.Context) ([]catalogue.Listing, error) {
	var out []catalogue.Listing
	err := s.readTx(ctx, func(tx *gorm.DB) error {
		var err error
		out, err = findListings(tx, catalogue.ListingFilter{}, 0, time.Time{})
		return err
	})
	if err != nil {
		return nil, fmt.Errorf("find listing snapshots: %w", err)
	}
	return out, nil
}
