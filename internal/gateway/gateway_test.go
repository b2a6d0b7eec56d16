package gateway

import (
	"context"
	"encoding/json"
	"fmt"
	"io"
	"net/http"
	"strings"
	"testing"
	"time"

	"github.com/airside/airside/internal/election"
	"github.com/airside/airside/internal/fakecarrier"
	"github.com/airside/airside/internal/fleet"
	"github.com/airside/airside/internal/gatewayclient"
	"github.com/airside/airside/internal/traffic"
)

func ptr[T any](v T) *T { return &v }

// three carriers of model m, a the cheapest, c the dearest.
func threeCarriers() []carrierSpec {
	return []carrierSpec{{slug: "a", input: "1"}, {slug: "b", input: "2"}, {slug: "c", input: "3"}}
}

func setPrice(slug, input string) func([]gatewayclient.Listing) {
	return func(ls []gatewayclient.Listing) {
		for i := range ls {
			if ls[i].Carrier == slug {
				ls[i].Fare.InputPrice = input
			}
		}
	}
}

func wantChats(t *testing.T, h *harness, want map[string]int) {
	t.Helper()
	got := h.chats()
	for slug, n := range want {
		if got[slug] != n {
			t.Errorf("carrier %s served %d requests, want %d (all: %v)", slug, got[slug], n, got)
		}
	}
}

func TestRequestsGoToTheWinnerAndMoveWithTheFares(t *testing.T) {
	h := newHarness(t, threeCarriers()...)
	for range 3 {
		if res := h.chat(hello); res.status != http.StatusOK {
			t.Fatalf("status %d: %s", res.status, res.body)
		}
	}
	wantChats(t, h, map[string]int{"a": 3, "b": 0, "c": 0})
	// c files far below a: beyond the incumbent margin, the traffic moves.
	h.publish(setPrice("c", "0.1"))
	h.chat(hello)
	wantChats(t, h, map[string]int{"a": 3, "c": 1})
}

func TestTheIncumbentKeepsTrafficInsideTheMargin(t *testing.T) {
	h := newHarness(t, threeCarriers()...)
	h.chat(hello)
	// b now scores slightly better than a, within the 0.15 margin: a keeps
	// the shape's routed traffic.
	h.publish(setPrice("b", "0.95"))
	table := h.gw.Follower.Current()
	b := election.Ballot{Request: election.Request{Model: "m", Routing: election.ModeAuto, PromptTokens: 10}, Candidates: table.Models["m"].Candidates}
	res := election.Elect(&b)
	if res.WinnerID() != "b/m" {
		t.Fatalf("b should win the election itself, won by %s", res.WinnerID())
	}
	for range 5 {
		h.chat(hello)
	}
	wantChats(t, h, map[string]int{"a": 6, "b": 0})
}

func TestASessionStaysPinnedAndMovesOnFailure(t *testing.T) {
	h := newHarness(t, threeCarriers()...)
	session := []string{"X-Session-Id", "s1"}
	h.chat(hello, session...)
	wantChats(t, h, map[string]int{"a": 1})
	// b becomes far cheaper: new requests move, the session stays with a.
	h.publish(setPrice("b", "0.1"))
	h.chat(hello, session...)
	h.chat(hello)
	wantChats(t, h, map[string]int{"a": 2, "b": 1})
	// a fails: the session falls back, is pinned to where it was served,
	// and stays there once a is back.
	h.carriers["a"].SetStatus(http.StatusInternalServerError)
	if res := h.chat(hello, session...); res.status != http.StatusOK {
		t.Fatalf("the session's request after its listing failed: %d %s", res.status, res.body)
	}
	h.carriers["a"].SetStatus(0)
	h.chat(hello, session...)
	wantChats(t, h, map[string]int{"a": 3, "b": 3})
	if got := h.gw.shared().Read(fleet.Query{Session: &traffic.SessionKey{Project: "p", Model: "m", ID: "s1"}}, h.clock()).Pin.Listing; got != "b/m" {
		t.Errorf("the session is pinned to %q, want b/m", got)
	}
	stats := h.gw.Recorder.Totals()
	if stats[1].Errors != 1 || stats[2].Fallback != 1 {
		t.Errorf("a's errors %d (want 1), b's fallbacks %d (want 1)", stats[1].Errors, stats[2].Fallback)
	}
}

func TestExplorationSendsAboutOnePercentElsewhere(t *testing.T) {
	h := newHarness(t, threeCarriers()...)
	const n = 2000
	for range n {
		if res := h.chat(hello); res.status != http.StatusOK {
			t.Fatalf("status %d: %s", res.status, res.body)
		}
	}
	stats := h.gw.Recorder.Totals()
	explored := stats[2].Exploration + stats[3].Exploration
	// 1 % of 2,000 is 20 (a binomial's standard deviation is 4.4); the
	// draws are seeded, so the count is the same every run.
	if explored < 8 || explored > 32 || stats[1].Exploration != 0 {
		t.Errorf("explored %d of %d (b %d, c %d, a %d), want about 1 %%, never the incumbent",
			explored, n, stats[2].Exploration, stats[3].Exploration, stats[1].Exploration)
	}
	if stats[1].Routed != n-explored {
		t.Errorf("a routed %d, want %d", stats[1].Routed, n-explored)
	}
	// Under price routing nothing is explored.
	for range 500 {
		h.chat(`{"model":"m","routing":"price","messages":[{"role":"user","content":"hello"}]}`)
	}
	if after := h.gw.Recorder.Totals(); after[2].Exploration+after[3].Exploration != explored {
		t.Error("requests under price routing were explored")
	}
}

