package catalogue

import (
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
		"max_output_over:4096", "max_output_over:8192", "max_output_over:16384", "max_output_over:32768"}
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
	for _, bad := range []string{"zdr:yes", "quantizations:q4", "regions:Germany", "context_over:100000", "max_output_over:x", "order:orbit", "policy:election"} {
		if _, ok := ParseAsked(bad); ok {
			t.Errorf("%s read as a key", bad)
		}
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
