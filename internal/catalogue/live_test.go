package catalogue

import (
	"testing"
	"time"
)

func TestLiveOf(t *testing.T) {
	now := time.Date(2026, 12, 4, 14, 10, 0, 0, time.UTC)
	at := func(m int) time.Time { return now.Add(time.Duration(m) * time.Minute) }
	ptr := func(t time.Time) *time.Time { return &t }
	until := at(50)
	for _, test := range []struct {
		name        string
		status      ListingStatus
		maintenance *time.Time
		spells      []LimitSpell
		want        string
		since       *time.Time
	}{
		{"serving", StatusInService, nil, nil, "serving", nil},
		{"a breaker open", StatusInService, nil, []LimitSpell{{Limit: "breaker", From: at(-8)}}, "breaker", ptr(at(-8))},
		{"a breaker that closed", StatusInService, nil, []LimitSpell{{Limit: "breaker", From: at(-8), Until: ptr(at(-3))}}, "serving", nil},
		{"429s a minute ago", StatusInService, nil, []LimitSpell{{Limit: "backoff", From: at(-3), Until: ptr(at(-1))}}, "backoff", ptr(at(-3))},
		{"429s ten minutes ago", StatusInService, nil, []LimitSpell{{Limit: "backoff", From: at(-12), Until: ptr(at(-10))}}, "serving", nil},
		{"slow first tokens now", StatusInService, nil, []LimitSpell{{Limit: "slow", From: at(-1), Until: ptr(at(0))}}, "slow", ptr(at(-1))},
		{"the breaker outranks a backoff", StatusInService, nil, []LimitSpell{{Limit: "backoff", From: at(-1), Until: ptr(at(0))},
			{Limit: "breaker", From: at(-5)}}, "breaker", ptr(at(-5))},
		{"paused in a window", StatusPaused, &until, nil, "maintenance", nil},
		{"paused", StatusPaused, nil, []LimitSpell{{Limit: "breaker", From: at(-5)}}, "paused", nil},
		{"draft", StatusDraft, nil, nil, "draft", nil},
		{"delisted", StatusDelisted, nil, nil, "delisted", nil},
	} {
		got := LiveOf(test.status, test.maintenance, test.spells, now)
		if got.State != test.want || (test.since == nil) != (got.Since == nil) || test.since != nil && !got.Since.Equal(*test.since) {
			t.Errorf("%s: %+v, want %s since %v", test.name, got, test.want, test.since)
		}
	}
}
