package store

import (
	"context"
	"fmt"
	"strconv"
	"strings"
	"time"

	"gorm.io/gorm"

	"github.com/airside/airside/internal/apperr"
	"github.com/airside/airside/internal/catalogue"
	"github.com/airside/airside/internal/fare"
	"github.com/airside/airside/internal/money"
	"github.com/airside/airside/internal/workflow"
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

type listingRow struct {
	ID              int64 `gorm:"primaryKey"`
	CarrierID       int64
	ModelID         int64
	Status          string
	PriorityBP      int64 `gorm:"column:priority_bp"`
	PublishedFareID *int64
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

type fareRow struct {
	ID                       int64 `gorm:"primaryKey"`
	ListingID                int64
	InputMicros              int64
	OutputMicros             int64
	CachedInputMicros        *int64
	CacheReadMicros          *int64
	CacheWriteMicros         *int64
	LandingFeeBP             int64  `gorm:"column:landing_fee_bp"`
	DiscountBP               int64  `gorm:"column:discount_bp"`
	MaxRPM                   *int64 `gorm:"column:max_rpm"`
	MaxRPD                   *int64 `gorm:"column:max_rpd"`
	CapScope                 string
	Capabilities             string
	TodEffectiveAt           *time.Time
	PeakHours                string
	OffPeakDays              string
	UTCOffsetMinutes         int64 `gorm:"column:utc_offset_minutes"`
	PeakInputMicros          *int64
	PeakOutputMicros         *int64
	PeakCachedInputMicros    *int64
	OffPeakInputMicros       *int64
	OffPeakOutputMicros      *int64
	OffPeakCachedInputMicros *int64
	CreatedBy                *int64
	CreatedAt                time.Time
}

func (fareRow) TableName() string { return "fares" }

type fareTierRow struct {
	FareID            int64 `gorm:"primaryKey"`
	Position          int64 `gorm:"primaryKey"`
	AboveTokens       int64
	InputMicros       *int64
	OutputMicros      *int64
	CachedInputMicros *int64
}

func (fareTierRow) TableName() string { return "fare_tiers" }

func microsPtr(v *int64) *money.Micros {
	if v == nil {
		return nil
	}
	m := money.Micros(*v)
	return &m
}

func int64Ptr(m *money.Micros) *int64 {
	if m == nil {
		return nil
	}
	v := int64(*m)
	return &v
}

func fareToRow(f *fare.Fare) fareRow {
	row := fareRow{
		ListingID: f.ListingID, InputMicros: int64(f.Input), OutputMicros: int64(f.Output),
		CachedInputMicros: int64Ptr(f.CachedInput), CacheReadMicros: int64Ptr(f.CacheRead), CacheWriteMicros: int64Ptr(f.CacheWrite),
		LandingFeeBP: int64(f.LandingFee), DiscountBP: int64(f.Discount), MaxRPM: f.MaxRPM, MaxRPD: f.MaxRPD,
		CapScope: string(f.CapScope), Capabilities: fare.FormatCapabilities(f.Capabilities),
	}
	if row.CapScope == "" {
		row.CapScope = string(fare.ScopeGlobal)
	}
	if tb := f.TimeBased; tb != nil {
		row.TodEffectiveAt = tb.EffectiveAt
		windows := make([]string, len(tb.PeakHours))
		for i, w := range tb.PeakHours {
			windows[i] = fmt.Sprintf("%d-%d", w.Start, w.End)
		}
		row.PeakHours = strings.Join(windows, ",")
		days := make([]string, len(tb.OffPeakDays))
		for i, d := range tb.OffPeakDays {
			days[i] = strconv.Itoa(int(d))
		}
		row.OffPeakDays = strings.Join(days, ",")
		row.UTCOffsetMinutes = int64(tb.UTCOffsetMinutes)
		row.PeakInputMicros, row.PeakOutputMicros, row.PeakCachedInputMicros = int64Ptr(tb.Peak.Input), int64Ptr(tb.Peak.Output), int64Ptr(tb.Peak.CachedInput)
		row.OffPeakInputMicros, row.OffPeakOutputMicros, row.OffPeakCachedInputMicros = int64Ptr(tb.OffPeak.Input), int64Ptr(tb.OffPeak.Output), int64Ptr(tb.OffPeak.CachedInput)
	}
	return row
}

func (r *fareRow) toDomain(tiers []fareTierRow) *fare.Fare {
	f := &fare.Fare{
		ID: r.ID, ListingID: r.ListingID, Input: money.Micros(r.InputMicros), Output: money.Micros(r.OutputMicros),
		CachedInput: microsPtr(r.CachedInputMicros), CacheRead: microsPtr(r.CacheReadMicros), CacheWrite: microsPtr(r.CacheWriteMicros),
		LandingFee: money.BasisPoints(r.LandingFeeBP), Discount: money.BasisPoints(r.DiscountBP), MaxRPM: r.MaxRPM, MaxRPD: r.MaxRPD,
		CapScope: fare.CapScope(r.CapScope), Capabilities: fare.ParseCapabilities(r.Capabilities), CreatedAt: r.CreatedAt,
	}
	if r.CreatedBy != nil {
		f.CreatedBy = *r.CreatedBy
	}
	for _, t := range tiers {
		f.Tiers = append(f.Tiers, fare.Tier{AboveTokens: t.AboveTokens, Prices: fare.Prices{
			Input: microsPtr(t.InputMicros), Output: microsPtr(t.OutputMicros), CachedInput: microsPtr(t.CachedInputMicros)}})
	}
	if r.PeakHours != "" || r.OffPeakDays != "" || r.PeakInputMicros != nil || r.OffPeakInputMicros != nil ||
		r.PeakOutputMicros != nil || r.OffPeakOutputMicros != nil {
		tb := &fare.TimeBased{EffectiveAt: r.TodEffectiveAt, UTCOffsetMinutes: int(r.UTCOffsetMinutes),
			Peak:    fare.Prices{Input: microsPtr(r.PeakInputMicros), Output: microsPtr(r.PeakOutputMicros), CachedInput: microsPtr(r.PeakCachedInputMicros)},
			OffPeak: fare.Prices{Input: microsPtr(r.OffPeakInputMicros), Output: microsPtr(r.OffPeakOutputMicros), CachedInput: microsPtr(r.OffPeakCachedInputMicros)},
		}
		for _, w := range strings.Split(r.PeakHours, ",") {
			a, b, ok := strings.Cut(w, "-")
			start, err1 := strconv.Atoi(a)
			end, err2 := strconv.Atoi(b)
			if ok && err1 == nil && err2 == nil {
				tb.PeakHours = append(tb.PeakHours, fare.PeakWindow{Start: start, End: end})
			}
		}
		for _, d := range strings.Split(r.OffPeakDays, ",") {
			if v, err := strconv.Atoi(d); err == nil {
				tb.OffPeakDays = append(tb.OffPeakDays, time.Weekday(v))
			}
		}
		f.TimeBased = tb
	}
	return f
}

// createFare writes a fare and its tiers.
func createFare(tx *gorm.DB, now time.Time, actorID *int64, f *fare.Fare) (int64, error) {
	row := fareToRow(f)
	row.CreatedAt, row.CreatedBy = now, actorID
	if err := tx.Create(&row).Error; err != nil {
		return 0, fmt.Errorf("create fare: %w", err)
	}
	for i, t := range f.Tiers {
		tr := fareTierRow{FareID: row.ID, Position: int64(i), AboveTokens: t.AboveTokens,
			InputMicros: int64Ptr(t.Input), OutputMicros: int64Ptr(t.Output), CachedInputMicros: int64Ptr(t.CachedInput)}
		if err := tx.Create(&tr).Error; err != nil {
			return 0, fmt.Errorf("create fare tier: %w", err)
		}
	}
	return row.ID, nil
}

// loadFares loads fares by id with their tiers, in two queries.
func loadFares(tx *gorm.DB, ids []int64) (map[int64]*fare.Fare, error) {
	out := map[int64]*fare.Fare{}
	if len(ids) == 0 {
		return out, nil
	}
	var rows []fareRow
	if err := tx.Where("id IN ?", ids).Find(&rows).Error; err != nil {
		return nil, fmt.Errorf("load fares: %w", err)
	}
	var tiers []fareTierRow
	if err := tx.Where("fare_id IN ?", ids).Order("fare_id, position").Find(&tiers).Error; err != nil {
		return nil, fmt.Errorf("load fare tiers: %w", err)
	}
	byFare := map[int64][]fareTierRow{}
	for _, t := range tiers {
		byFare[t.FareID] = append(byFare[t.FareID], t)
	}
	for i := range rows {
		out[rows[i].ID] = rows[i].toDomain(byFare[rows[i].ID])
	}
	return out, nil
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

// CreateListing adds a draft listing (no fare yet) for a carrier and model.
func (s *Store) CreateListing(ctx context.Context, actorID *int64, carrierID, modelID int64) (int64, error) {
	var row listingRow
	err := s.tx(ctx, func(tx *gorm.DB, now time.Time) error {
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

// PublishSeedFare files and publishes a fare in one step, putting the listing
// in service and raising the catalogue revision. Only the demo seed uses it:
// every carrier filing goes through review.
func (s *Store) PublishSeedFare(ctx context.Context, f *fare.Fare) (int64, error) {
	var fareID int64
	err := s.tx(ctx, func(tx *gorm.DB, now time.Time) error {
		var l listingRow
		if err := tx.First(&l, f.ListingID).Error; err != nil {
			return notFound(err, "Listing")
		}
		var err error
		if fareID, err = createFare(tx, now, nil, f); err != nil {
			return err
		}
		if err := tx.Model(&listingRow{}).Where("id = ?", l.ID).
			Updates(map[string]any{"published_fare_id": fareID, "status": string(catalogue.StatusInService), "updated_at": now}).Error; err != nil {
			return err
		}
		rev, err := bumpRevision(tx, now, l.ID, fmt.Sprintf("seed listing %d", l.ID))
		if err != nil {
			return err
		}
		return appendAudit(tx, now, auditEvent{CarrierID: &l.CarrierID, Action: "fare.publish.seed", SubjectType: "listing",
			SubjectID: l.ID, After: map[string]any{"fareId": fareID, "revision": rev}})
	})
	if err != nil {
		return 0, fmt.Errorf("publish seed fare for listing %d: %w", f.ListingID, err)
	}
	return fareID, nil
}

type revisionRow struct {
	Revision    int64 `gorm:"primaryKey;autoIncrement:false"`
	PublishedAt time.Time
	Note        string
}

func (revisionRow) TableName() string { return "catalogue_revisions" }

// bumpRevision records the next catalogue revision for a change of a
// listing, marks the listing changed at it, and announces it. The primary key
// makes two concurrent publishers collide instead of sharing a number.
func bumpRevision(tx *gorm.DB, now time.Time, listingID int64, note string) (int64, error) {
	var current int64
	if err := tx.Model(&revisionRow{}).Select("COALESCE(MAX(revision), 0)").Scan(&current).Error; err != nil {
		return 0, fmt.Errorf("read catalogue revision: %w", err)
	}
	next := revisionRow{Revision: current + 1, PublishedAt: now, Note: note}
	if err := tx.Create(&next).Error; err != nil {
		if isDuplicate(err) {
			return 0, apperr.Errorf(apperr.ECONFLICT, "Another publication happened at the same moment; try again.")
		}
		return 0, fmt.Errorf("write catalogue revision: %w", err)
	}
	if err := tx.Model(&listingRow{}).Where("id = ?", listingID).Update("revision", next.Revision).Error; err != nil {
		return 0, fmt.Errorf("mark listing %d changed: %w", listingID, err)
	}
	markPublished(tx)
	return next.Revision, notifyPublication(tx, next.Revision)
}

// CatalogueRevision returns the current catalogue revision (0 when empty).
func (s *Store) CatalogueRevision(ctx context.Context) (int64, error) {
	var current int64
	if err := s.read(ctx).Model(&revisionRow{}).Select("COALESCE(MAX(revision), 0)").Scan(&current).Error; err != nil {
		return 0, fmt.Errorf("read catalogue revision: %w", err)
	}
	return current, nil
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

// FindListings lists listings with their carrier, model, published fare and
// health, ordered by model then carrier.
func (s *Store) FindListings(ctx context.Context, f catalogue.ListingFilter) ([]catalogue.Listing, error) {
	var out []catalogue.Listing
	err := s.db.WithContext(ctx).Transaction(func(tx *gorm.DB) error {
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
	err := s.db.WithContext(ctx).Transaction(func(tx *gorm.DB) error {
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
	var rows []struct {
		Row           listingRow `gorm:"embedded"`
		CarrierSlug   string
		CarrierName   string
		ModelSlug     string
		ModelName     string
		ContextTokens int64
		UptimePct     *float64
		LatencyMs     *float64
		ThroughputTPS *float64 `gorm:"column:throughput_tps"`
		CacheHitRate  *float64
	}
	q := tx.Table("listings").Select(`listings.*, carriers.slug AS carrier_slug, carriers.name AS carrier_name,
		models.slug AS model_slug, models.name AS model_name, models.context_tokens,
		listing_health.uptime_pct, listing_health.latency_ms, listing_health.throughput_tps, listing_health.cache_hit_rate`).
		Joins("JOIN carriers ON carriers.id = listings.carrier_id").
		Joins("JOIN models ON models.id = listings.model_id").
		Joins("LEFT JOIN listing_health ON listing_health.listing_id = listings.id").
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
	if id != 0 {
		q = q.Where("listings.id = ?", id)
	}
	if err := q.Scan(&rows).Error; err != nil {
		return nil, err
	}
	var fareIDs []int64
	for _, r := range rows {
		if r.Row.PublishedFareID != nil {
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
	}
	// Live health from the gateway's buckets replaces the stored snapshot
	// wherever the gateway has reported (a zero now asks for the snapshot).
	if now.IsZero() {
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

type capabilityCheckRow struct {
	ListingID  int64  `gorm:"primaryKey"`
	Capability string `gorm:"primaryKey"`
	State      string
	Note       string
	CheckedBy  *int64
	UpdatedAt  time.Time
}

func (capabilityCheckRow) TableName() string { return "capability_checks" }

// FindCapabilityChecks maps a listing's capability names to their
// verification state ("verified" or "failed"); a flag not in the map has not
// been verified yet.
func (s *Store) FindCapabilityChecks(ctx context.Context, listingID int64) (map[string]string, error) {
	var rows []capabilityCheckRow
	if err := s.read(ctx).Where("listing_id = ?", listingID).Find(&rows).Error; err != nil {
		return nil, fmt.Errorf("find capability checks of listing %d: %w", listingID, err)
	}
	out := map[string]string{}
	for _, r := range rows {
		out[r.Capability] = r.State
	}
	return out, nil
}

// FindListingSnapshots lists every listing with its stored health snapshot
// (not the live one computed from buckets): the demo simulator's baseline.
func (s *Store) FindListingSnapshots(ctx context.Context) ([]catalogue.Listing, error) {
	var out []catalogue.Listing
	err := s.db.WithContext(ctx).Transaction(func(tx *gorm.DB) error {
		var err error
		out, err = findListings(tx, catalogue.ListingFilter{}, 0, time.Time{})
		return err
	})
	if err != nil {
		return nil, fmt.Errorf("find listing snapshots: %w", err)
	}
	return out, nil
}

// SetListingPriority sets a listing's routing priority (gateway staff only;
// 10000 basis points is the default priority 1, 0 or below takes it off every
// ballot). It changes routing, so it raises the catalogue revision.
func (s *Store) SetListingPriority(ctx context.Context, actorID, listingID, priorityBP int64) error {
	return s.tx(ctx, func(tx *gorm.DB, now time.Time) error {
		var l listingRow
		if err := tx.First(&l, listingID).Error; err != nil {
			return notFound(err, "Listing")
		}
		if l.PriorityBP == priorityBP {
			return nil
		}
		if err := tx.Model(&listingRow{}).Where("id = ?", l.ID).Updates(map[string]any{"priority_bp": priorityBP, "updated_at": now}).Error; err != nil {
			return err
		}
		if _, err := bumpRevision(tx, now, l.ID, fmt.Sprintf("priority of listing %d", l.ID)); err != nil {
			return err
		}
		return appendAudit(tx, now, auditEvent{ActorID: &actorID, CarrierID: &l.CarrierID, Action: "listing.priority",
			SubjectType: "listing", SubjectID: l.ID, Before: map[string]any{"priorityBp": l.PriorityBP}, After: map[string]any{"priorityBp": priorityBP}})
	})
}

// DelistListing takes a listing out of the catalogue for good (gateway
// staff only). A filing in flight is withdrawn with it; the carrier is told.
func (s *Store) DelistListing(ctx context.Context, actorID, listingID int64, reason string) error {
	return s.tx(ctx, func(tx *gorm.DB, now time.Time) error {
		var l listingRow
		if err := tx.First(&l, listingID).Error; err != nil {
			return notFound(err, "Listing")
		}
		if l.Status == string(catalogue.StatusDelisted) {
			return apperr.Errorf(apperr.ECONFLICT, "The listing is already delisted.")
		}
		if err := tx.Model(&listingRow{}).Where("id = ?", l.ID).Updates(map[string]any{"status": string(catalogue.StatusDelisted), "updated_at": now}).Error; err != nil {
			return err
		}
		if err := tx.Model(&filingRow{}).Where("listing_id = ? AND state IN ?", l.ID, append(workflow.InFlightStates, workflow.Draft)).
			Updates(map[string]any{"state": string(workflow.Withdrawn), "updated_at": now}).Error; err != nil {
			return err
		}
		if _, err := bumpRevision(tx, now, l.ID, fmt.Sprintf("delisted listing %d", l.ID)); err != nil {
			return err
		}
		if err := appendAudit(tx, now, auditEvent{ActorID: &actorID, CarrierID: &l.CarrierID, Action: "listing.delist",
			SubjectType: "listing", SubjectID: l.ID, Before: map[string]any{"status": l.Status},
			After: map[string]any{"status": catalogue.StatusDelisted, "reason": reason}}); err != nil {
			return err
		}
		return notifyCarrier(tx, now, l.CarrierID, nil, workflow.NoticeDelisted(l.ID, reason))
	})
}
