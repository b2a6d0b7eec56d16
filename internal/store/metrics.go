package store

import (
	"cmp"
	"context"
	"fmt"
	"maps"
	"slices"
	"strings"
	"sync"
	"time"
	"unicode"

	"gorm.io/gorm"
	"gorm.io/gorm/clause"

	"github.com/airside/airside/internal/catalogue"
	"github.com/airside/airside/internal/election"
)

// counterColumns are the columns of catalogue.Counters, in their order: a
// counter's contract name in snake case (ttftMsSum is ttft_ms_sum). Every
// read and write of metric_buckets and metric_hourly names its counters
// from here, so a new counter needs its migration and nothing more here.
var counterColumns = func() []string {
	out := make([]string, len(catalogue.Counters))
	for i, k := range catalogue.Counters {
		out[i] = snakeCase(k.Name)
	}
	return out
}()

// snakeCase is a lower camel case name in snake case.
func snakeCase(name string) string {
	var b strings.Builder
	for _, r := range name {
		if unicode.IsUpper(r) {
			b.WriteByte('_')
			r = unicode.ToLower(r)
		}
		b.WriteRune(r)
	}
	return b.String()
}

// appendCounters appends c's counters in counterColumns' order, as
// statement arguments.
func appendCounters(args []any, c *catalogue.Counts) []any {
	for _, k := range catalogue.Counters {
		args = append(args, *k.Of(c))
	}
	return args
}

// appendCounterTargets appends pointers to c's counters in counterColumns'
// order, for Scan.
func appendCounterTargets(dst []any, c *catalogue.Counts) []any {
	for _, k := range catalogue.Counters {
		dst = append(dst, k.Of(c))
	}
	return dst
}

// bucketColumns are metric_buckets' columns of a catalogue.Bucket.
var bucketColumns = "listing_id, minute, source, " + strings.Join(counterColumns, ", ")

// scanBuckets reads the buckets q selects from metric_buckets, and when
// each was recorded.
func scanBuckets(q *gorm.DB) ([]catalogue.Bucket, []*time.Time, error) {
	rows, err := q.Table("metric_buckets").Select(bucketColumns + ", recorded_at").Rows()
	if err != nil {
		return nil, nil, err
	}
	defer rows.Close()
	var out []catalogue.Bucket
	var recorded []*time.Time
	for rows.Next() {
		var b catalogue.Bucket
		var at *time.Time
		if err := rows.Scan(append(appendCounterTargets([]any{&b.ListingID, &b.Minute, &b.Source}, &b.Counts), &at)...); err != nil {
			return nil, nil, err
		}
		b.Minute = b.Minute.UTC()
		out = append(out, b)
		recorded = append(recorded, at)
	}
	return out, recorded, rows.Err()
}

// RecordBuckets stores a batch of buckets, all or nothing. The first write
// of a (listing, minute, source) wins: the same bucket again is a harmless retry, a
// different one is refused with a *catalogue.ReplayError naming it.
func (s *Store) RecordBuckets(ctx context.Context, buckets []catalogue.Bucket) error {
	return s.RecordBatch(ctx, buckets, nil)
}

// RecordBatch stores a gateway's batch, its buckets and its demand rows, in
// one transaction: all or nothing, with RecordBuckets' and RecordDemand's
// first-write rule (a *catalogue.ReplayError names the rows that replay a
// recorded key with other figures, of the first list that has any).
func (s *Store) RecordBatch(ctx context.Context, buckets []catalogue.Bucket, demand []catalogue.Demand) error {
	var from time.Time // the earliest minute the batch touches
	for _, b := range buckets {
		if from.IsZero() || b.Minute.Before(from) {
			from = b.Minute
		}
	}
	for _, d := range demand {
		if from.IsZero() || d.Minute.Before(from) {
			from = d.Minute
		}
	}
	// Counted after the commit (or its failure): a reader never keeps
	// figures older than a commit it saw counted.
	defer s.countWrite(from.UTC())
	var replay catalogue.ReplayError
	err := s.tx(ctx, func(tx *gorm.DB, now time.Time) error {
		replay = catalogue.ReplayError{}
		if len(buckets) > 0 {
			refused, err := recordBuckets(tx, now, buckets)
			if err != nil {
				return err
			}
			replay.Indexes = refused
		}
		if len(demand) > 0 {
			refused, err := recordDemand(tx, now, demand)
			if err != nil {
				return err
			}
			replay.DemandIndexes = refused
		}
		return nil
	})
	if err != nil {
		return err
	}
	if len(replay.Indexes)+len(replay.DemandIndexes) > 0 {
		return &replay // the batch's other rows are committed
	}
	return nil
}

// recordBuckets is RecordBuckets within tx: it stores the new buckets and
// their rollups, and returns the positions of those that replay a recorded
// key with other figures (refused; the first write stands).
func recordBuckets(tx *gorm.DB, now time.Time, buckets []catalogue.Bucket) ([]int, error) {
	inserted, refused, err := insertBuckets(tx, now, buckets)
	if err != nil {
		return nil, err
	}
	if err := addToHourly(tx, inserted, now); err != nil {
		return nil, fmt.Errorf("record metric buckets: %w", err)
	}
	return refused, nil
}

// bucketKey is a bucket's primary key.
type bucketKey struct {
	listing int64
	minute  int64 // unix seconds
	source  string
}

func keyOf(r catalogue.Bucket) bucketKey { return bucketKey{r.ListingID, r.Minute.Unix(), r.Source} }

