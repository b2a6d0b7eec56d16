package store

import (
	"context"
	"encoding/binary"
	"errors"
	"fmt"
	"maps"
	"slices"
	"strings"
	"time"

	"gorm.io/gorm"

	"github.com/airside/airside/internal/catalogue"
)

// AddToInbox writes checked batches to the metrics inbox, in one
// transaction: catalogue.Inbox shares one commit among the batches that
// arrive while the last was under way.
func (s *Store) AddToInbox(ctx context.Context, batches []catalogue.QueuedBatch) error {
	if len(batches) == 0 {
		return nil
	}
	encoded := make([][]byte, len(batches))
	for i, b := range batches {
		encoded[i] = encodeBatch(b)
	}
	return s.tx(ctx, func(tx *gorm.DB, now time.Time) error {
		// 32 rows a statement: the SQLite driver binds in time square in
		// the parameters (see rowsPerStatement).
		for start := 0; start < len(encoded); start += 32 {
			chunk := encoded[start:min(start+32, len(encoded))]
			args := make([]any, 0, 2*len(chunk))
			for _, e := range chunk {
				args = append(args, now, e)
			}
			q := "INSERT INTO metric_inbox (received_at, batch) VALUES " + strings.TrimSuffix(strings.Repeat("(?, ?), ", len(chunk)), ", ")
			if err := tx.Exec(q, args...).Error; err != nil {
				return fmt.Errorf("metrics inbox: add %d batches: %w", len(batches), err)
			}
		}
		return nil
	})
}

// InboxSize counts the batches waiting in the metrics inbox.
func (s *Store) InboxSize(ctx context.Context) (int64, error) {
	var n int64
	if err := s.read(ctx).Table("metric_inbox").Count(&n).Error; err != nil {
		return 0, fmt.Errorf("metrics inbox: count: %w", err)
	}
	return n, nil
}

type inboxRow struct {
	ID         int64
	ReceivedAt time.Time
	Batch      []byte
}

// FoldInbox folds the oldest batches of the metrics inbox: each under
// RecordBatch's rules in a savepoint of its own (a row that replays a
// recorded key with other figures is refused, and its batch listed as
// refused in part; every other row is stored), their hours rolled up together, and deletes them
// from the inbox, all in one transaction that takes batches until budget has passed (at least one)
// or max. On PostgreSQL the batches are claimed with SKIP LOCKED, so two
// serve processes fold different ones.
func (s *Store) FoldInbox(ctx context.Context, budget time.Duration, max int) (catalogue.Folded, error) {
	var res catalogue.Folded
	var from time.Time
	err := s.tx(ctx, func(tx *gorm.DB, now time.Time) error {
		res, from = catalogue.Folded{}, time.Time{}
		q := "SELECT id, received_at, batch FROM metric_inbox ORDER BY id LIMIT ?"
		if s.dialect == Postgres {
			q += " FOR UPDATE SKIP LOCKED"
		}
		var rows []inboxRow
		if err := tx.Raw(q, max+1).Scan(&rows).Error; err != nil {
			return fmt.Errorf("metrics inbox: read: %w", err)
		}
		start := time.Now()
		models := map[string]bool{}
		var done []int64
		var fresh []catalogue.Bucket // the new minutes of the batches folded
		for i, r := range rows {
			if i == max || i > 0 && time.Since(start) > budget {
				res.More = true
				break
			}
			done = append(done, r.ID)
			batch, err := decodeBatch(r.Batch)
			if err != nil {
				// Written by this code, so never expected; kept out rather
				// than stopping every batch behind it.
				res.Refused = append(res.Refused, catalogue.RefusedBatch{ID: r.ID, ReceivedAt: r.ReceivedAt, Err: err})
				continue
			}
			var inserted []catalogue.Bucket
			var replay catalogue.ReplayError
			err = tx.Transaction(func(tx *gorm.DB) error {
				if len(batch.Buckets) > 0 {
					var err error
					if inserted, replay.Indexes, err = insertBuckets(tx, now, batch.Buckets); err != nil {
						return err
					}
				}
				if len(batch.Demand) > 0 {
					var err error
					replay.DemandIndexes, err = recordDemand(tx, now, batch.Demand)
					return err
				}
				return nil
			})
			if err != nil {
				return fmt.Errorf("metrics inbox: fold batch %d: %w", r.ID, err)
			}
			if len(replay.Indexes)+len(replay.DemandIndexes) > 0 {
				// Its conflicting rows alone are refused; the rest are stored.
				res.Refused = append(res.Refused, catalogue.RefusedBatch{ID: r.ID, ReceivedAt: r.ReceivedAt, Sources: sourcesOf(batch), Err: &replay,
					Partial: true})
			}
			fresh = append(fresh, inserted...)
			res.Batches++
			res.Buckets += len(batch.Buckets) - len(replay.Indexes)
			res.DemandRows += len(batch.Demand) - len(replay.DemandIndexes)
			for _, b := range batch.Buckets {
				if from.IsZero() || b.Minute.Before(from) {
					from = b.Minute
				}
			}
			for _, d := range batch.Demand {
				models[d.Model] = true
				if from.IsZero() || d.Minute.Before(from) {
					from = d.Minute
				}
			}
		}
		// The hours of every batch folded, in one upsert: a gateway's
		// batches of successive minutes share their hours.
		if err := addToHourly(tx, fresh, now); err != nil {
			return fmt.Errorf("metrics inbox: roll up folded batches: %w", err)
		}
		if len(done) > 0 {
			if err := tx.Exec("DELETE FROM metric_inbox WHERE id IN ?", done).Error; err != nil {
				return fmt.Errorf("metrics inbox: remove folded batches: %w", err)
			}
		}
		for m := range models {
			res.Models = append(res.Models, m)
		}
		slices.Sort(res.Models)
		return nil
	})
	if err != nil {
		return catalogue.Folded{}, err
	}
	if res.Batches > 0 {
		// As RecordBatch counts its write: after the commit.
		s.countWrite(from.UTC())
	}
	return res, nil
}

