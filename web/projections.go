package web

import (
	"context"
	"time"

	"github.com/airside/airside/internal/catalogue"
	"github.com/airside/airside/internal/earnings"
	"github.com/airside/airside/internal/fare"
	"github.com/airside/airside/internal/projection"
	"github.com/airside/airside/internal/routing"
)

// Projections are the projected figures the pages show and the kept reads
// behind them: what the handlers call of projection.Projector (built in
// cmd/airside/wire), declared here so a page can be tested over a fake
// where the page, not the projection, is under test.
type Projections interface {
	// The fare preview and its measured demand; the reviewer's impact.
	MeasuredDemand(ctx context.Context, model string) (projection.Measured, error)
	// Unserved is what of the model's requests a listing offering m
	// cannot serve for something other than price.
	Unserved(ctx context.Context, model string, m *fare.Market) ([]projection.Unserved, error)
	// DemandGaps are what of the model's requests in a period the
	// projection could not follow as routing did: those that asked what
	// the listing's published fare does not offer, and those replayed on
	// the model's rates rather than their project's.
	DemandGaps(ctx context.Context, l *catalogue.Listing, from, until time.Time) (projection.DemandGaps, error)
	ForgetDemand(model string)
	Preview(ctx context.Context, l *catalogue.Listing, f *fare.Fare, ask projection.Ask) (projection.Result, error)
	ImpactOf(ctx context.Context, modelID int64, model string, change projection.Change, at ...time.Time) (projection.Impact, error)
	// Shares over a period and now, who wins now, who holds a listing's
	// shapes.
	ListingHours(ctx context.Context, l *catalogue.Listing, since, until time.Time) (projection.Past, bool, error)
	Shares(ctx context.Context, listings []catalogue.Listing, since, until time.Time) (map[int64]projection.Share, error)
	SharesIn(ctx context.Context, listings []catalogue.Listing, since, until, from time.Time) (whole, tail map[int64]projection.Share, err error)
	ShareNow(ctx context.Context, l *catalogue.Listing, past projection.Past) (projection.NowShare, error)
	SharePolicyNow(ctx context.Context, l *catalogue.Listing) (projection.PolicyShare, error)
	WinsNow(ctx context.Context, snap *routing.Snapshot, listings []catalogue.Listing, since, until, now time.Time) (map[int64][]projection.Win, error)
	Holding(ctx context.Context, l *catalogue.Listing, asResumed bool) ([]projection.Hold, error)
	// The kept rollup and fare history reads of the traffic pages.
	FareHistory(ctx context.Context, ids []int64) (map[int64][]earnings.FareSpan, error)
	Hourly(ctx context.Context, ids []int64, since, until time.Time) (map[int64][]catalogue.HourlyPoint, error)
	ModelHours(ctx context.Context, modelIDs []int64, since, until time.Time) (map[int64]map[time.Time]int64, error)
	ModelTotals(ctx context.Context, modelIDs []int64, since, until time.Time) (map[int64]int64, error)
	ListingTotals(ctx context.Context, ids []int64, since, until time.Time) (map[int64]int64, error)
	// Health samples for the past projection (the background work), and
	// the work counters /metrics shows.
	SampleHealth(ctx context.Context) (bool, error)
	HoursProjected() int64
	PointsRead() int64
	// Wait returns once the projections being worked out in the
	// background (a view's refresh) are done: shutdown waits for them
	// before the store closes.
	Wait()
}

var _ Projections = (*projection.Projector)(nil)