// insertBuckets inserts a batch's buckets, recorded at now, and returns
// those that were new, for the hourly rollups, and the positions of those
// that replay a recorded key with other figures. Inserting comes first: a
// new minute (nearly every one) then costs its INSERT alone. A bucket
// whose key was recorded already is looked up: the same figures are a
// harmless retry, other figures refuse that bucket alone (the first write
// stands; the batch's other buckets are stored).
func insertBuckets(tx *gorm.DB, now time.Time, buckets []catalogue.Bucket) ([]catalogue.Bucket, []int, error) {
	rows := make([]catalogue.Bucket, len(buckets))
	position := make(map[bucketKey]int, len(buckets))
	for i, b := range buckets {
		rows[i] = b
		rows[i].Minute = b.Minute.UTC()
		position[keyOf(rows[i])] = i
	}
	// Inserted in key order, like the rollups: concurrent batches lock
	// rows in one order.
	sorted := slices.Clone(rows)
	slices.SortFunc(sorted, func(a, b catalogue.Bucket) int {
		if a.ListingID != b.ListingID {
			return cmp.Compare(a.ListingID, b.ListingID)
		}
		if c := a.Minute.Compare(b.Minute); c != 0 {
			return c
		}
		return cmp.Compare(a.Source, b.Source)
	})
	per := rowsPerStatement(tx)
	inserted := make(map[bucketKey]bool, len(rows))
	for start := 0; start < len(sorted); start += per {
		if err := insertNewBuckets(tx, sorted[start:min(start+per, len(sorted))], now, inserted); err != nil {
			return nil, nil, fmt.Errorf("record metric buckets: %w", err)
		}
	}
	fresh := make([]catalogue.Bucket, 0, len(rows))
	var recorded []catalogue.Bucket
	for _, r := range sorted {
		if inserted[keyOf(r)] {
			fresh = append(fresh, r)
		} else {
			recorded = append(recorded, r)
		}
	}
	if len(recorded) == 0 {
		return fresh, nil, nil
	}
	// Keys recorded before (a retry, or another gateway's conflicting
	// figures): compared with what was recorded.
	// (By the key's columns: a fleet's minute holds every gateway's rows.)
	ids := map[int64]bool{}
	var sources []string
	for _, r := range recorded {
		ids[r.ListingID] = true
		sources = appendNew(sources, r.Source)
	}
	lo, hi := recorded[0].Minute, recorded[0].Minute
	for _, r := range recorded {
		lo, hi = minTime(lo, r.Minute), maxTime(hi, r.Minute)
	}
	found, _, err := scanBuckets(tx.Where("listing_id IN ? AND minute >= ? AND minute <= ? AND source IN ?", slices.Collect(maps.Keys(ids)), lo, hi, sources))
	if err != nil {
		return nil, nil, fmt.Errorf("record metric buckets: %w", err)
	}
	existing := make(map[bucketKey]catalogue.Bucket, len(found))
	for _, r := range found {
		existing[keyOf(r)] = r
	}
	var replays []int
	for _, r := range recorded {
		if old, ok := existing[keyOf(r)]; !ok || !sameBucket(old, r) {
			replays = append(replays, position[keyOf(r)])
		}
	}
	slices.Sort(replays)
	return fresh, replays, nil
}

func maxTime(a, b time.Time) time.Time {
	if b.After(a) {
		return b
	}
	return a
}

// rowsPerStatement is how many rows one multi-row INSERT carries. The
// SQLite driver matches each parameter to its argument by a linear search,
// so a statement's binding costs the square of its parameters: 16 rows of
// 22 columns bind in a sixtieth of the time of 400 (a quarter of a
// gateway's batch went there). PostgreSQL's cost is the round trip.
func rowsPerStatement(tx *gorm.DB) int {
	if tx.Dialector.Name() == "sqlite" {
		return 16
	}
	return 400
}

func sameBucket(a, b catalogue.Bucket) bool {
	a.Minute, b.Minute = time.Time{}, time.Time{} // compared by key already; drivers differ in location
	return a == b
}

// MetricsWritten counts the metric and demand batches this process has
// recorded (committed or refused): a figure derived from metrics and kept
// beside this count is current while the count has not moved, for this
// process's writes.
func (s *Store) MetricsWritten() uint64 { return s.metricsWritten.Load() }

// MetricsTouchedSince is the earliest minute the metric and demand writes
// counted after MetricsWritten was version touched: a figure kept at
// version is current for every hour before it. ok is false when that is
// not known (the writes are older than the ones remembered, or one did not
// say); the zero time with ok means no write since.
func (s *Store) MetricsTouchedSince(version uint64) (time.Time, bool) {
	w := &s.writes
	w.mu.Lock()
	defer w.mu.Unlock()
	if s.metricsWritten.Load() == version {
		return time.Time{}, true
	}
	if len(w.marks) == 0 || w.marks[0].n > version+1 {
		return time.Time{}, false
	}
	var from time.Time
	for _, m := range w.marks {
		if m.n <= version {
			continue
		}
		if m.from.IsZero() {
			return time.Time{}, false
		}
		if from.IsZero() || m.from.Before(from) {
			from = m.from
		}
	}
	return from, true
}

// writeLog remembers the earliest minute each of the last maxWriteMarks
// metric writes touched, by its number (MetricsWritten after it).
type writeLog struct {
	mu    sync.Mutex
	marks []writeMark // oldest first
}

type writeMark struct {
	n    uint64
	from time.Time // zero: not known
}

const maxWriteMarks = 4096

// countWrite counts a metric write (MetricsWritten), remembers the
// earliest minute it touched (zero: not known) and tells the other serve
// processes (announce).
func (s *Store) countWrite(from time.Time) {
	s.markWrite(from)
	s.announce(from)
}

// markWrite counts a metric write, this process's or another's.
func (s *Store) markWrite(from time.Time) {
	w := &s.writes
	w.mu.Lock()
	defer w.mu.Unlock()
	n := s.metricsWritten.Add(1)
	if len(w.marks) >= maxWriteMarks {
		w.marks = append(w.marks[:0], w.marks[len(w.marks)-maxWriteMarks/2:]...)
	}
	w.marks = append(w.marks, writeMark{n: n, from: from})
}

