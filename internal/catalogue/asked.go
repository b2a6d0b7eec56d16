package catalogue

import (
	"fmt"
	"slices"
	"strconv"
	"strings"

	"github.com/airside/airside/internal/election"
)

// What a minute's requests asked for besides a model (election.md sec. 7),
// as demand rows carry it: a key per preference, counting the row's
// requests that asked it. The keys are a closed vocabulary, so the preview
// can tell a listing which of the model's requests it cannot serve:
//
//	zdr                       provider.zdr: true
//	data_collection:deny      provider.data_collection: "deny"
//	quantizations:bf16,fp8    provider.quantizations (sorted, comma-joined)
//	regions:DE,FR             the project's residency (sorted)
//	context_over:131072       prompt plus max_tokens above the threshold
//	max_output_over:16384     max_tokens above the threshold
//	policy:share              routed under the share policy (election.md
//	                          sec. 8) rather than the election; a listing
//	                          serves these as any other
//	prefs:zdr|order:orbit     every preference that narrows or orders the
//	                          ballot, together (the components above, and
//	                          only:, ignore: and order: with the entries as
//	                          sent, joined by "|"): the keys above count
//	                          each preference alone, this one the sets the
//	                          projection replays (a request's max_price is
//	                          not in it)
//	project:prj-3f9a2c1b04d2  the API project that sent them (a pseudonym,
//	                          ProjectMinute), of those the election routed
//	                          with no preference, their prompts under the
//	                          large line (election.CachePromptTokens); with
//	                          "|large" appended, those at or above it: the
//	                          projection elects each project's part of a
//	                          shape on the rates routing learned of it
const (
	AskedZDR            = "zdr"
	AskedDenyCollection = "data_collection:deny"
	askedQuantizations  = "quantizations:"
	askedRegions        = "regions:"
	askedContextOver    = "context_over:"
	askedMaxOutputOver  = "max_output_over:"
	AskedSharePolicy    = "policy:share"
	askedPrefs          = "prefs:"
	askedOnly           = "only:"
	askedIgnore         = "ignore:"
	askedOrder          = "order:"
	askedProject        = "project:"
)

// ContextThresholds and OutputThresholds are the lines the asked sizes are
// counted above: the common context lengths and output limits.
var (
	ContextThresholds = []int64{8192, 16384, 32768, 65536, 131072, 262144, 1048576}
	OutputThresholds  = []int64{4096, 8192, 16384, 32768, 65536}
)

// MaxAskedKeys bounds a demand row's asked keys, MaxPreferenceSets the
// prefs: keys among them (the rest are left to the keys counted alone) and
// MaxProjectKeys the project: keys (16 projects, small and large apart; a
// row's requests from more projects name the first ones, and the
// projection elects the rest on the rates learned of the whole model).
const (
	MaxAskedKeys      = 64
	MaxPreferenceSets = 32
	MaxProjectKeys    = 32
)

// IsPreferenceSet reports a prefs: key.
func IsPreferenceSet(key string) bool { return strings.HasPrefix(key, askedPrefs) }

// ProjectKey is the asked key of the API project with pseudonym label, for
// its requests at or above the large line or under it.
func ProjectKey(label string, large bool) string {
	if large {
		return askedProject + label + projectLarge
	}
	return askedProject + label
}

// projectLarge marks a project: key of large requests.
const projectLarge = "|large"

// IsProjectKey reports a project: key.
func IsProjectKey(key string) bool { return strings.HasPrefix(key, askedProject) }

// AskedProjectPattern matches the project: keys in SQL's LIKE.
const AskedProjectPattern = askedProject + "%"

// AskedKeys are the keys one request's preferences and size add to its
// demand row.
func AskedKeys(req *election.Request) []string {
	keys := preferenceKeys(req)
	need := req.PromptTokens + req.MaxTokens
	for _, t := range ContextThresholds {
		if need > t {
			keys = append(keys, askedContextOver+strconv.FormatInt(t, 10))
		}
	}
	for _, t := range OutputThresholds {
		if req.MaxTokens > t {
			keys = append(keys, askedMaxOutputOver+strconv.FormatInt(t, 10))
		}
	}
	if set := preferenceSet(req); set != "" {
		keys = append(keys, set)
	}
	return keys
}

