// Package catalogue is what routing reads: models, listings (a carrier
// serving a model) with their status, published fare and live health.
package catalogue

import (
	"time"

	"github.com/airside/airside/internal/fare"
	"github.com/airside/airside/internal/money"
)

// Model is a model of the catalogue.
type Model struct {
	ID            int64
	Slug          string
	Name          string
	ContextTokens int64
	// The model card: family, longest answer, and what goes in and out
	// ("text,image").
	Family                            string
	MaxOutputTokens                   int64
	InputModalities, OutputModalities string
}

// ListingStatus is where a listing is in its life.
type ListingStatus string

// The listing statuses.
const (
	StatusDraft     ListingStatus = "draft"
	StatusInService ListingStatus = "in_service"
	StatusPaused    ListingStatus = "paused"
	StatusDelisted  ListingStatus = "delisted"
)

// Label is the status as a person reads it.
func (s ListingStatus) Label() string {
	switch s {
	case StatusInService:
		return "in service"
	default:
		return string(s)
	}
}

// Health is a listing's measured health; nil fields are not measured yet.
type Health struct {
	UptimePct     *float64
	LatencyMs     *float64
	ThroughputTPS *float64
	CacheHitRate  *float64
	// OutputRatio is the observed output-to-input token ratio.
	OutputRatio *float64
	// Requests is n of the blend with the model's median (election spec
	// section 4, traffic.BlendWithPeers): the window's requests, the
	// current minute's counted whole and older ones by their decayed
	// weight. Nil for figures gateways did not measure (a stored
	// snapshot), which are not blended.
	Requests  *float64
	UpdatedAt time.Time
}

// Listing is a carrier serving a model.
type Listing struct {
	ID          int64
	CarrierID   int64
	CarrierSlug string
	CarrierName string
	Model       Model
	Status      ListingStatus
	// PriorityBP is set by gateway staff; 10000 is the default priority 1.
	PriorityBP int64
	// Published is the fare in force, nil for a listing never approved.
	Published *fare.Fare
	Health    Health
	// Endpoint is the published deployment, nil before one is approved.
	Endpoint *Endpoint
	// Revision is the catalogue revision at which the listing last changed.
	Revision  int64
	CreatedAt time.Time
}

// ListingEntry is a listing as a table of many searches, filters and sorts
// it: names, status and published input price, without the rest of the fare,
// health or endpoint (read only for the rows shown).
type ListingEntry struct {
	ID          int64
	CarrierID   int64
	CarrierSlug string
	CarrierName string
	Model       Model
	Status      ListingStatus
	// PublishedInput is the published fare's input price, nil before one.
	PublishedInput *money.Micros
}

// ListingFilter narrows FindListings.
type ListingFilter struct {
	// CarrierIDs limits to these carriers; nil means every carrier.
	CarrierIDs []int64
	// IDs limits to these listings; nil means every listing.
	IDs     []int64
	ModelID int64
	// ModelSlug narrows to one model by slug.
	ModelSlug string
	// Published keeps only listings with a published fare.
	Published bool
	// ChangedAfter keeps listings changed after this catalogue revision.
	ChangedAfter int64
	// StoredHealth skips computing live health from the metrics: the caller
	// takes health from the routing snapshot (at most seconds old).
	StoredHealth bool
	// WithoutFares leaves Published nil: the caller shows no fare (loading
	// 500 fares and their tiers was a fifth of the operations page).
	WithoutFares bool
}

// HealthSample is a listing's live health as the routing catalogue served
// it at At: what gateways elected on from then until the next sample.
type HealthSample struct {
	At time.Time
	Health
}

// HealthSampleEvery is how often the portal samples the live health it
// serves; HealthSampleRetention how long samples are kept (the projection
// replays the hours they cover; older hours rebuild health from the hourly
// rollups).
const (
	HealthSampleEvery     = 10 * time.Minute
	HealthSampleRetention = 8 * 24 * time.Hour
)