// ListingIDsBySlug maps "carrier/model" to listing ids, for naming listings
// in metric batches.
func (s *Store) ListingIDsBySlug(ctx context.Context) (map[string]int64, error) {
	var rows []struct {
		ID          int64
		CarrierSlug string
		ModelSlug   string
	}
	err := s.read(ctx).Table("listings").Select("listings.id, carriers.slug AS carrier_slug, models.slug AS model_slug").
		Joins("JOIN carriers ON carriers.id = listings.carrier_id").Joins("JOIN models ON models.id = listings.model_id").Scan(&rows).Error
	if err != nil {
		return nil, fmt.Errorf("listing ids: %w", err)
	}
	out := make(map[string]int64, len(rows))
	for _, r := range rows {
		out[r.CarrierSlug+"/"+r.ModelSlug] = r.ID
	}
	return out, nil
}

// liveHealth computes the health of listings from their buckets at time now:
// the decayed hour (weights 10, 3, 1, as catalogue.MinuteWeight) and the gated
// day. Listings without buckets in the window are absent from the result.
func liveHealth(tx *gorm.DB, ids []int64, now time.Time) (map[int64]catalogue.Health, error) {
	out := map[int64]catalogue.Health{}
	if len(ids) == 0 {
		return out, nil
	}
	current := now.UTC().Truncate(time.Minute)
	recent := current.Add(-4 * time.Minute)
	hourAgo := current.Add(-(catalogue.WindowMinutes - 1) * time.Minute)
	weight := "(CASE WHEN minute >= @current THEN 10 WHEN minute >= @recent THEN 3 ELSE 1 END)"
	var window []struct {
		ListingID int64
		catalogue.WindowSums
	}
	err := tx.Raw(`SELECT listing_id,
			SUM(`+weight+` * (requests - client_errors)) AS requests,
			SUM(`+weight+` * (requests - errors - client_errors)) AS successes,
			SUM(`+weight+` * ttft_ms_sum) AS ttft_ms_sum,
			SUM(`+weight+` * output_tokens) AS output_tokens,
			SUM(`+weight+` * duration_ms) AS duration_ms
		FROM metric_buckets WHERE listing_id IN @ids AND minute >= @hourAgo GROUP BY listing_id`,
		map[string]any{"current": current, "recent": recent, "hourAgo": hourAgo, "ids": ids}).Scan(&window).Error
	if err != nil {
		return nil, fmt.Errorf("metrics window: %w", err)
	}
	var day []struct {
		ListingID int64
		catalogue.DaySums
	}
	// The day from hourly rollups, with the minutes of the two partial hours
	// at its ends: the same sums as every minute of the day, read from about
	// 25 rows a listing instead of 1,440.
	dayAgo := now.UTC().Add(-24 * time.Hour)
	firstHour := dayAgo.Truncate(time.Hour).Add(time.Hour)
	currentHour := now.UTC().Truncate(time.Hour)
	err = tx.Raw(`SELECT listing_id, SUM(successes) AS successes, SUM(input_tokens) AS input_tokens,
			SUM(cached_input_tokens) AS cached_input_tokens, SUM(output_tokens) AS output_tokens
		FROM (
			SELECT listing_id, requests - errors - client_errors AS successes, input_tokens, cached_input_tokens, output_tokens
			FROM metric_buckets WHERE listing_id IN @ids AND ((minute > @dayAgo AND minute < @firstHour) OR minute >= @currentHour)
			UNION ALL
			SELECT listing_id, requests - errors - client_errors, input_tokens, cached_input_tokens, output_tokens
			FROM metric_hourly WHERE listing_id IN @ids AND hour >= @firstHour AND hour < @currentHour
		) day GROUP BY listing_id`,
		map[string]any{"ids": ids, "dayAgo": dayAgo, "firstHour": firstHour, "currentHour": currentHour}).Scan(&day).Error
	if err != nil {
		return nil, fmt.Errorf("metrics day: %w", err)
	}
	days := map[int64]catalogue.DaySums{}
	for _, d := range day {
		days[d.ListingID] = d.DaySums
	}
	for _, w := range window {
		out[w.ListingID] = catalogue.HealthFrom(w.WindowSums, days[w.ListingID])
	}
	for id, d := range days {
		if _, ok := out[id]; !ok && catalogue.PassesGates(d) {
			out[id] = catalogue.HealthFrom(catalogue.WindowSums{}, d)
		}
	}
	return out, nil
}

// MetricSeries sums a listing's buckets into steps from since to now.
func (s *Store) MetricSeries(ctx context.Context, listingID int64, since time.Time, step time.Duration) ([]catalogue.SeriesPoint, error) {
	rows, _, err := scanBuckets(s.read(ctx).Where("listing_id = ? AND minute >= ?", listingID, since.UTC()).Order("minute"))
	if err != nil {
		return nil, fmt.Errorf("metric series: %w", err)
	}
	now := s.Now().UTC()
	n := int(now.Sub(since)/step) + 1
	points := make([]catalogue.SeriesPoint, n)
	for i := range points {
		points[i].At = since.Add(time.Duration(i) * step)
	}
	for _, r := range rows {
		i := int(r.Minute.Sub(since) / step)
		if i < 0 || i >= n {
			continue
		}
		p := &points[i]
		p.Requests += r.Requests - r.ClientErrors
		p.Errors += r.Errors
		p.SuccessCount += r.Requests - r.Errors - r.ClientErrors
		p.TTFTMsSum += r.TTFTMsSum
		p.OutputTokens += r.OutputTokens
		p.DurationMs += r.DurationMs
	}
	return points, nil
}

