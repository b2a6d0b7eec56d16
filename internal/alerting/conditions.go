package alerting

import "time"

// Condition is where one rule stands for one listing: whether its
// condition holds, and since when it has held (or stayed clear) without a
// break. The evaluator keeps it between passes (and between processes) so
// that an alert opens only once its condition has held for the rule's
// OpenAfter and resolves only once it has stayed clear for its CloseAfter.
type Condition struct {
	ListingID int64
	Kind      Kind
	Holds     bool
	Since     time.Time
}

// Action is what an alert does at one pass.
type Action int

// The actions of Step.
const (
	// Nothing changes.
	Nothing Action = iota
	// Open opens a new alert.
	Open
	// Fold reopens the alert that resolved within FoldWindow: the
	// condition is flapping, and the carrier hears of it once.
	Fold
	// Resolve resolves the open alert: its condition stayed clear.
	Resolve
	// Retire resolves the open alert of a rule the carrier turned off,
	// quietly.
	Retire
)

// Step decides what one rule's alert on one listing does now, from the
// carrier's setting, the condition, the alert open now (nil: none) and
// the alert of the same rule and listing that resolved last within
// FoldWindow (nil: none).
func Step(s Setting, c Condition, open, resolved *Alert, now time.Time) Action {
	held := now.Sub(c.Since)
	switch {
	case !s.On:
		if open != nil {
			return Retire
		}
		return Nothing
	case c.Holds && open == nil && held >= s.OpenAfter:
		if resolved != nil && resolved.ResolvedAt != nil && now.Sub(*resolved.ResolvedAt) < FoldWindow {
			return Fold
		}
		return Open
	case !c.Holds && open != nil:
		need := s.CloseAfter
		if open.Flaps > 0 && need < FoldWindow {
			need = FoldWindow // a flapping alert resolves once it is truly quiet
		}
		if held >= need {
			return Resolve
		}
	}
	return Nothing
}
