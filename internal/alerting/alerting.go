// Package alerting decides when a carrier hears about its listings without
// looking: uptime under the 95 % line (the routing penalty) or the 85 %
// line (sessions move away), a listing turned away at its cap, its share of
// the model falling week over week, a competitor's fare moving its rank; and
// it signs what is sent to a carrier's webhook. An alert opens once and
// resolves once: the carrier hears of the start and the recovery, not every
// minute in between.
package alerting

import (
	"crypto/hmac"
	"crypto/sha256"
	"encoding/base32"
	"encoding/base64"
	"encoding/hex"
	"fmt"
	"strconv"
	"strings"
	"time"

	"github.com/airside/airside/internal/catalogue"
	"github.com/airside/airside/internal/election"
)

// Kind is what an alert is about.
type Kind string

// The alert kinds.
const (
	UptimePenalty Kind = "uptime_below_95"
	UptimeSwitch  Kind = "uptime_below_85"
	AtCap         Kind = "at_cap"
	ShareDown     Kind = "share_down"
	RankMoved     Kind = "rank_moved"
	// The signals OpenRouter's guide says a gateway acts on: a breaker when
	// a listing fails far more than its model's peers, a short-term backoff
	// when it answers 429 far more, and a jump in time to first token.
	FailureBreaker   Kind = "failures_above_peers"
	RateLimitBackoff Kind = "rate_limited_above_peers"
	TTFTJump         Kind = "ttft_jump"
	// BreakerPaused is the gateway's own breaker holding the listing
	// back (election.md sec. 8), from what the gateway reported: open from
	// its opening until it reports it closed.
	BreakerPaused Kind = "paused_by_breaker"
)

// Kinds are every alert kind, in the order the alerts page explains them.
var Kinds = []Kind{UptimePenalty, UptimeSwitch, AtCap, ShareDown, RankMoved, FailureBreaker, RateLimitBackoff, TTFTJump, BreakerPaused}

// The webhook events: the "event" member of every delivery's body. The
// README's event catalogue lists them (TestTheEventCatalogueIsComplete).
const (
	EventAlertOpened   = "alert.opened"
	EventAlertResolved = "alert.resolved"
	EventTest          = "test"
	// EventFeedFailing and EventFeedRecovered: the carrier's provider
	// feed stopped being readable (nothing is filed from it meanwhile),
	// and read again.
	EventFeedFailing   = "feed.failing"
	EventFeedRecovered = "feed.recovered"
)

// Events are every webhook event.
var Events = []string{EventAlertOpened, EventAlertResolved, EventTest, EventFeedFailing, EventFeedRecovered}

// Label is the kind as a person reads it.
func (k Kind) Label() string {
	switch k {
	case UptimePenalty:
		return "uptime under " + election.Percent(election.PenaltyUptime) + " %"
	case UptimeSwitch:
		return "uptime under " + election.Percent(election.StableUptime) + " %"
	case AtCap:
		return "at its rate cap"
	case ShareDown:
		return "share falling"
	case RankMoved:
		return "ranked lower"
	case FailureBreaker:
		return "failing far more than its peers"
	case RateLimitBackoff:
		return "answering 429 far more than its peers"
	case TTFTJump:
		return "time to first token jumped"
	case BreakerPaused:
		return "paused by the gateway's breaker"
	}
	return string(k)
}

// Alert is one alert as stored.
type Alert struct {
	ID        int64
	CarrierID int64
	ListingID int64
	Listing   string // carrier/model
	// ModelName is the model's name, for a carrier's own pages (filled by
	// the alerts page's read only).
	ModelName  string
	Kind       Kind
	Detail     string
	OpenedAt   time.Time
	ResolvedAt *time.Time
	// Flaps is how many times the alert opened again within FoldWindow
	// of resolving (folded into this one); ReopenedAt is the last.
	Flaps      int64
	ReopenedAt *time.Time
}

// Rules are what every carrier's rules share; the zero value takes the
// defaults. Each carrier sets its own thresholds (CarrierRules).
type Rules struct {
	// Window is the span the uptime, failure, 429 and first-token rules
	// judge (default 10 min).
	Window time.Duration
	// MinRequests keeps a quiet listing's one failure from alerting (50).
	MinRequests int64
}

// The defaults of Rules and of the thresholds a carrier may change.
const (
	DefaultWindow      = 10 * time.Minute
	DefaultCapMinutes  = 15
	DefaultShareDrop   = 0.30
	DefaultMinRequests = 50
)

