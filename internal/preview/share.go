package preview

import (
	"fmt"

	"github.com/airside/airside/internal/catalogue"
	"github.com/airside/airside/internal/election"
)

// MixShare is one shape of the workload mix.
type MixShare struct {
	Key, Name string
	Percent   float64 // of the carrier's projected traffic mix
	Wins      bool
	Eligible  int
	// Share is the expected fraction of this shape's requests the carrier
	// gets under auto routing.
	Share float64
	// Why is the rule that decided who holds the shape's traffic.
	Why string
	// RevenuePerRequest is what one such request earns the carrier, in USD.
	RevenuePerRequest float64
	// Weight is the part of the headline's requests this shape's are: its
	// part of the mix that some listing can serve, over all such parts (a
	// request no listing can serve routes nowhere and counts in no share).
	// ServedShare is the carrier's share of those servable requests, so
	// the headline Total is the sum of Weight x ServedShare over the rows.
	Weight, ServedShare float64
}

// Share is the projected share of a model's auto traffic.
type Share struct {
	Mix []MixShare
	// Total is the expected fraction of all requests the carrier serves;
	// Exploration the part of it exploration brings (shapes it does not
	// hold), and Pinned the part callers' preferences sent to it alone (a
	// provider order, or one listing left: election.md sec. 7), both of
	// which routing counts apart.
	Total, Exploration, Pinned float64
	// RevenuePerMillion is the carrier's projected revenue per million
	// requests of the model, in USD.
	RevenuePerMillion float64
}

// projectShare weighs each shape's auto election by the mix: the holder of
// a shape (the winner, unless the incumbent keeps it: holderOf) gets 99 % of
// its requests and every other eligible candidate an equal part of the 1 %
// exploration, as the gateway routes (traffic.Explore). Revenue per request is the scenario's prompt at the
// resolved prices (cache hits at the cached price), plus output tokens at the
// workload's default ratio, times (1 - discount) x (1 - landing fee).
func projectShare(in Input, results []ScenarioResult) Share {
	pcts := mixPercents(in.Mix)
	var out Share
	served := 0.0 // the part of the requests some candidate could serve
	servable := make([]float64, len(shapes))
	for si, shape := range shapes {
		pct := pcts[si]
		ms := MixShare{Key: shape.Key, Name: shape.Name, Percent: pct}
		for _, r := range results {
			if r.Scenario.Key != shape.Key+"-auto" {
				continue
			}
			ms.Eligible, ms.Why = r.Mine.Of, r.HolderNote
			explored := 0.0
			prefs := in.Preferences[shape.Key]
			_, carried := setsScale(prefs)
			projects := projectGroups(in, shape.Key, 1-carried)
			switch kinds := in.Kinds[shape.Key]; {
			case len(kinds) > 0 || len(projects) > 0:
				// Kinds, and the projects routing learned rates of their
				// own for, on ballots of their own under one incumbent.
				if len(kinds) == 0 {
					kinds = []Kind{usualKind(r.Scenario)}
				}
				ms.Share, explored, servable[si], ms.Wins = kindsShare(in, r.Scenario, kinds, projects)
				ms.Why = r.HolderNote
				if len(in.Kinds[shape.Key]) > 0 {
					ms.Why = kindsNote(kinds) + ms.Why
				}
				if len(projects) > 0 {
					ms.Why = projectsNote(projects, &in.Market.Routing.Learned) + ms.Why
				}
			case r.Mine.Eligible:
				ms.Wins = r.HolderIsMe
				ms.Share = shapeShare(ms.Wins, r.Mine.Of)
				if !ms.Wins {
					explored = ms.Share
				}
				fallthrough
			case r.Mine.Of > 0:
				servable[si] = 1
			}
			if len(prefs) > 0 {
				// The requests that carried preferences, each set on a
				// ballot of its own (ProjectHistory's rule); the rest as
				// elected above.
				share, exploredPref, servablePref, part := preferredShare(in, r.Scenario, in.Kinds[shape.Key], prefs)
				ms.Share = (1-part)*ms.Share + share
				explored = (1-part)*explored + exploredPref
				servable[si] = (1-part)*servable[si] + servablePref
				ms.Why = preferencesNote(part) + ms.Why
			}
			served += pct / 100 * servable[si]
			if ms.Share > 0 {
				ms.RevenuePerRequest = revenuePerRequest(in, r)
			}
			out.Exploration += pct / 100 * explored
		}
		out.Total += pct / 100 * ms.Share
		out.RevenuePerMillion += 1e6 * pct / 100 * ms.Share * ms.RevenuePerRequest
		out.Mix = append(out.Mix, ms)
	}
	whole := []Share{out}
	normalise(whole, served)
	whole[0].Mix = out.Mix
	// Each row's weight in the headline (normalise's rule: with nothing
	// servable, or everything, the mix itself).
	for i := range whole[0].Mix {
		ms := &whole[0].Mix[i]
		ms.Weight, ms.ServedShare = ms.Percent/100, ms.Share
		if served > 0 && served < 1 {
			ms.Weight = ms.Percent / 100 * servable[i] / served
			if servable[i] > 0 {
				ms.ServedShare = ms.Share / servable[i]
			}
		}
	}
	return whole[0]
}

