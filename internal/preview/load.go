package preview

import (
	"context"

	"github.com/airside/airside/internal/catalogue"
)

// MarketSource is what loading a market needs from storage.
type MarketSource interface {
	FindListings(ctx context.Context, f catalogue.ListingFilter) ([]catalogue.Listing, error)
	FindCapabilityChecksFor(ctx context.Context, listingIDs []int64) (map[int64]map[string]string, error)
}

// LoadMarket reads the listings a filter selects with their capability
// verdicts: the one way a model's market is loaded, for the preview, the
// reviewer's impact table, the catalogue API and elect alike.
func LoadMarket(ctx context.Context, src MarketSource, f catalogue.ListingFilter) (Market, error) {
	listings, err := src.FindListings(ctx, f)
	if err != nil {
		return Market{}, err
	}
	ids := make([]int64, len(listings))
	for i, l := range listings {
		ids[i] = l.ID
	}
	checks, err := src.FindCapabilityChecksFor(ctx, ids)
	if err != nil {
		return Market{}, err
	}
	return Market{Listings: listings, Checks: checks}, nil
}
