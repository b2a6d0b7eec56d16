-- +goose Up
-- Alert e-mails the relay refused, kept to be sent again with growing waits
-- (the first attempt is made at once, outside this table); a row is claimed
-- by moving next_attempt_at, so two serve processes never send one twice.
CREATE TABLE alert_email_outbox (
    id INTEGER PRIMARY KEY AUTOINCREMENT,
    to_addr TEXT NOT NULL,
    subject TEXT NOT NULL,
    body TEXT NOT NULL,
    created_at TIMESTAMP NOT NULL,
    attempts INTEGER NOT NULL,
    next_attempt_at TIMESTAMP NOT NULL,
    last_error TEXT NOT NULL DEFAULT '',
    sent_at TIMESTAMP,
    gave_up_at TIMESTAMP
);
CREATE INDEX alert_email_outbox_due ON alert_email_outbox (next_attempt_at);

-- +goose Down
DROP TABLE alert_email_outbox;
