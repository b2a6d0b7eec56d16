-- +goose Up
-- An alert about a listing: opened once when its condition starts, resolved
-- once when it ends (the carrier hears of both, never of every minute).
CREATE TABLE alerts (
    id INTEGER PRIMARY KEY AUTOINCREMENT,
    carrier_id BIGINT NOT NULL REFERENCES carriers (id) ON DELETE CASCADE,
    listing_id BIGINT NOT NULL REFERENCES listings (id) ON DELETE CASCADE,
    kind TEXT NOT NULL,
    detail TEXT NOT NULL,
    opened_at TIMESTAMP NOT NULL,
    resolved_at TIMESTAMP
);
CREATE UNIQUE INDEX alerts_one_open ON alerts (listing_id, kind) WHERE resolved_at IS NULL;
CREATE INDEX alerts_carrier ON alerts (carrier_id, opened_at);

-- A listing's rank in each standard scenario as last seen, to tell a
-- carrier when a competitor's fare moved it.
CREATE TABLE listing_ranks (
    listing_id BIGINT NOT NULL REFERENCES listings (id) ON DELETE CASCADE,
    scenario TEXT NOT NULL,
    rank_now BIGINT NOT NULL,
    own_revision BIGINT NOT NULL,
    updated_at TIMESTAMP NOT NULL,
    PRIMARY KEY (listing_id, scenario)
);

-- A carrier's outbound webhook: an address (checked like preflight's) and a
-- signing secret, sealed like endpoint keys.
CREATE TABLE webhooks (
    carrier_id BIGINT PRIMARY KEY REFERENCES carriers (id) ON DELETE CASCADE,
    url TEXT NOT NULL,
    secret_sealed TEXT NOT NULL,
    updated_by BIGINT REFERENCES users (id),
    updated_at TIMESTAMP NOT NULL
);

-- Each event sent (or to send) to a webhook, with its attempts.
CREATE TABLE webhook_deliveries (
    id INTEGER PRIMARY KEY AUTOINCREMENT,
    carrier_id BIGINT NOT NULL REFERENCES carriers (id) ON DELETE CASCADE,
    event TEXT NOT NULL,
    body TEXT NOT NULL,
    state TEXT NOT NULL,
    attempts BIGINT NOT NULL DEFAULT 0,
    next_attempt_at TIMESTAMP NOT NULL,
    last_status BIGINT NOT NULL DEFAULT 0,
    last_error TEXT NOT NULL DEFAULT '',
    claimed_until TIMESTAMP,
    created_at TIMESTAMP NOT NULL,
    delivered_at TIMESTAMP
);
CREATE INDEX webhook_deliveries_due ON webhook_deliveries (state, next_attempt_at);
CREATE INDEX webhook_deliveries_carrier ON webhook_deliveries (carrier_id, created_at);

-- +goose Down
DROP TABLE webhook_deliveries;
DROP TABLE webhooks;
DROP TABLE listing_ranks;
DROP TABLE alerts;