// DeleteBucketsBefore drops buckets older than a time (a day is all any
// metric reads).
func (s *Store) DeleteBucketsBefore(ctx context.Context, before time.Time) (int64, error) {
	res := s.db.WithContext(ctx).Exec("DELETE FROM metric_buckets WHERE minute < ?", before.UTC())
	return res.RowsAffected, res.Error
}

// insertNewBuckets inserts rows, recorded at now, marking in inserted the
// keys it inserted: a key recorded before (a retry, perhaps concurrent) is
// left as it is, and its minute must not be added to the rollups twice.
func insertNewBuckets(tx *gorm.DB, rows []catalogue.Bucket, now time.Time, inserted map[bucketKey]bool) error {
	if len(rows) == 0 {
		return nil
	}
	var q strings.Builder
	args := make([]any, 0, len(rows)*(len(counterColumns)+4))
	q.WriteString("INSERT INTO metric_buckets (" + bucketColumns + ", recorded_at) VALUES ")
	placeholders := "(?, ?, ?, " + strings.Repeat("?, ", len(counterColumns)) + "?)"
	for i := range rows {
		r := &rows[i]
		if i > 0 {
			q.WriteString(", ")
		}
		q.WriteString(placeholders)
		args = append(appendCounters(append(args, r.ListingID, r.Minute.UTC(), r.Source), &r.Counts), now.UTC())
	}
	// Only the keys come back, scanned by hand: gorm's reflection over
	// every column was a third of a batch's insert.
	q.WriteString(" ON CONFLICT (listing_id, minute, source) DO NOTHING RETURNING listing_id, minute, source")
	res, err := tx.Raw(q.String(), args...).Rows()
	if err != nil {
		return err
	}
	defer res.Close()
	for res.Next() {
		var k bucketKey
		var minute time.Time
		if err := res.Scan(&k.listing, &minute, &k.source); err != nil {
			return err
		}
		k.minute = minute.Unix()
		inserted[k] = true
	}
	return res.Err()
}

// hourlyRow is a row of metric_hourly.
type hourlyRow struct {
	ListingID int64
	Hour      time.Time
	catalogue.Counts
	// ChangedAt is when a recorded minute last added to the hour (NULL for
	// the demo's seeded history): the health mirror's cursor.
	ChangedAt *time.Time
}

// hourlyColumns are metric_hourly's columns of an hourlyRow.
var hourlyColumns = "listing_id, hour, " + strings.Join(counterColumns, ", ") + ", updated_at"

// scanHours reads the hours q selects from metric_hourly.
func scanHours(q *gorm.DB) ([]hourlyRow, error) {
	rows, err := q.Table("metric_hourly").Select(hourlyColumns).Rows()
	if err != nil {
		return nil, err
	}
	defer rows.Close()
	var out []hourlyRow
	for rows.Next() {
		var h hourlyRow
		if err := rows.Scan(append(appendCounterTargets([]any{&h.ListingID, &h.Hour}, &h.Counts), &h.ChangedAt)...); err != nil {
			return nil, err
		}
		h.Hour = h.Hour.UTC()
		out = append(out, h)
	}
	return out, rows.Err()
}

// writeHours inserts hours, rowsPerStatement at a time; conflict is the
// statement's ON CONFLICT clause for an hour already there.
func writeHours(tx *gorm.DB, hours []hourlyRow, conflict string) error {
	per := rowsPerStatement(tx)
	placeholders := "(?, ?, " + strings.Repeat("?, ", len(counterColumns)) + "?)"
	for start := 0; start < len(hours); start += per {
		part := hours[start:min(start+per, len(hours))]
		var q strings.Builder
		args := make([]any, 0, len(part)*(len(counterColumns)+3))
		q.WriteString("INSERT INTO metric_hourly (" + hourlyColumns + ") VALUES ")
		for i := range part {
			h := &part[i]
			if i > 0 {
				q.WriteString(", ")
			}
			q.WriteString(placeholders)
			var changed any // NULL when not known
			if h.ChangedAt != nil {
				changed = h.ChangedAt.UTC()
			}
			args = append(appendCounters(append(args, h.ListingID, h.Hour.UTC()), &h.Counts), changed)
		}
		q.WriteString(" " + conflict)
		if err := tx.Exec(q.String(), args...).Error; err != nil {
			return err
		}
	}
	return nil
}

// addToHourlyConflict adds an hour's new minutes to the hour already there.
var addToHourlyConflict = func() string {
	sets := []string{"updated_at = excluded.updated_at"}
	for _, col := range counterColumns {
		sets = append(sets, col+" = metric_hourly."+col+" + excluded."+col)
	}
	return "ON CONFLICT (listing_id, hour) DO UPDATE SET " + strings.Join(sets, ", ")
}()

// addToHourly adds newly recorded minutes to their hours' rollups, marking
// the hours changed at now.
func addToHourly(tx *gorm.DB, rows []catalogue.Bucket, now time.Time) error {
	type key struct {
		listing int64
		hour    int64
	}
	sums := map[key]*hourlyRow{}
	var order []key
	for _, r := range rows {
		h := r.Minute.UTC().Truncate(time.Hour)
		k := key{r.ListingID, h.Unix()}
		s, ok := sums[k]
		if !ok {
			s = &hourlyRow{ListingID: r.ListingID, Hour: h}
			sums[k] = s
			order = append(order, k)
		}
		s.Add(r.Counts)
	}
	if len(order) == 0 {
		return nil
	}
	// Rows are locked in one order (listing, hour) by every writer, so two
	// batches touching the same hours wait for each other, never deadlock.
	slices.SortFunc(order, func(a, b key) int {
		if a.listing != b.listing {
			return cmp.Compare(a.listing, b.listing)
		}
		return cmp.Compare(a.hour, b.hour)
	})
	changed := now.UTC()
	out := make([]hourlyRow, len(order))
	for i, k := range order {
		out[i] = *sums[k]
		out[i].ChangedAt = &changed
	}
	return writeHours(tx, out, addToHourlyConflict)
}

