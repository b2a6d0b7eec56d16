package web_test

import (
	"context"
	"fmt"
	"html"
	"net/http"
	"net/url"
	"regexp"
	"slices"
	"strings"
	"testing"
	"time"

	"github.com/airside/airside/internal/account"
	"github.com/airside/airside/internal/apitoken"
	"github.com/airside/airside/internal/catalogue"
	"github.com/airside/airside/internal/demo"
	"github.com/airside/airside/internal/store"
	"github.com/airside/airside/internal/workflow"
)

// submitFiling files and submits a fare for a listing as the given carrier
// user, returning the filing's URL.
func submitFiling(t *testing.T, p *testPortal, who string, listing int64, input string) string {
	t.Helper()
	c := p.client()
	c.login(who)
	form := fmt.Sprintf("/listings/%d/file", listing)
	v := fareValues()
	v.Set("input", input)
	v.Set("op", "submit")
	res := c.post(form, form, v)
	if res.status != http.StatusSeeOther {
		t.Fatalf("submit as %s: %d\n%.600s", who, res.status, res.body)
	}
	return res.location
}

func TestReviewQueueAndDecisions(t *testing.T) {
	p := newPortal(t, store.SQLite)
	ids := listingIDs(t, p.store)
	first := submitFiling(t, p, "member@nebula.example", ids["nebula"][0], "0.41")
	second := submitFiling(t, p, "admin@orbit.example", ids["orbit"][0], "0.42")

	rev := p.client()
	rev.login("reviewer@airside.example")
	queue := rev.get("/review")
	wantStatus(t, "queue", queue, http.StatusOK)
	i1, i2 := strings.Index(queue.body, `href="`+first+`"`), strings.Index(queue.body, `href="`+second+`"`)
	if i1 < 0 || i2 < 0 || i1 > i2 {
		t.Errorf("queue is not oldest first (%d, %d)", i1, i2)
	}
	orbit, _ := p.store.FindCarrierBySlug(context.Background(), "orbit")
	filtered := rev.get(fmt.Sprintf("/review?carrier=%d", orbit.ID))
	if strings.Contains(filtered.body, `href="`+first+`"`) || !strings.Contains(filtered.body, `href="`+second+`"`) {
		t.Error("the carrier filter does not filter")
	}
	if byKind := rev.get("/review?kind=pause"); strings.Contains(byKind.body, `href="`+first+`"`) {
		t.Error("the kind filter does not filter")
	}
	if !strings.Contains(queue.body, `data-testid="nav-review"`) {
		t.Error("reviewers have no review link")
	}

	page := rev.get(first)
	for _, want := range []string{`data-testid="impact"`, `data-testid="decide"`, `data-testid="changes"`, "Coding agent session opener"} {
		if !strings.Contains(page.body, want) {
			t.Errorf("the reviewer's filing page lacks %s", want)
		}
	}
	// A reason is required to reject; the typed text is kept.
	res := rev.post(first, first+"/decline", url.Values{"action": {"reject"}, "note": {"  "}})
	wantStatus(t, "reject without reason", res, http.StatusUnprocessableEntity)
	if !strings.Contains(res.body, `data-testid="error-note"`) {
		t.Error("no message next to the reason")
	}
	// It opens at the reason (focused, marked invalid), and its URL leads
	// back to the filing when reloaded.
	if !regexp.MustCompile(`<textarea id="reason"[^>]*aria-invalid="true"[^>]*aria-describedby="error-note"[^>]*autofocus`).MatchString(res.body) {
		t.Error("the refused decision does not open at its reason, marked invalid")
	}
	back := rev.get(first + "/decline")
	if back.status != http.StatusSeeOther || back.location != first {
		t.Errorf("reloading the refused decision's URL: %d to %q, want 303 to %s", back.status, back.location, first)
	}
	res = rev.post(first, first+"/decline", url.Values{"action": {"request_changes"}, "note": {"Please add a cached price."}})
	wantStatus(t, "ask for changes", res, http.StatusSeeOther)
	author := p.client()
	author.login("member@nebula.example")
	if page := author.get(first).body; !strings.Contains(page, `data-testid="decision-note"`) {
		t.Error("the carrier does not see the reviewer's request as a banner")
	}
	// Resubmitted, the request is history: said quietly, not as a banner.
	wantStatus(t, "resubmit", author.post(first, first+"/submit", url.Values{}), http.StatusSeeOther)
	if page := rev.get(first).body; strings.Contains(page, `data-testid="decision-note"`) || !strings.Contains(page, "Before this resubmission the reviewer wrote: Please add a cached price.") {
		t.Error("a resubmitted filing still shows the old request as the reviewer's banner, or not at all")
	}

	carrier := p.client()
	carrier.login("member@nebula.example")
	inbox := carrier.get("/inbox")
	if !strings.Contains(inbox.body, "Changes were requested") || !strings.Contains(inbox.body, "Please add a cached price.") {
		t.Errorf("the carrier's inbox lacks the request:\n%.1000s", inbox.body)
	}
	if strings.Contains(carrier.get("/listings").body, `data-testid="unread"`) {
		t.Error("messages stay unread after opening the inbox")
	}
	// Approving the second publishes it.
	res = rev.post(second, second+"/approve", url.Values{})
	wantStatus(t, "approve", res, http.StatusSeeOther)
	l, _ := p.store.FindListing(context.Background(), ids["orbit"][0], nil)
	if l.Published.Input.String() != "0.42" {
		t.Errorf("after approval orbit's input is %s", l.Published.Input)
	}
	// Deciding again says who did.
	again := rev.post(second, second+"/decline", url.Values{"action": {"reject"}, "note": {"late"}})
	wantStatus(t, "decide twice", again, http.StatusConflict)
	if !strings.Contains(again.body, "Already decided by reviewer@airside.example") {
		t.Error("the second decision does not say who decided")
	}
}

