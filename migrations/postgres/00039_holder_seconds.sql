-- +goose Up
-- A gateway reports a shape's holder at the second of the minute's first
-- election and of each later election in the minute that moved the shape,
-- so the projection starts a part at the second routing moved it, not at
-- the next minute. Rows from before this migration are the minute's first
-- holder at second 0.
ALTER TABLE shape_holders ADD COLUMN at_second SMALLINT NOT NULL DEFAULT 0;
ALTER TABLE shape_holders DROP CONSTRAINT shape_holders_pkey;
ALTER TABLE shape_holders ADD PRIMARY KEY (model, workload, cache_relevant, minute, source, at_second);

-- +goose Down
DELETE FROM shape_holders WHERE at_second <> 0;
ALTER TABLE shape_holders DROP CONSTRAINT shape_holders_pkey;
ALTER TABLE shape_holders ADD PRIMARY KEY (model, workload, cache_relevant, minute, source);
ALTER TABLE shape_holders DROP COLUMN at_second;
