package gateway

import (
	"encoding/json"
	"fmt"
	"maps"
	"math/rand/v2"
	"net/http"
	"slices"
	"strings"
	"testing"
	"time"

	"github.com/airside/airside/internal/catalogue"
	"github.com/airside/airside/internal/election"
	"github.com/airside/airside/internal/gatewayclient"
)

// marketListing is what the test knows of a listing's sec. 7 attributes.
type marketListing struct {
	slug         string
	input        float64
	quantization string
	zdr, trains  bool
	regions      []string
	context      int64 // 0: none declared
}

var testMarket = []marketListing{
	{"a", 1, "fp8", true, false, []string{"DE"}, 131072},
	{"b", 2, "bf16", false, false, []string{"US"}, 32768},
	{"c", 3, "int4", false, true, []string{"DE", "US"}, 0},
	{"d", 1.5, "fp8", false, true, []string{"FR"}, 65536},
}

// TestNoRequestIsServedAgainstItsPreferences sends a mix of provider
// objects, prompt sizes and max_tokens through the real gateway to fake
// carriers, the project's residency switched on halfway, and checks every
// served request against what it asked for (read from the test's own
// table, not from the engine), every refusal against the table too (no
// listing could have served it), and an ordered request's first try.
func TestNoRequestIsServedAgainstItsPreferences(t *testing.T) {
	var specs []carrierSpec
	for _, l := range testMarket {
		specs = append(specs, carrierSpec{slug: l.slug, input: fmt.Sprint(l.input)})
	}
	h := newHarness(t, specs...)
	h.publish(func(ls []gatewayclient.Listing) {
		for i := range ls {
			l := testMarket[i]
			q := gatewayclient.FareQuantization(l.quantization)
			f := &ls[i].Fare
			f.Quantization = &q
			regions := l.regions
			f.Regions = &regions
			retention, trains := int64(30), l.trains
			if l.zdr {
				retention = 0
			}
			f.RetentionDays, f.TrainsOnPrompts = &retention, &trains
			if l.context > 0 {
				f.ContextLength = &l.context
			}
		}
	})
	rng := rand.New(rand.NewPCG(48, 7))
	pick := func() []string {
		var out []string
		for _, l := range testMarket {
			if rng.IntN(3) == 0 {
				out = append(out, l.slug)
			}
		}
		return out
	}
	served, refused, ordered, zdrSent := 0, 0, 0, 0
	for n := range 240 {
		if n == 120 {
			h.gw.Config.Projects[0].Regions = []string{"DE", "FR"} // data residency from now on
		}
		prov := map[string]any{}
		if rng.IntN(3) == 0 {
			prov["only"] = pick()
		}
		if rng.IntN(4) == 0 {
			prov["ignore"] = pick()
		}
		if rng.IntN(4) == 0 {
			prov["order"] = pick()
			prov["allow_fallbacks"] = rng.IntN(2) == 0
		}
		if rng.IntN(3) == 0 {
			prov["quantizations"] = []string{[]string{"fp8", "bf16", "int4"}[rng.IntN(3)]}
		}
		if rng.IntN(4) == 0 {
			prov["data_collection"] = "deny"
		}
		if rng.IntN(6) == 0 {
			prov["zdr"] = true
			zdrSent++
		}
		if rng.IntN(4) == 0 {
			prov["max_price"] = map[string]string{"prompt": fmt.Sprint(1 + rng.IntN(3))}
		}
		promptChars := []int{40, 200_000, 400_000}[rng.IntN(3)] // about 10, 50k and 100k tokens
		maxTokens := []int{0, 1000, 40000}[rng.IntN(3)]
		body := map[string]any{"model": "m", "messages": []map[string]string{{"role": "user", "content": strings.Repeat("x", promptChars)}},
			"provider": prov}
		if maxTokens > 0 {
			body["max_tokens"] = maxTokens
		}
		raw, _ := json.Marshal(body)
		before := h.chats()
		ans := h.chat(string(raw))
		after := h.chats()
		var got []string
		for slug := range after {
			if after[slug] != before[slug] {
				got = append(got, slug)
			}
		}
		prompt := int64(promptChars/charsPerToken + tokensPerMessage)
		allowed := func(l marketListing) bool {
			return admits(l, prov, prompt, int64(maxTokens), h.gw.Config.Projects[0].Regions)
		}
		if ans.status != 200 {
			if ans.status != 404 || !strings.Contains(ans.body, "no_endpoints") {
				t.Fatalf("request %d (%s): %d %s", n, raw, ans.status, ans.body)
			}
			refused++
			for _, l := range testMarket {
				if allowed(l) && !inOrderOnly(l, prov) {
					t.Errorf("request %d (%s) refused, but %s meets it: %s", n, raw, l.slug, ans.body)
				}
			}
			continue
		}
		served++
		if len(got) != 1 {
			t.Fatalf("request %d: %d carriers answered (%v)", n, len(got), got)
		}
		var l marketListing
		for _, m := range testMarket {
			if m.slug == got[0] {
				l = m
			}
		}
		if !allowed(l) {
			t.Errorf("request %d (%s) served by %s against its preferences", n, raw, l.slug)
		}
		if order, _ := prov["order"].([]string); len(order) > 0 {
			ordered++
			for _, slug := range order {
				if m := find(slug); allowed(m) {
					if m.slug != l.slug {
						t.Errorf("request %d ordered %v: served by %s, want %s (the first that meets it)", n, order, l.slug, m.slug)
					}
					break
				}
			}
		}
	}
	// Every request's demand row says what it asked for: the zdr count is
	// the requests sent with zdr, the residency every request of the second
	// half.
	var asked map[string]int64
	var demanded int64
	for _, d := range h.gw.Recorder.TakeClosedDemand(h.clock().Add(time.Hour)) {
		demanded += d.Requests
		for k, n := range d.Asked {
			if asked == nil {
				asked = map[string]int64{}
			}
			asked[k] += n
		}
	}
	if demanded != 240 || asked["zdr"] != int64(zdrSent) || asked["regions:DE,FR"] != 120 {
		t.Errorf("demand: %d requests, asked %v; sent %d with zdr", demanded, asked, zdrSent)
	}
	// The sets the projection replays: as many as a row keeps (this mix
	// sends more in a minute than that), each read back.
	sets := 0
	for k := range asked {
		if catalogue.IsPreferenceSet(k) {
			sets++
			if a, ok := catalogue.ParseAsked(k); !ok || a.Preferences == nil {
				t.Errorf("%s does not read back as a set of preferences", k)
			}
		}
	}
	if sets == 0 || sets > 2*catalogue.MaxPreferenceSets {
		t.Errorf("%d sets of preferences in the demand (at most %d a row)", sets, catalogue.MaxPreferenceSets)
	}
	if served < 60 || refused < 10 || ordered < 10 {
		t.Errorf("the mix served %d, refused %d, ordered %d: too few of one to judge", served, refused, ordered)
	}
	t.Logf("served %d, refused %d, ordered %d", served, refused, ordered)
}