func TestACappedListingIsSkippedAndCounted(t *testing.T) {
	specs := threeCarriers()
	specs[0].maxRpm = ptr(int64(2))
	h := newHarness(t, specs...)
	for range 5 {
		h.chat(`{"model":"m","routing":"price","messages":[{"role":"user","content":"hello"}]}`)
	}
	wantChats(t, h, map[string]int{"a": 2, "b": 3})
	if got := h.gw.Recorder.Totals()[1].Capped; got != 3 {
		t.Errorf("a's capped requests: %d, want 3", got)
	}
	// A new minute: a takes traffic again.
	h.advance(time.Minute)
	h.chat(`{"model":"m","routing":"price","messages":[{"role":"user","content":"hello"}]}`)
	wantChats(t, h, map[string]int{"a": 3})
}

func TestPerOrganisationCapsCountEachOrganisation(t *testing.T) {
	specs := threeCarriers()
	specs[0].maxRpm, specs[0].capScope = ptr(int64(1)), "per_org"
	h := newHarness(t, specs...)
	h.gw.Config.Projects = append(h.gw.Config.Projects, Project{Name: "q", APIKey: "sk-other-project", Organisation: "other"})
	price := `{"model":"m","routing":"price","messages":[{"role":"user","content":"hello"}]}`
	h.chat(price)
	h.chat(price)
	req, _ := http.NewRequest(http.MethodPost, h.srv.URL+"/v1/chat/completions", strings.NewReader(price))
	req.Header.Set("Authorization", "Bearer sk-other-project")
	res, err := http.DefaultClient.Do(req)
	if err != nil {
		t.Fatal(err)
	}
	res.Body.Close()
	wantChats(t, h, map[string]int{"a": 2, "b": 1})
}

func TestAPinWithNoFallbackFailsRatherThanMoves(t *testing.T) {
	h := newHarness(t, threeCarriers()...)
	h.carriers["c"].SetStatus(http.StatusInternalServerError)
	pinned := `{"model":"c/m","messages":[{"role":"user","content":"hello"}]}`
	if res := h.chat(pinned, "X-No-Fallback", "true"); res.status != http.StatusInternalServerError {
		t.Errorf("a pin with x-no-fallback on a failing listing: status %d, want the carrier's 500", res.status)
	}
	wantChats(t, h, map[string]int{"a": 0, "b": 0, "c": 1})
	if res := h.chat(pinned); res.status != http.StatusOK {
		t.Errorf("a pin without x-no-fallback: status %d, want a fallback's 200", res.status)
	}
	wantChats(t, h, map[string]int{"a": 1, "c": 2})
	stats := h.gw.Recorder.Totals()
	if stats[3].Errors != 2 || stats[1].Fallback != 1 {
		t.Errorf("c's errors %d (want 2), a's fallbacks %d (want 1)", stats[3].Errors, stats[1].Fallback)
	}
	h.carriers["c"].SetStatus(0)
	h.chat(pinned)
	if got := h.gw.Recorder.Totals()[3].Pinned; got != 1 {
		t.Errorf("c's pinned requests: %d, want 1", got)
	}
}

func TestFallbackOnFailuresAndOnADroppedStream(t *testing.T) {
	for _, test := range []struct {
		name   string
		break_ func(*fakecarrier.Server)
		body   string
		want   map[string]int
		status int
		errs   int64 // a's counted errors
	}{
		{"500 moves on", func(s *fakecarrier.Server) { s.SetStatus(500) }, hello, map[string]int{"a": 1, "b": 1}, 200, 1},
		{"429 moves on, not held against uptime", func(s *fakecarrier.Server) { s.SetStatus(429) }, hello, map[string]int{"a": 1, "b": 1}, 200, 0},
		{"400 is the caller's: returned, not retried", func(s *fakecarrier.Server) { s.SetStatus(400) }, hello, map[string]int{"a": 1, "b": 0}, 400, 0},
		{"a stream dropped before its first token moves on", func(s *fakecarrier.Server) { s.BreakStreamsAfter(1) },
			`{"model":"m","stream":true,"messages":[{"role":"user","content":"hello"}]}`, map[string]int{"a": 1, "b": 1}, 200, 1},
		{"three failing listings: at most three tries", func(s *fakecarrier.Server) { s.SetStatus(503) }, hello, map[string]int{"a": 1, "b": 1, "c": 1}, 503, 1},
	} {
		t.Run(test.name, func(t *testing.T) {
			h := newHarness(t, threeCarriers()...)
			test.break_(h.carriers["a"])
			if test.name == "three failing listings: at most three tries" {
				test.break_(h.carriers["b"])
				test.break_(h.carriers["c"])
			}
			res := h.chat(test.body)
			if res.status != test.status {
				t.Errorf("status %d, want %d: %s", res.status, test.status, res.body)
			}
			wantChats(t, h, test.want)
			if got := h.gw.Recorder.Totals()[1].Errors; got != test.errs {
				t.Errorf("a's counted errors: %d, want %d", got, test.errs)
			}
			if test.status == 200 && strings.Contains(test.body, "stream") && !strings.HasSuffix(strings.TrimSpace(res.body), "data: [DONE]") {
				t.Errorf("the fallback's stream did not reach the caller whole: %s", res.body)
			}
		})
	}
}

func TestAStreamCutPartwayIsACountedFailure(t *testing.T) {
	h := newHarness(t, threeCarriers()...)
	h.carriers["a"].BreakStreamsAfter(3)
	res := h.chat(`{"model":"m","stream":true,"messages":[{"role":"user","content":"hello there"}]}`)
	if res.status != http.StatusOK || !strings.Contains(res.body, "stream_broken") || strings.Contains(res.body, "[DONE]") {
		t.Errorf("a stream cut after its first tokens: %d %s, want the tokens then an error event", res.status, res.body)
	}
	wantChats(t, h, map[string]int{"a": 1, "b": 0})
	if got := h.gw.Recorder.Totals()[1].Errors; got != 1 {
		t.Errorf("a's counted errors: %d, want 1", got)
	}
}

