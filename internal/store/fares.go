package store

import (
	"context"
	"fmt"
	"strconv"
	"strings"
	"time"

	"gorm.io/gorm"

	"github.com/airside/airside/internal/catalogue"
	"github.com/airside/airside/internal/fare"
	"github.com/airside/airside/internal/money"
)

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
	// The blocks' fees per request and image.
	PeakRequestMicros, PeakImageMicros       *int64
	OffPeakRequestMicros, OffPeakImageMicros *int64
	// The market's attributes (sec. 7).
	ContextLength      *int64
	MaxOutputTokens    *int64
	Quantization       string
	RetentionDays      *int64
	TrainsOnPrompts    *bool
	Regions            string
	RequestPriceMicros *int64
	ImagePriceMicros   *int64
	CreatedBy          *int64
	CreatedAt          time.Time
}

func (fareRow) TableName() string { return "fares" }

type fareTierRow struct {
	FareID            int64 `gorm:"primaryKey"`
	Position          int64 `gorm:"primaryKey"`
	AboveTokens       int64
	InputMicros       *int64
	OutputMicros      *int64
	CachedInputMicros *int64
	RequestMicros     *int64
	ImageMicros       *int64
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
	m := &f.Market
	row.ContextLength, row.MaxOutputTokens, row.Quantization = m.ContextLength, m.MaxOutputTokens, m.Quantization
	row.RetentionDays, row.TrainsOnPrompts, row.Regions = m.RetentionDays, m.TrainsOnPrompts, strings.Join(m.Regions, ",")
	row.RequestPriceMicros, row.ImagePriceMicros = int64Ptr(m.RequestPrice), int64Ptr(m.ImagePrice)
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
		row.PeakRequestMicros, row.PeakImageMicros = int64Ptr(tb.Peak.Request), int64Ptr(tb.Peak.Image)
		row.OffPeakRequestMicros, row.OffPeakImageMicros = int64Ptr(tb.OffPeak.Request), int64Ptr(tb.OffPeak.Image)
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
	f.Market = fare.Market{ContextLength: r.ContextLength, MaxOutputTokens: r.MaxOutputTokens, Quantization: r.Quantization,
		RetentionDays: r.RetentionDays, TrainsOnPrompts: r.TrainsOnPrompts,
		RequestPrice: microsPtr(r.RequestPriceMicros), ImagePrice: microsPtr(r.ImagePriceMicros)}
	if r.Regions != "" {
		f.Market.Regions = strings.Split(r.Regions, ",")
	}
	for _, t := range tiers {
		f.Tiers = append(f.Tiers, fare.Tier{AboveTokens: t.AboveTokens, Prices: fare.Prices{
			Input: microsPtr(t.InputMicros), Output: microsPtr(t.OutputMicros), CachedInput: microsPtr(t.CachedInputMicros),
			Request: microsPtr(t.RequestMicros), Image: microsPtr(t.ImageMicros)}})
	}
	if r.PeakHours != "" || r.OffPeakDays != "" || r.PeakInputMicros != nil || r.OffPeakInputMicros != nil ||
		r.PeakOutputMicros != nil || r.OffPeakOutputMicros != nil || r.PeakRequestMicros != nil || r.OffPeakRequestMicros != nil ||
		r.PeakImageMicros != nil || r.OffPeakImageMicros != nil {
		tb := &fare.TimeBased{EffectiveAt: r.TodEffectiveAt, UTCOffsetMinutes: int(r.UTCOffsetMinutes),
			Peak: fare.Prices{Input: microsPtr(r.PeakInputMicros), Output: microsPtr(r.PeakOutputMicros), CachedInput: microsPtr(r.PeakCachedInputMicros),
				Request: microsPtr(r.PeakRequestMicros), Image: microsPtr(r.PeakImageMicros)},
			OffPeak: fare.Prices{Input: microsPtr(r.OffPeakInputMicros), Output: microsPtr(r.OffPeakOutputMicros), CachedInput: microsPtr(r.OffPeakCachedInputMicros),
				Request: microsPtr(r.OffPeakRequestMicros), Image: microsPtr(r.OffPeakImageMicros)},
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
			InputMicros: int64Ptr(t.Input), OutputMicros: int64Ptr(t.Output), CachedInputMicros: int64Ptr(t.CachedInput),
			RequestMicros: int64Ptr(t.Request), ImageMicros: int64Ptr(t.Image)}
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
		if err := recordFareHistory(tx, l.ID, fareID, now); err != nil {
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
