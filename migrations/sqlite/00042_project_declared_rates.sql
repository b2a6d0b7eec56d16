-- +goose Up
-- The cache rates an API project declares in the gateway's configuration
-- (seed 001's Enterprise overrides), reported with its minutes: its
-- elections take them before anything learned, and so does the
-- projection's replay of its requests. The hour keeps the last reported
-- minute's (NULL: none declared).
ALTER TABLE project_hourly ADD COLUMN cache_hit_rate REAL;
ALTER TABLE project_hourly ADD COLUMN cache_output_ratio REAL;

-- +goose Down
ALTER TABLE project_hourly DROP COLUMN cache_output_ratio;
ALTER TABLE project_hourly DROP COLUMN cache_hit_rate;
