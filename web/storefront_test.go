package web_test

import (
	"bytes"
	"context"
	"fmt"
	"image"
	"image/color"
	"image/png"
	"io"
	"mime/multipart"
	"net/http"
	"net/url"
	"regexp"
	"strconv"
	"strings"
	"testing"
	"time"

	"github.com/airside/airside/internal/catalogue"
	"github.com/airside/airside/internal/store"
	"github.com/airside/airside/internal/storefront"
)

type fakeTXT map[string][]string

func (f fakeTXT) LookupTXT(_ context.Context, name string) ([]string, error) { return f[name], nil }

func logoPNG() []byte {
	img := image.NewRGBA(image.Rect(0, 0, 64, 64))
	for x := range 64 {
		img.Set(x, x, color.RGBA{31, 95, 191, 255})
	}
	var b bytes.Buffer
	_ = png.Encode(&b, img)
	return b.Bytes()
}

// postMultipart posts the profile form with a logo file, with the CSRF
// token of the page.
func postMultipart(t *testing.T, c *client, page, path string, fields map[string]string, logo []byte) response {
	t.Helper()
	m := csrfField.FindStringSubmatch(c.get(page).body)
	if m == nil {
		t.Fatalf("no CSRF token on %s", page)
	}
	var body bytes.Buffer
	w := multipart.NewWriter(&body)
	_ = w.WriteField("_csrf", m[1])
	for k, v := range fields {
		_ = w.WriteField(k, v)
	}
	if logo != nil {
		fw, _ := w.CreateFormFile("logo", "logo.png")
		_, _ = io.Copy(fw, bytes.NewReader(logo))
	}
	_ = w.Close()
	req, _ := http.NewRequest("POST", c.base+path, &body)
	req.Header.Set("Content-Type", w.FormDataContentType())
	return c.do(req)
}

var statusLink = regexp.MustCompile(`/apply/status/([A-Za-z0-9_-]+)`)

