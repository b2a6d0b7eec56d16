-- +goose Up
CREATE TABLE users (
    id INTEGER PRIMARY KEY AUTOINCREMENT,
    email TEXT NOT NULL UNIQUE,
    name TEXT NOT NULL DEFAULT '',
    password_hash TEXT NOT NULL,
    staff_role TEXT NOT NULL DEFAULT '',
    created_at TIMESTAMP NOT NULL
);

CREATE TABLE carriers (
    id INTEGER PRIMARY KEY AUTOINCREMENT,
    slug TEXT NOT NULL UNIQUE,
    name TEXT NOT NULL,
    created_at TIMESTAMP NOT NULL
);

CREATE TABLE memberships (
    user_id BIGINT NOT NULL REFERENCES users (id) ON DELETE CASCADE,
    carrier_id BIGINT NOT NULL REFERENCES carriers (id) ON DELETE CASCADE,
    role TEXT NOT NULL,
    created_at TIMESTAMP NOT NULL,
    PRIMARY KEY (user_id, carrier_id)
);
CREATE INDEX memberships_carrier ON memberships (carrier_id);

CREATE TABLE invites (
    id INTEGER PRIMARY KEY AUTOINCREMENT,
    token_hash TEXT NOT NULL UNIQUE,
    carrier_id BIGINT NOT NULL REFERENCES carriers (id) ON DELETE CASCADE,
    email TEXT NOT NULL,
    role TEXT NOT NULL,
    created_by BIGINT REFERENCES users (id),
    created_at TIMESTAMP NOT NULL,
    expires_at TIMESTAMP NOT NULL,
    used_at TIMESTAMP
);

CREATE TABLE sessions (
    id_hash TEXT PRIMARY KEY,
    user_id BIGINT REFERENCES users (id) ON DELETE CASCADE,
    data TEXT NOT NULL,
    created_at TIMESTAMP NOT NULL,
    expires_at TIMESTAMP NOT NULL
);
CREATE INDEX sessions_user ON sessions (user_id);
CREATE INDEX sessions_expires ON sessions (expires_at);

CREATE TABLE login_failures (
    id INTEGER PRIMARY KEY AUTOINCREMENT,
    subject TEXT NOT NULL,
    at TIMESTAMP NOT NULL
);
CREATE INDEX login_failures_subject ON login_failures (subject, at);

CREATE TABLE models (
    id INTEGER PRIMARY KEY AUTOINCREMENT,
    slug TEXT NOT NULL UNIQUE,
    name TEXT NOT NULL,
    context_tokens BIGINT NOT NULL,
    created_at TIMESTAMP NOT NULL
);

CREATE TABLE listings (
    id INTEGER PRIMARY KEY AUTOINCREMENT,
    carrier_id BIGINT NOT NULL REFERENCES carriers (id),
    model_id BIGINT NOT NULL REFERENCES models (id),
    status TEXT NOT NULL,
    priority_bp BIGINT NOT NULL DEFAULT 10000,
    published_fare_id BIGINT,
    created_at TIMESTAMP NOT NULL,
    updated_at TIMESTAMP NOT NULL,
    UNIQUE (carrier_id, model_id)
);
CREATE INDEX listings_model ON listings (model_id);

-- Health as measured by the gateway; not money, so approximate numbers are right.
CREATE TABLE listing_health (
    listing_id BIGINT PRIMARY KEY REFERENCES listings (id) ON DELETE CASCADE,
    uptime_pct DOUBLE PRECISION,
    latency_ms DOUBLE PRECISION,
    throughput_tps DOUBLE PRECISION,
    cache_hit_rate DOUBLE PRECISION,
    updated_at TIMESTAMP NOT NULL
);