func TestTwoPersonRule(t *testing.T) {
	p := newPortal(t, store.SQLite)
	ids := listingIDs(t, p.store)
	// A reviewer who also belongs to Nebula.
	if _, err := account.NewService(p.store).CreateUser(context.Background(), nil, account.NewUser{Email: "dual@nebula.example", Password: demo.Password,
		Staff: account.StaffReviewer, CarrierSlug: "nebula", CarrierRole: account.CarrierMember}); err != nil {
		t.Fatal(err)
	}
	filing := submitFiling(t, p, "member@nebula.example", ids["nebula"][0], "0.41")
	dual := p.client()
	dual.login("dual@nebula.example")
	page := dual.get(filing)
	if strings.Contains(page.body, `data-testid="decide"`) || !strings.Contains(page.body, `data-testid="cannot-decide"`) {
		t.Error("a reviewer of the carrier is offered the decision")
	}
	wantStatus(t, "approve own carrier's filing", dual.post(filing, filing+"/approve", url.Values{}), http.StatusForbidden)
	carrierAdmin := p.client()
	carrierAdmin.login("admin@nebula.example")
	wantStatus(t, "carrier approves", carrierAdmin.post(filing, filing+"/approve", url.Values{}), http.StatusForbidden)
	wantStatus(t, "carrier opens the queue", carrierAdmin.get("/review"), http.StatusForbidden)
	f, _ := p.store.FindFiling(context.Background(), mustID(t, filing), nil)
	if f.State != workflow.Submitted {
		t.Errorf("filing is %s after refused decisions", f.State)
	}
}

