-- +goose Up
CREATE TABLE notifications (
    id INTEGER PRIMARY KEY AUTOINCREMENT,
    user_id BIGINT NOT NULL REFERENCES users (id) ON DELETE CASCADE,
    filing_id BIGINT REFERENCES filings (id),
    message TEXT NOT NULL,
    created_at TIMESTAMP NOT NULL,
    read_at TIMESTAMP
);
CREATE INDEX notifications_user ON notifications (user_id, read_at);
CREATE INDEX filings_due ON filings (state, effective_at);

-- +goose Down
DROP INDEX filings_due;
DROP TABLE notifications;
