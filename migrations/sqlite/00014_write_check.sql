-- +goose Up
-- One row that /readyz rewrites to prove the database takes writes: a ping
-- answers on a full disk or a read-only file (or a read-only replica), a
-- write does not.
CREATE TABLE write_checks (
    id INTEGER PRIMARY KEY,
    checked_at TIMESTAMP NOT NULL
);

-- +goose Down
DROP TABLE write_checks;