// DeleteHourlyBefore deletes hourly rollups older than a time.
func (s *Store) DeleteHourlyBefore(ctx context.Context, before time.Time) (int64, error) {
	res := s.db.WithContext(ctx).Exec("DELETE FROM metric_hourly WHERE hour < ?", before.UTC())
	return res.RowsAffected, res.Error
}

// backfillHourly rolls up the buckets recorded before the hourly rollups
// existed (at most the 25 hours the buckets are kept), once, when the
// migration that adds them runs.
func (s *Store) backfillHourly(ctx context.Context) error {
	return s.tx(ctx, func(tx *gorm.DB, now time.Time) error {
		rows, _, err := scanBuckets(tx)
		if err != nil {
			return fmt.Errorf("backfill hourly rollups: %w", err)
		}
		for start := 0; start < len(rows); start += 5000 {
			if err := addToHourly(tx, rows[start:min(start+5000, len(rows))], now); err != nil {
				return fmt.Errorf("backfill hourly rollups: %w", err)
			}
		}
		return nil
	})
}

// HourlySeries lists a listing's hourly rollups from since to until, oldest
// first: what traffic pages read beyond the last day.
func (s *Store) HourlySeries(ctx context.Context, listingID int64, since, until time.Time) ([]catalogue.HourlyPoint, error) {
	rows, err := scanHours(s.read(ctx).Where("listing_id = ? AND hour >= ? AND hour <= ?", listingID, since.UTC(), until.UTC()).Order("hour"))
	if err != nil {
		return nil, fmt.Errorf("hourly series: %w", err)
	}
	out := make([]catalogue.HourlyPoint, len(rows))
	for i, r := range rows {
		out[i] = hourlyPoint(r)
	}
	return out, nil
}

// HealthMetrics reads what the routing snapshot's health mirror covers at
// span: the minute buckets of the window and of the edge hour, and the hourly
// rollups from the edge hour on; with a non-zero since, only those recorded
// or changed at or after it. One read transaction, so the two agree.
func (s *Store) HealthMetrics(ctx context.Context, span catalogue.HealthSpan, since time.Time) (catalogue.MetricRows, error) {
	var out catalogue.MetricRows
	err := s.readTx(ctx, func(tx *gorm.DB) error {
		q := tx.Where("minute >= ? OR (minute >= ? AND minute < ?)", span.WindowFrom.UTC(), span.EdgeHour.UTC(), span.EdgeHour.Add(time.Hour).UTC())
		if !since.IsZero() {
			q = q.Where("recorded_at >= ?", since.UTC())
		}
		buckets, recorded, err := scanBuckets(q)
		if err != nil {
			return fmt.Errorf("health buckets: %w", err)
		}
		q = tx.Where("hour >= ?", span.EdgeHour.UTC())
		if !since.IsZero() {
			q = q.Where("updated_at >= ?", since.UTC())
		}
		hours, err := scanHours(q)
		if err != nil {
			return fmt.Errorf("health hours: %w", err)
		}
		latest := func(t *time.Time) {
			if t != nil && t.After(out.Latest) {
				out.Latest = t.UTC()
			}
		}
		out.Buckets = buckets
		for _, at := range recorded {
			latest(at)
		}
		out.Hours = make([]catalogue.ListingHour, len(hours))
		for i, h := range hours {
			out.Hours[i] = catalogue.ListingHour{ListingID: h.ListingID, HourlyPoint: hourlyPoint(h)}
			latest(h.ChangedAt)
		}
		return nil
	})
	return out, err
}

type demandRow struct {
	ModelSlug string    `gorm:"primaryKey"`
	Workload  string    `gorm:"primaryKey"`
	Minute    time.Time `gorm:"primaryKey"`
	Source    string    `gorm:"primaryKey"`
	// Streaming is -1 when the gateway did not say, else 0 or 1; Requires
	// the capabilities required, comma-joined in reporting order.
	Streaming    int8   `gorm:"primaryKey"`
	Requires     string `gorm:"primaryKey"`
	Requests     int64
	PromptTokens int64
	// LargeRequests and LargePromptTokens are NULL from a gateway that
	// reports only the totals.
	LargeRequests, LargePromptTokens *int64
	RecordedAt                       time.Time
}

func (demandRow) TableName() string { return "demand_minutes" }

// demandAskedRow is one key of what a demand row's requests asked for.
type demandAskedRow struct {
	ModelSlug string    `gorm:"primaryKey"`
	Minute    time.Time `gorm:"primaryKey"`
	Workload  string    `gorm:"primaryKey"`
	Source    string    `gorm:"primaryKey"`
	Streaming int8      `gorm:"primaryKey"`
	Requires  string    `gorm:"primaryKey"`
	Asked     string    `gorm:"primaryKey"`
	Requests  int64
}

func (demandAskedRow) TableName() string { return "demand_asked" }

// RecordDemand stores gateways' demand rows, all or nothing. The first
// write of a (model, workload, minute, source) wins: the same row again is a
// harmless retry, a different one a *catalogue.ReplayError naming it.
func (s *Store) RecordDemand(ctx context.Context, demand []catalogue.Demand) error {
	return s.RecordBatch(ctx, nil, demand)
}

