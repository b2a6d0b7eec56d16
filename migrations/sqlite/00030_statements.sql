-- +goose Up
-- Payout statements (issue 53): a carrier's month, frozen and numbered once
-- its figures can no longer move (ST-000001 is row 1), never edited.
CREATE TABLE statements (
    id INTEGER PRIMARY KEY AUTOINCREMENT,
    carrier_id BIGINT NOT NULL REFERENCES carriers (id) ON DELETE CASCADE,
    month TEXT NOT NULL,
    issued_at TIMESTAMP NOT NULL,
    body TEXT NOT NULL,
    kept_micros BIGINT NOT NULL,
    landing_fee_micros BIGINT NOT NULL
);
CREATE UNIQUE INDEX statements_one_per_month ON statements (carrier_id, month);

-- Corrections to an issued statement: the difference, as a note of its own
-- (CN-000001 is row 1), the statement's seq-th.
CREATE TABLE credit_notes (
    id INTEGER PRIMARY KEY AUTOINCREMENT,
    statement_id BIGINT NOT NULL REFERENCES statements (id) ON DELETE CASCADE,
    seq BIGINT NOT NULL,
    issued_at TIMESTAMP NOT NULL,
    reason TEXT NOT NULL,
    body TEXT NOT NULL,
    kept_micros BIGINT NOT NULL
);
CREATE UNIQUE INDEX credit_notes_seq ON credit_notes (statement_id, seq);

-- +goose Down
DROP TABLE credit_notes;
DROP TABLE statements;
