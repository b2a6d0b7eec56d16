-- +goose Up
-- Whether a person gets their carriers' alerts by e-mail: NULL follows the
-- default (on for carrier admins, off for members), true or false is their
-- own choice on /account.
ALTER TABLE users ADD COLUMN alert_email BOOLEAN;

-- +goose Down
ALTER TABLE users DROP COLUMN alert_email;
