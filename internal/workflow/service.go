package workflow

import (
	"context"
	"fmt"
	"strings"
	"time"

	"github.com/airside/airside/internal/account"
	"github.com/airside/airside/internal/apperr"
	"github.com/airside/airside/internal/catalogue"
	"github.com/airside/airside/internal/election"
	"github.com/airside/airside/internal/fare"
	"github.com/airside/airside/internal/money"
	"github.com/airside/airside/internal/preflight"
	"github.com/airside/airside/internal/textcheck"
)

// NewFiling is a filing to record.
type NewFiling struct {
	ListingID int64
	// Fare is the proposed fare; nil with TargetStatus for a pause or resume.
	Fare          *fare.Fare
	TargetStatus  catalogue.ListingStatus
	Justification string
	EffectiveAt   *time.Time
	// Submit sends the filing to review at once instead of keeping a draft.
	Submit bool
	// ViaToken names the carrier API token it came by ("" in the browser).
	ViaToken string
	// Idempotency, when set, makes the request that carries it file once
	// however often it is retried (the API's Idempotency-Key).
	Idempotency *Idempotency
}

// Idempotency is a filing request's Idempotency-Key, per carrier, with
// the hash of its body: a retry (same key, same body) answers the filing
// the first request made; the same key with another body is refused.
type Idempotency struct {
	CarrierID int64
	Key       string
	BodyHash  string
}

// IdempotentFor is how long a key is remembered.
const IdempotentFor = 24 * time.Hour

// ErrKeyReused refuses a request reusing an Idempotency-Key with another
// body.
func ErrKeyReused() error {
	return apperr.Invalid(map[string]string{"Idempotency-Key": "This Idempotency-Key was used for a different request in the last 24 hours: send a new key for a new filing."})
}

// FilingUpdate is an edit of an open filing.
type FilingUpdate struct {
	Fare          *fare.Fare
	Justification string
	EffectiveAt   *time.Time
	Submit        bool
	// LockVersion is the version the editor loaded; a filing changed since is
	// refused, not overwritten.
	LockVersion int64
}

// Store is what the workflow needs from storage. Each method is one
// transaction, audited.
type Store interface {
	FindListingHeader(ctx context.Context, id int64, carrierIDs []int64) (*catalogue.Listing, error)
	// ListingPause is when a listing was last paused and the fare then in
	// force; ResumeListing puts it back in service at once, audited.
	ListingPause(ctx context.Context, listingID int64) (*time.Time, *int64, error)
	ResumeListing(ctx context.Context, actorID, listingID int64, why string) error
	FindListings(ctx context.Context, f catalogue.ListingFilter) ([]catalogue.Listing, error)
	CreateFilings(ctx context.Context, actorID int64, nfs []NewFiling) ([]int64, error)
	CreateListing(ctx context.Context, actorID *int64, carrierID, modelID int64) (int64, error)
	FindFiling(ctx context.Context, id int64, carrierIDs []int64) (*Filing, error)
	CreateFiling(ctx context.Context, actorID int64, nf NewFiling) (int64, error)
	// CreateFilingOnce is CreateFiling under nf.Idempotency: a request
	// already made under the key answers its filing (replayed).
	CreateFilingOnce(ctx context.Context, actorID int64, nf NewFiling) (id int64, replayed bool, err error)
	// FindFilingByKey finds the filing made under an Idempotency-Key.
	FindFilingByKey(ctx context.Context, idem Idempotency) (filingID int64, found bool, err error)
	// DeleteIdempotencyKeysBefore forgets the keys recorded before a time.
	DeleteIdempotencyKeysBefore(ctx context.Context, before time.Time) (int64, error)
	UpdateFiling(ctx context.Context, actorID, filingID int64, u FilingUpdate) error
	SubmitFiling(ctx context.Context, actorID, filingID int64) error
	WithdrawFiling(ctx context.Context, actorID, filingID int64) error
	DecideFiling(ctx context.Context, reviewerID, filingID int64, action Action, note string, seenVersion int64) (State, error)
	RebaseFiling(ctx context.Context, actorID, filingID int64) error
	AddComment(ctx context.Context, actorID, filingID int64, body string, fromStaff bool) error
	SetCapabilityCheck(ctx context.Context, reviewerID, listingID int64, capability, state, note string) error
	SetListingPriority(ctx context.Context, actorID, listingID, priorityBP int64) error
	DelistListing(ctx context.Context, actorID, listingID int64, reason string) error
	PauseListing(ctx context.Context, actorID, listingID int64, reason string) error
	FindNotifications(ctx context.Context, userID int64, limit int) ([]Notification, error)
	MarkNotificationsRead(ctx context.Context, userID int64) error
	PublishDue(ctx context.Context) (int, error)
}

