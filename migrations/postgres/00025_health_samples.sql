-- +goose Up
-- The live health the routing catalogue served each listing, sampled every
-- ten minutes: what gateways elected on then. The projection replays the
-- hours it covers with it, part by part, instead of rebuilding health from
-- the hour before (which a carrier slow for a few hours made wrong at both
-- ends). Kept eight days.
CREATE TABLE health_samples (
    listing_id BIGINT NOT NULL,
    at TIMESTAMP NOT NULL,
    requests DOUBLE PRECISION,
    uptime_pct DOUBLE PRECISION,
    latency_ms DOUBLE PRECISION,
    throughput_tps DOUBLE PRECISION,
    cache_hit_rate DOUBLE PRECISION,
    output_ratio DOUBLE PRECISION,
    PRIMARY KEY (listing_id, at)
);
CREATE INDEX health_samples_at ON health_samples (at);

-- +goose Down
DROP TABLE health_samples;
