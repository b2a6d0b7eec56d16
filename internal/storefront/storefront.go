package storefront

import (
	"context"
	"fmt"
	"net/mail"
	"net/url"
	"regexp"
	"strconv"
	"strings"
	"time"

	"github.com/airside/airside/internal/account"
	"github.com/airside/airside/internal/apperr"
	"github.com/airside/airside/internal/catalogue"
	"github.com/airside/airside/internal/secret"
	"github.com/airside/airside/internal/textcheck"
	"github.com/airside/airside/internal/workflow"
)

// The states of what is reviewed here.
const (
	Submitted = "submitted"
	Approved  = "approved"
	Declined  = "declined"
)

// Profile is a carrier's public profile as approved.
type Profile struct {
	CarrierID                                int64
	Slug, Name                               string
	Description, Website, SupportContact     string
	StatusURL, LogoType, Domain, DomainToken string
	DomainVerifiedAt                         *time.Time
}

// ProfileChange is a proposed profile awaiting its light review.
type ProfileChange struct {
	ID, CarrierID                        int64
	CarrierName, CarrierSlug             string
	Description, Website, SupportContact string
	StatusURL, LogoType                  string
	Logo                                 []byte
	State, AuthorEmail, DecisionNote     string
	AuthorID                             int64
	CreatedAt                            time.Time
}

// Application is a company's application to carry.
type Application struct {
	ID                                int64
	Company, Website, ContactName     string
	ContactEmail, Models, Description string
	State, DecisionNote, InviteSealed string
	CarrierID                         *int64
	CreatedAt                         time.Time
	DecidedAt                         *time.Time
}

// Message is one message of an application's thread.
type Message struct {
	FromStaff bool
	Author    string
	Body      string
	At        time.Time
}

// Proposal is a model a carrier proposes for the catalogue.
type Proposal struct {
	ID, CarrierID                     int64
	CarrierName                       string
	Name, Slug, Family                string
	ContextTokens, MaxOutputTokens    int64
	InputModalities, OutputModalities string
	Note, State, DecisionNote         string
	AuthorID                          int64
	AuthorEmail                       string
	CreatedAt                         time.Time
}

// Store is what the storefront needs from storage.
type Store interface {
	ReserveLoginAttempt(ctx context.Context, subject string, policy account.ThrottlePolicy) (time.Duration, error)
	CreateApplication(ctx context.Context, a Application, tokenHash string) (int64, error)
	FindApplication(ctx context.Context, id int64) (*Application, []Message, error)
	FindApplicationByToken(ctx context.Context, tokenHash string) (*Application, []Message, error)
	AddApplicationMessage(ctx context.Context, appID int64, authorID *int64, body string) error
	ApproveApplication(ctx context.Context, reviewerID, appID int64, slug, name string, invite account.InviteRecord, inviteSealed, note string) error
	DeclineApplication(ctx context.Context, reviewerID, appID int64, note string) error
	FindProfile(ctx context.Context, carrierID int64) (*Profile, error)
	SubmitProfileChange(ctx context.Context, authorID int64, ch ProfileChange) (int64, error)
	FindProfileChange(ctx context.Context, id int64) (*ProfileChange, error)
	// DecideProfileChange carries out a decision on a submitted change
	// (refusing one decided meanwhile), audited.
	DecideProfileChange(ctx context.Context, reviewerID, id int64, d ProfileDecision) error
	SetDomain(ctx context.Context, actorID, carrierID int64, domain, token string) error
	MarkDomainVerified(ctx context.Context, carrierID int64, method string) error
	CreateProposal(ctx context.Context, authorID int64, pr Proposal) (int64, error)
	FindProposal(ctx context.Context, id int64) (*Proposal, error)
	AcceptProposal(ctx context.Context, reviewerID, id int64, m catalogue.Model, note string) error
	DeclineProposal(ctx context.Context, reviewerID, id int64, note string) error
}

// Service runs the storefront's workflows.
type Service struct {
	Store   Store
	Secrets *secret.Box
	Verify  *DomainVerifier
	Now     func() time.Time
}

// ApplicationForm is an application as typed.
type ApplicationForm struct {
	Company, Website, ContactName, ContactEmail, Models, Description string
}

// applyPolicy throttles applications per address like logins: a few at
// once, then growing waits.
var applyPolicy = account.ThrottlePolicy{Window: time.Hour, Free: 3, MaxDelay: time.Hour}

var slugPattern = regexp.MustCompile(`^[a-z0-9][a-z0-9-]{1,38}[a-z0-9]$`)

// checkHTTPS reports what is wrong with a public https URL, or "".
func checkHTTPS(raw string, required bool) string {
	raw = strings.TrimSpace(raw)
	if raw == "" {
		if required {
			return "Give the https address."
		}
		return ""
	}
	u, err := url.Parse(raw)
	if err != nil || u.Scheme != "https" || u.Host == "" || u.User != nil || len(raw) > 300 {
		return "Give an https address, like https://example.com."
	}
	return ""
}

