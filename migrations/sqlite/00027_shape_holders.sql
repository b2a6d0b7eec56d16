-- +goose Up
-- Which listing held each shape of requests (model, workload, whether the
-- cache matters) in a minute, as each gateway process reported it: the
-- projection starts each part of an hour from these instead of replaying
-- who opened a shape. Kept as long as the health samples (eight days).
CREATE TABLE shape_holders (
    model TEXT NOT NULL,
    workload TEXT NOT NULL,
    cache_relevant BOOLEAN NOT NULL,
    minute TIMESTAMP NOT NULL,
    source TEXT NOT NULL DEFAULT '',
    listing_id BIGINT NOT NULL,
    PRIMARY KEY (model, workload, cache_relevant, minute, source)
);
CREATE INDEX shape_holders_minute ON shape_holders (minute);

-- +goose Down
DROP TABLE shape_holders;
