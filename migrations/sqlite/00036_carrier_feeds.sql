-- +goose Up
-- A carrier's provider feed (OpenRouter's format): where it is, whether its
-- changes are submitted to review at once or kept as drafts, the
-- validators of the last read, and what the last read did.
CREATE TABLE carrier_feeds (
    carrier_id BIGINT PRIMARY KEY REFERENCES carriers (id),
    url TEXT NOT NULL,
    submit BOOLEAN NOT NULL DEFAULT FALSE,
    etag TEXT NOT NULL DEFAULT '',
    last_modified TEXT NOT NULL DEFAULT '',
    checked_at TIMESTAMP,
    failing BOOLEAN NOT NULL DEFAULT FALSE,
    outcome TEXT NOT NULL DEFAULT '',
    updated_by BIGINT NOT NULL REFERENCES users (id),
    updated_at TIMESTAMP NOT NULL
);

-- +goose Down
DROP TABLE carrier_feeds;
