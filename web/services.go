package web

import (
	"context"
	"time"

	"github.com/airside/airside/internal/account"
	"github.com/airside/airside/internal/alerting"
	"github.com/airside/airside/internal/apitoken"
	"github.com/airside/airside/internal/catalogue"
	"github.com/airside/airside/internal/fare"
	"github.com/airside/airside/internal/payout"
	"github.com/airside/airside/internal/preflight"
	"github.com/airside/airside/internal/routing"
	"github.com/airside/airside/internal/storefront"
	"github.com/airside/airside/internal/workflow"
)

// The services the handlers call, each as the methods they use: the
// concrete services are built in cmd/airside/wire, and a page test can give
// a handler a fake where the page, not the service, is under test.

// AccountService is signing in, invites and sessions (account.Service).
type AccountService interface {
	AcceptInvite(ctx context.Context, token string, name string, password string) (*account.User, error)
	Authenticate(ctx context.Context, in account.Login) (*account.LoggedIn, error)
	ClearThrottle(ctx context.Context, p *account.Principal, subject string) error
	EndSession(ctx context.Context, sessionID string) error
	FindInvite(ctx context.Context, token string) (*account.Invite, error)
	InviteCarrier(ctx context.Context, p *account.Principal, slug string, name string, email string) (string, error)
	LogOutEverywhere(ctx context.Context, p *account.Principal) (int64, error)
	LoggedOut(ctx context.Context, p *account.Principal)
	SweepSessions(ctx context.Context) (int64, error)
	Throttles(ctx context.Context, p *account.Principal) ([]account.Throttle, error)
}

// AlertEmailChoice is each person's choice about alert e-mails (account.AlertEmails).
type AlertEmailChoice interface {
	Mode(ctx context.Context, p *account.Principal) (account.AlertEmailMode, bool, error)
	Set(ctx context.Context, p *account.Principal, mode account.AlertEmailMode) error
}

// AlertRunner is the alert evaluator the background work runs (alerting.Evaluator).
type AlertRunner interface {
	Run(ctx context.Context, every time.Duration)
}

// EndpointService is carriers' deployments and preflight on demand (workflow.Endpoints).
type EndpointService interface {
	Credentials(ctx context.Context, tokenID int64, listingID int64) (*catalogue.Endpoint, string, error)
	Preflight(ctx context.Context, listingID int64) (*catalogue.Endpoint, *preflight.Run, map[string]preflight.Result, error)
	Register(ctx context.Context, p *account.Principal, listingID int64, form workflow.EndpointForm) (int64, error)
	RunPreflight(ctx context.Context, p *account.Principal, listingID int64) (int64, error)
}

// FilingService is filings, listings and the inbox (workflow.Service).
type FilingService interface {
	SweepIdempotencyKeys(ctx context.Context) (int64, error)
	AddListing(ctx context.Context, p *account.Principal, carrierID int64, modelID int64) (int64, error)
	BulkTemplate(ctx context.Context, p *account.Principal) ([]fare.CSVRow, error)
	Comment(ctx context.Context, p *account.Principal, filingID int64, body string) error
	Decide(ctx context.Context, p *account.Principal, filingID int64, action workflow.Action, note string, seenVersion int64) (workflow.State, error)
	Delist(ctx context.Context, p *account.Principal, listingID int64, reason string) error
	EarliestEffective(base *fare.Fare, proposed *fare.Fare) (time.Time, bool)
	Edit(ctx context.Context, p *account.Principal, filingID int64, lockVersion int64, form fare.Form, submit bool) error
	File(ctx context.Context, p *account.Principal, listingID int64, form fare.Form, submit bool) (int64, error)
	FileByAPI(ctx context.Context, p *account.Principal, listingID int64, form fare.Form, submit bool, via string, idem *workflow.Idempotency) (int64, bool, error)
	FileBulkChecked(ctx context.Context, p *account.Principal, rows []fare.CSVRow, known []fare.CSVError) (workflow.BulkResult, error)
	Inbox(ctx context.Context, p *account.Principal, limit int) ([]workflow.Notification, error)
	ListingToFile(ctx context.Context, p *account.Principal, listingID int64) (*catalogue.Listing, error)
	NoticePeriod() time.Duration
	PauseNow(ctx context.Context, p *account.Principal, listingID int64, reason string, confirmed bool) error
	PublishDue(ctx context.Context) (int, error)
	Quarantined(f *workflow.Filing) bool
	Refresh(ctx context.Context, p *account.Principal, filingID int64) error
	Resume(ctx context.Context, p *account.Principal, listingID int64, note string) (workflow.Resumed, error)
	SetPriority(ctx context.Context, p *account.Principal, listingID int64, typed string) error
	Submit(ctx context.Context, p *account.Principal, filingID int64) error
	VerifyCapability(ctx context.Context, p *account.Principal, listingID int64, capability string, state string, note string, seenRevision int64) error
	Withdraw(ctx context.Context, p *account.Principal, filingID int64) error
}

