package gateway

import (
	"crypto/hmac"
	"crypto/sha256"
	"encoding/hex"
	"sort"
	"strings"
	"sync"
	"time"

	"github.com/airside/airside/internal/traffic"
)

// The policies for what the gateway tells the portal of its customers'
// organisations (Config.Organisations).
const (
	// OrgsPseudonym, the default: "org-" and 8 hex digits of an HMAC of the
	// carrier and the organisation, so one organisation reads the same to a
	// carrier over time and differently to every carrier.
	OrgsPseudonym = "pseudonym"
	// OrgsName sends the organisation's name (letters, digits, spaces and
	// . _ : -; anything else becomes "-").
	OrgsName = "name"
	// OrgsNone sends nothing per organisation.
	OrgsNone = "none"
)

// orgKey is one organisation's minute on one listing.
type orgKey struct {
	listing int64
	org     string
	minute  time.Time
}

// OrgStat is one organisation's minute on a listing: answers (a caller's
// own errors left out), the failures among them, and the tokens served.
type OrgStat struct {
	Requests, Errors                             int64
	InputTokens, CachedInputTokens, OutputTokens int64
}

// OrgMinute is a closed organisation minute.
type OrgMinute struct {
	ListingID    int64
	Organisation string
	Minute       time.Time
	OrgStat
}

// UsedBy counts an attempt for the organisation label on the listing: an
// answer of the listing's own (served, or failed for its reasons); 429s,
// callers' errors and hang-ups are not an organisation's use.
func (r *Recorder) UsedBy(label string, route Route, o Outcome, at time.Time) {
	if label == "" || o.Class != traffic.Served && o.Class != traffic.Counted {
		return
	}
	k := orgKey{route.ListingID, label, at.UTC().Truncate(time.Minute)}
	r.mu.Lock()
	defer r.mu.Unlock()
	r.spool(spoolEntry{Op: opUsedBy, At: at, Route: routeOf(route), Outcome: &o, Label: label})
	if r.orgs == nil {
		r.orgs = map[orgKey]*OrgStat{}
	}
	s := r.orgs[k]
	if s == nil {
		s = &OrgStat{}
		r.orgs[k] = s
	}
	s.Requests++
	if o.Class == traffic.Counted {
		s.Errors++
		return
	}
	s.InputTokens += o.Usage.Input
	s.CachedInputTokens += min(o.Usage.Cached, o.Usage.Input)
	s.OutputTokens += o.Usage.Output
}

// TakeClosedOrgs removes and returns the organisations' minutes that ended
// before until, in time order (then listing and label).
func (r *Recorder) TakeClosedOrgs(until time.Time) []OrgMinute {
	r.mu.Lock()
	defer r.mu.Unlock()
	var out []OrgMinute
	for k, s := range takeClosed(r.orgs, func(k orgKey) time.Time { return k.minute }, until) {
		out = append(out, OrgMinute{ListingID: k.listing, Organisation: k.org, Minute: k.minute, OrgStat: s})
	}
	sort.Slice(out, func(i, j int) bool {
		a, b := out[i], out[j]
		switch {
		case !a.Minute.Equal(b.Minute):
			return a.Minute.Before(b.Minute)
		case a.ListingID != b.ListingID:
			return a.ListingID < b.ListingID
		}
		return a.Organisation < b.Organisation
	})
	return out
}

// OrgLabels names customers' organisations to carriers under a policy.
type OrgLabels struct {
	Policy string
	key    []byte
	// made is the pseudonyms made so far, by carrier and organisation: an
	// HMAC a request was a tenth of the relay's allocations.
	made sync.Map
}

// NewOrgLabels is the labels of policy (default OrgsPseudonym), keyed with
// key: the configured one, or else one derived from the projects' API keys
// (a secret of the gateway's operator that every replica with the same
// configuration shares).
func NewOrgLabels(cfg *Config) *OrgLabels {
	l := &OrgLabels{Policy: cfg.Organisations}
	if l.Policy == "" {
		l.Policy = OrgsPseudonym
	}
	key := cfg.OrgPseudonymKey
	if key == "" {
		keys := make([]string, len(cfg.Projects))
		for i, p := range cfg.Projects {
			keys[i] = p.APIKey
		}
		sort.Strings(keys)
		sum := sha256.Sum256([]byte("airside organisation pseudonyms\x00" + strings.Join(keys, "\x00")))
		key = string(sum[:])
	}
	l.key = []byte(key)
	return l
}

// Label is the organisation as the carrier of route may read it ("" when
// the policy sends none).
func (l *OrgLabels) Label(org string, route Route) string {
	if l == nil || l.Policy == OrgsNone {
		return ""
	}
	if org == "" {
		org = "(no organisation)"
	}
	if l.Policy == OrgsName {
		return nameLabel(org)
	}
	pair := route.Carrier() + "\x00" + org
	if label, ok := l.made.Load(pair); ok {
		return label.(string)
	}
	mac := hmac.New(sha256.New, l.key)
	mac.Write([]byte(pair))
	label := "org-" + hex.EncodeToString(mac.Sum(nil)[:4])
	l.made.Store(pair, label)
	return label
}

// Project is an API project's pseudonym as the portal reads it ("prj-" and
// 12 hex digits of an HMAC of the project's name under the labels' key):
// the same on every listing, so the portal learns a project's rates across
// carriers as the gateway does, and never an organisation's pseudonym
// (those are keyed per carrier, under another prefix), whatever the
// organisation policy. The portal shows it on no page.
func (l *OrgLabels) Project(name string) string {
	if l == nil {
		return ""
	}
	key := "\x00project\x00" + name // a carrier's pairs never start with NUL
	if label, ok := l.made.Load(key); ok {
		return label.(string)
	}
	mac := hmac.New(sha256.New, l.key)
	mac.Write([]byte(key))
	label := "prj-" + hex.EncodeToString(mac.Sum(nil)[:6])
	l.made.Store(key, label)
	return label
}

// nameLabel is a name as the portal takes it: at most 64 characters of
// letters, digits, spaces and . _ : -, starting with a letter or digit.
func nameLabel(name string) string {
	var b strings.Builder
	for _, r := range name {
		switch {
		case r >= 'a' && r <= 'z', r >= 'A' && r <= 'Z', r >= '0' && r <= '9', r == ' ', r == '.', r == '_', r == ':', r == '-':
			b.WriteRune(r)
		default:
			b.WriteByte('-')
		}
	}
	s := strings.TrimLeft(b.String(), " ._:-")
	if s == "" {
		s = "org"
	}
	if len(s) > 64 {
		s = s[:64]
	}
	return s
}