// recordDemand is RecordDemand within tx: it stores the new rows and
// returns the positions of those that replay a recorded key with other
// figures (refused; the first write stands).
func recordDemand(tx *gorm.DB, now time.Time, demand []catalogue.Demand) ([]int, error) {
	minutes := make([]time.Time, len(demand))
	for i, d := range demand {
		minutes[i] = d.Minute.UTC()
	}
	lo, hi := slices.MinFunc(minutes, time.Time.Compare), slices.MaxFunc(minutes, time.Time.Compare)
	// The rows these could replay, by their key's columns (the primary
	// key's order): a minute alone holds every gateway's rows of every
	// model, which a fleet makes thousands.
	var models, workloads, sources []string
	for _, d := range demand {
		models, workloads, sources = appendNew(models, d.Model), appendNew(workloads, d.Workload), appendNew(sources, d.Source)
	}
	var found []demandRow
	if err := tx.Where("model_slug IN ? AND workload IN ? AND minute >= ? AND minute <= ? AND source IN ?", models, workloads, lo, hi, sources).
		Find(&found).Error; err != nil {
		return nil, fmt.Errorf("record demand: %w", err)
	}
	type key struct {
		model, workload string
		minute          int64
		source          string
		streaming       int8
		requires        string
	}
	existing := map[key]demandRow{}
	for _, r := range found {
		existing[key{r.ModelSlug, r.Workload, r.Minute.Unix(), r.Source, r.Streaming, r.Requires}] = r
	}
	var fresh []demandRow
	var asked []demandAskedRow
	var replays []int
	for i, d := range demand {
		streaming, requires := kindColumns(d.KindOf())
		old, ok := existing[key{d.Model, d.Workload, d.Minute.Unix(), d.Source, streaming, requires}]
		switch {
		case !ok:
			fresh = append(fresh, demandRow{ModelSlug: d.Model, Workload: d.Workload, Minute: d.Minute.UTC(), Source: d.Source,
				Streaming: streaming, Requires: requires, Requests: d.Requests,
				PromptTokens: d.PromptTokens, LargeRequests: d.LargeRequests, LargePromptTokens: d.LargePromptTokens, RecordedAt: now})
			for _, k := range slices.Sorted(maps.Keys(d.Asked)) {
				if n := d.Asked[k]; n > 0 {
					asked = append(asked, demandAskedRow{ModelSlug: d.Model, Minute: d.Minute.UTC(), Workload: d.Workload, Source: d.Source,
						Streaming: streaming, Requires: requires, Asked: k, Requests: n})
				}
			}
		case old.Requests != d.Requests || old.PromptTokens != d.PromptTokens ||
			!equalCount(old.LargeRequests, d.LargeRequests) || !equalCount(old.LargePromptTokens, d.LargePromptTokens):
			replays = append(replays, i)
		}
	}
	if len(fresh) == 0 {
		return replays, nil
	}
	if err := tx.Clauses(clause.OnConflict{DoNothing: true}).CreateInBatches(fresh, 500).Error; err != nil {
		return nil, fmt.Errorf("record demand: %w", err)
	}
	if len(asked) > 0 {
		if err := tx.Clauses(clause.OnConflict{DoNothing: true}).CreateInBatches(asked, 500).Error; err != nil {
			return nil, fmt.Errorf("record what demand asked for: %w", err)
		}
	}
	return replays, nil
}

// appendNew appends v to list unless list holds it.
func appendNew(list []string, v string) []string {
	if slices.Contains(list, v) {
		return list
	}
	return append(list, v)
}

// kindColumns are a request kind's key columns.
func kindColumns(k catalogue.RequestKind) (streaming int8, requires string) {
	if !k.Reported {
		return -1, ""
	}
	if k.Streaming {
		streaming = 1
	}
	return streaming, strings.Join(k.Requires.Names(), ",")
}

// kindOf reads a request kind from its key columns.
func kindOf(streaming int8, requires string) catalogue.RequestKind {
	if streaming < 0 {
		return catalogue.RequestKind{}
	}
	var names []string
	if requires != "" {
		names = strings.Split(requires, ",")
	}
	caps, _, _ := election.ParseCapabilities(names) // written by kindColumns
	return catalogue.RequestKind{Reported: true, Streaming: streaming == 1, Requires: caps}
}

// workloadKindRow is a workload's demand of one kind of request, as the
// demand reads group it (by model and hour too, for DemandByHour).
type workloadKindRow struct {
	ModelSlug                             string
	Hour                                  string
	Workload                              string
	Streaming                             int8
	Requires                              string
	Requests, LargeRequests, PromptTokens int64
	LargePromptTokens                     int64
}

// addKind adds a kind's row to its workload's demand: the totals, and the
// kind apart when the gateway said it.
func addKind(to map[string]catalogue.WorkloadDemand, r workloadKindRow) {
	w := to[r.Workload]
	w.Requests += r.Requests
	w.LargeRequests += r.LargeRequests
	w.PromptTokens += r.PromptTokens
	w.LargePromptTokens += r.LargePromptTokens
	if k := kindOf(r.Streaming, r.Requires); k.Reported {
		w.Kinds = append(w.Kinds, catalogue.KindDemand{RequestKind: k, Requests: r.Requests, LargeRequests: r.LargeRequests})
	}
	to[r.Workload] = w
}

// DemandMix sums a model's demand per workload from since on: the real
// workload mix the gateway saw.
func (s *Store) DemandMix(ctx context.Context, model string, since time.Time) (map[string]catalogue.Demand, error) {
	var rows []struct {
		Workload               string
		Requests, PromptTokens int64
	}
	if err := s.read(ctx).Model(&demandRow{}).Select("workload, SUM(requests) AS requests, SUM(prompt_tokens) AS prompt_tokens").
		Where("model_slug = ? AND minute >= ?", model, since.UTC()).Group("workload").Scan(&rows).Error; err != nil {
		return nil, fmt.Errorf("demand mix of %s: %w", model, err)
	}
	out := make(map[string]catalogue.Demand, len(rows))
	for _, r := range rows {
		out[r.Workload] = catalogue.Demand{Model: model, Workload: r.Workload, Requests: r.Requests, PromptTokens: r.PromptTokens}
	}
	return out, nil
}

