-- +goose Up
-- A deactivated user cannot log in and has no sessions; nothing of theirs
-- is deleted (the audit trail names them).
ALTER TABLE users ADD COLUMN deactivated_at TIMESTAMP;

-- One-time password reset links an admin issues (no e-mail server needed).
CREATE TABLE password_resets (
    token_hash TEXT PRIMARY KEY,
    user_id BIGINT NOT NULL REFERENCES users (id) ON DELETE CASCADE,
    created_by BIGINT REFERENCES users (id),
    created_at TIMESTAMP NOT NULL,
    expires_at TIMESTAMP NOT NULL,
    used_at TIMESTAMP
);

-- +goose Down
DROP TABLE password_resets;
