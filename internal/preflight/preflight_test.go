package preflight

import (
	"context"
	"flag"
	"net/http"
	"net/http/httptest"
	"os"
	"path/filepath"
	"strings"
	"testing"
	"time"

	"github.com/airside/airside/internal/fakecarrier"
	"github.com/airside/airside/internal/netguard"
)

var update = flag.Bool("update", false, "rewrite the golden transcripts in testdata/")

var everything = []string{"tools", "vision", "audio_input", "json_output", "json_schema", "reasoning", "reasoning_budget", "web_search"}

func startFake(t *testing.T, cfg fakecarrier.Config) Endpoint {
	t.Helper()
	if cfg.Models == nil {
		cfg.Models = []string{"kimi-k2.5"}
	}
	if cfg.APIKey == "" {
		cfg.APIKey = "sk-test-1234567890"
	}
	srv := httptest.NewServer(fakecarrier.New(cfg))
	t.Cleanup(srv.Close)
	return Endpoint{BaseURL: srv.URL + "/v1", Model: "kimi-k2.5", APIKey: cfg.APIKey}
}

func run(t *testing.T, ep Endpoint) map[string]Result {
	t.Helper()
	r := &Runner{HTTP: netguard.New(true).Client(20 * time.Second), PerProbe: 20 * time.Second}
	var running int
	results := r.Run(context.Background(), ep, func(res Result) {
		if res.State == Running {
			running++
		}
	})
	if running != len(Probes) || len(results) != len(Probes) {
		t.Fatalf("%d running reports and %d results for %d probes", running, len(results), len(Probes))
	}
	out := map[string]Result{}
	for _, res := range results {
		out[res.Probe] = res
	}
	return out
}

func TestEveryProbePassesOnAFullCarrierInEachDialect(t *testing.T) {
	for _, dialect := range []fakecarrier.Dialect{fakecarrier.DialectOpenAI, fakecarrier.DialectDeepSeek} {
		t.Run(string(dialect), func(t *testing.T) {
			ep := startFake(t, fakecarrier.Config{Capabilities: everything, Dialect: dialect, Cache: true,
				TTFT: 20 * time.Millisecond, TokensPerSecond: 400})
			results := run(t, ep)
			for _, p := range Probes {
				res := results[p.Name]
				if res.State != Passed {
					t.Errorf("%s: %s (%s; excerpt %q)", p.Name, res.State, res.Error, res.Excerpt)
				}
			}
			s := results[ProbeStreaming]
			if s.TTFT < 20*time.Millisecond || s.TokensPerSecond <= 0 {
				t.Errorf("streaming figures: ttft %v, %.1f tok/s; want ttft >= 20ms and a rate", s.TTFT, s.TokensPerSecond)
			}
			if results[ProbeCache].CachedTokens == 0 {
				t.Error("the cache probe recorded no cached tokens")
			}
		})
	}
}

func TestProbesFailForWhatACarrierLacks(t *testing.T) {
	cases := []struct {
		name   string
		cfg    fakecarrier.Config
		ep     func(Endpoint) Endpoint
		failed map[string]string // probe -> part of its error
		passed []string
	}{
		{name: "no capabilities", cfg: fakecarrier.Config{},
			failed: map[string]string{"tools": "400", "json_schema": "400", "vision": "400", "audio_input": "400",
				"web_search": "400", "reasoning": "No reasoning", "reasoning_budget": "No reasoning tokens",
				ProbeCache: "never reports a cache hit"},
			passed: []string{ProbeReachable, ProbeChat, ProbeStreaming}},
		{name: "schema broken", cfg: fakecarrier.Config{Capabilities: everything, BreakSchema: true, Cache: true},
			failed: map[string]string{"json_schema": "do not match the schema", "tools": "do not match the schema"},
			passed: []string{"json_output", "vision"}},
		{name: "budget ignored", cfg: fakecarrier.Config{Capabilities: []string{"reasoning"}},
			failed: map[string]string{"reasoning_budget": "not honoured"},
			passed: []string{"reasoning"}},
		{name: "wrong key", cfg: fakecarrier.Config{Capabilities: everything},
			ep:     func(e Endpoint) Endpoint { e.APIKey = "sk-wrong-000000000"; return e },
			failed: map[string]string{ProbeReachable: "401", ProbeChat: "not reachable", "tools": "not reachable"}},
		{name: "model not served", cfg: fakecarrier.Config{Capabilities: everything},
			ep:     func(e Endpoint) Endpoint { e.Model = "other-model"; return e },
			failed: map[string]string{ProbeReachable: "does not list the upstream model"}},
		{name: "always overloaded", cfg: fakecarrier.Config{Capabilities: everything, ErrorRate: 1},
			failed: map[string]string{ProbeChat: "your server answered", ProbeStreaming: "your server answered"},
			passed: []string{ProbeReachable}},
	}
	for _, tc := range cases {
		t.Run(tc.name, func(t *testing.T) {
			ep := startFake(t, tc.cfg)
			if tc.ep != nil {
				ep = tc.ep(ep)
			}
			results := run(t, ep)
			for probe, want := range tc.failed {
				res := results[probe]
				if res.State != Failed || !strings.Contains(res.Error, want) {
					t.Errorf("%s: %s %q, want failed with %q", probe, res.State, res.Error, want)
				}
			}
			for _, probe := range tc.passed {
				if res := results[probe]; res.State != Passed {
					t.Errorf("%s: %s %q, want passed", probe, res.State, res.Error)
				}
			}
		})
	}
}

