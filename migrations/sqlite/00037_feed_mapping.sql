-- +goose Up
-- Which of its listings each model of a carrier's provider feed files to,
-- where the carrier chose (JSON: feed model id -> listing id, 0 for "not
-- imported"; a model absent is matched by its slug), and the models the
-- last good read found (JSON array), for the page to map them.
ALTER TABLE carrier_feeds ADD COLUMN mapping TEXT NOT NULL DEFAULT '{}';
ALTER TABLE carrier_feeds ADD COLUMN models TEXT NOT NULL DEFAULT '[]';

-- +goose Down
ALTER TABLE carrier_feeds DROP COLUMN models;
ALTER TABLE carrier_feeds DROP COLUMN mapping;
