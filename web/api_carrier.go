package web

import (
	"crypto/sha256"
	"encoding/hex"
	"encoding/json"
	"fmt"
	"net/http"
	"slices"
	"strconv"
	"strings"
	"time"

	"github.com/labstack/echo/v4"

	"github.com/airside/airside/internal/account"
	"github.com/airside/airside/internal/apitoken"
	"github.com/airside/airside/internal/apperr"
	"github.com/airside/airside/internal/catalogue"
	"github.com/airside/airside/internal/fare"
	"github.com/airside/airside/internal/projection"
	"github.com/airside/airside/internal/textcheck"
	"github.com/airside/airside/internal/workflow"
)

// The carrier API (/api/v1/carrier/): a carrier's own listings, fares and
// filings, for its automation, by a token one of its admins issued. The
// token acts as that admin within that carrier only (apitoken.ActsFor), so
// every rule of the browser holds unchanged: the fare form's checks, the
// notice period, quarantine and review; a filing made here reads the same
// to a reviewer and names the token it came by.

// carrierAuth admits a carrier's token with the scope and acts as its
// issuer within its carrier.
func (s *Server) carrierAuth(scope string) echo.MiddlewareFunc {
	authenticated := s.apiAuth(scope)
	return func(next echo.HandlerFunc) echo.HandlerFunc {
		return authenticated(func(c echo.Context) error {
			tok, _ := c.Get(ctxToken).(*apitoken.Token)
			var issuer *account.Principal
			if tok.CarrierID != nil && tok.CreatedBy != nil {
				p, err := s.AccountReads.FindPrincipal(c.Request().Context(), *tok.CreatedBy)
				if err != nil && apperr.Code(err) != apperr.ENOTFOUND {
					return err
				}
				issuer = p
			}
			acting, err := apitoken.ActsFor(tok, issuer)
			if err != nil {
				return err
			}
			c.Set(ctxPrincipal, acting)
			return next(c)
		})
	}
}

type carrierListingsBody struct {
	Listings []carrierListing `json:"listings"`
}

type carrierListing struct {
	ListingID int64  `json:"listingId"`
	Carrier   string `json:"carrier"`
	Model     string `json:"model"`
	Status    string `json:"status"`
	// Published is the fare in force, by the fare table's keys (nil before
	// the first approval).
	Published map[string]any `json:"published"`
}

// handleCarrierListings lists the token's carrier's listings with their
// published fares, in the fields a filing takes.
func (s *Server) handleCarrierListings(c echo.Context) error {
	p := principal(c)
	ls, err := s.ListingReads.FindListings(c.Request().Context(), catalogue.ListingFilter{CarrierIDs: p.CarrierIDs(), StoredHealth: true})
	if err != nil {
		return err
	}
	body := carrierListingsBody{Listings: make([]carrierListing, 0, len(ls))}
	for _, l := range ls {
		item := carrierListing{ListingID: l.ID, Carrier: l.CarrierSlug, Model: l.Model.Slug, Status: string(l.Status)}
		if l.Published != nil {
			form := fare.FormOf(l.Published)
			item.Published = fare.ValuesOf(&form)
		}
		body.Listings = append(body.Listings, item)
	}
	return c.JSON(http.StatusOK, body)
}

// fileRequest is a filing's body: the fare's fields that change from the
// published fare (the others are restated as published; null clears a
// field), the justification among them, and whether to submit it to
// review at once (else it is kept as a draft).
type fileRequest struct {
	Fare   map[string]json.RawMessage `json:"fare"`
	Submit bool                       `json:"submit"`
}

