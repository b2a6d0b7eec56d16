package workflow

import (
	"context"
	"errors"
	"fmt"
	"net/url"
	"strings"
	"time"

	"github.com/airside/airside/internal/account"
	"github.com/airside/airside/internal/apperr"
	"github.com/airside/airside/internal/catalogue"
	"github.com/airside/airside/internal/fare"
	"github.com/airside/airside/internal/preflight"
	"github.com/airside/airside/internal/secret"
	"github.com/airside/airside/internal/textcheck"
)

// EndpointStore is what endpoints and preflight need from storage.
type EndpointStore interface {
	FindListingHeader(ctx context.Context, id int64, carrierIDs []int64) (*catalogue.Listing, error)
	LatestEndpoint(ctx context.Context, listingID int64) (*catalogue.Endpoint, string, error)
	RegisterEndpoint(ctx context.Context, actorID int64, ep NewEndpoint) (int64, error)
	RequestPreflight(ctx context.Context, actorID, listingID int64, minGap time.Duration) (int64, error)
	FindPreflightRuns(ctx context.Context, listingID, endpointID int64) (*preflight.Run, map[string]preflight.Result, error)
	PublishedKey(ctx context.Context, listingID, tokenID int64) (*catalogue.Endpoint, string, error)
}

// URLChecker is the outbound-address rule (netguard.Guard).
type URLChecker interface {
	CheckURL(raw string) (*url.URL, error)
}

// Endpoints registers carriers' deployments and runs preflight on demand.
type Endpoints struct {
	Store    EndpointStore
	Secrets  *secret.Box
	Outbound URLChecker
	// Queued is told when a run was queued (the worker wakes).
	Queued func()
	// MinGap is the least time between two preflights a person asks for.
	MinGap time.Duration
}

// EndpointForm is the endpoint as typed.
type EndpointForm struct {
	BaseURL       string
	UpstreamModel string
	// APIKey is write-only; empty keeps the key registered last.
	APIKey        string
	Justification string
	// Via names the API token the endpoint is filed with ("" from the
	// browser), shown to the reviewer as a fare filed by API is.
	Via string
}

// Limits of the endpoint form.
const (
	MaxUpstreamModel = 200
	MaxAPIKey        = 1000
	MaxBaseURL       = 500
)

// KeyBinding binds a sealed key to its listing: copied to another
// listing's row it does not open.
func KeyBinding(listingID int64) string { return fmt.Sprintf("listing:%d", listingID) }

