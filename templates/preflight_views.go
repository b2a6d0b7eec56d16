package templates

import (
	"strings"

	"github.com/airside/airside/internal/fare"
)

// EndpointView is a listing's deployment on its page: the endpoint
// published, the one under review, and the carrier admin's form.
type EndpointView struct {
	Published *EndpointRow
	Pending   *EndpointRow
	// CanRegister shows the form; HasKey says a key is on file (the field
	// may stay empty to keep it).
	CanRegister bool
	HasKey      bool
	Form        EndpointForm
	CSRF        string
	ListingURL  string
}

// EndpointRow is one endpoint as shown: never the key, only its hint.
type EndpointRow struct {
	BaseURL, UpstreamModel, KeyHint, Since string
	FilingURL                              string // the filing that registers it, while under review
}

// EndpointForm is what was typed in the endpoint form, and what is wrong
// with it; the key is never echoed back.
type EndpointForm struct {
	BaseURL, UpstreamModel, Justification string
	Errors                                FieldErrors
}

// PreflightView is the probes of a listing's endpoint, polled while a run
// is under way.
type PreflightView struct {
	ListingURL string
	CSRF       string
	CanRun     bool
	// Busy makes the panel poll itself until the run is done.
	Busy     bool
	Endpoint string
	RunLabel string
	Speed    string
	Rows     []ProbeRow
	// CacheWarning says the fare files a cached price the endpoint showed
	// no cache hit for.
	CacheWarning bool
	None         bool
}

// ProbeRow is one probe's latest state and evidence.
type ProbeRow struct {
	Name, Title, Capability, Request string
	State, StateClass                string
	Status, Latency, At              string
	Excerpt, Error, Fix              string
}

// ariaInvalid marks a field with an error for assistive technology.
func ariaInvalid(errs FieldErrors, field string) string {
	if errs[field] != "" {
		return "true"
	}
	return "false"
}

func boolText(b bool) string {
	if b {
		return "true"
	}
	return "false"
}

// invalid is aria-invalid for a field: "true" with an error, else "false".
func invalid(errs map[string]string, field string) string { return ariaInvalid(errs, field) }

// describedBy points a field at its error message, only when there is one
// (an aria-describedby naming an id that is not on the page is an error).
func describedBy(errs map[string]string, field string) string {
	if errs[field] != "" {
		return fieldID(field) + "-error"
	}
	return ""
}

// fieldID is the element id of a field key: a row cell's dots
// ("tier.1.input") become dashes, as the form's inputs are named.
func fieldID(key string) string { return fare.FieldID(key) }

// anchor makes a term's id: "Routing price" is "routing-price".
func anchor(label string) string {
	return strings.ToLower(strings.ReplaceAll(label, " ", "-"))
}