// Service runs the carrier's side of filing.
type Service struct {
	Store Store
	Now   func() time.Time
	// ReadyForService, when set, is asked before approving a filing that
	// puts a listing into service (its first fare, or a resume): the
	// endpoint must have passed preflight (Endpoints.ReadyForService).
	ReadyForService func(ctx context.Context, l *catalogue.Listing) error
	// PassedPreflightSince, when set, says whether the listing's endpoint
	// passed preflight after a moment (Endpoints.PassedPreflightSince): a
	// resume with the fare of before the pause needs that, not a review.
	PassedPreflightSince func(ctx context.Context, l *catalogue.Listing, since time.Time) error
	// Notice is how long ahead a price increase must be filed (0: the
	// default 7 days; negative: no notice); QuarantineFactor the price move
	// that needs two reviewers (0: the default 3; negative: none).
	Notice           time.Duration
	QuarantineFactor float64
	// Approvals records first approvals of quarantined filings; nil turns
	// the two-reviewer rule off.
	Approvals ApprovalStore
}

// ListingToFile finds a listing p may file for: another carrier's is not
// found, staff are told they do not file, and a delisted one takes no filings.
func (s *Service) ListingToFile(ctx context.Context, p *account.Principal, listingID int64) (*catalogue.Listing, error) {
	l, err := s.Store.FindListingHeader(ctx, listingID, Scope(p))
	if err != nil {
		return nil, err
	}
	if err := authorizeFiling(p, l); err != nil {
		return nil, err
	}
	return l, nil
}

// File records a new filing for a listing from a typed form: a draft, or
// submitted for review at once.
func (s *Service) File(ctx context.Context, p *account.Principal, listingID int64, form fare.Form, submit bool) (int64, error) {
	l, err := s.ListingToFile(ctx, p, listingID)
	if err != nil {
		return 0, err
	}
	parsed, errs := form.Parse(s.Now())
	if errs != nil {
		return 0, apperr.Invalid(errs)
	}
	if submit {
		if err := checkChanges(l.Published, parsed.Fare); err != nil {
			return 0, err
		}
		if err := s.checkNotice(l.Published, parsed.Fare, parsed.EffectiveAt); err != nil {
			return 0, err
		}
	}
	return s.Store.CreateFiling(ctx, p.User.ID, NewFiling{ListingID: listingID, Fare: parsed.Fare,
		Justification: parsed.Justification, EffectiveAt: parsed.EffectiveAt, Submit: submit})
}

// FileByAPI is File for a carrier's API token: the filing names the token
// (via) and, with an Idempotency-Key, is made once however often the
// request is retried (replayed reports a retry answered with the first
// request's filing).
func (s *Service) FileByAPI(ctx context.Context, p *account.Principal, listingID int64, form fare.Form, submit bool, via string,
	idem *Idempotency) (id int64, replayed bool, err error) {
	if idem != nil {
		// A retry is answered before anything is checked again: the first
		// request's filing may have been decided since.
		if id, found, err := s.Store.FindFilingByKey(ctx, *idem); found || err != nil {
			return id, found, err
		}
	}
	l, err := s.ListingToFile(ctx, p, listingID)
	if err != nil {
		return 0, false, err
	}
	parsed, errs := form.Parse(s.Now())
	if errs != nil {
		return 0, false, apperr.Invalid(errs)
	}
	if submit {
		if err := checkChanges(l.Published, parsed.Fare); err != nil {
			return 0, false, err
		}
		if err := s.checkNotice(l.Published, parsed.Fare, parsed.EffectiveAt); err != nil {
			return 0, false, err
		}
	}
	return s.Store.CreateFilingOnce(ctx, p.User.ID, NewFiling{ListingID: listingID, Fare: parsed.Fare,
		Justification: parsed.Justification, EffectiveAt: parsed.EffectiveAt, Submit: submit, ViaToken: via, Idempotency: idem})
}