// Register files a new endpoint for a listing: checked, its key sealed,
// submitted for review, and a preflight of it queued. Only the carrier's
// admins may.
func (e *Endpoints) Register(ctx context.Context, p *account.Principal, listingID int64, form EndpointForm) (int64, error) {
	l, err := e.Store.FindListingHeader(ctx, listingID, Scope(p))
	if err != nil {
		return 0, err
	}
	if !CanFileFor(p, l.CarrierID) {
		return 0, apperr.Errorf(apperr.ENOTFOUND, "Listing not found.")
	}
	if !CanManageListings(p, l.CarrierID) {
		return 0, errAdminsManage
	}
	if l.Status == catalogue.StatusDelisted {
		return 0, apperr.Errorf(apperr.ECONFLICT, "This listing is delisted.")
	}
	problems := map[string]string{}
	form.BaseURL = strings.TrimRight(strings.TrimSpace(form.BaseURL), "/")
	form.UpstreamModel = strings.TrimSpace(form.UpstreamModel)
	form.APIKey = strings.TrimSpace(form.APIKey)
	switch {
	case form.BaseURL == "":
		problems["base_url"] = "Give the base URL of your OpenAI-compatible API, e.g. https://api.example.com/v1."
	case len(form.BaseURL) > MaxBaseURL:
		problems["base_url"] = fmt.Sprintf("Keep the URL under %d characters.", MaxBaseURL)
	default:
		if _, err := e.Outbound.CheckURL(form.BaseURL); err != nil {
			problems["base_url"] = urlProblem(err)
		}
	}
	switch {
	case form.UpstreamModel == "":
		problems["upstream_model"] = "Give the model name your server expects in requests."
	case len(form.UpstreamModel) > MaxUpstreamModel || strings.ContainsAny(form.UpstreamModel, " \t\r\n"):
		problems["upstream_model"] = fmt.Sprintf("A model name has no spaces and is under %d characters.", MaxUpstreamModel)
	}
	prev, prevSealed, err := e.Store.LatestEndpoint(ctx, listingID)
	if err != nil {
		return 0, err
	}
	switch {
	case form.APIKey == "" && prev == nil:
		problems["api_key"] = "Give the API key Airside and the gateway use to call your endpoint."
	case len(form.APIKey) > MaxAPIKey || strings.ContainsAny(form.APIKey, " \t\r\n"):
		problems["api_key"] = "An API key has no spaces and is under 1000 characters."
	case form.APIKey != "" && len(form.APIKey) < 12:
		problems["api_key"] = "That key is too short to be a real API key."
	}
	if msg := textcheck.Problem(form.Justification, fare.MaxJustification); msg != "" {
		problems["justification"] = msg
	}
	if len(problems) > 0 {
		return 0, apperr.Invalid(problems)
	}
	if prev != nil && form.APIKey == "" && prev.BaseURL == form.BaseURL && prev.UpstreamModel == form.UpstreamModel {
		return 0, apperr.Invalid(map[string]string{"base_url": "This is the endpoint registered already: change the URL, the model or the key."})
	}
	ne := NewEndpoint{ListingID: listingID, BaseURL: form.BaseURL, UpstreamModel: form.UpstreamModel, Justification: form.Justification, ViaToken: form.Via}
	if form.APIKey != "" {
		if ne.KeySealed, err = e.Secrets.Seal(form.APIKey, KeyBinding(listingID)); err != nil {
			return 0, fmt.Errorf("seal the key: %w", err)
		}
		ne.KeyHint = secret.Hint(form.APIKey)
	} else {
		// No key typed: the one registered last is kept (the store
		// writes what it is given).
		ne.KeySealed, ne.KeyHint = prevSealed, prev.KeyHint
	}
	id, err := e.Store.RegisterEndpoint(ctx, p.User.ID, ne)
	if err == nil && e.Queued != nil {
		e.Queued()
	}
	return id, err
}

func urlProblem(err error) string {
	msg := err.Error()
	if i := strings.Index(msg, ": "); i >= 0 {
		msg = msg[i+2:]
	}
	return "Airside cannot probe this address: " + msg + "."
}

// RunPreflight queues a preflight of a listing's latest endpoint on demand:
// its carrier's members and reviewers may, at most once a minute.
func (e *Endpoints) RunPreflight(ctx context.Context, p *account.Principal, listingID int64) (int64, error) {
	l, err := e.Store.FindListingHeader(ctx, listingID, Scope(p))
	if err != nil {
		return 0, err
	}
	if !CanFileFor(p, l.CarrierID) && !p.IsReviewer() {
		return 0, apperr.Errorf(apperr.ENOTFOUND, "Listing not found.")
	}
	gap := e.MinGap
	if gap <= 0 {
		gap = time.Minute
	}
	id, err := e.Store.RequestPreflight(ctx, p.User.ID, listingID, gap)
	if err == nil && e.Queued != nil {
		e.Queued()
	}
	return id, err
}

// OpenKey unseals a key for its listing.
func (e *Endpoints) OpenKey(sealed string, listingID int64) (string, error) {
	return e.Secrets.Open(sealed, KeyBinding(listingID))
}

// Reseal is the re-encryption a key rotation runs over every stored key:
// a key sealed with an older key is sealed again with the primary one.
func (e *Endpoints) Reseal(sealed string, listingID int64) (string, bool, error) {
	if secret.SealedWith(sealed) == e.Secrets.Primary() {
		return sealed, false, nil
	}
	plain, err := e.OpenKey(sealed, listingID)
	if err != nil {
		return "", false, err
	}
	next, err := e.Secrets.Seal(plain, KeyBinding(listingID))
	return next, err == nil, err
}

