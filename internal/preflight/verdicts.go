package preflight

import "time"

// A capability's verdict, as routing counts it.
const (
	VerdictVerified = "verified"
	VerdictFailed   = "failed"
)

// ProbeOutcome is a finished probe of a listing's published endpoint, as
// the store reads it.
type ProbeOutcome struct {
	ListingID int64
	Probe     string // a probe name (Lookup)
	State     State  // Passed or Failed
	At        time.Time
}

// Override is a reviewer's verdict on a listing's capability, and when it
// was set.
type Override struct {
	ListingID           int64
	Capability, Verdict string
	SetAt               time.Time
}

// VerdictWindow is how far back the verdicts at now read: probes finished
// after probesAfter (freshness), overrides set after overridesAfter
// (overrideFor). The store narrows its reads with it; Verdicts decides.
func VerdictWindow(now time.Time, freshness, overrideFor time.Duration) (probesAfter, overridesAfter time.Time) {
	return now.Add(-freshness), now.Add(-overrideFor)
}

// Verdicts is the capability verdict rule: for each listing and
// capability, a reviewer's override set within overrideFor, else the latest
// probe of the capability within freshness ("verified" when it passed,
// "failed" when it failed); a capability with neither has no verdict, and
// counts in routing only once verified. probes may come in any order; a
// later probe wins, and of two at one time the one listed later.
func Verdicts(probes []ProbeOutcome, overrides []Override, now time.Time, freshness, overrideFor time.Duration) map[int64]map[string]string {
	probesAfter, overridesAfter := VerdictWindow(now, freshness, overrideFor)
	out := map[int64]map[string]string{}
	at := map[int64]map[string]time.Time{}
	set := func(id int64, capability, verdict string) {
		if out[id] == nil {
			out[id], at[id] = map[string]string{}, map[string]time.Time{}
		}
		out[id][capability] = verdict
	}
	for _, p := range probes {
		probe, ok := Lookup(p.Probe)
		if !ok || probe.Capability == "" || !p.At.After(probesAfter) || (p.State != Passed && p.State != Failed) {
			continue
		}
		if last, seen := at[p.ListingID][probe.Capability]; seen && p.At.Before(last) {
			continue
		}
		verdict := VerdictFailed
		if p.State == Passed {
			verdict = VerdictVerified
		}
		set(p.ListingID, probe.Capability, verdict)
		at[p.ListingID][probe.Capability] = p.At
	}
	for _, o := range overrides {
		if o.SetAt.After(overridesAfter) {
			set(o.ListingID, o.Capability, o.Verdict)
		}
	}
	return out
}
