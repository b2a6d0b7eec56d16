-- +goose Up
-- Gateways' metric batches answered before they are folded (Prefer:
-- respond-async): a row a batch, its checked rows encoded whole. Folding a
-- batch deletes its row in the transaction that records its rows, so a
-- batch is folded once, however the process stops.
CREATE TABLE metric_inbox (
    id INTEGER PRIMARY KEY AUTOINCREMENT,
    received_at TIMESTAMP NOT NULL,
    batch BLOB NOT NULL
);

-- +goose Down
DROP TABLE metric_inbox;
