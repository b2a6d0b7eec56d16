-- +goose Up
-- The kind of a demand row's requests: whether they streamed (-1: the
-- gateway did not say, 0: no, 1: yes) and the capabilities they required
-- (contract names, comma-separated in reporting order; '' for none). A
-- gateway that says splits a workload's minute into a row per kind, so the
-- kind is part of the key; rows from before (or from gateways that do not
-- say) keep -1 and ''. SQLite cannot change a primary key in place: the
-- table is rebuilt.
CREATE TABLE demand_minutes_new (
    model_slug TEXT NOT NULL,
    workload TEXT NOT NULL,
    minute TIMESTAMP NOT NULL,
    source TEXT NOT NULL DEFAULT '',
    streaming SMALLINT NOT NULL DEFAULT -1,
    requires TEXT NOT NULL DEFAULT '',
    requests BIGINT NOT NULL,
    prompt_tokens BIGINT NOT NULL,
    recorded_at TIMESTAMP NOT NULL,
    large_requests BIGINT,
    large_prompt_tokens BIGINT,
    PRIMARY KEY (model_slug, workload, minute, source, streaming, requires)
);
INSERT INTO demand_minutes_new (model_slug, workload, minute, source, requests, prompt_tokens, recorded_at, large_requests, large_prompt_tokens)
    SELECT model_slug, workload, minute, source, requests, prompt_tokens, recorded_at, large_requests, large_prompt_tokens FROM demand_minutes;
DROP TABLE demand_minutes;
ALTER TABLE demand_minutes_new RENAME TO demand_minutes;
CREATE INDEX demand_minutes_minute ON demand_minutes (minute);

-- +goose Down
-- The old key has room for one row a minute: the kinds are summed.
CREATE TABLE demand_minutes_old (
    model_slug TEXT NOT NULL,
    workload TEXT NOT NULL,
    minute TIMESTAMP NOT NULL,
    source TEXT NOT NULL DEFAULT '',
    requests BIGINT NOT NULL,
    prompt_tokens BIGINT NOT NULL,
    recorded_at TIMESTAMP NOT NULL,
    large_requests BIGINT,
    large_prompt_tokens BIGINT,
    PRIMARY KEY (model_slug, workload, minute, source)
);
INSERT INTO demand_minutes_old (model_slug, workload, minute, source, requests, prompt_tokens, recorded_at, large_requests, large_prompt_tokens)
    SELECT model_slug, workload, minute, source, SUM(requests), SUM(prompt_tokens), MAX(recorded_at), SUM(large_requests), SUM(large_prompt_tokens)
    FROM demand_minutes GROUP BY model_slug, workload, minute, source;
DROP TABLE demand_minutes;
ALTER TABLE demand_minutes_old RENAME TO demand_minutes;
CREATE INDEX demand_minutes_minute ON demand_minutes (minute);