func text(field, value string, max int, required bool, problems map[string]string) {
	if required && strings.TrimSpace(value) == "" {
		problems[field] = "Required."
		return
	}
	if msg := textcheck.Problem(value, max); msg != "" {
		problems[field] = msg
	}
}

// Apply records an application and returns the secret of its status page
// (where the applicant follows its review and answers questions).
func (s *Service) Apply(ctx context.Context, address string, f ApplicationForm) (string, error) {
	problems := map[string]string{}
	text("company", f.Company, 200, true, problems)
	text("contact_name", f.ContactName, 200, true, problems)
	text("models", f.Models, 1000, true, problems)
	text("description", f.Description, 4000, true, problems)
	if msg := checkHTTPS(f.Website, true); msg != "" {
		problems["website"] = msg
	}
	if a, err := mail.ParseAddress(strings.TrimSpace(f.ContactEmail)); err != nil || a.Address != strings.TrimSpace(f.ContactEmail) {
		problems["contact_email"] = "Give an e-mail address like name@company.com."
	}
	if len(problems) > 0 {
		return "", apperr.Invalid(problems)
	}
	wait, err := s.Store.ReserveLoginAttempt(ctx, "apply:"+address, applyPolicy)
	if err != nil {
		return "", err
	}
	if wait > 0 {
		e := apperr.Errorf(apperr.ETHROTTLED, "Too many applications from your address; try again in %s.", wait.Round(time.Second))
		return "", e
	}
	token, hash, err := account.NewToken()
	if err != nil {
		return "", err
	}
	_, err = s.Store.CreateApplication(ctx, Application{Company: strings.TrimSpace(f.Company), Website: strings.TrimSpace(f.Website),
		ContactName: strings.TrimSpace(f.ContactName), ContactEmail: account.NormalizeEmail(f.ContactEmail), Models: strings.TrimSpace(f.Models),
		Description: strings.TrimSpace(f.Description)}, hash)
	return token, err
}

// ByToken is the application behind a status page's secret.
func (s *Service) ByToken(ctx context.Context, token string) (*Application, []Message, error) {
	return s.Store.FindApplicationByToken(ctx, account.HashToken(token))
}

// InviteLink is the sign-up token an approved application carries.
func (s *Service) InviteLink(a *Application) string {
	if a.InviteSealed == "" || a.CarrierID == nil {
		return ""
	}
	tok, err := s.Secrets.Open(a.InviteSealed, fmt.Sprintf("application:%d", a.ID))
	if err != nil {
		return ""
	}
	return tok
}

// Reply adds the applicant's answer to its thread.
func (s *Service) Reply(ctx context.Context, token, body string) error {
	a, _, err := s.ByToken(ctx, token)
	if err != nil {
		return err
	}
	if a.State != Submitted {
		return apperr.Errorf(apperr.ECONFLICT, "This application is already decided.")
	}
	problems := map[string]string{}
	text("body", body, 4000, true, problems)
	if len(problems) > 0 {
		return apperr.Invalid(problems)
	}
	return s.Store.AddApplicationMessage(ctx, a.ID, nil, strings.TrimSpace(body))
}

func staffOnly(p *account.Principal) error {
	if !p.IsStaff() {
		return apperr.Errorf(apperr.EFORBIDDEN, "Only gateway staff review applications.")
	}
	return nil
}

// Ask adds a staff question to an application's thread.
func (s *Service) Ask(ctx context.Context, p *account.Principal, id int64, body string) error {
	if err := staffOnly(p); err != nil {
		return err
	}
	problems := map[string]string{}
	text("body", body, 4000, true, problems)
	if len(problems) > 0 {
		return apperr.Invalid(problems)
	}
	return s.Store.AddApplicationMessage(ctx, id, &p.User.ID, strings.TrimSpace(body))
}

// CanApproveCarriers reports whether p may turn an application into a
// carrier (gateway admins): the rule the application page's buttons follow.
func CanApproveCarriers(p *account.Principal) bool { return p.IsAdmin() }

