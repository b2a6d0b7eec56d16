-- +goose Up
-- Fees per request and per image part (micro-dollars) in context tiers and
-- in the peak and off-peak blocks (election.md sec. 7: blocks and tiers set
-- them like the token prices).
ALTER TABLE fare_tiers ADD COLUMN request_micros BIGINT;
ALTER TABLE fare_tiers ADD COLUMN image_micros BIGINT;
ALTER TABLE fares ADD COLUMN peak_request_micros BIGINT;
ALTER TABLE fares ADD COLUMN peak_image_micros BIGINT;
ALTER TABLE fares ADD COLUMN off_peak_request_micros BIGINT;
ALTER TABLE fares ADD COLUMN off_peak_image_micros BIGINT;

-- +goose Down
ALTER TABLE fares DROP COLUMN off_peak_image_micros;
ALTER TABLE fares DROP COLUMN off_peak_request_micros;
ALTER TABLE fares DROP COLUMN peak_image_micros;
ALTER TABLE fares DROP COLUMN peak_request_micros;
ALTER TABLE fare_tiers DROP COLUMN image_micros;
ALTER TABLE fare_tiers DROP COLUMN request_micros;