// TestDemandCountsEachSetOfPreferences: the demand row counts each
// request's preferences together under one prefs: key (what the
// projection elects each set with), beside the keys counted alone, and a
// request with none or with only a max_price adds no set (its project is
// named instead); a minute with
// more sets than a row keeps reports the first MaxPreferenceSets.
func TestDemandCountsEachSetOfPreferences(t *testing.T) {
	h := newHarness(t, threeCarriers()...)
	send := func(n int, provider string) {
		for range n {
			body := `{"model":"m","messages":[{"role":"user","content":"hello"}]`
			if provider != "" {
				body += `,"provider":` + provider
			}
			h.chat(body + "}")
		}
	}
	send(6, `{"order":["b"]}`)
	send(4, `{"only":["a","c"],"ignore":["c"]}`)
	send(3, `{"order":["b"],"quantizations":["fp8"]}`)
	send(2, `{"max_price":{"prompt":100}}`)
	send(5, "")
	asked := map[string]int64{}
	for _, d := range h.gw.Recorder.TakeClosedDemand(h.clock().Add(time.Hour)) {
		for k, n := range d.Asked {
			asked[k] += n
		}
	}
	// The 7 requests with no set (a max_price narrows no set) name their
	// project, for the rates routing learned of it.
	want := map[string]int64{"prefs:order:b": 6, "prefs:only:a,c|ignore:c": 4, "prefs:quantizations:fp8|order:b": 3, "quantizations:fp8": 3,
		catalogue.ProjectKey(h.gw.ProjectLabel("p"), false): 7}
	if !maps.Equal(asked, want) {
		t.Errorf("asked %v\nwant  %v", asked, want)
	}
	// Past the row's room for sets: the first ones are kept, and the keys
	// counted alone still are.
	for i := range catalogue.MaxPreferenceSets + 5 {
		send(1, fmt.Sprintf(`{"order":["b","a"],"ignore":["x%d"]}`, i))
	}
	send(1, `{"zdr":true}`)
	sets, zdr := 0, int64(0)
	for _, d := range h.gw.Recorder.TakeClosedDemand(h.clock().Add(2 * time.Hour)) {
		for k, n := range d.Asked {
			if catalogue.IsPreferenceSet(k) {
				sets++
			}
			if k == catalogue.AskedZDR {
				zdr += n
			}
		}
	}
	if sets != catalogue.MaxPreferenceSets || zdr != 1 {
		t.Errorf("a minute of %d sets kept %d (want %d), and zdr counted %d times alone (want 1)", catalogue.MaxPreferenceSets+6, sets, catalogue.MaxPreferenceSets, zdr)
	}
}

