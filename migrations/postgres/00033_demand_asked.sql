-- +goose Up
-- What a demand row's requests asked for besides the model (election.md
-- sec. 7: zero data retention, a quantization, a region, a context or an
-- output above a line), one row per key, counting the row's requests that
-- asked it; written with its demand row (the first write wins) and kept as
-- long.
CREATE TABLE demand_asked (
    model_slug TEXT NOT NULL,
    workload TEXT NOT NULL,
    minute TIMESTAMP NOT NULL,
    source TEXT NOT NULL,
    streaming SMALLINT NOT NULL,
    requires TEXT NOT NULL,
    asked TEXT NOT NULL,
    requests BIGINT NOT NULL,
    PRIMARY KEY (model_slug, minute, workload, source, streaming, requires, asked)
);
CREATE INDEX demand_asked_minute ON demand_asked (minute);

-- +goose Down
DROP TABLE demand_asked;
