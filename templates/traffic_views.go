package templates

// Choice is a link among alternatives (a period, a carrier, a month).
type Choice struct {
	Label, URL string
	Active     bool
}

// Figure is one headline number.
type Figure struct {
	Label, Value, TestID string
}

// TrafficRow is one listing on the carrier's traffic page.
type TrafficRow struct {
	URL, Model                                   string
	Requests, Share, Tokens, Filed, Kept, Uptime string
	Capped                                       string
	// Projected is the share the preview projected over the window from
	// what was in force hour by hour ("–" without one).
	Projected string
	// ThisHour is the share served in the hour under way so far, with its
	// projection ("–" before the model's first request in it).
	ThisHour string
}

// CarrierTrafficView is /traffic: what the carrier's fares did.
type CarrierTrafficView struct {
	Page
	Carrier  string
	Carriers []Choice
	Periods  []Choice
	Window   string
	// ThisHourSince is when the hour under way began (its column's head).
	ThisHourSince string
	Zones         []Option
	ZoneAction    string
	Hidden        map[string]string
	Figures       []Figure
	Earnings      SeriesChartView
	Rows          []TrafficRow
	Statements    []Choice
	// Mixes are the measured workload mix of each model the carrier lists.
	Mixes []MixRow
	// Orgs are the period's customer organisations, busiest first, under
	// the labels the gateway reports; OrgsOthers sums those past the table.
	Orgs       []OrgRow
	OrgsOthers string
}

// OrgRow is one customer organisation's period on the carrier's listings.
type OrgRow struct {
	Organisation, Listings, Requests, Failed, Input, Cached, Output, Kept string
}

// MixRow is one model's workload mix as the gateway measured it.
type MixRow struct {
	Model, Requests, Small, Large, Coding, Chat string
}

// IncidentRow is one incident as listed.
type IncidentRow struct {
	Start, End, Worst, Failed, Requests string
}

// ListingTrafficView is one listing's traffic, earnings and health.
type ListingTrafficView struct {
	Page
	Title, ListingURL, TrafficURL string
	Periods                       []Choice
	Window                        string
	Zones                         []Option
	ZoneAction                    string
	Hidden                        map[string]string
	Figures                       []Figure
	Requests, Share, Earnings     SeriesChartView
	Uptime, Latency               SeriesChartView
	Incidents                     []IncidentRow
	CapNote                       string
	TierNote                      bool
	// Changes is each fare published, with the share the week before and
	// after; Projected the preview's share for an even mix, as published.
	Changes   []FareChangeRow
	Projected string
	// ProjectedMix says which workload mix the projection assumed.
	ProjectedMix string
	// SharePolicy is the listing's share, as published, for projects on
	// the share policy: the total weighed as ProjectedMix says, then a row
	// per scenario ("" / nil when it is not in service).
	SharePolicy     string
	SharePolicyRows []Figure
	// SharePolicyDemand is the part of the model's requests the share
	// policy carried, and Blended the share with each policy weighed by
	// its demand ("" when no request came under the share policy).
	SharePolicyDemand, Blended string
	// Routing is what routing did in the period: how the served requests
	// came, failures by class, 429s, caps and tool-call quality.
	Routing []Figure
	// Limits are the times in the last day the gateway's limits held the
	// listing back (its breaker, 429 backoffs), each in a sentence saying
	// when and why.
	Limits []string
	// Gap is the projected share beside the measured one, and why they
	// differ (nil without a projection).
	Gap *ShareGapView
	// ThisHour is the hour under way so far: partial, updated as routing
	// reports (nil when the model has had no request in it).
	ThisHour *ThisHourView
}

// ThisHourView is a listing's share of the hour under way so far, served
// and projected by the same rule as every closed hour.
type ThisHourView struct {
	Since, Served, Projected, Requests string
}

// ShareGapView is a listing's projected share beside the share routing
// served it in the period, in percentage points, with the named causes of
// the difference (each of at least a point; the rest are smaller).
type ShareGapView struct {
	Projected, Measured, Gap string
	// Since is the first hour projected (a window reaching further back
	// than web.ProjectionReach is compared from there).
	Since  string
	Causes []CauseRow
	// OnModelRates are the requests (count and share) that carried
	// preferences or came under the share policy from a gateway that
	// names API projects: the projection replayed them on the model's
	// learned rates, routing elected them on their project's. Empty, none.
	OnModelRates string
}

// CauseRow is one cause of a gap.
type CauseRow struct {
	Key, Name, Points string
}

// FareChangeRow is one fare publication and what it did to the share:
// served, and projected from what was in force ("–" out of reach).
type FareChangeRow struct {
	When, Fare, Before, After       string
	ProjectedBefore, ProjectedAfter string
}

// StatementRow is one line of a statement.
type StatementRow struct {
	Model, URL                        string
	Requests, Input, Cached, Output   string
	Filed, Discount, LandingFee, Kept string
}