// handleCarrierFile files a fare for one of the carrier's listings.
func (s *Server) handleCarrierFile(c echo.Context) error {
	listingID, err := listingIDParam(c)
	if err != nil {
		return err
	}
	var req fileRequest
	raw, err := decodeStrict(c, &req, `{"fare": {field: value, ...}, "submit": true|false}`)
	if err != nil {
		return err
	}
	if len(req.Fare) == 0 {
		return apperr.Invalid(map[string]string{"fare": "Name at least one fare field to change (and a justification)."})
	}
	idem, err := idempotencyOf(c, raw)
	if err != nil {
		return err
	}
	ctx := c.Request().Context()
	p := principal(c)
	l, err := s.Filings.ListingToFile(ctx, p, listingID)
	if err != nil {
		return err
	}
	form, err := publishedWith(l, req.Fare)
	if err != nil {
		return err
	}
	tok, _ := c.Get(ctxToken).(*apitoken.Token)
	id, replayed, err := s.Filings.FileByAPI(ctx, p, listingID, form, req.Submit, tok.Name, idem)
	if err != nil {
		return err
	}
	return s.answerFiling(c, id, replayed)
}

// answerFiling answers 201 with a filing made by API, where it reads
// (Location) and, for a retry under an Idempotency-Key, that it is one.
func (s *Server) answerFiling(c echo.Context, id int64, replayed bool) error {
	f, err := s.FilingReads.FindFiling(c.Request().Context(), id, workflow.Scope(principal(c)))
	if err != nil {
		return err
	}
	c.Response().Header().Set("Location", fmt.Sprintf("/api/v1/carrier/filings/%d", id))
	if replayed {
		c.Response().Header().Set("Idempotent-Replayed", "true")
	}
	return c.JSON(http.StatusCreated, carrierFilingOf(f))
}

// publishedWith is a listing's published fare (an empty form before its
// first) with the fields given typed over it, as a filing or a dry run
// takes it.
func publishedWith(l *catalogue.Listing, fields map[string]json.RawMessage) (fare.Form, error) {
	var form fare.Form
	if l.Published != nil {
		form = fare.FormOf(l.Published)
	}
	if errs := fare.Apply(&form, fields); errs != nil {
		return fare.Form{}, apperr.Invalid(errs)
	}
	return form, nil
}

// idempotencyOf reads a request's Idempotency-Key (nil without one), with
// the hash of its body and the carrier it files for.
func idempotencyOf(c echo.Context, body []byte) (*workflow.Idempotency, error) {
	key := c.Request().Header.Get("Idempotency-Key")
	if key == "" {
		return nil, nil
	}
	if len(key) > 200 || textcheck.Problem(key, 200) != "" {
		return nil, apperr.Invalid(map[string]string{"Idempotency-Key": "An Idempotency-Key is 1-200 printable characters, e.g. a UUID."})
	}
	ids := principal(c).CarrierIDs()
	if len(ids) != 1 {
		return nil, apperr.Errorf(apperr.EFORBIDDEN, "This token acts for no carrier.")
	}
	sum := sha256.Sum256(body)
	return &workflow.Idempotency{CarrierID: ids[0], Key: key, BodyHash: hex.EncodeToString(sum[:])}, nil
}

type carrierFiling struct {
	FilingID      int64          `json:"filingId"`
	ListingID     int64          `json:"listingId"`
	Model         string         `json:"model"`
	State         string         `json:"state"`
	ViaToken      string         `json:"viaToken,omitempty"`
	Author        string         `json:"author"`
	Changes       []filingChange `json:"changes"`
	Fare          map[string]any `json:"fare,omitempty"`
	Justification string         `json:"justification"`
	EffectiveAt   *time.Time     `json:"effectiveAt,omitempty"`
	DecisionNote  string         `json:"decisionNote,omitempty"`
	CreatedAt     time.Time      `json:"createdAt"`
	SubmittedAt   *time.Time     `json:"submittedAt,omitempty"`
	DecidedAt     *time.Time     `json:"decidedAt,omitempty"`
	// Page is the filing's page in the portal, where its review thread is.
	Page string `json:"page"`
	// Comments are its review thread, oldest first (one filing's answer
	// only, not a list's).
	Comments []filingComment `json:"comments,omitempty"`
}

