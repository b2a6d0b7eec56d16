package routing

import (
	"strconv"
	"time"

	"github.com/airside/airside/internal/catalogue"
	"github.com/airside/airside/internal/fare"
	"github.com/airside/airside/internal/money"
	"github.com/airside/airside/internal/preview"
	"github.com/airside/airside/internal/workflow"
)

// The routing catalogue as the gateway reads it (docs/openapi.yaml): field
// names follow the election contract so a gateway can elect on them as is.

// CatalogueListing is one published listing as the gateway reads it; field
// names follow the election contract so a gateway can elect on them as is.
type CatalogueListing struct {
	ID           string             `json:"id"`
	ListingID    int64              `json:"listingId"`
	Carrier      string             `json:"carrier"`
	CarrierName  string             `json:"carrierName"`
	Model        string             `json:"model"`
	Status       string             `json:"status"`
	Priority     float64            `json:"priority"`
	Revision     int64              `json:"revision"`
	Capabilities []string           `json:"capabilities"`
	Endpoint     *CatalogueEndpoint `json:"endpoint"`
	Fare         CatalogueFare      `json:"fare"`
	// Metrics is the listing's live health, only in the one-document form
	// (?include=health): health has its own resource, so a health figure
	// moving does not make every gateway download the fares again.
	Metrics *CatalogueMetrics `json:"metrics,omitempty"`
}

// CatalogueEndpoint is where the gateway sends a listing's requests; its
// key is served apart, to tokens with the credentials scope.
type CatalogueEndpoint struct {
	BaseURL       string `json:"baseUrl"`
	UpstreamModel string `json:"upstreamModel"`
}

// CatalogueFare is a published fare with exact decimals as strings.
type CatalogueFare struct {
	InputPrice          string             `json:"inputPrice"`
	OutputPrice         string             `json:"outputPrice"`
	CachedInputPrice    *string            `json:"cachedInputPrice"`
	CacheReadInputPrice *string            `json:"cacheReadInputPrice"`
	CacheWritePrice     *string            `json:"cacheWriteInputPrice"`
	Discount            string             `json:"discount"`
	LandingFee          string             `json:"landingFee"`
	MaxRpm              *int64             `json:"maxRpm"`
	MaxRpd              *int64             `json:"maxRpd"`
	CapScope            string             `json:"capScope"`
	Tiers               []CatalogueTier    `json:"tiers"`
	TimeBased           *CatalogueSchedule `json:"timeBased"`
	// The market's attributes (election.md sec. 7), in the contract's
	// names, each absent when the carrier has not declared it.
	ContextLength   *int64   `json:"contextLength,omitempty"`
	MaxOutputTokens *int64   `json:"maxOutputTokens,omitempty"`
	Quantization    *string  `json:"quantization,omitempty"`
	RetentionDays   *int64   `json:"retentionDays,omitempty"`
	TrainsOnPrompts *bool    `json:"trainsOnPrompts,omitempty"`
	Regions         []string `json:"regions,omitempty"`
	RequestPrice    *string  `json:"requestPrice,omitempty"`
	ImagePrice      *string  `json:"imagePrice,omitempty"`
}

// CatalogueTier is a context tier.
type CatalogueTier struct {
	AboveTokens int64 `json:"aboveTokens"`
	CataloguePrices
}

// CataloguePrices is a block of optional prices.
type CataloguePrices struct {
	InputPrice       *string `json:"inputPrice,omitempty"`
	OutputPrice      *string `json:"outputPrice,omitempty"`
	CachedInputPrice *string `json:"cachedInputPrice,omitempty"`
	// RequestPrice and ImagePrice are the block's fees (USD), election.md
	// sec. 7.
	RequestPrice *string `json:"requestPrice,omitempty"`
	ImagePrice   *string `json:"imagePrice,omitempty"`
}

// CatalogueSchedule is a time-of-day block.
type CatalogueSchedule struct {
	EffectiveAt  *time.Time      `json:"effectiveAt"`
	PeakHoursUtc [][2]int        `json:"peakHoursUtc"`
	OffPeakDays  *CatalogueDays  `json:"offPeakDays"`
	Peak         CataloguePrices `json:"peak"`
	OffPeak      CataloguePrices `json:"offPeak"`
}

// CatalogueDays are off-peak weekdays in an offset.
type CatalogueDays struct {
	DaysOfWeek       []int `json:"daysOfWeek"`
	UtcOffsetMinutes int   `json:"utcOffsetMinutes"`
}

// CatalogueMetrics is a listing's live health.
type CatalogueMetrics struct {
	Uptime       *float64 `json:"uptime"`
	LatencyMs    *float64 `json:"latencyMs"`
	Throughput   *float64 `json:"throughput"`
	CacheHitRate *float64 `json:"cacheHitRate"`
	OutputRatio  *float64 `json:"outputRatio"`
	// Requests is the window's requests the figures rest on (n of the
	// blend with the model's median); absent when unknown.
	Requests *float64 `json:"requests,omitempty"`
}

func priceText(m *money.Micros) *string {
	if m == nil {
		return nil
	}
	s := m.String()
	return &s
}

