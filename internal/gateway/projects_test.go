package gateway

import (
	"context"
	"fmt"
	"net/http"
	"strings"
	"testing"
	"time"

	"github.com/airside/airside/internal/catalogue"
)

// TestProjectPseudonyms: a project reads the same on every listing and
// under every configuration with the same keys, differently for two
// projects, and never as an organisation's pseudonym.
func TestProjectPseudonyms(t *testing.T) {
	cfg := &Config{Projects: []Project{{Name: "p", APIKey: projectKey, Organisation: "p"}}}
	labels := NewOrgLabels(cfg)
	p := labels.Project("p")
	if !strings.HasPrefix(p, "prj-") || len(p) != 16 || !catalogue.ValidProjectLabel(p) {
		t.Errorf("pseudonym %q: want prj- and 12 hex digits, as the portal takes it", p)
	}
	if again := NewOrgLabels(cfg).Project("p"); again != p {
		t.Errorf("the pseudonym moved from %q to %q with the same configuration", p, again)
	}
	if other := labels.Project("q"); other == p {
		t.Error("two projects share a pseudonym")
	}
	if org := labels.Label("p", Route{ID: "a/m"}); strings.TrimPrefix(org, "org-") == strings.TrimPrefix(p, "prj-")[:8] {
		t.Errorf("the project's pseudonym %q repeats its organisation's %q", p, org)
	}
	if keyed := NewOrgLabels(&Config{Projects: cfg.Projects, OrgPseudonymKey: "a key of sixteen+"}); keyed.Project("p") == p {
		t.Error("a configured key makes the same pseudonym as the derived one")
	}
	if none := NewOrgLabels(&Config{Projects: cfg.Projects, Organisations: OrgsNone}); none.Project("p") != p {
		t.Error("the organisation policy changed the project's pseudonym (the portal alone reads it)")
	}
}

// TestTheReportCountsEachProject: each API project's answers on a listing
// are reported per minute under its pseudonym with their tokens (what the
// gateway learns the project's rates from), its requests are named in the
// demand rows by the same pseudonym, a response-cache hit is counted on
// the project that had it, and the cache rates a project declares come
// with its minutes (the projection elects its requests on them).
func TestTheReportCountsEachProject(t *testing.T) {
	h := newHarness(t, threeCarriers()...)
	hitRate, outputRatio := 0.75, 3.0
	h.gw.Config.Projects = append(h.gw.Config.Projects, Project{Name: "q", APIKey: "sk-test-project-q", Organisation: "org",
		CacheHitRate: &hitRate, CacheOutputRatio: &outputRatio})
	h.gw.Cache = &ResponseCache{TTL: time.Hour}
	send := func(key, body string) {
		t.Helper()
		if res := h.chatAs(key, body); res.status != http.StatusOK {
			t.Fatalf("status %d: %s", res.status, res.body)
		}
	}
	for i := range 3 {
		send(projectKey, fmt.Sprintf(`{"model":"m","messages":[{"role":"user","content":"hello %d"}]}`, i))
	}
	send("sk-test-project-q", `{"model":"m","messages":[{"role":"user","content":"hi from q"}]}`)
	send("sk-test-project-q", `{"model":"m","messages":[{"role":"user","content":"hi from q"}]}`) // the response cache answers it
	h.advance(2 * time.Minute)
	rep := &Reporter{API: h.gw.Follower.API, Recorder: h.gw.Recorder, Log: h.gw.Log, Now: h.clock, Source: "gw-1", ProjectLabel: h.gw.ProjectLabel,
		DeclaredRates: h.gw.DeclaredRates}
	if err := rep.Report(context.Background(), h.clock()); err != nil {
		t.Fatal(err)
	}
	h.portal.mu.Lock()
	defer h.portal.mu.Unlock()
	p, q := h.gw.ProjectLabel("p"), h.gw.ProjectLabel("q")
	got := map[string][3]int64{} // answers, response-cache hits, output tokens
	for _, m := range h.portal.projects {
		if m.Source == nil || *m.Source != "gw-1" || m.Minute.IsZero() {
			t.Errorf("row %+v: want the source and a minute", m)
		}
		switch declared := m.CacheHitRate != nil && *m.CacheHitRate == hitRate && m.CacheOutputRatio != nil && *m.CacheOutputRatio == outputRatio; {
		case m.Project == q && !declared:
			t.Errorf("q's row declares %v/%v, want the configured %v/%v", m.CacheHitRate, m.CacheOutputRatio, hitRate, outputRatio)
		case m.Project != q && (m.CacheHitRate != nil || m.CacheOutputRatio != nil):
			t.Errorf("%s's row declares %v/%v, want none (its configuration declares none)", m.Project, m.CacheHitRate, m.CacheOutputRatio)
		}
		g := got[m.Project]
		g[0] += m.Answers
		if m.ResponseCacheHits != nil {
			g[1] += *m.ResponseCacheHits
		}
		g[2] += m.OutputTokens
		got[m.Project] = g
	}
	if got[p][0] != 3 || got[p][1] != 0 || got[p][2] == 0 {
		t.Errorf("project p: %v (answers, cache hits, output tokens), want its 3 answers with their tokens", got[p])
	}
	if got[q][0] != 1 || got[q][1] != 1 {
		t.Errorf("project q: %v, want 1 answer and 1 response-cache hit", got[q])
	}
	if len(got) != 2 {
		t.Errorf("rows of %d projects, want 2: %v", len(got), got)
	}
	asked := map[string]int64{}
	for _, d := range h.portal.demand {
		if d.Asked != nil {
			for k, n := range *d.Asked {
				asked[k] += n
			}
		}
	}
	if asked[catalogue.ProjectKey(p, false)] != 3 || asked[catalogue.ProjectKey(q, false)] != 2 {
		t.Errorf("demand's project keys %v: want p's 3 requests and q's 2 under their pseudonyms", asked)
	}
}

// TestADemandRowNamesSoManyProjects: a minute's row names at most
// catalogue.MaxProjectKeys projects (the portal's bound), the rest counted
// in its requests alone.
func TestADemandRowNamesSoManyProjects(t *testing.T) {
	r := NewRecorder()
	at := time.Date(2026, 12, 2, 10, 0, 0, 0, time.UTC)
	for i := range catalogue.MaxProjectKeys + 3 {
		r.Demanded("m", 0, RequestKind{}, 100, []string{catalogue.ProjectKey("prj-"+strings.Repeat("a", i+1), false)}, at)
	}
	rows := r.TakeClosedDemand(at.Add(time.Minute))
	if len(rows) != 1 {
		t.Fatalf("%d rows, want 1", len(rows))
	}
	if n := len(rows[0].Asked); n != catalogue.MaxProjectKeys || rows[0].Requests != catalogue.MaxProjectKeys+3 {
		t.Errorf("%d project keys of %d requests, want %d keys and every request", n, rows[0].Requests, catalogue.MaxProjectKeys)
	}
}