type filingComment struct {
	Author string    `json:"author"`
	Staff  bool      `json:"staff"`
	Body   string    `json:"body"`
	At     time.Time `json:"at"`
}

type filingChange struct {
	Field string `json:"field"`
	Label string `json:"label"`
	Old   string `json:"old"`
	New   string `json:"new"`
}

func carrierFilingOf(f *workflow.Filing) carrierFiling {
	out := carrierFiling{FilingID: f.ID, ListingID: f.ListingID, Model: f.Model.Slug, State: string(f.State), ViaToken: f.ViaToken,
		Author: f.AuthorEmail, Changes: []filingChange{}, Justification: f.Justification, EffectiveAt: f.EffectiveAt,
		DecisionNote: f.DecisionNote, CreatedAt: f.CreatedAt, SubmittedAt: f.SubmittedAt, DecidedAt: f.DecidedAt,
		Page: fmt.Sprintf("/filings/%d", f.ID)}
	if f.Fare != nil {
		form := fare.FormOf(f.Fare)
		out.Fare = fare.ValuesOf(&form)
		for _, ch := range fare.Diff(f.Base, f.Fare) {
			out.Changes = append(out.Changes, filingChange{Field: ch.Field, Label: ch.Label, Old: ch.Old, New: ch.New})
		}
	}
	return out
}

// handleCarrierFiling answers one of the carrier's filings with its state
// and the reviewer's note.
func (s *Server) handleCarrierFiling(c echo.Context) error {
	f, err := s.carrierFilingParam(c)
	if err != nil {
		return err
	}
	thread, err := s.FilingReads.FindComments(c.Request().Context(), f.ID)
	if err != nil {
		return err
	}
	out := carrierFilingOf(f)
	for _, m := range thread {
		out.Comments = append(out.Comments, filingComment{Author: m.AuthorEmail, Staff: m.AuthorStaff, Body: m.Body, At: m.At})
	}
	return c.JSON(http.StatusOK, out)
}

// apiFilingStates are the states a filings list may ask for.
var apiFilingStates = []workflow.State{workflow.Draft, workflow.Submitted, workflow.ChangesRequested, workflow.Scheduled,
	workflow.Published, workflow.Rejected, workflow.Withdrawn}

// handleCarrierFilings lists the carrier's filings, newest first (at most
// 200), by state and listing when asked.
func (s *Server) handleCarrierFilings(c echo.Context) error {
	filter := workflow.FilingFilter{CarrierIDs: principal(c).CarrierIDs(), Limit: 200}
	if raw := c.QueryParam("state"); raw != "" {
		for _, v := range strings.Split(raw, ",") {
			st := workflow.State(strings.TrimSpace(v))
			if !slices.Contains(apiFilingStates, st) {
				return apperr.Invalid(map[string]string{"state": fmt.Sprintf("%q is not a filing state (draft, submitted, changes_requested, scheduled, published, rejected, withdrawn).", v)})
			}
			filter.States = append(filter.States, st)
		}
	}
	if raw := c.QueryParam("listingId"); raw != "" {
		id, err := strconv.ParseInt(raw, 10, 64)
		if err != nil || id < 1 {
			return apperr.Invalid(map[string]string{"listingId": "a listing id is a positive whole number"})
		}
		filter.ListingID = id
	}
	fs, err := s.FilingReads.FindFilings(c.Request().Context(), filter)
	if err != nil {
		return err
	}
	out := struct {
		Filings []carrierFiling `json:"filings"`
	}{Filings: make([]carrierFiling, 0, len(fs))}
	for i := range fs {
		out.Filings = append(out.Filings, carrierFilingOf(&fs[i]))
	}
	return c.JSON(http.StatusOK, out)
}

// handleCarrierWithdraw withdraws one of the carrier's filings not yet
// decided.
func (s *Server) handleCarrierWithdraw(c echo.Context) error {
	f, err := s.carrierFilingParam(c)
	if err != nil {
		return err
	}
	if err := s.Filings.Withdraw(c.Request().Context(), principal(c), f.ID); err != nil {
		return err
	}
	if f, err = s.FilingReads.FindFiling(c.Request().Context(), f.ID, workflow.Scope(principal(c))); err != nil {
		return err
	}
	return c.JSON(http.StatusOK, carrierFilingOf(f))
}