// StatementView is a carrier's monthly statement.
type StatementView struct {
	Page
	Carrier, Month, State, CSVURL, PDFURL string
	// Number is the issued statement's ("" while provisional); Issued says
	// what that means; Exact is the amounts owed to the micro-dollar.
	Number, Issued, Exact string
	Carriers, Months      []Choice
	Lines                 []StatementRow
	Total                 StatementRow
	Notes                 []CreditNoteView
	// Net is the total after the credit notes (shown with notes only).
	Net      StatementRow
	Unpriced string
}

// CreditNoteView is a credit note on a statement.
type CreditNoteView struct {
	Number, Issued, Reason string
	Lines                  []StatementRow
	Total                  StatementRow
}

// OperationsRow is one listing on the staff's operations page.
type OperationsRow struct {
	Model, Carrier, URL, Status      string
	Wins                             string
	Uptime, Latency, Share, Requests string
	// Projected is the share the preview projects for the same 24 hours
	// from what was in force hour by hour ("–" where none).
	Projected                     string
	Incident, Waiting, WaitingURL string
	UptimeClass                   string
}

// OperationsView is /operations: the whole catalogue at a glance.
type OperationsView struct {
	Page
	Model, Carrier, Sort string
	// Models and Carriers are the filters' choices: names shown, slugs as
	// the values (Label, URL).
	Models, Carriers []Choice
	Sorts            []Choice
	Rows             []OperationsRow
	Waiting          int
	// Maintenance is every open maintenance window, soonest first.
	Maintenance []MaintenanceRow
	// Refusals are the metric rows this process refused lately, newest
	// first (a gateway's replay of a recorded minute with other figures).
	Refusals []string
}

// AlertRow is one alert as listed.
type AlertRow struct {
	Listing, Kind, Detail, Opened, State, Class string
	// ListingID and KindValue feed the row's mute form (shown for an open
	// alert to those who manage); Muted is until when its notices are
	// muted ("" when they are not).
	ListingID, KindValue, Muted string
	Open                        bool
}

// AlertRuleRow is one alert rule as the rules form shows it: the values in
// force (or as typed, after an error) and what it watches.
type AlertRuleRow struct {
	Kind, Label, Watches  string
	On                    bool
	OpenAfter, CloseAfter string
	// Threshold fields are empty for a rule whose line is routing's.
	ThresholdLabel, Threshold, ThresholdSuffix string
	// Default says the rule's defaults when the carrier changed it.
	Default string
}

// MuteRow is one mute in force.
type MuteRow struct {
	ID, Listing, Kind, Until, By string
}

// DeliveryRow is one webhook delivery as listed.
type DeliveryRow struct {
	ID, Event, State, Attempts, Status, Created, Error string
	// CanResend: it failed or waits for a retry, and the viewer manages
	// the webhook.
	CanResend bool
}

// AlertsView is /alerts: a carrier's alerts and its webhook.
type AlertsView struct {
	Page
	Carrier, Slug string
	Carriers      []Choice
	Alerts        []AlertRow
	CanManage     bool
	URL           string
	// AcceptsLocal: this portal also sends to http and private addresses.
	AcceptsLocal bool
	HookSince    string
	// PreviousUntil is until when a rotated-out secret still signs ("" when
	// only the current one does).
	PreviousUntil string
	// NewSecret is the webhook's signing secret, shown once after it is set.
	NewSecret  string
	Errors     FieldErrors
	Deliveries []DeliveryRow
	// Rules are the carrier's alert rules; RuleErrors the rules form's
	// problems, MuteErrors the mute form's.
	Rules                  []AlertRuleRow
	RuleErrors, MuteErrors FieldErrors
	// Mutes are the mutes in force; MuteListings, MuteKinds and
	// MuteDurations the mute form's choices (Label shown, URL the value).
	Mutes                                  []MuteRow
	MuteListings, MuteKinds, MuteDurations []Choice
}

// PriceHistoryView is /listings/:id/prices: a listing's fares over time and
// its model's market.
type PriceHistoryView struct {
	Page
	Carrier, Model, ListingURL string
	Fares                      []FareHistoryRow
	Chart                      SeriesChartView
}

// FareHistoryRow is one published fare, from when it was in force.
type FareHistoryRow struct {
	From, Input, Output, Cached, Discount, LandingFee, RoutesAt string
}

// OnCallView is /oncall: every listing's live state at a glance, the last
// alerts, and the action each allows.
type OnCallView struct {
	Page
	Carrier, Slug string
	Carriers      []Choice
	Listings      []OnCallRow
	Alerts        []AlertRow
	// CanAct: the viewer is one of the carrier's admins (pause, resume,
	// mute); Checked is when the figures were read.
	CanAct  bool
	Checked string
}

// OnCallRow is one listing's live state.
type OnCallRow struct {
	ID, Model, URL string
	// State is the badge ("serving", "breaker open", ...), StateClass its
	// colour, StateWords the sentence under it.
	State, StateClass, StateWords string
	// Traffic is the last 10 minutes in words; OpenAlerts the alerts open.
	Traffic    string
	OpenAlerts []string
	// Actions the viewer may take: pause (a link to the listing's pause
	// form), resume (a form), mute (its alerts for an hour).
	CanPause, CanResume, CanMute bool
}
