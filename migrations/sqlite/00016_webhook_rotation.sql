-- +goose Up
-- Rotating a webhook's signing secret keeps the old one for a while: every
-- delivery until previous_secret_until carries a signature with each, the
-- way Standard Webhooks lets a receiver switch secrets without losing one.
ALTER TABLE webhooks ADD COLUMN previous_secret_sealed TEXT;
ALTER TABLE webhooks ADD COLUMN previous_secret_until TIMESTAMP;

-- +goose Down
ALTER TABLE webhooks DROP COLUMN previous_secret_until;
ALTER TABLE webhooks DROP COLUMN previous_secret_sealed;
