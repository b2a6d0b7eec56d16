// Package workflow is the filing state machine: what a filing can become,
// and who may move it. Carriers draft, submit and withdraw; reviewers decide;
// nothing reaches routing before approval, and no one decides their own
// filing or one of their own carrier.
package workflow

import (
	"slices"
	"time"

	"github.com/airside/airside/internal/apperr"
	"github.com/airside/airside/internal/catalogue"
	"github.com/airside/airside/internal/fare"
)

// State is where a filing is.
type State string

// The filing states.
const (
	Draft            State = "draft"
	Submitted        State = "submitted"
	ChangesRequested State = "changes_requested"
	// Scheduled is approved, waiting for its effective date.
	Scheduled State = "scheduled"
	Published State = "published"
	Rejected  State = "rejected"
	Withdrawn State = "withdrawn"
)

// InFlightStates are the states of the one filing a listing may have under
// way; the database enforces it with a partial unique index.
var InFlightStates = []State{Submitted, ChangesRequested, Scheduled}

// InFlight reports whether the filing is under way (submitted, sent back for
// changes, or approved and waiting for its date).
func (s State) InFlight() bool { return slices.Contains(InFlightStates, s) }

// Open reports whether the carrier can still edit the filing.
func (s State) Open() bool { return s == Draft || s == ChangesRequested }

// Label is the state as a person reads it.
func (s State) Label() string {
	switch s {
	case Submitted:
		return "pending review"
	case ChangesRequested:
		return "changes requested"
	case Scheduled:
		return "approved, scheduled"
	}
	return string(s)
}

// Action is something done to a filing.
type Action string

// The actions.
const (
	Save           Action = "save"
	Submit         Action = "submit"
	Withdraw       Action = "withdraw"
	Approve        Action = "approve"
	Reject         Action = "reject"
	RequestChanges Action = "request_changes"
	Comment        Action = "comment"
)

// transition is where an action may start and where it leads.
type transition struct {
	from []State
	to   State // "" keeps the state
}

var transitions = map[Action]transition{
	Save:   {from: []State{Draft, ChangesRequested}},
	Submit: {from: []State{Draft, ChangesRequested}, to: Submitted},
	// A scheduled filing may be withdrawn until it takes effect: the carrier
	// cancels it (PublishDue only publishes what is still scheduled).
	Withdraw:       {from: []State{Draft, Submitted, ChangesRequested, Scheduled}, to: Withdrawn},
	Approve:        {from: []State{Submitted}, to: Published}, // or Scheduled, by date
	Reject:         {from: []State{Submitted}, to: Rejected},
	RequestChanges: {from: []State{Submitted}, to: ChangesRequested},
	Comment:        {from: []State{Draft, Submitted, ChangesRequested, Scheduled, Published, Rejected, Withdrawn}},
}

// From lists the states an action may start from.
func From(a Action) []State { return transitions[a].from }

// Next returns the state an action leads to from s, or ECONFLICT when the
// action does not apply there.
func Next(s State, a Action) (State, error) {
	t, ok := transitions[a]
	if !ok {
		return "", apperr.Errorf(apperr.EINVALID, "Unknown action %q.", a)
	}
	if !slices.Contains(t.from, s) {
		return "", apperr.Errorf(apperr.ECONFLICT, "A filing that is %s cannot be %s.", s.Label(), actionPast[a])
	}
	if t.to == "" {
		return s, nil
	}
	return t.to, nil
}

var actionPast = map[Action]string{
	Save: "edited", Submit: "submitted", Withdraw: "withdrawn", Approve: "approved", Reject: "rejected",
	RequestChanges: "sent back for changes", Comment: "commented on",
}

// Filing is a proposed change to a listing.
type Filing struct {
	ID          int64
	ListingID   int64
	CarrierID   int64
	CarrierSlug string
	CarrierName string
	Model       catalogue.Model
	Kinds       []fare.Kind
	State       State
	// Fare is the proposed fare; nil for a pause or resume.
	Fare *fare.Fare
	// Base is the published fare the filing was drafted against (nil for a
	// listing never published).
	Base       *fare.Fare
	BaseFareID *int64
	// CurrentFareID is the listing's published fare now.
	CurrentFareID *int64
	TargetStatus  catalogue.ListingStatus // for a pause or resume
	// Endpoint is the deployment an endpoint filing registers, and
	// BaseEndpoint the one published now (nil for the first).
	Endpoint      *catalogue.Endpoint
	BaseEndpoint  *catalogue.Endpoint
	Justification string
	EffectiveAt   *time.Time
	AuthorID      int64
	AuthorEmail   string
	// ViaToken names the carrier API token a filing came by ("" for one
	// made in the browser).
	ViaToken     string
	DecidedBy    *int64
	DeciderEmail string
	DecidedAt    *time.Time
	DecisionNote string
	PublishedAt  *time.Time
	SubmittedAt  *time.Time
	LockVersion  int64
	CreatedAt    time.Time
	UpdatedAt    time.Time
}

// StaleBase reports whether the listing's published fare changed after the
// filing was drafted: such a filing cannot be approved until refreshed.
func (f *Filing) StaleBase() bool {
	return !SameBase(f.BaseFareID, f.CurrentFareID) && f.State != Published && f.State != Scheduled
}

// IsPause reports whether the filing pauses or resumes the listing.
func (f *Filing) IsPause() bool { return slices.Contains(f.Kinds, fare.KindPause) }

// IsEndpoint reports whether the filing registers an endpoint.
func (f *Filing) IsEndpoint() bool { return slices.Contains(f.Kinds, fare.KindEndpoint) }

// Changes is the filing's change summary against its base.
func (f *Filing) Changes() []fare.Change {
	if f.IsEndpoint() && f.Endpoint != nil {
		old := f.BaseEndpoint
		if old == nil {
			old = &catalogue.Endpoint{}
		}
		var out []fare.Change
		for _, c := range []struct{ field, label, a, b string }{
			{"base_url", "Endpoint URL", old.BaseURL, f.Endpoint.BaseURL},
			{"upstream_model", "Upstream model", old.UpstreamModel, f.Endpoint.UpstreamModel},
			{"api_key", "API key", old.KeyHint, f.Endpoint.KeyHint},
		} {
			if c.a != c.b {
				out = append(out, fare.Change{Field: c.field, Label: c.label, Kind: fare.KindEndpoint, Old: c.a, New: c.b})
			}
		}
		return out
	}
	if f.IsPause() {
		// A pause is filed for a listing in service, a resume for a paused
		// one: the status it leaves is the other (issue 29 L11).
		from := catalogue.StatusInService
		if f.TargetStatus == catalogue.StatusInService {
			from = catalogue.StatusPaused
		}
		return []fare.Change{{Field: "status", Label: "Status", Kind: fare.KindPause, Old: from.Label(), New: f.TargetStatus.Label()}}
	}
	if f.Fare == nil {
		return nil
	}
	return fare.Diff(f.Base, f.Fare)
}
