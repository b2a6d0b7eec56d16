-- +goose Up
CREATE TABLE api_tokens (
    id INTEGER PRIMARY KEY AUTOINCREMENT,
    name TEXT NOT NULL,
    token_hash TEXT NOT NULL UNIQUE,
    scopes TEXT NOT NULL,
    created_by BIGINT REFERENCES users (id),
    created_at TIMESTAMP NOT NULL,
    last_used_at TIMESTAMP,
    revoked_at TIMESTAMP
);

-- Per-minute traffic of a listing as the gateway reports it; (listing, minute)
-- is the key, so a retried batch replaces rather than double counts.
CREATE TABLE metric_buckets (
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
    PRIMARY KEY (listing_id, minute)
);
CREATE INDEX metric_buckets_minute ON metric_buckets (minute);

-- The catalogue revision at which each listing last changed, for the
-- gateway's incremental sync.
ALTER TABLE listings ADD COLUMN revision BIGINT NOT NULL DEFAULT 0;
CREATE INDEX listings_revision ON listings (revision);

-- +goose Down
DROP INDEX listings_revision;
ALTER TABLE listings DROP COLUMN revision;
DROP TABLE metric_buckets;
DROP TABLE api_tokens;