func TestCapabilitiesSendRequestsOnlyWhereTheyAreVerified(t *testing.T) {
	specs := threeCarriers()
	specs[2].capabilities = []string{"vision", "tools"}
	h := newHarness(t, specs...)
	image := `{"model":"m","messages":[{"role":"user","content":[{"type":"text","text":"what is this"},{"type":"image_url","image_url":{"url":"data:image/png;base64,iVBOR"}}]}]}`
	if res := h.chat(image); res.status != http.StatusOK {
		t.Fatalf("an image request: %d %s", res.status, res.body)
	}
	wantChats(t, h, map[string]int{"a": 0, "c": 1})
	audio := `{"model":"m","messages":[{"role":"user","content":[{"type":"input_audio","input_audio":{"data":"UklG","format":"wav"}}]}]}`
	if res := h.chat(audio); res.status != http.StatusNotFound || !strings.Contains(res.body, "audio_input") {
		t.Errorf("an audio request no listing can take: %d %s, want 404 naming audio_input", res.status, res.body)
	}
}

func TestAnalyzeDerivesWhatTheRequestNeeds(t *testing.T) {
	for _, test := range []struct {
		name     string
		body     string
		ua       string
		requires []election.Capability
		mode     election.Mode
		workload election.Workload
		pin      string
	}{
		{"plain chat", hello, "", nil, election.ModeAuto, election.WorkloadGeneral, ""},
		{"tools", `{"model":"m","tools":[{"type":"function","function":{"name":"f"}}],"messages":[]}`, "", []election.Capability{election.CapTools}, election.ModeAuto, election.WorkloadGeneral, ""},
		{"image and audio parts", `{"model":"m","messages":[{"role":"user","content":[{"type":"image_url"},{"type":"input_audio"}]}]}`, "",
			[]election.Capability{election.CapVision, election.CapAudioInput}, election.ModeAuto, election.WorkloadGeneral, ""},
		{"JSON mode", `{"model":"m","response_format":{"type":"json_object"},"messages":[]}`, "", []election.Capability{election.CapJSONOutput}, election.ModeAuto, election.WorkloadGeneral, ""},
		{"JSON schema", `{"model":"m","response_format":{"type":"json_schema"},"messages":[]}`, "", []election.Capability{election.CapJSONSchema}, election.ModeAuto, election.WorkloadGeneral, ""},
		{"reasoning effort", `{"model":"m","reasoning_effort":"high","messages":[]}`, "", []election.Capability{election.CapReasoning}, election.ModeAuto, election.WorkloadGeneral, ""},
		{"a reasoning budget", `{"model":"m","reasoning":{"max_tokens":2000},"messages":[]}`, "",
			[]election.Capability{election.CapReasoning, election.CapReasoningBudget}, election.ModeAuto, election.WorkloadGeneral, ""},
		{"web search", `{"model":"m","web_search_options":{},"messages":[]}`, "", []election.Capability{election.CapWebSearch}, election.ModeAuto, election.WorkloadGeneral, ""},
		{"routing from the body", `{"model":"m","routing":"latency","messages":[]}`, "", nil, election.ModeLatency, election.WorkloadGeneral, ""},
		{"OpenRouter's provider.sort", `{"model":"m","provider":{"sort":"throughput"},"messages":[]}`, "", nil, election.ModeThroughput, election.WorkloadGeneral, ""},
		{"a coding client", hello, "claude-cli/1.0.83 (external, cli)", nil, election.ModeAuto, election.WorkloadCoding, ""},
		{"a pin", `{"model":"nebula/m","messages":[]}`, "", nil, election.ModeAuto, election.WorkloadGeneral, "nebula/m"},
	} {
		t.Run(test.name, func(t *testing.T) {
			header := http.Header{}
			header.Set("User-Agent", test.ua)
			a, err := Analyze([]byte(test.body), header)
			if err != nil {
				t.Fatal(err)
			}
			if want := election.CapabilitySet(test.requires...); a.Requires != want {
				t.Errorf("requires %v, want %v", a.Requires, want)
			}
			if a.Mode != test.mode || a.Workload != test.workload || a.Pin != test.pin || a.Model != "m" {
				t.Errorf("mode %v workload %v pin %q model %q, want %v %v %q m", a.Mode, a.Workload, a.Pin, a.Model, test.mode, test.workload, test.pin)
			}
		})
	}
	header := http.Header{}
	header.Set("X-Session-Id", "s1")
	if a, _ := Analyze([]byte(hello), header); a.Workload != election.WorkloadGeneral {
		t.Error("a session id alone made the request coding")
	}
	long := `{"model":"m","messages":[{"role":"user","content":"` + strings.Repeat("word ", 8000) + `"}]}`
	if a, _ := Analyze([]byte(long), http.Header{}); a.PromptTokens < 9000 || a.PromptTokens > 11000 {
		t.Errorf("a 40,000-character prompt estimated at %d tokens, want about 10,000", a.PromptTokens)
	}
	for _, bad := range []string{`{`, `{"messages":[]}`, `{"model":"m","routing":"fastest"}`} {
		if _, err := Analyze([]byte(bad), http.Header{}); err == nil {
			t.Errorf("Analyze(%s) accepted it", bad)
		}
	}
}

