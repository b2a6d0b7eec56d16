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

	"github.com/airside/airside/internal/store"
)

// TestNoticeAndQuarantineThroughTheConsole: an increase needs its notice
// (the form says until when), and a threefold move needs two reviewers.
func TestNoticeAndQuarantineThroughTheConsole(t *testing.T) {
	p := newPortal(t, store.SQLite)
	p.server.FilingsForTest().Notice, p.server.FilingsForTest().QuarantineFactor = 0, 0 // the defaults: 7 days, x3
	l := listingOf(t, p.store, "nebula", "kimi-k2.5")
	form := fmt.Sprintf("/listings/%d/file", l.ID)
	carrier := p.client()
	carrier.login("admin@nebula.example")
	up := url.Values{"input": {"0.60"}, "output": {l.Published.Output.String()}, "landing_fee": {"20"}, "discount": {"5"},
		"cap_scope": {"global"}, "justification": {"New hardware costs more."}, "op": {"submit"}}
	if l.Published.CachedInput != nil {
		up.Set("cached_input", l.Published.CachedInput.String())
	}
	res := carrier.post(form, form, up)
	wantStatus(t, "an increase with no date", res, http.StatusUnprocessableEntity)
	earliest := time.Now().UTC().Add(7 * 24 * time.Hour)
	if !strings.Contains(res.body, `data-testid="error-effective_at"`) || !strings.Contains(res.body, earliest.Format("2006-01-02")) ||
		!strings.Contains(res.body, `value="0.60"`) {
		t.Fatalf("the notice refusal lacks the field message, the earliest date or what was typed:\n%.800s", res.body)
	}
	up.Set("effective_at", earliest.Add(time.Hour).Format("2006-01-02T15:04"))
	res = carrier.post(form, form, up)
	wantStatus(t, "an increase after its notice", res, http.StatusSeeOther)
	rev := p.client()
	rev.login("reviewer@airside.example")
	if page := rev.get(res.location).body; !strings.Contains(page, `data-testid="notice-note"`) {
		t.Error("the reviewer is not shown the notice")
	}
	wantStatus(t, "approve the dated increase", rev.post(res.location, res.location+"/approve", url.Values{}), http.StatusSeeOther)

	// A threefold cut on another listing: two reviewers.
	l2 := listingOf(t, p.store, "nebula", "deepseek-v3.2")
	form2 := fmt.Sprintf("/listings/%d/file", l2.ID)
	down := url.Values{"input": {l2.Published.Input.Scale(1, 4).String()}, "output": {l2.Published.Output.String()}, "landing_fee": {"20"},
		"discount": {l2.Published.Discount.Percent()}, "cap_scope": {"global"}, "justification": {"Clearance."}, "op": {"submit"}}
	if c := l2.Published.CachedInput; c != nil {
		down.Set("cached_input", c.Scale(1, 4).String())
	}
	res = carrier.post(form2, form2, down)
	wantStatus(t, "a threefold cut", res, http.StatusSeeOther)
	filing := res.location
	if !strings.Contains(rev.get("/review").body, `data-testid="quarantine"`) {
		t.Error("the queue does not flag the quarantined filing")
	}
	// Before it, the approve button says it records the first of two
	// approvals (not that it publishes).
	if page := rev.get(filing).body; !strings.Contains(page, "records the first of two approvals") || strings.Contains(page, "publishes to routing now") {
		t.Error("the first reviewer is not told their approval is the first of two")
	}
	wantStatus(t, "first approval", rev.post(filing, filing+"/approve", url.Values{}), http.StatusSeeOther)
	page := rev.get(filing).body
	if !strings.Contains(page, "pending review") || !strings.Contains(page, "Approved so far by reviewer@airside.example") {
		t.Errorf("after one approval the filing is not pending with its approver named")
	}
	if strings.Contains(page, `data-testid="approve-open"`) || !strings.Contains(page, `data-testid="approved-by-you"`) {
		t.Error("the reviewer who approved is offered Approve again")
	}
	if !strings.Contains(admin0(p, filing), `data-testid="approve-open"`) {
		t.Error("another reviewer is not offered the second approval")
	}
	if res := rev.post(filing, filing+"/approve", url.Values{}); res.status != http.StatusConflict || !strings.Contains(res.body, "second, different reviewer") {
		t.Errorf("the same reviewer again: %d", res.status)
	}
	admin := p.client()
	admin.login("admin@airside.example")
	wantStatus(t, "second approval", admin.post(filing, filing+"/approve", url.Values{}), http.StatusSeeOther)
	if page := admin.get(filing).body; !strings.Contains(page, "published") {
		t.Error("two approvals did not publish the filing")
	}
}

// TestReviewShowsPeakAndOffPeakAndWhatApprovalDoes: a filing of a listing
// with a time-of-day block shows its impact at peak and off-peak, and the
// approve button says what it does to routing before it does it.
func TestReviewShowsPeakAndOffPeakAndWhatApprovalDoes(t *testing.T) {
	p := newPortal(t, store.SQLite)
	l := listingOf(t, p.store, "orbit", "deepseek-v3.2")
	if l.Published.TimeBased == nil {
		t.Fatal("the demo's orbit/deepseek-v3.2 has no peak/off-peak fare")
	}
	filing := submitFiling(t, p, "admin@orbit.example", l.ID, "0.20")
	rev := p.client()
	rev.login("reviewer@airside.example")
	page := rev.get(filing).body
	for _, want := range []string{`data-testid="impact-0"`, `data-testid="impact-1"`, "At peak (", "Off-peak (", `data-testid="approve-open"`} {
		if !strings.Contains(page, want) {
			t.Errorf("the filing page lacks %s", want)
		}
	}
	// The impact names winners by carrier, now and after (L9).
	if !strings.Contains(page, "<th>Winner now</th>") || strings.Contains(page, "<bdi>orbit/deepseek-v3.2</bdi>") ||
		!regexp.MustCompile(`<td><bdi>[A-Z][^<]+</bdi></td>`).MatchString(page) {
		t.Error("the impact table does not name the winner now and after by carrier name")
	}
	rev0, _ := p.store.CatalogueRevision(context.Background())
	if want := fmt.Sprintf("publishes to routing now: catalogue revision %d -&gt; %d", rev0, rev0+1); !strings.Contains(page, want) {
		t.Errorf("the confirmation does not say %q", want)
	}
}

// TestInboxSaysWhereAFilingIsNow: a message written when a filing awaited
// review shows where the filing is today, and the inbox filters.
func TestInboxSaysWhereAFilingIsNow(t *testing.T) {
	p := newPortal(t, store.SQLite)
	l := listingOf(t, p.store, "nebula", "kimi-k2.5")
	filing := submitFiling(t, p, "member@nebula.example", l.ID, "0.41")
	rev := p.client()
	rev.login("reviewer@airside.example")
	wantStatus(t, "approve", rev.post(filing, filing+"/approve", url.Values{}), http.StatusSeeOther)
	inbox := rev.get("/inbox").body
	if !strings.Contains(inbox, "awaits review") || !strings.Contains(inbox, "now published") {
		t.Error("the reviewer's old message does not say the filing is published now")
	}
	if alerts := rev.get("/inbox?show=alerts").body; strings.Contains(alerts, "awaits review") {
		t.Error("the alerts filter shows filing messages")
	}
}

// admin0 is the filing page as the gateway admin (another reviewer) sees it.
func admin0(p *testPortal, filing string) string {
	c := p.client()
	c.login("admin@airside.example")
	return c.get(filing).body
}
