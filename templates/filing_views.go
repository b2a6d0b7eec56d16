package templates

import "github.com/airside/airside/internal/fare"

// CapabilityOption is one capability checkbox with its verification state.
type CapabilityOption struct {
	Name         string
	Label        string
	Checked      bool
	Verification string // "verified", "failed" or "not verified yet"
	// Why says why preflight failed the flag and how to fix it.
	Why string
}

// DayOption is one weekday checkbox.
type DayOption struct {
	Value   string
	Label   string
	Checked bool
}

// Effective is the routing view of the typed prices, computed on the server
// (and kept current by static/js/fare-form.js as the carrier types).
type Effective struct {
	Input, Output, CachedInput string
	KeptCents                  string
}

// ListingHeader names the listing a page is about.
type ListingHeader struct {
	ID      int64
	URL     string
	Model   string
	Carrier string
	Status  string
	Class   string
}

// FareFormView is the filing form.
type FareFormView struct {
	Page
	Listing      ListingHeader
	Heading      string
	Action       string // where the form posts
	LockVersion  int64
	Form         fare.Form
	Errors       fare.FieldErrors
	Capabilities []CapabilityOption
	Days         []DayOption
	Effective    Effective
	// Conflict explains a refused submit; ConflictURL links the filing in flight.
	Conflict    string
	ConflictURL string
	// Crossed lists, after an edit crossed someone else's save, each field
	// they saved differently from what was typed.
	Crossed []CrossedField
	Changes []ChangeRow
	Preview PreviewPanel
}

// ChangeRow is one line of a change summary.
type ChangeRow struct {
	Label, Old, New, Percent string
	// Note qualifies the change for the reviewer (a data-policy claim is
	// the carrier's declaration).
	Note string
	// Class is "up", "down" or "" for the arrow and colour.
	Class string
}

// FilingRow is one filing in a list.
type FilingRow struct {
	ID       int64
	URL      string
	Model    string
	Carrier  string
	Kinds    string
	State    string
	Class    string
	Author   string
	Created  string
	Decided  string
	Decision string
}

// HistoryRow is one audited step of a filing.
type HistoryRow struct {
	At, Who, What string
}

// FilingView is one filing's page.
type FilingView struct {
	Page
	// Quarantine says the filing needs two reviewers, and who approved it
	// so far; Notice says when an increase may take effect at the earliest.
	Quarantine string
	Notice     string
	// Preflight is the probes of the endpoint the filing concerns: the one
	// it registers, or the listing's published one.
	Preflight *PreflightView
	// Version is the filing's lock version the decision forms carry, so a
	// decision made on a page opened before a change is refused.
	Version int64
	// ViaToken names the carrier API token the filing came by ("" for the
	// browser).
	ViaToken   string
	ID         int64
	Listing    ListingHeader
	State      string
	StateClass string
	Kinds      string
	Author     string
	Created    string
	Submitted  string
	// ExpectedWait says how long review takes lately, on a submitted filing.
	ExpectedWait  string
	EffectiveAt   string
	Justification string
	DecisionNote  string
	// EarlierNote is the note of a review before the carrier resubmitted.
	EarlierNote string
	Changes     []ChangeRow
	// SinceSentBack is what the carrier changed after the reviewer asked
	// for changes (at SentBackAt), against the version sent back.
	SinceSentBack []ChangeRow
	SentBackAt    string
	Proposed      []KV
	Published     []KV
	History       []HistoryRow
	CanEdit       bool
	CanSubmit     bool
	CanWithdraw   bool
	// WithdrawOthers names the author when the viewer would withdraw a
	// filing someone else filed ("" when it is their own).
	WithdrawOthers string
	EditURL        string
	Conflict       string
	ConflictURL    string
	// Reviewer's view.
	Impact      []ImpactRow
	CanDecide   bool
	DecideNote  string // why this reviewer may not decide, when they may not
	Note        string // the reason as typed, kept on a refused decision
	NoteError   string
	Comments    []CommentRow
	CanComment  bool
	Stale       string // why the filing cannot be approved as it stands
	CanRefresh  bool
	ImpactTitle string
	// ImpactSets are the impact at peak and off-peak, for a fare with a
	// time-of-day block; PublishNote what approving does to routing.
	ImpactSets  []ImpactSet
	PublishNote string
	// ApprovedByYou: the reviewer already gave a quarantined filing its
	// first approval; the second must come from someone else.
	ApprovedByYou bool
}

// ImpactSet is the impact at one time.
type ImpactSet struct {
	Title string
	Rows  []ImpactRow
}

// ImpactRow is a listing's standing in one scenario before and after.
type ImpactRow struct {
	Scenario              string
	BeforeRank, AfterRank string
	BeforeScore           string
	AfterScore            string
	// WinnerBefore and Winner are who wins the scenario now and after,
	// by carrier name.
	WinnerBefore, Winner string
	Class                string // "better", "worse" or ""
	// ShareBefore and ShareAfter are the listing's share of the scenario's
	// requests for a project on the share policy ("—" off the ballot).
	ShareBefore, ShareAfter string
}

// CommentRow is one message of a filing's thread.
type CommentRow struct {
	Author string
	Staff  bool
	At     string
	Body   string
}

// Option is one choice of a select.
type Option struct {
	Value, Label string
	Selected     bool
}

// QueueRow is one filing awaiting review.
type QueueRow struct {
	ID        int64
	URL       string
	Carrier   string
	Model     string
	Kinds     string
	Author    string
	Submitted string
	Age       string
	Stale     bool
	// Quarantine flags a filing that moves a price threefold or more (two
	// reviewers approve it).
	Quarantine bool
}

// QueueView is the review queue.
type QueueView struct {
	Page
	// ProfileChanges are the carriers' profile changes awaiting their light
	// review, listed under the filings.
	ProfileChanges []ProfileChangeRow
	Rows           []QueueRow
	Carriers       []Option
	Models         []Option
	Kinds          []Option
}

// InboxRow is one inbox message.
type InboxRow struct {
	Message, URL, At string
	Unread           bool
	// Now is where the message's filing is today.
	Now string
}

// InboxView is a user's inbox.
type InboxView struct {
	Page
	Filters []Choice
	Rows    []InboxRow
}

// ModelOption is a model a carrier admin may add a listing for.
type ModelOption struct {
	CarrierID int64
	ModelID   int64
	Label     string
}

// BulkView is the CSV upload page.
type BulkView struct {
	Page
	Header      string
	RowErrors   []BulkError
	Created     int
	CarrierName string
}

// BulkError is one problem in an uploaded CSV.
type BulkError struct {
	Row    int
	Column string
	Msg    string
}

// CrossedField is one field of a crossed edit: what the other person saved
// and what was typed.
type CrossedField struct {
	Label, Theirs, Yours string
}