// Approve creates the carrier (slug as staff chose it) and a one-time
// sign-up link for the applicant, shown on its status page.
func (s *Service) Approve(ctx context.Context, p *account.Principal, id int64, slug, note string) error {
	if !CanApproveCarriers(p) {
		return apperr.Errorf(apperr.EFORBIDDEN, "Only gateway admins approve carriers.")
	}
	a, _, err := s.Store.FindApplication(ctx, id)
	if err != nil {
		return err
	}
	if a.State != Submitted {
		return apperr.Errorf(apperr.ECONFLICT, "This application is already %s.", a.State)
	}
	slug = strings.TrimSpace(slug)
	if fields := account.ValidateCarrier(slug, a.Company); len(fields) > 0 {
		return apperr.Invalid(fields)
	}
	token, hash, err := account.NewToken()
	if err != nil {
		return err
	}
	sealed, err := s.Secrets.Seal(token, fmt.Sprintf("application:%d", a.ID))
	if err != nil {
		return err
	}
	rec := account.InviteRecord{Slug: slug, Name: a.Company, Email: a.ContactEmail, TokenHash: hash, ExpiresAt: s.Now().Add(account.InviteTTL)}
	return s.Store.ApproveApplication(ctx, p.User.ID, id, slug, a.Company, rec, sealed, strings.TrimSpace(note))
}

// Decline declines an application with a reason the applicant reads.
func (s *Service) Decline(ctx context.Context, p *account.Principal, id int64, note string) error {
	if err := staffOnly(p); err != nil {
		return err
	}
	if strings.TrimSpace(note) == "" {
		return apperr.Invalid(map[string]string{"note": "Tell the applicant why."})
	}
	return s.Store.DeclineApplication(ctx, p.User.ID, id, strings.TrimSpace(note))
}

// ProfileForm is a profile as typed.
type ProfileForm struct {
	Description, Website, SupportContact, StatusURL string
	Logo                                            []byte // nil keeps the logo
}

// SubmitProfile files a profile change for review; only the carrier's
// admins may. A pending change of the carrier is replaced.
func (s *Service) SubmitProfile(ctx context.Context, p *account.Principal, carrierID int64, f ProfileForm) (int64, error) {
	if !workflow.CanFileFor(p, carrierID) {
		return 0, apperr.Errorf(apperr.ENOTFOUND, "Carrier not found.")
	}
	if !workflow.CanManageListings(p, carrierID) {
		return 0, apperr.Errorf(apperr.EFORBIDDEN, "Only the carrier's admins edit its profile.")
	}
	problems := map[string]string{}
	text("description", f.Description, 2000, false, problems)
	if msg := checkHTTPS(f.Website, false); msg != "" {
		problems["website"] = msg
	}
	if msg := checkHTTPS(f.StatusURL, false); msg != "" {
		problems["status_url"] = msg
	}
	if c := strings.TrimSpace(f.SupportContact); c != "" {
		if _, err := mail.ParseAddress(c); err != nil && checkHTTPS(c, true) != "" {
			problems["support_contact"] = "Give a support e-mail address or an https address."
		}
	}
	ch := ProfileChange{CarrierID: carrierID, Description: strings.TrimSpace(f.Description), Website: strings.TrimSpace(f.Website),
		SupportContact: strings.TrimSpace(f.SupportContact), StatusURL: strings.TrimSpace(f.StatusURL)}
	if f.Logo != nil {
		typ, problem := CheckLogo(f.Logo)
		if problem != "" {
			problems["logo"] = problem
		}
		ch.LogoType, ch.Logo = typ, f.Logo
	}
	if len(problems) > 0 {
		return 0, apperr.Invalid(problems)
	}
	return s.Store.SubmitProfileChange(ctx, p.User.ID, ch)
}

// DecideProfile approves or rejects a profile change; the carrier's own
// people may not.
func (s *Service) DecideProfile(ctx context.Context, p *account.Principal, id int64, approve bool, note string) error {
	if !p.IsReviewer() {
		return apperr.Errorf(apperr.EFORBIDDEN, "Only reviewers decide profile changes.")
	}
	ch, err := s.Store.FindProfileChange(ctx, id)
	if err != nil {
		return err
	}
	if workflow.CanFileFor(p, ch.CarrierID) || ch.AuthorID == p.User.ID {
		return apperr.Errorf(apperr.EFORBIDDEN, "You cannot decide a change of a carrier you belong to.")
	}
	if ch.State != Submitted {
		return apperr.Errorf(apperr.ECONFLICT, "This profile change is already %s.", ch.State)
	}
	if !approve && strings.TrimSpace(note) == "" {
		return apperr.Invalid(map[string]string{"note": "Give the carrier a reason."})
	}
	return s.Store.DecideProfileChange(ctx, p.User.ID, id, ch.Decide(approve, strings.TrimSpace(note)))
}

// ProfileDecision is what deciding a profile change does: the change's new
// state, the profile an approval publishes, and the carrier's message.
type ProfileDecision struct {
	State, Note string
	// Publish is the profile an approval publishes; nil for a decline.
	Publish *PublishedProfile
	// Message tells the carrier (ProfileDecided's words).
	Message string
}

// PublishedProfile is what an approved change writes over the profile.
type PublishedProfile struct {
	Description, Website, SupportContact, StatusURL string
	// LogoType and Logo are the new logo; LogoType "" keeps the logo the
	// profile has (the change brought none).
	LogoType string
	Logo     []byte
}

