package web

import (
	"context"
	"time"

	"github.com/airside/airside/internal/account"
	"github.com/airside/airside/internal/alerting"
	"github.com/airside/airside/internal/audit"
	"github.com/airside/airside/internal/catalogue"
	"github.com/airside/airside/internal/earnings"
	"github.com/airside/airside/internal/preflight"
	"github.com/airside/airside/internal/storefront"
	"github.com/airside/airside/internal/workflow"
)

// Reads is what pages and the API read. It has no method that changes
// anything: every change goes through a service (workflow, account,
// apitoken, catalogue ingest), which decides and audits it.
type Reads interface {
	Ping(ctx context.Context) error
	// CheckWrite proves the database takes a write (readyz, and the error
	// page telling a full disk from a bug).
	CheckWrite(ctx context.Context) error
	FindPrincipal(ctx context.Context, userID int64) (*account.Principal, error)
	FindUsers(ctx context.Context) ([]account.UserSummary, error)
	FindCarriers(ctx context.Context) ([]account.CarrierSummary, error)
	FindAuditEvents(ctx context.Context, f audit.Filter) ([]audit.Event, error)
	FindModels(ctx context.Context) ([]catalogue.Model, error)
	FindListings(ctx context.Context, f catalogue.ListingFilter) ([]catalogue.Listing, error)
	FindListingEntries(ctx context.Context, carrierIDs []int64) ([]catalogue.ListingEntry, error)
	FindListing(ctx context.Context, id int64, carrierIDs []int64) (*catalogue.Listing, error)
	FindListingHeader(ctx context.Context, id int64, carrierIDs []int64) (*catalogue.Listing, error)
	FindCapabilityChecks(ctx context.Context, listingID int64) (map[string]string, error)
	FindPreflightRuns(ctx context.Context, listingID, endpointID int64) (*preflight.Run, map[string]preflight.Result, error)
	FindCapabilityOverrides(ctx context.Context, listingID int64) (map[string]workflow.Override, error)
	DemandShapes(ctx context.Context, model string, since time.Time, largeFrom int64) (map[string]catalogue.WorkloadDemand, error)
	PeerTraffic(ctx context.Context, modelID, exceptListing int64, since, until time.Time) (catalogue.HourlyPoint, error)
	FindCapabilityChecksFor(ctx context.Context, listingIDs []int64) (map[int64]map[string]string, error)
	FindFiling(ctx context.Context, id int64, carrierIDs []int64) (*workflow.Filing, error)
	FindFilings(ctx context.Context, f workflow.FilingFilter) ([]workflow.Filing, error)
	InFlightFilings(ctx context.Context, carrierIDs []int64) (map[int64]workflow.Filing, error)
	FindComments(ctx context.Context, filingID int64) ([]workflow.ThreadMessage, error)
	CountUnread(ctx context.Context, userID int64) (int, error)
	CountAwaitingReview(ctx context.Context) (int, error)
	CatalogueRevision(ctx context.Context) (int64, error)
	MetricSeries(ctx context.Context, listingID int64, since time.Time, step time.Duration) ([]catalogue.SeriesPoint, error)
	HourlyTraffic(ctx context.Context, listingIDs []int64, since, until time.Time) (map[int64][]catalogue.HourlyPoint, error)
	ModelTraffic(ctx context.Context, modelIDs []int64, since, until time.Time) (map[int64]map[time.Time]int64, error)
	ModelTotals(ctx context.Context, modelIDs []int64, since, until time.Time) (map[int64]int64, error)
	FareHistory(ctx context.Context, listingIDs []int64) (map[int64][]earnings.FareSpan, error)
	FindProfile(ctx context.Context, carrierID int64) (*storefront.Profile, error)
	FindProfileBySlug(ctx context.Context, slug string) (*storefront.Profile, error)
	FindLogo(ctx context.Context, slug string) ([]byte, string, error)
	PendingProfileChanges(ctx context.Context) ([]storefront.ProfileChange, error)
	LatestProfileChange(ctx context.Context, carrierID int64) (*storefront.ProfileChange, error)
	FindProfileChange(ctx context.Context, id int64) (*storefront.ProfileChange, error)
	FindApplications(ctx context.Context) ([]storefront.Application, error)
	FindApplication(ctx context.Context, id int64) (*storefront.Application, []storefront.Message, error)
	FindProposals(ctx context.Context, carrierIDs []int64) ([]storefront.Proposal, error)
	ApproverEmails(ctx context.Context, filingID, lockVersion int64) ([]string, error)
	FindAlerts(ctx context.Context, carrierID int64, limit int) ([]alerting.Alert, error)
	FindWebhook(ctx context.Context, carrierID int64) (*alerting.Webhook, error)
	FindDeliveries(ctx context.Context, carrierID int64, limit int) ([]alerting.Delivery, error)
}

// Publications announces catalogue revisions published by any process.
type Publications interface {
	// Published returns a channel closed at the next publication.
	Published() <-chan struct{}
	// ListenForPublications relays other processes' publications until ctx
	// ends (LISTEN/NOTIFY on PostgreSQL).
	ListenForPublications(ctx context.Context, onError func(error))
}
