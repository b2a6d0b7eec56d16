-- +goose Up
-- The gateway's limits acting (election.md sec. 8), counted per minute and
-- rolled up per hour: 429 backoffs started, the breaker opened and closed.
ALTER TABLE metric_buckets ADD COLUMN backoffs BIGINT NOT NULL DEFAULT 0;
ALTER TABLE metric_buckets ADD COLUMN breaker_openings BIGINT NOT NULL DEFAULT 0;
ALTER TABLE metric_buckets ADD COLUMN breaker_closings BIGINT NOT NULL DEFAULT 0;
ALTER TABLE metric_hourly ADD COLUMN backoffs BIGINT NOT NULL DEFAULT 0;
ALTER TABLE metric_hourly ADD COLUMN breaker_openings BIGINT NOT NULL DEFAULT 0;
ALTER TABLE metric_hourly ADD COLUMN breaker_closings BIGINT NOT NULL DEFAULT 0;

-- +goose Down
ALTER TABLE metric_hourly DROP COLUMN breaker_closings;
ALTER TABLE metric_hourly DROP COLUMN breaker_openings;
ALTER TABLE metric_hourly DROP COLUMN backoffs;
ALTER TABLE metric_buckets DROP COLUMN breaker_closings;
ALTER TABLE metric_buckets DROP COLUMN breaker_openings;
ALTER TABLE metric_buckets DROP COLUMN backoffs;
