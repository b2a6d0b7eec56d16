package alerting

import (
	"fmt"
	"strconv"
	"strings"
	"time"

	"github.com/airside/airside/internal/apperr"
)

// Setting is how one alert rule behaves for a carrier: whether it is on,
// how long its condition must hold before the alert opens and how long it
// must stay clear before the alert resolves (the hysteresis that keeps a
// wobbling signal from opening and resolving alert after alert), and the
// rule's threshold where it has one (Threshold names its unit).
type Setting struct {
	On         bool
	OpenAfter  time.Duration
	CloseAfter time.Duration
	// Threshold is the rule's line in its own unit (ThresholdOf); zero
	// for rules whose line is routing's (the uptime lines, the breaker).
	Threshold float64
}

// ThresholdUnit describes a rule's threshold for its form: the words
// before and after the number, and its bounds. A rule with no threshold
// of its own has an empty Label.
type ThresholdUnit struct {
	Label, Suffix string
	Min, Max      float64
	// Whole is true when the threshold is a whole number.
	Whole bool
}

// ThresholdOf is kind's threshold unit.
func ThresholdOf(k Kind) ThresholdUnit {
	switch k {
	case AtCap:
		return ThresholdUnit{Label: "Minutes at the cap within an hour", Suffix: "min", Min: 1, Max: 60, Whole: true}
	case ShareDown:
		return ThresholdUnit{Label: "Share fall, week over week", Suffix: "%", Min: 5, Max: 95, Whole: true}
	case RankMoved:
		return ThresholdUnit{Label: "Places lost in a scenario", Suffix: "places", Min: 1, Max: 10, Whole: true}
	case FailureBreaker, RateLimitBackoff:
		return ThresholdUnit{Label: "Times the peers' rate", Suffix: "×", Min: 1.5, Max: 20}
	case TTFTJump:
		return ThresholdUnit{Label: "Times the hour before's", Suffix: "×", Min: 1.2, Max: 20}
	}
	return ThresholdUnit{}
}

// FoldWindow is how soon after it resolved an alert that opens again is
// folded into the same alert (flapping) instead of opening a new one; a
// flapping alert then resolves only once its condition has been clear this
// long, so a carrier hears of the flapping once, and of its end once.
const FoldWindow = time.Hour

// DefaultSetting is kind's setting for a carrier that changed nothing.
func DefaultSetting(k Kind) Setting {
	s := Setting{On: true, OpenAfter: 5 * time.Minute, CloseAfter: 15 * time.Minute}
	switch k {
	case AtCap:
		s.Threshold = DefaultCapMinutes
	case ShareDown:
		s.Threshold = DefaultShareDrop * 100
		s.OpenAfter, s.CloseAfter = time.Hour, 6*time.Hour // a weekly figure: judged slowly
	case RankMoved:
		s.Threshold = 1
		s.OpenAfter = 10 * time.Minute
	case FailureBreaker, RateLimitBackoff:
		s.Threshold = breakerFactor
	case TTFTJump:
		s.Threshold = ttftJumpFactor
	case BreakerPaused:
		// The gateway's breaker is a decision already taken, not a signal
		// to smooth: the carrier hears at once, and of its end once it held.
		s.OpenAfter, s.CloseAfter = 0, 5*time.Minute
	}
	return s
}

// CarrierRules are one carrier's settings, by kind; a kind not in the map
// takes its default.
type CarrierRules map[Kind]Setting

// Of is the setting of kind k.
func (r CarrierRules) Of(k Kind) Setting {
	if s, ok := r[k]; ok {
		return s
	}
	return DefaultSetting(k)
}

// The bounds of the hold and clear times a carrier may set, in minutes.
const (
	maxHoldMinutes = 24 * 60
)

// ParseSetting reads one rule's form fields (on: "on" or empty; open and
// close: whole minutes; threshold in the kind's unit) and names each bad
// field by its form name: "<kind>-open", "<kind>-close",
// "<kind>-threshold".
func ParseSetting(k Kind, on, open, closeAfter, threshold string) (Setting, map[string]string) {
	errs := map[string]string{}
	s := Setting{On: on == "on"}
	minutes := func(field, text, what string) time.Duration {
		n, err := strconv.Atoi(strings.TrimSpace(text))
		if err != nil || n < 0 || n > maxHoldMinutes {
			errs[string(k)+"-"+field] = fmt.Sprintf("Give %s as whole minutes from 0 to %d.", what, maxHoldMinutes)
			return 0
		}
		return time.Duration(n) * time.Minute
	}
	s.OpenAfter = minutes("open", open, "how long it must hold")
	s.CloseAfter = minutes("close", closeAfter, "how long it must stay clear")
	if u := ThresholdOf(k); u.Label != "" {
		text := strings.TrimSpace(strings.TrimSuffix(strings.TrimSpace(threshold), u.Suffix))
		v, err := strconv.ParseFloat(text, 64)
		switch {
		case err != nil:
			errs[string(k)+"-threshold"] = fmt.Sprintf("Give a number from %s to %s.", trimFloat(u.Min), trimFloat(u.Max))
		case v < u.Min || v > u.Max:
			errs[string(k)+"-threshold"] = fmt.Sprintf("Give a number from %s to %s; %s is outside.", trimFloat(u.Min), trimFloat(u.Max), trimFloat(v))
		case u.Whole && v != float64(int64(v)):
			errs[string(k)+"-threshold"] = "Give a whole number."
		default:
			s.Threshold = v
		}
	}
	return s, errs
}

func trimFloat(v float64) string { return strconv.FormatFloat(v, 'f', -1, 64) }

// Mute silences one listing's alerts (of one kind, or every kind when Kind
// is empty) until a time: alerts still open and resolve on the Alerts
// page, but nothing reaches the inbox, e-mail or webhook meanwhile.
type Mute struct {
	ID        int64
	CarrierID int64
	ListingID int64
	Listing   string // the model's name, for the carrier's page
	Kind      Kind
	Until     time.Time
	By        string
}

// Covers is whether the mute silences kind on listing at t.
func (m Mute) Covers(listingID int64, kind Kind, t time.Time) bool {
	return m.ListingID == listingID && (m.Kind == "" || m.Kind == kind) && t.Before(m.Until)
}

// MuteDurations are the spans the Alerts page offers, by form value.
var MuteDurations = []struct {
	Value string
	Label string
	For   time.Duration
}{
	{"1h", "for an hour", time.Hour},
	{"8h", "for 8 hours", 8 * time.Hour},
	{"24h", "for a day", 24 * time.Hour},
	{"168h", "for a week", 7 * 24 * time.Hour},
}

// MuteFor is the span of a form's duration value.
func MuteFor(value string) (time.Duration, error) {
	for _, d := range MuteDurations {
		if d.Value == value {
			return d.For, nil
		}
	}
	return 0, apperr.Invalid(map[string]string{"for": "Choose how long to mute: an hour, 8 hours, a day or a week."})
}

// KindOf is the kind a form names ("" for every kind), or an error.
func KindOf(value string) (Kind, error) {
	if value == "" {
		return "", nil
	}
	for _, k := range Kinds {
		if string(k) == value {
			return k, nil
		}
	}
	return "", apperr.Invalid(map[string]string{"kind": "Choose an alert kind from the list."})
}
