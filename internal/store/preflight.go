package store

import (
	"context"
	"fmt"
	"time"

	"gorm.io/gorm"
	"gorm.io/gorm/clause"

	"github.com/airside/airside/internal/apperr"
	"github.com/airside/airside/internal/preflight"
	"github.com/airside/airside/internal/workflow"
)

type preflightRunRow struct {
	ID          int64 `gorm:"primaryKey"`
	ListingID   int64
	EndpointID  int64
	Reason      string
	State       string
	RequestedBy *int64
	DueAt       time.Time
	ClaimedBy   string
	ClaimedAt   *time.Time
	FinishedAt  *time.Time
	CreatedAt   time.Time
}

func (preflightRunRow) TableName() string { return "preflight_runs" }

type probeResultRow struct {
	RunID           int64  `gorm:"primaryKey"`
	Probe           string `gorm:"primaryKey"`
	ListingID       int64
	EndpointID      int64
	State           string
	Status          int64
	LatencyMs       int64
	Excerpt         string
	Error           string
	TTFTMs          int64 `gorm:"column:ttft_ms"`
	TokensPerSecond float64
	CachedTokens    int64
	At              time.Time
}

func (probeResultRow) TableName() string { return "probe_results" }

func (r *probeResultRow) domain() preflight.Result {
	return preflight.Result{Probe: r.Probe, State: preflight.State(r.State), Status: int(r.Status),
		Latency: time.Duration(r.LatencyMs) * time.Millisecond, Excerpt: r.Excerpt, Error: r.Error,
		TTFT: time.Duration(r.TTFTMs) * time.Millisecond, TokensPerSecond: r.TokensPerSecond, CachedTokens: r.CachedTokens, At: r.At}
}

// queueRun queues a preflight of an endpoint, due at due; a listing with a
// run already queued or running keeps that one (the partial unique index),
// and 0 is returned.
func queueRun(tx *gorm.DB, now time.Time, listingID, endpointID int64, reason string, by *int64, due time.Time) (int64, error) {
	var open preflightRunRow
	if err := tx.Where("listing_id = ? AND state IN ?", listingID, []string{string(preflight.RunQueued), string(preflight.RunRunning)}).
		Limit(1).Find(&open).Error; err != nil {
		return 0, err
	}
	if open.ID != 0 {
		return 0, nil
	}
	row := preflightRunRow{ListingID: listingID, EndpointID: endpointID, Reason: reason, State: string(preflight.RunQueued),
		RequestedBy: by, DueAt: due, CreatedAt: now}
	if err := tx.Create(&row).Error; err != nil {
		return 0, fmt.Errorf("queue preflight of listing %d: %w", listingID, err)
	}
	return row.ID, nil
}

// RequestPreflight queues a preflight of the listing's latest endpoint on a
// person's demand, at most one a minute per listing, and one at a time.
func (s *Store) RequestPreflight(ctx context.Context, actorID int64, listingID int64, minGap time.Duration) (int64, error) {
	var id int64
	err := s.tx(ctx, func(tx *gorm.DB, now time.Time) error {
		var l listingRow
		if err := tx.First(&l, listingID).Error; err != nil {
			return notFound(err, "Listing")
		}
		var ep endpointRow
		if err := tx.Where("listing_id = ?", listingID).Order("id DESC").Limit(1).Find(&ep).Error; err != nil {
			return err
		}
		if ep.ID == 0 {
			return apperr.Errorf(apperr.ECONFLICT, "Register an endpoint before running preflight.")
		}
		var last preflightRunRow
		if err := tx.Where("listing_id = ?", listingID).Order("id DESC").Limit(1).Find(&last).Error; err != nil {
			return err
		}
		if last.ID != 0 && last.State != string(preflight.RunDone) {
			return apperr.Errorf(apperr.ECONFLICT, "Preflight is already %s for this listing.", last.State)
		}
		if last.ID != 0 && now.Sub(last.CreatedAt) < minGap {
			wait := (minGap - now.Sub(last.CreatedAt)).Round(time.Second)
			return apperr.Errorf(apperr.ETHROTTLED, "Preflight ran moments ago; try again in %s.", wait)
		}
		var err error
		if id, err = queueRun(tx, now, l.ID, ep.ID, "on demand", &actorID, now); err != nil {
			return err
		}
		return appendAudit(tx, now, auditEvent{ActorID: &actorID, CarrierID: &l.CarrierID, Action: "preflight.request",
			SubjectType: "listing", SubjectID: l.ID, After: map[string]any{"runId": id, "endpointId": ep.ID}})
	})
	if err != nil {
		return 0, fmt.Errorf("request preflight of listing %d: %w", listingID, err)
	}
	return id, nil
}

