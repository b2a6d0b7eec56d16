// Package templates holds the portal's pages as templ components. Components
// take view structs shaped like the screen, never a service or a database.
package templates

import "strings"

// Nav is what the layout needs to draw navigation for the current user.
type Nav struct {
	// Email is empty for an anonymous visitor.
	Email      string
	IsStaff    bool
	IsAdmin    bool
	IsReviewer bool
	Carriers   []string // names of the user's carriers
	Active     string   // the section to highlight
	Unread     int      // unread inbox messages
	Pending    int      // filings awaiting review (reviewers)
}

// Page is what every page passes to the layout.
type Page struct {
	Title string
	Nav   Nav
	Flash string
	CSRF  string
	// Wide lets a page of wide tables use the whole window.
	Wide bool
}

// FieldErrors maps a form field to its message.
type FieldErrors = map[string]string

// LoginView is the login form.
type LoginView struct {
	Page
	Email string
	Next  string
	Error string
}

// ListingRow is one row of a listings table.
type ListingRow struct {
	ID          int64
	URL         string
	Model       string
	ModelSlug   string
	Carrier     string
	Status      string
	StatusClass string
	Input       string
	Output      string
	Cached      string
	LandingFee  string // empty when the viewer may not see it
	Discount    string
	Uptime      string
	Latency     string
	Throughput  string
	FilingURL   string
	FilingState string
}

// ListingsView is the listings page.
type ListingsView struct {
	Page
	Heading     string
	ShowCarrier bool
	Rows        []ListingRow
	AddModels   []ModelOption
	CanBulk     bool
	// The table's state, kept in the URL: a search, a status, a sort and
	// a page of PerPage rows.
	Query, Status, Sort string
	Statuses, Sorts     []Choice
	Total               int
	Prev, Next          string
	Showing             string
	// StartHint says where the person's work starts (shown on the
	// unfiltered first page).
	StartHint string
}

// LiveChecksView is what the live preview's answer carries beside the
// panel: the messages of the form's checked fields (every one, so a fixed
// field's message goes) and, on the filing form, the effective prices.
type LiveChecksView struct {
	Fields    []string
	Errors    map[string]string
	Effective *Effective
}

// KV is one labelled value on a detail page.
type KV struct {
	Label, Value, Hint string
}

// ListingView is one listing's page.
type ListingView struct {
	Page
	// Holding says who serves each standard workload under auto routing
	// now (or, for a paused listing, if it resumed now), and what lead
	// takes a workload from its incumbent.
	Holding      []string
	HoldingTitle string
	// Revision is the listing's catalogue revision the verification form
	// carries, so a verdict on a listing changed since is refused.
	Revision int64
	Row      ListingRow
	Fare     []KV
	Tiers    [][]string
	Schedule []KV
	Caps     []KV
	Caps2    []string
	// Market is what the listing offers besides price (context,
	// quantization, data policy, regions, fees); MarketNote says the data
	// policy is the carrier's declaration and who approved it, when.
	Market     []KV
	MarketNote string
	Health     []KV
	InFlight   *FilingRow
	Filings    []FilingRow
	CanFile    bool
	FileURL    string
	CanPause   bool
	// PauseAdminsOnly tells a carrier member why there is no pause or
	// resume: only the carrier's admins move routing.
	PauseAdminsOnly bool
	CanResume       bool
	// PauseOpen opens the pause form (shown again with what was typed and
	// what is missing); PauseReason is what was typed.
	PauseOpen   bool
	PauseReason string
	// Maintenance is the listing's planned stops; CanPlan offers the form
	// to plan one (MaintenanceOpen: shown again with what was typed).
	Maintenance     []MaintenanceRow
	CanPlan         bool
	MaintenanceOpen bool
	MaintenanceForm MaintenanceFormView
	// CanVerify shows the reviewer's capability verification form.
	CanVerify bool
	Verify    []VerifyRow
	Traffic   TrafficView
	// ShowEndpoint shows the endpoint and its preflight.
	ShowEndpoint bool
	Endpoint     EndpointView
	Preflight    PreflightView
	// Priority is the routing priority set by gateway staff; CanAdminister
	// shows the admin's priority and delist forms.
	Priority      string
	CanAdminister bool
	FieldErrors   FieldErrors
}

// VerifyRow is one declared capability and its verification.
type VerifyRow struct {
	Capability, Label, State string
	// Probe is the probe's verdict and evidence; Override the reviewer's
	// verdict and note, when there is one.
	Probe, Override string
}

