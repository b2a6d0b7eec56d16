package catalogue

import (
	"context"
	"errors"
	"fmt"
	"slices"
	"strings"
	"time"

	"github.com/airside/airside/internal/apperr"
)

// PostedBucket is one metric bucket as a gateway posts it (the metrics
// contract's bucket, decoded straight into it): the listing named by
// "carrier/model" or by id.
type PostedBucket struct {
	Listing   string `json:"listing"`
	ListingID int64  `json:"listingId"`
	// Requests is the bucket's requests as posted: nil when the member was
	// left out, which the contract refuses (0 is a report).
	Requests *int64 `json:"requests"`
	Bucket
}

// Resolved is the bucket with its posted requests, false when the member
// was left out.
func (p PostedBucket) Resolved() (Bucket, bool) {
	if p.Requests == nil {
		return p.Bucket, false
	}
	b := p.Bucket
	b.Requests = *p.Requests
	return b, true
}

// MaxBuckets bounds one metrics batch.
const MaxBuckets = 10000

// IngestStore is what metric ingestion needs from storage.
type IngestStore interface {
	ListingIDsBySlug(ctx context.Context) (map[string]int64, error)
	// RecordBatch stores a batch's buckets and demand rows in one
	// transaction, refusing replays with other figures (*ReplayError).
	RecordBatch(ctx context.Context, buckets []Bucket, demand []Demand) error
	DeleteBucketsBefore(ctx context.Context, before time.Time) (int64, error)
	DeleteHourlyBefore(ctx context.Context, before time.Time) (int64, error)
	DeleteDemandBefore(ctx context.Context, before time.Time) (int64, error)
}

// BucketRetention is how long raw per-minute buckets are kept: every figure
// read from them looks back at most a day; older ones live on in hourly
// rollups, kept HourlyRetention.
// Demand is kept DemandRetention: the workload mix looks back a week.
const (
	BucketRetention = 25 * time.Hour
	HourlyRetention = 400 * 24 * time.Hour
	DemandRetention = 8 * 24 * time.Hour
)

// Prune deletes buckets older than BucketRetention and hourly rollups older
// than HourlyRetention, returning how many rows went.
func (in *Ingest) Prune(ctx context.Context) (int64, error) {
	n, err := in.Store.DeleteBucketsBefore(ctx, in.Now().Add(-BucketRetention))
	if err != nil {
		return n, err
	}
	m, err := in.Store.DeleteHourlyBefore(ctx, in.Now().Add(-HourlyRetention))
	if err != nil {
		return n + m, err
	}
	d, err := in.Store.DeleteDemandBefore(ctx, in.Now().Add(-DemandRetention))
	return n + m + d, err
}

// Ingest takes the gateway's per-minute metrics.
type Ingest struct {
	Store IngestStore
	Now   func() time.Time
	// Index, when set, names listings from memory (the routing snapshot);
	// a batch naming a listing it does not know (one created since) is
	// checked against the store instead.
	Index func(ctx context.Context) (*ListingIndex, error)
	// Inbox, when running, takes the batches whose gateway asked for an
	// answer before folding (Enqueue).
	Inbox *Inbox
}

// ListingIndex names every listing by "carrier/model" and by id.
type ListingIndex struct {
	bySlug map[string]int64
	known  map[int64]bool
	models map[int64]string // each listing's model slug
}

// NewListingIndex indexes listing ids by "carrier/model".
func NewListingIndex(bySlug map[string]int64) *ListingIndex {
	known, models := make(map[int64]bool, len(bySlug)), make(map[int64]string, len(bySlug))
	for slug, id := range bySlug {
		known[id] = true
		_, models[id], _ = strings.Cut(slug, "/")
	}
	return &ListingIndex{bySlug: bySlug, known: known, models: models}
}

// resolve is the listing a posted bucket names (0 when none is known).
func (x *ListingIndex) resolve(b *PostedBucket) int64 {
	id := b.ListingID
	if b.Listing != "" {
		id = x.bySlug[b.Listing]
	}
	if !x.known[id] {
		return 0
	}
	return id
}