// checkChanges refuses to send a reviewer a fare that changes nothing from
// the published one (a draft may still be saved as it is). Bulk filings
// are exempt: a file lists every listing, changed or not.
func checkChanges(base, proposed *fare.Fare) error {
	if base != nil && proposed != nil && len(fare.Diff(base, proposed)) == 0 {
		return ErrNothingChanged()
	}
	return nil
}

// filingFor loads a filing p may see and checks p may do a to it.
func (s *Service) filingFor(ctx context.Context, p *account.Principal, filingID int64, a Action) (*Filing, error) {
	f, err := s.Store.FindFiling(ctx, filingID, Scope(p))
	if err != nil {
		return nil, err
	}
	if err := Authorize(p, f, a); err != nil {
		return nil, err
	}
	if _, err := Next(f.State, a); err != nil {
		return nil, err
	}
	return f, nil
}

// Edit replaces an open filing's fare from a typed form, and submits it when
// asked. lockVersion is the version the form was opened at.
func (s *Service) Edit(ctx context.Context, p *account.Principal, filingID, lockVersion int64, form fare.Form, submit bool) error {
	f, err := s.filingFor(ctx, p, filingID, Save)
	if err != nil {
		return err
	}
	if submit && f.StaleBase() {
		return ErrStaleDraft(f.ID)
	}
	parsed, errs := form.Parse(s.Now())
	if errs != nil {
		return apperr.Invalid(errs)
	}
	if submit {
		if err := checkChanges(f.Base, parsed.Fare); err != nil {
			return err
		}
		if err := s.checkNotice(f.Base, parsed.Fare, parsed.EffectiveAt); err != nil {
			return err
		}
	}
	return s.Store.UpdateFiling(ctx, p.User.ID, filingID, FilingUpdate{Fare: parsed.Fare, Justification: parsed.Justification,
		EffectiveAt: parsed.EffectiveAt, Submit: submit, LockVersion: lockVersion})
}

// Submit sends an open filing to review.
func (s *Service) Submit(ctx context.Context, p *account.Principal, filingID int64) error {
	f, err := s.filingFor(ctx, p, filingID, Submit)
	if err != nil {
		return err
	}
	if f.StaleBase() { // a reviewer could not approve it: refresh first
		return ErrStaleDraft(f.ID)
	}
	if f.Fare != nil {
		if err := checkChanges(f.Base, f.Fare); err != nil {
			return err
		}
		if err := s.checkNotice(f.Base, f.Fare, f.EffectiveAt); err != nil {
			return err
		}
	}
	return s.Store.SubmitFiling(ctx, p.User.ID, filingID)
}

// Withdraw withdraws a filing not yet decided.
func (s *Service) Withdraw(ctx context.Context, p *account.Principal, filingID int64) error {
	if _, err := s.filingFor(ctx, p, filingID, Withdraw); err != nil {
		return err
	}
	return s.Store.WithdrawFiling(ctx, p.User.ID, filingID)
}

// SetPaused files a pause (or a resume) of a listing, straight to review:
// like any filing, it changes routing only once approved.
func (s *Service) SetPaused(ctx context.Context, p *account.Principal, listingID int64, pause bool, note string) (int64, error) {
	l, err := s.ListingToFile(ctx, p, listingID)
	if err != nil {
		return 0, err
	}
	if !CanManageListings(p, l.CarrierID) {
		return 0, errAdminsManage
	}
	target := catalogue.StatusPaused
	if !pause {
		target = catalogue.StatusInService
	}
	switch {
	case pause && l.Status != catalogue.StatusInService:
		return 0, apperr.Errorf(apperr.ECONFLICT, "Only a listing in service can be paused; this one is %s.", l.Status.Label())
	case !pause && l.Status != catalogue.StatusPaused:
		return 0, apperr.Errorf(apperr.ECONFLICT, "Only a paused listing can be resumed; this one is %s.", l.Status.Label())
	}
	if msg := textcheck.Problem(note, fare.MaxJustification); msg != "" {
		return 0, apperr.Invalid(map[string]string{"justification": msg})
	}
	return s.Store.CreateFiling(ctx, p.User.ID, NewFiling{ListingID: listingID, TargetStatus: target, Justification: note, Submit: true})
}

// Resumed is what became of a resume.
type Resumed struct {
	// AtOnce: back in service now, with no review; otherwise FilingID is
	// the resume filed for review, and Why says why it needs one.
	AtOnce   bool
	FilingID int64
	Why      string
}