// QueueDailyPreflights queues a run for every listing in service with a
// published endpoint whose last run started more than every ago, each due
// at a jittered time within jitter (so a fleet of listings does not probe
// at the same second). It returns how many it queued; several processes
// may call it at once: the one-open-run index keeps one run per listing.
func (s *Store) QueueDailyPreflights(ctx context.Context, every time.Duration, jitter func(listingID int64) time.Duration) (int, error) {
	queued := 0
	err := s.tx(ctx, func(tx *gorm.DB, now time.Time) error {
		var due []struct {
			ID         int64
			EndpointID int64
		}
		err := tx.Raw(`SELECT l.id, l.endpoint_id FROM listings l
			WHERE l.status = 'in_service' AND l.endpoint_id IS NOT NULL
			AND NOT EXISTS (SELECT 1 FROM preflight_runs r WHERE r.listing_id = l.id AND (r.state <> 'done' OR r.created_at > ?))`,
			now.Add(-every)).Scan(&due).Error
		if err != nil {
			return err
		}
		for _, d := range due {
			row := preflightRunRow{ListingID: d.ID, EndpointID: d.EndpointID, Reason: "daily", State: string(preflight.RunQueued),
				DueAt: now.Add(jitter(d.ID)), CreatedAt: now}
			res := tx.Clauses(clause.OnConflict{DoNothing: true}).Create(&row)
			if res.Error != nil {
				return res.Error
			}
			queued += int(res.RowsAffected)
		}
		return nil
	})
	if err != nil {
		return 0, fmt.Errorf("queue daily preflights: %w", err)
	}
	return queued, nil
}

// ClaimPreflight claims the oldest due run for worker, unless the run's
// carrier already has perCarrier runs in flight. Exactly one process gets a
// run: on PostgreSQL it is locked with SKIP LOCKED, and on both databases
// the state changes only where it is still queued. A run left running by a
// process that died (claimed more than stale ago) is claimed again.
func (s *Store) ClaimPreflight(ctx context.Context, worker string, perCarrier int, stale time.Duration) (*preflight.Job, error) {
	var job *preflight.Job
	err := s.tx(ctx, func(tx *gorm.DB, now time.Time) error {
		q := tx.Table("preflight_runs").Select("preflight_runs.*").
			Where("(state = ? AND due_at <= ?) OR (state = ? AND claimed_at < ?)",
				string(preflight.RunQueued), now, string(preflight.RunRunning), now.Add(-stale)).
			Where(`(SELECT COUNT(*) FROM preflight_runs busy JOIN listings bl ON bl.id = busy.listing_id
				WHERE busy.state = 'running' AND busy.claimed_at >= ? AND bl.carrier_id =
				(SELECT carrier_id FROM listings WHERE listings.id = preflight_runs.listing_id)) < ?`, now.Add(-stale), perCarrier).
			Order("due_at, id").Limit(1)
		if s.dialect == Postgres {
			q = q.Clauses(clause.Locking{Strength: "UPDATE", Table: clause.Table{Name: "preflight_runs"}, Options: "SKIP LOCKED"})
		}
		var run preflightRunRow
		if err := q.Find(&run).Error; err != nil {
			return err
		}
		if run.ID == 0 {
			return nil
		}
		res := tx.Model(&preflightRunRow{}).Where("id = ? AND state = ? AND claimed_by = ?", run.ID, run.State, run.ClaimedBy).
			Updates(map[string]any{"state": string(preflight.RunRunning), "claimed_by": worker, "claimed_at": now})
		if res.Error != nil {
			return res.Error
		}
		if res.RowsAffected != 1 {
			return nil // another process claimed it first
		}
		var ep endpointRow
		if err := tx.First(&ep, run.EndpointID).Error; err != nil {
			return err
		}
		var l listingRow
		if err := tx.First(&l, run.ListingID).Error; err != nil {
			return err
		}
		job = &preflight.Job{RunID: run.ID, ListingID: run.ListingID, CarrierID: l.CarrierID, EndpointID: ep.ID,
			BaseURL: ep.BaseURL, Model: ep.UpstreamModel, KeySealed: ep.KeySealed}
		return nil
	})
	if err != nil {
		return nil, fmt.Errorf("claim preflight: %w", err)
	}
	return job, nil
}

