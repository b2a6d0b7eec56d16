-- +goose Up
-- A gateway reports each row of a shape's minute with the elections it
-- held, so the projection weighs the parts of a minute by when requests
-- were elected. Rows from before this migration say 0: the minute's
-- requests are taken as even over it, as they were.
ALTER TABLE shape_holders ADD COLUMN requests BIGINT NOT NULL DEFAULT 0;

-- +goose Down
ALTER TABLE shape_holders DROP COLUMN requests;