var defaultOutputRatio = map[election.Workload]float64{
	election.WorkloadGeneral: 0.2, election.WorkloadCoding: 0.02, election.WorkloadChat: 0.1,
}

func revenuePerRequest(in Input, r ScenarioResult) float64 {
	if in.Fare == nil {
		return 0
	}
	p := r.Mine.Prices
	cached := p.Input
	if p.HasCachedInput {
		cached = p.CachedInput
	}
	h := r.Mine.HitRate
	prompt := float64(r.Scenario.PromptTokens)
	output := prompt * defaultOutputRatio[r.Scenario.Workload]
	billed := (prompt*((1-h)*p.Input+h*cached) + output*p.Output) / 1e6
	return billed * (1 - in.Fare.Discount.Fraction()) * (1 - in.Fare.LandingFee.Fraction())
}

// MixFromDemand is the workload mix the gateway measured, in the preview's
// shapes: coding and chat as reported, general split into small one-shots
// and large prompts (at least election.CachePromptTokens on average in its
// minute). It returns the requests behind it (0: no measured demand).
func MixFromDemand(d map[string]catalogue.WorkloadDemand) (map[string]float64, int64) {
	general := d["general"]
	mix := map[string]float64{
		"small":  float64(general.Requests - general.LargeRequests),
		"large":  float64(general.LargeRequests),
		"coding": float64(d["coding"].Requests),
		"chat":   float64(d["chat"].Requests),
	}
	var total int64
	for _, w := range d {
		total += w.Requests
	}
	return mix, total
}

// MixKeyOf is the key of the mix (MixFromDemand) a gateway shape's
// requests count under: the general workload's small one-shots and large
// prompts by whether the cache matters (a prompt of at least
// election.CachePromptTokens, or a session's opener), coding and chat by
// their workload. False for a workload the mix does not have.
func MixKeyOf(workload string, cacheRelevant bool) (string, bool) {
	switch workload {
	case "general":
		if cacheRelevant {
			return "large", true
		}
		return "small", true
	case "coding", "chat":
		return workload, true
	}
	return "", false
}

// SharePartsFromDemand is the part of each shape's requests routed under
// the share policy, as the gateways reported it per workload (the small
// one-shots and large prompts of the general workload alike); nil when
// none was.
func SharePartsFromDemand(d map[string]catalogue.WorkloadDemand) map[string]float64 {
	var out map[string]float64
	for w, keys := range map[string][]string{"general": {"small", "large"}, "coding": {"coding"}, "chat": {"chat"}} {
		if wd := d[w]; wd.Requests > 0 && wd.SharePolicy > 0 {
			if out == nil {
				out = map[string]float64{}
			}
			for _, k := range keys {
				out[k] = min(float64(wd.SharePolicy)/float64(wd.Requests), 1)
			}
		}
	}
	return out
}

