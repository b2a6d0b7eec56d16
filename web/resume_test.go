package web_test

import (
	"context"
	"fmt"
	"net/http"
	"net/url"
	"strings"
	"testing"

	"github.com/airside/airside/internal/audit"
	"github.com/airside/airside/internal/catalogue"
	"github.com/airside/airside/internal/store/storetest"
	"github.com/airside/airside/internal/workflow"
)

// TestResumeWithTheSameFareNeedsNoReviewer: on both databases, a listing
// paused now comes back at once when its fare is unchanged and its endpoint
// passed preflight since the pause (audited, a new revision); without that
// preflight the page says so and nothing changes; with a fare changed while
// paused the resume is filed for review.
func TestResumeWithTheSameFareNeedsNoReviewer(t *testing.T) {
	for _, d := range storetest.Dialects {
		t.Run(string(d), func(t *testing.T) {
			p := newPortal(t, d)
			withEndpoints(t, p, "nebula")
			ctx := context.Background()
			listing := listingIDs(t, p.store)["nebula"][0]
			page := fmt.Sprintf("/listings/%d", listing)
			admin := p.client()
			admin.login("admin@nebula.example")
			status := func() catalogue.ListingStatus {
				l, err := p.store.FindListing(ctx, listing, nil)
				if err != nil {
					t.Fatal(err)
				}
				return l.Status
			}
			wantStatus(t, "pause now", admin.post(page, page+"/pause", url.Values{"reason": {"Pool down"}, "confirm": {"yes"}}), http.StatusSeeOther)

			res := admin.post(page, page+"/resume", url.Values{})
			wantStatus(t, "resume before a fresh preflight", res, http.StatusSeeOther)
			if shown := admin.get(res.location).body; !strings.Contains(shown, "has not passed") || status() != catalogue.StatusPaused {
				i := strings.Index(shown, `data-testid="flash"`)
				t.Fatalf("a resume without a fresh preflight: status %s, flash: %.300s", status(), shown[max(i, 0):])
			}
			passPreflight(t, p, listing)
			revision, _ := p.store.CatalogueRevision(ctx)
			res = admin.post(page, page+"/resume", url.Values{})
			wantStatus(t, "resume", res, http.StatusSeeOther)
			if res.location != page || status() != catalogue.StatusInService {
				t.Fatalf("resume went to %q with the listing %s, want back in service on its page", res.location, status())
			}
			if after, _ := p.store.CatalogueRevision(ctx); after <= revision {
				t.Errorf("the resume published no revision (%d, then %d)", revision, after)
			}
			events, _ := p.store.FindAuditEvents(ctx, audit.Filter{Action: "listing.resume"})
			if len(events) != 1 || !strings.Contains(events[0].After, "not needed") {
				t.Errorf("the resume is not audited with why no review was needed: %+v", events)
			}

			// Paused again, a fare changed meanwhile goes to review.
			wantStatus(t, "pause again", admin.post(page, page+"/pause", url.Values{"reason": {"Again"}, "confirm": {"yes"}}), http.StatusSeeOther)
			l, _ := p.store.FindListing(ctx, listing, nil)
			cut := url.Values{"input": {l.Published.Input.Scale(9, 10).String()}, "output": {l.Published.Output.String()}, "landing_fee": {"20"},
				"discount": {l.Published.Discount.Percent()}, "cap_scope": {"global"}, "justification": {"Cheaper."}, "op": {"submit"}}
			if c := l.Published.CachedInput; c != nil {
				cut.Set("cached_input", c.String())
			}
			filed := admin.post(page+"/file", page+"/file", cut)
			wantStatus(t, "file a cut while paused", filed, http.StatusSeeOther)
			reviewer := p.client()
			reviewer.login("reviewer@airside.example")
			wantStatus(t, "approve the cut", reviewer.post(filed.location, filed.location+"/approve", url.Values{}), http.StatusSeeOther)
			if got := status(); got != catalogue.StatusPaused {
				t.Fatalf("approving a fare while paused made the listing %s", got)
			}
			passPreflight(t, p, listing)
			res = admin.post(page, page+"/resume", url.Values{})
			wantStatus(t, "resume with another fare", res, http.StatusSeeOther)
			if !strings.HasPrefix(res.location, "/filings/") || status() != catalogue.StatusPaused {
				t.Fatalf("a resume with a changed fare went to %q (listing %s), want a filing for review", res.location, status())
			}
			filings, _ := p.store.FindFilings(ctx, workflow.FilingFilter{ListingID: listing})
			if len(filings) == 0 || filings[0].TargetStatus != catalogue.StatusInService || filings[0].State != workflow.Submitted {
				t.Errorf("no resume awaiting review: %+v", filings[0])
			}
		})
	}
}
