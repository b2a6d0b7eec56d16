package web

import (
	"context"
)

// Reads is everything pages and the API read, for the one implementation
// that has it all (the store, in cmd/airside/wire). Handlers depend on the
// small interface of their resource, declared beside them; none of them
// has a method that changes anything: every change goes through a service
// (workflow, account, apitoken, catalogue ingest), which decides and
// audits it.
type Reads interface {
	HealthReads
	AccountReads
	ListingReads
	FilingReads
	TrafficReads
	StorefrontReads
	AlertReads
	OnCallReads
	OrgReads
}

// Publications announces catalogue revisions published by any process.
type Publications interface {
	// Published returns a channel closed at the next publication.
	Published() <-chan struct{}
	// ListenForPublications relays other processes' publications until ctx
	// ends (LISTEN/NOTIFY on PostgreSQL).
	ListenForPublications(ctx context.Context, onError func(error))
}