// Resume brings a paused listing back. With the fare that was in force when
// it was paused, and an endpoint that has passed preflight since, it is back
// in service at once: a reviewer approved that fare already, and the
// carrier's own pause lowered nobody's exposure. A fare changed since (or no
// record of the pause) is filed for review as before; with the same fare but
// no preflight passed since the pause, it says so and changes nothing, so
// the carrier runs preflight and resumes without waiting for anyone.
func (s *Service) Resume(ctx context.Context, p *account.Principal, listingID int64, note string) (Resumed, error) {
	l, err := s.ListingToFile(ctx, p, listingID)
	if err != nil {
		return Resumed{}, err
	}
	if !CanManageListings(p, l.CarrierID) {
		return Resumed{}, errAdminsManage
	}
	if l.Status != catalogue.StatusPaused {
		return Resumed{}, apperr.Errorf(apperr.ECONFLICT, "Only a paused listing can be resumed; this one is %s.", l.Status.Label())
	}
	pausedAt, pausedFare, err := s.Store.ListingPause(ctx, listingID)
	if err != nil {
		return Resumed{}, err
	}
	sameFare := pausedAt != nil && pausedFare != nil && l.Published != nil && l.Published.ID == *pausedFare
	if !sameFare || s.PassedPreflightSince == nil {
		id, err := s.SetPaused(ctx, p, listingID, false, note)
		why := "The fare changed since the pause, so the resume goes to review."
		if pausedAt == nil {
			why = "There is no record of this listing's pause, so the resume goes to review."
		}
		return Resumed{FilingID: id, Why: why}, err
	}
	if err := s.PassedPreflightSince(ctx, l, *pausedAt); err != nil {
		return Resumed{}, err
	}
	why := fmt.Sprintf("not needed: the fare is the one in force at the pause (%s) and the endpoint passed preflight since",
		pausedAt.Format("2006-01-02 15:04 UTC"))
	if err := s.Store.ResumeListing(ctx, p.User.ID, listingID, why); err != nil {
		return Resumed{}, err
	}
	return Resumed{AtOnce: true}, nil
}

// PauseNow takes a listing in service out of routing at once, publishing
// the change: a carrier in an incident stops its traffic without waiting for
// a reviewer (a pause can only lower what developers are exposed to). Only
// the carrier's admins may, with a reason, which is audited and shown to
// staff; resuming is filed for review.
func (s *Service) PauseNow(ctx context.Context, p *account.Principal, listingID int64, reason string, confirmed bool) error {
	l, err := s.ListingToFile(ctx, p, listingID)
	if err != nil {
		return err
	}
	if !CanManageListings(p, l.CarrierID) {
		return errAdminsManage
	}
	if l.Status != catalogue.StatusInService {
		return apperr.Errorf(apperr.ECONFLICT, "Only a listing in service can be paused; this one is %s.", l.Status.Label())
	}
	problems := map[string]string{}
	if reason = strings.TrimSpace(reason); reason == "" || textcheck.Problem(reason, MaxNote) != "" {
		problems["reason"] = "Say why routing should stop (it is kept in the audit log and shown to staff)."
	}
	if !confirmed {
		problems["confirm"] = "Tick the box to confirm: routing to this listing stops at once."
	}
	if len(problems) > 0 {
		return apperr.Invalid(problems)
	}
	return s.Store.PauseListing(ctx, p.User.ID, listingID, reason)
}

// AddListing adds a draft listing (no fare yet) of a catalogue model for one
// of p's carriers; only its admins may.
func (s *Service) AddListing(ctx context.Context, p *account.Principal, carrierID, modelID int64) (int64, error) {
	if !CanFileFor(p, carrierID) { // staff included: they add no listings
		return 0, apperr.Errorf(apperr.ENOTFOUND, "Carrier not found.")
	}
	if !CanManageListings(p, carrierID) {
		return 0, errAdminsManage
	}
	return s.Store.CreateListing(ctx, &p.User.ID, carrierID, modelID)
}

// FileBulk creates one draft filing per row of a bulk file, all or none:
// with any bad row nothing is created and every problem is listed. Rows name
// listings by carrier and model slug; the time-of-day schedule, which the file
// does not carry, is kept from each listing's published fare.
func (s *Service) FileBulk(ctx context.Context, p *account.Principal, rows []fare.CSVRow) (BulkResult, error) {
	return s.FileBulkChecked(ctx, p, rows, nil)
}

