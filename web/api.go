package web

import (
	"encoding/json"
	"errors"
	"fmt"
	"io"
	"net/http"
	"slices"
	"strconv"
	"strings"
	"time"

	"github.com/airside/airside/internal/workflow"

	"github.com/labstack/echo/v4"

	"github.com/airside/airside/internal/apperr"
	"github.com/airside/airside/internal/catalogue"
	"github.com/airside/airside/internal/election"
	"github.com/airside/airside/internal/fare"
	"github.com/airside/airside/internal/money"
	"github.com/airside/airside/internal/preview"
	"github.com/airside/airside/internal/textcheck"
)

const ctxToken = "api_token"

// apiAuth admits requests bearing a live API token with the scope: 401
// without a valid token, 403 with one lacking the scope.
func (s *Server) apiAuth(scope string) echo.MiddlewareFunc {
	return func(next echo.HandlerFunc) echo.HandlerFunc {
		return func(c echo.Context) error {
			header := c.Request().Header.Get("Authorization")
			secret, ok := strings.CutPrefix(header, "Bearer ")
			if !ok || secret == "" {
				c.Response().Header().Set("WWW-Authenticate", `Bearer realm="airside"`)
				return apperr.Errorf(apperr.EUNAUTHORIZED, "Send an API token: Authorization: Bearer <token>.")
			}
			tok, err := s.Tokens.Authenticate(c.Request().Context(), strings.TrimSpace(secret))
			if apperr.Code(err) == apperr.ENOTFOUND {
				c.Response().Header().Set("WWW-Authenticate", `Bearer realm="airside", error="invalid_token"`)
				return apperr.Errorf(apperr.EUNAUTHORIZED, "The API token is unknown or revoked.")
			}
			if err != nil {
				return err
			}
			if !tok.Has(scope) {
				return apperr.Errorf(apperr.EFORBIDDEN, "This token lacks the %s scope.", scope)
			}
			c.Set(ctxToken, tok)
			return next(c)
		}
	}
}

// decodeJSON reads a JSON body strictly; errors are EINVALID with a message.
func decodeJSON(c echo.Context, v any) error {
	dec := json.NewDecoder(c.Request().Body)
	if err := dec.Decode(v); err != nil {
		var tooLarge *http.MaxBytesError
		if errors.As(err, &tooLarge) {
			return echo.NewHTTPError(http.StatusRequestEntityTooLarge, "The request body is larger than Airside accepts.")
		}
		if errors.Is(err, io.EOF) {
			return apperr.Errorf(apperr.EINVALID, "The request body is empty; send JSON.")
		}
		return echo.NewHTTPError(http.StatusBadRequest, "The request body is not valid JSON: "+err.Error())
	}
	return nil
}

// CatalogueListing is one published listing as the gateway reads it; field
// names follow the election contract so a gateway can elect on them as is.
type CatalogueListing struct {
	ID           string           `json:"id"`
	ListingID    int64            `json:"listingId"`
	Carrier      string           `json:"carrier"`
	CarrierName  string           `json:"carrierName"`
	Model        string           `json:"model"`
	Status       string           `json:"status"`
	Priority     float64          `json:"priority"`
	Revision     int64            `json:"revision"`
	Capabilities []string         `json:"capabilities"`
	Fare         CatalogueFare    `json:"fare"`
	Metrics      CatalogueMetrics `json:"metrics"`
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
}

func priceText(m *money.Micros) *string {
	if m == nil {
		return nil
	}
	s := m.String()
	return &s
}

func pricesOf(p fare.Prices) CataloguePrices {
	return CataloguePrices{InputPrice: priceText(p.Input), OutputPrice: priceText(p.Output), CachedInputPrice: priceText(p.CachedInput)}
}

// rateText writes basis points as a fraction: 3000 -> "0.3".
func rateText(bp money.BasisPoints) string {
	return strconv.FormatFloat(float64(bp)/10000, 'f', -1, 64)
}

