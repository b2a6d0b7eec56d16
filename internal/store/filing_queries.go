package store

import (
	"context"
	"fmt"
	"strings"

	"gorm.io/gorm"
	"gorm.io/gorm/clause"

	"github.com/airside/airside/internal/apperr"
	"github.com/airside/airside/internal/catalogue"
	"github.com/airside/airside/internal/fare"
	"github.com/airside/airside/internal/workflow"
)

func parseKinds(s string) []fare.Kind {
	var kinds []fare.Kind
	for _, k := range strings.Split(s, ",") {
		if k != "" {
			kinds = append(kinds, fare.Kind(k))
		}
	}
	return kinds
}

// FindFiling finds one filing; outside carrierIDs (when given) it is not found.
func (s *Store) FindFiling(ctx context.Context, id int64, carrierIDs []int64) (*workflow.Filing, error) {
	var out []workflow.Filing
	err := s.readTx(ctx, func(tx *gorm.DB) error {
		var err error
		out, err = findFilings(tx, workflow.FilingFilter{CarrierIDs: carrierIDs}, id)
		return err
	})
	if err != nil {
		return nil, fmt.Errorf("find filing %d: %w", id, err)
	}
	if len(out) == 0 {
		return nil, apperr.Errorf(apperr.ENOTFOUND, "Filing not found.")
	}
	return &out[0], nil
}

// FindFilings lists filings, newest first.
func (s *Store) FindFilings(ctx context.Context, f workflow.FilingFilter) ([]workflow.Filing, error) {
	var out []workflow.Filing
	err := s.readTx(ctx, func(tx *gorm.DB) error {
		var err error
		out, err = findFilings(tx, f, 0)
		return err
	})
	if err != nil {
		return nil, fmt.Errorf("find filings: %w", err)
	}
	return out, nil
}