// UserRow is a row of the admin's user list.
type UserRow struct {
	ID                                    int64
	Email, Name, Staff, Carriers, Created string
	Deactivated, Self                     bool
	// TwoFactorOn: the person signs in with a second factor.
	TwoFactorOn bool
}

// CarrierRow is a row of the admin's carrier list.
type CarrierRow struct {
	Slug, Name, Created string
	Members, Listings   int
}

// AdminUsersView lists users.
type AdminUsersView struct {
	Page
	Users []UserRow
	// ResetLink is a one-time password reset link just issued, for ResetFor.
	ResetLink, ResetFor string
	// Mailed says whether the link was also e-mailed (AIRSIDE_SMTP_URL).
	Mailed string
	// RequireTwoFactor is the site policy; TwoFactorOn whether the admin
	// looking has a second factor (needed before requiring one of others).
	RequireTwoFactor, TwoFactorOn bool
}

// AdminThrottlesView lists the login throttles holding someone back.
type AdminThrottlesView struct {
	Page
	Rows []ThrottleRow
}

// ThrottleRow is one throttled subject.
type ThrottleRow struct {
	Subject, Attempts, NextAllowed string
}

// AdminCarriersView lists carriers and offers the invite form.
type AdminCarriersView struct {
	Page
	Carriers []CarrierRow
	Invite   InviteForm
	// InviteLink is shown once, right after an invite is created.
	InviteLink string
}

// InviteForm is the carrier invite form with its values and errors.
type InviteForm struct {
	Slug, Name, Email string
	Errors            FieldErrors
}

// SignupView is the invited admin's sign-up form.
type SignupView struct {
	Page
	Token   string
	Email   string
	Carrier string
	// Admin says the invite is for an admin of the carrier (else a member).
	Admin  bool
	Name   string
	Errors FieldErrors
}

// AuditRow is a row of the audit log.
type AuditRow struct {
	At, Actor, Carrier, Action, Subject string
	// Sentence says what happened; Link is the page of what it is about.
	Sentence, Link string
}

// AuditFilters are the audit log's filters as typed.
type AuditFilters struct {
	Actor, Action, Carrier, Listing, From, To string
}

// AuditView is the audit log page.
type AuditView struct {
	Page
	Rows    []AuditRow
	Filters AuditFilters
	Actions []string
	// PageNumber, PrevURL and NextURL page through the log; CSVURL exports
	// what the filters select.
	PageNumber               int
	PrevURL, NextURL, CSVURL string
}

// ErrorView is an error page.
type ErrorView struct {
	Page
	Status  int
	Heading string
	Message string
}

// inputMode is the keyboard a phone shows for a number field.
func inputMode(whole bool) string {
	if whole {
		return "numeric"
	}
	return "decimal"
}

// Capitalise starts a sentence or a label built elsewhere with a capital letter.
func Capitalise(s string) string {
	if s == "" {
		return s
	}
	return strings.ToUpper(s[:1]) + s[1:]
}

// SecondStepView is the code step of sign-in.
type SecondStepView struct {
	Page
	Error    string
	Remember bool
}

// TwoFactorView is a person's two-factor page: off, being set up (Secret,
// QR), or on; RecoveryCodes are shown once, right after they are made.
type TwoFactorView struct {
	Page
	Email         string
	On, Required  bool
	Since         string
	RecoveryLeft  int
	RecoveryCodes []string
	// Secret is the base32 key in groups of four; QR its QR code as a
	// data: URL made here from our own PNG (so safe to use as a src); URL
	// the otpauth:// link it encodes.
	Secret, QR, URL string
	Errors          FieldErrors
	Done            string
	// Browsers are the browsers that skip the code now.
	Browsers []RememberedBrowserRow
}

// RememberedBrowserRow is one browser remembered for two-factor sign-in.
type RememberedBrowserRow struct {
	FirstSeen, Until string
	Current          bool
}

// MaintenanceRow is one maintenance window as listed.
type MaintenanceRow struct {
	ID                   int64
	Listing, ListingURL  string
	Start, End, Duration string
	Reason, By, State    string
	StateClass, Outcome  string
	// CancelLabel is the cancel button's words ("" when it cannot be
	// called off): "Cancel" before it starts, "End now" during it.
	CancelLabel string
}

// MaintenanceFormView is the plan-a-window form as typed.
type MaintenanceFormView struct {
	Start, End, Reason string
	Errors             FieldErrors
}
