-- +goose Up
-- Each API project's minute on each listing, as each gateway process
-- reported it under a pseudonym: the projection learns each project's
-- cache-hit rates and output ratio from them, as the gateway does, and
-- elects each project's requests on its own rates. Kept as long as the
-- shape holders (eight days).
CREATE TABLE project_minutes (
    project TEXT NOT NULL,
    listing_id BIGINT NOT NULL,
    minute TIMESTAMP NOT NULL,
    source TEXT NOT NULL DEFAULT '',
    model TEXT NOT NULL,
    answers BIGINT NOT NULL,
    input_tokens BIGINT NOT NULL,
    cached_input_tokens BIGINT NOT NULL,
    output_tokens BIGINT NOT NULL,
    response_cache_hits BIGINT NOT NULL DEFAULT 0,
    PRIMARY KEY (project, listing_id, minute, source)
);
CREATE INDEX project_minutes_model_minute ON project_minutes (model, minute);
CREATE INDEX project_minutes_minute ON project_minutes (minute);

-- +goose Down
DROP TABLE project_minutes;
