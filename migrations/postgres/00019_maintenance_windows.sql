-- +goose Up
-- Planned stops of a listing. The scheduler pauses the listing at starts_at
-- (started_at, paused_listing when it was in service) and brings it back at
-- ends_at (ended_at, outcome) through the same gate as any return.
CREATE TABLE maintenance_windows (
    id BIGSERIAL PRIMARY KEY,
    listing_id BIGINT NOT NULL REFERENCES listings (id) ON DELETE CASCADE,
    starts_at TIMESTAMP NOT NULL,
    ends_at TIMESTAMP NOT NULL,
    reason TEXT NOT NULL,
    created_by BIGINT REFERENCES users (id),
    created_at TIMESTAMP NOT NULL,
    cancelled_at TIMESTAMP,
    started_at TIMESTAMP,
    ended_at TIMESTAMP,
    paused_listing BOOLEAN NOT NULL DEFAULT FALSE,
    outcome TEXT NOT NULL DEFAULT ''
);
CREATE INDEX maintenance_windows_listing ON maintenance_windows (listing_id, starts_at);
CREATE INDEX maintenance_windows_open ON maintenance_windows (ended_at, cancelled_at, starts_at);

-- +goose Down
DROP TABLE maintenance_windows;