// FileBulkChecked is FileBulk for a file whose reading already found
// problems (a formula cell, a row of the wrong width): its rows are still
// checked, so every problem of the file is reported in one pass, and nothing
// is created.
func (s *Service) FileBulkChecked(ctx context.Context, p *account.Principal, rows []fare.CSVRow, known []fare.CSVError) (BulkResult, error) {
	if err := AuthorizeBulk(p); err != nil {
		return BulkResult{}, err
	}
	listings, err := s.Store.FindListings(ctx, catalogue.ListingFilter{CarrierIDs: p.CarrierIDs()})
	if err != nil {
		return BulkResult{}, err
	}
	var res BulkResult
	bySlug := map[string]*catalogue.Listing{}
	carriers := map[string]bool{}
	for i := range listings {
		l := &listings[i]
		bySlug[l.CarrierSlug+"/"+l.Model.Slug] = l
	}
	for _, m := range p.Memberships {
		carriers[m.Carrier.Slug] = true
	}
	now := s.Now()
	problems := append([]fare.CSVError(nil), known...)
	var filings []NewFiling
	seen := map[int64]int{}
	for _, row := range rows {
		if !carriers[row.Carrier] {
			problems = append(problems, fare.CSVError{Row: row.Line, Column: "carrier", Msg: fmt.Sprintf("%q is not one of your carriers.", row.Carrier)})
			continue
		}
		l, ok := bySlug[row.Carrier+"/"+row.Model]
		if !ok {
			problems = append(problems, fare.CSVError{Row: row.Line, Column: "model", Msg: fmt.Sprintf("%s has no listing of %q.", row.Carrier, row.Model)})
			continue
		}
		if first, dup := seen[l.ID]; dup {
			problems = append(problems, fare.CSVError{Row: row.Line, Column: "model", Msg: fmt.Sprintf("%s is already on row %d.", row.Model, first)})
			continue
		}
		seen[l.ID] = row.Line
		if err := authorizeFiling(p, l); err != nil {
			problems = append(problems, fare.CSVError{Row: row.Line, Column: "model", Msg: apperr.Message(err)})
			continue
		}
		parsed, errs := row.Form.Parse(now)
		if errs != nil {
			problems = append(problems, fare.ColumnErrors(row.Line, errs)...)
			continue
		}
		if l.Published != nil {
			parsed.Fare.TimeBased = l.Published.TimeBased
			if row.KeepMarket {
				parsed.Fare.Market = l.Published.Market
			}
		}
		if len(fare.Diff(l.Published, parsed.Fare)) == 0 && parsed.Justification == "" && parsed.EffectiveAt == nil {
			res.Unchanged++ // a template row left as it was
			continue
		}
		filings = append(filings, NewFiling{ListingID: l.ID, Fare: parsed.Fare, Justification: parsed.Justification, EffectiveAt: parsed.EffectiveAt})
	}
	if len(problems) > 0 {
		res.Problems = problems
		return res, nil
	}
	if len(filings) > 0 {
		res.Created, err = s.Store.CreateFilings(ctx, p.User.ID, filings)
	}
	return res, err
}

// BulkResult is what a bulk file did: the drafts created, the rows left as
// published, or the problems that stopped it.
type BulkResult struct {
	Created   []int64
	Unchanged int
	Problems  []fare.CSVError
}

// BulkTemplate is the bulk file prefilled with the current fares of p's
// listings.
func (s *Service) BulkTemplate(ctx context.Context, p *account.Principal) ([]fare.CSVRow, error) {
	listings, err := s.Store.FindListings(ctx, catalogue.ListingFilter{CarrierIDs: p.CarrierIDs()})
	if err != nil {
		return nil, err
	}
	var rows []fare.CSVRow
	for _, l := range listings {
		if l.Status == catalogue.StatusDelisted {
			continue
		}
		form := fare.FormOf(l.Published)
		rows = append(rows, fare.CSVRow{Carrier: l.CarrierSlug, Model: l.Model.Slug, Form: form})
	}
	return rows, nil
}

// MaxNote bounds a decision's reason.
const MaxNote = 4000

