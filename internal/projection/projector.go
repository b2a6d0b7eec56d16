// Package projection is the share the fare preview projects for each
// listing, hour by hour, from what was in force (the published fares, the
// health and learned rates, each shape's holder, the model's workload), and
// from what is in force now: the figure every page sets beside the share
// routing served. One Projector is built per process (cmd/airside/wire);
// the traffic, preview, review and operations pages and the metrics API ask
// it, so a number means the same on each of them.
//
// It keeps what can no longer change (hours older than frozenAfter), the
// rollup reads the pages make (until a metric batch touches them), the fare
// histories (per catalogue revision) and each model's workload demand (a
// minute): a page read again after one typing error projects nothing anew.
package projection

import (
	"context"
	"fmt"
	"log/slog"
	"sync/atomic"
	"time"

	"github.com/airside/airside/internal/catalogue"
	"github.com/airside/airside/internal/earnings"
	"github.com/airside/airside/internal/preview"
	"github.com/airside/airside/internal/routing"
)

// Reads is what a Projector reads: the metric rollups, the fare histories,
// the reported demand, and two counters saying when the metrics moved.
type Reads interface {
	// The listings of a model and their capability verdicts.
	preview.MarketSource
	DemandShapes(ctx context.Context, model string, since time.Time, largeFrom int64) (map[string]catalogue.WorkloadDemand, error)
	// DemandAsked is what the model's requests asked for besides the
	// model (election.md sec. 7), summed from since on.
	DemandAsked(ctx context.Context, model string, since, until time.Time) (catalogue.AskedSums, error)
	HourlyTraffic(ctx context.Context, listingIDs []int64, since, until time.Time) (map[int64][]catalogue.HourlyPoint, error)
	ModelTraffic(ctx context.Context, modelIDs []int64, since, until time.Time) (map[int64]map[time.Time]int64, error)
	ModelTotals(ctx context.Context, modelIDs []int64, since, until time.Time) (map[int64]int64, error)
	ListingTotals(ctx context.Context, listingIDs []int64, since, until time.Time) (map[int64]int64, error)
	FareHistory(ctx context.Context, listingIDs []int64) (map[int64][]earnings.FareSpan, error)
	DemandByHour(ctx context.Context, models []string, since, until time.Time, largeFrom int64) (map[string]map[time.Time]map[string]catalogue.WorkloadDemand, error)
	RequestsByMinute(ctx context.Context, listingIDs []int64, since, until time.Time) (map[int64]map[time.Time]int64, error)
	// HealthSamples are the live health the catalogue served, sampled
	// (RecordHealthSample): what routing elected on, part by part.
	HealthSamples(ctx context.Context, listingIDs []int64, since, until time.Time) (map[int64][]catalogue.HealthSample, error)
	// ShapeHolders are the holders gateways reported for the models'
	// shapes, minute by minute (RecordShapeHolders), by model, oldest first.
	ShapeHolders(ctx context.Context, models []string, since, until time.Time) (map[string][]catalogue.ShapeHolder, error)
	// ProjectHours are each API project's hours on the models' listings as
	// gateways reported their minutes (RecordProjectMinutes), every source
	// summed, by model, oldest first: what routing learned each project's
	// rates from.
	ProjectHours(ctx context.Context, models []string, since, until time.Time) (map[string][]catalogue.ProjectHour, error)
	// MetricsWritten moves with every metric batch this process records;
	// MetricsTouchedSince says from which minute on the batches since a
	// count changed anything (ok false: it no longer knows).
	MetricsWritten() uint64
	MetricsTouchedSince(version uint64) (time.Time, bool)
}

// Catalogue is the routing catalogue as it stands now (routing.Keeper).
type Catalogue interface {
	Current(ctx context.Context) (*routing.Snapshot, error)
}

// Projector projects listings' shares and keeps what it read and worked
// out. Its zero value is not usable: set Reads, Routing and Now.
type Projector struct {
	Reads   Reads
	Routing Catalogue
	// Now is the portal's clock (tests move it).
	Now func() time.Time
	// Recorder keeps the health samples SampleHealth takes (nil: none are
	// taken, and the projection rebuilds health from the hourly rollups).
	Recorder HealthRecorder
	// StaleFor, when set, lets a view take a model's last projection while
	// it is younger than StaleFor and only metric batches have moved since
	// (not the catalogue, not the hour), and works the next one out in the
	// background: a page read after every batch of a live fleet answers
	// from the projection of the batch before instead of waiting on the
	// re-projection of the hour under way. Zero: every view after a batch
	// projects anew (tests that post a batch and read the page at once).
	StaleFor time.Duration
	// Log takes what goes wrong in the background (nil: slog's default).
	Log *slog.Logger

	// demands are the models' measured workload mixes, reused a minute.
	demands demandCache
	// projections keep the past hours' projections that can no longer
	// change (projectModels).
	projections projectionCache
	// histories keep the fare histories the projection reads, per
	// routing revision.
	histories histories
	// metricCache keeps the rollup reads until new metrics.
	metricCache metricCache
	// hoursProjected counts the hours projectHours has projected, and
	// pointsRead the points (an hour of a listing, or a total) the rollup
	// reads behind metricCache have read: tests read them to tell kept work
	// from work done again.
	hoursProjected atomic.Int64
	pointsRead     atomic.Int64
	// sampled is the start (Unix) of the last health sample interval
	// recorded here.
	sampled atomic.Int64
	// wins keeps the last WinsNow answer.
	wins winsKept
	// refreshes are the projections worked out in the background (StaleFor).
	refreshes refreshes
}

// New is a Projector over reads and the routing catalogue, on the clock now.
func New(reads Reads, cat Catalogue, now func() time.Time) *Projector {
	return &Projector{Reads: reads, Routing: cat, Now: now}
}

// HoursProjected is how many hours this Projector has projected.
func (pj *Projector) HoursProjected() int64 { return pj.hoursProjected.Load() }

// PointsRead is how many rollup points this Projector has read from its
// Reads (an hour of a listing, or a total).
func (pj *Projector) PointsRead() int64 { return pj.pointsRead.Load() }

// HealthRecorder keeps the health samples the projection replays (the
// store's RecordHealthSample).
type HealthRecorder interface {
	RecordHealthSample(ctx context.Context, at time.Time, health map[int64]catalogue.Health) error
}

// sampleLate bounds how late after its interval starts a sample is taken:
// a process that starts (or stalls) later leaves the interval to another
// process, or to the hourly rollups, rather than file health from later on
// as the interval's.
const sampleLate = time.Minute

// SampleHealth records the live health the routing catalogue serves now as
// the sample of the interval under way (catalogue.HealthSampleEvery), once
// per interval: what gateways elect on, which the projection then replays.
// It reports whether it recorded one.
func (pj *Projector) SampleHealth(ctx context.Context) (bool, error) {
	now := pj.Now().UTC()
	at := now.Truncate(catalogue.HealthSampleEvery)
	if pj.Recorder == nil || pj.sampled.Load() == at.Unix() || now.Sub(at) >= sampleLate {
		return false, nil
	}
	snap, err := pj.Routing.Current(ctx)
	if err != nil {
		return false, err
	}
	if err := pj.Recorder.RecordHealthSample(ctx, at, snap.AllHealth()); err != nil {
		return false, fmt.Errorf("sample health at %s: %w", at.Format(time.RFC3339), err)
	}
	pj.sampled.Store(at.Unix())
	return true, nil
}
