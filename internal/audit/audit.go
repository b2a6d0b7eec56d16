// Package audit is the audit trail as the portal reads it: every change with
// who, what, when and before/after. Events are written by the store in the
// same transaction as the change they record, and never changed after.
package audit

import "time"

// Event is one audited change.
type Event struct {
	ID          int64
	At          time.Time
	ActorEmail  string
	CarrierSlug string
	Action      string
	SubjectType string
	SubjectID   int64
	Before      string
	After       string
}

// Filter narrows a search of the trail.
type Filter struct {
	// CarrierIDs limits to these carriers' events; nil means all.
	CarrierIDs []int64
	// SubjectType and SubjectID narrow to one object's events when set.
	SubjectType string
	SubjectID   int64
	// Actor narrows to one person's events (their email), Action to one
	// kind ("filing.approve") or a family ("filing."), CarrierSlug to one
	// carrier, and Since and Until to a period.
	Actor       string
	Action      string
	CarrierSlug string
	Since       time.Time
	Until       time.Time
	// Limit and Offset page through the newest first.
	Limit  int
	Offset int
}