// Decide records a reviewer's decision: approve (publishing now, or at the
// filing's effective date), reject or ask for changes (both need a reason).
// No one decides a filing they wrote or one of a carrier they belong to.
//
// seenVersion is the filing's version on the reviewer's page: a filing
// changed since (resubmitted with other prices) is not decided unseen.
func (s *Service) Decide(ctx context.Context, p *account.Principal, filingID int64, action Action, note string, seenVersion int64) (State, error) {
	f, err := s.Store.FindFiling(ctx, filingID, Scope(p))
	if err != nil {
		return "", err
	}
	if err := Authorize(p, f, action); err != nil {
		return "", err
	}
	if f.State != Submitted { // say it is decided before judging the reason
		return "", ErrAlreadyDecided(f.DeciderEmail, f.State)
	}
	if f.LockVersion != seenVersion {
		return "", ErrChangedSinceOpened(f.ID)
	}
	if action == Approve && f.StaleBase() {
		return "", ErrStaleBase()
	}
	if action == Approve && s.ReadyForService != nil {
		if err := s.checkReady(ctx, f); err != nil {
			return "", err
		}
	}
	if action == Approve && s.Quarantined(f) {
		second, err := s.firstApproval(ctx, p, f)
		if err != nil || !second {
			return Submitted, err // the first of two approvals is recorded
		}
	}
	note = strings.TrimSpace(note)
	if (action == Reject || action == RequestChanges) && note == "" {
		return "", apperr.Invalid(map[string]string{"note": "Give the carrier a reason."})
	}
	if msg := textcheck.Problem(note, MaxNote); msg != "" {
		return "", apperr.Invalid(map[string]string{"note": msg})
	}
	return s.Store.DecideFiling(ctx, p.User.ID, filingID, action, note, seenVersion)
}

// checkReady refuses to approve a filing that would put a listing into
// service while its endpoint has not passed preflight.
func (s *Service) checkReady(ctx context.Context, f *Filing) error {
	l, err := s.Store.FindListingHeader(ctx, f.ListingID, nil)
	if err != nil {
		return err
	}
	intoService := f.Fare != nil && l.Status == catalogue.StatusDraft || f.TargetStatus == catalogue.StatusInService
	if !intoService {
		return nil
	}
	return s.ReadyForService(ctx, l)
}

// Comment adds a message to a filing's thread, from its carrier or a reviewer.
func (s *Service) Comment(ctx context.Context, p *account.Principal, filingID int64, body string) error {
	f, err := s.Store.FindFiling(ctx, filingID, Scope(p))
	if err != nil {
		return err
	}
	if err := Authorize(p, f, Comment); err != nil {
		return err
	}
	body = strings.TrimSpace(body)
	if body == "" {
		return apperr.Invalid(map[string]string{"body": "Write a comment first."})
	}
	if msg := textcheck.Problem(body, MaxComment); msg != "" {
		return apperr.Invalid(map[string]string{"body": msg})
	}
	return s.Store.AddComment(ctx, p.User.ID, filingID, body, outsider(p, f.CarrierID))
}

// Refresh points an open filing at the fare published now (after another
// filing changed it), so it can be submitted and approved again.
func (s *Service) Refresh(ctx context.Context, p *account.Principal, filingID int64) error {
	f, err := s.filingFor(ctx, p, filingID, Save)
	if err != nil {
		return err
	}
	if !f.StaleBase() {
		return apperr.Errorf(apperr.ECONFLICT, "This filing is already drafted against the published fare.")
	}
	return s.Store.RebaseFiling(ctx, p.User.ID, filingID)
}

// VerifyCapability records a reviewer's verification of a declared flag
// ("verified" or "failed"); only verified flags reach routing.
// seenRevision is the listing's revision on the reviewer's page.
func (s *Service) VerifyCapability(ctx context.Context, p *account.Principal, listingID int64, capability, state, note string, seenRevision int64) error {
	if !p.IsReviewer() {
		return errReviewersVerify
	}
	l, err := s.Store.FindListingHeader(ctx, listingID, nil)
	if err != nil {
		return err
	}
	if err := authorizeVerify(p, l); err != nil {
		return err
	}
	if l.Revision != seenRevision {
		e := apperr.Errorf(apperr.ECONFLICT, "This listing changed since you opened it: reload it to see what it declares now, then judge again.")
		e.Ref = l.ID
		return e
	}
	if _, ok := election.ParseCapability(capability); !ok {
		return apperr.Invalid(map[string]string{"capability": "Unknown capability."})
	}
	if state != CapabilityVerified && state != CapabilityFailed {
		return apperr.Invalid(map[string]string{"state": "Choose verified or failed."})
	}
	note = strings.TrimSpace(note)
	if msg := textcheck.Problem(note, MaxComment); msg != "" {
		return apperr.Invalid(map[string]string{"note": msg})
	}
	return s.Store.SetCapabilityCheck(ctx, p.User.ID, listingID, capability, state, note)
}