func catalogueListing(l *catalogue.Listing, verified map[string]string) CatalogueListing {
	f := l.Published
	out := CatalogueListing{ID: preview.CandidateID(l), ListingID: l.ID, Carrier: l.CarrierSlug, CarrierName: l.CarrierName,
		Model: l.Model.Slug, Status: string(l.Status), Priority: float64(l.PriorityBP) / 10000, Revision: l.Revision,
		Capabilities: []string{},
		Metrics: CatalogueMetrics{Uptime: l.Health.UptimePct, LatencyMs: l.Health.LatencyMs, Throughput: l.Health.ThroughputTPS,
			CacheHitRate: l.Health.CacheHitRate, OutputRatio: l.Health.OutputRatio},
		Fare: CatalogueFare{InputPrice: f.Input.String(), OutputPrice: f.Output.String(), CachedInputPrice: priceText(f.CachedInput),
			CacheReadInputPrice: priceText(f.CacheRead), CacheWritePrice: priceText(f.CacheWrite),
			Discount: rateText(f.Discount), LandingFee: rateText(f.LandingFee), MaxRpm: f.MaxRPM, MaxRpd: f.MaxRPD,
			CapScope: string(f.CapScope), Tiers: []CatalogueTier{}},
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

// CatalogueResponse is the body of the catalogue endpoints.
type CatalogueResponse struct {
	Revision int64              `json:"revision"`
	Listings []CatalogueListing `json:"listings"`
}

// catalogueAt reads the published listings (of one model, or changed after a
// revision) with the revision they are current at.
func (s *Server) catalogueAt(c echo.Context, model string, changedAfter int64) (CatalogueResponse, error) {
	ctx := c.Request().Context()
	if msg := textcheck.Problem(model, 200); msg != "" {
		return CatalogueResponse{}, apperr.Errorf(apperr.EINVALID, "model: %s", msg)
	}
	// The revision first: a listing published meanwhile is then included and
	// reported again next time, never skipped.
	rev, err := s.Reads.CatalogueRevision(ctx)
	if err != nil {
		return CatalogueResponse{}, err
	}
	m, err := preview.LoadMarket(ctx, s.Reads, catalogue.ListingFilter{ModelSlug: model, Published: true, ChangedAfter: changedAfter})
	if err != nil {
		return CatalogueResponse{}, err
	}
	listings, checks := m.Listings, m.Checks
	if changedAfter == 0 { // the full catalogue is what routes; changes also carry removals
		listings = slices.DeleteFunc(listings, func(l catalogue.Listing) bool { return l.Status == catalogue.StatusDelisted })
	}
	out := CatalogueResponse{Revision: rev, Listings: make([]CatalogueListing, 0, len(listings))}
	for i := range listings {
		out.Listings = append(out.Listings, catalogueListing(&listings[i], checks[listings[i].ID]))
	}
	return out, nil
}

func (s *Server) handleAPICatalogue(c echo.Context) error {
	rev, err := s.Reads.CatalogueRevision(c.Request().Context())
	if err != nil {
		return err
	}
	etag := fmt.Sprintf(`"%d"`, rev)
	c.Response().Header().Set("ETag", etag)
	c.Response().Header().Set("Cache-Control", "no-cache")
	if match := c.Request().Header.Get("If-None-Match"); match != "" && (match == etag || match == "*") {
		return c.NoContent(http.StatusNotModified)
	}
	body, err := s.catalogueAt(c, c.QueryParam("model"), 0)
	if err != nil {
		return err
	}
	c.Response().Header().Set("ETag", fmt.Sprintf(`"%d"`, body.Revision))
	return c.JSON(http.StatusOK, body)
}

// MaxWait bounds a long poll.
const MaxWait = 60 * time.Second

// handleAPIChanges returns the listings changed after ?since=REV. With
// ?wait=30s it holds the request until a newer revision is published or the
// wait ends; a publication by any serve process wakes it (on PostgreSQL
// through LISTEN/NOTIFY).
func (s *Server) handleAPIChanges(c echo.Context) error {
	since, err := strconv.ParseInt(c.QueryParam("since"), 10, 64)
	if err != nil || since < 0 {
		return apperr.Errorf(apperr.EINVALID, "since must be a catalogue revision (a whole number, 0 for everything).")
	}
	var wait time.Duration
	if w := c.QueryParam("wait"); w != "" {
		if wait, err = time.ParseDuration(w); err != nil || wait < 0 || wait > MaxWait {
			return apperr.Errorf(apperr.EINVALID, "wait must be a duration up to %s, like 30s.", MaxWait)
		}
	}
	deadline := s.Now().Add(wait)
	for {
		woken := s.Publications.Published() // before reading, so no publication slips between
		body, err := s.catalogueAt(c, c.QueryParam("model"), since)
		if err != nil {
			return err
		}
		remaining := time.Until(deadline)
		if body.Revision > since || remaining <= 0 {
			return c.JSON(http.StatusOK, body)
		}
		recheck := s.LongPollRecheck
		if recheck <= 0 {
			recheck = 5 * time.Second
		}
		select {
		case <-woken:
		case <-time.After(min(remaining, recheck)):
		case <-c.Request().Context().Done():
			return nil
		}
	}
}

// handleAPIElect runs the election of the contract's request part on the
// published catalogue with current metrics. The body may add "weights" (auto
// override) and "usage" (rate-cap usage by listing id "carrier/model").
func (s *Server) handleAPIElect(c echo.Context) error {
	var raw map[string]json.RawMessage
	if err := decodeJSON(c, &raw); err != nil {
		return err
	}
	wrapped := map[string]json.RawMessage{"request": mustJSON(raw)}
	if w, ok := raw["weights"]; ok {
		wrapped["weights"] = w
	}
	ballot, err := election.UnmarshalBallot(mustJSON(wrapped))
	if err != nil {
		var ie *election.InputError
		if errors.As(err, &ie) {
			return apperr.Errorf(apperr.EINVALID, "%s", strings.TrimPrefix(ie.Error(), "request."))
		}
		return err
	}
	var usage map[string]election.Usage
	if u, ok := raw["usage"]; ok {
		var parsed map[string]struct{ RPM, RPD int64 }
		if err := json.Unmarshal(u, &parsed); err != nil {
			return apperr.Errorf(apperr.EINVALID, "usage must map listing ids to {\"rpm\": n, \"rpd\": n}.")
		}
		usage = map[string]election.Usage{}
		for id, v := range parsed {
			usage[id] = election.Usage{RPM: v.RPM, RPD: v.RPD}
		}
	}
	ctx := c.Request().Context()
	if ballot.Request.Model == "" {
		return apperr.Errorf(apperr.EINVALID, "model is required.")
	}
	if msg := textcheck.Problem(ballot.Request.Model, 200); msg != "" {
		return apperr.Errorf(apperr.EINVALID, "model: %s", msg)
	}
	rev, err := s.Reads.CatalogueRevision(ctx)
	if err != nil {
		return err
	}
	market, err := preview.LoadMarket(ctx, s.Reads, catalogue.ListingFilter{ModelSlug: ballot.Request.Model})
	if err != nil {
		return err
	}
	if len(market.Listings) == 0 {
		return apperr.Errorf(apperr.ENOTFOUND, "Unknown model %q.", ballot.Request.Model)
	}
	full, _ := market.Ballot(ballot.Request, preview.Change{})
	full.AutoWeights = ballot.AutoWeights
	for i := range full.Candidates {
		full.Candidates[i].Usage = usage[full.Candidates[i].ID]
	}
	res := election.Elect(&full)
	c.Response().Header().Set("X-Airside-Revision", strconv.FormatInt(rev, 10))
	return c.JSON(http.StatusOK, res)
}

func mustJSON(v any) json.RawMessage {
	b, err := json.Marshal(v)
	if err != nil {
		panic(err)
	}
	return b
}

// bucketBody is one metric bucket as posted.
type bucketBody struct {
	Listing           string    `json:"listing"`
	ListingID         int64     `json:"listingId"`
	Minute            time.Time `json:"minute"`
	Requests          int64     `json:"requests"`
	Errors            int64     `json:"errors"`
	ClientErrors      int64     `json:"clientErrors"`
	TTFTMsSum         int64     `json:"ttftMsSum"`
	OutputTokens      int64     `json:"outputTokens"`
	DurationMs        int64     `json:"durationMs"`
	InputTokens       int64     `json:"inputTokens"`
	CachedInputTokens int64     `json:"cachedInputTokens"`
}

// handleAPIMetrics stores a batch of per-minute buckets: all or nothing,
// idempotent per (listing, minute). Problems are named by bucket and field.
func (s *Server) handleAPIMetrics(c echo.Context) error {
	var body struct {
		Buckets []bucketBody `json:"buckets"`
	}
	if err := decodeJSON(c, &body); err != nil {
		return err
	}
	posted := make([]catalogue.PostedBucket, len(body.Buckets))
	for i, b := range body.Buckets {
		posted[i] = catalogue.PostedBucket{Listing: b.Listing, ListingID: b.ListingID, Bucket: catalogue.Bucket{
			Minute: b.Minute, Requests: b.Requests, Errors: b.Errors, ClientErrors: b.ClientErrors, TTFTMsSum: b.TTFTMsSum,
			OutputTokens: b.OutputTokens, DurationMs: b.DurationMs, InputTokens: b.InputTokens, CachedInputTokens: b.CachedInputTokens}}
	}
	n, err := s.Metrics.Record(c.Request().Context(), posted)
	if err != nil {
		return err
	}
	return c.JSON(http.StatusAccepted, map[string]any{"accepted": n})
}