func TestCommentsAndCapabilityVerification(t *testing.T) {
	p := newPortal(t, store.SQLite)
	ids := listingIDs(t, p.store)
	filing := submitFiling(t, p, "member@nebula.example", ids["nebula"][0], "0.41")
	rev := p.client()
	rev.login("reviewer@airside.example")
	wantStatus(t, "reviewer comments", rev.post(filing, filing+"/comment", url.Values{"body": {"Is the <b>cache</b> price final?"}}), http.StatusSeeOther)
	carrier := p.client()
	carrier.login("member@nebula.example")
	page := carrier.get(filing)
	if !strings.Contains(page.body, "Is the &lt;b&gt;cache&lt;/b&gt; price final?") {
		t.Error("the comment is not shown escaped to the carrier")
	}
	wantStatus(t, "carrier replies", carrier.post(filing, filing+"/comment", url.Values{"body": {"Yes."}}), http.StatusSeeOther)
	wantStatus(t, "empty comment", carrier.post(filing, filing+"/comment", url.Values{"body": {""}}), http.StatusUnprocessableEntity)
	other := p.client()
	other.login("member@orbit.example")
	wantStatus(t, "another carrier comments", other.post("/listings", filing+"/comment", url.Values{"body": {"hi"}}), http.StatusNotFound)

	listing := fmt.Sprintf("/listings/%d", ids["nebula"][0])
	lp := rev.get(listing)
	if !strings.Contains(lp.body, `data-testid="verify"`) {
		t.Fatal("no verification form for the reviewer")
	}
	wantStatus(t, "verify tools", rev.post(listing, listing+"/capabilities", url.Values{"capability": {"tools"}, "state": {"verified"}, "note": {"preflight ok"}}), http.StatusSeeOther)
	checks, _ := p.store.FindCapabilityChecks(context.Background(), ids["nebula"][0])
	if checks["tools"] != "verified" {
		t.Errorf("checks %v", checks)
	}
	wantStatus(t, "carrier verifies", carrier.post(listing, listing+"/capabilities", url.Values{"capability": {"tools"}, "state": {"verified"}}), http.StatusForbidden)
}

func TestStaleFilingIsRefreshed(t *testing.T) {
	p := newPortal(t, store.SQLite)
	listing := listingIDs(t, p.store)["nebula"][0]
	author := p.client()
	author.login("admin@nebula.example")
	form := fmt.Sprintf("/listings/%d/file", listing)
	v := fareValues()
	v.Set("op", "save")
	draft := author.post(form, form, v)
	approved := submitFiling(t, p, "member@nebula.example", listing, "0.39")
	rev := p.client()
	rev.login("reviewer@airside.example")
	wantStatus(t, "approve the other", rev.post(approved, approved+"/approve", url.Values{}), http.StatusSeeOther)

	// A stale draft is not submitted: a reviewer could not approve it. The
	// carrier is told to refresh it, and offered the button.
	stale := author.postRaw(draft.location+"/submit", url.Values{"_csrf": {csrfField.FindStringSubmatch(author.get(draft.location).body)[1]}})
	wantStatus(t, "submit the stale draft", stale, http.StatusConflict)
	if !strings.Contains(stale.body, "Refresh it against the new published fare") || !strings.Contains(stale.body, `data-testid="refresh"`) {
		t.Errorf("the refused submit does not say to refresh or offer it:\n%.2000s", stale.body)
	}
	if page := author.get(draft.location); strings.Contains(page.body, `data-testid="submit"`) || !strings.Contains(page.body, `data-testid="stale"`) {
		t.Error("a stale draft offers Submit, or does not say it is stale")
	}
	carrierPage := author.get(draft.location)
	if !strings.Contains(carrierPage.body, `data-testid="refresh"`) {
		t.Fatal("the carrier is not offered a refresh")
	}
	wantStatus(t, "refresh", author.post(draft.location, draft.location+"/refresh", url.Values{}), http.StatusSeeOther)
	refreshed := author.get(draft.location)
	if strings.Contains(refreshed.body, `data-testid="stale"`) || !strings.Contains(refreshed.body, "$0.39") {
		t.Error("after refresh the filing is still stale or does not show the new base")
	}
	wantStatus(t, "resubmit", author.post(draft.location, draft.location+"/submit", url.Values{}), http.StatusSeeOther)
	wantStatus(t, "approve refreshed", rev.post(draft.location, draft.location+"/approve", url.Values{}), http.StatusSeeOther)
}

