-- +goose Up
-- A carrier's deployment of a listing: an OpenAI-compatible base URL, the
-- upstream model name and the API key, sealed (AES-256-GCM, key outside the
-- database). Rows are never updated: a change is a new row filed for review,
-- and the listing points at the published one.
CREATE TABLE endpoints (
    id INTEGER PRIMARY KEY AUTOINCREMENT,
    listing_id BIGINT NOT NULL REFERENCES listings (id) ON DELETE CASCADE,
    base_url TEXT NOT NULL,
    upstream_model TEXT NOT NULL,
    key_sealed TEXT NOT NULL,
    key_hint TEXT NOT NULL,
    created_by BIGINT REFERENCES users (id),
    created_at TIMESTAMP NOT NULL
);
CREATE INDEX endpoints_listing ON endpoints (listing_id);
ALTER TABLE listings ADD COLUMN endpoint_id BIGINT; -- no REFERENCES: SQLite cannot drop such a column
ALTER TABLE filings ADD COLUMN endpoint_id BIGINT;

-- One preflight of one endpoint: queued, claimed by one serve process
-- (running), done. At most one queued or running per listing.
CREATE TABLE preflight_runs (
    id INTEGER PRIMARY KEY AUTOINCREMENT,
    listing_id BIGINT NOT NULL REFERENCES listings (id) ON DELETE CASCADE,
    endpoint_id BIGINT NOT NULL REFERENCES endpoints (id),
    reason TEXT NOT NULL,
    state TEXT NOT NULL,
    requested_by BIGINT REFERENCES users (id),
    due_at TIMESTAMP NOT NULL,
    claimed_by TEXT NOT NULL DEFAULT '',
    claimed_at TIMESTAMP,
    finished_at TIMESTAMP,
    created_at TIMESTAMP NOT NULL
);
CREATE INDEX preflight_runs_due ON preflight_runs (state, due_at);
CREATE INDEX preflight_runs_listing ON preflight_runs (listing_id, created_at);
CREATE UNIQUE INDEX preflight_runs_one_open ON preflight_runs (listing_id) WHERE state IN ('queued', 'running');

-- Each probe's verdict and evidence in a run.
CREATE TABLE probe_results (
    run_id BIGINT NOT NULL REFERENCES preflight_runs (id) ON DELETE CASCADE,
    probe TEXT NOT NULL,
    listing_id BIGINT NOT NULL REFERENCES listings (id) ON DELETE CASCADE,
    endpoint_id BIGINT NOT NULL REFERENCES endpoints (id),
    state TEXT NOT NULL,
    status BIGINT NOT NULL DEFAULT 0,
    latency_ms BIGINT NOT NULL DEFAULT 0,
    excerpt TEXT NOT NULL DEFAULT '',
    error TEXT NOT NULL DEFAULT '',
    ttft_ms BIGINT NOT NULL DEFAULT 0,
    tokens_per_second DOUBLE PRECISION NOT NULL DEFAULT 0,
    cached_tokens BIGINT NOT NULL DEFAULT 0,
    at TIMESTAMP NOT NULL,
    PRIMARY KEY (run_id, probe)
);
CREATE INDEX probe_results_endpoint ON probe_results (endpoint_id, probe, at);

-- +goose Down
DROP TABLE probe_results;
DROP TABLE preflight_runs;
ALTER TABLE filings DROP COLUMN endpoint_id;
ALTER TABLE listings DROP COLUMN endpoint_id;
DROP TABLE endpoints;