// preferenceKeys are the keys of req's data policy, quantizations and
// residency, each counted alone.
func preferenceKeys(req *election.Request) []string {
	var keys []string
	if p := req.Provider; p != nil {
		if p.ZDR {
			keys = append(keys, AskedZDR)
		}
		if p.DenyDataCollection {
			keys = append(keys, AskedDenyCollection)
		}
		if p.Quantizations != 0 {
			var names []string
			for _, q := range election.Quantizations() {
				if p.Quantizations.Has(q) {
					names = append(names, q.String())
				}
			}
			keys = append(keys, askedQuantizations+sortedList(names))
		}
	}
	if len(req.Regions) > 0 {
		keys = append(keys, askedRegions+sortedList(req.Regions))
	}
	return keys
}

// sortedList is a list as a key carries it: sorted, once each,
// comma-joined.
func sortedList(list []string) string {
	l := slices.Clone(list)
	slices.Sort(l)
	return strings.Join(slices.Compact(l), ",")
}

// AskedPrefsPattern matches the prefs: keys in SQL's LIKE.
const AskedPrefsPattern = askedPrefs + "%"

// preferenceSet is the prefs: key of the preferences that narrow or order
// req's ballot, all of them together ("" when none does): the keys counted
// alone, then the provider's only, ignore and order.
func preferenceSet(req *election.Request) string {
	parts := preferenceKeys(req)
	if p := req.Provider; p != nil {
		for _, list := range []struct {
			prefix  string
			entries []string
		}{{askedOnly, p.Only}, {askedIgnore, p.Ignore}} {
			if len(list.entries) > 0 {
				parts = append(parts, list.prefix+sortedList(list.entries))
			}
		}
		if len(p.Order) > 0 {
			parts = append(parts, askedOrder+strings.Join(p.Order, ","))
		}
	}
	if len(parts) == 0 {
		return ""
	}
	return askedPrefs + strings.Join(parts, "|")
}

// Preferences are a prefs: key read: the provider object and residency a
// set of requests carried, as the election applies them.
type Preferences struct {
	Provider election.Provider
	Regions  []string
}

// parsePreferences reads a prefs: key's components.
func parsePreferences(set string) (*Preferences, bool) {
	out := &Preferences{}
	seen := map[string]bool{}
	for _, part := range strings.Split(set, "|") {
		name, value, _ := strings.Cut(part, ":")
		if seen[name] {
			return nil, false
		}
		seen[name] = true
		list := strings.Split(value, ",")
		switch {
		case part == AskedZDR:
			out.Provider.ZDR = true
		case part == AskedDenyCollection:
			out.Provider.DenyDataCollection = true
		case name+":" == askedQuantizations:
			for _, q := range list {
				v, known := election.ParseQuantization(q)
				if !known {
					return nil, false
				}
				out.Provider.Quantizations = out.Provider.Quantizations.With(v)
			}
		case name+":" == askedRegions:
			for _, r := range list {
				if !election.ValidRegion(r) {
					return nil, false
				}
			}
			out.Regions = list
		case name+":" == askedOnly, name+":" == askedIgnore, name+":" == askedOrder:
			for _, e := range list {
				if !validEntry(e) {
					return nil, false
				}
			}
			switch name + ":" {
			case askedOnly:
				out.Provider.Only = list
			case askedIgnore:
				out.Provider.Ignore = list
			default:
				out.Provider.Order = list
			}
		default:
			return nil, false
		}
	}
	return out, true
}

// validEntry is a provider entry as a key carries it: a carrier slug or a
// listing's id (lower-case letters, digits, ".", "_", "-" and "/").
func validEntry(e string) bool {
	if e == "" || len(e) > 200 {
		return false
	}
	for _, r := range e {
		if !(r >= 'a' && r <= 'z' || r >= '0' && r <= '9' || r == '.' || r == '_' || r == '-' || r == '/') {
			return false
		}
	}
	return true
}