func (r Rules) withDefaults() Rules {
	if r.Window <= 0 {
		r.Window = DefaultWindow
	}
	if r.MinRequests <= 0 {
		r.MinRequests = DefaultMinRequests
	}
	return r
}

// Describe says what rule k watches with setting s, for the alerts page:
// derived from the figures the evaluator uses, never written beside them.
func (r Rules) Describe(k Kind, s Setting) string {
	r = r.withDefaults()
	window := int(r.Window / time.Minute)
	switch k {
	case UptimePenalty, UptimeSwitch:
		line, effect := election.PenaltyUptime, "routing's penalty"
		if k == UptimeSwitch {
			line, effect = election.StableUptime, "sessions move away"
		}
		return fmt.Sprintf("Uptime under %s %% (%s) over %d minutes, with at least %d requests.", election.Percent(line), effect, window, r.MinRequests)
	case AtCap:
		return fmt.Sprintf("Requests turned away at a rate cap in %s minutes of the last hour.", trimFloat(s.Threshold))
	case ShareDown:
		return fmt.Sprintf("Share of the model's requests over the last 7 days down more than %s %% on the 7 days before.", trimFloat(s.Threshold))
	case RankMoved:
		return fmt.Sprintf("A standard scenario's rank %s worse while your own fare did not change; the alert names what moved it.",
			plural(s.Threshold, "place", "places"))
	case FailureBreaker:
		return fmt.Sprintf("Failures over %d minutes at %s times the model's other listings' rate, and %d points above it.", window, trimFloat(s.Threshold), int(breakerMargin*100))
	case RateLimitBackoff:
		return fmt.Sprintf("429 answers over %d minutes at %s times the model's other listings' rate, and %d points above it.", window, trimFloat(s.Threshold), int(breakerMargin*100))
	case TTFTJump:
		return fmt.Sprintf("Time to first token over %d minutes at %s times the hour before's.", window, trimFloat(s.Threshold))
	case BreakerPaused:
		return "A gateway's breaker holds the listing out of routing (reported by the gateway)."
	}
	return k.Label()
}

func plural(n float64, one, many string) string {
	if n == 1 {
		return "1 " + one
	}
	return trimFloat(n) + " " + many
}

// Signals are what is known of one listing now.
type Signals struct {
	// Over the rules' window: requests (client errors left out) and failures.
	Requests, Failures int64
	// CappedMinutes is the minutes of the last hour with requests turned away.
	CappedMinutes int
	// ShareNow and ShareBefore are the last 7 days' share of the model's
	// requests and the 7 days before (-1: no traffic to judge by).
	ShareNow, ShareBefore float64
	// Over the window: 429s, and the first-token time summed over the
	// successes; PrevTTFTMsSum and PrevSuccesses are the same over the hour
	// before the window.
	RateLimited, Successes, TTFTMsSum int64
	PrevSuccesses, PrevTTFTMsSum      int64
	// The model's other listings over the window, together.
	PeerRequests, PeerFailures, PeerRateLimited int64
	// BreakerOpened and BreakerClosed are the last minutes of the last day
	// in which a gateway reported the listing's breaker opened and closed
	// (nil: none).
	BreakerOpened, BreakerClosed *time.Time
}

// Breaker lines, by default: a listing's failure or 429 rate alerts when it
// is at least breakerFactor times its peers' and breakerMargin above it; a
// first-token time alerts when it is ttftJumpFactor times the hour
// before's. A carrier may change the factors (CarrierRules).
const (
	breakerFactor  = 3.0
	breakerMargin  = 0.10
	ttftJumpFactor = 2.0
)

// farAbove reports whether rate is far above the peers' rate.
func farAbove(rate, peers, factor float64) bool {
	return rate >= factor*peers && rate >= peers+breakerMargin
}

// Verdict is, per kind, whether its condition holds now and the words for
// it; a kind not in the map cannot be judged now (too little traffic) and
// leaves an open alert open.
type Verdict map[Kind]Finding

// Finding is one condition's state.
type Finding struct {
	Holds  bool
	Detail string
}

