package workflow

import (
	"slices"
	"strings"

	"github.com/airside/airside/internal/account"
	"github.com/airside/airside/internal/apperr"
	"github.com/airside/airside/internal/catalogue"
)

// The refusals a principal meets, each written once.
var (
	errStaffDoNotFile   = apperr.Errorf(apperr.EFORBIDDEN, "Gateway staff review filings; carriers file them.")
	errAdminsManage     = apperr.Errorf(apperr.EFORBIDDEN, "Only a carrier admin can add listings, or pause or resume a listing.")
	errFilingNotFound   = apperr.Errorf(apperr.ENOTFOUND, "Filing not found.")
	errReviewersDecide  = apperr.Errorf(apperr.EFORBIDDEN, "Only reviewers decide filings.")
	errOwnFiling        = apperr.Errorf(apperr.EFORBIDDEN, "You wrote this filing: another reviewer must decide it.")
	errReviewersVerify  = apperr.Errorf(apperr.EFORBIDDEN, "Only reviewers verify capabilities.")
	errAdminsAdminister = apperr.Errorf(apperr.EFORBIDDEN, "Only gateway admins set priorities and delist listings.")
	errDelisted         = apperr.Errorf(apperr.ECONFLICT, "This listing is delisted; it takes no filings.")
)

// Scope is the carriers whose listings and filings p may see: nil (all) for
// staff, p's own carriers otherwise.
func Scope(p *account.Principal) []int64 {
	if p.IsStaff() {
		return nil
	}
	return p.CarrierIDs()
}

// CarriersInScope are the carriers whose data p may read, by name: every
// carrier (all reads them) for staff, else p's own carriers. The traffic
// pages choose among them.
func CarriersInScope(p *account.Principal, all func() ([]account.Carrier, error)) ([]account.Carrier, error) {
	var carriers []account.Carrier
	if Scope(p) == nil {
		every, err := all()
		if err != nil {
			return nil, err
		}
		carriers = slices.Clone(every)
	} else {
		for _, m := range p.Memberships {
			carriers = append(carriers, m.Carrier)
		}
	}
	slices.SortFunc(carriers, func(a, b account.Carrier) int { return strings.Compare(a.Name, b.Name) })
	return carriers, nil
}

// CanFileFor reports whether p may file for a carrier (its admins and members).
func CanFileFor(p *account.Principal, carrierID int64) bool { return p.RoleIn(carrierID) != "" }

// CanSubmitFilings reports whether p submits filings at all: carriers'
// people do, staff decide them (the filings list's batch submit).
func CanSubmitFilings(p *account.Principal) bool { return !p.IsStaff() && CanFileAny(p) }

// CanFileAny reports whether p files for any carrier at all (bulk filing).
func CanFileAny(p *account.Principal) bool { return len(p.Memberships) > 0 }

// CanManageListings reports whether p may add, pause and resume a carrier's
// listings (its admins).
func CanManageListings(p *account.Principal, carrierID int64) bool {
	return p.RoleIn(carrierID) == account.CarrierAdmin
}

// outsider reports whether p is staff of the gateway with no role in the
// carrier: the only people who may judge that carrier's work.
func outsider(p *account.Principal, carrierID int64) bool {
	return p.IsReviewer() && p.RoleIn(carrierID) == ""
}

// authorizeFiling says why p may not file for a listing, or nil.
func authorizeFiling(p *account.Principal, l *catalogue.Listing) error {
	if !CanFileFor(p, l.CarrierID) {
		if p.IsStaff() {
			return errStaffDoNotFile
		}
		return apperr.Errorf(apperr.ENOTFOUND, "Listing not found.")
	}
	if l.Status == catalogue.StatusDelisted {
		return errDelisted
	}
	return nil
}

// authorizeVerify says why p may not judge a listing's capabilities, or nil.
func authorizeVerify(p *account.Principal, l *catalogue.Listing) error {
	if !p.IsReviewer() {
		return errReviewersVerify
	}
	return notOwnCarrier(p, l, "a reviewer from outside the carrier must verify its capabilities")
}

// authorizeAdminister says why p may not set a listing's priority or delist
// it, or nil: gateway admins only, and never for a carrier they belong to.
func authorizeAdminister(p *account.Principal, l *catalogue.Listing) error {
	if !p.IsAdmin() {
		return errAdminsAdminister
	}
	return notOwnCarrier(p, l, "an admin from outside the carrier must administer its listings")
}