func find(slug string) marketListing {
	for _, m := range testMarket {
		if m.slug == slug {
			return m
		}
	}
	return marketListing{}
}

// inOrderOnly reports a listing that meets every filter but that an order
// without fallbacks leaves out: a refusal may then be right.
func inOrderOnly(l marketListing, prov map[string]any) bool {
	order, _ := prov["order"].([]string)
	fallbacks, _ := prov["allow_fallbacks"].(bool)
	return len(order) > 0 && !fallbacks && !slices.Contains(order, l.slug)
}

// admits is election.md sec. 7 read from the test's table: whether a
// listing may serve a request with these preferences.
func admits(l marketListing, prov map[string]any, prompt, maxTokens int64, regions []string) bool {
	if only, ok := prov["only"].([]string); ok && len(only) > 0 && !slices.Contains(only, l.slug) {
		return false
	}
	if ignore, ok := prov["ignore"].([]string); ok && slices.Contains(ignore, l.slug) {
		return false
	}
	if q, ok := prov["quantizations"].([]string); ok && !slices.Contains(q, l.quantization) {
		return false
	}
	if prov["data_collection"] == "deny" && l.trains {
		return false
	}
	if prov["zdr"] == true && !l.zdr {
		return false
	}
	if mp, ok := prov["max_price"].(map[string]string); ok {
		var limit float64
		fmt.Sscan(mp["prompt"], &limit)
		if l.input > limit {
			return false
		}
	}
	if l.context > 0 && prompt+maxTokens > l.context {
		return false
	}
	if len(regions) > 0 && !slices.ContainsFunc(l.regions, func(r string) bool { return slices.Contains(regions, r) }) {
		return false
	}
	return true
}

func TestAnalyzeReadsTheMarketFields(t *testing.T) {
	a, err := Analyze([]byte(`{"model":"m","max_tokens":100,"max_completion_tokens":300,
		"messages":[{"role":"user","content":[{"type":"image_url"},{"type":"image_url"},{"type":"text","text":"hi"}]}],
		"provider":{"order":["a"],"quantizations":["fp8"],"max_price":{"prompt":"0.5"}}}`), http.Header{})
	if err != nil {
		t.Fatal(err)
	}
	if a.MaxTokens != 300 || a.Images != 2 || a.Provider == nil || a.Provider.Order[0] != "a" {
		t.Errorf("read max tokens %d, images %d, provider %+v", a.MaxTokens, a.Images, a.Provider)
	}
	for body, field := range map[string]string{
		`{"model":"m","messages":[],"provider":{"quantizations":["q4"]}}`:        "provider.quantizations[0]",
		`{"model":"m","messages":[],"provider":{"max_price":{"prompt":"-1"}}}`:   "provider.max_price.prompt",
		`{"model":"m","messages":[],"provider":{"data_collection":"sometimes"}}`: "provider.data_collection",
		`{"model":"m","messages":[],"max_tokens":0}`:                             "max_tokens",
	} {
		if _, err := Analyze([]byte(body), http.Header{}); err == nil || !strings.Contains(err.Error(), field) {
			t.Errorf("%s: %v, want an error naming %s", body, err, field)
		}
	}
}