// RecordProbe stores a probe's state or verdict as it happens, so the page
// shows a run's progress.
func (s *Store) RecordProbe(ctx context.Context, job *preflight.Job, r preflight.Result) error {
	row := probeResultRow{RunID: job.RunID, Probe: r.Probe, ListingID: job.ListingID, EndpointID: job.EndpointID, State: string(r.State),
		Status: int64(r.Status), LatencyMs: r.Latency.Milliseconds(), Excerpt: r.Excerpt, Error: r.Error, TTFTMs: r.TTFT.Milliseconds(),
		TokensPerSecond: r.TokensPerSecond, CachedTokens: r.CachedTokens, At: r.At.UTC()}
	err := s.db.WithContext(ctx).Clauses(clause.OnConflict{
		Columns:   []clause.Column{{Name: "run_id"}, {Name: "probe"}},
		DoUpdates: clause.AssignmentColumns([]string{"state", "status", "latency_ms", "excerpt", "error", "ttft_ms", "tokens_per_second", "cached_tokens", "at"}),
	}).Create(&row).Error
	if err != nil {
		return fmt.Errorf("record probe %s of run %d: %w", r.Probe, job.RunID, err)
	}
	return nil
}

// FinishPreflight closes a run. When the run probed the listing's published
// endpoint and a capability's verdict changed, the listing gets a new
// catalogue revision (routing follows the verdicts). The carrier is told
// the outcome, and warned when its fare files a cached-input price that the
// endpoint showed no cache hit for.
func (s *Store) FinishPreflight(ctx context.Context, job *preflight.Job, freshness time.Duration) error {
	return s.tx(ctx, func(tx *gorm.DB, now time.Time) error {
		res := tx.Model(&preflightRunRow{}).Where("id = ? AND state = ?", job.RunID, string(preflight.RunRunning)).
			Updates(map[string]any{"state": string(preflight.RunDone), "finished_at": now})
		if res.Error != nil {
			return res.Error
		}
		var l listingRow
		if err := tx.First(&l, job.ListingID).Error; err != nil {
			return err
		}
		var results []probeResultRow
		if err := tx.Where("run_id = ?", job.RunID).Find(&results).Error; err != nil {
			return err
		}
		passed, failed := 0, 0
		cacheFailed := false
		var failedCaps []probeResultRow
		for _, r := range results {
			switch preflight.State(r.State) {
			case preflight.Passed:
				passed++
			case preflight.Failed:
				failed++
				cacheFailed = cacheFailed || r.Probe == preflight.ProbeCache
				failedCaps = append(failedCaps, r)
			}
		}
		// A live override that says "verified" while this run's probe of the
		// flag failed is flagged to the carrier and to staff: it keeps
		// counting until it expires or a reviewer changes it, but no one
		// should be left believing it.
		for _, r := range failedCaps {
			probe, ok := preflight.Lookup(r.Probe)
			if !ok || probe.Capability == "" {
				continue
			}
			var o capabilityCheckRow
			if err := tx.Where("listing_id = ? AND capability = ? AND state = ? AND updated_at > ?", l.ID, probe.Capability,
				workflow.CapabilityVerified, now.Add(-s.overrideFor())).Limit(1).Find(&o).Error; err != nil {
				return err
			}
			if o.ListingID == 0 {
				continue
			}
			msg := workflow.NoticeOverrideContradicted(l.ID, probe.Capability, job.RunID, r.Error)
			if err := notifyCarrier(tx, now, l.CarrierID, nil, msg); err != nil {
				return err
			}
			if err := notifyStaff(tx, now, 0, msg); err != nil {
				return err
			}
		}
		if l.EndpointID != nil && *l.EndpointID == job.EndpointID {
			// The previous verdicts were those of the run before this one.
			before, err := verdictsAt(tx, []int64{l.ID}, now, freshness, s.overrideFor(), job.RunID)
			if err != nil {
				return err
			}
			after, err := verdictsAt(tx, []int64{l.ID}, now, freshness, s.overrideFor(), 0)
			if err != nil {
				return err
			}
			if !sameVerdicts(before[l.ID], after[l.ID]) {
				if _, err := bumpRevision(tx, now, l.ID, fmt.Sprintf("preflight run %d of listing %d", job.RunID, l.ID)); err != nil {
					return err
				}
			}
		}
		if err := appendAudit(tx, now, auditEvent{CarrierID: &l.CarrierID, Action: "preflight.finish", SubjectType: "listing",
			SubjectID: l.ID, After: map[string]any{"runId": job.RunID, "endpointId": job.EndpointID, "passed": passed, "failed": failed}}); err != nil {
			return err
		}
		// An endpoint registered while this run was open could not queue a
		// run of its own (one open run a listing): queue it now, so every
		// registered endpoint is probed before a reviewer decides on it.
		var latest endpointRow
		if err := tx.Where("listing_id = ?", l.ID).Order("id DESC").Limit(1).Find(&latest).Error; err != nil {
			return err
		}
		if latest.ID != 0 && latest.ID != job.EndpointID {
			var runs int64
			if err := tx.Model(&preflightRunRow{}).Where("endpoint_id = ?", latest.ID).Count(&runs).Error; err != nil {
				return err
			}
			if runs == 0 {
				if _, err := queueRun(tx, now, l.ID, latest.ID, "registration", nil, now); err != nil {
					return err
				}
			}
		}
		cached := false
		if l.PublishedFareID != nil {
			f, err := publishedFare(tx, l.PublishedFareID)
			if err != nil {
				return err
			}
			cached = f != nil && f.CachedInput != nil
		}
		var model string
		if err := tx.Table("models").Select("name").Where("id = ?", l.ModelID).Scan(&model).Error; err != nil {
			return err
		}
		return notifyCarrier(tx, now, l.CarrierID, nil, workflow.NoticePreflight(model, l.ID, passed, failed, cached && cacheFailed))
	})
}