func TestMetricsPostedAddUpToWhatWasServed(t *testing.T) {
	specs := threeCarriers()
	specs[1].server.Cache = true
	h := newHarness(t, specs...)
	h.carriers["a"].SetStatus(http.StatusInternalServerError) // every request falls back to b
	long := strings.Repeat("a repeated prefix ", 400)
	var input, cached, output int64
	for i := range 6 {
		stream := i%2 == 0
		body, _ := json.Marshal(map[string]any{"model": "m", "stream": stream, "stream_options": map[string]bool{"include_usage": true},
			"messages": []map[string]string{{"role": "user", "content": long}}})
		res := h.chat(string(body))
		if res.status != http.StatusOK {
			t.Fatalf("status %d: %s", res.status, res.body)
		}
		u := usageIn(t, res.body, stream)
		input, cached, output = input+u.PromptTokens, cached+valueOr0(u.PromptTokensDetails.CachedTokens), output+u.CompletionTokens
	}
	h.advance(2 * time.Minute)
	rep := &Reporter{API: h.gw.Follower.API, Recorder: h.gw.Recorder, Log: h.gw.Log, Now: h.clock}
	if err := rep.Report(context.Background(), h.clock()); err != nil {
		t.Fatal(err)
	}
	sums := map[int64]gatewayclient.Bucket{}
	h.portal.mu.Lock()
	for _, b := range h.portal.buckets {
		s := sums[*b.ListingId]
		s.Requests += b.Requests
		s.Errors = ptr(deref(s.Errors) + deref(b.Errors))
		s.InputTokens = ptr(deref(s.InputTokens) + deref(b.InputTokens))
		s.CachedInputTokens = ptr(deref(s.CachedInputTokens) + deref(b.CachedInputTokens))
		s.OutputTokens = ptr(deref(s.OutputTokens) + deref(b.OutputTokens))
		s.Fallback = ptr(deref(s.Fallback) + deref(b.Fallback))
		s.Routed = ptr(deref(s.Routed) + deref(b.Routed))
		sums[*b.ListingId] = s
	}
	var demanded, demandedTokens int64
	streamed := map[bool]int64{}
	for _, d := range h.portal.demand {
		if d.Model != "m" || d.Workload != gatewayclient.General {
			t.Errorf("demand row for %s/%s, want m/general", d.Model, d.Workload)
		}
		demanded += d.Requests
		demandedTokens += *d.PromptTokens
		if d.Streaming == nil || d.Requires != nil {
			t.Errorf("a demand row says streaming %v, requires %v: want its kind said, requiring nothing", d.Streaming, d.Requires)
		} else {
			streamed[*d.Streaming] += d.Requests
		}
	}
	h.portal.mu.Unlock()
	if demanded != 6 || demandedTokens < 6*1500 {
		t.Errorf("demand posted: %d requests, %d prompt tokens; want 6 requests of about 1,800 tokens each", demanded, demandedTokens)
	}
	if streamed[true] != 3 || streamed[false] != 3 {
		t.Errorf("demand by kind: %d streamed, %d not; want 3 and 3", streamed[true], streamed[false])
	}
	if f, r := deref(sums[2].Fallback), deref(sums[2].Routed); f != 6 || r != 0 {
		t.Errorf("b's fallbacks %d, routed %d: want 6 and 0 (a failed every time)", f, r)
	}
	if a := sums[1]; a.Requests != 6 || deref(a.Errors) != 6 {
		t.Errorf("a: %d requests, %d errors posted, want 6 and 6", a.Requests, deref(a.Errors))
	}
	b := sums[2]
	if b.Requests != 6 || deref(b.Errors) != 0 || deref(b.InputTokens) != input || deref(b.CachedInputTokens) != cached || deref(b.OutputTokens) != output {
		t.Errorf("b posted %d requests, %d errors, tokens %d/%d/%d; the caller received tokens %d/%d/%d",
			b.Requests, deref(b.Errors), deref(b.InputTokens), deref(b.CachedInputTokens), deref(b.OutputTokens), input, cached, output)
	}
	if cached == 0 {
		t.Error("the repeated prefix was never cached: the test checks nothing of cached tokens")
	}
	// Posting again sends nothing more: each minute is reported once.
	before := len(h.portal.buckets)
	if err := rep.Report(context.Background(), h.clock()); err != nil || len(h.portal.buckets) != before {
		t.Errorf("a second report posted %d more buckets (%v)", len(h.portal.buckets)-before, err)
	}
}

func deref(p *int64) int64 {
	if p == nil {
		return 0
	}
	return *p
}

// usageIn reads the usage the caller received, from a completion or the
// last usage chunk of a stream.
func usageIn(t *testing.T, body string, stream bool) usageJSON {
	t.Helper()
	var u struct {
		Usage *usageJSON `json:"usage"`
	}
	if !stream {
		if err := json.Unmarshal([]byte(body), &u); err != nil || u.Usage == nil {
			t.Fatalf("no usage in %s", body)
		}
		return withDetails(*u.Usage)
	}
	var last *usageJSON
	for _, line := range strings.Split(body, "\n") {
		data, ok := strings.CutPrefix(line, "data: ")
		if !ok || data == "[DONE]" {
			continue
		}
		u.Usage = nil
		if json.Unmarshal([]byte(data), &u) == nil && u.Usage != nil {
			last = u.Usage
		}
	}
	if last == nil {
		t.Fatalf("no usage in the stream %s", body)
	}
	return withDetails(*last)
}

func withDetails(u usageJSON) usageJSON {
	if u.PromptTokensDetails == nil {
		u.PromptTokensDetails = &struct {
			CachedTokens     *int64 `json:"cached_tokens"`
			CacheWriteTokens int64  `json:"cache_write_tokens"`
		}{}
	}
	return u
}

func TestRoutingGoesOnWhileThePortalIsAway(t *testing.T) {
	h := newHarness(t, threeCarriers()...)
	h.chat(hello)
	h.portal.mu.Lock()
	h.portal.down = true
	h.portal.mu.Unlock()
	for range 5 {
		if res := h.chat(hello); res.status != http.StatusOK {
			t.Fatalf("while the portal is away: %d %s", res.status, res.body)
		}
	}
	wantChats(t, h, map[string]int{"a": 6})
}

