package workflow

import (
	"fmt"
	"time"

	"github.com/airside/airside/internal/apperr"
)

// The words of the filing workflow: what a person is told when a filing moves
// and what each inbox message says. The store persists these; it does not
// write its own.

// StaleBaseMessage explains a filing drafted against a fare no longer
// published.
const StaleBaseMessage = "The published fare changed after this filing was drafted, so it cannot be approved as it stands. " +
	"The carrier must refresh it against the new published fare (and resubmit)."

// ErrStaleBase refuses the approval of a filing whose base is stale.
func ErrStaleBase() error { return apperr.Errorf(apperr.ECONFLICT, "%s", StaleBaseMessage) }

// SameBase reports whether a filing drafted against fare baseID is still
// drafted against the listing's published fare currentID (nil: none).
func SameBase(baseID, currentID *int64) bool {
	return baseID == nil && currentID == nil || baseID != nil && currentID != nil && *baseID == *currentID
}

// ErrAlreadyDecided refuses a decision on a filing that is no longer
// submitted, naming who decided it when someone did.
func ErrAlreadyDecided(deciderEmail string, state State) error {
	if deciderEmail != "" {
		return apperr.Errorf(apperr.ECONFLICT, "Already decided by %s: the filing is %s.", deciderEmail, state.Label())
	}
	return apperr.Errorf(apperr.ECONFLICT, "This filing is %s, not awaiting review.", state.Label())
}

// ErrStaleDraft refuses to submit a draft whose base fare is no longer the
// published one: it could not be approved, so it is refreshed first.
func ErrStaleDraft(filingID int64) error {
	e := apperr.Errorf(apperr.ECONFLICT, "The published fare changed after this draft was made, so a reviewer could not approve it. Refresh it against the new published fare, check the change summary, then submit.")
	e.Ref = filingID
	return e
}

// ErrChangedSinceOpened refuses a decision made on a page that showed an
// older version of the filing; Ref links the filing as it is now.
func ErrChangedSinceOpened(filingID int64) error {
	e := apperr.Errorf(apperr.ECONFLICT, "This filing changed since you opened it: reload it to see what it proposes now, then decide.")
	e.Ref = filingID
	return e
}

// ErrChangedMeanwhile refuses a change that lost a race with another one.
func ErrChangedMeanwhile() error {
	return apperr.Errorf(apperr.ECONFLICT, "This filing changed at the same moment; reload it to see its state.")
}

// ErrEditedSinceOpened refuses an edit made on a form opened before someone
// else's edit.
func ErrEditedSinceOpened() error {
	return apperr.Errorf(apperr.ECONFLICT, "This filing was changed since you opened it. Reload it to see the changes, then edit again.")
}

// Outcome is what the reviewer is told after a decision that moved a filing
// to state s.
func Outcome(s State) string {
	switch s {
	case Published:
		return "Approved and published to routing."
	case Scheduled:
		return "Approved; it will be published on its effective date."
	case Rejected:
		return "Rejected; the carrier has been told why."
	case ChangesRequested:
		return "Sent back to the carrier for changes."
	case Submitted: // an approval that did not decide: the first of two
		return "Your approval is recorded. This change moves a price threefold or more: a second reviewer must approve it before it is published."
	}
	return "Filing " + s.Label() + "."
}

// FilingLabel names a filing in messages: "#12 (Nebula Inference, Kimi K2.5)".
func FilingLabel(id int64, carrier, model string) string {
	return fmt.Sprintf("#%d (%s, %s)", id, carrier, model)
}

// ErrNothingChanged refuses to submit a fare equal to the published one.
func ErrNothingChanged() error {
	return apperr.Errorf(apperr.ECONFLICT, "This fare is the one published: change a price, a lever, a cap or a capability before submitting it for review (you can still save it as a draft).")
}

// Inbox messages, one function per event.

// NoticeSubmitted tells reviewers a filing awaits them.
func NoticeSubmitted(label string, from State) string {
	if from == ChangesRequested {
		return "Filing " + label + " was resubmitted after changes."
	}
	return "New filing " + label + " awaits review."
}

// NoticeWithdrawn tells reviewers a filing they had was withdrawn.
func NoticeWithdrawn(label string) string {
	return "Filing " + label + " was withdrawn by the carrier."
}

// NoticeDecided tells the carrier what a reviewer decided.
func NoticeDecided(label string, next State, effectiveAt *time.Time, note string) string {
	switch next {
	case Published:
		return "Filing " + label + " was approved and is now published to routing."
	case Scheduled:
		when := ""
		if effectiveAt != nil {
			when = " on " + effectiveAt.UTC().Format("2006-01-02 15:04") + " UTC"
		}
		return "Filing " + label + " was approved and will be published" + when + "."
	case Rejected:
		return "Filing " + label + " was rejected: " + note
	case ChangesRequested:
		return "Changes were requested on filing " + label + ": " + note
	}
	return "Filing " + label + " is now " + next.Label() + "."
}

// NoticeDue tells the carrier a scheduled filing took effect.
func NoticeDue(label string) string {
	return "Filing " + label + " reached its effective date and is now published to routing."
}

// NoticeComment tells the other side of a thread about a new comment.
func NoticeComment(label string) string { return "New comment on filing " + label }

// NoticeCapability tells the carrier a reviewer judged one of its flags.
func NoticeCapability(capability string, listingID int64, state string) string {
	return fmt.Sprintf("Capability %s of listing %d was marked %s.", capability, listingID, state)
}

// NoticeSecondApproval asks the other reviewers for the second approval a
// quarantined filing needs.
func NoticeSecondApproval(label string) string {
	return "Filing " + label + " moves a price threefold or more: it has one approval and needs a second, from another reviewer."
}

// NoticePreflight tells the carrier how a preflight run of its listing of
// model went.
func NoticePreflight(model string, listingID int64, passed, failed int, cachedPriceWithoutHits bool) string {
	msg := fmt.Sprintf("Preflight of %s (listing #%d) finished: %d probes passed, %d failed.", model, listingID, passed, failed)
	if cachedPriceWithoutHits {
		msg += " Your fare files a cached-input price, but the endpoint reported no cache hit: enable prefix caching or that price wins no cached traffic."
	}
	return msg
}

// NoticeOverrideContradicted tells the carrier and staff that a reviewer's
// override says a capability is verified while the latest probe of it failed.
func NoticeOverrideContradicted(listingID int64, capability string, runID int64, probeError string) string {
	return fmt.Sprintf("A reviewer's override says %s is verified on listing #%d, but preflight run #%d's %s probe failed: %s The override still counts until it expires or a reviewer changes it; check the endpoint.",
		capability, listingID, runID, capability, probeError)
}

// NoticeDelisted tells the carrier the gateway delisted a listing.
func NoticeDelisted(listingID int64, reason string) string {
	return fmt.Sprintf("Listing %d was delisted by the gateway: %s", listingID, reason)
}
