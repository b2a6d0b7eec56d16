package workflow

import (
	"time"

	"github.com/airside/airside/internal/fare"
)

// FilingFilter narrows a search of filings.
type FilingFilter struct {
	// IDs narrows to these filings.
	IDs        []int64
	ListingID  int64
	CarrierIDs []int64 // nil: every carrier
	States     []State
	// CarrierID, ModelID and Kind narrow the review queue.
	CarrierID   int64
	ModelID     int64
	Kind        fare.Kind
	OldestFirst bool
	Limit       int
}

// ThreadMessage is one comment in a filing's thread.
type ThreadMessage struct {
	ID          int64
	AuthorEmail string
	AuthorStaff bool
	Body        string
	At          time.Time
}

// Notification is one inbox message.
type Notification struct {
	ID       int64
	FilingID *int64
	Message  string
	At       time.Time
	Read     bool
}

// Override is a reviewer's verdict on a capability flag, which stands over
// the preflight probes' until changed.
type Override struct {
	State string
	Note  string
	At    time.Time
	// By is the reviewer who set it; Until is when it stops counting (then
	// the probes decide again); Expired is set once it has.
	By      string
	Until   time.Time
	Expired bool
}

// DefaultOverrideFor is how long a reviewer's override of a probe verdict
// counts unless configured (AIRSIDE_OVERRIDE_FOR).
const DefaultOverrideFor = 30 * 24 * time.Hour

// NewEndpoint is an endpoint registration as the store records it, decided
// by Endpoints.Register: the key already sealed (the one registered last
// when none was typed), filed for review at once, with a preflight queued.
type NewEndpoint struct {
	ListingID     int64
	BaseURL       string
	UpstreamModel string
	KeySealed     string
	KeyHint       string
	Justification string
	// ViaToken names the API token it came by ("" from the browser).
	ViaToken string
}