// DeleteDemandBefore deletes demand rows older than a time.
func (s *Store) DeleteDemandBefore(ctx context.Context, before time.Time) (int64, error) {
	if err := s.db.WithContext(ctx).Where("minute < ?", before.UTC()).Delete(&demandAskedRow{}).Error; err != nil {
		return 0, fmt.Errorf("delete old demand: %w", err)
	}
	res := s.db.WithContext(ctx).Where("minute < ?", before.UTC()).Delete(&demandRow{})
	return res.RowsAffected, res.Error
}

// DemandAsked sums what a model's requests asked for in the minutes from
// since until until: the requests in all (whatever they asked), and per
// asked key (catalogue.AskedKeys) those that asked it.
func (s *Store) DemandAsked(ctx context.Context, model string, since, until time.Time) (catalogue.AskedSums, error) {
	out := catalogue.AskedSums{Asked: map[string]int64{}}
	var rows []struct {
		Asked    string
		Requests int64
	}
	if err := s.read(ctx).Model(&demandAskedRow{}).Select("asked, SUM(requests) AS requests").
		Where("model_slug = ? AND minute >= ? AND minute < ?", model, since.UTC(), until.UTC()).Group("asked").Scan(&rows).Error; err != nil {
		return out, fmt.Errorf("what demand for %s asked: %w", model, err)
	}
	for _, r := range rows {
		out.Asked[r.Asked] = r.Requests
	}
	var total struct{ Requests int64 }
	if err := s.read(ctx).Model(&demandRow{}).Select("COALESCE(SUM(requests), 0) AS requests").
		Where("model_slug = ? AND minute >= ? AND minute < ?", model, since.UTC(), until.UTC()).Scan(&total).Error; err != nil {
		return out, fmt.Errorf("demand for %s: %w", model, err)
	}
	out.Requests = total.Requests
	return out, nil
}

// DemandShapes sums a model's demand per workload from since on, counting
// apart the requests of rows whose average prompt was at least largeFrom
// tokens: what the preview weighs its scenarios by.
func (s *Store) DemandShapes(ctx context.Context, model string, since time.Time, largeFrom int64) (map[string]catalogue.WorkloadDemand, error) {
	var rows []workloadKindRow
	if err := s.read(ctx).Model(&demandRow{}).Select("workload, streaming, requires, SUM(requests) AS requests, "+
		largeDemand, largeFrom, largeFrom).
		Where("model_slug = ? AND minute >= ? AND requests > 0", model, since.UTC()).
		Group("workload, streaming, requires").Order("workload, streaming, requires").Scan(&rows).Error; err != nil {
		return nil, fmt.Errorf("demand shapes of %s: %w", model, err)
	}
	out := make(map[string]catalogue.WorkloadDemand, len(rows))
	for _, r := range rows {
		addKind(out, r)
	}
	for _, pattern := range []string{catalogue.AskedPrefsPattern, catalogue.AskedProjectPattern} {
		rows, err := s.askedDemand(ctx, []string{model}, since, time.Time{}, "", pattern)
		if err != nil {
			return nil, fmt.Errorf("demand shapes of %s: %w", model, err)
		}
		for _, r := range rows {
			addAsked(out, r)
		}
	}
	return out, nil
}

// largeDemand sums a demand row's large requests and their prompt tokens:
// as the gateway counted them, or, from a gateway that reports only totals,
// all of the row's when its average prompt is large (two ? for the line).
const largeDemand = "SUM(COALESCE(large_requests, CASE WHEN prompt_tokens >= ? * requests THEN requests ELSE 0 END)) AS large_requests, " +
	"SUM(prompt_tokens) AS prompt_tokens, " +
	"SUM(COALESCE(large_prompt_tokens, CASE WHEN prompt_tokens >= ? * requests THEN prompt_tokens ELSE 0 END)) AS large_prompt_tokens"

func equalCount(a, b *int64) bool {
	return (a == nil && b == nil) || (a != nil && b != nil && *a == *b)
}

// DemandByHour sums models' demand per model, hour (UTC) and workload from
// since (inclusive) to until (exclusive), counting apart the large requests
// (largeDemand): the workload mix of each past hour, which the projection
// of that hour weighs by.
func (s *Store) DemandByHour(ctx context.Context, models []string, since, until time.Time, largeFrom int64) (map[string]map[time.Time]map[string]catalogue.WorkloadDemand, error) {
	hour := "strftime('%Y-%m-%d %H', minute)"
	if s.dialect == Postgres {
		hour = "to_char(minute, 'YYYY-MM-DD HH24')"
	}
	var rows []workloadKindRow
	if err := s.read(ctx).Model(&demandRow{}).Select("model_slug, "+hour+" AS hour, workload, streaming, requires, SUM(requests) AS requests, "+
		largeDemand, largeFrom, largeFrom).
		Where("model_slug IN ? AND minute >= ? AND minute < ? AND requests > 0", models, since.UTC(), until.UTC()).
		Group("model_slug, hour, workload, streaming, requires").Order("model_slug, hour, workload, streaming, requires").Scan(&rows).Error; err != nil {
		return nil, fmt.Errorf("demand by hour: %w", err)
	}
	out := map[string]map[time.Time]map[string]catalogue.WorkloadDemand{}
	for _, r := range rows {
		h, err := parseHourKey(r.Hour)
		if err != nil {
			return nil, fmt.Errorf("demand by hour of %s: hour %q: %w", r.ModelSlug, r.Hour, err)
		}
		if out[r.ModelSlug] == nil {
			out[r.ModelSlug] = map[time.Time]map[string]catalogue.WorkloadDemand{}
		}
		if out[r.ModelSlug][h] == nil {
			out[r.ModelSlug][h] = map[string]catalogue.WorkloadDemand{}
		}
		addKind(out[r.ModelSlug][h], r)
	}
	// The requests of each hour and workload routed under the share
	// policy, from what the gateways said the requests asked for.
	var shared []struct {
		ModelSlug, Hour, Workload string
		Requests                  int64
	}
	if err := s.read(ctx).Model(&demandAskedRow{}).Select("model_slug, "+hour+" AS hour, workload, SUM(requests) AS requests").
		Where("model_slug IN ? AND minute >= ? AND minute < ? AND asked = ?", models, since.UTC(), until.UTC(), catalogue.AskedSharePolicy).
		Group("model_slug, hour, workload").Scan(&shared).Error; err != nil {
		return nil, fmt.Errorf("share-policy demand by hour: %w", err)
	}
	for _, r := range shared {
		h, err := parseHourKey(r.Hour)
		if err != nil {
			return nil, fmt.Errorf("share-policy demand by hour of %s: hour %q: %w", r.ModelSlug, r.Hour, err)
		}
		if d, ok := out[r.ModelSlug][h][r.Workload]; ok {
			d.SharePolicy = min(d.Requests, r.Requests)
			out[r.ModelSlug][h][r.Workload] = d
		}
	}
	// And the requests of each set of preferences (the prefs: keys) and of
	// each project (the project: keys), which the projection elects on
	// ballots of their own.
	for _, pattern := range []string{catalogue.AskedPrefsPattern, catalogue.AskedProjectPattern} {
		rows, err := s.askedDemand(ctx, models, since, until, hour, pattern)
		if err != nil {
			return nil, err
		}
		for _, r := range rows {
			h, err := parseHourKey(r.Hour)
			if err != nil {
				return nil, fmt.Errorf("demand by %s of %s: hour %q: %w", pattern, r.ModelSlug, r.Hour, err)
			}
			if byWorkload := out[r.ModelSlug][h]; byWorkload != nil {
				addAsked(byWorkload, r)
			}
		}
	}
	return out, nil
}

