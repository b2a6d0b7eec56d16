-- +goose Up
ALTER TABLE filings ADD COLUMN kinds TEXT NOT NULL DEFAULT '';
ALTER TABLE filings ADD COLUMN target_status TEXT NOT NULL DEFAULT '';
ALTER TABLE filings ADD COLUMN submitted_at TIMESTAMP;
ALTER TABLE filings ADD COLUMN decision_note TEXT NOT NULL DEFAULT '';
-- One filing in flight per listing, enforced where concurrent submits meet.
CREATE UNIQUE INDEX filings_one_in_flight ON filings (listing_id)
    WHERE state IN ('submitted', 'changes_requested', 'scheduled');
CREATE INDEX audit_events_subject ON audit_events (subject_type, subject_id);

-- +goose Down
DROP INDEX audit_events_subject;
DROP INDEX filings_one_in_flight;
ALTER TABLE filings DROP COLUMN decision_note;
ALTER TABLE filings DROP COLUMN submitted_at;
ALTER TABLE filings DROP COLUMN target_status;
ALTER TABLE filings DROP COLUMN kinds;
