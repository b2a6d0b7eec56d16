-- +goose Up
-- Of a demand row's requests, those whose own prompt was at least the large
-- line (5,000 tokens) and their prompt tokens, as the gateway counted them.
-- NULL for gateways that report only the minute's totals: the minute's
-- average prompt then decides, as before.
ALTER TABLE demand_minutes ADD COLUMN large_requests BIGINT;
ALTER TABLE demand_minutes ADD COLUMN large_prompt_tokens BIGINT;

-- +goose Down
ALTER TABLE demand_minutes DROP COLUMN large_prompt_tokens;
ALTER TABLE demand_minutes DROP COLUMN large_requests;