func TestTheCatalogueIsRevalidatedNotReread(t *testing.T) {
	h := newHarness(t, threeCarriers()...)
	deadline := time.Now().Add(time.Minute)
	for h.gw.Follower.NotModified.Load() < 2 {
		if time.Now().After(deadline) {
			t.Fatal("the gateway never revalidated its catalogue with If-None-Match")
		}
		time.Sleep(10 * time.Millisecond)
	}
	if full := h.gw.Follower.Full.Load(); full != 1 {
		t.Errorf("read the unchanged catalogue in full %d times, want once", full)
	}
}

// TestHealthMovesWithoutRereadingTheFares: when only health moves, the
// gateway reads the health document again, never the catalogue, and routes
// on the new figures.
func TestHealthMovesWithoutRereadingTheFares(t *testing.T) {
	h := newHarness(t, threeCarriers()...)
	uptimeOf := func(id string) float64 {
		m := h.gw.Follower.Current().Models["m"]
		i := m.index(id)
		if i < 0 || m.Candidates[i].Metrics.Uptime == nil {
			return -1
		}
		return *m.Candidates[i].Metrics.Uptime
	}
	low := 52.5
	h.portal.moveHealth(1, gatewayclient.Health{Uptime: &low})
	deadline := time.Now().Add(time.Minute)
	for uptimeOf("a/m") != low {
		if time.Now().After(deadline) {
			t.Fatalf("the gateway still routes on uptime %v for a/m after its health moved", uptimeOf("a/m"))
		}
		time.Sleep(10 * time.Millisecond)
	}
	if full, health := h.gw.Follower.Full.Load(), h.gw.Follower.HealthFull.Load(); full != 1 || health != 2 {
		t.Errorf("read the catalogue %d times and its health %d times, want 1 and 2", full, health)
	}
}

func TestAuthAndModels(t *testing.T) {
	h := newHarness(t, threeCarriers()...)
	req, _ := http.NewRequest(http.MethodPost, h.srv.URL+"/v1/chat/completions", strings.NewReader(hello))
	req.Header.Set("Authorization", "Bearer sk-wrong-key")
	res, err := http.DefaultClient.Do(req)
	if err != nil {
		t.Fatal(err)
	}
	res.Body.Close()
	if res.StatusCode != http.StatusUnauthorized {
		t.Errorf("a wrong key: %d, want 401", res.StatusCode)
	}
	if res := h.chat(`{"model":"nope","messages":[]}`); res.status != http.StatusNotFound {
		t.Errorf("an unknown model: %d, want 404", res.status)
	}
	req, _ = http.NewRequest(http.MethodGet, h.srv.URL+"/v1/models", nil)
	req.Header.Set("Authorization", "Bearer "+projectKey)
	res, err = http.DefaultClient.Do(req)
	if err != nil {
		t.Fatal(err)
	}
	defer res.Body.Close()
	var models struct {
		Data []struct {
			ID string `json:"id"`
		} `json:"data"`
	}
	if err := json.NewDecoder(res.Body).Decode(&models); err != nil || len(models.Data) != 1 || models.Data[0].ID != "m" {
		t.Errorf("models: %+v %v, want [m]", models, err)
	}
}

func TestMetricsAreBufferedWhileThePortalIsAway(t *testing.T) {
	h := newHarness(t, threeCarriers()...)
	for range 3 {
		h.chat(hello)
	}
	rep := &Reporter{API: h.gw.Follower.API, Recorder: h.gw.Recorder, Log: h.gw.Log, Now: h.clock}
	h.portal.mu.Lock()
	h.portal.down = true
	h.portal.mu.Unlock()
	h.advance(2 * time.Minute)
	if err := rep.Report(context.Background(), h.clock()); err == nil {
		t.Fatal("a report to a portal that is away claimed success")
	}
	h.chat(hello) // a later minute, measured meanwhile
	h.portal.mu.Lock()
	h.portal.down = false
	h.portal.mu.Unlock()
	h.advance(2 * time.Minute)
	if err := rep.Report(context.Background(), h.clock()); err != nil {
		t.Fatal(err)
	}
	var requests int64
	h.portal.mu.Lock()
	for _, b := range h.portal.buckets {
		requests += b.Requests
	}
	minutes := len(h.portal.buckets)
	h.portal.mu.Unlock()
	if requests != 4 || minutes != 2 {
		t.Errorf("after the portal came back: %d requests in %d buckets, want 4 in 2 (the buffered minute and the later one)", requests, minutes)
	}
}

