package election_test

import (
	"slices"
	"strings"
	"testing"

	"github.com/airside/airside/internal/election"
)

// marketBallot is three listings of one model: orbit (fp8, ZDR, DE), atlas
// (bf16, keeps 30 days, US) and nova (undeclared), cheapest last.
const marketBallot = `"candidates":[
 {"id":"orbit/kimi","fare":{"inputPrice":"0.60","outputPrice":"2.40","quantization":"fp8","retentionDays":0,"trainsOnPrompts":false,"regions":["DE"]}},
 {"id":"atlas/kimi","fare":{"inputPrice":"0.50","outputPrice":"2.00","quantization":"bf16","retentionDays":30,"trainsOnPrompts":false,"regions":["US"]}},
 {"id":"nova/kimi","fare":{"inputPrice":"0.40","outputPrice":"1.60"}}]`

func TestProviderPreferences(t *testing.T) {
	for _, test := range []struct {
		name       string
		request    string
		wantOrder  []string
		wantPinned bool
		// wantExcluded maps a listing to its reasons.
		wantExcluded map[string]string
	}{
		{"no preference: by price", `{}`, []string{"nova/kimi", "atlas/kimi", "orbit/kimi"}, false, nil},
		{"order first, then the rest by rank", `{"provider":{"order":["orbit"]}}`,
			[]string{"orbit/kimi", "nova/kimi", "atlas/kimi"}, false, nil},
		{"order by full id and slug", `{"provider":{"order":["atlas/kimi","orbit"]}}`,
			[]string{"atlas/kimi", "orbit/kimi", "nova/kimi"}, false, nil},
		{"order without fallbacks leaves one: pinned", `{"provider":{"order":["orbit"],"allow_fallbacks":false}}`,
			[]string{"orbit/kimi"}, true, nil},
		{"order naming no listing falls back", `{"provider":{"order":["zeta"]}}`,
			[]string{"nova/kimi", "atlas/kimi", "orbit/kimi"}, false, nil},
		{"order naming no listing without fallbacks: no one", `{"provider":{"order":["zeta"],"allow_fallbacks":false}}`,
			nil, false, nil},
		{"only", `{"provider":{"only":["orbit","atlas/kimi"]}}`, []string{"atlas/kimi", "orbit/kimi"}, false,
			map[string]string{"nova/kimi": "preference:only"}},
		{"ignore", `{"provider":{"ignore":["nova"]}}`, []string{"atlas/kimi", "orbit/kimi"}, false,
			map[string]string{"nova/kimi": "preference:ignore"}},
		{"quantization: undeclared is unknown", `{"provider":{"quantizations":["fp8","unknown"]}}`, []string{"nova/kimi", "orbit/kimi"}, false,
			map[string]string{"atlas/kimi": "preference:quantization"}},
		{"deny data collection: undeclared trains", `{"provider":{"data_collection":"deny"}}`, []string{"atlas/kimi", "orbit/kimi"}, false,
			map[string]string{"nova/kimi": "preference:data_collection"}},
		{"zdr leaves one: pinned", `{"provider":{"zdr":true}}`, []string{"orbit/kimi"}, true,
			map[string]string{"atlas/kimi": "preference:zdr", "nova/kimi": "preference:zdr"}},
		{"residency", `{"regions":["US","FR"]}`, []string{"atlas/kimi"}, true,
			map[string]string{"orbit/kimi": "region", "nova/kimi": "region"}},
		{"max price equal to the limit passes", `{"provider":{"max_price":{"prompt":"0.50"}}}`, []string{"nova/kimi", "atlas/kimi"}, false,
			map[string]string{"orbit/kimi": "preference:max_price"}},
		{"context: prompt plus max tokens, the limit fits", `{"promptTokens":1000,"maxTokens":999}`,
			[]string{"nova/kimi", "atlas/kimi", "orbit/kimi"}, false, nil},
		{"ignore and only together", `{"provider":{"only":["nova"],"ignore":["nova"]}}`, nil, false,
			map[string]string{"nova/kimi": "preference:ignore", "orbit/kimi": "preference:only", "atlas/kimi": "preference:only"}},
	} {
		t.Run(test.name, func(t *testing.T) {
			in := `{"request":` + strings.Replace(test.request, "{", `{"model":"kimi",`, 1) + `,` + marketBallot + `}`
			in = strings.Replace(in, `"kimi",}`, `"kimi"}`, 1)
			b, err := election.DecodeBallot(strings.NewReader(in))
			if err != nil {
				t.Fatal(err)
			}
			res := election.Elect(b)
			var order []string
			for _, i := range res.Order {
				order = append(order, res.Candidates[i].ID)
			}
			if !slices.Equal(order, test.wantOrder) {
				t.Errorf("order %v, want %v", order, test.wantOrder)
			}
			if res.Pinned != test.wantPinned {
				t.Errorf("pinned %v, want %v", res.Pinned, test.wantPinned)
			}
			if want := ""; len(test.wantOrder) == 0 && res.WinnerID() != want {
				t.Errorf("winner %q, want none", res.WinnerID())
			} else if len(test.wantOrder) > 0 && res.WinnerID() != test.wantOrder[0] {
				t.Errorf("winner %q, want %q", res.WinnerID(), test.wantOrder[0])
			}
			for _, o := range res.Candidates {
				got := strings.Join(o.Excluded.Reasons(), ",")
				if got != test.wantExcluded[o.ID] {
					t.Errorf("%s excluded %q, want %q", o.ID, got, test.wantExcluded[o.ID])
				}
			}
			// The gateway's two winner-only paths agree.
			var quick election.Result
			election.ElectWinnerInto(b, &quick)
			if quick.Winner != res.Winner {
				t.Errorf("winner-only path: %d, explaining path %d", quick.Winner, res.Winner)
			}
			if w, _ := election.Compile(b).Winner(&b.Request, nil); w != res.Winner {
				t.Errorf("compiled path: %d, explaining path %d", w, res.Winner)
			}
		})
	}
}