// HookService is carriers' webhooks (alerting.Hooks).
type HookService interface {
	AcceptsLocal() bool
	Delete(ctx context.Context, p *account.Principal, carrierID int64) error
	Resend(ctx context.Context, p *account.Principal, carrierID int64, deliveryID int64) error
	Rotate(ctx context.Context, p *account.Principal, carrierID int64) (string, error)
	Set(ctx context.Context, p *account.Principal, carrierID int64, raw string) (string, error)
	Test(ctx context.Context, p *account.Principal, carrierID int64) error
}

// PayoutService is carriers' monthly statements (payout.Service): built,
// issued and corrected by credit notes.
type PayoutService interface {
	Document(ctx context.Context, carrier account.Carrier, month time.Time) (payout.Document, error)
	Run(ctx context.Context, every time.Duration)
}

// TuningService is carriers' alert rules and mutes (alerting.Tuning).
type TuningService interface {
	SetRules(ctx context.Context, p *account.Principal, carrierID int64, form map[alerting.Kind]alerting.RuleForm) error
	Mute(ctx context.Context, p *account.Principal, carrierID, listingID int64, kind, duration string) (time.Time, error)
	Unmute(ctx context.Context, p *account.Principal, carrierID, muteID int64) error
}

// MaintenanceService is maintenance windows (workflow.Maintenance).
type MaintenanceService interface {
	Apply(ctx context.Context) (int, error)
	Cancel(ctx context.Context, p *account.Principal, listingID int64, windowID int64) error
	Schedule(ctx context.Context, p *account.Principal, listingID int64, form workflow.MaintenanceForm) (int64, error)
	Upcoming(ctx context.Context, p *account.Principal) ([]workflow.MaintenanceWindow, error)
	Windows(ctx context.Context, p *account.Principal, listingID int64) ([]workflow.MaintenanceWindow, error)
}

// PreflightRunner is the preflight worker (preflight.Worker).
type PreflightRunner interface {
	Run(ctx context.Context)
	Stats() preflight.WorkerStats
}

// RoutingCatalogue is the routing catalogue in memory (routing.Keeper).
type RoutingCatalogue interface {
	Age() time.Duration
	Current(ctx context.Context) (*routing.Snapshot, error)
	Revision() (int64, bool)
	Stats() routing.KeeperStats
}

// SelfService is people managing their own accounts and their carrier's people (account.SelfService).
type SelfService interface {
	ChangePassword(ctx context.Context, p *account.Principal, current string, next string, confirm string, keepSessionHash string) error
	InviteMember(ctx context.Context, p *account.Principal, carrierID int64, email string, role account.CarrierRole) (string, error)
	IssueReset(ctx context.Context, p *account.Principal, userID int64) (string, error)
	Members(ctx context.Context, p *account.Principal, carrierID int64) ([]account.Member, error)
	Remove(ctx context.Context, p *account.Principal, carrierID int64, userID int64) error
	Reset(ctx context.Context, token string, next string, confirm string) error
	ResetEmail(ctx context.Context, token string) (string, error)
	SetActive(ctx context.Context, p *account.Principal, userID int64, active bool) error
	SetRole(ctx context.Context, p *account.Principal, carrierID int64, userID int64, role account.CarrierRole) error
}