// TestAResponseCacheHitLeavesItsHourOutOfLearnedRates: with the response
// cache on, an exact repeat is answered by the gateway (the carrier is not
// called), and the hour that holds the hit no longer teaches the project's
// cache rates: seed 001's rule, end to end.
func TestAResponseCacheHitLeavesItsHourOutOfLearnedRates(t *testing.T) {
	specs := threeCarriers()
	specs[0].server.Cache = true
	h := newHarness(t, specs...)
	h.gw.Cache = &ResponseCache{TTL: time.Hour}
	prefix := strings.Repeat("a long shared prefix ", 300) // about 1,600 tokens each
	for i := range 25 {
		if res := h.chat(fmt.Sprintf(`{"model":"m","messages":[{"role":"user","content":"%s %d"}]}`, prefix, i)); res.status != http.StatusOK {
			t.Fatalf("status %d: %s", res.status, res.body)
		}
	}
	learned := traffic.Learn(h.gw.Recorder.Hours("p", "m", h.clock()), h.clock().Add(time.Minute))
	if _, ok := learned.HitRate["a/m"]; !ok || learned.Combined == nil {
		t.Fatalf("25 requests of 1,600 tokens taught nothing: %+v", learned)
	}
	total := func() int {
		n := 0
		for _, c := range h.chats() {
			n += c
		}
		return n
	}
	before := h.chats()["a"]
	repeat := fmt.Sprintf(`{"model":"m","messages":[{"role":"user","content":"%s %d"}]}`, prefix, 3)
	req, _ := http.NewRequest(http.MethodPost, h.srv.URL+"/v1/chat/completions", strings.NewReader(repeat))
	req.Header.Set("Authorization", "Bearer "+projectKey)
	res, err := http.DefaultClient.Do(req)
	if err != nil {
		t.Fatal(err)
	}
	res.Body.Close()
	if res.Header.Get(CacheHeader) != "hit" || h.chats()["a"] != before {
		t.Fatalf("the repeat: cache %q, carrier called %d more times; want a hit and no call", res.Header.Get(CacheHeader), h.chats()["a"]-before)
	}
	learned = traffic.Learn(h.gw.Recorder.Hours("p", "m", h.clock()), h.clock().Add(time.Minute))
	if len(learned.HitRate) != 0 || learned.Combined != nil {
		t.Errorf("the hour holding a gateway cache hit still teaches rates: %+v", learned)
	}
	// A streamed request is never answered from the cache.
	stream := strings.Replace(repeat, `"model":"m"`, `"model":"m","stream":true`, 1)
	calls := total()
	h.chat(stream)
	h.chat(stream)
	if got := total() - calls; got != 2 {
		t.Errorf("two streamed repeats called carriers %d times, want 2", got)
	}
}

func TestUsageFollowsTheMetricsContract(t *testing.T) {
	for _, test := range []struct {
		name string
		json string
		want Usage
	}{
		{"OpenAI: cached within prompt_tokens", `{"prompt_tokens":1000,"completion_tokens":50,"prompt_tokens_details":{"cached_tokens":600}}`,
			Usage{Input: 1000, Cached: 600, Output: 50}},
		{"DeepSeek: cache hits", `{"prompt_tokens":1000,"completion_tokens":50,"prompt_cache_hit_tokens":700}`,
			Usage{Input: 1000, Cached: 700, Output: 50}},
		{"Anthropic-style: reads and writes apart from the prompt tokens", `{"prompt_tokens":100,"completion_tokens":50,"cache_read_input_tokens":800,"cache_creation_input_tokens":300}`,
			Usage{Input: 1200, CacheRead: 800, CacheWrite: 300, Output: 50}},
		{"OpenRouter-style: writes within prompt_tokens", `{"prompt_tokens":1000,"completion_tokens":5,"prompt_tokens_details":{"cached_tokens":200,"cache_write_tokens":300}}`,
			Usage{Input: 1000, Cached: 200, CacheWrite: 300, Output: 5}},
		{"a carrier's slip never claims more cached than input", `{"prompt_tokens":100,"prompt_tokens_details":{"cached_tokens":900}}`,
			Usage{Input: 100, Cached: 100}},
	} {
		var u usageJSON
		if err := json.Unmarshal([]byte(test.json), &u); err != nil {
			t.Fatal(err)
		}
		if got := u.usage(); got != test.want {
			t.Errorf("%s: %+v, want %+v", test.name, got, test.want)
		}
	}
}

// TestAnalyzeMatchesNamesExactly: a name is read only as spelt, a name twice
// is refused, and a spelling of a routed field in another case is refused
// rather than read (encoding/json elected {"model":"kimi-k2.5",
// "Model":"glm-5"} as glm-5). Errors name the field in the caller's terms.
func TestAnalyzeMatchesNamesExactly(t *testing.T) {
	for _, test := range []struct {
		name, body, model, err string
	}{
		{"a case variant of model", `{"model":"kimi-k2.5","Model":"glm-5","messages":[]}`, "", `"Model": field names are case-sensitive; send "model"`},
		{"a case variant alone", `{"MODEL":"glm-5","messages":[]}`, "", `"MODEL"`},
		{"a case variant of stream", `{"model":"m","Stream":true,"messages":[]}`, "", `"Stream"`},
		{"model twice", `{"model":"kimi-k2.5","model":"glm-5","messages":[]}`, "", "model twice"},
		{"a field the gateway does not read, any case", `{"model":"m","Temperature":0.2,"messages":[]}`, "m", ""},
		{"a wrong type, named plainly", `{"model":"m","stream":"yes","messages":[]}`, "", "stream must be true or false"},
		{"a wrong type deeper", `{"model":"m","messages":[],"reasoning_effort":5}`, "", "reasoning_effort must be a string"},
		{"not an object", `["model"]`, "", "not a JSON object"},
	} {
		t.Run(test.name, func(t *testing.T) {
			a, err := Analyze([]byte(test.body), http.Header{})
			switch {
			case test.err == "" && err != nil:
				t.Fatalf("refused: %v", err)
			case test.err != "" && (err == nil || !strings.Contains(err.Error(), test.err)):
				t.Fatalf("error %v, want one saying %q", err, test.err)
			case test.err == "" && a.Model != test.model:
				t.Errorf("model %q, want %q", a.Model, test.model)
			}
			if err != nil && strings.Contains(err.Error(), "Go ") {
				t.Errorf("the message names Go types: %v", err)
			}
		})
	}
}