// notOwnCarrier refuses staff who belong to the listing's carrier: no one
// judges their own carrier's work.
func notOwnCarrier(p *account.Principal, l *catalogue.Listing, who string) error {
	if p.RoleIn(l.CarrierID) != "" {
		return apperr.Errorf(apperr.EFORBIDDEN, "You belong to %s: %s.", l.CarrierName, who)
	}
	return nil
}

// ListingActions is what a principal may do on a listing's page; a page
// shows a button only when its action is permitted here.
type ListingActions struct {
	File       bool // file a fare
	Pause      bool
	Resume     bool
	Verify     bool // judge capability flags
	Administer bool // set priority, delist
	// Endpoint files a new endpoint; Preflight runs the probes on demand.
	Endpoint  bool
	Preflight bool
}

// ListingActionsFor decides what p may do on listing l now; inFlight says
// whether the listing has a filing under way (which blocks a pause or resume).
func ListingActionsFor(p *account.Principal, l *catalogue.Listing, inFlight bool) ListingActions {
	manage := CanManageListings(p, l.CarrierID) && !inFlight
	return ListingActions{
		File: authorizeFiling(p, l) == nil,
		// Pausing takes a listing out of routing at once (an incident does
		// not wait for a reviewer), so a filing in flight does not stop it.
		Pause:      CanManageListings(p, l.CarrierID) && l.Status == catalogue.StatusInService,
		Resume:     manage && l.Status == catalogue.StatusPaused,
		Verify:     authorizeVerify(p, l) == nil && l.Status != catalogue.StatusDelisted,
		Administer: authorizeAdminister(p, l) == nil && l.Status != catalogue.StatusDelisted,
		Endpoint:   manage && l.Status != catalogue.StatusDelisted,
		Preflight:  (CanFileFor(p, l.CarrierID) || p.IsReviewer()) && l.Status != catalogue.StatusDelisted,
	}
}

// FilingActions is what a principal may do on a filing's page.
type FilingActions struct {
	Edit     bool
	Submit   bool
	Withdraw bool
	Refresh  bool // point a stale draft at the fare published now
	Comment  bool
	Decide   bool
	// DecideNote says why a reviewer may not decide this filing, when that
	// is the case (their own filing, their own carrier).
	DecideNote string
}

// FilingActionsFor decides what p may do on filing f now.
func FilingActionsFor(p *account.Principal, f *Filing) FilingActions {
	var a FilingActions
	allowed := func(action Action) bool {
		if Authorize(p, f, action) != nil {
			return false
		}
		_, err := Next(f.State, action)
		return err == nil
	}
	stale := f.StaleBase()
	a.Edit = allowed(Save) && !f.IsPause()
	a.Refresh = allowed(Save) && stale
	// A stale draft must be refreshed first: submitting it would only send
	// the reviewer something they cannot approve.
	a.Submit = allowed(Submit) && !stale
	a.Withdraw = allowed(Withdraw)
	a.Comment = Authorize(p, f, Comment) == nil
	if f.State == Submitted && p.IsReviewer() {
		if err := Authorize(p, f, Approve); err != nil {
			a.DecideNote = apperr.Message(err)
		} else {
			a.Decide = true
		}
	}
	return a
}

// Authorize decides whether p may do a to f.
func Authorize(p *account.Principal, f *Filing, a Action) error {
	switch a {
	case Save, Submit, Withdraw:
		role := p.RoleIn(f.CarrierID)
		if role == "" {
			if p.IsStaff() {
				return errStaffDoNotFile
			}
			return errFilingNotFound
		}
		if f.IsPause() && role != account.CarrierAdmin {
			return errAdminsManage
		}
		return nil
	case Approve, Reject, RequestChanges:
		if !p.IsReviewer() {
			return errReviewersDecide
		}
		if f.AuthorID == p.User.ID {
			return errOwnFiling
		}
		if p.RoleIn(f.CarrierID) != "" {
			return apperr.Errorf(apperr.EFORBIDDEN, "You belong to %s: a reviewer from outside the carrier must decide this filing.", f.CarrierName)
		}
		return nil
	case Comment:
		if p.IsReviewer() || p.RoleIn(f.CarrierID) != "" {
			return nil
		}
		return errFilingNotFound
	}
	return apperr.Errorf(apperr.EINVALID, "Unknown action %q.", a)
}
