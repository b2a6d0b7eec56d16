package workflow

import (
	"slices"
	"time"

	"github.com/airside/airside/internal/fare"
)

// MoveFacts is what a filing's move reads inside the transaction that makes
// it. The store reads them; workflow decides from them (MoveOutcome), so the
// store carries out a move without deciding any of it.
type MoveFacts struct {
	// State is the filing's state before the move.
	State       State
	EffectiveAt *time.Time
	// Label names the filing in messages (FilingLabel).
	Label string
	// Base is the published fare the filing was made against, Proposed the
	// one it files (nil: none).
	Base, Proposed *fare.Fare
}

// MoveOutcome is everything a move does, as workflow decides it; the store
// carries out all of it in the move's transaction.
type MoveOutcome struct {
	Next State
	// Publish puts the filed fare into routing now.
	Publish bool
	// CarrierNotice goes to the carrier's members, ReviewerNotice to the
	// reviewers other than the actor ("" for none).
	CarrierNotice, ReviewerNotice string
	// Probe queues a preflight of the listing's latest endpoint.
	Probe bool
}

// DecisionOutcome is what a reviewer's decision makes of a submitted
// filing: an approval publishes now, or schedules the fare when its
// effective date is still ahead; the carrier is told either way.
func DecisionOutcome(m MoveFacts, action Action, note string, now time.Time) (MoveOutcome, error) {
	next, err := Next(m.State, action)
	if err != nil {
		return MoveOutcome{}, err
	}
	if action == Approve && m.EffectiveAt != nil && m.EffectiveAt.After(now) {
		next = Scheduled
	}
	return MoveOutcome{Next: next, Publish: next == Published, CarrierNotice: NoticeDecided(m.Label, next, m.EffectiveAt, note)}, nil
}

// CarrierOutcome is what a carrier's submit or withdraw does: a submission
// tells the reviewers and, when it adds something preflight must vouch for,
// asks for fresh evidence; withdrawing what reviewers were looking at (or
// had scheduled) tells them.
func CarrierOutcome(m MoveFacts, action Action) (MoveOutcome, error) {
	next, err := Next(m.State, action)
	if err != nil {
		return MoveOutcome{}, err
	}
	o := MoveOutcome{Next: next}
	switch {
	case next == Submitted:
		o.ReviewerNotice = NoticeSubmitted(m.Label, m.State)
		o.Probe = NeedsFreshEvidence(m.Base, m.Proposed)
	case next == Withdrawn && (m.State == Submitted || m.State == Scheduled):
		o.ReviewerNotice = NoticeWithdrawn(m.Label)
	}
	return o, nil
}

// NeedsFreshEvidence reports whether a filing adds a capability or a cached
// price over its base: the reviewer should judge it with a preflight run
// made for it, not with the last one.
func NeedsFreshEvidence(base, proposed *fare.Fare) bool {
	if proposed == nil {
		return false
	}
	if proposed.CachedInput != nil && (base == nil || base.CachedInput == nil) {
		return true
	}
	for _, c := range proposed.Capabilities {
		if base == nil || !slices.Contains(base.Capabilities, c) {
			return true
		}
	}
	return false
}
