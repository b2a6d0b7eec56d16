-- +goose Up
-- The first of the two approvals a quarantined filing (a price moved x3 or
-- more) needs, per version of the filing: a resubmitted filing starts over.
CREATE TABLE filing_approvals (
    filing_id BIGINT NOT NULL REFERENCES filings (id) ON DELETE CASCADE,
    reviewer_id BIGINT NOT NULL REFERENCES users (id),
    lock_version BIGINT NOT NULL,
    at TIMESTAMP NOT NULL,
    PRIMARY KEY (filing_id, reviewer_id, lock_version)
);

-- +goose Down
DROP TABLE filing_approvals;