func (s *Server) carrierFilingParam(c echo.Context) (*workflow.Filing, error) {
	id, err := strconv.ParseInt(c.Param("filingId"), 10, 64)
	if err != nil || id < 1 {
		return nil, apperr.Invalid(map[string]string{"filingId": "a filing id is a positive whole number"})
	}
	return s.FilingReads.FindFiling(c.Request().Context(), id, workflow.Scope(principal(c)))
}

// previewBody is what the preview page shows of a fare, for code: its
// effective prices, each scenario's rank and score and what it takes to
// win it, and the projected share of the model's requests.
type previewBody struct {
	Effective previewEffective  `json:"effective"`
	Scenarios []previewScenario `json:"scenarios"`
	Share     previewShare      `json:"share"`
}

type previewEffective struct {
	// Input, Output and CachedInput are what the fare routes at per
	// million tokens: filed x (1 - discount) x (1 + 0.20 - landing fee).
	Input       string  `json:"input"`
	Output      string  `json:"output"`
	CachedInput *string `json:"cachedInput,omitempty"`
	// KeptPercent is what the carrier keeps of each filed dollar.
	KeptPercent string `json:"keptPercent"`
}

type previewScenario struct {
	Key      string   `json:"key"`
	Name     string   `json:"name"`
	OnBallot bool     `json:"onBallot"`
	Eligible bool     `json:"eligible"`
	Excluded []string `json:"excluded,omitempty"`
	Rank     int      `json:"rank,omitempty"`
	Of       int      `json:"of,omitempty"`
	Score    float64  `json:"score"`
	// Gap is the score points behind the first.
	Gap    float64 `json:"gap"`
	Winner string  `json:"winner,omitempty"`
	// Holder keeps the scenario's traffic under the incumbency rule.
	Holder     string `json:"holder,omitempty"`
	HolderIsMe bool   `json:"holderIsMe"`
	WinsNow    bool   `json:"winsNow"`
	// ToWin is the filed input and output prices at which the fare ranks
	// first (absent when it ranks first already or no price can win).
	ToWin *previewPrices `json:"toWin,omitempty"`
	// Sets are the scenario's requests that carried preferences, each won
	// on a ballot of its own (the page's rows under the scenario).
	Sets []previewSet `json:"sets,omitempty"`
	// Projects are the scenario's requests from API projects whose rates
	// routing learned apart, each elected on those rates.
	Projects []previewProjects `json:"projects,omitempty"`
}

// previewProjects is where the fare stands with the part of a scenario's
// requests from API projects routing learned the same rates of.
type previewProjects struct {
	Part       float64        `json:"part"`
	Eligible   bool           `json:"eligible"`
	Excluded   []string       `json:"excluded,omitempty"`
	Rank       int            `json:"rank,omitempty"`
	Holder     string         `json:"holder,omitempty"`
	HolderIsMe bool           `json:"holderIsMe"`
	WinsNow    bool           `json:"winsNow"`
	ToWin      *previewPrices `json:"toWin,omitempty"`
}

// previewSet is where the fare stands with the requests of a scenario that
// carried one set of preferences.
type previewSet struct {
	Key   string  `json:"key"`
	Words string  `json:"words"`
	Part  float64 `json:"part"`
	// Eligible is false when the listing cannot serve these requests at
	// any price (Excluded says why).
	Eligible   bool     `json:"eligible"`
	Excluded   []string `json:"excluded,omitempty"`
	Holder     string   `json:"holder,omitempty"`
	HolderIsMe bool     `json:"holderIsMe"`
	WinsNow    bool     `json:"winsNow"`
	// OrderDecides: the set's provider order names who serves them,
	// whatever the prices.
	OrderDecides bool           `json:"orderDecides"`
	ToWin        *previewPrices `json:"toWin,omitempty"`
}

