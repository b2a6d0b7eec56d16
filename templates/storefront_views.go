package templates

// ApplyView is the application form.
type ApplyView struct {
	Page
	Company, Website, ContactName, ContactEmail, Models, Description string
	Errors                                                           FieldErrors
}

// ThreadItem is one message of an application's thread.
type ThreadItem struct {
	Author, Body, At string
	FromStaff        bool
}

// ApplicationView is an application as its applicant or staff read it.
type ApplicationView struct {
	Page
	ID                                          int64
	Company, Website, ContactName, ContactEmail string
	Models, Description, State, Submitted       string
	DecisionNote                                string
	Thread                                      []ThreadItem
	// StatusURL is where the applicant follows it (shown once, on apply);
	// SignupURL the sign-up link once approved.
	StatusURL, SignupURL, ReplyAction string
	// Staff forms.
	CanAsk, CanApprove bool
	SuggestedSlug      string
	Errors             FieldErrors
}

// ApplicationRow is one application in staff's queue.
type ApplicationRow struct {
	URL, Company, Website, State, Submitted string
}

// ApplicationsView is staff's queue of applications.
type ApplicationsView struct {
	Page
	Rows []ApplicationRow
}

// ProfileView is a carrier admin's profile page.
type ProfileView struct {
	Page
	Carrier, Slug                                   string
	Carriers                                        []Choice
	Description, Website, SupportContact, StatusURL string
	HasLogo                                         bool
	LogoURL, PublicURL                              string
	Pending                                         string
	CanEdit                                         bool
	Errors                                          FieldErrors
	Domain, DomainToken, TXT, FileURL, DomainState  string
	DomainVerified                                  bool
}

// ProposalRow is one model proposal.
type ProposalRow struct {
	ID                                    int64
	Carrier, Name, Slug, Family, Context  string
	MaxOutput, Input, Output, Note, State string
	DecisionNote, Author                  string
	CanDecide                             bool
}

// ProposalsView lists proposals, with the form to propose one.
type ProposalsView struct {
	Page
	Carrier, Slug   string
	CanPropose      bool
	Form            ProposalRow
	Inputs, Outputs []Option
	Errors          FieldErrors
	Rows            []ProposalRow
}

// ProfileChangeRow is a profile change in the review queue.
type ProfileChangeRow struct {
	ID                                    int64
	Carrier, Author, Submitted            string
	Description, Website, Support, Status string
	Logo                                  string
	CanDecide                             bool
}

// Badge is a verified mark on a public page.
type Badge struct {
	Label, Title string
}

// PublicListingRow is one listing on a public page.
type PublicListingRow struct {
	Name, URL                string
	Input, Output, Cached    string
	Discount, Uptime, Status string
	Badges                   []Badge
	// PriceNotes are the prices the columns do not show: off-peak hours,
	// context tiers.
	PriceNotes []string
	// Offers is what the listing offers besides price, in short: context,
	// quantization, data policy, regions, fees (election.md sec. 7).
	Offers []string
}

// PublicCarrierView is /carriers/{slug}.
type PublicCarrierView struct {
	Page
	Name, Description, Website, Support, StatusURL string
	LogoURL                                        string
	Badges                                         []Badge
	Rows                                           []PublicListingRow
}

// PublicModelView is /models/{slug}: the model card.
type PublicModelView struct {
	Page
	Name, Slug, Family, Context, MaxOutput, Input, Output string
	Sort                                                  string
	Sorts                                                 []Choice
	Rows                                                  []PublicListingRow
}

// PublicModelsView is /models: every routed model and its carriers.
type PublicModelsView struct {
	Page
	Rows []PublicModelRow
}

// PublicModelRow is one model of /models.
type PublicModelRow struct {
	Name, URL, Context, LowestInput string
	// Carriers link to their public profiles (URL empty without one).
	Carriers []Choice
}

// FilingsView is /filings: a carrier's (or, for staff, every) filing, by
// state, with drafts submittable together.
type FilingsView struct {
	Page
	States      []Choice
	Rows        []FilingRow
	CanSubmit   bool
	Batch       string // ids of a bulk upload's drafts, kept in the URL
	ShowCarrier bool
	// AllURL is the same list without the upload's filter (Batch).
	AllURL string
}

// AccountView is /account: one's own password and carriers.
type AccountView struct {
	Page
	Email, Name string
	Carriers    []Choice
	Errors      FieldErrors
	Done        string
	// AlertEmail is the person's alert e-mail setting (nil for staff).
	AlertEmail *AlertEmailView
	// TwoFactorOn: the person signs in with a second factor.
	TwoFactorOn bool
	// Browsers are the browsers that skip the code now.
	Browsers []RememberedBrowserRow
}

// AlertEmailView is how alerts are e-mailed to the person ("each",
// "digest" or "off"), whether that is their own choice or their role's
// default, and whether the portal can send e-mail at all.
type AlertEmailView struct {
	Mode                   string
	Chosen, MailConfigured bool
}

// MemberRow is one person of a carrier.
type MemberRow struct {
	UserID            int64
	Email, Name, Role string
	Self              bool
}

// MembersView is /carrier/members.
type MembersView struct {
	Page
	Carrier, Slug string
	Carriers      []Choice
	Rows          []MemberRow
	CanManage     bool
	InviteLink    string
	// Mailed says whether the link was also e-mailed (AIRSIDE_SMTP_URL).
	Mailed      string
	Email, Role string
	Errors      FieldErrors
}

// ResetView is the page of a password reset link.
type ResetView struct {
	Page
	Token, Email string
	Errors       FieldErrors
}
