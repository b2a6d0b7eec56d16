package store

import (
	"context"
	"fmt"
	"strings"

	"gorm.io/gorm"

	"github.com/airside/airside/internal/catalogue"
)

// InsertBucketsPlain stores buckets as a plain batched insert would: each
// batch of `batch` rows one transaction of multi-row INSERTs (as many rows
// a statement as the dialect takes), into metric_buckets with its keys and
// indexes, but with none of RecordBatch's work (no first-write check, no
// hourly rollup, no inbox). It is the load tool's baseline for ingest: how
// fast this database takes the same rows at all, measured in the same run
// as the portal's fold. Its rows are ordinary rows; DeleteBucketsOfSources
// removes them again.
func (s *Store) InsertBucketsPlain(ctx context.Context, buckets []catalogue.Bucket, batch int) error {
	batch = max(batch, 1)
	per := rowsPerStatement(s.db)
	placeholders := "(?, ?, ?, " + strings.Repeat("?, ", len(counterColumns)) + "?)"
	for start := 0; start < len(buckets); start += batch {
		rows := buckets[start:min(start+batch, len(buckets))]
		now := s.Now().UTC()
		err := s.db.WithContext(ctx).Transaction(func(tx *gorm.DB) error {
			for i := 0; i < len(rows); i += per {
				part := rows[i:min(i+per, len(rows))]
				var q strings.Builder
				q.WriteString("INSERT INTO metric_buckets (" + bucketColumns + ", recorded_at) VALUES ")
				args := make([]any, 0, len(part)*(len(counterColumns)+4))
				for j := range part {
					if j > 0 {
						q.WriteString(", ")
					}
					q.WriteString(placeholders)
					args = append(appendCounters(append(args, part[j].ListingID, part[j].Minute.UTC(), part[j].Source), &part[j].Counts), now)
				}
				if err := tx.Exec(q.String(), args...).Error; err != nil {
					return err
				}
			}
			return nil
		})
		if err != nil {
			return fmt.Errorf("plain insert of metric buckets: %w", err)
		}
	}
	return nil
}

// DeleteBucketsOfSources removes the buckets a source whose name starts
// with prefix reported (the load tool's baseline rows); the prefix has no
// LIKE wildcard of its own.
func (s *Store) DeleteBucketsOfSources(ctx context.Context, prefix string) (int64, error) {
	if prefix == "" || strings.ContainsAny(prefix, `%_\`) {
		return 0, fmt.Errorf("delete buckets: %q is not a plain prefix", prefix)
	}
	res := s.db.WithContext(ctx).Exec("DELETE FROM metric_buckets WHERE source LIKE ?", prefix+"%")
	if res.Error != nil {
		return 0, fmt.Errorf("delete buckets of %s*: %w", prefix, res.Error)
	}
	return res.RowsAffected, nil
}
