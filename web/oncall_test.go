package web_test

import (
	"context"
	"fmt"
	"net/http"
	"net/url"
	"regexp"
	"strings"
	"testing"
	"time"

	"github.com/airside/airside/internal/apitoken"
	"github.com/airside/airside/internal/catalogue"
	"github.com/airside/airside/internal/store"
)

// TestTheOnCallViewSaysWhereEachListingStands: from what a gateway
// reported a minute ago and a pause, the on-call view shows one listing
// held out by the breaker, one backed off after 429s, one paused with its
// resume, and the others serving; an admin is offered the actions, a
// member is told who may act.
func TestTheOnCallViewSaysWhereEachListingStands(t *testing.T) {
	p := newPortal(t, store.SQLite)
	ctx := context.Background()
	var serving []*catalogue.Listing
	for _, id := range listingIDs(t, p.store)["nebula"] {
		if l, err := p.store.FindListing(ctx, id, nil); err == nil && l.Status == catalogue.StatusInService {
			serving = append(serving, l)
		}
	}
	if len(serving) < 3 {
		t.Fatalf("the demo's nebula has %d listings in service, the test needs 3", len(serving))
	}
	broken, limited, paused := serving[0], serving[1], serving[2]
	minute := time.Now().UTC().Truncate(time.Minute).Add(-time.Minute)
	body := fmt.Sprintf(`{"buckets":[{"listingId":%d,"minute":%q,"source":"gw-1","requests":50,"errors":20,"routed":30,"breakerOpenings":1},
		{"listingId":%d,"minute":%q,"source":"gw-1","requests":30,"rateLimited":5,"routed":30,"backoffs":2}]}`,
		broken.ID, minute.Format(time.RFC3339), limited.ID, minute.Format(time.RFC3339))
	wantStatus(t, "metrics", apiCall(t, p.srv.URL, "POST", "/api/v1/metrics", apiToken(t, p.store, apitoken.ScopeMetricsWrite), body), http.StatusAccepted)
	admin := p.client()
	admin.login("admin@nebula.example")
	wantStatus(t, "pause", admin.post(fmt.Sprintf("/listings/%d", paused.ID), fmt.Sprintf("/listings/%d/pause", paused.ID),
		url.Values{"reason": {"incident drill"}, "confirm": {"yes"}}), http.StatusSeeOther)

	// The metrics are folded in the background: wait for the breaker.
	var page string
	deadline := time.Now().Add(30 * time.Second)
	for {
		res := admin.get("/oncall")
		wantStatus(t, "on call", res, http.StatusOK)
		page = res.body
		if strings.Contains(page, "breaker open since") || time.Now().After(deadline) {
			break
		}
		time.Sleep(100 * time.Millisecond)
	}
	row := func(l *catalogue.Listing) string {
		return regexp.MustCompile(fmt.Sprintf(`(?s)data-testid="oncall-%d">.*?</li>`, l.ID)).FindString(page)
	}
	for _, want := range []struct {
		l     *catalogue.Listing
		texts []string
	}{
		{broken, []string{"breaker open since " + minute.Format("15:04"), "Last 10 minutes: 50 requests, 60.0 % answered well", "?pause=1#pause-now"}},
		{limited, []string{"backed off (429s) since " + minute.Format("15:04"), "5 answered 429"}},
		{paused, []string{">paused<", "Out of routing until resumed.", fmt.Sprintf(`data-testid="oncall-resume-%d"`, paused.ID)}},
	} {
		r := row(want.l)
		for _, text := range want.texts {
			if !strings.Contains(r, text) {
				t.Errorf("%s/%s does not say %q:\n%s", want.l.CarrierSlug, want.l.Model.Slug, text, r)
			}
		}
	}
	if len(serving) > 3 && !strings.Contains(row(serving[3]), ">serving<") {
		t.Errorf("a quiet listing is not serving:\n%s", row(serving[3]))
	}
	if !strings.Contains(admin.get(fmt.Sprintf("/listings/%d?pause=1", broken.ID)).body, `data-testid="pause-now" open`) {
		t.Error("the on-call view's pause link does not open the listing's pause form")
	}
	member := p.client()
	member.login("member@nebula.example")
	body = member.get("/oncall").body
	if !strings.Contains(body, `data-testid="admins-only"`) || strings.Contains(body, "?pause=1") || strings.Contains(body, "oncall-resume-") {
		t.Error("a member is offered the actions, or not told who may act")
	}
}
