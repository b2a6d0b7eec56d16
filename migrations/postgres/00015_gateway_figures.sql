-- +goose Up
-- What the reference gateway measures beyond health: how the served
-- requests came (routed by the election, pinned by the caller, exploration,
-- fallback after another listing failed), 429s (not in requests), explicit
-- cache reads and writes, and tool calls with those whose arguments were
-- not JSON. And which gateway reported a minute (source): several gateways
-- route the same listings, each reports its own minute, and the first write
-- of a (listing, minute, source) wins; '' is a gateway that gives no name.
ALTER TABLE metric_buckets ADD COLUMN routed BIGINT NOT NULL DEFAULT 0;
ALTER TABLE metric_buckets ADD COLUMN pinned BIGINT NOT NULL DEFAULT 0;
ALTER TABLE metric_buckets ADD COLUMN exploration BIGINT NOT NULL DEFAULT 0;
ALTER TABLE metric_buckets ADD COLUMN fallback BIGINT NOT NULL DEFAULT 0;
ALTER TABLE metric_buckets ADD COLUMN rate_limited BIGINT NOT NULL DEFAULT 0;
ALTER TABLE metric_buckets ADD COLUMN cache_read_tokens BIGINT NOT NULL DEFAULT 0;
ALTER TABLE metric_buckets ADD COLUMN cache_write_tokens BIGINT NOT NULL DEFAULT 0;
ALTER TABLE metric_buckets ADD COLUMN tool_calls BIGINT NOT NULL DEFAULT 0;
ALTER TABLE metric_buckets ADD COLUMN malformed_tool_calls BIGINT NOT NULL DEFAULT 0;
ALTER TABLE metric_buckets ADD COLUMN source TEXT NOT NULL DEFAULT '';
ALTER TABLE metric_buckets DROP CONSTRAINT metric_buckets_pkey;
ALTER TABLE metric_buckets ADD PRIMARY KEY (listing_id, minute, source);
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
-- The old key has room for one report a minute: where several gateways
-- reported one, the first source's is kept.
DELETE FROM metric_buckets b USING (
    SELECT listing_id, minute, MIN(source) AS keep FROM metric_buckets GROUP BY listing_id, minute HAVING COUNT(*) > 1
) d WHERE b.listing_id = d.listing_id AND b.minute = d.minute AND b.source <> d.keep;
ALTER TABLE metric_buckets DROP CONSTRAINT metric_buckets_pkey;
ALTER TABLE metric_buckets ADD PRIMARY KEY (listing_id, minute);
ALTER TABLE metric_buckets DROP COLUMN source;
ALTER TABLE metric_buckets DROP COLUMN malformed_tool_calls;
ALTER TABLE metric_buckets DROP COLUMN tool_calls;
ALTER TABLE metric_buckets DROP COLUMN cache_write_tokens;
ALTER TABLE metric_buckets DROP COLUMN cache_read_tokens;
ALTER TABLE metric_buckets DROP COLUMN rate_limited;
ALTER TABLE metric_buckets DROP COLUMN fallback;
ALTER TABLE metric_buckets DROP COLUMN exploration;
ALTER TABLE metric_buckets DROP COLUMN pinned;
ALTER TABLE metric_buckets DROP COLUMN routed;