// Judge applies the rules, with a carrier's thresholds, to a listing's
// signals.
func Judge(r Rules, cr CarrierRules, s Signals) Verdict {
	r = r.withDefaults()
	v := Verdict{}
	if s.Requests >= r.MinRequests {
		up := float64(s.Requests-s.Failures) / float64(s.Requests)
		text := fmt.Sprintf("uptime %.1f %% over the last %d minutes (%d of %d requests failed)", 100*up, int(r.Window.Minutes()), s.Failures, s.Requests)
		v[UptimePenalty] = Finding{Holds: 100*up < election.PenaltyUptime, Detail: text}
		v[UptimeSwitch] = Finding{Holds: 100*up < election.StableUptime, Detail: text}
	}
	v[AtCap] = Finding{Holds: float64(s.CappedMinutes) >= cr.Of(AtCap).Threshold,
		Detail: fmt.Sprintf("requests turned away at the cap in %d of the last 60 minutes", s.CappedMinutes)}
	if s.Requests >= r.MinRequests && s.PeerRequests >= r.MinRequests {
		mine, peers := float64(s.Failures)/float64(s.Requests), float64(s.PeerFailures)/float64(s.PeerRequests)
		v[FailureBreaker] = Finding{Holds: farAbove(mine, peers, cr.Of(FailureBreaker).Threshold),
			Detail: fmt.Sprintf("%.1f %% of requests failed over the last %d minutes; the model's other listings %.1f %%", 100*mine, int(r.Window.Minutes()), 100*peers)}
	}
	if tried, peerTried := s.Requests+s.RateLimited, s.PeerRequests+s.PeerRateLimited; tried >= r.MinRequests && peerTried >= r.MinRequests {
		mine, peers := float64(s.RateLimited)/float64(tried), float64(s.PeerRateLimited)/float64(peerTried)
		v[RateLimitBackoff] = Finding{Holds: farAbove(mine, peers, cr.Of(RateLimitBackoff).Threshold),
			Detail: fmt.Sprintf("%.1f %% of requests answered 429 over the last %d minutes; the model's other listings %.1f %%", 100*mine, int(r.Window.Minutes()), 100*peers)}
	}
	if s.Successes >= r.MinRequests && s.PrevSuccesses >= r.MinRequests && s.TTFTMsSum > 0 && s.PrevTTFTMsSum > 0 {
		now, before := catalogue.TTFTPerSuccess(s.TTFTMsSum, s.Successes), catalogue.TTFTPerSuccess(s.PrevTTFTMsSum, s.PrevSuccesses)
		v[TTFTJump] = Finding{Holds: now >= cr.Of(TTFTJump).Threshold*before,
			Detail: fmt.Sprintf("time to first token %.0f ms over the last %d minutes, %.0f ms the hour before", now, int(r.Window.Minutes()), before)}
	}
	if o := s.BreakerOpened; o != nil && (s.BreakerClosed == nil || s.BreakerClosed.Before(*o)) {
		v[BreakerPaused] = Finding{Holds: true, Detail: fmt.Sprintf("the gateway's breaker paused it at %s UTC; 1 request in 20 probes it once 30 s have passed, and 10 good answers in a row bring it back",
			o.UTC().Format("15:04"))}
	} else {
		detail := "the gateway's breaker does not hold it back"
		if c := s.BreakerClosed; c != nil {
			detail = fmt.Sprintf("the gateway's breaker closed at %s UTC: it is routed again", c.UTC().Format("15:04"))
		}
		v[BreakerPaused] = Finding{Detail: detail}
	}
	if s.ShareBefore > 0 && s.ShareNow >= 0 {
		drop := (s.ShareBefore - s.ShareNow) / s.ShareBefore
		v[ShareDown] = Finding{Holds: drop*100 > cr.Of(ShareDown).Threshold,
			Detail: fmt.Sprintf("share of the model %.1f %% over the last 7 days, %.1f %% the 7 days before", 100*s.ShareNow, 100*s.ShareBefore)}
	}
	return v
}

// Signature signs a webhook body: HMAC-SHA256 over "<unix time>.<body>"
// with the carrier's secret, sent as "t=<unix time>,v1=<hex>" in the
// Airside-Signature header. The time in the signature lets a receiver
// refuse replays.
func Signature(secret string, at time.Time, body []byte) string {
	ts := strconv.FormatInt(at.Unix(), 10)
	mac := hmac.New(sha256.New, []byte(secret))
	mac.Write([]byte(ts + "."))
	mac.Write(body)
	return "t=" + ts + ",v1=" + hex.EncodeToString(mac.Sum(nil))
}

