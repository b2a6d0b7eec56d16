package gateway

import (
	"fmt"
	"slices"
	"strings"

	"github.com/airside/airside/internal/catalogue"
	"github.com/airside/airside/internal/election"
)

// mergeProvider is the project's default provider object under the
// request's, the request winning field by field (election.md sec. 7's
// contract additions); nil when neither gives one.
func mergeProvider(project, request *election.ProviderInput) *election.ProviderInput {
	switch {
	case project == nil:
		return request
	case request == nil:
		return project
	}
	out := *request
	if out.Only == nil {
		out.Only = project.Only
	}
	if out.Ignore == nil {
		out.Ignore = project.Ignore
	}
	if out.Order == nil {
		out.Order = project.Order
	}
	if out.AllowFallbacks == nil {
		out.AllowFallbacks = project.AllowFallbacks
	}
	if out.Quantizations == nil {
		out.Quantizations = project.Quantizations
	}
	if out.DataCollection == nil {
		out.DataCollection = project.DataCollection
	}
	if out.ZDR == nil {
		out.ZDR = project.ZDR
	}
	if out.Sort == nil {
		out.Sort = project.Sort
	}
	if out.RequireParameters == nil {
		out.RequireParameters = project.RequireParameters
	}
	if out.MaxPrice == nil {
		out.MaxPrice = project.MaxPrice
	}
	return &out
}

// preferences applies the project's and the request's provider objects and
// the project's residency to req; an x-no-fallback header is
// allow_fallbacks: false. Both objects were checked when read, so an error
// here is a programming error passed on.
func preferences(p *Project, a *Analysis, req *election.Request) error {
	merged := mergeProvider(p.Provider, a.Provider)
	if len(p.Regions) > 0 {
		req.Regions = p.Regions
	}
	if merged == nil {
		return nil // no provider object: a.NoFallback alone cuts the tries
	}
	prov, sort, err := merged.Provider("provider")
	if err != nil {
		return err
	}
	prov.NoFallbacks = prov.NoFallbacks || a.NoFallback
	a.NoFallback = prov.NoFallbacks
	if sort != nil && !a.ModeGiven {
		req.Routing = *sort // the project's default sort; the request's was read already
	}
	req.Provider = prov
	return nil
}

// noneLeft says which of the request's preferences emptied the ballot: each
// preference (or the context) that excluded a listing nothing else did,
// counted, as an OpenAI-style 404 the caller can act on.
func noneLeft(model string, res *election.Result, prov *election.Provider) error {
	counts := map[string]int{}
	var order []string
	for _, o := range res.Candidates {
		for _, r := range o.Excluded.Reasons() {
			if !marketReason(r) {
				continue
			}
			if counts[r] == 0 {
				order = append(order, r)
			}
			counts[r]++
		}
	}
	if len(order) == 0 {
		if prov != nil && len(prov.Order) > 0 && prov.NoFallbacks {
			return &refusal{404, "no_endpoints_for_preferences", fmt.Sprintf(
				"No listing named by provider.order (%s) can serve this request, and allow_fallbacks is false.", strings.Join(prov.Order, ", "))}
		}
		return nil
	}
	parts := make([]string, len(order))
	for i, r := range order {
		parts[i] = fmt.Sprintf("%s excluded %d", preferenceName(r), counts[r])
	}
	return &refusal{404, "no_endpoints_for_preferences", fmt.Sprintf(
		"No listing of %s meets this request's preferences: %s.", model, strings.Join(parts, ", "))}
}

// marketReason reports an exclusion of election.md sec. 7.
func marketReason(r string) bool {
	return strings.HasPrefix(r, "preference:") || r == "context" || r == "max_output" || r == "region"
}

// preferenceName names an exclusion as the caller wrote what caused it.
func preferenceName(reason string) string {
	switch reason {
	case "context":
		return "the context (prompt plus max_tokens)"
	case "max_output":
		return "max_tokens"
	case "region":
		return "the project's regions"
	}
	return "provider." + strings.TrimPrefix(reason, "preference:")
}

// askedBy is what a request asked for besides the model, for its demand
// row: its preferences merged with the project's, its residency and its
// size (catalogue.AskedKeys), the project's policy when it is share, and
// the project's pseudonym (label; "" names none) when the election routes
// it with no preference. A request whose preferences do not read asks
// nothing here; planning refuses it.
func askedBy(p *Project, a Analysis, label string) []string {
	req := election.Request{PromptTokens: a.PromptTokens, MaxTokens: a.MaxTokens}
	if preferences(p, &a, &req) != nil {
		return nil
	}
	keys := catalogue.AskedKeys(&req)
	if p.policy() == election.PolicyShare {
		// The projection weighs each policy's share by the demand it
		// carried.
		keys = append(keys, catalogue.AskedSharePolicy)
	}
	if label != "" && p.policy() != election.PolicyShare && !slices.ContainsFunc(keys, catalogue.IsPreferenceSet) {
		// The projection elects each project's requests on the rates
		// routing learned of that project (catalogue.ProjectMinute): those
		// the election routes with no preference, the others replayed
		// with their set or policy.
		keys = append(keys, catalogue.ProjectKey(label, a.PromptTokens >= election.CachePromptTokens))
	}
	return keys
}
