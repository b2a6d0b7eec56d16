package web

import (
	"context"
	"net/http"
	"net/http/httptest"
	"net/url"
	"slices"
	"strings"
	"testing"
	"time"

	"github.com/labstack/echo/v4"

	"github.com/airside/airside/internal/account"
	"github.com/airside/airside/internal/apperr"
	"github.com/airside/airside/internal/catalogue"
	"github.com/airside/airside/internal/fare"
	"github.com/airside/airside/internal/money"
	"github.com/airside/airside/internal/projection"
)

// fakeListingReads answers one listing's header to the carrier that owns
// it; every other read is left to the embedded nil interface (a page under
// test that makes one fails loudly).
type fakeListingReads struct {
	ListingReads
	listing *catalogue.Listing
}

func (f *fakeListingReads) FindListingHeader(_ context.Context, id int64, carrierIDs []int64) (*catalogue.Listing, error) {
	if id != f.listing.ID || carrierIDs != nil && !slices.Contains(carrierIDs, f.listing.CarrierID) {
		return nil, apperr.Errorf(apperr.ENOTFOUND, "Listing not found.")
	}
	return f.listing, nil
}

// fakeProjections answers the preview from fixed figures and keeps what
// the page asked.
type fakeProjections struct {
	Projections
	measured projection.Measured
	result   projection.Result
	asks     []projection.Ask
	fares    []*fare.Fare
}

func (f *fakeProjections) MeasuredDemand(context.Context, string) (projection.Measured, error) {
	return f.measured, nil
}

func (f *fakeProjections) DemandGaps(context.Context, *catalogue.Listing, time.Time, time.Time) (projection.DemandGaps, error) {
	return projection.DemandGaps{}, nil
}

func (f *fakeProjections) Unserved(context.Context, string, *fare.Market) ([]projection.Unserved, error) {
	return nil, nil
}

func (f *fakeProjections) Preview(_ context.Context, _ *catalogue.Listing, fr *fare.Fare, ask projection.Ask) (projection.Result, error) {
	f.asks, f.fares = append(f.asks, ask), append(f.fares, fr)
	return f.result, nil
}

// TestThePreviewFragmentShowsWhatTheProjectorSays: the live preview's
// fragment, over a fake listing read and a fake projector (no database):
// the typed price is what the projector is asked about, the measured mix
// is used (and said to be) while the mix fields show it, a typed mix is
// passed on, the panel shows the projector's winner, and another
// carrier's listing is not found.
func TestThePreviewFragmentShowsWhatTheProjectorSays(t *testing.T) {
	published := &fare.Fare{ListingID: 7, Input: money.Micros(500_000), Output: money.Micros(2_000_000), LandingFee: 2000, CapScope: fare.ScopeGlobal}
	listing := &catalogue.Listing{ID: 7, CarrierID: 3, Model: catalogue.Model{Slug: "kimi-k2.5", Name: "Kimi K2.5"}, Published: published}
	proj := &fakeProjections{
		measured: projection.Measured{Mix: map[string]float64{"small": 600, "large": 100, "coding": 200, "chat": 100}, Requests: 12_345},
		result: projection.Result{Scenarios: []projection.ScenarioResult{{
			Scenario: projection.Scenario{Key: "small-auto", Name: "Small one-shot (auto)"}, Prospect: projection.Prospect{Winner: "Orbit", Holder: "Orbit"}}}},
	}
	s := &Server{ListingReads: &fakeListingReads{listing: listing}, Projector: proj,
		Now: func() time.Time { return time.Date(2026, 12, 3, 12, 0, 0, 0, time.UTC) }}
	member := &account.Principal{User: account.User{ID: 40}, Memberships: []account.Membership{{UserID: 40, CarrierID: 3, Role: account.CarrierAdmin}}}
	stranger := &account.Principal{User: account.User{ID: 41}, Memberships: []account.Membership{{UserID: 41, CarrierID: 4, Role: account.CarrierAdmin}}}

	post := func(p *account.Principal, form url.Values) (*httptest.ResponseRecorder, error) {
		req := httptest.NewRequest(http.MethodPost, "/listings/7/preview", strings.NewReader(form.Encode()))
		req.Header.Set("Content-Type", "application/x-www-form-urlencoded")
		req.Header.Set("X-Preview", "fragment")
		rec := httptest.NewRecorder()
		c := echo.New().NewContext(req, rec)
		c.SetParamNames("id")
		c.SetParamValues("7")
		c.Set(ctxPrincipal, p)
		return rec, s.handlePreview(c)
	}

	input := fare.MustField("input").PostName()
	rec, err := post(member, url.Values{input: {"0.40"}, "mix_small": {"60"}, "mix_large": {"10"}, "mix_coding": {"20"}, "mix_chat": {"10"}})
	if err != nil {
		t.Fatal(err)
	}
	body := rec.Body.String()
	if len(proj.fares) != 1 || proj.fares[0].Input != money.Micros(400_000) || proj.fares[0].Output != published.Output {
		t.Fatalf("the projector was asked about %+v, want the typed input over the published fare", proj.fares)
	}
	if proj.asks[0].Mix != nil || !strings.Contains(body, "12,345 requests") {
		t.Errorf("the measured mix, shown in the fields, is not the one used and named: ask %+v", proj.asks[0])
	}
	if !strings.Contains(body, "Orbit") || !strings.Contains(body, "Small one-shot (auto)") {
		t.Errorf("the panel does not show the projector's scenario and winner:\n%.2000s", body)
	}

	if _, err := post(member, url.Values{input: {"0.40"}, "mix_small": {"10"}, "mix_large": {"0"}, "mix_coding": {"80"}, "mix_chat": {"10"}}); err != nil {
		t.Fatal(err)
	}
	if got := proj.asks[1].Mix; got["coding"] != 80 || got["small"] != 10 {
		t.Errorf("a typed mix was passed on as %v", got)
	}

	if _, err := post(stranger, url.Values{input: {"0.40"}}); apperr.Code(err) != apperr.ENOTFOUND {
		t.Errorf("another carrier's admin previewed the listing: %v", err)
	}
}
