package store

import (
	"context"
	"fmt"
	"strings"
	"time"

	"gorm.io/gorm"

	"github.com/airside/airside/internal/catalogue"
	"github.com/airside/airside/internal/fare"
	"github.com/airside/airside/internal/workflow"
)

type endpointRow struct {
	ID            int64 `gorm:"primaryKey"`
	ListingID     int64
	BaseURL       string `gorm:"column:base_url"`
	UpstreamModel string
	KeySealed     string
	KeyHint       string
	CreatedBy     *int64
	CreatedAt     time.Time
}

func (endpointRow) TableName() string { return "endpoints" }

func (r *endpointRow) domain() *catalogue.Endpoint {
	return &catalogue.Endpoint{ID: r.ID, ListingID: r.ListingID, BaseURL: r.BaseURL, UpstreamModel: r.UpstreamModel,
		KeyHint: r.KeyHint, CreatedAt: r.CreatedAt}
}

// valueOf is *p, or the zero value for nil.
func valueOf[T any](p *T) T {
	var zero T
	if p == nil {
		return zero
	}
	return *p
}

// LatestEndpoint is the endpoint a listing's carrier registered last
// (published or under review), with its sealed key, or nil.
func (s *Store) LatestEndpoint(ctx context.Context, listingID int64) (*catalogue.Endpoint, string, error) {
	var row endpointRow
	if err := s.read(ctx).Where("listing_id = ?", listingID).Order("id DESC").Limit(1).Find(&row).Error; err != nil {
		return nil, "", fmt.Errorf("find endpoint of listing %d: %w", listingID, err)
	}
	if row.ID == 0 {
		return nil, "", nil
	}
	return row.domain(), row.KeySealed, nil
}

// FindEndpoint returns one endpoint (without its key).
func (s *Store) FindEndpoint(ctx context.Context, id int64) (*catalogue.Endpoint, error) {
	var row endpointRow
	if err := s.read(ctx).Where("id = ?", id).Limit(1).Find(&row).Error; err != nil {
		return nil, fmt.Errorf("find endpoint %d: %w", id, err)
	}
	if row.ID == 0 {
		return nil, nil
	}
	return row.domain(), nil
}

// PublishedKey returns a listing's published endpoint with its sealed key,
// and records the read in the audit log inside the same transaction: every
// hand-out of a key is on record (tokenID names the gateway token).
func (s *Store) PublishedKey(ctx context.Context, listingID, tokenID int64) (*catalogue.Endpoint, string, error) {
	var row endpointRow
	err := s.tx(ctx, func(tx *gorm.DB, now time.Time) error {
		var l listingRow
		if err := tx.First(&l, listingID).Error; err != nil {
			return notFound(err, "Listing")
		}
		if l.EndpointID == nil {
			return nil
		}
		if err := tx.First(&row, *l.EndpointID).Error; err != nil {
			return err
		}
		return appendAudit(tx, now, auditEvent{CarrierID: &l.CarrierID, Action: "credentials.read", SubjectType: "listing",
			SubjectID: l.ID, After: map[string]any{"tokenId": tokenID, "endpointId": row.ID, "key": row.KeyHint}})
	})
	if err != nil {
		return nil, "", fmt.Errorf("read credentials of listing %d: %w", listingID, err)
	}
	if row.ID == 0 {
		return nil, "", nil
	}
	return row.domain(), row.KeySealed, nil
}