func TestScheduledApprovalShowsItsDate(t *testing.T) {
	p := newPortal(t, store.SQLite)
	listing := listingIDs(t, p.store)["nebula"][0]
	c := p.client()
	c.login("admin@nebula.example")
	form := fmt.Sprintf("/listings/%d/file", listing)
	v := fareValues()
	v.Set("op", "submit")
	// In the future, and within the year ahead an effective date may be.
	effective := time.Now().UTC().AddDate(0, 6, 0).Truncate(24 * time.Hour)
	v.Set("effective_at", effective.Format("2006-01-02T15:04"))
	res := c.post(form, form, v)
	wantStatus(t, "submit dated filing", res, http.StatusSeeOther)
	rev := p.client()
	rev.login("reviewer@airside.example")
	wantStatus(t, "approve", rev.post(res.location, res.location+"/approve", url.Values{}), http.StatusSeeOther)
	page := c.get(fmt.Sprintf("/listings/%d", listing))
	if !strings.Contains(page.body, "approved, effective "+effective.Format("2006-01-02 15:04")+" UTC") {
		t.Errorf("listing page lacks the scheduled date:\n%.1500s", page.body)
	}
	l, _ := p.store.FindListing(context.Background(), listing, nil)
	if l.Published.Input.String() == "0.50" {
		t.Error("a filing dated months ahead reached routing today")
	}
}

// TestApproveOnlyTheVersionSeen: reviewer 1 opens a filing at $0.34;
// reviewer 2 asks for changes; the carrier resubmits at $34; reviewer 1's
// page, opened before, cannot approve what it never showed.
func TestApproveOnlyTheVersionSeen(t *testing.T) {
	p := newPortal(t, store.SQLite)
	ids := listingIDs(t, p.store)
	filing := submitFiling(t, p, "member@nebula.example", ids["nebula"][0], "0.34")

	first := p.client()
	first.login("reviewer@airside.example")
	page := first.get(filing)
	seen := seenField.FindStringSubmatch(page.body)
	csrf := csrfField.FindStringSubmatch(page.body)
	if seen == nil || seen[1] != "seen_version" || csrf == nil {
		t.Fatalf("the decision form carries no version:\n%.1500s", page.body)
	}

	second := p.client()
	second.login("admin@airside.example")
	wantStatus(t, "ask for changes", second.post(filing, filing+"/decline", url.Values{"action": {"request_changes"}, "note": {"Check the price."}}), http.StatusSeeOther)

	carrier := p.client()
	carrier.login("member@nebula.example")
	edit := filing + "/edit"
	v := fareValues()
	v.Set("input", "34")
	v.Set("op", "submit")
	v.Set("lock_version", regexp.MustCompile(`name="lock_version" value="(\d+)"`).FindStringSubmatch(carrier.get(edit).body)[1])
	wantStatus(t, "resubmit", carrier.post(edit, edit, v), http.StatusSeeOther)

	stale := first.postRaw(filing+"/approve", url.Values{"_csrf": {csrf[1]}, seen[1]: {seen[2]}})
	wantStatus(t, "approve from the stale page", stale, http.StatusConflict)
	if !strings.Contains(stale.body, "changed since you opened it") || !strings.Contains(stale.body, `href="`+filing+`"`) {
		t.Errorf("the refusal does not say why or link the filing:\n%.2000s", stale.body)
	}
	l, _ := p.store.FindListing(context.Background(), ids["nebula"][0], nil)
	if l.Published.Input.String() == "34" {
		t.Fatal("the unseen version was published")
	}
	// From the page as it is now, the decision goes through.
	wantStatus(t, "approve the version seen", first.post(filing, filing+"/approve", url.Values{}), http.StatusSeeOther)
}

// TestASubmittedFilingSaysTheExpectedWait: a filing waiting for review says
// how long reviews take lately and how long the queue is; once decided it
// no longer does.
func TestASubmittedFilingSaysTheExpectedWait(t *testing.T) {
	p := newPortal(t, store.SQLite)
	filing := submitFiling(t, p, "member@nebula.example", listingIDs(t, p.store)["nebula"][0], "0.41")
	c := p.client()
	c.login("member@nebula.example")
	page := c.get(filing).body
	waiting, err := p.store.CountAwaitingReview(context.Background())
	if err != nil {
		t.Fatal(err)
	}
	want := fmt.Sprintf("%d filings are waiting for review now", waiting)
	if waiting == 1 {
		want = "1 filing is waiting for review now"
	}
	if !strings.Contains(page, `data-testid="expected-wait"`) || !strings.Contains(page, want) {
		t.Errorf("the submitted filing does not say the wait (want %q)", want)
	}
	rev := p.client()
	rev.login("reviewer@airside.example")
	wantStatus(t, "approve", rev.post(filing, filing+"/approve", url.Values{}), http.StatusSeeOther)
	if strings.Contains(c.get(filing).body, `data-testid="expected-wait"`) {
		t.Error("a decided filing still shows the expected wait")
	}
}