func pricesOf(p fare.Prices) CataloguePrices {
	return CataloguePrices{InputPrice: priceText(p.Input), OutputPrice: priceText(p.Output), CachedInputPrice: priceText(p.CachedInput),
		RequestPrice: priceText(p.Request), ImagePrice: priceText(p.Image)}
}

// rateText writes basis points as a fraction: 3000 -> "0.3".
func rateText(bp money.BasisPoints) string {
	return strconv.FormatFloat(float64(bp)/10000, 'f', -1, 64)
}

// ListingDocument is a listing as the catalogue serves it: only its verified
// capabilities count.
func ListingDocument(l *catalogue.Listing, verified map[string]string) CatalogueListing {
	f := l.Published
	out := CatalogueListing{ID: preview.CandidateID(l), ListingID: l.ID, Carrier: l.CarrierSlug, CarrierName: l.CarrierName,
		Model: l.Model.Slug, Status: string(l.Status), Priority: float64(l.PriorityBP) / 10000, Revision: l.Revision,
		Capabilities: []string{},
		Fare: CatalogueFare{InputPrice: f.Input.String(), OutputPrice: f.Output.String(), CachedInputPrice: priceText(f.CachedInput),
			CacheReadInputPrice: priceText(f.CacheRead), CacheWritePrice: priceText(f.CacheWrite),
			Discount: rateText(f.Discount), LandingFee: rateText(f.LandingFee), MaxRpm: f.MaxRPM, MaxRpd: f.MaxRPD,
			CapScope: string(f.CapScope), Tiers: []CatalogueTier{}},
	}
	m := &f.Market
	out.Fare.ContextLength, out.Fare.MaxOutputTokens = m.ContextLength, m.MaxOutputTokens
	if m.Quantization != "" {
		out.Fare.Quantization = &m.Quantization
	}
	out.Fare.RetentionDays, out.Fare.TrainsOnPrompts, out.Fare.Regions = m.RetentionDays, m.TrainsOnPrompts, m.Regions
	out.Fare.RequestPrice, out.Fare.ImagePrice = priceText(m.RequestPrice), priceText(m.ImagePrice)
	if e := l.Endpoint; e != nil {
		out.Endpoint = &CatalogueEndpoint{BaseURL: e.BaseURL, UpstreamModel: e.UpstreamModel}
	}
	for _, flag := range f.Capabilities {
		if verified[flag.String()] == workflow.CapabilityVerified {
			out.Capabilities = append(out.Capabilities, flag.String())
		}
	}
	for _, t := range f.Tiers {
		out.Fare.Tiers = append(out.Fare.Tiers, CatalogueTier{AboveTokens: t.AboveTokens, CataloguePrices: pricesOf(t.Prices)})
	}
	if tb := f.TimeBased; tb != nil {
		sch := &CatalogueSchedule{EffectiveAt: tb.EffectiveAt, PeakHoursUtc: [][2]int{}, Peak: pricesOf(tb.Peak), OffPeak: pricesOf(tb.OffPeak)}
		for _, w := range tb.PeakHours {
			sch.PeakHoursUtc = append(sch.PeakHoursUtc, [2]int{w.Start, w.End})
		}
		if len(tb.OffPeakDays) > 0 {
			days := &CatalogueDays{UtcOffsetMinutes: tb.UTCOffsetMinutes}
			for _, d := range tb.OffPeakDays {
				days.DaysOfWeek = append(days.DaysOfWeek, int(d))
			}
			sch.OffPeakDays = days
		}
		out.Fare.TimeBased = sch
	}
	return out
}

// MetricsOf is a listing's health as the catalogue serves it.
func MetricsOf(h catalogue.Health) *CatalogueMetrics {
	return &CatalogueMetrics{Uptime: h.UptimePct, LatencyMs: h.LatencyMs, Throughput: h.ThroughputTPS,
		CacheHitRate: h.CacheHitRate, OutputRatio: h.OutputRatio, Requests: h.Requests}
}

// Catalogue is the body of the catalogue endpoints.
type Catalogue struct {
	Revision int64 `json:"revision"`
	// HealthAsOf is when the listings' health figures were computed, only
	// in the one-document form (?include=health).
	HealthAsOf *time.Time         `json:"healthAsOf,omitempty"`
	Listings   []CatalogueListing `json:"listings"`
}

// HealthDocument is the body of the health endpoint: every published
// listing's live health, with its own validator; or, as a delta, only the
// listings whose figures moved since the figures a gateway holds.
type HealthDocument struct {
	Revision   int64     `json:"revision"`
	HealthAsOf time.Time `json:"healthAsOf"`
	// Delta says Listings are only those that moved since the health named
	// by the request's If-None-Match: merge them into what is held.
	Delta    bool            `json:"delta"`
	Listings []ListingHealth `json:"listings"`
}

// ListingHealth is one listing's live health.
type ListingHealth struct {
	ID        string           `json:"id"`
	ListingID int64            `json:"listingId"`
	Metrics   CatalogueMetrics `json:"metrics"`
}
