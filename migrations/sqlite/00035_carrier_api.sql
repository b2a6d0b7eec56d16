-- +goose Up
-- Carrier API tokens: a token bound to a carrier acts for it on
-- /api/v1/carrier/ (NULL: a gateway's token, as before).
ALTER TABLE api_tokens ADD COLUMN carrier_id BIGINT REFERENCES carriers (id);
-- A filing made through the API names the token it came by.
ALTER TABLE filings ADD COLUMN via_token TEXT NOT NULL DEFAULT '';
-- A filing POST's Idempotency-Key, per carrier: a retried request answers
-- the filing the first one made; the body's hash tells a retry from a
-- different request under the same key.
CREATE TABLE filing_idempotency_keys (
    carrier_id BIGINT NOT NULL REFERENCES carriers (id),
    idempotency_key TEXT NOT NULL,
    body_hash TEXT NOT NULL,
    filing_id BIGINT NOT NULL REFERENCES filings (id),
    created_at TIMESTAMP NOT NULL,
    PRIMARY KEY (carrier_id, idempotency_key)
);

-- +goose Down
DROP TABLE filing_idempotency_keys;
ALTER TABLE filings DROP COLUMN via_token;
ALTER TABLE api_tokens DROP COLUMN carrier_id;
