-- +goose Up
-- The gateway's latency backoff (election.md sec. 8), counted per minute and
-- rolled up per hour as the 429 backoffs are: a listing held back because
-- its first tokens grew slow against its hour before.
ALTER TABLE metric_buckets ADD COLUMN slow_backoffs BIGINT NOT NULL DEFAULT 0;
ALTER TABLE metric_hourly ADD COLUMN slow_backoffs BIGINT NOT NULL DEFAULT 0;

-- +goose Down
ALTER TABLE metric_hourly DROP COLUMN slow_backoffs;
ALTER TABLE metric_buckets DROP COLUMN slow_backoffs;
