-- +goose Up
-- What a listing offers besides price (election.md sec. 7), filed with the
-- fare: the context and output it holds, its quantization, its data policy
-- (the carrier's declaration; NULL is undeclared), the regions serving it
-- (ISO codes, comma-separated) and its fees per request and per image in
-- micro-dollars.
ALTER TABLE fares ADD COLUMN context_length BIGINT;
ALTER TABLE fares ADD COLUMN max_output_tokens BIGINT;
ALTER TABLE fares ADD COLUMN quantization TEXT NOT NULL DEFAULT '';
ALTER TABLE fares ADD COLUMN retention_days BIGINT;
ALTER TABLE fares ADD COLUMN trains_on_prompts BOOLEAN;
ALTER TABLE fares ADD COLUMN regions TEXT NOT NULL DEFAULT '';
ALTER TABLE fares ADD COLUMN request_price_micros BIGINT;
ALTER TABLE fares ADD COLUMN image_price_micros BIGINT;

-- +goose Down
ALTER TABLE fares DROP COLUMN image_price_micros;
ALTER TABLE fares DROP COLUMN request_price_micros;
ALTER TABLE fares DROP COLUMN regions;
ALTER TABLE fares DROP COLUMN trains_on_prompts;
ALTER TABLE fares DROP COLUMN retention_days;
ALTER TABLE fares DROP COLUMN quantization;
ALTER TABLE fares DROP COLUMN max_output_tokens;
ALTER TABLE fares DROP COLUMN context_length;
