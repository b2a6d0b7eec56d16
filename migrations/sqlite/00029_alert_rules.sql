-- +goose Up
-- Alerts a carrier can live with (issue 53). Where each rule stands for each
-- listing, so an alert opens only after its condition held for the rule's
-- time and resolves only after it stayed clear for one, in every process.
CREATE TABLE alert_conditions (
    listing_id BIGINT NOT NULL REFERENCES listings (id) ON DELETE CASCADE,
    kind TEXT NOT NULL,
    holds BOOLEAN NOT NULL,
    since TIMESTAMP NOT NULL,
    PRIMARY KEY (listing_id, kind)
);

-- An alert that opens again within the hour of resolving is folded into the
-- same alert (flapping): how many times, and the last.
ALTER TABLE alerts ADD COLUMN flaps BIGINT NOT NULL DEFAULT 0;
ALTER TABLE alerts ADD COLUMN reopened_at TIMESTAMP;
CREATE INDEX alerts_resolved ON alerts (resolved_at);

-- A carrier's own setting of a rule (no row: the default): on or off, how
-- long its condition must hold and stay clear, and its threshold.
CREATE TABLE alert_rules (
    carrier_id BIGINT NOT NULL REFERENCES carriers (id) ON DELETE CASCADE,
    kind TEXT NOT NULL,
    enabled BOOLEAN NOT NULL,
    open_after_seconds BIGINT NOT NULL,
    close_after_seconds BIGINT NOT NULL,
    threshold DOUBLE PRECISION NOT NULL,
    updated_by BIGINT REFERENCES users (id),
    updated_at TIMESTAMP NOT NULL,
    PRIMARY KEY (carrier_id, kind)
);

-- A listing's alerts (of one kind, or every kind when kind is '') silenced
-- until a time: they open and resolve on the page, and tell no one.
CREATE TABLE alert_mutes (
    id INTEGER PRIMARY KEY AUTOINCREMENT,
    carrier_id BIGINT NOT NULL REFERENCES carriers (id) ON DELETE CASCADE,
    listing_id BIGINT NOT NULL REFERENCES listings (id) ON DELETE CASCADE,
    kind TEXT NOT NULL,
    until_at TIMESTAMP NOT NULL,
    created_by BIGINT REFERENCES users (id),
    created_at TIMESTAMP NOT NULL
);
CREATE INDEX alert_mutes_until ON alert_mutes (until_at);

-- The rank rule compares with a baseline: the rank when the listing last
-- changed itself (or its best since), with the catalogue's revision then.
ALTER TABLE listing_ranks ADD COLUMN baseline_rank BIGINT NOT NULL DEFAULT 0;
ALTER TABLE listing_ranks ADD COLUMN baseline_catalogue BIGINT NOT NULL DEFAULT 0;
UPDATE listing_ranks SET baseline_rank = rank_now;

-- How a person gets alerts by e-mail: 'each' as they open and recover,
-- 'digest' once a day, 'off'; NULL follows the default (the digest for a
-- carrier's admins, off for members). An earlier yes or no carries over.
ALTER TABLE users ADD COLUMN alert_email_mode TEXT;
UPDATE users SET alert_email_mode = CASE WHEN alert_email THEN 'each' ELSE 'off' END WHERE alert_email IS NOT NULL;

-- One digest per carrier per day, whichever process sends it.
CREATE TABLE alert_digests (
    carrier_id BIGINT NOT NULL REFERENCES carriers (id) ON DELETE CASCADE,
    day TEXT NOT NULL,
    sent_at TIMESTAMP NOT NULL,
    PRIMARY KEY (carrier_id, day)
);

-- +goose Down
DROP TABLE alert_digests;
ALTER TABLE users DROP COLUMN alert_email_mode;
ALTER TABLE listing_ranks DROP COLUMN baseline_catalogue;
ALTER TABLE listing_ranks DROP COLUMN baseline_rank;
DROP TABLE alert_mutes;
DROP TABLE alert_rules;
DROP INDEX alerts_resolved;
ALTER TABLE alerts DROP COLUMN reopened_at;
ALTER TABLE alerts DROP COLUMN flaps;
DROP TABLE alert_conditions;
