package preview

import (
	"strings"
	"testing"

	"github.com/airside/airside/internal/catalogue"
	"github.com/airside/airside/internal/fare"
)

func TestUnservedNamesWhatKeepsRequestsAway(t *testing.T) {
	i := func(v int64) *int64 { return &v }
	no := false
	sums := catalogue.AskedSums{Requests: 1000, Asked: map[string]int64{
		"zdr": 310, "data_collection:deny": 400, "quantizations:bf16,fp8": 120, "regions:DE,FR": 90,
		"context_over:131072": 80, "context_over:262144": 10, "max_output_over:16384": 5,
	}}
	for _, test := range []struct {
		name   string
		market fare.Market
		want   []string // substrings, in order of the lines
	}{
		{"keeps prompts 30 days, int4, US, 128k", fare.Market{RetentionDays: i(30), TrainsOnPrompts: &no, Quantization: "int4",
			Regions: []string{"US"}, ContextLength: i(131072), MaxOutputTokens: i(16384)},
			[]string{"31 % asked for zero data retention; this listing: prompts kept 30 days", "12 % asked for bf16 or fp8 only; this listing is int4",
				"9 % must stay in DE or FR; this listing is served from US", "8 % needed more than 131,072 tokens", "under 1 % asked for more than 16,384 output"}},
		{"undeclared: denies too", fare.Market{}, []string{"40 % denied data collection", "31 % asked for zero data retention", "12 % asked for bf16 or fp8 only; this listing is not declared",
			"9 % must stay in DE or FR; this listing declares no region"}},
		{"ZDR fp8 in DE with 256k: nothing kept away but the longest", fare.Market{RetentionDays: i(0), TrainsOnPrompts: &no, Quantization: "fp8",
			Regions: []string{"DE"}, ContextLength: i(262144)}, []string{"1 % needed more than 262,144"}},
	} {
		t.Run(test.name, func(t *testing.T) {
			lines := UnservedBy(&test.market, sums)
			if len(lines) != len(test.want) {
				t.Fatalf("%d lines, want %d: %+v", len(lines), len(test.want), lines)
			}
			for k, w := range test.want {
				if !strings.Contains(lines[k].Why, w) || lines[k].Fix == "" {
					t.Errorf("line %d %q (fix %q), want %q", k, lines[k].Why, lines[k].Fix, w)
				}
			}
		})
	}
	if UnservedBy(&fare.Market{}, catalogue.AskedSums{}) != nil {
		t.Error("lines without demand")
	}
	// The requests kept away: the largest key failed, a floor of their union.
	if n := UnservableRequests(&fare.Market{}, sums); n != 400 {
		t.Errorf("an undeclared listing keeps %d requests away, want 400 (data collection denied)", n)
	}
	zdr := fare.Market{RetentionDays: i(0), TrainsOnPrompts: &no, Quantization: "fp8", Regions: []string{"DE"}, ContextLength: i(1 << 21)}
	if n := UnservableRequests(&zdr, sums); n != 0 {
		t.Errorf("a listing that meets every preference keeps %d away", n)
	}
}
