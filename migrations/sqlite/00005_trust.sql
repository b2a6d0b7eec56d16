-- +goose Up
-- Login throttling by reservation: one row per subject ("account:EMAIL",
-- "addr:IP", "device:HASH"), changed only by compare-and-swap on attempts, so
-- parallel guesses cannot all read a count still under the limit.
CREATE TABLE login_throttles (
    subject TEXT PRIMARY KEY,
    attempts BIGINT NOT NULL,
    window_start TIMESTAMP NOT NULL,
    next_allowed_at TIMESTAMP NOT NULL,
    updated_at TIMESTAMP NOT NULL
);
CREATE INDEX login_throttles_next ON login_throttles (next_allowed_at);
DROP TABLE login_failures;

-- Browsers a user has logged in from: the right password from one of them is
-- not held back by failures an attacker caused on the account.
CREATE TABLE known_devices (
    token_hash TEXT PRIMARY KEY,
    user_id BIGINT NOT NULL REFERENCES users (id) ON DELETE CASCADE,
    created_at TIMESTAMP NOT NULL
);
CREATE INDEX known_devices_user ON known_devices (user_id);

-- The audit trail is append-only.
-- +goose StatementBegin
CREATE TRIGGER audit_events_no_update BEFORE UPDATE ON audit_events
BEGIN
    SELECT RAISE(ABORT, 'audit_events is append-only');
END;
-- +goose StatementEnd
-- +goose StatementBegin
CREATE TRIGGER audit_events_no_delete BEFORE DELETE ON audit_events
BEGIN
    SELECT RAISE(ABORT, 'audit_events is append-only');
END;
-- +goose StatementEnd

-- +goose Down
DROP TRIGGER audit_events_no_delete;
DROP TRIGGER audit_events_no_update;
DROP TABLE known_devices;
CREATE TABLE login_failures (
    id INTEGER PRIMARY KEY AUTOINCREMENT,
    subject TEXT NOT NULL,
    at TIMESTAMP NOT NULL
);
CREATE INDEX login_failures_subject ON login_failures (subject, at);
DROP TABLE login_throttles;