// Verify checks a signature header as a receiver would: the HMAC matches
// and the time is within tolerance of now.
func Verify(secret, header string, body []byte, now time.Time, tolerance time.Duration) error {
	var ts, sig string
	for _, part := range strings.Split(header, ",") {
		k, v, _ := strings.Cut(strings.TrimSpace(part), "=")
		switch k {
		case "t":
			ts = v
		case "v1":
			sig = v
		}
	}
	unix, err := strconv.ParseInt(ts, 10, 64)
	if err != nil || sig == "" {
		return fmt.Errorf("malformed signature header %q", header)
	}
	at := time.Unix(unix, 0)
	if d := now.Sub(at); d > tolerance || d < -tolerance {
		return fmt.Errorf("signature time %s is outside the tolerance", at.UTC())
	}
	want := Signature(secret, at, body)
	if !hmac.Equal([]byte(want), []byte("t="+ts+",v1="+sig)) {
		return fmt.Errorf("signature does not match")
	}
	return nil
}

// Backoff is the wait before a delivery's next attempt, after attempts
// failed ones; zero means give up.
func Backoff(attempts int64) time.Duration {
	steps := []time.Duration{time.Minute, 5 * time.Minute, 30 * time.Minute, 2 * time.Hour, 6 * time.Hour}
	if attempts < 1 || int(attempts) > len(steps) {
		return 0
	}
	return steps[attempts-1]
}

// Webhook is a carrier's outbound webhook as pages show it (never the
// secret).
type Webhook struct {
	CarrierID int64
	URL       string
	UpdatedAt time.Time
	// PreviousSecretUntil is until when the secret a rotation replaced
	// still signs deliveries (nil: only the current one signs).
	PreviousSecretUntil *time.Time
}

// DeliveryState is where a delivery is.
type DeliveryState string

// The delivery states.
const (
	Pending   DeliveryState = "pending"
	Delivered DeliveryState = "delivered"
	Failed    DeliveryState = "failed"
)

// Delivery is one event for a webhook, with its attempts.
type Delivery struct {
	ID            int64
	CarrierID     int64
	Event         string
	Body          string
	State         DeliveryState
	Attempts      int64
	NextAttemptAt time.Time
	LastStatus    int
	LastError     string
	CreatedAt     time.Time
	DeliveredAt   *time.Time
	// URL and SecretSealed are filled for the sender only;
	// PreviousSecretSealed too while a rotation's old secret still signs.
	URL                  string
	SecretSealed         string
	PreviousSecretSealed string
}

// StandardSignature signs a delivery as Standard Webhooks does
// (standardwebhooks.com), which carriers have verifiers for in every
// language: "v1," and the base64 HMAC-SHA256 of "{id}.{timestamp}.{body}",
// keyed with the bytes the secret encodes after "whsec_".
func StandardSignature(secret, msgID string, at time.Time, body []byte) (string, error) {
	key, err := standardKey(secret)
	if err != nil {
		return "", err
	}
	mac := hmac.New(sha256.New, key)
	mac.Write([]byte(msgID + "." + strconv.FormatInt(at.Unix(), 10) + "."))
	mac.Write(body)
	return "v1," + base64.StdEncoding.EncodeToString(mac.Sum(nil)), nil
}

// standardKey is the HMAC key of a "whsec_" secret: its base64 payload,
// standard encoding (secrets made before the switch used the URL-safe
// alphabet, which is read too).
func standardKey(secret string) ([]byte, error) {
	payload := strings.TrimPrefix(secret, "whsec_")
	for _, enc := range []*base64.Encoding{base64.StdEncoding, base64.RawStdEncoding, base64.URLEncoding, base64.RawURLEncoding} {
		if key, err := enc.DecodeString(payload); err == nil {
			return key, nil
		}
	}
	return nil, fmt.Errorf("the webhook secret is not whsec_ and base64")
}

// StandardMessageID is a delivery's webhook-id: the same on every retry, so
// a receiver drops a delivery it has already handled, and not the delivery's
// row number, which would tell every carrier how many deliveries the portal
// makes (ids were msg_1, msg_2, ... before): a MAC of the row number under
// key, so unguessable and unordered, and the same in every process that
// holds the key.
func StandardMessageID(key []byte, deliveryID int64) string {
	mac := hmac.New(sha256.New, key)
	mac.Write([]byte("webhook-id:" + strconv.FormatInt(deliveryID, 10)))
	return "msg_" + strings.ToLower(base32.StdEncoding.WithPadding(base32.NoPadding).EncodeToString(mac.Sum(nil)[:20]))
}