// Asked is one key read: what it asks, and whether a listing with these
// attributes cannot serve it.
type Asked struct {
	Key string
	// ZDR, DenyCollection: the data policy asked for; Quantizations and
	// Regions the lists; ContextOver and OutputOver the size (0 if not).
	ZDR, DenyCollection     bool
	Quantizations, Regions  []string
	ContextOver, OutputOver int64
	// SharePolicy: the requests were routed under the share policy.
	SharePolicy bool
	// Preferences: a prefs: key, the set read (the fields above are then
	// unset: the set's preferences are counted alone by their own keys).
	Preferences *Preferences
	// Project: a project: key, the project's pseudonym, and whether it
	// counts the project's large requests (it asks nothing of a listing).
	Project      string
	ProjectLarge bool
}

// ParseAsked reads a key; ok is false for one outside the vocabulary.
func ParseAsked(key string) (a Asked, ok bool) {
	a.Key = key
	switch {
	case key == AskedZDR:
		a.ZDR = true
	case key == AskedDenyCollection:
		a.DenyCollection = true
	case key == AskedSharePolicy:
		a.SharePolicy = true
	case strings.HasPrefix(key, askedQuantizations):
		a.Quantizations = strings.Split(strings.TrimPrefix(key, askedQuantizations), ",")
		for _, q := range a.Quantizations {
			if _, known := election.ParseQuantization(q); !known {
				return a, false
			}
		}
	case strings.HasPrefix(key, askedRegions):
		a.Regions = strings.Split(strings.TrimPrefix(key, askedRegions), ",")
		for _, r := range a.Regions {
			if !election.ValidRegion(r) {
				return a, false
			}
		}
	case strings.HasPrefix(key, askedPrefs):
		set, valid := parsePreferences(strings.TrimPrefix(key, askedPrefs))
		if !valid {
			return a, false
		}
		a.Preferences = set
	case strings.HasPrefix(key, askedProject):
		a.Project, a.ProjectLarge = strings.CutSuffix(strings.TrimPrefix(key, askedProject), projectLarge)
		if !ValidProjectLabel(a.Project) {
			return a, false
		}
	case strings.HasPrefix(key, askedContextOver):
		v, err := strconv.ParseInt(strings.TrimPrefix(key, askedContextOver), 10, 64)
		if err != nil || !slices.Contains(ContextThresholds, v) {
			return a, false
		}
		a.ContextOver = v
	case strings.HasPrefix(key, askedMaxOutputOver):
		v, err := strconv.ParseInt(strings.TrimPrefix(key, askedMaxOutputOver), 10, 64)
		if err != nil || !slices.Contains(OutputThresholds, v) {
			return a, false
		}
		a.OutputOver = v
	default:
		return a, false
	}
	return a, true
}

// validateAsked checks a row's asked counts: known keys, each at most the
// row's requests.
func validateAsked(asked map[string]int64, requests int64) string {
	if len(asked) > MaxAskedKeys {
		return fmt.Sprintf("at most %d keys", MaxAskedKeys)
	}
	projects := 0
	for key, n := range asked {
		if IsProjectKey(key) {
			if projects++; projects > MaxProjectKeys {
				return fmt.Sprintf("at most %d project: keys", MaxProjectKeys)
			}
		}
		if _, ok := ParseAsked(key); !ok {
			return fmt.Sprintf("%q is not a known key (zdr, data_collection:deny, quantizations:<list>, regions:<codes>, context_over:<one of %v>, max_output_over:<one of %v>, policy:share, prefs:<set>, project:<pseudonym>[|large])",
				key, ContextThresholds, OutputThresholds)
		}
		if n < 0 || n > requests {
			return fmt.Sprintf("%s: must be between 0 and requests", key)
		}
	}
	return ""
}

// AskedSums are a model's requests over a period and, per asked key, those
// that asked it.
type AskedSums struct {
	Requests int64
	Asked    map[string]int64
}
