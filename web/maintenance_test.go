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

	"github.com/airside/airside/internal/apperr"
	"github.com/airside/airside/internal/audit"
	"github.com/airside/airside/internal/catalogue"
	"github.com/airside/airside/internal/fare"
	"github.com/airside/airside/internal/store/storetest"
)

var maintenanceRowID = regexp.MustCompile(`data-testid="maintenance-(\d+)"`)

// TestMaintenanceWindows: a carrier admin plans a window; at its start the
// scheduler takes the listing out of routing (a new revision, the routing
// snapshot, the inbox, the audit), at its end brings it back; staff see it
// on the operations page; bad times are named by field with what was typed
// kept; overlaps, members and cancelled windows change nothing.
func TestMaintenanceWindows(t *testing.T) {
	for _, d := range storetest.Dialects {
		t.Run(string(d), func(t *testing.T) {
			p := newPortal(t, d)
			ctx := context.Background()
			now := time.Date(2026, 12, 2, 9, 10, 0, 0, time.UTC)
			p.store.Now = func() time.Time { return now }
			l := listingOf(t, p.store, "nebula", "kimi-k2.5")
			page := fmt.Sprintf("/listings/%d", l.ID)
			plan := page + "/maintenance"
			at := func(d time.Duration) string { return now.Add(d).Format(fare.TimeLayout) }

			admin := p.client()
			admin.login("admin@nebula.example")
			res := admin.post(page, plan, url.Values{"start": {at(3 * time.Hour)}, "end": {at(time.Hour)}, "reason": {"Driver upgrade"}})
			wantStatus(t, "an end before the start", res, http.StatusUnprocessableEntity)
			if !strings.Contains(res.body, `data-testid="error-end"`) || !strings.Contains(res.body, "Driver upgrade") {
				t.Errorf("the refusal lacks the end's message or what was typed:\n%.600s", res.body)
			}
			res = admin.post(page, plan, url.Values{"start": {"tomorrow"}, "end": {at(time.Hour)}, "reason": {""}})
			wantStatus(t, "a start in words, no reason", res, http.StatusUnprocessableEntity)
			for _, field := range []string{"start", "reason"} {
				if !strings.Contains(res.body, `data-testid="error-`+field+`"`) {
					t.Errorf("no message beside %s", field)
				}
			}
			member := p.client()
			member.login("member@nebula.example")
			if res := member.post(page, plan, url.Values{"start": {at(time.Hour)}, "end": {at(3 * time.Hour)}, "reason": {"x"}}); res.status != http.StatusForbidden {
				t.Errorf("a member planned maintenance: %d", res.status)
			}

			rev0, _ := p.store.CatalogueRevision(ctx)
			res = admin.post(page, plan, url.Values{"start": {at(time.Hour)}, "end": {at(3 * time.Hour)}, "reason": {"Driver upgrade"}})
			wantStatus(t, "plan", res, http.StatusSeeOther)
			res = admin.post(page, plan, url.Values{"start": {at(2 * time.Hour)}, "end": {at(4 * time.Hour)}, "reason": {"Overlap"}})
			wantStatus(t, "an overlapping window", res, http.StatusConflict)
			if !strings.Contains(res.body, "overlaps") {
				t.Error("the overlap is not explained")
			}
			if rev, _ := p.store.CatalogueRevision(ctx); rev != rev0 {
				t.Error("planning a window moved the catalogue")
			}
			body := admin.get(page).body
			if !strings.Contains(body, "Driver upgrade") || !strings.Contains(body, "scheduled") {
				t.Error("the listing page does not list the planned window")
			}
			reviewer := p.client()
			reviewer.login("reviewer@airside.example")
			if ops := reviewer.get("/operations").body; !strings.Contains(ops, `data-testid="ops-maintenance"`) || !strings.Contains(ops, "Driver upgrade") {
				t.Error("staff do not see the planned window on the operations page")
			}

			// Nothing before its start.
			apply(t, p)
			wantStatusOf(t, p, l.ID, catalogue.StatusInService)
			now = now.Add(time.Hour)
			apply(t, p)
			wantStatusOf(t, p, l.ID, catalogue.StatusPaused)
			rev1, _ := p.store.CatalogueRevision(ctx)
			if rev1 <= rev0 {
				t.Errorf("the start did not publish a revision (%d -> %d)", rev0, rev1)
			}
			wantRouted(t, p, l.ID, catalogue.StatusPaused)
			if !strings.Contains(admin.get("/inbox").body, "out of routing for planned maintenance") {
				t.Error("the carrier's inbox does not say the maintenance started")
			}
			now = now.Add(2 * time.Hour)
			apply(t, p)
			wantStatusOf(t, p, l.ID, catalogue.StatusInService)
			wantRouted(t, p, l.ID, catalogue.StatusInService)
			if rev2, _ := p.store.CatalogueRevision(ctx); rev2 <= rev1 {
				t.Error("the end did not publish a revision")
			}
			events := auditOf(t, p, "listing", l.ID)
			for _, want := range []string{"maintenance.schedule", "listing.maintenance_start", "listing.maintenance_end"} {
				if !events[want] {
					t.Errorf("no %s in the audit trail", want)
				}
			}

			// Cancelled before its start: nothing happens at its time.
			res = admin.post(page, plan, url.Values{"start": {at(time.Hour)}, "end": {at(2 * time.Hour)}, "reason": {"Rack move"}})
			wantStatus(t, "plan again", res, http.StatusSeeOther)
			id := openWindowID(t, admin.get(page).body)
			wantStatus(t, "cancel", admin.post(page, fmt.Sprintf("%s/maintenance/%s/cancel", page, id), url.Values{}), http.StatusSeeOther)
			now = now.Add(90 * time.Minute)
			apply(t, p)
			wantStatusOf(t, p, l.ID, catalogue.StatusInService)

			// Ended early: back at once. And where the endpoint is no longer
			// ready, the end keeps the listing out and says why.
			res = admin.post(page, plan, url.Values{"start": {at(0)}, "end": {at(5 * time.Hour)}, "reason": {"Emergency patch"}})
			wantStatus(t, "plan from now", res, http.StatusSeeOther)
			apply(t, p)
			wantStatusOf(t, p, l.ID, catalogue.StatusPaused)
			id = openWindowID(t, admin.get(page).body)
			wantStatus(t, "end now", admin.post(page, fmt.Sprintf("%s/maintenance/%s/cancel", page, id), url.Values{}), http.StatusSeeOther)
			wantStatusOf(t, p, l.ID, catalogue.StatusInService)

			p.server.MaintenanceForTest().ReadyForService = func(context.Context, *catalogue.Listing) error {
				return apperr.Errorf(apperr.ECONFLICT, "The endpoint failed preflight.")
			}
			res = admin.post(page, plan, url.Values{"start": {at(0)}, "end": {at(time.Hour)}, "reason": {"Kernel update"}})
			wantStatus(t, "plan once more", res, http.StatusSeeOther)
			apply(t, p)
			now = now.Add(time.Hour)
			apply(t, p)
			wantStatusOf(t, p, l.ID, catalogue.StatusPaused)
			if body := admin.get(page).body; !strings.Contains(body, "kept paused: The endpoint failed preflight.") {
				t.Error("the page does not say why the listing did not come back")
			}
		})
	}
}