// StorefrontService is applications, profiles, domains and proposals (storefront.Service).
type StorefrontService interface {
	Apply(ctx context.Context, address string, f storefront.ApplicationForm) (string, error)
	Approve(ctx context.Context, p *account.Principal, id int64, slug string, note string) error
	Ask(ctx context.Context, p *account.Principal, id int64, body string) error
	ByToken(ctx context.Context, token string) (*storefront.Application, []storefront.Message, error)
	CheckDomain(ctx context.Context, p *account.Principal, carrierID int64) error
	DecideProfile(ctx context.Context, p *account.Principal, id int64, approve bool, note string) error
	DecideProposal(ctx context.Context, p *account.Principal, id int64, accept bool, edits storefront.ProposalForm, note string) error
	Decline(ctx context.Context, p *account.Principal, id int64, note string) error
	InviteLink(a *storefront.Application) string
	Propose(ctx context.Context, p *account.Principal, carrierID int64, f storefront.ProposalForm) (int64, error)
	Reply(ctx context.Context, token string, body string) error
	SetDomain(ctx context.Context, p *account.Principal, carrierID int64, domain string) error
	SubmitProfile(ctx context.Context, p *account.Principal, carrierID int64, f storefront.ProfileForm) (int64, error)
}

// TokenService is API tokens (apitoken.Service).
type TokenService interface {
	Authenticate(ctx context.Context, secret string) (*apitoken.Token, error)
	Create(ctx context.Context, p *account.Principal, name string, scopes []string) (string, error)
	List(ctx context.Context, p *account.Principal) ([]apitoken.Token, error)
	Revoke(ctx context.Context, p *account.Principal, id int64) error
	CreateForCarrier(ctx context.Context, p *account.Principal, carrierID int64, name string, scopes []string) (string, error)
	ListForCarrier(ctx context.Context, p *account.Principal, carrierID int64) ([]apitoken.Token, error)
	RevokeForCarrier(ctx context.Context, p *account.Principal, carrierID, id int64) error
	Touch(ctx context.Context, id int64) error
}

// TwoFactorService is two-factor enrolment and the code step (account.TwoFactor).
type TwoFactorService interface {
	Begin(ctx context.Context, p *account.Principal) (*account.Enrolment, error)
	Confirm(ctx context.Context, p *account.Principal, code string) ([]string, error)
	Disable(ctx context.Context, p *account.Principal, proof string) error
	ForgetRememberedBrowsers(ctx context.Context, p *account.Principal) (int64, error)
	NeedsCode(ctx context.Context, userID int64, deviceToken string) (bool, error)
	NewRecoveryCodes(ctx context.Context, p *account.Principal, proof string) ([]string, error)
	Pending(ctx context.Context, p *account.Principal) (*account.Enrolment, error)
	RememberedBrowsers(ctx context.Context, p *account.Principal, currentHash string) ([]account.RememberedBrowser, error)
	Required(ctx context.Context, p *account.Principal) (bool, error)
	Reset(ctx context.Context, admin *account.Principal, userID int64) error
	SetRequired(ctx context.Context, admin *account.Principal, on bool) error
	State(ctx context.Context, userID int64) (*account.TwoFactorState, error)
	Verify(ctx context.Context, in account.SecondStep) error
}

// WebhookSender is the webhook sender (alerting.Sender).
type WebhookSender interface {
	Run(ctx context.Context, every time.Duration)
	Stats() alerting.SenderStats
	Wake()
}

var (
	_ AccountService     = (*account.Service)(nil)
	_ AlertEmailChoice   = (*account.AlertEmails)(nil)
	_ AlertRunner        = (*alerting.Evaluator)(nil)
	_ EndpointService    = (*workflow.Endpoints)(nil)
	_ FilingService      = (*workflow.Service)(nil)
	_ HookService        = (*alerting.Hooks)(nil)
	_ TuningService      = (*alerting.Tuning)(nil)
	_ PayoutService      = (*payout.Service)(nil)
	_ MaintenanceService = (*workflow.Maintenance)(nil)
	_ PreflightRunner    = (*preflight.Worker)(nil)
	_ RoutingCatalogue   = (*routing.Keeper)(nil)
	_ SelfService        = (*account.SelfService)(nil)
	_ StorefrontService  = (*storefront.Service)(nil)
	_ TokenService       = (*apitoken.Service)(nil)
	_ TwoFactorService   = (*account.TwoFactor)(nil)
	_ WebhookSender      = (*alerting.Sender)(nil)
)