-- A fare as filed: immutable once written; prices in micro-USD per million
-- tokens, rates in basis points.
CREATE TABLE fares (
    id INTEGER PRIMARY KEY AUTOINCREMENT,
    listing_id BIGINT NOT NULL REFERENCES listings (id),
    input_micros BIGINT NOT NULL,
    output_micros BIGINT NOT NULL,
    cached_input_micros BIGINT,
    cache_read_micros BIGINT,
    cache_write_micros BIGINT,
    landing_fee_bp BIGINT NOT NULL,
    discount_bp BIGINT NOT NULL,
    max_rpm BIGINT,
    max_rpd BIGINT,
    cap_scope TEXT NOT NULL DEFAULT 'global',
    capabilities TEXT NOT NULL DEFAULT '',
    tod_effective_at TIMESTAMP,
    peak_hours TEXT NOT NULL DEFAULT '',
    off_peak_days TEXT NOT NULL DEFAULT '',
    utc_offset_minutes BIGINT NOT NULL DEFAULT 0,
    peak_input_micros BIGINT,
    peak_output_micros BIGINT,
    peak_cached_input_micros BIGINT,
    off_peak_input_micros BIGINT,
    off_peak_output_micros BIGINT,
    off_peak_cached_input_micros BIGINT,
    created_by BIGINT REFERENCES users (id),
    created_at TIMESTAMP NOT NULL
);
CREATE INDEX fares_listing ON fares (listing_id);

CREATE TABLE fare_tiers (
    fare_id BIGINT NOT NULL REFERENCES fares (id) ON DELETE CASCADE,
    position BIGINT NOT NULL,
    above_tokens BIGINT NOT NULL,
    input_micros BIGINT,
    output_micros BIGINT,
    cached_input_micros BIGINT,
    PRIMARY KEY (fare_id, position)
);

CREATE TABLE capability_checks (
    listing_id BIGINT NOT NULL REFERENCES listings (id) ON DELETE CASCADE,
    capability TEXT NOT NULL,
    state TEXT NOT NULL,
    note TEXT NOT NULL DEFAULT '',
    checked_by BIGINT REFERENCES users (id),
    updated_at TIMESTAMP NOT NULL,
    PRIMARY KEY (listing_id, capability)
);

CREATE TABLE filings (
    id INTEGER PRIMARY KEY AUTOINCREMENT,
    listing_id BIGINT NOT NULL REFERENCES listings (id),
    kind TEXT NOT NULL,
    state TEXT NOT NULL,
    fare_id BIGINT REFERENCES fares (id),
    base_fare_id BIGINT REFERENCES fares (id),
    justification TEXT NOT NULL DEFAULT '',
    effective_at TIMESTAMP,
    author_id BIGINT NOT NULL REFERENCES users (id),
    decided_by BIGINT REFERENCES users (id),
    decided_at TIMESTAMP,
    published_at TIMESTAMP,
    lock_version BIGINT NOT NULL DEFAULT 0,
    created_at TIMESTAMP NOT NULL,
    updated_at TIMESTAMP NOT NULL
);
CREATE INDEX filings_listing ON filings (listing_id);
CREATE INDEX filings_state ON filings (state, created_at);

CREATE TABLE filing_comments (
    id INTEGER PRIMARY KEY AUTOINCREMENT,
    filing_id BIGINT NOT NULL REFERENCES filings (id),
    author_id BIGINT NOT NULL REFERENCES users (id),
    body TEXT NOT NULL,
    created_at TIMESTAMP NOT NULL
);
CREATE INDEX filing_comments_filing ON filing_comments (filing_id);

CREATE TABLE catalogue_revisions (
    revision BIGINT PRIMARY KEY,
    published_at TIMESTAMP NOT NULL,
    note TEXT NOT NULL DEFAULT ''
);

-- Append-only: the code has no path that updates or deletes a row here.
CREATE TABLE audit_events (
    id INTEGER PRIMARY KEY AUTOINCREMENT,
    at TIMESTAMP NOT NULL,
    actor_id BIGINT REFERENCES users (id),
    carrier_id BIGINT REFERENCES carriers (id),
    action TEXT NOT NULL,
    subject_type TEXT NOT NULL,
    subject_id BIGINT NOT NULL,
    before_json TEXT NOT NULL DEFAULT '',
    after_json TEXT NOT NULL DEFAULT ''
);
CREATE INDEX audit_events_carrier ON audit_events (carrier_id, at);

-- +goose Down
DROP TABLE audit_events;
DROP TABLE catalogue_revisions;
DROP TABLE filing_comments;
DROP TABLE filings;
DROP TABLE capability_checks;
DROP TABLE fare_tiers;
DROP TABLE fares;
DROP TABLE listing_health;
DROP TABLE listings;
DROP TABLE models;
DROP TABLE login_failures;
DROP TABLE sessions;
DROP TABLE invites;
DROP TABLE memberships;
DROP TABLE carriers;
DROP TABLE users;