func TestApplicationToStorefront(t *testing.T) {
	p := newPortal(t, store.SQLite)
	p.server.BaseURL = p.srv.URL
	ctx := context.Background()
	anon := p.client()
	app := url.Values{"company": {"Zephyr Compute"}, "website": {"https://zephyr.example"}, "contact_name": {"Zoe"},
		"contact_email": {"zoe@zephyr.example"}, "models": {"kimi-k2.5"}, "description": {"H100s in Frankfurt."}}
	bad := url.Values{"company": {"Zephyr Compute"}, "website": {"http://zephyr.example"}, "contact_email": {"nope"}}
	res := anon.post("/apply", "/apply", bad)
	wantStatus(t, "bad application", res, http.StatusUnprocessableEntity)
	if !strings.Contains(res.body, `data-testid="error-website"`) || !strings.Contains(res.body, `value="Zephyr Compute"`) {
		t.Error("a bad application is not explained by its fields, or lost what was typed")
	}
	res = anon.post("/apply", "/apply", app)
	wantStatus(t, "apply", res, http.StatusCreated)
	m := statusLink.FindStringSubmatch(res.body)
	if m == nil {
		t.Fatal("no status link after applying")
	}
	status := "/apply/status/" + m[1]

	// Staff ask; the applicant answers; an admin approves.
	rev := p.client()
	rev.login("reviewer@airside.example")
	list := rev.get("/applications")
	id := regexp.MustCompile(`/applications/(\d+)`).FindStringSubmatch(list.body)
	if id == nil {
		t.Fatal("the application is not in staff's queue")
	}
	appPage := "/applications/" + id[1]
	wantStatus(t, "ask", rev.post(appPage, appPage+"/ask", url.Values{"body": {"Which regions?"}}), http.StatusSeeOther)
	if !strings.Contains(anon.get(status).body, "Which regions?") {
		t.Error("the applicant does not see the question")
	}
	wantStatus(t, "reply", anon.post(status, status, url.Values{"body": {"Frankfurt and Ohio."}}), http.StatusSeeOther)
	wantStatus(t, "a reviewer approves", rev.post(appPage, appPage+"/approve", url.Values{"slug": {"zephyr"}}), http.StatusForbidden)
	admin := p.client()
	admin.login("admin@airside.example")
	if !strings.Contains(admin.get(appPage).body, "Frankfurt and Ohio.") {
		t.Error("staff do not see the answer")
	}
	wantStatus(t, "approve", admin.post(appPage, appPage+"/approve", url.Values{"slug": {"zephyr"}}), http.StatusSeeOther)
	signup := regexp.MustCompile(`/signup/([A-Za-z0-9_-]+)`).FindStringSubmatch(anon.get(status).body)
	if signup == nil {
		t.Fatal("the approved applicant's status page has no sign-up link")
	}
	zoe := p.client()
	res = zoe.post("/signup/"+signup[1], "/signup/"+signup[1], url.Values{"name": {"Zoe"}, "password": {"a long passphrase for zoe"}})
	wantStatus(t, "sign up", res, http.StatusSeeOther)

	// The new carrier proposes a model; staff accept it; it has a card.
	wantStatus(t, "propose", zoe.post("/proposals", "/proposals", url.Values{"name": {"Qwen3 Coder"}, "slug": {"qwen3-coder"},
		"family": {"Qwen3"}, "context_tokens": {"262144"}, "max_output_tokens": {"65536"}, "input_modalities": {"text"},
		"output_modalities": {"text"}}), http.StatusSeeOther)
	props := rev.get("/proposals")
	pid := regexp.MustCompile(`/proposals/(\d+)/accept`).FindStringSubmatch(props.body)
	if pid == nil {
		t.Fatal("staff see no proposal to accept")
	}
	wantStatus(t, "accept", rev.post("/proposals", "/proposals/"+pid[1]+"/accept", url.Values{"name": {"Qwen3 Coder"}, "slug": {"qwen3-coder"},
		"family": {"Qwen3"}, "context_tokens": {"262144"}, "max_output_tokens": {"65536"}, "input_modalities_csv": {"text"},
		"output_modalities_csv": {"text"}}), http.StatusSeeOther)
	if card := anon.get("/models/qwen3-coder"); card.status != http.StatusOK || !strings.Contains(card.body, "262,144") {
		t.Errorf("the accepted model has no card: %d", card.status)
	}

	// The profile: a hostile logo is refused with a message; a PNG goes to review.
	res = postMultipart(t, zoe, "/carrier/profile", "/carrier/profile?carrier=zephyr", map[string]string{"description": "Fast H100s."},
		[]byte(`<svg xmlns="http://www.w3.org/2000/svg"><script>alert(1)</script></svg>`))
	wantStatus(t, "SVG with a script", res, http.StatusUnprocessableEntity)
	if !strings.Contains(res.body, `data-testid="error-logo"`) || !strings.Contains(res.body, "Fast H100s.") {
		t.Error("the refused logo is not explained, or the description was lost")
	}
	res = postMultipart(t, zoe, "/carrier/profile", "/carrier/profile?carrier=zephyr",
		map[string]string{"description": "Fast H100s.", "website": "https://zephyr.example", "support_contact": "help@zephyr.example"}, logoPNG())
	wantStatus(t, "profile with a logo", res, http.StatusSeeOther)
	if strings.Contains(anon.get("/carriers/zephyr").body, "Fast H100s.") {
		t.Error("an unreviewed profile is public")
	}
	queue := rev.get("/review")
	cid := regexp.MustCompile(`/profiles/(\d+)/approve`).FindStringSubmatch(queue.body)
	if cid == nil {
		t.Fatal("the profile change is not in the review queue")
	}
	wantStatus(t, "approve profile", rev.post("/review", "/profiles/"+cid[1]+"/approve", url.Values{}), http.StatusSeeOther)

	// The domain, proved by a TXT record.
	wantStatus(t, "set domain", zoe.post("/carrier/profile", "/carrier/domain?carrier=zephyr", url.Values{"domain": {"zephyr.example"}}), http.StatusSeeOther)
	prof, _ := p.store.FindProfileBySlug(ctx, "zephyr")
	p.server.StorefrontForTest().Verify.Resolver = fakeTXT{"zephyr.example": {"v=spf1 -all", storefront.TXTRecord(prof.DomainToken)}}
	wantStatus(t, "check domain", zoe.post("/carrier/profile", "/carrier/domain/check?carrier=zephyr", url.Values{}), http.StatusSeeOther)

	public := anon.get("/carriers/zephyr")
	wantStatus(t, "public carrier page", public, http.StatusOK)
	for _, want := range []string{"Fast H100s.", `data-testid="public-logo"`, "domain zephyr.example", "help@zephyr.example"} {
		if !strings.Contains(public.body, want) {
			t.Errorf("the public page lacks %q", want)
		}
	}
	if public.header.Get("Cache-Control") != "public, max-age=60" {
		t.Errorf("public page Cache-Control %q", public.header.Get("Cache-Control"))
	}
	for _, private := range []string{"zoe@zephyr.example", "Landing fee", "landing fee"} {
		if strings.Contains(public.body, private) {
			t.Errorf("the public page shows %q", private)
		}
	}
	logo := anon.get("/carriers/zephyr/logo")
	if logo.status != http.StatusOK || logo.header.Get("Content-Type") != "image/png" || logo.header.Get("X-Content-Type-Options") != "nosniff" {
		t.Errorf("logo: %d %q %q", logo.status, logo.header.Get("Content-Type"), logo.header.Get("X-Content-Type-Options"))
	}
	// An existing carrier's card shows its earned flags only, never a landing fee.
	kimi := anon.get("/models/kimi-k2.5")
	if kimi.status != http.StatusOK || !strings.Contains(kimi.body, "Nebula Inference") || strings.Contains(kimi.body, "andin") {
		t.Errorf("model card: %d", kimi.status)
	}
	// What each listing offers besides price, as the demo declares it
	// (Fathom is zero data retention; Kimi K2.5 is served in fp8 and bf16).
	for _, want := range []string{`data-testid="offers"`, "262,144-token context", "fp8", "bf16", "zero data retention", "served from DE"} {
		if !strings.Contains(kimi.body, want) {
			t.Errorf("the model page does not show %q", want)
		}
	}
	_ = fmt.Sprint()
}