func TestProjectPreferencesMergeUnderTheRequest(t *testing.T) {
	yes, no, deny := true, false, "deny"
	project := &election.ProviderInput{Only: []string{"a", "b"}, ZDR: &yes, DataCollection: &deny, AllowFallbacks: &no}
	request := &election.ProviderInput{Only: []string{"c"}, ZDR: &no}
	got := mergeProvider(project, request)
	if strings.Join(got.Only, ",") != "c" || *got.ZDR || *got.DataCollection != "deny" || *got.AllowFallbacks {
		t.Errorf("merged %+v", got)
	}
	if _, err := ParseConfig([]byte(`{"projects":[{"name":"p","apiKey":"sk-12345678","regions":["de"]}]}`)); err == nil ||
		!strings.Contains(err.Error(), "regions") {
		t.Errorf("a lowercase region in the config: %v", err)
	}
	if _, err := ParseConfig([]byte(`{"projects":[{"name":"p","apiKey":"sk-12345678","provider":{"zdr":"yes"}}]}`)); err == nil {
		t.Error("a provider default of the wrong type was accepted")
	}
	cfg, err := ParseConfig([]byte(`{"projects":[{"name":"p","apiKey":"sk-12345678","regions":["DE"],"provider":{"zdr":true,"sort":"price"}}]}`))
	if err != nil {
		t.Fatal(err)
	}
	req := election.Request{}
	a := &Analysis{}
	if err := preferences(&cfg.Projects[0], a, &req); err != nil {
		t.Fatal(err)
	}
	if !req.Provider.ZDR || req.Routing != election.ModePrice || req.Regions[0] != "DE" {
		t.Errorf("the project's defaults gave %+v", req)
	}
}

// TestANarrowedRequestLeavesTheIncumbentInPlace: requests that ask for
// zero data retention go to the best ZDR listing, a close second on price,
// without making it the shape's incumbent: the plain requests after them
// stay with the cheapest (before, the first ZDR request took the shape
// and, inside the margin, kept it).
func TestANarrowedRequestLeavesTheIncumbentInPlace(t *testing.T) {
	h := newHarness(t, carrierSpec{slug: "a", input: "1.00"}, carrierSpec{slug: "b", input: "1.02"}, carrierSpec{slug: "c", input: "1.50"})
	h.publish(func(ls []gatewayclient.Listing) {
		zero, no := int64(0), false
		for _, i := range []int{1, 2} { // b and c: two left, so the request is routed, not pinned
			ls[i].Fare.RetentionDays, ls[i].Fare.TrainsOnPrompts = &zero, &no
		}
	})
	zdr := `{"model":"m","messages":[{"role":"user","content":"hello"}],"provider":{"zdr":true}}`
	for range 5 {
		if ans := h.chat(hello); ans.status != 200 {
			t.Fatalf("plain: %d %s", ans.status, ans.body)
		}
	}
	before := h.chats()
	for range 5 {
		if ans := h.chat(zdr); ans.status != 200 {
			t.Fatalf("zdr: %d %s", ans.status, ans.body)
		}
	}
	mid := h.chats()
	for range 20 {
		h.chat(hello)
	}
	after := h.chats()
	if mid["b"]-before["b"] != 5 {
		t.Errorf("the ZDR requests went to b %d times of 5", mid["b"]-before["b"])
	}
	if plainToB := after["b"] - mid["b"]; plainToB > 1 { // at most an exploration
		t.Errorf("after the ZDR requests, %d of 20 plain requests went to b: it took the shape", plainToB)
	}
}
