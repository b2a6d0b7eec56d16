-- +goose Up
-- Hourly rollups of the per-minute buckets, kept 400 days (the minutes 25
-- hours): what the 24-hour health figures and the carriers' traffic pages
-- read instead of every minute of the day. Each minute is added once, when
-- it is first recorded (first write wins), so a rollup is exactly the sum of
-- its minutes.
CREATE TABLE metric_hourly (
    listing_id BIGINT NOT NULL REFERENCES listings (id) ON DELETE CASCADE,
    hour TIMESTAMP NOT NULL,
    requests BIGINT NOT NULL,
    errors BIGINT NOT NULL,
    client_errors BIGINT NOT NULL,
    ttft_ms_sum BIGINT NOT NULL,
    output_tokens BIGINT NOT NULL,
    duration_ms BIGINT NOT NULL,
    input_tokens BIGINT NOT NULL,
    cached_input_tokens BIGINT NOT NULL,
    PRIMARY KEY (listing_id, hour)
);
CREATE INDEX metric_hourly_hour ON metric_hourly (hour);

-- +goose Down
DROP TABLE metric_hourly;
