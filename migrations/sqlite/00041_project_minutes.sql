-- +goose Up
-- Each API project's minute on each listing, as each gateway process
-- reported it under a pseudonym (the first report of a minute stands: a
-- retry adds nothing), and the hours they add up to: the projection learns
-- each project's cache-hit rates and output ratio from the hours, as the
-- gateway does, and elects each project's requests on its own rates. The
-- minutes are kept as long as the portal takes a report of them, the hours
-- as long as the shape holders (eight days).
CREATE TABLE project_minutes (
    project TEXT NOT NULL,
    listing_id BIGINT NOT NULL,
    minute TIMESTAMP NOT NULL,
    source TEXT NOT NULL DEFAULT '',
    PRIMARY KEY (project, listing_id, minute, source)
);
CREATE INDEX project_minutes_minute ON project_minutes (minute);
CREATE TABLE project_hourly (
    project TEXT NOT NULL,
    listing_id BIGINT NOT NULL,
    hour TIMESTAMP NOT NULL,
    model TEXT NOT NULL,
    answers BIGINT NOT NULL,
    input_tokens BIGINT NOT NULL,
    cached_input_tokens BIGINT NOT NULL,
    output_tokens BIGINT NOT NULL,
    response_cache_hits BIGINT NOT NULL,
    PRIMARY KEY (project, listing_id, hour)
);
CREATE INDEX project_hourly_model_hour ON project_hourly (model, hour);
CREATE INDEX project_hourly_hour ON project_hourly (hour);

-- +goose Down
DROP TABLE project_hourly;
DROP TABLE project_minutes;
