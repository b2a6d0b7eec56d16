package preview

import (
	"cmp"
	"fmt"
	"slices"
	"strings"

	"github.com/airside/airside/internal/catalogue"
	"github.com/airside/airside/internal/fare"
	"github.com/airside/airside/internal/money"
)

// Unserved is a part of a model's requests a listing cannot serve for
// something other than price (election.md sec. 7), from what the gateway's
// demand rows say they asked for.
type Unserved struct {
	// Share is the part of the model's requests, 0-1.
	Share float64
	// Why says what they asked and what the listing offers; Fix names the
	// change to the listing that would open them.
	Why, Fix string
	// Key is the asked key (catalogue.AskedKeys) and Requests its count.
	Key      string
	Requests int64
}

// MaxUnserved bounds the lines shown: the largest parts first.
const MaxUnserved = 6

// UnservedBy lists the parts of the model's requests (sums, from
// store.DemandAsked) that a listing offering m cannot serve, largest first.
// For a context or output limit the part is that of the requests that
// needed more than the nearest line at or above the listing's limit (the
// gateway counts requests above fixed lines), so it is never overstated.
func UnservedBy(m *fare.Market, sums catalogue.AskedSums) []Unserved {
	if sums.Requests <= 0 {
		return nil
	}
	var out []Unserved
	var key string
	add := func(n int64, why, fix string) {
		if n > 0 {
			out = append(out, Unserved{Share: float64(n) / float64(sums.Requests), Why: why, Fix: fix, Key: key, Requests: n})
		}
	}
	contextLine, outputLine := int64(0), int64(0)
	if m.ContextLength != nil {
		contextLine = lineAtOrAbove(catalogue.ContextThresholds, *m.ContextLength)
	}
	if m.MaxOutputTokens != nil {
		outputLine = lineAtOrAbove(catalogue.OutputThresholds, *m.MaxOutputTokens)
	}
	for k, n := range sums.Asked {
		a, ok := catalogue.ParseAsked(k)
		key = k
		if !ok {
			continue
		}
		pct := func(what string) string { return fmt.Sprintf("%s %s", percent(n, sums.Requests), what) }
		switch {
		case a.ZDR && !m.ZDR():
			add(n, pct("asked for zero data retention; this listing: "+m.DataPolicyText()+"."),
				"Declare prompts not kept (0 days) and no training to serve them.")
		case a.DenyCollection && (m.TrainsOnPrompts == nil || *m.TrainsOnPrompts):
			add(n, pct("denied data collection; this listing "+trainsWords(m)+"."),
				"Declare that it does not train on prompts to serve them.")
		case a.Quantizations != nil && !slices.Contains(a.Quantizations, quantOf(m)):
			add(n, pct("asked for "+orList(a.Quantizations)+" only; this listing is "+fare.QuantizationText(m.Quantization)+"."),
				"Serve (and declare) "+orList(a.Quantizations)+" weights to be considered for them.")
		case a.Regions != nil && !slices.ContainsFunc(m.Regions, func(r string) bool { return slices.Contains(a.Regions, r) }):
			where := "declares no region"
			if len(m.Regions) > 0 {
				where = "is served from " + fare.RegionsText(m.Regions)
			}
			add(n, pct("must stay in "+orList(a.Regions)+"; this listing "+where+"."),
				"Serve it from "+orList(a.Regions)+" (and declare the region) to take them.")
		case a.ContextOver > 0 && a.ContextOver == contextLine:
			add(n, pct(fmt.Sprintf("needed more than %s tokens of context; this listing holds %s.", money.Grouped(a.ContextOver), money.Grouped(*m.ContextLength))),
				"A longer context would open them.")
		case a.OutputOver > 0 && a.OutputOver == outputLine:
			add(n, pct(fmt.Sprintf("asked for more than %s output tokens; this listing gives %s at most.", money.Grouped(a.OutputOver), money.Grouped(*m.MaxOutputTokens))),
				"A larger max output would open them.")
		}
	}
	slices.SortFunc(out, func(a, b Unserved) int {
		if c := cmp.Compare(b.Share, a.Share); c != 0 {
			return c
		}
		return strings.Compare(a.Why, b.Why)
	})
	if len(out) > MaxUnserved {
		out = out[:MaxUnserved]
	}
	return out
}

// lineAtOrAbove is the smallest line at or above v, 0 when v is above all.
func lineAtOrAbove(lines []int64, v int64) int64 {
	for _, l := range lines {
		if l >= v {
			return l
		}
	}
	return 0
}

func quantOf(m *fare.Market) string {
	if m.Quantization == "" {
		return "unknown"
	}
	return m.Quantization
}

func trainsWords(m *fare.Market) string {
	if m.TrainsOnPrompts == nil {
		return "does not declare whether it trains on prompts (which counts as training)"
	}
	return "trains on prompts"
}

// percent writes n of total as "31 %", or "under 1 %" for a sliver.
func percent(n, total int64) string {
	p := float64(n) / float64(total) * 100
	if p < 1 {
		return "under 1 %"
	}
	return fmt.Sprintf("%.0f %%", p)
}

func orList(items []string) string {
	switch len(items) {
	case 0:
		return ""
	case 1:
		return items[0]
	}
	return strings.Join(items[:len(items)-1], ", ") + " or " + items[len(items)-1]
}

// UnservableRequests estimates how many of the requests in sums a listing
// offering m could not serve for its customers' preferences: the largest
// count among the asked keys it fails (the requests behind two keys may be
// the same ones, so their sum would overstate; the largest is a floor).
func UnservableRequests(m *fare.Market, sums catalogue.AskedSums) int64 {
	lines := UnservedBy(m, sums) // largest first
	if len(lines) == 0 {
		return 0
	}
	return lines[0].Requests
}
