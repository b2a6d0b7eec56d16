-- +goose Up
-- The kind of a demand row's requests: whether they streamed (-1: the
-- gateway did not say, 0: no, 1: yes) and the capabilities they required
-- (contract names, comma-separated in reporting order; '' for none). A
-- gateway that says splits a workload's minute into a row per kind, so the
-- kind is part of the key; rows from before (or from gateways that do not
-- say) keep -1 and ''.
ALTER TABLE demand_minutes ADD COLUMN streaming SMALLINT NOT NULL DEFAULT -1;
ALTER TABLE demand_minutes ADD COLUMN requires TEXT NOT NULL DEFAULT '';
ALTER TABLE demand_minutes DROP CONSTRAINT demand_minutes_pkey;
ALTER TABLE demand_minutes ADD PRIMARY KEY (model_slug, workload, minute, source, streaming, requires);

-- +goose Down
-- The old key has room for one row a minute: the kinds are summed.
CREATE TABLE demand_minutes_old AS
    SELECT model_slug, workload, minute, source, SUM(requests) AS requests, SUM(prompt_tokens) AS prompt_tokens,
        MAX(recorded_at) AS recorded_at, SUM(large_requests) AS large_requests, SUM(large_prompt_tokens) AS large_prompt_tokens
    FROM demand_minutes GROUP BY model_slug, workload, minute, source;
DELETE FROM demand_minutes;
ALTER TABLE demand_minutes DROP CONSTRAINT demand_minutes_pkey;
ALTER TABLE demand_minutes DROP COLUMN requires;
ALTER TABLE demand_minutes DROP COLUMN streaming;
ALTER TABLE demand_minutes ADD PRIMARY KEY (model_slug, workload, minute, source);
INSERT INTO demand_minutes (model_slug, workload, minute, source, requests, prompt_tokens, recorded_at, large_requests, large_prompt_tokens)
    SELECT model_slug, workload, minute, source, requests, prompt_tokens, recorded_at, large_requests, large_prompt_tokens FROM demand_minutes_old;
DROP TABLE demand_minutes_old;
