package projection

import "github.com/airside/airside/internal/preview"

// The preview's vocabulary, as the pages read it: the portal asks this
// package for every projected figure and reads the answers in these types,
// and never calls the preview engine itself (an import rule keeps web off
// internal/preview and internal/traffic).
type (
	// Share is a projected share of a model's requests.
	Share = preview.Share
	// Result is a fare preview; ScenarioResult one of its scenarios;
	// Competitor a rival in it; WinPlan what would win a scenario;
	// Prospect where the listing stands in one and what it takes, and
	// SetProspect the same for the requests that carried one set of
	// preferences.
	Result         = preview.Result
	ScenarioResult = preview.ScenarioResult
	Competitor     = preview.Competitor
	WinPlan        = preview.WinPlan
	Prospect       = preview.Prospect
	SetProspect    = preview.SetProspect
	// ProjectProspect is a scenario's part from API projects whose rates
	// routing learned apart, as the preview elects it.
	ProjectProspect = preview.ProjectProspect
	// Scenario is a workload the preview elects for.
	Scenario = preview.Scenario
	// Change is a filing's change to a listing, ScenarioImpact its effect on
	// one scenario, Standing a listing's place in one.
	Change         = preview.Change
	ScenarioImpact = preview.ScenarioImpact
	ProjectImpact  = preview.ProjectImpact
	Standing       = preview.Standing
	// ShareStanding is a listing's place under the share policy;
	// PolicyShare its standing across the standard scenarios.
	ShareStanding = preview.ShareStanding
	PolicyShare   = preview.PolicyShare
)