func TestApplicationsAreThrottled(t *testing.T) {
	p := newPortal(t, store.SQLite)
	anon := p.client()
	app := url.Values{"company": {"Spam Co"}, "website": {"https://spam.example"}, "contact_name": {"S"},
		"contact_email": {"s@spam.example"}, "models": {"x"}, "description": {"x"}}
	var last response
	for range 5 {
		last = anon.post("/apply", "/apply", app)
	}
	wantStatus(t, "the fifth application in a burst", last, http.StatusTooManyRequests)
}

// TestPublicPagesShowOffPeakAndTiers (console defect 1): a model's public
// page shows, for a fare with a schedule, the peak hours and what off-peak
// hours cost, and every context tier's prices.
func TestPublicPagesShowOffPeakAndTiers(t *testing.T) {
	p := newPortal(t, store.SQLite)
	ctx := context.Background()
	ls, err := p.store.FindListings(ctx, catalogue.ListingFilter{Published: true})
	if err != nil {
		t.Fatal(err)
	}
	var scheduled, tiered *catalogue.Listing
	for i := range ls {
		f := ls[i].Published
		if f.TimeBased != nil && scheduled == nil {
			scheduled = &ls[i]
		}
		if len(f.Tiers) > 0 && f.Tiers[0].Input != nil && tiered == nil {
			tiered = &ls[i]
		}
	}
	if scheduled == nil || tiered == nil {
		t.Fatal("the demo catalogue has no scheduled or no tiered fare")
	}
	_, off := scheduled.Published.BlockPrices(time.Now())
	page := p.client().get("/models/" + scheduled.Model.Slug).body
	if !strings.Contains(page, "off-peak input $"+off.Input.Fixed(4)) || !strings.Contains(page, "UTC") {
		t.Errorf("the model page does not show %s's off-peak price $%s", scheduled.CarrierSlug, off.Input.Fixed(4))
	}
	tier := tiered.Published.Tiers[0]
	page = p.client().get("/models/" + tiered.Model.Slug).body
	if want := "Prompts over " + groupDigits(tier.AboveTokens) + " tokens: input $" + tier.Input.Fixed(4); !strings.Contains(page, want) {
		t.Errorf("the model page does not show %s's tier: %q", tiered.CarrierSlug, want)
	}
}

// groupDigits writes a whole number with thousands separators, as pages do.
func groupDigits(n int64) string {
	s := strconv.FormatInt(n, 10)
	for i := len(s) - 3; i > 0; i -= 3 {
		s = s[:i] + "," + s[i:]
	}
	return s
}