// Credentials hands a listing's published endpoint and key to a gateway
// token holding the credentials scope; the store audits every read.
func (e *Endpoints) Credentials(ctx context.Context, tokenID, listingID int64) (*catalogue.Endpoint, string, error) {
	ep, sealed, err := e.Store.PublishedKey(ctx, listingID, tokenID)
	if err != nil {
		return nil, "", err
	}
	if ep == nil {
		return nil, "", apperr.Errorf(apperr.ENOTFOUND, "This listing has no published endpoint.")
	}
	key, err := e.OpenKey(sealed, listingID)
	if errors.Is(err, secret.ErrNoKey) {
		return nil, "", fmt.Errorf("credentials of listing %d: the key was sealed with a secret key this instance does not hold: %w", listingID, err)
	}
	return ep, key, err
}

// Preflight returns what a listing page shows: the latest run and each
// probe's latest verdict against the endpoint shown (the one registered
// last).
func (e *Endpoints) Preflight(ctx context.Context, listingID int64) (*catalogue.Endpoint, *preflight.Run, map[string]preflight.Result, error) {
	ep, _, err := e.Store.LatestEndpoint(ctx, listingID)
	if err != nil || ep == nil {
		return nil, nil, nil, err
	}
	run, latest, err := e.Store.FindPreflightRuns(ctx, listingID, ep.ID)
	return ep, run, latest, err
}

// PassedPreflightSince reports whether a listing's published endpoint
// passed the probes ReadyForService asks for, each after since (a resume
// with the fare of before the pause: the endpoint must work now, not only
// before it was paused).
func (e *Endpoints) PassedPreflightSince(ctx context.Context, l *catalogue.Listing, since time.Time) error {
	if l.Endpoint == nil {
		return apperr.Errorf(apperr.ECONFLICT, "This listing has no approved endpoint: register one before resuming.")
	}
	_, latest, err := e.Store.FindPreflightRuns(ctx, l.ID, l.Endpoint.ID)
	if err != nil {
		return err
	}
	for _, probe := range []string{preflight.ProbeReachable, preflight.ProbeChat, preflight.ProbeStreaming} {
		if r := latest[probe]; r.State != preflight.Passed || !r.At.After(since) {
			p, _ := preflight.Lookup(probe)
			return apperr.Errorf(apperr.ECONFLICT, "The fare is the one in force when this listing was paused, so resuming needs no review, "+
				"but the endpoint has not passed the %q probe since the pause. Run preflight (below); once it passes, resume takes effect at once.", p.Title)
		}
	}
	return nil
}

// ReadyForService reports whether a listing's published endpoint passed the
// reachability, chat and streaming probes (within freshness): a listing goes
// into service only then. Streaming counts because a gateway streams and
// bills by the usage the stream reports: a server that streams without
// usage cannot be billed.
func (e *Endpoints) ReadyForService(ctx context.Context, l *catalogue.Listing) error {
	if l.Endpoint == nil {
		return apperr.Errorf(apperr.ECONFLICT, "This listing has no approved endpoint yet: the carrier registers one, and it is approved, before the listing goes into service.")
	}
	_, latest, err := e.Store.FindPreflightRuns(ctx, l.ID, l.Endpoint.ID)
	if err != nil {
		return err
	}
	for _, probe := range []string{preflight.ProbeReachable, preflight.ProbeChat, preflight.ProbeStreaming} {
		if latest[probe].State != preflight.Passed {
			p, _ := preflight.Lookup(probe)
			return apperr.Errorf(apperr.ECONFLICT, "The listing's endpoint has not passed the %q probe: run preflight until it does before the listing goes into service.", p.Title)
		}
	}
	return nil
}