// TestTheConfigMatchesNamesExactly: the projects file, like chat bodies and
// the portal's API, reads names as spelt: a case variant is an unknown key,
// and a key twice is refused; declared cache rates are taken within the
// bounds the portal takes them.
func TestTheConfigMatchesNamesExactly(t *testing.T) {
	for _, test := range []struct{ name, doc, want string }{
		{"as spelt", `{"projects":[{"name":"p","apiKey":"sk-12345678"}]}`, ""},
		{"a case variant", `{"projects":[{"name":"p","ApiKey":"sk-12345678"}]}`, "ApiKey"},
		{"a key twice", `{"projects":[{"name":"p","apiKey":"sk-12345678","apiKey":"sk-87654321"}]}`, "duplicate"},
		{"declared rates", `{"projects":[{"name":"p","apiKey":"sk-12345678","cacheHitRate":0.8,"cacheOutputRatio":1000}]}`, ""},
		// The portal refuses a report declaring more (the project's minutes
		// carry it), so the gateway refuses to start with it.
		{"a declared output ratio past the portal's bound", `{"projects":[{"name":"p","apiKey":"sk-12345678","cacheOutputRatio":1001}]}`, "cacheOutputRatio"},
		{"a declared hit rate past 1", `{"projects":[{"name":"p","apiKey":"sk-12345678","cacheHitRate":1.01}]}`, "cacheHitRate"},
	} {
		_, err := ParseConfig([]byte(test.doc))
		switch {
		case test.want == "" && err != nil:
			t.Errorf("%s: %v", test.name, err)
		case test.want != "" && (err == nil || !strings.Contains(err.Error(), test.want)):
			t.Errorf("%s: %v, want an error naming %q", test.name, err, test.want)
		}
	}
}

// TestEveryAnswerHasARequestIDAndModelsAnswerAsOpenAI: x-request-id on
// every answer (the caller's own when usable, else made), and one model by
// id as OpenAI answers it, an unknown one as OpenAI's JSON 404.
func TestEveryAnswerHasARequestIDAndModelsAnswerAsOpenAI(t *testing.T) {
	h := newHarness(t, threeCarriers()...)
	get := func(path, requestID string) (*http.Response, string) {
		req, _ := http.NewRequest(http.MethodGet, h.srv.URL+path, nil)
		req.Header.Set("Authorization", "Bearer "+projectKey)
		if requestID != "" {
			req.Header.Set("X-Request-Id", requestID)
		}
		res, err := http.DefaultClient.Do(req)
		if err != nil {
			t.Fatal(err)
		}
		defer res.Body.Close()
		b, _ := io.ReadAll(res.Body)
		return res, string(b)
	}
	res, body := get("/v1/models/m", "")
	if res.StatusCode != http.StatusOK || !strings.Contains(body, `"id":"m"`) || !strings.HasPrefix(res.Header.Get("X-Request-Id"), "req_") {
		t.Errorf("one model: %d %s, request id %q", res.StatusCode, body, res.Header.Get("X-Request-Id"))
	}
	res, body = get("/v1/models/nope", "caller-id-42")
	if res.StatusCode != http.StatusNotFound || !strings.Contains(body, `"code":"model_not_found"`) || res.Header.Get("Content-Type") != "application/json" {
		t.Errorf("an unknown model: %d %s %s", res.StatusCode, res.Header.Get("Content-Type"), body)
	}
	if got := res.Header.Get("X-Request-Id"); got != "caller-id-42" {
		t.Errorf("the caller's request id came back as %q", got)
	}
	if res, _ = get("/v1/models", "bad id\twith tab"); !strings.HasPrefix(res.Header.Get("X-Request-Id"), "req_") {
		t.Errorf("an unusable caller id was echoed: %q", res.Header.Get("X-Request-Id"))
	}
	if a, b := h.chatHeader(hello), h.chatHeader(hello); a == "" || a == b {
		t.Errorf("chat answers' request ids %q and %q: want one each, different", a, b)
	}
}

// chatHeader sends a chat request and returns its answer's request id.
func (h *harness) chatHeader(body string) string {
	req, _ := http.NewRequest(http.MethodPost, h.srv.URL+"/v1/chat/completions", strings.NewReader(body))
	req.Header.Set("Authorization", "Bearer "+projectKey)
	res, err := http.DefaultClient.Do(req)
	if err != nil {
		h.t.Fatal(err)
	}
	defer res.Body.Close()
	_, _ = io.Copy(io.Discard, res.Body)
	return res.Header.Get("X-Request-Id")
}

// TestTheServingCarrierIsNamedInTheBody: a body-only client learns which
// carrier served from "provider" in the answer and in every chunk, as
// OpenRouter's clients read it; a carrier's own provider field is kept.
func TestTheServingCarrierIsNamedInTheBody(t *testing.T) {
	h := newHarness(t, threeCarriers()...)
	res := h.chat(hello)
	var answer struct {
		Provider string `json:"provider"`
		Choices  []any  `json:"choices"`
	}
	if err := json.Unmarshal([]byte(res.body), &answer); err != nil || answer.Provider != "a" || len(answer.Choices) == 0 {
		t.Errorf("non-streamed answer: provider %q (%v): %s", answer.Provider, err, res.body)
	}
	res = h.chat(`{"model":"m","stream":true,"stream_options":{"include_usage":true},"messages":[{"role":"user","content":"hello there"}]}`)
	chunks := 0
	for _, line := range strings.Split(res.body, "\n") {
		data, ok := strings.CutPrefix(line, "data: ")
		if !ok || data == "[DONE]" {
			continue
		}
		var chunk struct {
			Provider string `json:"provider"`
		}
		if err := json.Unmarshal([]byte(data), &chunk); err != nil || chunk.Provider != "a" {
			t.Errorf("chunk without the provider (%v): %s", err, data)
		}
		chunks++
	}
	if chunks < 2 {
		t.Fatalf("only %d chunks: %s", chunks, res.body)
	}
	for _, test := range []struct{ in, want string }{
		{`{"id":"x"}`, `{"provider":"a","id":"x"}`},
		{`{}`, `{"provider":"a"}`},
		{` { "id":1 }`, `{"provider":"a", "id":1 }`},
		{`[1]`, `[1]`},
	} {
		if got := string(withProvider([]byte(test.in), "a")); got != test.want || (test.in != "[1]" && !json.Valid([]byte(got))) {
			t.Errorf("withProvider(%s) = %s, want %s", test.in, got, test.want)
		}
	}
}