// Decide is the decision on the change: approved, it publishes every
// field it proposes (its logo only if it brought one); declined, nothing.
func (ch ProfileChange) Decide(approve bool, note string) ProfileDecision {
	d := ProfileDecision{State: Declined, Note: note, Message: ProfileDecided(approve, note)}
	if approve {
		d.State = Approved
		d.Publish = &PublishedProfile{Description: ch.Description, Website: ch.Website, SupportContact: ch.SupportContact,
			StatusURL: ch.StatusURL, LogoType: ch.LogoType, Logo: ch.Logo}
	}
	return d
}

// ProposalForm is a model proposal as typed.
type ProposalForm struct {
	Name, Slug, Family, ContextTokens, MaxOutputTokens string
	InputModalities, OutputModalities                  []string
	Note                                               string
}

var modalities = []string{"text", "image", "audio", "video", "file"}

func (f ProposalForm) parse() (Proposal, map[string]string) {
	problems := map[string]string{}
	pr := Proposal{Name: strings.TrimSpace(f.Name), Slug: strings.TrimSpace(f.Slug), Family: strings.TrimSpace(f.Family), Note: strings.TrimSpace(f.Note)}
	text("name", f.Name, 100, true, problems)
	text("family", f.Family, 100, false, problems)
	text("note", f.Note, 2000, false, problems)
	if !slugPattern.MatchString(pr.Slug) && !regexp.MustCompile(`^[a-z0-9][a-z0-9.-]{1,58}[a-z0-9]$`).MatchString(pr.Slug) {
		problems["slug"] = "Lower-case letters, digits, dots and dashes, like kimi-k2.5."
	}
	num := func(field, v string, lo, hi int64) int64 {
		n, err := strconv.ParseInt(strings.TrimSpace(v), 10, 64)
		if err != nil || n < lo || n > hi {
			problems[field] = fmt.Sprintf("A whole number of tokens from %d to %d.", lo, hi)
		}
		return n
	}
	pr.ContextTokens = num("context_tokens", f.ContextTokens, 1024, 10_000_000)
	pr.MaxOutputTokens = num("max_output_tokens", f.MaxOutputTokens, 1, 10_000_000)
	pick := func(field string, in []string) string {
		var out []string
		for _, m := range in {
			for _, ok := range modalities {
				if m == ok && !contains(out, m) {
					out = append(out, m)
				}
			}
		}
		if len(out) == 0 {
			problems[field] = "Choose at least one."
		}
		return strings.Join(out, ",")
	}
	pr.InputModalities = pick("input_modalities", f.InputModalities)
	pr.OutputModalities = pick("output_modalities", f.OutputModalities)
	return pr, problems
}

func contains(list []string, s string) bool {
	for _, x := range list {
		if x == s {
			return true
		}
	}
	return false
}

// Propose files a model proposal; only a carrier's admins may.
func (s *Service) Propose(ctx context.Context, p *account.Principal, carrierID int64, f ProposalForm) (int64, error) {
	if !workflow.CanFileFor(p, carrierID) {
		return 0, apperr.Errorf(apperr.ENOTFOUND, "Carrier not found.")
	}
	if !workflow.CanManageListings(p, carrierID) {
		return 0, apperr.Errorf(apperr.EFORBIDDEN, "Only the carrier's admins propose models.")
	}
	pr, problems := f.parse()
	if len(problems) > 0 {
		return 0, apperr.Invalid(problems)
	}
	pr.CarrierID = carrierID
	return s.Store.CreateProposal(ctx, p.User.ID, pr)
}

// DecideProposal accepts a proposal (with staff's edits) into the catalogue,
// or declines it with a reason.
func (s *Service) DecideProposal(ctx context.Context, p *account.Principal, id int64, accept bool, edits ProposalForm, note string) error {
	if err := staffOnly(p); err != nil {
		return err
	}
	pr, err := s.Store.FindProposal(ctx, id)
	if err != nil {
		return err
	}
	if pr.State != Submitted {
		return apperr.Errorf(apperr.ECONFLICT, "This proposal is already %s.", pr.State)
	}
	if !accept {
		if strings.TrimSpace(note) == "" {
			return apperr.Invalid(map[string]string{"note": "Tell the carrier why."})
		}
		return s.Store.DeclineProposal(ctx, p.User.ID, id, strings.TrimSpace(note))
	}
	final, problems := edits.parse()
	if len(problems) > 0 {
		return apperr.Invalid(problems)
	}
	m := catalogue.Model{Slug: final.Slug, Name: final.Name, ContextTokens: final.ContextTokens, Family: final.Family,
		MaxOutputTokens: final.MaxOutputTokens, InputModalities: final.InputModalities, OutputModalities: final.OutputModalities}
	return s.Store.AcceptProposal(ctx, p.User.ID, id, m, strings.TrimSpace(note))
}
