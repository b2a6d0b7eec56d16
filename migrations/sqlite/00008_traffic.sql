-- +goose Up
-- Requests the gateway skipped because a listing was at its rate cap: not
-- served, so not in requests; what "raise the cap" pages read.
ALTER TABLE metric_buckets ADD COLUMN capped BIGINT NOT NULL DEFAULT 0;
ALTER TABLE metric_hourly ADD COLUMN capped BIGINT NOT NULL DEFAULT 0;

-- Which fare was in force from when: every publication of a fare, so
-- earnings use the fare published at each hour.
CREATE TABLE fare_history (
    listing_id BIGINT NOT NULL REFERENCES listings (id) ON DELETE CASCADE,
    fare_id BIGINT NOT NULL REFERENCES fares (id),
    from_at TIMESTAMP NOT NULL,
    PRIMARY KEY (listing_id, from_at, fare_id)
);
INSERT INTO fare_history (listing_id, fare_id, from_at)
    SELECT listing_id, fare_id, published_at FROM filings
    WHERE state = 'published' AND fare_id IS NOT NULL AND published_at IS NOT NULL;
INSERT INTO fare_history (listing_id, fare_id, from_at)
    SELECT l.id, l.published_fare_id, f.created_at FROM listings l JOIN fares f ON f.id = l.published_fare_id
    WHERE NOT EXISTS (SELECT 1 FROM fare_history h WHERE h.fare_id = l.published_fare_id);

-- +goose Down
DROP TABLE fare_history;
ALTER TABLE metric_hourly DROP COLUMN capped;
ALTER TABLE metric_buckets DROP COLUMN capped;