// SetPriority sets a listing's routing priority; only gateway admins may.
// Priority is typed as a decimal ("1", "0.5", "0" takes it off every ballot).
func (s *Service) SetPriority(ctx context.Context, p *account.Principal, listingID int64, typed string) error {
	if _, err := s.listingToAdminister(ctx, p, listingID); err != nil {
		return err
	}
	bp, err := ParsePriority(typed)
	if err != nil {
		return err
	}
	return s.Store.SetListingPriority(ctx, p.User.ID, listingID, bp)
}

// Delist takes a listing out of the catalogue; only gateway admins may, with
// a reason the carrier is told.
func (s *Service) Delist(ctx context.Context, p *account.Principal, listingID int64, reason string) error {
	l, err := s.listingToAdminister(ctx, p, listingID)
	if err != nil {
		return err
	}
	if l.Status == catalogue.StatusDelisted {
		return apperr.Errorf(apperr.ECONFLICT, "The listing is already delisted.")
	}
	reason = strings.TrimSpace(reason)
	if reason == "" || textcheck.Problem(reason, MaxNote) != "" {
		return apperr.Invalid(map[string]string{"reason": "Give the carrier a reason (valid text, under 4000 characters)."})
	}
	return s.Store.DelistListing(ctx, p.User.ID, listingID, reason)
}

// listingToAdminister loads a listing p may administer (priority, delisting).
func (s *Service) listingToAdminister(ctx context.Context, p *account.Principal, listingID int64) (*catalogue.Listing, error) {
	if !p.IsAdmin() {
		return nil, errAdminsAdminister
	}
	l, err := s.Store.FindListingHeader(ctx, listingID, nil)
	if err != nil {
		return nil, err
	}
	return l, authorizeAdminister(p, l)
}

// MaxPriority is the highest routing priority an admin may set (10x the
// default of 1); priority is kept in basis points, 10000 being 1.
const MaxPriority = 10

// ParsePriority reads a typed priority ("1", "0.5"; "0" takes the listing
// off every ballot) as basis points.
func ParsePriority(typed string) (int64, error) {
	bp, err := money.ParsePercent(strings.TrimSpace(typed))
	if err != nil || bp > MaxPriority*100 {
		return 0, apperr.Invalid(map[string]string{"priority": fmt.Sprintf("Enter a priority from 0 to %d with at most 2 decimals, e.g. 1 or 0.5.", MaxPriority)})
	}
	// ParsePercent reads "1" as 100 basis points; priority 1 is 10000.
	return int64(bp) * 100, nil
}

// AuthorizeBulk says why p may not file in bulk, or nil.
func AuthorizeBulk(p *account.Principal) error {
	if !CanFileAny(p) {
		return errStaffDoNotFile
	}
	return nil
}

// MaxComment bounds a comment in a filing's thread.
const MaxComment = 4000

// Verification states of a declared capability.
const (
	CapabilityVerified = preflight.VerdictVerified
	CapabilityFailed   = preflight.VerdictFailed
)

// Inbox lists p's latest inbox messages, newest first, and marks them read:
// the page that shows them is the reading.
func (s *Service) Inbox(ctx context.Context, p *account.Principal, limit int) ([]Notification, error) {
	notes, err := s.Store.FindNotifications(ctx, p.User.ID, limit)
	if err != nil {
		return nil, err
	}
	if err := s.Store.MarkNotificationsRead(ctx, p.User.ID); err != nil {
		return nil, err
	}
	return notes, nil
}

// PublishDue publishes every scheduled filing whose effective date has come;
// several processes may run it at once, and each filing is published once.
func (s *Service) PublishDue(ctx context.Context) (int, error) { return s.Store.PublishDue(ctx) }

// SweepIdempotencyKeys forgets the Idempotency-Keys older than
// IdempotentFor, which answer nothing any more: the table otherwise grows
// by one row a filing made by API for carriers that never file again.
func (s *Service) SweepIdempotencyKeys(ctx context.Context) (int64, error) {
	return s.Store.DeleteIdempotencyKeysBefore(ctx, s.Now().Add(-IdempotentFor))
}