// TestUsageReadsAsOpenAIsAndOnlyWhenAskedFor: a DeepSeek-dialect carrier's
// cache hits reach the caller as OpenAI's prompt_tokens_details.cached_tokens
// too (what the SDKs read), and a stream carries usage only when the caller
// asked for it (the dialect puts it on the last content chunk).
func TestUsageReadsAsOpenAIsAndOnlyWhenAskedFor(t *testing.T) {
	specs := threeCarriers()[:1]
	specs[0].server.Dialect, specs[0].server.Cache = fakecarrier.DialectDeepSeek, true
	h := newHarness(t, specs...)
	long := strings.Repeat("The same long system prompt, again. ", 200)
	body := func(stream, usage bool) string {
		b, _ := json.Marshal(map[string]any{"model": "m", "stream": stream, "stream_options": map[string]bool{"include_usage": usage},
			"messages": []map[string]string{{"role": "user", "content": long}}})
		if !stream {
			b, _ = json.Marshal(map[string]any{"model": "m", "messages": []map[string]string{{"role": "user", "content": long}}})
		}
		return string(b)
	}
	h.chat(body(false, false)) // warm the carrier's cache
	type usage struct {
		PromptCacheHitTokens *int64 `json:"prompt_cache_hit_tokens"`
		PromptTokensDetails  *struct {
			CachedTokens *int64 `json:"cached_tokens"`
		} `json:"prompt_tokens_details"`
	}
	var answer struct {
		Usage usage `json:"usage"`
	}
	res := h.chat(body(false, false))
	if err := json.Unmarshal([]byte(res.body), &answer); err != nil {
		t.Fatalf("%v: %s", err, res.body)
	}
	u := answer.Usage
	if u.PromptCacheHitTokens == nil || *u.PromptCacheHitTokens == 0 || u.PromptTokensDetails == nil || u.PromptTokensDetails.CachedTokens == nil ||
		*u.PromptTokensDetails.CachedTokens != *u.PromptCacheHitTokens {
		t.Errorf("cache hits not given as cached_tokens too: %s", res.body)
	}
	for _, asked := range []bool{false, true} {
		res := h.chat(body(true, asked))
		withUsage := 0
		for _, line := range strings.Split(res.body, "\n") {
			data, ok := strings.CutPrefix(line, "data: ")
			if !ok || data == "[DONE]" {
				continue
			}
			var chunk struct {
				Usage *usage `json:"usage"`
			}
			if err := json.Unmarshal([]byte(data), &chunk); err != nil {
				t.Fatalf("a chunk is not JSON: %s", data)
			}
			if chunk.Usage != nil {
				withUsage++
				if d := chunk.Usage.PromptTokensDetails; d == nil || d.CachedTokens == nil {
					t.Errorf("the usage chunk lacks cached_tokens: %s", data)
				}
			}
		}
		if want := map[bool]int{false: 0, true: 1}[asked]; withUsage != want {
			t.Errorf("include_usage %v: %d chunks carry usage, want %d:\n%s", asked, withUsage, want, res.body)
		}
	}
}

// TestTheReportNamesEachShapesHolder: the gateway reports, per minute and
// auto shape, the listing that held it after the minute's first election
// and that election's second (here the cheapest, which every request of
// the minute went to), once per minute however many requests it routed,
// with the elections it held; a minute without requests reports none.
func TestTheReportNamesEachShapesHolder(t *testing.T) {
	h := newHarness(t, threeCarriers()...)
	seconds := []int{h.clock().Second()}
	for range 3 {
		if res := h.chat(`{"model":"m","messages":[{"role":"user","content":"hi"}]}`); res.status != http.StatusOK {
			t.Fatalf("status %d: %s", res.status, res.body)
		}
	}
	first := h.clock().Truncate(time.Minute)
	h.advance(2 * time.Minute)
	seconds = append(seconds, h.clock().Second())
	if res := h.chat(`{"model":"m","messages":[{"role":"user","content":"hi"}]}`); res.status != http.StatusOK {
		t.Fatalf("status %d: %s", res.status, res.body)
	}
	second := h.clock().Truncate(time.Minute)
	h.advance(2 * time.Minute)
	rep := &Reporter{API: h.gw.Follower.API, Recorder: h.gw.Recorder, Log: h.gw.Log, Now: h.clock, Source: "gw-1"}
	if err := rep.Report(context.Background(), h.clock()); err != nil {
		t.Fatal(err)
	}
	served := map[int64]int64{}
	h.portal.mu.Lock()
	defer h.portal.mu.Unlock()
	for _, b := range h.portal.buckets {
		served[*b.ListingId] += b.Requests
	}
	got := h.portal.holders
	if len(got) != 2 {
		t.Fatalf("%d holders reported, want one per minute with requests: %+v", len(got), got)
	}
	for i, minute := range []time.Time{first, second} {
		r := got[i]
		if !r.Minute.Equal(minute) || r.Second == nil || *r.Second != seconds[i] || r.Model != "m" || r.Workload != gatewayclient.General || r.CacheRelevant || r.Source == nil || *r.Source != "gw-1" {
			t.Errorf("holder %d: %+v, want m/general without the cache at %s and second %d from gw-1", i, r, minute, seconds[i])
		}
		if served[r.ListingId] != 4 {
			t.Errorf("holder %d names listing %d, which served %d of the 4 requests (%v)", i, r.ListingId, served[r.ListingId], served)
		}
		if want := []int64{3, 1}[i]; r.Requests == nil || *r.Requests != want {
			t.Errorf("holder %d counts %v elections, want the minute's %d", i, r.Requests, want)
		}
	}
}