// RegisterEndpoint records a new endpoint of a listing and files it for
// review (submitted at once), and queues a preflight of it, in one
// transaction. The audit row names the URL, model and key hint, never the
// key.
func (s *Store) RegisterEndpoint(ctx context.Context, actorID int64, ep workflow.NewEndpoint) (filingID int64, err error) {
	err = s.tx(ctx, func(tx *gorm.DB, now time.Time) error {
		var l listingRow
		if err := tx.First(&l, ep.ListingID).Error; err != nil {
			return notFound(err, "Listing")
		}
		if ep.KeySealed == "" {
			return fmt.Errorf("an endpoint without a key")
		}
		row := endpointRow{ListingID: l.ID, BaseURL: ep.BaseURL, UpstreamModel: ep.UpstreamModel, KeySealed: ep.KeySealed,
			KeyHint: ep.KeyHint, CreatedBy: &actorID, CreatedAt: now}
		if err := tx.Create(&row).Error; err != nil {
			return err
		}
		f := filingRow{ListingID: l.ID, Kind: string(fare.KindEndpoint), Kinds: string(fare.KindEndpoint),
			State: string(workflow.Submitted), BaseFareID: l.PublishedFareID, EndpointID: &row.ID, Justification: ep.Justification,
			AuthorID: actorID, ViaToken: ep.ViaToken, SubmittedAt: &now, CreatedAt: now, UpdatedAt: now}
		if err := tx.Create(&f).Error; err != nil {
			return err
		}
		filingID = f.ID
		if err := notifyReviewers(tx, now, f.ID, actorID, workflow.NoticeSubmitted(filingLabel(tx, &f), workflow.Draft)); err != nil {
			return err
		}
		if err := appendAudit(tx, now, auditEvent{ActorID: &actorID, CarrierID: &l.CarrierID, Action: "filing.submit",
			SubjectType: "filing", SubjectID: f.ID, After: map[string]any{"state": f.State, "listingId": l.ID, "kinds": f.Kinds,
				"changes": []map[string]string{{"field": "endpoint", "new": row.BaseURL + " " + row.UpstreamModel + " " + row.KeyHint}}}}); err != nil {
			return err
		}
		_, err := queueRun(tx, now, l.ID, row.ID, "registration", &actorID, now)
		return err
	})
	if err != nil {
		return 0, s.inFlightConflict(ctx, ep.ListingID, fmt.Errorf("register endpoint of listing %d: %w", ep.ListingID, err))
	}
	return filingID, nil
}

// Reseal re-encrypts every stored key with reseal (a key rotation), each
// row in its own statement; it returns how many it changed.
func (s *Store) Reseal(ctx context.Context, reseal func(sealed string, listingID int64) (string, bool, error)) (int, error) {
	var rows []endpointRow
	if err := s.read(ctx).Order("id").Find(&rows).Error; err != nil {
		return 0, fmt.Errorf("reseal: %w", err)
	}
	n := 0
	for _, r := range rows {
		next, changed, err := reseal(r.KeySealed, r.ListingID)
		if err != nil {
			return n, fmt.Errorf("reseal endpoint %d: %w", r.ID, err)
		}
		if !changed {
			continue
		}
		if err := s.db.WithContext(ctx).Model(&endpointRow{}).Where("id = ? AND key_sealed = ?", r.ID, r.KeySealed).
			Update("key_sealed", next).Error; err != nil {
			return n, fmt.Errorf("reseal endpoint %d: %w", r.ID, err)
		}
		n++
	}
	return n, nil
}

// PublishSeedEndpoint gives a listing a published endpoint without review
// (the demo's seed only) and queues its preflight, reporting whether it
// did. The demo's carriers listen where the system lets them, another port
// each start: a listing whose published endpoint is a seed endpoint (on
// loopback, with the same model and key) moves to the new address; one with
// an endpoint its carrier registered keeps it.
func (s *Store) PublishSeedEndpoint(ctx context.Context, listingID int64, baseURL, model, sealed, hint string) (bool, error) {
	published := false
	err := s.tx(ctx, func(tx *gorm.DB, now time.Time) error {
		var l listingRow
		if err := tx.First(&l, listingID).Error; err != nil {
			return notFound(err, "Listing")
		}
		if l.EndpointID != nil {
			var cur endpointRow
			if err := tx.First(&cur, *l.EndpointID).Error; err != nil {
				return err
			}
			seeded := strings.HasPrefix(cur.BaseURL, "http://127.0.0.1:") && cur.UpstreamModel == model && cur.KeyHint == hint
			if !seeded || cur.BaseURL == baseURL {
				return nil
			}
		}
		published = true
		row := endpointRow{ListingID: l.ID, BaseURL: baseURL, UpstreamModel: model, KeySealed: sealed, KeyHint: hint, CreatedAt: now}
		if err := tx.Create(&row).Error; err != nil {
			return err
		}
		if err := tx.Model(&listingRow{}).Where("id = ?", l.ID).Update("endpoint_id", row.ID).Error; err != nil {
			return err
		}
		if _, err := bumpRevision(tx, now, l.ID, fmt.Sprintf("seed endpoint of listing %d", l.ID)); err != nil {
			return err
		}
		if err := appendAudit(tx, now, auditEvent{CarrierID: &l.CarrierID, Action: "endpoint.publish.seed", SubjectType: "listing",
			SubjectID: l.ID, After: map[string]any{"endpointId": row.ID, "baseUrl": baseURL, "model": model, "key": hint}}); err != nil {
			return err
		}
		_, err := queueRun(tx, now, l.ID, row.ID, "registration", nil, now)
		return err
	})
	return published, err
}