// sourcesOf names the gateways a batch reports for.
func sourcesOf(b catalogue.QueuedBatch) []string {
	var out []string
	for _, x := range b.Buckets {
		out = appendNew(out, x.Source)
	}
	for _, d := range b.Demand {
		out = appendNew(out, d.Source)
	}
	return out
}

// A batch in the inbox is encoded in a compact binary form of its own
// (varints, a version byte first): it is written for every batch a gateway
// posts, and encoding/json or gob would cost more than the row's insert.
// Sources are written once, in a table the rows index, and minutes as
// nanoseconds from the batch's base (its first row's), so a gateway's
// minute batch takes about 30 bytes a bucket. Format 2 writes how many
// counters a bucket carries (catalogue.Counters, which only grows at its
// end), so a batch queued before a new counter still reads, with it zero;
// format 1 carried the first 18. Format 3 ends with each demand row's asked
// counts (election.md sec. 7); a batch of format 2 reads with none.
const (
	inboxFormat          = 3
	inboxFormat2         = 2
	inboxFormat1Counters = 18
)

func encodeBatch(b catalogue.QueuedBatch) []byte {
	out := make([]byte, 0, 32+len(b.Buckets)*32+len(b.Demand)*48)
	out = append(out, inboxFormat)
	var base int64
	switch {
	case len(b.Buckets) > 0:
		base = b.Buckets[0].Minute.UnixNano()
	case len(b.Demand) > 0:
		base = b.Demand[0].Minute.UnixNano()
	}
	out = binary.AppendVarint(out, base)
	out = binary.AppendUvarint(out, uint64(len(catalogue.Counters)))
	sources := sourcesOf(b)
	out = binary.AppendUvarint(out, uint64(len(sources)))
	for _, src := range sources {
		out = appendString(out, src)
	}
	source := func(s string) uint64 { return uint64(slices.Index(sources, s)) }
	out = binary.AppendUvarint(out, uint64(len(b.Buckets)))
	for _, x := range b.Buckets {
		out = binary.AppendVarint(out, x.ListingID)
		out = binary.AppendVarint(out, x.Minute.UnixNano()-base)
		out = binary.AppendUvarint(out, source(x.Source))
		for _, k := range catalogue.Counters {
			out = binary.AppendVarint(out, *k.Of(&x.Counts))
		}
	}
	out = binary.AppendUvarint(out, uint64(len(b.Demand)))
	for _, d := range b.Demand {
		out = appendString(out, d.Model)
		out = appendString(out, d.Workload)
		out = binary.AppendVarint(out, d.Minute.UnixNano()-base)
		out = binary.AppendUvarint(out, source(d.Source))
		out = binary.AppendVarint(out, d.Requests)
		out = binary.AppendVarint(out, d.PromptTokens)
		out = appendOptional(out, d.LargeRequests)
		out = appendOptional(out, d.LargePromptTokens)
		switch {
		case d.Streaming == nil:
			out = append(out, 0)
		case *d.Streaming:
			out = append(out, 2)
		default:
			out = append(out, 1)
		}
		if d.Requires == nil {
			out = append(out, 0)
		} else {
			out = append(out, 1)
			out = binary.AppendUvarint(out, uint64(len(d.Requires)))
			for _, r := range d.Requires {
				out = appendString(out, r)
			}
		}
	}
	// What the demand rows' requests asked for (election.md sec. 7), last.
	for _, d := range b.Demand {
		keys := slices.Sorted(maps.Keys(d.Asked))
		out = binary.AppendUvarint(out, uint64(len(keys)))
		for _, k := range keys {
			out = appendString(out, k)
			out = binary.AppendVarint(out, d.Asked[k])
		}
	}
	return out
}