// PromptsFromDemand is the average prompt of each shape as the gateway
// measured it: small one-shots and large prompts from the general
// workload's minutes below and above the large line, coding and chat as
// reported. A shape without requests is absent (its standard size stands).
func PromptsFromDemand(d map[string]catalogue.WorkloadDemand) map[string]int64 {
	general := d["general"]
	out := map[string]int64{}
	set := func(key string, tokens, requests int64) {
		if requests > 0 && tokens > 0 {
			out[key] = (tokens + requests/2) / requests
		}
	}
	set("small", general.PromptTokens-general.LargePromptTokens, general.Requests-general.LargeRequests)
	set("large", general.LargePromptTokens, general.LargeRequests)
	set("coding", d["coding"].PromptTokens, d["coding"].Requests)
	set("chat", d["chat"].PromptTokens, d["chat"].Requests)
	return out
}

// preferredShare is the listing's part of a shape's requests that carried
// preferences (prefs, each set's part of the shape), elected as
// ProjectHistory elects them: each set on a ballot of its own for each
// kind of request (kinds; none: the shape's usual kind), under the
// shape's incumbent (electPreferred). It returns the listing's share and
// the explored part of it, the part some listing could serve, and the part
// of the shape the sets carried (at most all of it), each of the whole
// shape.
func preferredShare(in Input, sc Scenario, kinds []Kind, prefs []PreferencePart) (share, explored, servable, carried float64) {
	scale, carried := setsScale(prefs)
	if len(kinds) == 0 {
		kinds = []Kind{usualKind(sc)}
	}
	change := Change{ListingID: in.ListingID, Fare: in.Fare}
	incumbent := incumbentOf(in, sc)
	var res election.Result
	for _, k := range kinds {
		req := sc.Request(in.Model, in.At)
		req.Streaming, req.Requires = k.Streaming, k.Requires
		kind, _, me := in.Market.BallotEntries(req, change) // each set elects on a copy (history.go's way)
		for _, p := range prefs {
			part := k.Part * max(p.Part, 0) * scale
			if part <= 0 || p.Preferences == nil {
				continue
			}
			b := kind
			carryPreferences(&b, p.Preferences)
			servable += part * electPreferred(&b, &res, incumbent, func(i int, s float64, exploring bool) {
				if i == me {
					share += part * s
					if exploring {
						explored += part * s
					}
				}
			}, func(i int) {
				if i == me {
					share += part
				}
			})
		}
	}
	return share, explored, servable, carried
}

// preferencesNote says how much of a shape's requests carried
// preferences, before the rule for the rest.
func preferencesNote(carried float64) string {
	return fmt.Sprintf("%.0f %% of these requests carry preferences (zero data retention, a region, a provider order...), "+
		"each set elected on a ballot of its own as the gateway routes it. For the rest: ", 100*carried)
}

// ProjectPartsFromDemand are each shape's parts of requests by API project
// (WorkloadDemand.Projects: those the election routed with no preference),
// of all the shape's requests: the general workload's small requests for
// small one-shots and its large ones for large prompts, as MixFromDemand
// splits them, coding and chat whole. Nil when no project was named.
func ProjectPartsFromDemand(d map[string]catalogue.WorkloadDemand) map[string]map[string]float64 {
	var out map[string]map[string]float64
	add := func(shape, project string, n, of int64) {
		if n <= 0 || of <= 0 {
			return
		}
		if out == nil {
			out = map[string]map[string]float64{}
		}
		if out[shape] == nil {
			out[shape] = map[string]float64{}
		}
		out[shape][project] = min(float64(n)/float64(of), 1)
	}
	general := d["general"]
	for project, pd := range general.Projects {
		add("small", project, pd.Requests-pd.LargeRequests, general.Requests-general.LargeRequests)
		add("large", project, pd.LargeRequests, general.LargeRequests)
	}
	for _, w := range []string{"coding", "chat"} {
		for project, pd := range d[w].Projects {
			add(w, project, pd.Requests, d[w].Requests)
		}
	}
	return out
}
