-- +goose Up
-- A gateway reports a shape's holder at the second of the minute's first
-- election and of each later election in the minute that moved the shape,
-- so the projection starts a part at the second routing moved it, not at
-- the next minute. Rows from before this migration are the minute's first
-- holder at second 0. SQLite cannot change a primary key in place: the
-- table is built again.
CREATE TABLE shape_holders_new (
    model TEXT NOT NULL,
    workload TEXT NOT NULL,
    cache_relevant BOOLEAN NOT NULL,
    minute TIMESTAMP NOT NULL,
    source TEXT NOT NULL DEFAULT '',
    listing_id BIGINT NOT NULL,
    at_second SMALLINT NOT NULL DEFAULT 0,
    PRIMARY KEY (model, workload, cache_relevant, minute, source, at_second)
);
INSERT INTO shape_holders_new (model, workload, cache_relevant, minute, source, listing_id)
    SELECT model, workload, cache_relevant, minute, source, listing_id FROM shape_holders;
DROP TABLE shape_holders;
ALTER TABLE shape_holders_new RENAME TO shape_holders;
CREATE INDEX shape_holders_minute ON shape_holders (minute);

-- +goose Down
CREATE TABLE shape_holders_old (
    model TEXT NOT NULL,
    workload TEXT NOT NULL,
    cache_relevant BOOLEAN NOT NULL,
    minute TIMESTAMP NOT NULL,
    source TEXT NOT NULL DEFAULT '',
    listing_id BIGINT NOT NULL,
    PRIMARY KEY (model, workload, cache_relevant, minute, source)
);
INSERT INTO shape_holders_old (model, workload, cache_relevant, minute, source, listing_id)
    SELECT model, workload, cache_relevant, minute, source, listing_id FROM shape_holders WHERE at_second = 0;
DROP TABLE shape_holders;
ALTER TABLE shape_holders_old RENAME TO shape_holders;
CREATE INDEX shape_holders_minute ON shape_holders (minute);