// askedRow is the requests of one asked key (a set of preferences or a
// project) of a model's workload, in an hour when grouped by one.
type askedRow struct {
	ModelSlug, Hour, Workload, Asked string
	Requests                         int64
}

// askedDemand sums the models' requests by the asked keys matching pattern
// (SQL's LIKE) and workload from since (inclusive) to until (exclusive;
// zero: no end), and by hour when hour is the expression of one ("" for
// the whole period).
func (s *Store) askedDemand(ctx context.Context, models []string, since, until time.Time, hour, pattern string) ([]askedRow, error) {
	columns, group := "model_slug, workload, asked", "model_slug, workload, asked"
	if hour != "" {
		columns, group = "model_slug, "+hour+" AS hour, workload, asked", "model_slug, hour, workload, asked"
	}
	q := s.read(ctx).Model(&demandAskedRow{}).Select(columns+", SUM(requests) AS requests").
		Where("model_slug IN ? AND minute >= ? AND asked LIKE ?", models, since.UTC(), pattern)
	if !until.IsZero() {
		q = q.Where("minute < ?", until.UTC())
	}
	var rows []askedRow
	if err := q.Group(group).Order(group).Scan(&rows).Error; err != nil {
		return nil, fmt.Errorf("demand by %s: %w", pattern, err)
	}
	return rows, nil
}

// addAsked counts a set's or a project's requests in its workload's demand
// (at most the workload's requests; a workload without demand rows is left
// out): a prefs: key by its key, a project: key by the project's pseudonym.
func addAsked(byWorkload map[string]catalogue.WorkloadDemand, r askedRow) {
	d, ok := byWorkload[r.Workload]
	if !ok || r.Requests <= 0 {
		return
	}
	n := min(d.Requests, r.Requests)
	if a, _ := catalogue.ParseAsked(r.Asked); a.Project != "" {
		if d.Projects == nil {
			d.Projects = map[string]catalogue.ProjectDemand{}
		}
		pd := d.Projects[a.Project]
		pd.Requests = min(d.Requests, pd.Requests+n)
		if a.ProjectLarge {
			pd.LargeRequests = min(d.LargeRequests, pd.LargeRequests+n)
		}
		d.Projects[a.Project] = pd
	} else {
		if d.Preferences == nil {
			d.Preferences = map[string]int64{}
		}
		d.Preferences[r.Asked] = n
	}
	byWorkload[r.Workload] = d
}

// parseHourKey reads an hour as DemandByHour's queries group by it
// ("2006-01-02 15", UTC).
func parseHourKey(hour string) (time.Time, error) {
	return time.ParseInLocation("2006-01-02 15", hour, time.UTC)
}

// RequestsByMinute is each listing's requests per minute from since
// (inclusive) to until (exclusive), every gateway's source summed, from the
// minute buckets (kept about a day): how a model's requests fell within an
// hour cut in parts. Listings of several models are read at once.
func (s *Store) RequestsByMinute(ctx context.Context, listingIDs []int64, since, until time.Time) (map[int64]map[time.Time]int64, error) {
	out := map[int64]map[time.Time]int64{}
	if len(listingIDs) == 0 {
		return out, nil
	}
	var rows []struct {
		ListingID int64
		Minute    time.Time
		Requests  int64
	}
	// Summed by the database: a row a listing and minute, not one a source.
	if err := s.read(ctx).Table("metric_buckets").Select("listing_id, minute, SUM(requests) AS requests").
		Where("listing_id IN ? AND minute >= ? AND minute < ?", listingIDs, since.UTC(), until.UTC()).Group("listing_id, minute").Scan(&rows).Error; err != nil {
		return nil, fmt.Errorf("requests by minute: %w", err)
	}
	for _, r := range rows {
		if out[r.ListingID] == nil {
			out[r.ListingID] = map[time.Time]int64{}
		}
		out[r.ListingID][r.Minute.UTC()] += r.Requests
	}
	return out, nil
}