// index is the listing index a batch is checked against: the one in memory
// when it knows every listing named, else the store's.
func (in *Ingest) index(ctx context.Context, posted []PostedBucket) (*ListingIndex, error) {
	if in.Index != nil {
		x, err := in.Index(ctx)
		if err != nil {
			return nil, err
		}
		whole := true
		for i := range posted {
			if x.resolve(&posted[i]) == 0 {
				whole = false
				break
			}
		}
		if whole {
			return x, nil
		}
	}
	ids, err := in.Store.ListingIDsBySlug(ctx)
	if err != nil {
		return nil, err
	}
	return NewListingIndex(ids), nil
}

// Record stores a batch of buckets, all or nothing, idempotent per (listing,
// minute, source). Problems are named by bucket and field
// ("buckets[3].minute").
func (in *Ingest) Record(ctx context.Context, posted []PostedBucket) (int, error) {
	if len(posted) == 0 {
		return 0, apperr.Invalid(map[string]string{"buckets": fmt.Sprintf("send 1 to %d buckets", MaxBuckets)})
	}
	return in.RecordBatch(ctx, posted, nil)
}

// RecordBatch stores a gateway's batch, its buckets and its demand rows, in
// one transaction: checked whole first (problems named by row and field),
// then idempotent per key (a replay with other figures is a conflict naming
// its rows, refused alone: the batch's other rows are stored). It returns
// how many buckets were taken.
func (in *Ingest) RecordBatch(ctx context.Context, posted []PostedBucket, demand []Demand) (int, error) {
	buckets, err := in.check(ctx, posted, demand)
	if err != nil || len(buckets) == 0 && len(demand) == 0 {
		return 0, err
	}
	if err := in.Store.RecordBatch(ctx, buckets, demand); err != nil {
		in.noteReplay(err, buckets, demand)
		return 0, replayConflict(err)
	}
	return len(buckets), nil
}

// noteReplay keeps a synchronous batch's refused rows for the operations
// page, as the inbox keeps those it folds.
func (in *Ingest) noteReplay(err error, buckets []Bucket, demand []Demand) {
	var replay *ReplayError
	if in.Inbox == nil || !errors.As(err, &replay) {
		return
	}
	var sources []string
	add := func(s string) {
		if !slices.Contains(sources, s) {
			sources = append(sources, s)
		}
	}
	for _, b := range buckets {
		add(b.Source)
	}
	for _, d := range demand {
		add(d.Source)
	}
	in.Inbox.NoteRefused(RefusedBatch{ReceivedAt: in.Now().UTC(), Sources: sources, Err: replay, Partial: true})
}

// check checks a batch whole, naming problems by row and field, and
// returns its buckets with their listings named by id.
func (in *Ingest) check(ctx context.Context, posted []PostedBucket, demand []Demand) ([]Bucket, error) {
	if len(posted) > MaxBuckets {
		return nil, apperr.Invalid(map[string]string{"buckets": fmt.Sprintf("send 1 to %d buckets", MaxBuckets)})
	}
	if err := in.CheckDemand(demand); err != nil {
		return nil, err
	}
	if len(posted) == 0 {
		return nil, nil
	}
	return in.checkBuckets(ctx, posted)
}