func appendString(out []byte, s string) []byte {
	return append(binary.AppendUvarint(out, uint64(len(s))), s...)
}

func appendOptional(out []byte, v *int64) []byte {
	if v == nil {
		return append(out, 0)
	}
	return binary.AppendVarint(append(out, 1), *v)
}

// batchReader reads an encoded batch, keeping the first error.
type batchReader struct {
	data []byte
	err  error
}

var errBadBatch = errors.New("metrics inbox: batch encoding cut short or damaged")

func (r *batchReader) varint() int64 {
	v, n := binary.Varint(r.data)
	if n <= 0 {
		r.fail()
		return 0
	}
	r.data = r.data[n:]
	return v
}

func (r *batchReader) uvarint(limit uint64) int {
	v, n := binary.Uvarint(r.data)
	if n <= 0 || v > limit {
		r.fail()
		return 0
	}
	r.data = r.data[n:]
	return int(v)
}

func (r *batchReader) byte() byte {
	if len(r.data) == 0 {
		r.fail()
		return 0
	}
	b := r.data[0]
	r.data = r.data[1:]
	return b
}

func (r *batchReader) string() string {
	n := r.uvarint(uint64(len(r.data)))
	if r.err != nil || n > len(r.data) { // the length's own bytes are gone now
		r.fail()
		return ""
	}
	s := string(r.data[:n])
	r.data = r.data[n:]
	return s
}

func (r *batchReader) optional() *int64 {
	if r.byte() == 0 || r.err != nil {
		return nil
	}
	v := r.varint()
	return &v
}

func (r *batchReader) fail() {
	if r.err == nil {
		r.err = errBadBatch
	}
	r.data = nil
}

func decodeBatch(data []byte) (catalogue.QueuedBatch, error) {
	var b catalogue.QueuedBatch
	if len(data) == 0 || data[0] != 1 && data[0] != inboxFormat2 && data[0] != inboxFormat {
		return b, fmt.Errorf("metrics inbox: batch in an unknown format")
	}
	r := &batchReader{data: data[1:]}
	base := r.varint()
	counters := inboxFormat1Counters
	if data[0] >= inboxFormat2 {
		counters = r.uvarint(uint64(len(r.data)))
	}
	if counters > len(catalogue.Counters) {
		// Written by a newer version whose counters this one does not
		// know: refused whole rather than folded without them.
		return b, fmt.Errorf("metrics inbox: a batch of %d counters, %d known", counters, len(catalogue.Counters))
	}
	// A count beyond the bytes left is damage (every row or name takes
	// at least one), not a reason to allocate.
	sources := make([]string, r.uvarint(uint64(len(r.data))))
	for i := range sources {
		sources[i] = r.string()
	}
	source := func() string {
		i := r.uvarint(uint64(len(sources)))
		if r.err != nil || i >= len(sources) {
			r.fail()
			return ""
		}
		return sources[i]
	}
	b.Buckets = make([]catalogue.Bucket, r.uvarint(uint64(len(r.data))))
	for i := range b.Buckets {
		x := &b.Buckets[i]
		x.ListingID = r.varint()
		x.Minute = time.Unix(0, base+r.varint()).UTC()
		x.Source = source()
		for i := range counters {
			v := r.varint()
			if i < len(catalogue.Counters) {
				*catalogue.Counters[i].Of(&x.Counts) = v
			}
		}
	}
	if n := r.uvarint(uint64(len(r.data))); n > 0 {
		b.Demand = make([]catalogue.Demand, n)
	}
	for i := range b.Demand {
		d := &b.Demand[i]
		d.Model = r.string()
		d.Workload = r.string()
		d.Minute = time.Unix(0, base+r.varint()).UTC()
		d.Source = source()
		d.Requests = r.varint()
		d.PromptTokens = r.varint()
		d.LargeRequests = r.optional()
		d.LargePromptTokens = r.optional()
		switch r.byte() {
		case 1:
			d.Streaming = new(false)
		case 2:
			d.Streaming = new(true)
		}
		if r.byte() == 1 {
			d.Requires = make([]string, r.uvarint(uint64(len(r.data))))
			for j := range d.Requires {
				d.Requires[j] = r.string()
			}
		}
	}
	if len(b.Buckets) == 0 {
		b.Buckets = nil
	}
	if data[0] >= inboxFormat {
		for i := range b.Demand {
			n := r.uvarint(uint64(len(r.data)))
			if n == 0 {
				continue
			}
			b.Demand[i].Asked = make(map[string]int64, n)
			for range n {
				k := r.string()
				b.Demand[i].Asked[k] = r.varint()
			}
		}
	}
	if r.err == nil && len(r.data) > 0 {
		r.err = errBadBatch
	}
	return b, r.err
}
