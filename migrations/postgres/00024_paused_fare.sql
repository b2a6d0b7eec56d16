-- +goose Up
-- When a listing was last paused, and the fare then in force: resuming with
-- that same fare, once the endpoint has passed preflight since, needs no
-- review (a changed fare still does).
ALTER TABLE listings ADD COLUMN paused_at TIMESTAMP;
ALTER TABLE listings ADD COLUMN paused_fare_id BIGINT;

-- +goose Down
ALTER TABLE listings DROP COLUMN paused_fare_id;
ALTER TABLE listings DROP COLUMN paused_at;
