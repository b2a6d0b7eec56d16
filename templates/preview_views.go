package templates

import "github.com/airside/airside/internal/fare"

// PreviewView is the standalone preview page of a listing.
type PreviewView struct {
	Page
	Listing     ListingHeader
	Action      string
	FragmentURL string
	Form        fare.Form
	Errors      FieldErrors
	Panel       PreviewPanel
	FileURL     string
}

// PreviewPanel is where a fare lands: the part that updates as the carrier
// types. Its inputs belong to the form named FormID.
type PreviewPanel struct {
	FormID      string
	FragmentURL string
	Error       string
	// Waiting says the form has no prices yet (a new listing): not an error,
	// an invitation.
	Waiting   bool
	Effective []KV
	Rows      []ScenarioRow
	Ballots   []BallotView
	Win       []WinRow
	// UnderShare is where the listing stands for projects on the share
	// policy, a row per auto scenario (its Lines explain the share).
	UnderShare []WinRow
	// ShareEdge is the share policy's competitive edge in words.
	ShareEdge string
	Share     ShareView
	Mix       []MixInput
	// MixSource says where the workload mix comes from (measured, typed, or
	// even for want of demand).
	MixSource string
	Custom    CustomScenario
	Focus     []Option
	FeeChart  FeeChartView
	Bars      BarsChartView
	Heatmap   HeatmapView
	// Unserved are the parts of the model's requests the listing cannot
	// serve for something other than price (context, data policy,
	// quantization, region), largest first, each with what would open it.
	Unserved []UnservedRow
}

// UnservedRow is one part of the model's requests the listing cannot serve.
type UnservedRow struct{ Why, Fix string }

// ScenarioRow is the carrier's standing in one scenario.
type ScenarioRow struct {
	Key, Name                                 string
	TokenPrice, RoutingPrice                  string
	Price, Uptime, Throughput, Latency, Cache string
	Penalties, Score, Rank, Winner, Gap       string
	Class                                     string // "win", "lose", "held" (ranked first, not served) or "excluded"
	// Held says who keeps the scenario's traffic although this listing
	// ranks first, and by which rule ("" when rank and traffic agree).
	Held string
}

// BallotView is one scenario's ranked ballot.
type BallotView struct {
	Scenario string
	Key      string
	Rows     []BallotRow
}

// BallotRow is a candidate as any carrier may see it: list prices, health,
// score and rank.
type BallotRow struct {
	Rank, Name, Input, Output, Cached, Uptime, TTFT, TPS, Score string
	Me                                                          bool
}

// WinRow says what it takes to win one scenario.
type WinRow struct {
	Scenario string
	Status   string
	Class    string
	Lines    []string
}

// ShareView is the projected share under auto routing.
type ShareView struct {
	Rows    []ShareRow
	Total   string
	Revenue string
}

// ShareRow is one shape of the mix.
type ShareRow struct {
	// Weight is the row's part of the headline; Share the carrier's share of
	// the row's servable requests (headline = sum of Weight x Share).
	Name, Percent, Outcome, Weight, Share, PerRequest string
}

// MixInput is one workload-mix percentage field.
type MixInput struct {
	Name, Label, Value string
}

// CustomScenario is the custom scenario's fields as typed.
type CustomScenario struct {
	Prompt, Workload, Routing, Hour, Day string
	Streaming                            bool
	Requires                             []CapabilityOption
}