// toWin is the prices a plan wins at, when it does not win now and a
// price can.
func toWin(w projection.WinPlan) *previewPrices {
	if w.WinsNow || !w.Price.CanWin || w.Price.Unbounded {
		return nil
	}
	return &previewPrices{Input: w.NewInput.String(), Output: w.NewOutput.String()}
}

type previewPrices struct {
	Input  string `json:"input"`
	Output string `json:"output"`
}

type previewShare struct {
	// Total is the projected fraction of the model's requests; Exploration
	// the part of it exploration brings.
	Total       float64 `json:"total"`
	Exploration float64 `json:"exploration"`
	// RevenuePerMillion is the carrier's projected revenue per million
	// requests of the model, in USD.
	RevenuePerMillion float64 `json:"revenuePerMillion"`
}

// handleCarrierPreview answers what the preview page shows for a fare
// (the published one with the fields given changed) without filing it.
func (s *Server) handleCarrierPreview(c echo.Context) error {
	listingID, err := listingIDParam(c)
	if err != nil {
		return err
	}
	var req struct {
		Fare map[string]json.RawMessage `json:"fare"`
	}
	if _, err := decodeStrict(c, &req, `{"fare": {field: value, ...}}`); err != nil {
		return err
	}
	ctx := c.Request().Context()
	p := principal(c)
	l, err := s.ListingReads.FindListingHeader(ctx, listingID, workflow.Scope(p))
	if err != nil {
		return err
	}
	form, err := publishedWith(l, req.Fare)
	if err != nil {
		return err
	}
	form.EffectiveAt = "" // a date in the past does not stop a preview, as on the page
	parsed, errs := form.Parse(s.Now())
	if errs != nil {
		return apperr.Invalid(errs)
	}
	res, err := s.Projector.Preview(ctx, l, parsed.Fare, projection.Ask{})
	if err != nil {
		return err
	}
	e := res.Effective
	body := previewBody{Effective: previewEffective{Input: e.Input.String(), Output: e.Output.String(), KeptPercent: e.Kept.Percent()},
		Share: previewShare{Total: res.Share.Total, Exploration: res.Share.Exploration, RevenuePerMillion: res.Share.RevenuePerMillion}}
	if e.CachedInput != nil {
		v := e.CachedInput.String()
		body.Effective.CachedInput = &v
	}
	for _, sc := range res.Scenarios {
		m := sc.Mine
		row := previewScenario{Key: sc.Scenario.Key, Name: sc.Scenario.Name, OnBallot: m.OnBallot, Eligible: m.Eligible, Excluded: m.Excluded,
			Rank: m.Rank, Of: m.Of, Score: m.Score, Gap: m.Gap, Winner: sc.Winner, Holder: sc.Holder, HolderIsMe: sc.HolderIsMe, WinsNow: sc.Win.WinsNow}
		row.ToWin = toWin(sc.Win)
		for _, set := range sc.Sets {
			row.Sets = append(row.Sets, previewSet{Key: set.Key, Words: set.Set, Part: set.Part, Eligible: set.Mine.Eligible, Excluded: set.Mine.Excluded,
				Holder: set.Holder, HolderIsMe: set.HolderIsMe, WinsNow: set.Win.WinsNow, OrderDecides: set.OrderDecides, ToWin: toWin(set.Win)})
		}
		for _, p := range sc.Projects {
			row.Projects = append(row.Projects, previewProjects{Part: p.Part, Eligible: p.Mine.Eligible, Excluded: p.Mine.Excluded, Rank: p.Mine.Rank,
				Holder: p.Holder, HolderIsMe: p.HolderIsMe, WinsNow: p.Win.WinsNow, ToWin: toWin(p.Win)})
		}
		body.Scenarios = append(body.Scenarios, row)
	}
	return c.JSON(http.StatusOK, body)
}