// TestAResubmissionShowsWhatChangedSinceItWasSentBack: after "ask for
// changes", the carrier's edit is in the history with what it changed, and
// the reviewer sees a diff against the version sent back.
func TestAResubmissionShowsWhatChangedSinceItWasSentBack(t *testing.T) {
	p := newPortal(t, store.SQLite)
	filing := sentBackFiling(t, p)
	rev := p.client()
	rev.login("reviewer@airside.example")
	if strings.Contains(rev.get(filing).body, `data-testid="since-sent-back"`) {
		t.Error("a filing not yet resubmitted shows changes since it was sent back")
	}
	resubmit(t, p, filing, "0.43")

	page := rev.get(filing).body
	section := regexp.MustCompile(`(?s)data-testid="since-sent-back".*?</section>`).FindString(page)
	if section == "" {
		t.Fatal("the reviewer gets no diff against the version sent back")
	}
	if !strings.Contains(section, "Input price") || !strings.Contains(section, "<th>Sent back</th>") ||
		!regexp.MustCompile(`<td>\$0\.4100</td>.*<strong>\$0\.4300</strong>`).MatchString(section) {
		t.Errorf("the diff does not show input 0.41 → 0.43:\n%s", section)
	}
	if strings.Contains(section, "Output price") {
		t.Error("the diff shows a field the carrier did not change")
	}
	if !strings.Contains(page, "resubmitted it for review, changing Input price $0.4100 → $0.4300") {
		t.Errorf("the history does not record the resubmission's edit:\n%s", regexp.MustCompile(`(?s)<h2>History</h2>.*?</table>`).FindString(page))
	}
}

// sentBackFiling is a filing of Nebula's first listing at input 0.41 that a
// reviewer sent back for changes.
func sentBackFiling(t *testing.T, p *testPortal) string {
	t.Helper()
	filing := submitFiling(t, p, "member@nebula.example", listingIDs(t, p.store)["nebula"][0], "0.41")
	rev := p.client()
	rev.login("reviewer@airside.example")
	wantStatus(t, "ask for changes", rev.post(filing, filing+"/decline", url.Values{"action": {"request_changes"}, "note": {"A little higher."}}), http.StatusSeeOther)
	return filing
}

// resubmit edits a sent-back filing's input price as its author and
// resubmits it.
func resubmit(t *testing.T, p *testPortal, filing, input string) {
	t.Helper()
	author := p.client()
	author.login("member@nebula.example")
	edit := filing + "/edit"
	lock := regexp.MustCompile(`name="lock_version" value="(\d+)"`).FindStringSubmatch(author.get(edit).body)
	if lock == nil {
		t.Fatal("the edit form has no lock version")
	}
	v := fareValues()
	v.Set("input", input)
	v.Set("op", "submit")
	v.Set("lock_version", lock[1])
	wantStatus(t, "resubmit with an edit", author.post(edit, edit, v), http.StatusSeeOther)
}

