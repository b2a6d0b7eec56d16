package web

import (
	"context"
	"fmt"
	"time"

	"github.com/airside/airside/internal/catalogue"
	"github.com/airside/airside/templates"
)

// limitSpells says when in the last day the gateway's limits held a
// listing back, and why: each breaker spell with the listing's failures
// over the minutes before it opened against the median of the model's other
// listings (the gateway's own rule), each run of 429 or latency backoffs.
func (s *Server) limitSpells(ctx context.Context, l *catalogue.Listing, loc *time.Location) ([]string, error) {
	minutes, err := s.TrafficReads.LimitMinutes(ctx, l.ID, s.Now().Add(-24*time.Hour))
	if err != nil || len(minutes) == 0 {
		return nil, err
	}
	clock := func(t time.Time) string { return t.In(loc).Format("15:04") }
	var out []string
	for _, sp := range catalogue.LimitSpells(minutes) {
		when := "since " + clock(sp.From)
		if sp.Until != nil {
			when = clock(sp.From) + "–" + clock(*sp.Until)
		}
		switch sp.Limit {
		case "backoff":
			out = append(out, fmt.Sprintf("Held back after 429s %s: %s of 10 s or more (3 answers 429 within 30 s, or a Retry-After); your requests went to the next listing without waiting for the refusal.",
				when, plural(sp.Backoffs, "backoff", "backoffs")))
		case "slow":
			out = append(out, fmt.Sprintf("Held back for slow first tokens %s: %s (first tokens over 2 minutes took at least twice your hour before's and a second more); your requests went to the next listing for 60 s after the last slow answer.",
				when, plural(sp.Backoffs, "latency backoff", "latency backoffs")))
		case "breaker":
			why, err := s.breakerWhy(ctx, l, sp.From)
			if err != nil {
				return nil, err
			}
			line := fmt.Sprintf("Paused by the breaker %s%s.", when, why)
			if sp.Openings > 1 {
				line += fmt.Sprintf(" A probe failed, so it reopened %s for longer.", plural(sp.Openings-1, "time", "times"))
			}
			if sp.Until == nil {
				line += " It is probed by 1 request in 20 of its kind; 10 good answers in a row close it."
			}
			out = append(out, line)
		}
	}
	return out, nil
}

// breakerWhy is the reason a breaker opened at a minute, from the reports
// of the minutes before it: ": 41 % of tries failed against a median of 2 %
// of the model's other listings", or the share of 429s.
func (s *Server) breakerWhy(ctx context.Context, l *catalogue.Listing, opened time.Time) (string, error) {
	sums, err := s.TrafficReads.MinuteSums(ctx, l.Model.ID, opened.Add(-catalogue.BreakerWindow+time.Minute), opened.Add(time.Minute))
	if err != nil {
		return "", err
	}
	own := sums[l.ID]
	failed, limited := own.FailureShareOfTries(), own.LimitedShareOfTries()
	if failed < 0 {
		return "", nil
	}
	if median, ok := catalogue.PeerMedianFailure(sums, l.ID); ok && failed > median {
		return fmt.Sprintf(": %s of tries failed against a median of %s of the model's other listings",
			templates.Pct(100*failed), templates.Pct(100*median)), nil
	}
	if limited > 0.5 {
		return fmt.Sprintf(": %s of tries answered 429", templates.Pct(100*limited)), nil
	}
	return fmt.Sprintf(": %s of tries failed", templates.Pct(100*failed)), nil
}

// plural is n with the word for one or for several.
func plural(n int64, one, several string) string {
	if n == 1 {
		return "1 " + one
	}
	return fmt.Sprintf("%d %s", n, several)
}