func sameVerdicts(a, b map[string]string) bool {
	if len(a) != len(b) {
		return false
	}
	for k, v := range a {
		if b[k] != v {
			return false
		}
	}
	return true
}

// verdictsAt reads what the capability verdicts of listings are made of
// (the finished probes against each one's published endpoint, the
// reviewers' overrides, within preflight.VerdictWindow) and applies the
// rule, preflight.Verdicts. exceptRun leaves one run out (the verdicts
// before it).
func verdictsAt(tx *gorm.DB, listingIDs []int64, now time.Time, freshness, overrideFor time.Duration, exceptRun int64) (map[int64]map[string]string, error) {
	if len(listingIDs) == 0 {
		return map[int64]map[string]string{}, nil
	}
	probesAfter, overridesAfter := preflight.VerdictWindow(now, freshness, overrideFor)
	var rows []probeResultRow
	err := tx.Table("probe_results").Select("probe_results.*").
		Joins("JOIN listings ON listings.id = probe_results.listing_id AND listings.endpoint_id = probe_results.endpoint_id").
		Where("probe_results.listing_id IN ? AND probe_results.at > ? AND probe_results.state IN ? AND probe_results.run_id <> ?",
			listingIDs, probesAfter, []string{string(preflight.Passed), string(preflight.Failed)}, exceptRun).
		Order("probe_results.at, probe_results.run_id").Find(&rows).Error
	if err != nil {
		return nil, fmt.Errorf("find probe verdicts: %w", err)
	}
	probes := make([]preflight.ProbeOutcome, len(rows))
	for i, r := range rows {
		probes[i] = preflight.ProbeOutcome{ListingID: r.ListingID, Probe: r.Probe, State: preflight.State(r.State), At: r.At}
	}
	var checks []capabilityCheckRow
	if err := tx.Where("listing_id IN ? AND updated_at > ?", listingIDs, overridesAfter).Find(&checks).Error; err != nil {
		return nil, fmt.Errorf("find capability overrides: %w", err)
	}
	overrides := make([]preflight.Override, len(checks))
	for i, o := range checks {
		overrides[i] = preflight.Override{ListingID: o.ListingID, Capability: o.Capability, Verdict: o.State, SetAt: o.UpdatedAt}
	}
	return preflight.Verdicts(probes, overrides, now, freshness, overrideFor), nil
}

// FindPreflightRuns returns the latest run of a listing's endpoint (nil when
// none yet) and, per probe, the latest verdict against it (the published or
// pending endpoint the page shows).
func (s *Store) FindPreflightRuns(ctx context.Context, listingID, endpointID int64) (*preflight.Run, map[string]preflight.Result, error) {
	var run *preflight.Run
	latest := map[string]preflight.Result{}
	err := s.readTx(ctx, func(tx *gorm.DB) error {
		// The endpoint's own latest run: a run of another endpoint of the
		// listing (an earlier one, still running when this one was
		// registered) is never shown beside this endpoint's address.
		var row preflightRunRow
		if err := tx.Where("listing_id = ? AND endpoint_id = ?", listingID, endpointID).Order("id DESC").Limit(1).Find(&row).Error; err != nil {
			return err
		}
		if row.ID != 0 {
			run = &preflight.Run{ID: row.ID, ListingID: row.ListingID, EndpointID: row.EndpointID, Reason: row.Reason,
				State: preflight.RunState(row.State), CreatedAt: row.CreatedAt, FinishedAt: row.FinishedAt, Results: map[string]preflight.Result{}}
			var results []probeResultRow
			if err := tx.Where("run_id = ?", row.ID).Find(&results).Error; err != nil {
				return err
			}
			for _, r := range results {
				run.Results[r.Probe] = r.domain()
			}
		}
		var verdicts []probeResultRow
		if err := tx.Where("endpoint_id = ? AND state IN ?", endpointID, []string{string(preflight.Passed), string(preflight.Failed)}).
			Order("at, run_id").Find(&verdicts).Error; err != nil {
			return err
		}
		for _, r := range verdicts {
			latest[r.Probe] = r.domain()
		}
		return nil
	})
	if err != nil {
		return nil, nil, fmt.Errorf("find preflight of listing %d: %w", listingID, err)
	}
	return run, latest, nil
}
