-- +goose Up
-- Two-factor sign-in. A person's TOTP secret is sealed with the portal's key
-- (like carriers' API keys); it counts only once enabled_at is set, after the
-- person proved their authenticator with a code. totp_last_step is the last
-- 30-second step a code was accepted for, so a code is never accepted twice.
ALTER TABLE users ADD COLUMN totp_secret TEXT;
ALTER TABLE users ADD COLUMN totp_enabled_at TIMESTAMP;
ALTER TABLE users ADD COLUMN totp_last_step BIGINT;

-- One-time recovery codes, stored hashed; a used one keeps its row (used_at)
-- so the account page can say how many are left.
CREATE TABLE recovery_codes (
    id BIGSERIAL PRIMARY KEY,
    user_id BIGINT NOT NULL REFERENCES users (id) ON DELETE CASCADE,
    code_hash TEXT NOT NULL,
    created_at TIMESTAMP NOT NULL,
    used_at TIMESTAMP
);
CREATE UNIQUE INDEX recovery_codes_user_code ON recovery_codes (user_id, code_hash);

-- A browser the person asked to remember skips the code until then.
ALTER TABLE known_devices ADD COLUMN two_factor_until TIMESTAMP;

-- Site-wide policy a gateway admin sets: one row.
CREATE TABLE site_policy (
    id INTEGER PRIMARY KEY CHECK (id = 1),
    require_two_factor BOOLEAN NOT NULL,
    updated_at TIMESTAMP NOT NULL
);
INSERT INTO site_policy (id, require_two_factor, updated_at) VALUES (1, FALSE, CURRENT_TIMESTAMP);

-- +goose Down
DROP TABLE site_policy;
ALTER TABLE known_devices DROP COLUMN two_factor_until;
DROP TABLE recovery_codes;
ALTER TABLE users DROP COLUMN totp_last_step;
ALTER TABLE users DROP COLUMN totp_enabled_at;
ALTER TABLE users DROP COLUMN totp_secret;
