-- +goose Up
-- The model's requests a gateway elected while its limits held a listing
-- back (election.md sec. 8), per minute and rolled up per hour: how much of
-- a minute the listing was off the ballot, which the projection's replay
-- takes out of its elections.
ALTER TABLE metric_buckets ADD COLUMN held_back BIGINT NOT NULL DEFAULT 0;
ALTER TABLE metric_hourly ADD COLUMN held_back BIGINT NOT NULL DEFAULT 0;

-- +goose Down
ALTER TABLE metric_hourly DROP COLUMN held_back;
ALTER TABLE metric_buckets DROP COLUMN held_back;