func TestKeyIsNeverInEvidence(t *testing.T) {
	ep := startFake(t, fakecarrier.Config{Capabilities: everything})
	bad := ep
	bad.APIKey = "sk-secret-should-not-leak-42"
	for _, e := range []Endpoint{ep, bad} {
		for _, res := range run(t, e) {
			if strings.Contains(res.Excerpt+res.Error, e.APIKey) {
				t.Fatalf("%s evidence shows the key: %q %q", res.Probe, res.Excerpt, res.Error)
			}
		}
	}
}

// TestDialectTranscripts replays recorded answers of each dialect (the
// golden files in testdata/, written by the fake carrier with -update) to
// the probes: usage in the last chunk or the finishing one, cached tokens in
// either spelling, reasoning in either field, tool calls split in pieces.
func TestDialectTranscripts(t *testing.T) {
	for _, dialect := range []fakecarrier.Dialect{fakecarrier.DialectOpenAI, fakecarrier.DialectDeepSeek} {
		for _, probe := range []string{ProbeStreaming, "tools", "reasoning", ProbeCache} {
			name := string(dialect) + "_" + probe
			path := filepath.Join("testdata", name+".txt")
			var recorded []string
			if *update {
				fake := fakecarrier.New(fakecarrier.Config{Models: []string{"kimi-k2.5"}, Capabilities: everything, Dialect: dialect, Cache: true})
				rec := httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
					cw := &captureWriter{ResponseWriter: w}
					fake.ServeHTTP(cw, r)
					recorded = append(recorded, cw.buf.String())
				}))
				runOne(t, rec.URL+"/v1", probe)
				rec.Close()
				if err := os.WriteFile(path, []byte(strings.Join(recorded, "\n=====\n")), 0o644); err != nil {
					t.Fatal(err)
				}
			}
			golden, err := os.ReadFile(path)
			if err != nil {
				t.Fatalf("%s: %v (run go test -update once)", path, err)
			}
			answers := strings.Split(string(golden), "\n=====\n")
			n := 0
			replay := httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
				body := answers[min(n, len(answers)-1)]
				n++
				if strings.HasPrefix(body, "data: ") {
					w.Header().Set("Content-Type", "text/event-stream")
				} else {
					w.Header().Set("Content-Type", "application/json")
				}
				_, _ = w.Write([]byte(body))
			}))
			res := runOne(t, replay.URL+"/v1", probe)
			replay.Close()
			if res.State != Passed {
				t.Errorf("%s: %s %q", name, res.State, res.Error)
			}
		}
	}
}

func runOne(t *testing.T, base, name string) Result {
	t.Helper()
	probe, ok := Lookup(name)
	if !ok {
		t.Fatalf("no probe %s", name)
	}
	ep := Endpoint{BaseURL: base, Model: "kimi-k2.5"}
	p := newProber(ep, netguard.New(true).Client(10*time.Second), time.Now)
	return probe.run(context.Background(), p)
}

type captureWriter struct {
	http.ResponseWriter
	buf strings.Builder
}

func (c *captureWriter) Write(b []byte) (int, error) {
	c.buf.Write(b)
	return c.ResponseWriter.Write(b)
}

func (c *captureWriter) Flush() {
	if f, ok := c.ResponseWriter.(http.Flusher); ok {
		f.Flush()
	}
}

func TestProbeTableIsComplete(t *testing.T) {
	seen := map[string]bool{}
	for _, p := range Probes {
		if p.Title == "" || p.Request == "" || p.Fix == "" || p.run == nil {
			t.Errorf("probe %s lacks a title, request, fix or run", p.Name)
		}
		if seen[p.Name] {
			t.Errorf("probe %s twice", p.Name)
		}
		seen[p.Name] = true
	}
	for _, c := range everything {
		if _, ok := ForCapability(c); !ok {
			t.Errorf("no probe earns %s", c)
		}
	}
}

