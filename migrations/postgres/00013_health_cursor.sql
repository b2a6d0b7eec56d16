-- +goose Up
-- When each minute bucket was recorded and each hourly rollup last changed,
-- by the recording server's clock: the routing snapshot's health mirror
-- reads only what changed since it last looked, not the whole last hour and
-- day of every listing. Rows from before this migration stay NULL; the
-- mirror's full reads (at start and once an hour) do not use the cursor.
-- Buckets are written once, so their index costs one insert each; an hourly
-- rollup changes with every minute recorded, so updated_at is not indexed
-- (an index on it would turn each change into an index insert and defeat
-- PostgreSQL's in-place updates): the mirror finds changed hours through the
-- hour index, a day's rows.
ALTER TABLE metric_buckets ADD COLUMN recorded_at TIMESTAMP;
ALTER TABLE metric_hourly ADD COLUMN updated_at TIMESTAMP;
CREATE INDEX metric_buckets_recorded ON metric_buckets (recorded_at);

-- +goose Down
DROP INDEX metric_buckets_recorded;
ALTER TABLE metric_hourly DROP COLUMN updated_at;
ALTER TABLE metric_buckets DROP COLUMN recorded_at;
