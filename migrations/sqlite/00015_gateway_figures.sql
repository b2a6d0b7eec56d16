-- +goose Up
-- What the reference gateway measures beyond health: how the served
-- requests came (routed by the election, pinned by the caller, exploration,
-- fallback after another listing failed), 429s (not in requests), explicit
-- cache reads and writes, and tool calls with those whose arguments were
-- not JSON. And which gateway reported a minute (source): several gateways
-- route the same listings, each reports its own minute, and the first write
-- of a (listing, minute, source) wins; '' is a gateway that gives no name.
-- SQLite cannot change a primary key in place: the table is rebuilt.
CREATE TABLE metric_buckets_new (
    listing_id BIGINT NOT NULL REFERENCES listings (id) ON DELETE CASCADE,
    minute TIMESTAMP NOT NULL,
    source TEXT NOT NULL DEFAULT '',
    requests BIGINT NOT NULL,
    errors BIGINT NOT NULL,
    client_errors BIGINT NOT NULL,
    ttft_ms_sum BIGINT NOT NULL,
    output_tokens BIGINT NOT NULL,
    duration_ms BIGINT NOT NULL,
    input_tokens BIGINT NOT NULL,
    cached_input_tokens BIGINT NOT NULL,
    capped BIGINT NOT NULL DEFAULT 0,
    routed BIGINT NOT NULL DEFAULT 0,
    pinned BIGINT NOT NULL DEFAULT 0,
    exploration BIGINT NOT NULL DEFAULT 0,
    fallback BIGINT NOT NULL DEFAULT 0,
    rate_limited BIGINT NOT NULL DEFAULT 0,
    cache_read_tokens BIGINT NOT NULL DEFAULT 0,
    cache_write_tokens BIGINT NOT NULL DEFAULT 0,
    tool_calls BIGINT NOT NULL DEFAULT 0,
    malformed_tool_calls BIGINT NOT NULL DEFAULT 0,
    recorded_at TIMESTAMP,
    PRIMARY KEY (listing_id, minute, source)
);
INSERT INTO metric_buckets_new (listing_id, minute, requests, errors, client_errors, ttft_ms_sum, output_tokens, duration_ms, input_tokens, cached_input_tokens, capped, recorded_at)
    SELECT listing_id, minute, requests, errors, client_errors, ttft_ms_sum, output_tokens, duration_ms, input_tokens, cached_input_tokens, capped, recorded_at FROM metric_buckets;
DROP TABLE metric_buckets;
ALTER TABLE metric_buckets_new RENAME TO metric_buckets;
CREATE INDEX metric_buckets_minute ON metric_buckets (minute);
CREATE INDEX metric_buckets_recorded ON metric_buckets (recorded_at);
ALTER TABLE metric_hourly ADD COLUMN routed BIGINT NOT NULL DEFAULT 0;
ALTER TABLE metric_hourly ADD COLUMN pinned BIGINT NOT NULL DEFAULT 0;
ALTER TABLE metric_hourly ADD COLUMN exploration BIGINT NOT NULL DEFAULT 0;
ALTER TABLE metric_hourly ADD COLUMN fallback BIGINT NOT NULL DEFAULT 0;
ALTER TABLE metric_hourly ADD COLUMN rate_limited BIGINT NOT NULL DEFAULT 0;
ALTER TABLE metric_hourly ADD COLUMN cache_read_tokens BIGINT NOT NULL DEFAULT 0;
ALTER TABLE metric_hourly ADD COLUMN cache_write_tokens BIGINT NOT NULL DEFAULT 0;
ALTER TABLE metric_hourly ADD COLUMN tool_calls BIGINT NOT NULL DEFAULT 0;
ALTER TABLE metric_hourly ADD COLUMN malformed_tool_calls BIGINT NOT NULL DEFAULT 0;

-- The demand each gateway saw, per model, workload and minute, before any
-- routing: the real workload mix. The first write of a row wins, as for
-- buckets.
CREATE TABLE demand_minutes (
    model_slug TEXT NOT NULL,
    workload TEXT NOT NULL,
    minute TIMESTAMP NOT NULL,
    source TEXT NOT NULL DEFAULT '',
    requests BIGINT NOT NULL,
    prompt_tokens BIGINT NOT NULL,
    recorded_at TIMESTAMP NOT NULL,
    PRIMARY KEY (model_slug, workload, minute, source)
);
CREATE INDEX demand_minutes_minute ON demand_minutes (minute);

-- +goose Down
DROP TABLE demand_minutes;
ALTER TABLE metric_hourly DROP COLUMN malformed_tool_calls;
ALTER TABLE metric_hourly DROP COLUMN tool_calls;
ALTER TABLE metric_hourly DROP COLUMN cache_write_tokens;
ALTER TABLE metric_hourly DROP COLUMN cache_read_tokens;
ALTER TABLE metric_hourly DROP COLUMN rate_limited;
ALTER TABLE metric_hourly DROP COLUMN fallback;
ALTER TABLE metric_hourly DROP COLUMN exploration;
ALTER TABLE metric_hourly DROP COLUMN pinned;
ALTER TABLE metric_hourly DROP COLUMN routed;
CREATE TABLE metric_buckets_old (
    listing_id BIGINT NOT NULL REFERENCES listings (id) ON DELETE CASCADE,
    minute TIMESTAMP NOT NULL,
    requests BIGINT NOT NULL,
    errors BIGINT NOT NULL,
    client_errors BIGINT NOT NULL,
    ttft_ms_sum BIGINT NOT NULL,
    output_tokens BIGINT NOT NULL,
    duration_ms BIGINT NOT NULL,
    input_tokens BIGINT NOT NULL,
    cached_input_tokens BIGINT NOT NULL,
    capped BIGINT NOT NULL DEFAULT 0,
    recorded_at TIMESTAMP,
    PRIMARY KEY (listing_id, minute)
);
-- Minutes several gateways reported are summed into one.
INSERT INTO metric_buckets_old (listing_id, minute, requests, errors, client_errors, ttft_ms_sum, output_tokens, duration_ms, input_tokens, cached_input_tokens, capped, recorded_at)
    SELECT listing_id, minute, SUM(requests), SUM(errors), SUM(client_errors), SUM(ttft_ms_sum), SUM(output_tokens),
        SUM(duration_ms), SUM(input_tokens), SUM(cached_input_tokens), SUM(capped), MAX(recorded_at)
    FROM metric_buckets GROUP BY listing_id, minute;
DROP TABLE metric_buckets;
ALTER TABLE metric_buckets_old RENAME TO metric_buckets;
CREATE INDEX metric_buckets_minute ON metric_buckets (minute);
CREATE INDEX metric_buckets_recorded ON metric_buckets (recorded_at);