// TestEachProbeCatchesItsPretender runs the probes against an honest server
// with every capability and against servers that pretend (claiming a
// capability they do not use, as OpenAI-compatible mocks do): each
// pretender fails exactly the probes its pretence concerns, with evidence
// in plain words (the status and a body excerpt), never a Go type name.
func TestEachProbeCatchesItsPretender(t *testing.T) {
	honest := run(t, startFake(t, fakecarrier.Config{Capabilities: everything, Cache: true}))
	for _, p := range Probes {
		if honest[p.Name].State != Passed {
			t.Errorf("honest server, %s: %s (%s)", p.Name, honest[p.Name].State, honest[p.Name].Error)
		}
	}
	for _, probe := range []string{"vision", "audio_input"} {
		if !strings.Contains(honest[probe].Excerpt, "prompt tokens with it") {
			t.Errorf("the %s probe's evidence does not show the token check: %q", probe, honest[probe].Excerpt)
		}
	}
	for _, test := range []struct {
		pretend string
		fails   map[string]string // probe -> words its error must hold
	}{
		{fakecarrier.PretendIgnoreParts, map[string]string{"vision": "not looked at", "audio_input": "not heard"}},
		{fakecarrier.PretendURLsInProse, map[string]string{"web_search": "no url_citation"}},
		{fakecarrier.PretendJSONByPrompt, map[string]string{"json_output": "exactly one JSON object"}},
		{fakecarrier.PretendStreamWithoutUsage, map[string]string{ProbeStreaming: "No usage"}},
		{fakecarrier.PretendEchoReasoning, map[string]string{"reasoning": "the answer repeated"}},
	} {
		t.Run(test.pretend, func(t *testing.T) {
			// The pretender claims the capability but does not have it.
			caps := []string{"tools", "json_schema", "reasoning", "reasoning_budget"}
			if test.pretend == fakecarrier.PretendEchoReasoning {
				caps = []string{"tools", "json_schema"}
			}
			results := run(t, startFake(t, fakecarrier.Config{Capabilities: caps, Cache: true, Pretend: []string{test.pretend}}))
			for probe, words := range test.fails {
				res := results[probe]
				if res.State != Failed || !strings.Contains(res.Error, words) {
					t.Errorf("%s: %s %q, want failed saying %q", probe, res.State, res.Error, words)
				}
			}
			for _, probe := range []string{ProbeReachable, ProbeChat, "tools", "json_schema"} {
				if _, pretended := test.fails[probe]; !pretended && results[probe].State != Passed {
					t.Errorf("%s should pass on this server: %s", probe, results[probe].Error)
				}
			}
		})
	}
}

// TestErrorsInAnotherShapeAreShownPlainly: a server whose error bodies are
// not OpenAI's (as TGI and several self-hosted stacks answer) fails with
// its status, content type and body excerpt, keys redacted, and no Go type
// name.
func TestErrorsInAnotherShapeAreShownPlainly(t *testing.T) {
	ep := startFake(t, fakecarrier.Config{Pretend: []string{fakecarrier.PretendOddErrors}})
	ep.Model = "no-such-model sk-secret-abcdef123456"
	p := newProber(ep, netguard.New(true).Client(10*time.Second), time.Now)
	res := probeChat(context.Background(), p)
	for _, want := range []string{"your server answered 404 (application/json)", "SyntaxError", "[redacted]"} {
		if !strings.Contains(res.Error+res.Excerpt, want) {
			t.Errorf("evidence %q / %q lacks %q", res.Error, res.Excerpt, want)
		}
	}
	for _, bad := range []string{"unmarshal", "Go value", "apierror", "sk-secret-abcdef123456"} {
		if strings.Contains(res.Error+res.Excerpt, bad) {
			t.Errorf("evidence %q / %q shows %q", res.Error, res.Excerpt, bad)
		}
	}
	if res.Status != 404 {
		t.Errorf("status %d, want 404", res.Status)
	}
}

// TestATimeoutSaysWhichPhase: a server that accepts the connection and
// never answers fails with the first-byte phase named.
func TestATimeoutSaysWhichPhase(t *testing.T) {
	ep := startFake(t, fakecarrier.Config{TTFT: 2 * time.Second}) // the server is closed after it answers
	p := newProber(ep, netguard.New(true).Client(time.Minute), time.Now)
	ctx, cancel := context.WithTimeout(context.Background(), 300*time.Millisecond)
	defer cancel()
	if res := probeChat(ctx, p); !strings.Contains(res.Error, "first-byte phase") {
		t.Errorf("a server that never answers: %q, want the first-byte phase named", res.Error)
	}
}
