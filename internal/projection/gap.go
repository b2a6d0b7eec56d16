package projection

import (
	"time"

	"github.com/airside/airside/internal/catalogue"
	"github.com/airside/airside/internal/preview"
	"github.com/airside/airside/internal/traffic"
)

// Gap sets the projected share beside the one routing served in the hours
// from from on, with the causes of the difference (traffic.ExplainShare
// says how they split): projected is past's share over them, hours are the
// listing's, model the model's requests by hour over the same period;
// unservable the model's requests in it whose preferences the listing could
// not meet (Projector.Unservable). ModelRequests is 0 when the model had no
// requests.
func Gap(projected preview.Share, past Past, from time.Time, hours []catalogue.HourlyPoint, model map[time.Time]int64, unservable int64) (traffic.ShareGap, int64) {
	c := traffic.ShareCounts{}
	for _, h := range hours {
		if h.Hour.Before(from) {
			continue
		}
		c.Requests += h.Requests
		c.Routed, c.Pinned, c.Exploration, c.Fallback = c.Routed+h.Routed, c.Pinned+h.Pinned, c.Exploration+h.Exploration, c.Fallback+h.Fallback
		c.Failed += h.Errors + h.ClientErrors
		c.Capped += h.Capped
		c.RateLimited += h.RateLimited
		if !past.HoldersReported(h.Hour) {
			// Without the holders routing reported, the replay cannot
			// see a slow incumbent lose its shapes.
			c.SlowHeld += slowHeld(h.SlowBackoffs, model[h.Hour])
		}
	}
	for h, n := range model {
		if !h.Before(from) {
			c.ModelRequests += n
		}
	}
	c.OthersCapped = max(0, past.CappedSince(from)-c.Capped)
	c.PreferenceHeld = unservable
	return traffic.ExplainShare(traffic.Projection{Total: projected.Total, Exploration: projected.Exploration, Pinned: projected.Pinned}, c), c.ModelRequests
}

// slowHeld estimates the model's requests in an hour that fell in the
// minutes the latency backoff held a listing out: each of the backoffs
// that started in it holds the listing out for traffic.SlowHold, the
// hour's requests taken as even within it.
func slowHeld(backoffs, modelRequests int64) int64 {
	if backoffs <= 0 || modelRequests <= 0 {
		return 0
	}
	held := min(time.Duration(backoffs)*traffic.SlowHold, time.Hour)
	return modelRequests * int64(held/time.Second) / int64(time.Hour/time.Second)
}