func findFilings(tx *gorm.DB, f workflow.FilingFilter, id int64) ([]workflow.Filing, error) {
	var rows []struct {
		Row           filingRow `gorm:"embedded"`
		CarrierID     int64
		CarrierSlug   string
		CarrierName   string
		ModelID       int64
		ModelSlug     string
		ModelName     string
		ContextTokens int64
		AuthorEmail   string
		DeciderEmail  string
		CurrentFareID *int64
		// CurrentEndpointID is the listing's published endpoint now.
		CurrentEndpointID *int64
	}
	q := tx.Table("filings").Select(`filings.*, listings.carrier_id, carriers.slug AS carrier_slug, carriers.name AS carrier_name,
		models.id AS model_id, models.slug AS model_slug, models.name AS model_name, models.context_tokens,
		authors.email AS author_email, COALESCE(deciders.email, '') AS decider_email,
		listings.published_fare_id AS current_fare_id, listings.endpoint_id AS current_endpoint_id`).
		Joins("JOIN listings ON listings.id = filings.listing_id").
		Joins("JOIN carriers ON carriers.id = listings.carrier_id").
		Joins("JOIN models ON models.id = listings.model_id").
		Joins("JOIN users authors ON authors.id = filings.author_id").
		Joins("LEFT JOIN users deciders ON deciders.id = filings.decided_by")
	if !f.OldestFirst {
		q = q.Order("filings.id DESC")
	}
	if f.CarrierIDs != nil {
		q = q.Where("listings.carrier_id IN ?", append(f.CarrierIDs, -1))
	}
	if len(f.IDs) > 0 {
		q = q.Where("filings.id IN ?", f.IDs)
	}
	if f.ListingID != 0 {
		q = q.Where("filings.listing_id = ?", f.ListingID)
	}
	if len(f.States) > 0 {
		q = q.Where("filings.state IN ?", f.States)
	}
	if f.CarrierID != 0 {
		q = q.Where("listings.carrier_id = ?", f.CarrierID)
	}
	if f.ModelID != 0 {
		q = q.Where("listings.model_id = ?", f.ModelID)
	}
	if f.Kind != "" {
		// kinds is a short comma-separated list; match it whole-word.
		q = q.Where("(',' || filings.kinds || ',') LIKE ?", "%,"+string(f.Kind)+",%")
	}
	if f.OldestFirst {
		q = q.Order(clause.OrderByColumn{Column: clause.Column{Name: "filings.submitted_at"}}).Order("filings.id")
	}
	if id != 0 {
		q = q.Where("filings.id = ?", id)
	}
	if f.Limit > 0 {
		q = q.Limit(f.Limit)
	}
	if err := q.Scan(&rows).Error; err != nil {
		return nil, err
	}
	var fareIDs []int64
	for _, r := range rows {
		for _, id := range []*int64{r.Row.FareID, r.Row.BaseFareID} {
			if id != nil {
				fareIDs = append(fareIDs, *id)
			}
		}
	}
	fares, err := loadFares(tx, fareIDs)
	if err != nil {
		return nil, err
	}
	var endpointIDs []int64
	for _, r := range rows {
		for _, id := range []*int64{r.Row.EndpointID, r.CurrentEndpointID} {
			if id != nil {
				endpointIDs = append(endpointIDs, *id)
			}
		}
	}
	endpoints := map[int64]*endpointRow{}
	if len(endpointIDs) > 0 {
		var eps []endpointRow
		if err := tx.Where("id IN ?", endpointIDs).Find(&eps).Error; err != nil {
			return nil, err
		}
		for i := range eps {
			endpoints[eps[i].ID] = &eps[i]
		}
	}
	out := make([]workflow.Filing, len(rows))
	for i, r := range rows {
		fr := r.Row
		out[i] = workflow.Filing{
			ID: fr.ID, ListingID: fr.ListingID, CarrierID: r.CarrierID, CarrierSlug: r.CarrierSlug, CarrierName: r.CarrierName,
			Model: catalogue.Model{ID: r.ModelID, Slug: r.ModelSlug, Name: r.ModelName, ContextTokens: r.ContextTokens},
			Kinds: parseKinds(fr.Kinds), State: workflow.State(fr.State), BaseFareID: fr.BaseFareID, CurrentFareID: r.CurrentFareID,
			TargetStatus: catalogue.ListingStatus(fr.TargetStatus), Justification: fr.Justification, EffectiveAt: fr.EffectiveAt,
			AuthorID: fr.AuthorID, AuthorEmail: r.AuthorEmail, ViaToken: fr.ViaToken, DecidedBy: fr.DecidedBy, DeciderEmail: r.DeciderEmail,
			DecidedAt: fr.DecidedAt, DecisionNote: fr.DecisionNote, PublishedAt: fr.PublishedAt, SubmittedAt: fr.SubmittedAt,
			LockVersion: fr.LockVersion, CreatedAt: fr.CreatedAt, UpdatedAt: fr.UpdatedAt,
		}
		if fr.FareID != nil {
			out[i].Fare = fares[*fr.FareID]
		}
		if fr.BaseFareID != nil {
			out[i].Base = fares[*fr.BaseFareID]
		}
		if fr.EndpointID != nil && endpoints[*fr.EndpointID] != nil {
			out[i].Endpoint = endpoints[*fr.EndpointID].domain()
			if r.CurrentEndpointID != nil && *r.CurrentEndpointID != *fr.EndpointID && endpoints[*r.CurrentEndpointID] != nil {
				out[i].BaseEndpoint = endpoints[*r.CurrentEndpointID].domain()
			}
		}
	}
	return out, nil
}

// InFlightFilings maps listing ids to their filing in flight.
func (s *Store) InFlightFilings(ctx context.Context, carrierIDs []int64) (map[int64]workflow.Filing, error) {
	filings, err := s.FindFilings(ctx, workflow.FilingFilter{CarrierIDs: carrierIDs, States: workflow.InFlightStates})
	if err != nil {
		return nil, err
	}
	out := map[int64]workflow.Filing{}
	for _, f := range filings {
		out[f.ListingID] = f
	}
	return out, nil
}