// TestTheReviewersImpactIsTheCarriersPreview: the reviewer's impact panel
// elects as the carrier's preview does, on the rates routing learned from
// the model's traffic (not the catalogue's cache-hit rates), so each
// scenario's score after the filing is the score the carrier previewed for
// the same fare. It elected on the catalogue's rates before, and the two
// pages disagreed on the scenarios where caching counts.
func TestTheReviewersImpactIsTheCarriersPreview(t *testing.T) {
	p := newPortal(t, store.SQLite)
	if err := demo.SeedHistory(context.Background(), p.store, 2); err != nil {
		t.Fatal(err)
	}
	listing := listingIDs(t, p.store)["nebula"][0]
	// A day of the model's traffic, each listing with a cache-hit rate of
	// its own (past the learning gates), unlike the catalogue's.
	mine, err := p.store.FindListing(context.Background(), listing, nil)
	if err != nil {
		t.Fatal(err)
	}
	all, err := p.store.FindListings(context.Background(), catalogue.ListingFilter{ModelID: mine.Model.ID})
	if err != nil {
		t.Fatal(err)
	}
	now := time.Now().UTC()
	var day []catalogue.Bucket
	for i, l := range all {
		for k := 1; k <= 6; k++ {
			day = append(day, catalogue.Bucket{ListingID: l.ID, Minute: now.Truncate(time.Minute).Add(-time.Duration(k) * time.Hour), Source: "impact-test", Counts: catalogue.Counts{Requests: 200, TTFTMsSum: 200 * 400, OutputTokens: 200 * 300, DurationMs: 200 * 5000, InputTokens: 200 * 40000,
				CachedInputTokens: int64(200 * 40000 * (10 + 17*i%80) / 100)}})
		}
	}
	if err := p.store.RecordBuckets(context.Background(), day); err != nil {
		t.Fatal(err)
	}
	carrier := p.client()
	carrier.login("member@nebula.example")
	form := fmt.Sprintf("/listings/%d/file", listing)
	v := fareValues()
	v.Set("op", "preview")
	v.Set("full_form", "1")
	previewed := carrier.post(form, form, v)
	wantStatus(t, "preview", previewed, http.StatusOK)
	scores := map[string]string{}
	for _, m := range regexp.MustCompile(`(?s)data-testid="scenario-[a-z0-9-]+"><td>([^<]*)</td>.*?<td class="num"><strong>([^<]*)</strong></td><td class="num" data-testid="rank-`).
		FindAllStringSubmatch(previewed.body, -1) {
		scores[m[1]] = m[2]
	}
	if len(scores) < 4 {
		t.Fatalf("the preview shows %d scenario scores: %v", len(scores), scores)
	}

	filing := submitFiling(t, p, "member@nebula.example", listing, v.Get("input"))
	rev := p.client()
	rev.login("reviewer@airside.example")
	page := rev.get(filing)
	wantStatus(t, "the filing, as the reviewer sees it", page, http.StatusOK)
	impact := regexp.MustCompile(`(?s)data-testid="impact".*?</table>`).FindString(page.body)
	rows := regexp.MustCompile(`(?s)<tr[^>]*><td>([^<]*)</td><td class="num">[^<]*</td><td class="num">[^<]*</td><td><bdi>[^<]*</bdi></td><td class="num"><strong>[^<]*</strong></td><td class="num">([^<]*)</td>`).
		FindAllStringSubmatch(impact, -1)
	if len(rows) < 4 {
		t.Fatalf("the impact panel has %d scenarios:\n%s", len(rows), impact)
	}
	for _, r := range rows {
		if want, ok := scores[r[1]]; !ok || r[2] != want {
			t.Errorf("%s: the reviewer reads a score of %s after the filing, the carrier previewed %s", r[1], r[2], want)
		}
	}
	// Under the share policy too: the reviewer's share after the filing is
	// the one the carrier previewed for the same fare.
	underShare := regexp.MustCompile(`(?s)data-testid="under-share".*?</table>`).FindString(previewed.body)
	previewedShares := map[string]string{}
	for _, m := range regexp.MustCompile(`(?s)<th scope="row">([^<]*)</th>\s*<td><strong>([^<]*) of its requests</strong>`).FindAllStringSubmatch(underShare, -1) {
		previewedShares[m[1]] = m[2]
	}
	if len(previewedShares) == 0 {
		t.Fatalf("the preview shows no share under the share policy:\n%.2000s", underShare)
	}
	compared := 0
	for _, m := range regexp.MustCompile(`(?s)<tr[^>]*><td>([^<]*)</td>.*?data-testid="share-policy">([^<]*) → ([^<]*)</td>`).FindAllStringSubmatch(impact, -1) {
		want, ok := previewedShares[m[1]]
		if !ok {
			continue
		}
		compared++
		if m[3] != want {
			t.Errorf("%s: under the share policy the reviewer reads %s after the filing, the carrier previewed %s", m[1], m[3], want)
		}
	}
	if compared == 0 {
		t.Errorf("the impact panel shows no share under the share policy:\n%s", impact)
	}
}

