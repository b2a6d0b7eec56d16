package catalogue

import (
	"fmt"
	"slices"
	"strings"
	"testing"
	"time"

	"github.com/airside/airside/internal/election"
)

func TestAskedKeysReadBack(t *testing.T) {
	req := election.Request{PromptTokens: 100_000, MaxTokens: 40_000, Regions: []string{"FR", "DE", "FR"},
		Provider: &election.Provider{ZDR: true, DenyDataCollection: true,
			Quantizations: election.QuantizationSet(0).With(election.QuantFP8).With(election.QuantBF16)}}
	keys := AskedKeys(&req)
	want := []string{"zdr", "data_collection:deny", "quantizations:bf16,fp8", "regions:DE,FR",
		"context_over:8192", "context_over:16384", "context_over:32768", "context_over:65536", "context_over:131072",
		"max_output_over:4096", "max_output_over:8192", "max_output_over:16384", "max_output_over:32768",
		"prefs:zdr|data_collection:deny|quantizations:bf16,fp8|regions:DE,FR"}
	if !slices.Equal(keys, want) {
		t.Errorf("keys %v\nwant %v", keys, want)
	}
	for _, k := range keys {
		if _, ok := ParseAsked(k); !ok {
			t.Errorf("%s does not read back", k)
		}
	}
	if keys := AskedKeys(&election.Request{PromptTokens: 10}); len(keys) != 0 {
		t.Errorf("a plain small request asked %v", keys)
	}
	if a, ok := ParseAsked(AskedSharePolicy); !ok || !a.SharePolicy || a.ZDR || a.Regions != nil {
		t.Errorf("%s reads as %+v (%v)", AskedSharePolicy, a, ok)
	}
	for _, bad := range []string{"zdr:yes", "quantizations:q4", "regions:Germany", "context_over:100000", "max_output_over:x", "order:orbit", "policy:election",
		"prefs:", "prefs:zdr|zdr", "prefs:order:Orbit", "prefs:only:", "prefs:policy:share", "prefs:context_over:8192", "prefs:regions:de"} {
		if _, ok := ParseAsked(bad); ok {
			t.Errorf("%s read as a key", bad)
		}
	}
}

// TestASetOfPreferencesReadsBackAsTheBallotsFilters: the prefs: key
// carries every preference that narrows or orders a request's ballot,
// together, and reads back as the provider object and residency the
// projection elects the set's requests with.
func TestASetOfPreferencesReadsBackAsTheBallotsFilters(t *testing.T) {
	req := election.Request{Regions: []string{"US", "DE"}, Provider: &election.Provider{ZDR: true,
		Only: []string{"orbit", "fathom/kimi-k2.5"}, Ignore: []string{"quarry"}, Order: []string{"orbit", "fathom"},
		Quantizations: election.QuantizationSet(0).With(election.QuantFP8), MaxPrice: &election.MaxPrice{}}}
	keys := AskedKeys(&req)
	set := keys[len(keys)-1]
	if want := "prefs:zdr|quantizations:fp8|regions:DE,US|only:fathom/kimi-k2.5,orbit|ignore:quarry|order:orbit,fathom"; set != want {
		t.Fatalf("the set's key %q, want %q", set, want)
	}
	a, ok := ParseAsked(set)
	if !ok || a.Preferences == nil || a.ZDR || a.Regions != nil {
		t.Fatalf("%s reads as %+v (%v): want the set alone", set, a, ok)
	}
	got := a.Preferences
	if !got.Provider.ZDR || got.Provider.DenyDataCollection || !got.Provider.Quantizations.Has(election.QuantFP8) ||
		!slices.Equal(got.Provider.Only, []string{"fathom/kimi-k2.5", "orbit"}) || !slices.Equal(got.Provider.Ignore, []string{"quarry"}) ||
		!slices.Equal(got.Provider.Order, []string{"orbit", "fathom"}) || !slices.Equal(got.Regions, []string{"DE", "US"}) {
		t.Errorf("read back as %+v", *got)
	}
	if keys := AskedKeys(&election.Request{Provider: &election.Provider{MaxPrice: &election.MaxPrice{}}}); len(keys) != 0 {
		t.Errorf("a max_price alone asked %v (the projection does not replay it)", keys)
	}
}

func TestDemandAskedIsValidated(t *testing.T) {
	now := time.Date(2026, 12, 4, 12, 0, 0, 0, time.UTC)
	d := Demand{Model: "m", Workload: "general", Minute: now.Truncate(time.Minute), Requests: 10,
		Asked: map[string]int64{"zdr": 3, "regions:DE": 10}}
	if errs := d.Validate(now); len(errs) != 0 {
		t.Fatalf("a good row refused: %v", errs)
	}
	for asked, word := range map[string]string{"zdr=11": "between 0 and requests", "nope=1": "not a known key"} {
		k, _, _ := strings.Cut(asked, "=")
		d.Asked = map[string]int64{k: 11}
		if k == "nope" {
			d.Asked = map[string]int64{k: 1}
		}
		if msg := d.Validate(now)["asked"]; !strings.Contains(msg, word) {
			t.Errorf("%s: %q, want %q", asked, msg, word)
		}
	}
}

// TestProjectKeysReadBack: a project: key reads back as the project's
// pseudonym, its large requests apart; a row names at most MaxProjectKeys.
func TestProjectKeysReadBack(t *testing.T) {
	for _, large := range []bool{false, true} {
		a, ok := ParseAsked(ProjectKey("prj-3f9a2c1b04d2", large))
		if !ok || a.Project != "prj-3f9a2c1b04d2" || a.ProjectLarge != large || a.ZDR || a.Preferences != nil {
			t.Errorf("large %v: read as %+v (%v)", large, a, ok)
		}
		if !IsProjectKey(ProjectKey("prj-x", large)) || IsPreferenceSet(ProjectKey("prj-x", large)) {
			t.Errorf("large %v: the key is not told apart", large)
		}
	}
	for _, bad := range []string{"project:", "project:Acme Corp", "project:prj-a|small", "project:-a", "project:prj-a|large|large"} {
		if _, ok := ParseAsked(bad); ok {
			t.Errorf("%s read as a key", bad)
		}
	}
	now := time.Date(2026, 12, 4, 12, 0, 0, 0, time.UTC)
	d := Demand{Model: "m", Workload: "general", Minute: now.Truncate(time.Minute), Requests: 100, Asked: map[string]int64{}}
	for i := range MaxProjectKeys {
		d.Asked[ProjectKey(fmt.Sprintf("prj-%02d", i), false)] = 1
	}
	if errs := d.Validate(now); len(errs) != 0 {
		t.Fatalf("%d project keys refused: %v", MaxProjectKeys, errs)
	}
	d.Asked[ProjectKey("prj-one-more", false)] = 1
	if msg := d.Validate(now)["asked"]; !strings.Contains(msg, "project: keys") {
		t.Errorf("%d project keys: %q, want them refused", MaxProjectKeys+1, msg)
	}
}
