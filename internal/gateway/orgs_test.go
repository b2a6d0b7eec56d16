package gateway

import (
	"context"
	"net/http"
	"strings"
	"testing"
	"time"
)

func TestOrgLabels(t *testing.T) {
	cfg := &Config{Projects: []Project{{Name: "p", APIKey: projectKey, Organisation: "Acme Corp"}}}
	nebula, orbit := Route{ID: "nebula/m"}, Route{ID: "orbit/m"}
	labels := NewOrgLabels(cfg)
	a, b := labels.Label("Acme Corp", nebula), labels.Label("Acme Corp", orbit)
	if !strings.HasPrefix(a, "org-") || len(a) != 12 || a == b {
		t.Errorf("pseudonyms %q (nebula) and %q (orbit): want org- and 8 hex digits, different per carrier", a, b)
	}
	if again := NewOrgLabels(cfg).Label("Acme Corp", nebula); again != a {
		t.Errorf("the pseudonym moved from %q to %q with the same configuration", a, again)
	}
	if other := labels.Label("Globex", nebula); other == a {
		t.Error("two organisations share a pseudonym")
	}
	keyed := NewOrgLabels(&Config{Projects: cfg.Projects, OrgPseudonymKey: "a key of sixteen+"})
	if keyed.Label("Acme Corp", nebula) == a {
		t.Error("a configured key makes the same pseudonyms as the derived one")
	}
	named := NewOrgLabels(&Config{Projects: cfg.Projects, Organisations: OrgsName})
	if got := named.Label("Acme Corp <legal>", nebula); got != "Acme Corp -legal-" {
		t.Errorf("a name as sent: %q", got)
	}
	if got := NewOrgLabels(&Config{Projects: cfg.Projects, Organisations: OrgsNone}).Label("Acme Corp", nebula); got != "" {
		t.Errorf("policy none sent %q", got)
	}
	if err := (&Config{Projects: cfg.Projects, Organisations: "all"}).Validate(); err == nil {
		t.Error("an unknown organisations policy was accepted")
	}
}

// TestTheReportCountsEachOrganisation: each organisation's answers on a
// listing are reported per minute under its pseudonym, with its tokens.
func TestTheReportCountsEachOrganisation(t *testing.T) {
	h := newHarness(t, threeCarriers()...)
	for range 3 {
		if res := h.chat(`{"model":"m","messages":[{"role":"user","content":"hi"}]}`); res.status != http.StatusOK {
			t.Fatalf("status %d: %s", res.status, res.body)
		}
	}
	h.advance(2 * time.Minute)
	rep := &Reporter{API: h.gw.Follower.API, Recorder: h.gw.Recorder, Log: h.gw.Log, Now: h.clock, Source: "gw-1"}
	if err := rep.Report(context.Background(), h.clock()); err != nil {
		t.Fatal(err)
	}
	h.portal.mu.Lock()
	defer h.portal.mu.Unlock()
	if len(h.portal.orgs) != 1 {
		t.Fatalf("organisation rows %+v, want one (one organisation, one listing, one minute)", h.portal.orgs)
	}
	o := h.portal.orgs[0]
	var served int64
	for _, b := range h.portal.buckets {
		if *b.ListingId == o.ListingId {
			served += b.Requests
		}
	}
	route := Route{ID: h.portal.cat.Listings[o.ListingId-1].Id}
	if o.Organisation != h.gw.orgLabels().Label("org", route) || o.Requests != 3 || served != 3 || o.OutputTokens == nil || *o.OutputTokens == 0 ||
		o.Source == nil || *o.Source != "gw-1" {
		t.Errorf("row %+v: want org's pseudonym with the 3 requests its listing served and their tokens", o)
	}
}