// checkBuckets names each posted bucket's listing and validates it.
func (in *Ingest) checkBuckets(ctx context.Context, posted []PostedBucket) ([]Bucket, error) {
	index, err := in.index(ctx, posted)
	if err != nil {
		return nil, err
	}
	now := in.Now()
	var fields fieldProblems
	buckets := make([]Bucket, len(posted))
	type key struct {
		listing, minute int64
		source          string
	}
	seen := make(map[key]int, len(posted))
	// A row's name is written only for a problem: a good batch of dozens
	// of buckets writes none.
	name := func(i int, field string) string { return fmt.Sprintf("buckets[%d].%s", i, field) }
	for i := range posted {
		b := &posted[i]
		if named := b.Listing != "" || b.ListingID != 0; !named || b.Listing != "" && b.ListingID != 0 {
			// The schema's oneOf: exactly one way of naming the listing.
			fields.add(name(i, "listing"), "name the listing exactly once: either listing (\"carrier/model\") or listingId")
			continue
		}
		id := index.resolve(b)
		if id == 0 {
			fields.add(name(i, "listing"), "unknown listing; name it as \"carrier/model\" or by listingId")
			continue
		}
		bucket, ok := b.Resolved()
		if !ok {
			fields.add(name(i, "requests"), "required: the requests in this minute (0 for none)")
			continue
		}
		bucket.ListingID, bucket.Minute = id, b.Minute.UTC()
		for f, msg := range bucket.Validate(now) {
			fields.add(name(i, f), msg)
		}
		k := key{id, bucket.Minute.Unix(), bucket.Source}
		if first, dup := seen[k]; dup {
			fields.add(name(i, "minute"), fmt.Sprintf("the same listing, minute and source as buckets[%d]", first))
		}
		seen[k] = i
		buckets[i] = bucket
	}
	if len(fields) > 0 {
		return nil, apperr.Invalid(fields)
	}
	return buckets, nil
}

// MaxDemand bounds the demand rows of one batch.
const MaxDemand = 10000

// CheckDemand validates demand rows before anything of their batch is
// stored, naming problems by row and field ("demand[2].workload").
func (in *Ingest) CheckDemand(demand []Demand) error {
	if len(demand) > MaxDemand {
		return apperr.Invalid(map[string]string{"demand": fmt.Sprintf("send at most %d demand rows", MaxDemand)})
	}
	now := in.Now()
	fields := map[string]string{}
	seen := map[string]int{}
	for i := range demand {
		d := &demand[i]
		d.Minute = d.Minute.UTC()
		name := fmt.Sprintf("demand[%d]", i)
		for f, msg := range d.Validate(now) {
			fields[name+"."+f] = msg
		}
		kind := d.KindOf()
		key := fmt.Sprintf("%s/%s/%d/%s/%v/%v/%d", d.Model, d.Workload, d.Minute.Unix(), d.Source, kind.Reported, kind.Streaming, kind.Requires)
		if first, dup := seen[key]; dup {
			fields[name+".minute"] = fmt.Sprintf("the same model, workload, minute, source and kind of request as demand[%d]", first)
		}
		seen[key] = i
	}
	if len(fields) > 0 {
		return apperr.Invalid(fields)
	}
	return nil
}

// RecordDemand stores demand rows, all or nothing, idempotent per (model,
// workload, minute, source, kind of request) like buckets.
func (in *Ingest) RecordDemand(ctx context.Context, demand []Demand) error {
	_, err := in.RecordBatch(ctx, nil, demand)
	return err
}

// replayConflict turns a store's ReplayError into a 409 naming each row
// (by its list and index) whose key was recorded with other figures: those
// rows alone were refused, the batch's other rows stored. Any other error
// passes through.
func replayConflict(err error) error {
	var replay *ReplayError
	if !errors.As(err, &replay) {
		return err
	}
	fields := map[string]string{}
	for _, i := range replay.Indexes {
		fields[fmt.Sprintf("buckets[%d]", i)] = "this listing, minute and source were already recorded with other figures; the first write stands"
	}
	for _, i := range replay.DemandIndexes {
		fields[fmt.Sprintf("demand[%d]", i)] = "this model, workload, minute, source and kind of request were already recorded with other figures; the first write stands"
	}
	e := apperr.Errorf(apperr.ECONFLICT, "%d row(s) replay a recorded minute with other figures and were refused; every other row of the batch was stored.",
		len(replay.Indexes)+len(replay.DemandIndexes))
	e.Fields = fields
	return e
}

// ReplayError names the rows of a batch, by index, that repeat a recorded
// key with other figures: the buckets' (Indexes) and the demand rows'
// (DemandIndexes). Those rows alone are refused; the batch's other rows
// are stored.
type ReplayError struct {
	Indexes, DemandIndexes []int
}

func (e *ReplayError) Error() string {
	return fmt.Sprintf("%d bucket(s) and %d demand row(s) replay a recorded minute with other figures", len(e.Indexes), len(e.DemandIndexes))
}