func apply(t *testing.T, p *testPortal) {
	t.Helper()
	if _, err := p.server.Maintenance.Apply(context.Background()); err != nil {
		t.Fatal(err)
	}
}

func wantStatusOf(t *testing.T, p *testPortal, listingID int64, want catalogue.ListingStatus) {
	t.Helper()
	l, err := p.store.FindListing(context.Background(), listingID, nil)
	if err != nil {
		t.Fatal(err)
	}
	if l.Status != want {
		t.Fatalf("listing %d is %s, want %s", listingID, l.Status, want)
	}
}

// wantRouted checks what gateways read: the routing catalogue's status.
func wantRouted(t *testing.T, p *testPortal, listingID int64, want catalogue.ListingStatus) {
	t.Helper()
	snap, err := p.server.Routing.Current(context.Background())
	if err != nil {
		t.Fatal(err)
	}
	for _, l := range snap.Changes("", 0).Listings {
		if l.ListingID == listingID {
			if l.Status != string(want) {
				t.Errorf("the routing catalogue has listing %d %s, want %s", listingID, l.Status, want)
			}
			return
		}
	}
	t.Errorf("the routing catalogue does not carry listing %d", listingID)
}

func openWindowID(t *testing.T, body string) string {
	t.Helper()
	i := strings.Index(body, `data-testid="maintenance-cancel-open"`)
	if i < 0 {
		t.Fatal("no window to cancel on the page")
	}
	ids := maintenanceRowID.FindAllStringSubmatch(body[:i], -1)
	if len(ids) == 0 {
		t.Fatal("no window row before the cancel button")
	}
	return ids[len(ids)-1][1]
}

// auditOf are the actions recorded about a subject.
func auditOf(t *testing.T, p *testPortal, subjectType string, id int64) map[string]bool {
	t.Helper()
	events, err := p.store.FindAuditEvents(context.Background(), audit.Filter{SubjectType: subjectType, SubjectID: id, Limit: 500})
	if err != nil {
		t.Fatal(err)
	}
	out := map[string]bool{}
	for _, e := range events {
		out[e.Action] = true
	}
	return out
}
