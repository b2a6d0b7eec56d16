-- +goose Up
-- Each customer organisation's minutes on a listing, as gateways report them
-- (under the label their policy allows): first write wins per key, kept as
-- long as metric buckets; and their hourly sums, kept as long as the rollups.
CREATE TABLE org_minutes (
    listing_id BIGINT NOT NULL REFERENCES listings (id) ON DELETE CASCADE,
    minute TIMESTAMP NOT NULL,
    source TEXT NOT NULL,
    organisation TEXT NOT NULL,
    requests BIGINT NOT NULL,
    errors BIGINT NOT NULL,
    input_tokens BIGINT NOT NULL,
    cached_input_tokens BIGINT NOT NULL,
    output_tokens BIGINT NOT NULL,
    PRIMARY KEY (listing_id, minute, source, organisation)
);
CREATE INDEX org_minutes_minute ON org_minutes (minute);

CREATE TABLE org_hourly (
    listing_id BIGINT NOT NULL REFERENCES listings (id) ON DELETE CASCADE,
    hour TIMESTAMP NOT NULL,
    organisation TEXT NOT NULL,
    requests BIGINT NOT NULL,
    errors BIGINT NOT NULL,
    input_tokens BIGINT NOT NULL,
    cached_input_tokens BIGINT NOT NULL,
    output_tokens BIGINT NOT NULL,
    PRIMARY KEY (listing_id, hour, organisation)
);

-- +goose Down
DROP TABLE org_hourly;
DROP TABLE org_minutes;