func TestFeesResolveWithTheTokenPrices(t *testing.T) {
	// A fee in a tier and in the peak block overrides the base fee like a
	// token price; the fee spreads over the prompt (1,000 when none).
	const fare = `{"inputPrice":"1","outputPrice":"1","requestPrice":"0.001","imagePrice":"0.01",
	 "tiers":[{"aboveTokens":10000,"requestPrice":"0.004"}],
	 "timeBased":{"peakHoursUtc":[[8,18]],"peak":{"imagePrice":"0.02"},"offPeak":{}}}`
	for _, test := range []struct {
		name                   string
		request                string
		wantRequest, wantImage float64
		wantFee                float64
		// wantTokens is the token price without fees: (1 + 1) / 2, or
		// (0.1 + 0.9 + 0.2) / 2 for a cache-relevant prompt (h 0.1, r 0.2).
		wantTokens float64
	}{
		{"base, no prompt: spread over 1,000", `{"images":1}`, 0.001, 0.01, (0.001 + 0.01) * 1e6 / 2000, 1},
		{"tier", `{"promptTokens":20000}`, 0.004, 0.01, 0.004 * 1e6 / 40000, 0.6},
		{"peak image fee", `{"promptTokens":2000,"images":3,"at":"2026-12-01T09:00:00Z"}`, 0.001, 0.02, (0.001 + 3*0.02) * 1e6 / 4000, 1},
		{"off-peak keeps the base", `{"promptTokens":2000,"images":3,"at":"2026-12-01T20:00:00Z"}`, 0.001, 0.01, (0.001 + 3*0.01) * 1e6 / 4000, 1},
	} {
		t.Run(test.name, func(t *testing.T) {
			b, err := election.DecodeBallot(strings.NewReader(`{"request":` + test.request + `,"candidates":[{"id":"a","fare":` + fare + `}]}`))
			if err != nil {
				t.Fatal(err)
			}
			res := election.Elect(b)
			o := res.Candidates[0]
			if o.Fees.Request != test.wantRequest || o.Fees.Image != test.wantImage {
				t.Errorf("fees %v / %v, want %v / %v", o.Fees.Request, o.Fees.Image, test.wantRequest, test.wantImage)
			}
			if diff := o.FeePrice - test.wantFee; diff > 1e-12 || diff < -1e-12 {
				t.Errorf("fee price %v, want %v", o.FeePrice, test.wantFee)
			}
			if diff := o.TokenPrice - (test.wantTokens + test.wantFee); diff > 1e-12 || diff < -1e-12 {
				t.Errorf("token price %v, want the tokens' %v plus the fee %v", o.TokenPrice, test.wantTokens, test.wantFee)
			}
		})
	}
}

func TestSortIsTheRoutingMode(t *testing.T) {
	b, err := election.DecodeBallot(strings.NewReader(`{"request":{"routing":"auto","provider":{"sort":"throughput"}},` + marketBallot + `}`))
	if err != nil {
		t.Fatal(err)
	}
	if b.Request.Routing != election.ModeThroughput {
		t.Fatalf("routing %v, want throughput", b.Request.Routing)
	}
}