// TestTheReviewersImpactWeighsEachSetOfPreferences: where the model's
// requests carried sets of preferences, the impact panel has a row under
// each auto scenario of the general workload for each set, named as the
// preview names it, ranked on that set's own ballot: a provider order
// naming orbit first makes orbit that ballot's winner before and after a
// nebula filing, whatever its prices.
func TestTheReviewersImpactWeighsEachSetOfPreferences(t *testing.T) {
	p := newPortal(t, store.SQLite)
	ctx := context.Background()
	all, err := p.store.FindListings(ctx, catalogue.ListingFilter{})
	if err != nil {
		t.Fatal(err)
	}
	var mine *catalogue.Listing
	orbit := ""
	for i := range all {
		l := &all[i]
		if l.CarrierSlug != "nebula" || l.Status != catalogue.StatusInService {
			continue
		}
		for _, o := range all {
			if o.CarrierSlug == "orbit" && o.Model.Slug == l.Model.Slug && o.Status == catalogue.StatusInService {
				mine, orbit = l, o.CarrierName
			}
		}
	}
	if mine == nil {
		t.Fatal("the demo has no model both nebula and orbit serve")
	}
	tok := apiToken(t, p.store, apitoken.ScopeMetricsWrite)
	minute := p.server.Now().UTC().Truncate(time.Minute).Add(-10 * time.Minute).Format(time.RFC3339)
	wantStatus(t, "post demand with preferences", apiCall(t, p.srv.URL, "POST", "/api/v1/metrics", tok, fmt.Sprintf(
		`{"buckets":[],"demand":[{"model":%q,"workload":"general","minute":%q,"source":"gw","requests":2000,"promptTokens":2000000,
		"asked":{"prefs:order:orbit":500}}]}`, mine.Model.Slug, minute)), http.StatusAccepted)

	filing := submitFiling(t, p, "member@nebula.example", mine.ID, fareValues().Get("input"))
	rev := p.client()
	rev.login("reviewer@airside.example")
	page := rev.get(filing)
	wantStatus(t, "the filing, as the reviewer sees it", page, http.StatusOK)
	impact := regexp.MustCompile(`(?s)data-testid="impact".*?</table>`).FindString(page.body)
	rows := map[string][]string{}
	var order []string
	for _, m := range regexp.MustCompile(`(?s)<tr[^>]*><td>([^<]*)</td><td class="num">[^<]*</td><td class="num">[^<]*</td><td><bdi>([^<]*)</bdi></td><td class="num"><strong>[^<]*</strong></td><td class="num">[^<]*</td><td><bdi>([^<]*)</bdi></td>`).
		FindAllStringSubmatch(impact, -1) {
		name := html.UnescapeString(m[1])
		rows[name] = []string{html.UnescapeString(m[2]), html.UnescapeString(m[3])}
		order = append(order, name)
	}
	for _, scenario := range []string{"Small one-shot (auto)", "Large prompt, general API (auto)"} {
		set := scenario + ": the 25.0 % asking for the provider order orbit"
		r, ok := rows[set]
		if !ok {
			t.Errorf("no impact row %q; rows %q", set, order)
			continue
		}
		if r[0] != orbit || r[1] != orbit {
			t.Errorf("%s: winner %s now and %s after, want %s both times (their order names it first)", set, r[0], r[1], orbit)
		}
		if i := slices.Index(order, set); i < 1 || order[i-1] != scenario {
			t.Errorf("the row %q is not under its scenario: %q", set, order)
		}
	}
	if _, ok := rows["Coding agent session opener (auto): the 25.0 % asking for the provider order orbit"]; ok {
		t.Error("a set of the general workload's requests is shown under the coding scenario")
	}
}
